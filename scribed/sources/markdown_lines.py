"""Line-level helpers the markdown parsers share: exact byte offsets, front matter, fences.

Every convention parser (Aider, SpecStory, speaker lines) works on the same :class:`Line` list so
a turn's ``line`` and ``end_offset`` always point into the real file, whatever produced it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import accumulate

from scribed.models import Role, Turn, TurnKind
from scribed.sources.common import Readable, decode_counted, turn

_FM_KEY = re.compile(r"([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*)")
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
READ_CHUNK = 1 << 16  # bytes read at a time by :func:`iter_lines`
LINE_PIECE = 8 << 20  # a longer line is read as lines of this many bytes
_CONTINUATION = range(0x80, 0xC0)  # bytes that go on a UTF-8 character


@dataclass(slots=True)
class Line:
    """A decoded source line with its 1-based number and the byte offset just past it."""

    no: int
    text: str
    end: int


@dataclass(slots=True)
class Part:
    """One session found in a markdown file, before it becomes a :class:`Session`.

    ``ended`` is True when something after it (another session's header, an end marker) shows it
    is over; ``start``/``end`` are None when the file says nothing about time.
    """

    session_id: str
    turns: list[Turn] = field(default_factory=list)
    start: datetime | None = None
    end: datetime | None = None
    ended: bool = False
    agent: str = ""
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class BadBytes:
    """The bytes a pass read as U+FFFD because they were not UTF-8: how many, and the file offset
    of the first (-1: none)."""

    n: int = 0
    first: int = -1

    def decode(self, raw: bytes, offset: int) -> str:
        """``raw`` (found ``offset`` bytes into the file) decoded as ``errors="replace"`` does."""
        text, n, at = decode_counted(raw)
        if n:
            self.n += n
            if self.first < 0:
                self.first = offset + at
        return text


def split_lines(data: bytes) -> list[Line]:
    """Split raw bytes into lines, decoding each one alone so offsets stay exact bytes."""
    out: list[Line] = []
    offset = 0
    for no, raw in enumerate(data.splitlines(keepends=True), start=1):
        offset += len(raw)
        out.append(_line(no, raw, offset))
    return out


def iter_lines(fh: Readable, limit: int) -> Iterator[Line]:
    """The lines :func:`split_lines` gives for the first ``limit`` bytes of ``fh``, read a chunk at
    a time, so a 60 MB transcript never sits in memory as one list of lines. A line longer than
    :data:`LINE_PIECE` bytes comes as several lines of that size (cut between characters, with the
    same line number): a pasted log with no line break is read in windows, never held whole."""
    no = 0
    cont = False  # the last line read goes on in the next block
    for texts, ends, partial in iter_blocks(fh, limit):
        first = no if cont else no + 1
        yield from map(Line, range(first, first + len(texts)), texts, ends)
        no = first + len(texts) - 1
        cont = partial


def iter_blocks(
    fh: Readable, limit: int, bad: BadBytes | None = None
) -> Iterator[tuple[list[str], list[int], bool]]:
    """:func:`iter_lines` as runs of consecutive lines: their texts, the byte offsets past each and
    whether the last one is a piece of a line that goes on (a first pass that reads only the texts
    makes no :class:`Line` at all).

    A chunk's last piece waits for the next chunk: it may be cut mid-line, or be a ``\\r`` whose
    ``\\n`` comes next. A line with no break in sight is gathered in pieces, not re-copied per
    chunk, and given out :data:`LINE_PIECE` bytes at a time. ``bad`` counts the bytes that are not
    UTF-8 (clean text decodes at full speed: only a block holding one meets the count).
    """
    offset = 0
    pending: list[bytes] = []
    waiting = 0  # bytes in ``pending``
    left = limit
    while left > 0:
        chunk = fh.read(min(READ_CHUNK, left))
        if not chunk:
            break
        left -= len(chunk)
        pending.append(chunk)
        waiting += len(chunk)
        if b"\n" not in chunk and b"\r" not in chunk:
            if waiting >= LINE_PIECE + READ_CHUNK:
                raws = b"".join(pending).splitlines(keepends=True)
                rest = raws.pop()  # no break in it: the chunks after the first one have none
                if raws:
                    yield (*_raw_texts(raws, offset == 0, offset, bad), False)
                    offset += sum(map(len, raws))
                cut = _char_start(rest, LINE_PIECE) if len(rest) > LINE_PIECE else 0
                if cut:
                    texts, ends = _raw_texts([rest[:cut]], offset == 0, offset, bad)
                    yield texts, ends, True
                    offset += cut
                pending, waiting = [rest[cut:]], len(rest) - cut
            continue
        block = b"".join(pending)
        cut = block.rfind(b"\n") + 1
        if cut and b"\r" not in block:  # the common case: whole lines, one decode for all of them
            pending = [block[cut:]] if cut < len(block) else []
            waiting = len(block) - cut
            yield (*_block_texts(block[:cut], offset == 0, offset, bad), False)
            offset += cut
            continue
        raws = block.splitlines(keepends=True)
        pending = [raws.pop()]
        waiting = len(pending[0])
        if raws:
            yield (*_raw_texts(raws, offset == 0, offset, bad), False)
            offset += sum(map(len, raws))
    raws = b"".join(pending).splitlines(keepends=True)
    if raws:
        yield (*_raw_texts(raws, offset == 0, offset, bad), False)


def _char_start(data: bytes, at: int) -> int:
    """``at``, or the nearest position before it where a UTF-8 character may start (at most three
    continuation bytes back: a run of stray ones decodes byte by byte wherever it is cut)."""
    k = at
    while k > at - 3 and data[k] in _CONTINUATION:
        k -= 1
    return k


def _block_texts(block: bytes, first: bool, offset: int, bad: BadBytes | None) -> tuple[list[str], list[int]]:
    """The lines of ``block`` (whole lines, each ending in ``\\n``, no ``\\r`` anywhere), ``offset``
    bytes into the file. Decoded at once: a ``\\n`` byte is never inside a UTF-8 sequence, so the
    text splits where the bytes do, and each line decodes as :func:`_line` decodes it alone."""
    text = block.decode("utf-8", "replace") if bad is None else bad.decode(block, offset)
    texts = text.split("\n")
    texts.pop()  # the empty piece after the last \n
    ends = list(accumulate(map(len, block.splitlines(keepends=True)), initial=offset))
    del ends[0]
    if first and texts[0].startswith("\ufeff"):
        texts[0] = texts[0][1:]
    return texts, ends


def _raw_texts(
    raws: list[bytes], first: bool, offset: int, bad: BadBytes | None
) -> tuple[list[str], list[int]]:
    """Lines as :func:`split_lines` makes them, one at a time (a block with a ``\\r``)."""
    ends = list(accumulate(map(len, raws), initial=offset))
    if bad is None:
        texts = [raw.decode("utf-8", "replace").rstrip("\r\n") for raw in raws]
    else:
        texts = [bad.decode(raw, at).rstrip("\r\n") for raw, at in zip(raws, ends, strict=False)]
    if first and texts[0].startswith("\ufeff"):  # line 1 only may drop a BOM
        texts[0] = texts[0][1:]
    del ends[0]
    return texts, ends


def _line(no: int, raw: bytes, offset: int) -> Line:
    text = raw.decode("utf-8", "replace").rstrip("\r\n")
    if no == 1 and text.startswith("\ufeff"):
        text = text[1:]
    return Line(no, text, offset)


def front_matter(lines: list[Line]) -> tuple[dict[str, str], int]:
    """Simple ``key: value`` front matter (no YAML dependency) and how many lines it spans."""
    if not lines or lines[0].text.strip() != "---":
        return {}, 0
    for i in range(1, min(len(lines), 200)):
        if lines[i].text.strip() in ("---", "..."):
            fields: dict[str, str] = {}
            for ln in lines[1:i]:
                m = _FM_KEY.fullmatch(ln.text.strip())
                if m:
                    fields.setdefault(m.group(1).lower(), m.group(2).strip().strip("\"'"))
            return fields, i + 1
    return {}, 0


def fence_open(text: str) -> str:
    """The fence marker (```` ``` ````, ``~~~``…) if the line opens a fenced block, else ""."""
    head = text[:4]  # a fence starts within the first four characters: most lines stop here
    if "`" not in head and "~" not in head:
        return ""
    m = _FENCE.match(text)
    return m.group(1) if m else ""


def fence_closes(fence: str, text: str) -> bool:
    """Whether ``text`` closes a block opened with ``fence`` (same char, at least as long, bare)."""
    if fence[0] not in text[:4]:  # the closing run starts within the first four characters
        return False
    m = _FENCE.match(text)
    return bool(m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not text.strip(" \t`~"))


def paragraphs(lines: Iterable[Line]) -> list[list[Line]]:
    """Blank-line separated blocks; a fenced code block is never split."""
    return list(iter_paragraphs(lines))


def iter_paragraphs(lines: Iterable[Line]) -> Iterator[list[Line]]:
    """:func:`paragraphs` one block at a time, from a stream of lines."""
    cur: list[Line] = []
    fence = ""
    for ln in lines:
        if fence:
            cur.append(ln)
            if fence[0] in ln.text[:4] and fence_closes(fence, ln.text):  # the first test is its own
                fence = ""
            continue
        opened = fence_open(ln.text)
        if opened:
            fence = opened
            cur.append(ln)
            continue
        if ln.text.strip():
            cur.append(ln)
        elif cur:
            yield cur
            cur = []
    if cur:
        yield cur


def fenced(lines: list[Line], i: int) -> tuple[list[Line], int] | None:
    """If ``lines[i]`` opens a fence, its inner lines and the index after the closing fence."""
    fence = fence_open(lines[i].text)
    if not fence:
        return None
    c, n = fence[0], len(lines)
    for j in range(i + 1, n):
        text = lines[j].text
        if c in text[:4] and fence_closes(fence, text):  # the first test is fence_closes' own
            return lines[i + 1 : j], j + 1
    return lines[i + 1 :], n


def outside_fences(lines: list[Line]) -> list[Line]:
    """The lines that are not inside a fenced code block (nor its fence lines)."""
    out: list[Line] = []
    fence = ""
    for ln in lines:
        if fence:
            if fence[0] in ln.text[:4] and fence_closes(fence, ln.text):  # the first test is its own
                fence = ""
        else:
            fence = fence_open(ln.text)
            if not fence:
                out.append(ln)
    return out


def trim(lines: list[Line]) -> list[Line]:
    """Without leading and trailing blank lines."""
    a, b = 0, len(lines)
    while a < b and not lines[a].text.strip():
        a += 1
    while b > a and not lines[b - 1].text.strip():
        b -= 1
    return lines[a:b]


def make_turn(
    role: Role,
    lines: list[Line],
    *,
    kind: TurnKind = "message",
    ts: datetime | None = None,
    tool_name: str | None = None,
    text: str | None = None,
) -> Turn | None:
    """A turn spanning ``lines`` (first line number, byte offset past the last), or None if empty."""
    lines = trim(lines)
    if not lines:
        return None
    body = "\n".join(ln.text for ln in lines).strip() if text is None else text.strip()
    if not body:
        return None
    return turn(
        role,
        body,
        kind=kind,
        ts=ts,
        line=lines[0].no,
        end_offset=lines[-1].end,
        tool_name=tool_name,
    )
