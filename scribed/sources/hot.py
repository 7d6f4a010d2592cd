"""Squad hot files ``.squad/memory/hot/{agent}.md``: an agent's current-session context.

The file is rewritten in place, so its session id is a hash of its bytes: a changed file is a
new session and an unchanged one is recognized as already compacted. Hot files that scribed
itself wrote from a live session (front matter ``scribed-live:``) and blank templates (only
headings and field labels such as ``Current task:``) are not sessions and yield nothing.
"""

from __future__ import annotations

import hashlib
import re

from scribed.models import ParseResult
from scribed.names import normalize_name
from scribed.sources.common import Draft, Source, Tally, finish, looks_binary, show, turn
from scribed.sources.markdown import front_matter, paragraphs, split_lines

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
    """Read one hot file as a single session of the agent it is named after."""
    tally = Tally(src.kind, src.path)
    agent = normalize_name(src.path.stem)
    if agent is None:
        return ParseResult(
            sessions=[],
            warnings=[f"hot: invalid agent name '{show(src.path.stem)}' in {src.path}; file skipped"],
            size=src.size,
        )
    data = src.path.read_bytes()
    if not data.strip():
        return finish(src, [], tally, size=len(data), had_content=False)
    if looks_binary(data):
        return ParseResult(
            sessions=[], warnings=[f"hot: binary content in {src.path}; skipped"], size=len(data)
        )
    lines = split_lines(data)
    fields, skip = front_matter(lines)
    if "scribed-live" in fields:
        return ParseResult(sessions=[], size=len(data))
    body = lines[skip:]
    if all(_TEMPLATE_LINE.fullmatch(ln.text) for ln in body):
        return ParseResult(sessions=[], size=len(data))

    session_id = "hot-" + hashlib.sha256(data).hexdigest()[:12]
    draft = Draft(agent=agent, session_id=session_id)
    for block in paragraphs(body):
        text = "\n".join(ln.text for ln in block).strip()
        if text:
            draft.turns.append(turn("assistant", text, line=block[0].no, end_offset=block[-1].end))
    return finish(src, [draft], tally, size=len(data))
