"""Open items a later session did, struck in what a spawn reads.

A cold entry is the record of its session and is never rewritten: an item it left open stays
under its ``Open items`` even after a later session of the same agent did it. Read whole, the
later entry's ``Progress`` says so; but a spawn with little room gets older entries cut to their
headline (outcome, decisions, open items) and the newer one's Progress left out, and reads the
done item as still open (an exploratory tester's "Document the --since flag"). So the context
strikes, in each entry it shows, the open items a newer entry lists as done:
``~~Document the --since flag~~ (done: 2026-11-24)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SECTION = re.compile(r"^#### (?P<title>.+?)\s*$", re.M)
_DONE_TITLE = "Progress"
_OPEN_TITLE = "Open items"
_MARKS = re.compile(r"^(?:\[[ xX]\]\s*)|[`*_~]")
_ENDS = " .;:!"


def key(item: str) -> str:
    """An item compared with another: lowercased, without markdown marks, a checkbox, spaces
    collapsed and its closing punctuation."""
    return " ".join(_MARKS.sub("", item).lower().split()).strip(_ENDS)


def _items(text: str, title: str) -> list[tuple[int, int, str]]:
    """The bullet lines of section ``title``: (start, end, item) offsets in ``text``."""
    out: list[tuple[int, int, str]] = []
    heads = list(_SECTION.finditer(text))
    for i, h in enumerate(heads):
        if h.group("title") != title:
            continue
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        pos = h.end() + 1
        for line in text[pos:end].splitlines(keepends=True):
            if line.startswith("- "):
                out.append((pos, pos + len(line.rstrip("\n")), line[2:].strip()))
            pos += len(line)
    return out


def strike_done(entries: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``entries``: (text, date) of one agent's cold entries, newest first. Each text → the text
    with the open items a newer entry lists under Progress struck, with the date it was done (the
    first later session that did it); an entry with none comes back unchanged."""
    done: dict[str, str] = {}  # key -> date of the earliest newer entry that did it
    out: dict[str, str] = {}
    for text, date in entries:
        parts, pos = [], 0
        for start, end, item in _items(text, _OPEN_TITLE):
            when = done.get(key(item))
            if when is not None and not item.startswith("~~"):
                parts += [
                    text[pos:start],
                    f"- ~~{item}~~ (done: {when})" if when else f"- ~~{item}~~ (done later)",
                ]
                pos = end
        out[text] = "".join([*parts, text[pos:]]) if parts else text
        for _, _, item in _items(text, _DONE_TITLE):
            done[key(item)] = date[:10]
    return out
