"""Markdown and plain-text transcripts: the convention is detected per file.

- Aider chat history (``# aider chat started at …``): many sessions per file, see
  :mod:`scribed.sources.markdown_aider`.
- SpecStory exports (``_**User**_`` / ``_**Agent (model)**_`` sections): one session per file, see
  :mod:`scribed.sources.markdown_specstory`.
- Anything else: heading roles, speaker lines or plain paragraphs, see
  :mod:`scribed.sources.markdown_chat`. A ``<!-- session: end -->`` line ends a session; one in
  the middle of the file starts the next session in the same file.

Every session gets its own id, stable as the file grows (Aider: the file name and the session's
start time), and ``ended`` when another session follows it, so each one is compacted on its own.
Dates come from the file itself where it has them: front matter (``date``/``started``/``ended``),
session headers, per-turn timestamps, else the file name, else the first dated heading or ISO
timestamp in the text, else the file's mtime (with a warning).
"""

from __future__ import annotations

import os
import re
import sys
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import BinaryIO

from scribed.models import ParseResult, Session, Turn
from scribed.names import normalize_name
from scribed.sources import markdown_aider, markdown_specstory
from scribed.sources.common import Source, looks_binary, parse_ts, replaced_warning, safe_id
from scribed.sources.markdown_blocks import END_COMMENT, Cursor, block_text, feed_speakers
from scribed.sources.markdown_chat import SpeakerScan, stream_turns
from scribed.sources.markdown_lines import (
    BadBytes,
    Line,
    Part,
    front_matter,
    iter_blocks,
    iter_lines,
    paragraphs,
    split_lines,
)

__all__ = ["Line", "Stream", "front_matter", "paragraphs", "parse", "split_lines"]

_ISO_DT = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
_TEXT_DATE = re.compile(
    rf"^[ \t]*#{{1,6}}[ \t]+(?P<h>\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]\d{{2}}:\d{{2}}(?::\d{{2}})?(?:Z|[+-]\d{{2}}:?\d{{2}})?)?)|(?P<t>{_ISO_DT})",
    re.MULTILINE,
)
_NAME_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T_ ](\d{2})[-:](\d{2})(?:[-:](\d{2}))?(?:[.,]\d+)?Z?)?")
_END_MARK = re.compile(r"<!--\s*session:\s*end\s*-->|[\W_]*session\s+ended\b.*", re.IGNORECASE)
_FM_LINES = 200  # front matter is looked for in the first lines only
_BINARY_HEAD = 65536  # what looks_binary reads of a file
_NO_LIMIT = sys.maxsize
_BOM = b"\xef\xbb\xbf"
_ASCII_SPACE = " \t\n\r\x0b\x0c"  # what bytes.strip() removes
_AIDER_LINES = re.compile(r"\n([#>][^\n]*)")  # the lines markdown_aider.Scan counts, in a block's text
_END_COMMENT = re.compile(r"[ \t]*<!--\s*session:\s*end\s*-->[ \t]*", re.IGNORECASE)


def _name_date(stem: str) -> datetime | None:
    for m in _NAME_DATE.finditer(stem):
        y, mo, d, h, mi, s = (int(g) if g else 0 for g in m.groups())
        try:
            return datetime(y, mo, d, h, mi, s, tzinfo=UTC)
        except ValueError:
            continue
    return None


@dataclass(slots=True)
class _Chunk:
    """What the first pass learns of one ``<!-- session: end -->``-separated chunk."""

    speakers: SpeakerScan = field(default_factory=SpeakerScan)
    first: int = 0  # its first line's number (0: it has none)
    date: datetime | None = None  # the first date its text names (a dated heading or an ISO timestamp)
    date_no: int = 0  # the line that names it
    last_no: int = 0  # its last non-blank line (0: none)
    last_text: str = ""


class _ChatScan:
    """A pass over a speaker-convention file: its front matter, and for each chunk its speakers
    and its dates, so the turns pass reads each session's lines once, in order, holding none of
    them. ``drop`` is the line of a trailing end marker (``Session ended``), no part of the session.

    Fed a line at a time (:meth:`feed`, then :meth:`finish`), so the convention's first pass
    (:meth:`_Scan.read`) reads the file for both: a speaker file was read three times, this pass
    between the two (issue 32). Given ``lines``, it reads them all at once."""

    def __init__(self, src: Source, lines: Iterable[Line] | None = None) -> None:
        self.src = src
        self.head: list[Line] | None = []  # the first lines, until the front matter is known
        self.chunks = [_Chunk()]
        self.dated0: datetime | None = None
        self.skip = 0
        self.drop = 0
        self.ended = False
        if lines is not None:
            for ln in lines:
                self.feed(ln.no, ln.text)
            self.finish()

    def feed(self, no: int, text: str) -> None:
        head = self.head
        if head is None:
            self._line(no, text)
            return
        head.append(Line(no, text, 0))
        if len(head) >= _FM_LINES:
            self._start()

    def feed_block(self, no: int, texts: list[str], text: str) -> None:
        """:meth:`feed` of ``texts`` (numbered from ``no``; ``text`` their
        :func:`~scribed.sources.markdown_blocks.block_text`), a chunk's lines taken as a run."""
        k = 0
        while self.head is not None and k < len(texts):  # the first lines, until the front matter
            self.feed(no + k, texts[k])
            k += 1
        if k:
            if k == len(texts):
                return
            texts, no = texts[k:], no + k
            text = block_text(texts)
        i, p = 0, 1
        for m in END_COMMENT.finditer(text):
            j = i + text.count("\n", p - 1, m.start())
            self._run(no, texts, (i, j), text, (p, m.start() + 1))
            self.chunks.append(_Chunk())
            i, p = j + 1, m.end() + 1
        self._run(no, texts, (i, len(texts)), text, (p, len(text)))

    def _run(self, no: int, texts: list[str], span: tuple[int, int], text: str, at: tuple[int, int]) -> None:
        """:meth:`_line` of ``texts[a:b]`` (``span``), lines of one chunk found in ``text[p:e]`` (``at``)."""
        (a, b), (p, e) = span, at
        if a >= b:
            return
        ch = self.chunks[-1]
        if not ch.first:
            ch.first = no + a
        feed_speakers(ch.speakers, texts, (a, b), text, p)
        if ch.date is None and (self.dated0 is None or len(self.chunks) > 1):
            ch.date_no = no + b - 1  # as _line leaves it when no line names a date
            for m in _TEXT_DATE.finditer(text, p, e):
                dt = parse_ts(m.group("h") or m.group("t"))
                if dt is not None:
                    ch.date, ch.date_no = dt, no + a + text.count("\n", p, m.start())
                    break
        k = b - 1
        while k >= a and not texts[k].strip():
            k -= 1
        if k >= a:
            ch.last_no, ch.last_text = no + k, texts[k]

    def _start(self) -> None:
        """The front matter of the first lines read; then those after it, as lines of a chunk."""
        head, self.head = self.head or [], None
        fields, self.skip = front_matter(head)
        self.agent = normalize_name(fields.get("agent", "")) or ""
        self.base = safe_id(fields.get("session", "")) or self.src.path.stem
        self.fm_start = parse_ts(
            fields.get("started") or fields.get("start") or fields.get("date") or fields.get("created")
        )
        self.fm_end = parse_ts(fields.get("ended") or fields.get("end"))
        self.name_date = _name_date(self.src.path.stem)
        self.dated0 = (
            self.fm_start or self.fm_end or self.name_date
        )  # the first chunk's own text is not asked
        for ln in head[self.skip :]:
            self._line(ln.no, ln.text)

    def _line(self, no: int, text: str) -> None:
        chunks = self.chunks
        ch = chunks[-1]
        if "<!--" in text and _END_COMMENT.fullmatch(text):
            chunks.append(_Chunk())
            return
        if not ch.first:
            ch.first = no
        ch.speakers.feed(text)
        if ch.date is None and (self.dated0 is None or len(chunks) > 1):
            ch.date = _line_date(text)
            ch.date_no = no
        if text.strip():
            ch.last_no, ch.last_text = no, text

    def finish(self) -> None:
        """The file is read: its trailing end comment or end marker."""
        if self.head is not None:
            self._start()
        chunks = self.chunks
        trailing = chunks[-1]
        self.ended = len(chunks) > 1 and not trailing.last_no
        if self.ended:
            chunks.pop()  # blank after the last end comment: the chunk before it ends the file
        elif trailing.last_no and _END_MARK.fullmatch(trailing.last_text.strip()):
            self.ended = True
            self.drop = trailing.last_no
            trailing.speakers.drop_last()
            if trailing.date_no >= self.drop:  # the marker named the date: nothing before it did
                trailing.date = None
            if trailing.first >= self.drop:
                trailing.first = 0


def _line_date(text: str) -> datetime | None:
    for m in _TEXT_DATE.finditer(text):
        dt = parse_ts(m.group("h") or m.group("t"))
        if dt is not None:
            return dt
    return None


class _ChatParts:
    """One session per chunk, read from a stream of lines with the chunks' speakers and dates from
    a first pass (:class:`_ChatScan`): only the turns of the session being read are held."""

    def __init__(self, src: Source, scan: _ChatScan, lines: Cursor) -> None:
        self.src = src
        self.scan = scan
        self.lines = lines
        self.ended = scan.ended

    def __iter__(self) -> Iterator[Part]:
        scan, lines = self.scan, self.lines
        lines.skip(scan.skip)
        last = len(scan.chunks) - 1
        for k, ch in enumerate(scan.chunks):
            lines.begin(scan.drop if k == last and scan.drop else _NO_LIMIT)  # a dropped end marker
            turns = stream_turns(lines, ch.speakers.result())
            yield self._part(k, ch, turns, last=k == last)
            del turns  # not held while the next session is read

    def _part(self, k: int, ch: _Chunk, turns: list[Turn], *, last: bool) -> Part:
        scan = self.scan
        if k == 0:
            start = scan.fm_start or scan.fm_end or scan.name_date or ch.date
            sid = scan.base
        else:
            start = ch.date
            sid = f"{scan.base}@{start:%Y-%m-%dT%H:%M:%SZ}" if start else f"{scan.base}@line-{ch.first}"
        part = Part(session_id=sid, turns=turns, start=start, agent=scan.agent)
        if start is not None:
            stamps = [t.ts for t in turns if t.ts is not None and t.ts >= start]
            end = (scan.fm_end if last else None) or (max(stamps) if stamps else start)
            part.end = max(end, start)
        part.ended = not last or self.ended
        return part


def parse(src: Source) -> ParseResult:
    """Read one markdown/plain-text transcript into one session per session it holds."""
    stream = Stream(src)
    sessions = list(stream)
    if sessions:  # file-level warnings go to the first session too, as :func:`finish` does
        first = sessions[0]
        first.warnings.extend(w for w in stream.file_warnings if w not in first.warnings)
    return stream.result(sessions)


class Stream:
    """A transcript's sessions, one at a time, in file order; iterate it again for a second pass.

    Two passes over the file, each a stream of lines: the first decides the convention (and
    Aider's hard breaks), the second reads the sessions. An Aider history, many sessions in one
    file, is read one session at a time; memory follows its largest session, not the file. Later
    passes reuse the first one's scan and read the same bytes, even if the file grew since. The
    file-level warnings, size and end state are known once a pass is over (:meth:`result`).
    """

    def __init__(self, src: Source) -> None:
        self.src = src
        self.file_warnings: list[str] = []
        self.warnings: list[str] = []  # every warning, as ``ParseResult.warnings``
        self.ended = False
        self.size = 0
        self._scan: _Scan | None = None
        self._chat: _ChatScan | None = None

    def result(self, sessions: list[Session]) -> ParseResult:
        return ParseResult(sessions=sessions, warnings=list(self.warnings), size=self.size, ended=self.ended)

    def __iter__(self) -> Iterator[Session]:
        self.file_warnings, self.warnings, self.ended = [], [], False
        src = self.src
        with src.path.open("rb") as fh:
            scan = self._scan
            if scan is None:
                head = fh.read(_BINARY_HEAD)
                scan = _Scan()
                if looks_binary(head):  # only the head decides, as it did when the file was read whole
                    scan.size, scan.binary = os.fstat(fh.fileno()).st_size, True
                else:
                    fh.seek(0)
                    scan = _Scan.read(fh, bom=head.startswith(_BOM), chat=_ChatScan(src))
                self._scan = scan
            self.size = scan.size
            if scan.binary:
                self.warnings = self.file_warnings = [f"markdown: binary content in {src.path}; skipped"]
                return
            if not scan.text:
                return
            fh.seek(0)
            lines = iter_lines(fh, scan.size)  # the bytes the first pass saw, even if the file grew since
            found: list[str] = []
            if scan.aider.found:
                base = src.path.name.lstrip(".").removesuffix(".md") or "aider"
                parts: Iterable[Part] = markdown_aider.iter_parts(lines, base, scan.aider.hard_breaks, found)
            elif scan.specstory.found:
                parts, found = markdown_specstory.parse(list(lines), src.path.stem)  # one session a file
                for part in parts:
                    part.start = part.start or _name_date(src.path.stem)
                    part.end = part.end or part.start
            else:  # sessions between end comments, each read as a stream after a pass for its speakers
                if self._chat is None:
                    self._chat = scan.chat or _ChatScan(src, lines)  # the first pass's, or a pass now
                    fh.seek(0)
                parts = _ChatParts(src, self._chat, Cursor(iter_blocks(fh, scan.size)))
            # bytes that were not UTF-8, read as U+FFFD: the file says so once
            bad = [replaced_warning(src.kind, src.path, scan.bad.n, scan.bad_line)] if scan.bad.n else []
            yield from self._sessions(parts, found, bad)
            self.ended = isinstance(parts, _ChatParts) and parts.ended

    def _sessions(self, parts: Iterable[Part], found: list[str], bad: list[str]) -> Iterator[Session]:
        """Sessions from the parts that have turns, each with its own dates and end state; then the
        warnings :func:`finish` would give (``found`` is complete once ``parts`` is exhausted;
        ``bad``: the file's bytes that were not UTF-8)."""
        kept = undated = 0
        own: list[str] = []  # the sessions' own warnings, in order
        for part in parts:
            if not part.turns:
                continue
            kept += 1
            undated += part.start is None
            own.extend(w for w in part.warnings if w not in own)
            yield _session(self.src, part)
            del part  # not held while the next session is read
        warnings = [*found, *bad]
        if undated:
            which = "" if kept == 1 else f" ({undated} of {kept} sessions)"
            warnings.append(f"markdown: no date in {self.src.path}{which}; using mtime")
        if not kept:
            warnings.append(f"{self.src.kind}: no usable turns in {self.src.path}")
        self.file_warnings = warnings
        self.warnings = [*warnings, *(w for w in own if w not in warnings)]


def _session(src: Source, part: Part) -> Session:
    """One part as :func:`finish` and the part's own dates make it."""
    stamps = [t.ts for t in part.turns if t.ts is not None]
    start, end = (min(stamps), max(stamps)) if stamps else (src.mtime, src.mtime)
    if part.start is not None:
        start, end = part.start, max(part.end or part.start, part.start)
    return Session(
        agent=part.agent or src.default_agent,
        session_id=part.session_id,
        source=src.path,
        kind=src.kind,
        turns=part.turns,
        start=start,
        end=end,
        ended=part.ended,
        warnings=list(part.warnings),
    )


class _Scan:
    """The first pass: the file's size, whether it holds any text, and its convention."""

    def __init__(self) -> None:
        self.size = 0
        self.text = False
        self.binary = False
        self.aider = markdown_aider.Scan()
        self.specstory = markdown_specstory.Scan()
        self.chat: _ChatScan | None = None  # the speaker pass, when neither convention is found
        self.bad = BadBytes()  # the bytes it read as U+FFFD
        self.bad_line = 0  # the line of the first one

    @classmethod
    def read(cls, fh: BinaryIO, *, bom: bool, chat: _ChatScan | None = None) -> _Scan:
        """The pass over the file's lines; ``chat`` is fed them too while the file may be a speaker
        file (no Aider header, not SpecStory yet: either, once found, stays found)."""
        scan = cls()
        scan.text = bom  # a BOM alone is content to ``bytes.strip()``, though the first line drops it
        aider, specstory = scan.aider.feed, scan.specstory.feed_block
        found_a, found_s = scan.aider, scan.specstory
        feed = chat.feed_block if chat is not None else None
        no = 0
        cont = False
        bad = scan.bad
        for texts, ends, partial in iter_blocks(fh, _NO_LIMIT, bad):
            scan.size = ends[-1]
            first = no if cont else no + 1  # a long line's next piece has its number
            no, cont = first + len(texts) - 1, partial
            if bad.first >= 0 and not scan.bad_line:  # in this block: the line past which it lies
                scan.bad_line = first + bisect_right(ends, bad.first)
            if not scan.text:
                scan.text = any(t.strip(_ASCII_SPACE) for t in texts)
            text = block_text(texts)
            for m in _AIDER_LINES.finditer(text):  # the only lines Aider's scan looks at
                aider(m.group(1))
            specstory(first, texts, text)
            if feed is not None:
                feed(first, texts, text)
            if feed is not None and (found_a.found or found_s.found):
                feed = chat = None  # another convention's file: its speakers are never asked
        if chat is not None:
            chat.finish()
            scan.chat = chat
        return scan
