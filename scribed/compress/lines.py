"""Which lines of a text can hold a pattern's match: one scan of the whole text in C, where a test
per line costs a Python step for each of a big session's hundred thousand lines (issue 32: the
5 MB hot file). A prefilter only: the lines it names are then read as before, so it must name
every line the real pattern could match, and may name more.
"""

from __future__ import annotations

import re
from bisect import bisect_right

# Where ``str.splitlines`` breaks a line (``\r\n`` is one break).
_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
# The only non-ASCII characters re.IGNORECASE matches to an ASCII letter (İ ı ſ K): ``lower()``
# takes none of them to the ASCII letter (and İ to two characters).
FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"


def holding(text: str, *words: re.Pattern[str]) -> list[list[int]] | None:
    """For each of ``words``, the indexes in ``text.splitlines()`` of the lines where it matches
    the lowercased text, in order, each once. Each of ``words`` is lowercase ASCII that never spans
    a line break: every match of a case-insensitive pattern holding one of its literals is then
    found. None when the text holds one of :data:`FOLDS_TO_ASCII` (test each line then)."""
    if not text.isascii() and any(c in text for c in FOLDS_TO_ASCII):  # four finds beat a regex scan
        return None
    low = text.lower()  # a line of ``text`` is a line of ``low``: lower() adds no line break
    found = [[m.start() for m in w.finditer(low)] for w in words]
    end = max((f[-1] for f in found if f), default=0)
    starts = [0, *(m.end() for m in _BREAKS.finditer(low, 0, end))] if end else [0]
    out: list[list[int]] = []
    for positions in found:
        picked: list[int] = []
        for pos in positions:
            i = bisect_right(starts, pos) - 1
            if not picked or picked[-1] != i:
                picked.append(i)
        out.append(picked)
    return out
