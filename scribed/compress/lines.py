"""Which lines of a text can hold a pattern's match: one scan of the whole text in C, where a test
per line costs a Python step for each of a big session's hundred thousand lines (issue 32: the
5 MB hot file). A prefilter only: the lines it names are then read as before, so it must name
every line the real pattern could match, and may name more.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import NamedTuple

# Where ``str.splitlines`` breaks a line (``\r\n`` is one break), and its breaks but ``\n``.
_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
OTHER_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
# The only non-ASCII characters re.IGNORECASE matches to an ASCII letter (İ ı ſ K): ``lower()``
# takes none of them to the ASCII letter (and İ to two characters).
FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"


def holding(text: str, *words: Sequence[str]) -> list[list[int]] | None:
    """For each of ``words`` (literals), the indexes in ``text.splitlines()`` of the lines where
    the lowercased text holds one, in order, each once. The literals are lowercase ASCII without a
    line break: every match of a case-insensitive pattern holding one of them is then found. None
    when the text holds one of :data:`FOLDS_TO_ASCII` (test each line then)."""
    if not text.isascii() and any(c in text for c in FOLDS_TO_ASCII):  # four finds beat a regex scan
        return None
    low = text.lower()  # a line of ``text`` is a line of ``low``: lower() adds no line break
    plain = not any(c in text for c in OTHER_BREAKS)  # "\n" alone breaks its lines
    found = [_found(low, w, "\n" if plain else "") for w in words]
    if not plain:
        starts = _starts(low, max((p[-1] for p in found if p), default=0))
        return [_picked(p, starts) for p in found]
    out: list[list[int]] = []
    for positions in found:  # only "\n" breaks lines: a hit's line is the count of them before it
        picked: list[int] = []
        line = prev = 0
        for pos in positions:
            line += low.count("\n", prev, pos)
            prev = pos
            if not picked or picked[-1] != line:
                picked.append(line)
        out.append(picked)
    return out


def _found(low: str, literals: Sequence[str], eol: str) -> list[int]:
    """Where the literals are in ``low``, sorted: one ``str.find`` pass each (faster than a regex
    of them, which tries every character); after a hit, a literal is looked for again from the
    next ``eol`` (the line's end, when "\\n" alone ends lines), else from the next character."""
    out: list[int] = []
    for w in literals:
        pos = low.find(w)
        while pos >= 0:
            out.append(pos)
            nxt = low.find(eol, pos + 1) if eol else pos + 1
            pos = low.find(w, nxt) if nxt >= 0 else -1
    out.sort()
    return out


def _starts(low: str, end: int) -> list[int]:
    """Where each line of ``low`` starts, up to ``end``."""
    return [0, *(m.end() for m in _BREAKS.finditer(low, 0, end))]


def _picked(positions: list[int], starts: list[int]) -> list[int]:
    """The lines (by ``starts``) the ``positions`` fall in, each once."""
    picked: list[int] = []
    for pos in positions:
        i = bisect_right(starts, pos) - 1
        if not picked or picked[-1] != i:
            picked.append(i)
    return picked


# Prefilters of a pass over lines: the literals each of its patterns needs, whatever the case.
class Words(NamedTuple):
    literals: tuple[str, ...]
    lower: re.Pattern[str]  # the literals, on lowercased ASCII text
    folded: re.Pattern[str]  # the literals, ignoring case


def prefilter(*literals: str) -> Words:
    """The literals, and a regex of them for lowercased ASCII text and one ignoring case."""
    rx = "|".join(map(re.escape, literals))
    return Words(literals, re.compile(rx), re.compile(rx, re.I))


_FOLDS = frozenset(FOLDS_TO_ASCII)


def mentions(words: Words, line: str) -> bool:
    """Whether ``line`` holds one of the words (case-insensitive): a prefilter."""
    low = lowered(line)
    return words.folded.search(line) is not None if low is None else words.lower.search(low) is not None


def may_match(low: str | None, literals: Sequence[str]) -> bool:
    """Whether a line lowered by :func:`lowered` (``low``; None: any) holds one of ``literals``,
    those every match of a case-insensitive pattern holds: a prefilter of the search."""
    return low is None or any(map(low.__contains__, literals))


def lowered(line: str) -> str | None:
    """``line`` lowercased, for tests of ASCII literals a case-insensitive match needs: None when it
    holds one of :data:`FOLDS_TO_ASCII` (test the pattern itself then).

    Such a match is a run of ASCII characters (or of those four): dropping the other characters
    keeps every match, and an ASCII string's ``lower()`` is exact.
    """
    if not line.isascii():
        if not _FOLDS.isdisjoint(line):
            return None
        line = line.encode("ascii", "ignore").decode("ascii")
    return line.lower()


FEW_LINES = 4  # lines of a text checked one by one rather than joined and scanned once
FEW_CHARS = 1024


def mentioning(ls: list[str], *words: Words) -> list[list[str]]:
    """For each of ``words``, the lines of ``ls`` (non-blank, without a break) that mention it:
    found in one scan of them joined (:func:`holding`; it names only lines :func:`mentions`
    accepts), else (a character that folds to ASCII) checked one by one. A few short lines (a
    paragraph of an agent-written hot file: 61,542 of them in 5 MB) are checked one by one too: the
    joined scan's set-up costs more than a regex search of each."""
    if len(ls) <= FEW_LINES and sum(map(len, ls)) <= FEW_CHARS:
        return [[ln for ln in ls if mentions(w, ln)] for w in words]
    picked = holding("\n".join(ls), *(w.literals for w in words))
    if picked is None:
        return [[ln for ln in ls if mentions(w, ln)] for w in words]
    return [list(map(ls.__getitem__, p)) for p in picked]
