"""Claude Code ``<sessionId>.jsonl``: one session per file.

Only ``user``/``assistant``/``system``/``summary`` records carry conversation; bookkeeping types
(``file-history-snapshot``, ``queue-operation``, …) and ``isMeta`` echoes of commands and hooks are
skipped without counting as malformed. Thinking blocks are dropped as noise. Sub-agent files
(``agent-<id>.jsonl`` or under ``<sessionId>/subagents/``) do not say which named agent ran, so
they stay with the default agent under their own file-stem session id.
"""

from __future__ import annotations

from datetime import datetime

from scribed.adapters.common import (
    Draft,
    JsonObj,
    Source,
    Tally,
    finish,
    get_bool,
    get_dict,
    get_str,
    iter_jsonl,
    parse_ts,
    render_call,
    safe_id,
    text_of,
    turn,
)
from scribed.models import ParseResult, Role, Turn

_CONVERSATION = frozenset({"user", "assistant", "system", "summary"})


def _is_subagent_file(src: Source) -> bool:
    return src.path.name.startswith("agent-") or src.path.parent.name == "subagents"


def _blocks(
    content: list[object],
    role: Role,
    tool_names: dict[str, str],
    *,
    compact_summary: bool,
    ts: datetime | None,
    line: int,
    end: int,
) -> list[Turn]:
    """Turns from a content block list; consecutive text blocks become one message."""
    out: list[Turn] = []
    texts: list[str] = []

    def flush() -> None:
        text = "\n\n".join(texts).strip()
        texts.clear()
        if not text:
            return
        if compact_summary:
            out.append(turn("summary", text, kind="summary", ts=ts, line=line, end_offset=end))
        else:
            out.append(turn(role, text, ts=ts, line=line, end_offset=end))

    for block in content:
        if isinstance(block, str):
            texts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            texts.append(get_str(block, "text"))
        elif btype == "tool_use":
            flush()
            name = get_str(block, "name") or "tool"
            block_id = get_str(block, "id")
            if block_id:
                tool_names[block_id] = name
            text = render_call(name, block.get("input"))
            out.append(
                turn("assistant", text, kind="tool_call", ts=ts, line=line, end_offset=end, tool_name=name)
            )
        elif btype == "tool_result":
            flush()
            name = tool_names.get(get_str(block, "tool_use_id"), "tool")
            text = text_of(block.get("content"))
            if get_bool(block, "is_error"):
                text = f"error: {text}"
            if text.strip():
                out.append(
                    turn("tool", text, kind="tool_result", ts=ts, line=line, end_offset=end, tool_name=name)
                )
        # thinking, redacted_thinking, image, document: not worth keeping
    flush()
    return out


def _record_turns(
    obj: JsonObj, rtype: str, line: int, end: int, tool_names: dict[str, str]
) -> list[Turn] | None:
    """The turns of one conversation record; None when its fields have unusable types."""
    ts = parse_ts(obj.get("timestamp"))
    if rtype == "summary":
        text = get_str(obj, "summary").strip()
        return [turn("summary", text, kind="summary", ts=ts, line=line, end_offset=end)] if text else []
    if rtype == "system":
        if get_str(obj, "subtype") == "compact_boundary":
            return []
        text = (get_str(obj, "content") or text_of(get_dict(obj, "message").get("content"))).strip()
        return [turn("system", text, ts=ts, line=line, end_offset=end)] if text else []
    message = obj.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    role: Role = "user" if rtype == "user" else "assistant"
    compact = rtype == "user" and get_bool(obj, "isCompactSummary")
    if isinstance(content, str):
        text = content.strip()
        if not text:
            return []
        if compact:
            return [turn("summary", text, kind="summary", ts=ts, line=line, end_offset=end)]
        return [turn(role, text, ts=ts, line=line, end_offset=end)]
    if isinstance(content, list):
        return _blocks(content, role, tool_names, compact_summary=compact, ts=ts, line=line, end=end)
    return None


def parse(src: Source) -> ParseResult:
    """Read one Claude Code session file."""
    tally = Tally(src.kind, src.path)
    subagent = _is_subagent_file(src)
    session_id: str | None = src.path.stem if subagent else None
    draft = Draft(agent=src.default_agent, session_id="")
    tool_names: dict[str, str] = {}
    had_content = False

    for rec in iter_jsonl(src.path):
        had_content = True
        obj = rec.obj
        if obj is None:
            tally.bad(rec.line_no)
            continue
        rtype = obj.get("type")
        if not isinstance(rtype, str):
            tally.bad(rec.line_no)
            continue
        if rtype not in _CONVERSATION or get_bool(obj, "isMeta"):
            continue
        if session_id is None:
            session_id = safe_id(obj.get("sessionId"))
        turns = _record_turns(obj, rtype, rec.line_no, rec.end_offset, tool_names)
        if turns is None:
            tally.bad(rec.line_no)
            continue
        draft.turns.extend(turns)

    draft.session_id = session_id or src.path.stem
    return finish(src, [draft], tally, had_content=had_content)
