"""A speaker-convention transcript read a block of lines at a time (issue 32).

Most of such a file is command output and code: lines inside fenced blocks, where nothing is
asked of a line but whether it closes the fence (or ends the session). Both passes over the file
find that line with one regex search over the block's text instead of a Python call per line,
and take the lines before it as one run. A block's text is ``"\\n" + "\\n".join(texts) + "\\n"``:
every line sits between two ``\\n``, so ``\\n<line pattern>(?=\\n)`` matches a whole line as
``fullmatch`` on it alone would (no pattern here matches a ``\\n``), and the search runs at the
speed of a scan for ``\\n``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple, Protocol

from scribed.sources.markdown_lines import Line


class SpeakerScan(Protocol):
    """What :func:`feed_speakers` needs of ``markdown_chat.SpeakerScan`` (named here, not imported:
    that module imports this one, and the house has no import circles)."""

    fence: str
    held: str | None

    def outside(self, text: str) -> None: ...


# ``markdown._END_COMMENT`` as a whole line of a block's text (``\s`` kept off the line breaks)
_END_LINE = r"[ \t]*<!--[^\S\n]*session:[^\S\n]*end[^\S\n]*-->[ \t]*"
END_COMMENT = re.compile(rf"\n{_END_LINE}(?=\n)", re.IGNORECASE)
_END_ONE = re.compile(_END_LINE, re.IGNORECASE)  # the same, fullmatched on one line


def block_text(texts: list[str]) -> str:
    """The lines as one text, each between two ``\\n`` (line ``i`` is found after the ``i``-th)."""
    return "\n" + "\n".join(texts) + "\n"


@lru_cache(maxsize=64)
def closing(fence: str) -> re.Pattern[str]:
    """A line that closes ``fence``, as :func:`~scribed.sources.markdown_lines.fence_closes` says:
    at most three blanks, a run of at least ``len(fence)`` of its character, then only blanks,
    backticks and tildes. Group ``c`` is set for it; the other line it finds is an end comment."""
    run = f"{re.escape(fence[0])}{{{len(fence)},}}"
    return re.compile(rf"\n(?:(?P<c>[ \t]{{0,3}}{run}[ \t`~]*)|{_END_LINE})(?=\n)", re.IGNORECASE)


def _lines_in(text: str, start: int, end: int) -> int:
    """How many lines of a block's text begin in ``text[start:end]`` (``start`` at a ``\\n``)."""
    return text.count("\n", start, end)


def feed_speakers(scan: SpeakerScan, texts: list[str], span: tuple[int, int], text: str, pos: int) -> None:
    """``scan.feed(t)`` for each of ``texts[a:b]`` (``span``; line ``a`` starts at ``text[pos]``),
    a fenced block's inside passed over in one search: only its closing line changes the scan."""
    a, b = span
    last = b - 1
    while last >= a and not texts[last].strip():
        last -= 1
    if last < a:  # only blank lines: nothing to feed
        return
    held = scan.held
    if held is not None:
        scan.outside(held)
    scan.held = texts[last]
    end = pos + sum(map(len, texts[a:last])) + (last - a)  # where line ``last`` starts
    i, p = a, pos
    while i < last:
        if scan.fence:
            m = closing(scan.fence).search(text, p - 1, end)  # no end comment in a chunk's lines
            if m is None:  # the fence stays open past the lines fed
                return
            i += _lines_in(text, p - 1, m.start()) + 1
            p = m.end() + 1
            scan.fence = ""
            continue
        t = texts[i]
        i += 1
        p += len(t) + 1
        if t.strip():
            scan.outside(t)


class Run(NamedTuple):
    """Consecutive lines: their texts, the same joined by ``\\n``, the first one's number and the
    byte offset past the last."""

    texts: list[str]
    joined: str
    first_no: int
    end: int


class Cursor:
    """:func:`~scribed.sources.markdown_lines.iter_lines`' lines, a session (``<!-- session: end
    -->``-separated chunk) at a time: iteration stops at the chunk's end comment (consumed) or at
    line ``stop``, until :meth:`begin` starts the next chunk. :meth:`runs` gives a fenced block's
    inside as runs of lines, one per block read, found in one search each."""

    def __init__(self, blocks: Iterator[tuple[list[str], list[int], bool]]) -> None:
        self.blocks = blocks
        self.texts: list[str] = []
        self.ends: list[int] = []
        self.i = 0  # the next line's index in ``texts``
        self.no0 = 1  # the number of ``texts[0]``
        self.cont = False  # the block's last line goes on in the next one
        self.text: str | None = None  # the block's text, once a search needs it
        self.p = 0  # where line ``i`` starts in ``text`` (while it is set)
        self.stop = sys.maxsize
        self.done = False

    def begin(self, stop: int = sys.maxsize) -> None:
        """The next chunk: its lines up to the next end comment, none numbered ``stop`` or more."""
        self.stop, self.done = stop, False

    def _load(self) -> bool:
        for texts, ends, partial in self.blocks:
            self.no0 = self.no0 + len(self.texts) - (1 if self.cont else 0)
            self.texts, self.ends, self.cont = texts, ends, partial
            self.i, self.text = 0, None
            if texts:
                return True
        return False

    def skip(self, n: int) -> None:
        """Pass ``n`` lines unread (front matter: no end comment ends a chunk there)."""
        while n > 0:
            if self.i >= len(self.texts) and not self._load():
                return
            k = min(n, len(self.texts) - self.i)
            if self.text is not None:
                self.p += sum(map(len, self.texts[self.i : self.i + k])) + k
            self.i += k
            n -= k

    def __iter__(self) -> Cursor:
        return self

    def __next__(self) -> Line:
        if self.done:
            raise StopIteration
        i = self.i
        if i >= len(self.texts):
            if not self._load():
                self.done = True
                raise StopIteration
            i = 0
        t = self.texts[i]
        no = self.no0 + i
        if no >= self.stop:
            self.done = True
            raise StopIteration
        self.i = i + 1
        if self.text is not None:
            self.p += len(t) + 1
        if "<!--" in t and _END_ONE.fullmatch(t):
            self.done = True
            raise StopIteration
        return Line(no, t, self.ends[i])

    def _block(self) -> str:
        """The block's text, and where line ``i`` starts in it."""
        if self.text is None:
            self.text = block_text(self.texts)
            self.p = 1 + sum(map(len, self.texts[: self.i])) + self.i
        return self.text

    def runs(self, fence: str) -> Iterator[Run]:
        """The lines before the one closing ``fence`` (consumed), as runs; also ended by the
        chunk's end (its end comment consumed, line ``stop``, the file's end)."""
        pattern = closing(fence)
        while not self.done:
            if self.i >= len(self.texts) and not self._load():
                self.done = True
                return
            text = self._block()
            i, p, texts, no0 = self.i, self.p, self.texts, self.no0
            k = len(texts)
            stops = no0 + k > self.stop  # the chunk stops in this block, before line ``k``
            if stops:
                k = max(i, self.stop - no0)
            end = p + sum(map(len, texts[i:k])) + (k - i) if k < len(texts) else len(text)
            m = pattern.search(text, p - 1, end)
            if m is None:
                self.i, self.p, self.done = k, end, stops
                if k > i:
                    yield Run(texts[i:k], text[p : end - 1], no0 + i, self.ends[k - 1])
                continue
            j = i + _lines_in(text, p - 1, m.start())
            self.i, self.p = j + 1, m.end() + 1  # the closing line (or end comment) consumed
            self.done = m.group("c") is None
            if j > i:
                yield Run(texts[i:j], text[p : m.start()], no0 + i, self.ends[j - 1])
            return
