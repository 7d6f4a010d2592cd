"""What a wiki block records of its own state: current, or retired (superseded, deprecated).

A block is retired when its text says so: the ``*Status:*`` line right under its ``### Title``
(or, in the older format, a ``- status:`` line other than ``active``). Where it sits on the page
is not its state: a text merge can leave a current block under ``## Superseded`` (two clones, one
first to create that section, the other adding a fact at the end of the page), and one edit must
not retire a fact. So the parser, search and the merge all read the mark, and the page is laid
out from it (:func:`scribed.tiers.wiki_merge.placed`).

Kept apart from :mod:`scribed.tiers.wiki_block` so the merge driver, run once per file git
merges, need not load the wiki's matching code.
"""

from __future__ import annotations

import re

from scribed.names import NAME_RE

SUPERSEDED = "## Superseded"
STATUS_LINE = "*Status:* "
META_RE = re.compile(r"^- (?P<k>status|kind|confidence|supersedes|rationale|source): ?(?P<v>.*)$")
OLD_HEADING = re.compile(r"^### (?P<d>\d{4}-\d{2}-\d{2})[^:]*:\s*(?P<t>.*)$")
# Where one retirement ends and the next begins in a status holding several (:func:`joined`):
# only where a mark as scribed writes it starts (``superseded by DATE: title``, ``deprecated DATE
# by AGENT``), so a deprecation's reason may hold "; " and any words ("; superseded by nothing")
_NEXT = re.compile(
    r"; (?=superseded by \d{4}-\d{2}-\d{2}: |deprecated \d{4}-\d{2}-\d{2} by "
    rf"{NAME_RE.pattern}(?:: |; |$))"
)


def status(raw: str) -> str:
    """The status ``raw`` (a block: its ``### `` line first) records; ``"active"`` when none."""
    lines = raw.splitlines()
    if len(lines) < 2:  # noqa: PLR2004 (a title alone)
        return "active"
    if lines[1].startswith(STATUS_LINE):
        return lines[1][len(STATUS_LINE) :].strip() or "active"
    if not (OLD_HEADING.match(lines[0]) and META_RE.match(lines[1])):
        return "active"
    got = "active"
    for line in lines[1:]:  # the older format's ``- key:`` lines, as its parser reads them
        m = META_RE.match(line)
        if not m:
            break
        if m.group("k") == "status":
            got = m.group("v").strip() or "active"
    return got


def state(value: str) -> str:
    """A status as one word: active, superseded or deprecated (any other retirement)."""
    if value == "active":
        return "active"
    return "superseded" if value.startswith("superseded") else "deprecated"


def retired(raw: str) -> bool:
    return status(raw) != "active"


def marks(value: str) -> list[str]:
    """The retirements one status holds (a fact both superseded and deprecated holds two)."""
    return [m.strip() for m in _NEXT.split(value) if m.strip()]


def joined(*values: str) -> str:
    """Retirement marks as one status: each once, a supersession first (it names the fact that
    replaced this one, which a reader needs most), then the rest in order, so that every clone
    and every command writes the same line."""
    got = dict.fromkeys(m for v in values for m in marks(v))
    return "; ".join(sorted(got, key=lambda m: (state(m) != "superseded", m)))


def deprecated(value: str) -> bool:
    """Whether a status holds a deprecation (alone, or beside a supersession)."""
    return any(m.startswith("deprecated") for m in marks(value))
