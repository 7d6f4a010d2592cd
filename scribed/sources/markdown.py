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
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from itertools import chain, islice
from typing import BinaryIO

from scribed.models import ParseResult, Session
from scribed.names import normalize_name
from scribed.sources import markdown_aider, markdown_specstory
from scribed.sources.common import Source, looks_binary, parse_ts, safe_id
from scribed.sources.markdown_chat import chat_turns
from scribed.sources.markdown_lines import (
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
_AIDER_FIRST = ("#", ">")  # the first characters of the lines markdown_aider.Scan counts
_END_COMMENT = re.compile(r"[ \t]*<!--\s*session:\s*end\s*-->[ \t]*", re.IGNORECASE)


def _name_date(stem: str) -> datetime | None:
    for m in _NAME_DATE.finditer(stem):
        y, mo, d, h, mi, s = (int(g) if g else 0 for g in m.groups())
        try:
            return datetime(y, mo, d, h, mi, s, tzinfo=UTC)
        except ValueError:
            continue
    return None


def _text_date(lines: list[Line]) -> datetime | None:
    for ln in lines:
        for m in _TEXT_DATE.finditer(ln.text):
            dt = parse_ts(m.group("h") or m.group("t"))
            if dt is not None:
                return dt
    return None


class _ChatParts:
    """Front matter, then one session per ``<!-- session: end -->``-separated chunk, read from a
    stream of lines holding at most two chunks; ``ended`` (whether the file ends with an end
    marker) is known once the parts are exhausted."""

    def __init__(self, src: Source, lines: Iterable[Line]) -> None:
        self.src = src
        self.lines = iter(lines)
        self.ended = False
        self.agent = self.base = ""
        self.fm_start: datetime | None = None
        self.fm_end: datetime | None = None

    def __iter__(self) -> Iterator[Part]:
        head = list(islice(self.lines, _FM_LINES))
        fields, skip = front_matter(head)
        self.agent = normalize_name(fields.get("agent", "")) or ""
        self.base = safe_id(fields.get("session", "")) or self.src.path.stem
        self.fm_start = parse_ts(
            fields.get("started") or fields.get("start") or fields.get("date") or fields.get("created")
        )
        self.fm_end = parse_ts(fields.get("ended") or fields.get("end"))
        held: list[Line] | None = None  # the last chunk an end comment closed: the last part or not
        chunk: list[Line] = []
        k = 0
        for ln in chain(head[skip:], self.lines):
            if "<!--" not in ln.text or not _END_COMMENT.fullmatch(ln.text):
                chunk.append(ln)
                continue
            if held is not None:
                yield self._part(k, held, last=False)
                k += 1
            held, chunk = chunk, []
        self.ended = held is not None and not any(ln.text.strip() for ln in chunk)
        if self.ended and held is not None:
            yield self._part(k, held, last=True)
            return
        if held is not None:
            yield self._part(k, held, last=False)
            k += 1
        last = next((i for i in range(len(chunk) - 1, -1, -1) if chunk[i].text.strip()), None)
        if last is not None and _END_MARK.fullmatch(chunk[last].text.strip()):
            self.ended = True
            chunk = chunk[:last]
        yield self._part(k, chunk, last=True)

    def _part(self, k: int, chunk: list[Line], *, last: bool) -> Part:
        turns = chat_turns(chunk)
        if k == 0:
            start = self.fm_start or self.fm_end or _name_date(self.src.path.stem) or _text_date(chunk)
            sid = self.base
        else:
            start = _text_date(chunk)
            sid = (
                f"{self.base}@{start:%Y-%m-%dT%H:%M:%SZ}"
                if start
                else f"{self.base}@line-{chunk[0].no if chunk else 0}"
            )
        part = Part(session_id=sid, turns=turns, start=start, agent=self.agent)
        if start is not None:
            stamps = [t.ts for t in turns if t.ts is not None and t.ts >= start]
            end = (self.fm_end if last else None) or (max(stamps) if stamps else start)
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
                    scan = _Scan.read(fh, bom=head.startswith(_BOM))
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
            else:
                parts = _ChatParts(src, lines)  # sessions between end comments, read as a stream
            yield from self._sessions(parts, found)
            self.ended = isinstance(parts, _ChatParts) and parts.ended

    def _sessions(self, parts: Iterable[Part], found: list[str]) -> Iterator[Session]:
        """Sessions from the parts that have turns, each with its own dates and end state; then the
        warnings :func:`finish` would give (``found`` is complete once ``parts`` is exhausted)."""
        kept = undated = 0
        own: list[str] = []  # the sessions' own warnings, in order
        for part in parts:
            if not part.turns:
                continue
            kept += 1
            undated += part.start is None
            own.extend(w for w in part.warnings if w not in own)
            yield _session(self.src, part)
        warnings = list(found)
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

    @classmethod
    def read(cls, fh: BinaryIO, *, bom: bool) -> _Scan:
        scan = cls()
        scan.text = bom  # a BOM alone is content to ``bytes.strip()``, though the first line drops it
        aider, specstory = scan.aider.feed, scan.specstory.feed
        no = 0
        for texts, ends in iter_blocks(fh, _NO_LIMIT):
            scan.size = ends[-1]
            for text in texts:
                no += 1
                if not scan.text and text.strip(_ASCII_SPACE):
                    scan.text = True
                if text[:1] in _AIDER_FIRST:  # the only lines Aider's scan looks at
                    aider(text)
                if no <= markdown_specstory.BANNER_LINES or "**" in text:  # ditto for SpecStory's
                    specstory(no, text)
        return scan
