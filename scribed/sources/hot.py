"""Squad hot files ``.squad/memory/hot/{agent}.md``: an agent's current-session context.

The file is rewritten in place, so its session id is a hash of its bytes: a changed file is a
new session and an unchanged one is recognized as already compacted. Hot files that scribed
itself wrote from a live session (front matter ``scribed-live:``) and blank templates (only
headings and field labels such as ``Current task:``) are not sessions and yield nothing.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterator
from itertools import chain, islice
from typing import BinaryIO

from scribed.models import ParseResult
from scribed.names import normalize_name
from scribed.sources.common import Draft, Source, Tally, finish, looks_binary, show, turn
from scribed.sources.markdown_lines import READ_CHUNK, Line, front_matter, iter_lines, iter_paragraphs

_BINARY_HEAD = 65536  # what looks_binary reads of a file
_FM_LINES = 200  # front matter is looked for in the first lines only

# A line that carries no content of its own: blank, heading, rule, comment, or an unfilled label.
_TEMPLATE_LINE = re.compile(
    r"\s*(?:"
    r"#{1,6}(?:\s.*)?"
    r"|(?:[-*_]\s*){3,}"
    r"|<!--.*-->"
    r"|(?:[-*+]\s+)?(?:\*\*|__)?[^:\n]{1,60}?:(?:\*\*|__)?\s*"
    r"(?:\(?(?:none|n/?a|tbd|todo|-|—|–|…|\.\.\.|<[^>\n]*>|_+)\)?)?\s*"
    r")?",
    re.IGNORECASE,
)


def parse(src: Source) -> ParseResult:
    """Read one hot file as a single session of the agent it is named after, as a stream of lines
    (hashed as they are read): memory follows the turns, not the file's bytes and lines."""
    tally = Tally(src.kind, src.path)
    agent = normalize_name(src.path.stem)
    if agent is None:
        return ParseResult(
            sessions=[],
            warnings=[f"hot: invalid agent name '{show(src.path.stem)}' in {src.path}; file skipped"],
            size=src.size,
        )
    with src.path.open("rb") as raw:
        fh = _Hashed(raw)
        if looks_binary(fh.read(_BINARY_HEAD)):
            while fh.read(READ_CHUNK):
                pass
            if not fh.content:
                return finish(src, [], tally, size=fh.size, had_content=False)
            return ParseResult(
                sessions=[], warnings=[f"hot: binary content in {src.path}; skipped"], size=fh.size
            )
        raw.seek(0)
        fh = _Hashed(raw)
        lines = iter_lines(fh, sys.maxsize)
        head = list(islice(lines, _FM_LINES))
        fields, skip = front_matter(head)
        live = "scribed-live" in fields
        body = _Body(chain(head[skip:], lines))
        draft = Draft(agent=agent, session_id="")
        for block in iter_paragraphs(body):
            if live:
                continue  # read to the end all the same: the file's size is what was read
            text = "\n".join(ln.text for ln in block).strip()
            if text:
                draft.turns.append(turn("assistant", text, line=block[0].no, end_offset=block[-1].end))
    if not fh.content:
        return finish(src, [], tally, size=fh.size, had_content=False)
    if live or body.template:
        return ParseResult(sessions=[], size=fh.size)
    draft.session_id = "hot-" + fh.sha.hexdigest()[:12]
    return finish(src, [draft], tally, size=fh.size)


class _Hashed:
    """A binary file read through: its sha256, its size, and whether a byte was not whitespace."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.sha = hashlib.sha256()
        self.size = 0
        self.content = False

    def read(self, n: int = -1, /) -> bytes:
        data = self.fh.read(n)
        self.sha.update(data)
        self.size += len(data)
        self.content = self.content or bool(data.strip())
        return data


class _Body:
    """The body's lines, passed through; ``template`` stays True while each one is a template line."""

    def __init__(self, lines: Iterator[Line]) -> None:
        self.lines = lines
        self.template = True

    def __iter__(self) -> Iterator[Line]:
        for ln in self.lines:
            if self.template and not _TEMPLATE_LINE.fullmatch(ln.text):
                self.template = False
            yield ln
