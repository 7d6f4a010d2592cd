"""GitHub Copilot CLI ``events.jsonl``: the main agent's session plus one per named sub-agent.

Sub-agent events carry ``agentId``; the ``subagent.started`` event names the agent. Its name
becomes part of a file path downstream, so a name that fails :func:`normalize_name` is never used:
those events stay in the main agent's session and the file gets a warning. Routing is resolved
after the whole file was read, so a ``subagent.started`` written late still counts.

The session has ended only when the last event is ``session.shutdown``; a resumed session
appends ``session.resume`` and more events after it.
"""

from __future__ import annotations

from datetime import datetime

from scribed.adapters.common import (
    Draft,
    Source,
    Tally,
    finish,
    get_dict,
    get_str,
    iter_jsonl,
    parse_ts,
    render_call,
    safe_id,
    show,
    text_of,
    turn,
)
from scribed.models import ParseResult, Role, Turn
from scribed.names import normalize_name

_IGNORED = frozenset(
    {
        "session.start",
        "session.resume",
        "session.shutdown",
        "subagent.started",
        "subagent.completed",
        "subagent.failed",
    }
)
_TURN_TYPES = frozenset(
    {
        "user.message",
        "assistant.message",
        "tool.execution_start",
        "tool.execution_complete",
        "session.compaction_complete",
    }
)


def _tool_result_text(data: dict[str, object]) -> str:
    """The readable part of a tool result: ``result.content`` (or detailed), else the error."""
    result = data.get("result")
    text = text_of(result)
    if not text and isinstance(result, dict):
        text = get_str(result, "detailedContent")
    error = data.get("error")
    err_text = text_of(error) if not isinstance(error, str) else error
    if err_text:
        text = f"error: {err_text}\n{text}" if text else f"error: {err_text}"
    return text


def parse(src: Source) -> ParseResult:
    """Read one Copilot CLI events file into sessions."""
    tally = Tally(src.kind, src.path)
    routed: list[tuple[str | None, Turn]] = []  # (agentId or None for the main agent, turn)
    names: dict[str, str] = {}  # agentId / toolCallId -> raw agent name
    tool_names: dict[str, str] = {}
    session_id: str | None = None
    last_type = ""
    shutdown_ts: datetime | None = None
    had_content = False

    for rec in iter_jsonl(src.path):
        had_content = True
        obj = rec.obj
        if obj is None:
            tally.bad(rec.line_no)
            last_type = ""
            continue
        etype = obj.get("type")
        if not isinstance(etype, str):
            tally.bad(rec.line_no)
            last_type = ""
            continue
        last_type = etype
        if etype in _TURN_TYPES and not isinstance(obj.get("data"), dict):
            tally.bad(rec.line_no)
            continue
        data = get_dict(obj, "data")
        ts = parse_ts(obj.get("timestamp"))
        agent_id = get_str(obj, "agentId") or None
        line, end = rec.line_no, rec.end_offset

        if etype == "session.start":
            session_id = session_id or safe_id(data.get("sessionId"))
        elif etype == "session.shutdown":
            shutdown_ts = ts or shutdown_ts
        elif etype == "subagent.started":
            name = data.get("agentName")
            if not isinstance(name, str):
                name = get_str(data, "agentDisplayName")
            keys = [k for k in (get_str(data, "agentId"), get_str(data, "toolCallId")) if k]
            if not keys and agent_id:
                keys = [agent_id]
            for key in keys:
                names[key] = name
        if etype in _IGNORED:
            continue

        new: Turn | None = None
        if etype in ("user.message", "assistant.message"):
            content = data.get("content")
            if content is not None and not isinstance(content, str):
                tally.bad(line)
                continue
            if content and content.strip():
                role: Role = "user" if etype == "user.message" else "assistant"
                new = turn(role, content.strip(), ts=ts, line=line, end_offset=end)
        elif etype == "tool.execution_start":
            name = get_str(data, "toolName") or get_str(data, "name") or "tool"
            call_id = get_str(data, "toolCallId")
            if call_id:
                tool_names[call_id] = name
            text = render_call(name, data.get("arguments"))
            new = turn("assistant", text, kind="tool_call", ts=ts, line=line, end_offset=end, tool_name=name)
        elif etype == "tool.execution_complete":
            call_id = get_str(data, "toolCallId")
            name = tool_names.get(call_id) or get_str(data, "toolName") or "tool"
            text = _tool_result_text(data)
            if text.strip():
                new = turn("tool", text, kind="tool_result", ts=ts, line=line, end_offset=end, tool_name=name)
        elif etype == "session.compaction_complete":
            summary = get_str(data, "summaryContent")
            if summary.strip():
                new = turn("summary", summary.strip(), kind="summary", ts=ts, line=line, end_offset=end)
        if new is not None:
            routed.append((agent_id, new))

    if session_id is None:
        session_id = src.path.parent.name if src.path.name == "events.jsonl" else src.path.stem
        session_id = session_id or src.path.stem
    main_agent = src.default_agent
    main = Draft(agent=main_agent, session_id=session_id, end_hint=shutdown_ts)
    subs: dict[str, Draft] = {}
    warnings: list[str] = []
    # The route of each agentId, resolved once: a sub-agent name, or None for the main agent.
    route: dict[str, str | None] = {}

    def resolve(aid: str) -> str | None:
        if aid in route:
            return route[aid]
        raw = names.get(aid)
        target: str | None = None
        if raw is None:
            warnings.append(
                f"copilot: events from unknown sub-agent id '{show(aid)}' in {src.path}; "
                f"events kept under {main_agent}"
            )
        else:
            target = normalize_name(raw)
            if target is None:
                warnings.append(
                    f"copilot: invalid sub-agent name '{show(raw)}' in {src.path}; events kept under {main_agent}"
                )
        route[aid] = target
        return target

    for aid, t in routed:
        target = resolve(aid) if aid else None
        if target is None:
            main.turns.append(t)
            continue
        draft = subs.get(target)
        if draft is None:
            draft = subs[target] = Draft(agent=target, session_id=f"{session_id}/{target}")
        draft.turns.append(t)

    ended = last_type == "session.shutdown"
    return finish(src, [main, *subs.values()], tally, warnings=warnings, ended=ended, had_content=had_content)
