"""GitHub Copilot CLI ``events.jsonl``: the main agent's session plus one per named sub-agent.

Two shapes of sub-agent events are read. Current versions put the sub-agent's id in the event
envelope (``agentId``) of every event it emits, and ``subagent.started|completed|failed`` carry
that id with ``agentName``; older versions put ``data.parentToolCallId`` on sub-agent events,
equal to the ``data.toolCallId`` of their ``subagent.started``. The name is learned from whichever
of those events is present (the started event can be missing from a resumed or truncated file),
after the whole file was read. The name becomes part of a file path downstream, so a name that
fails :func:`normalize_name` is never used: those events stay in the main agent's session.

``session.context_cleared`` ends a conversation inside the file: the main agent's turns before it
are their own, finished session. Injected user messages (a skill's body, an autopilot
continuation) are not the user's words and are skipped. Unknown event types are counted
(:mod:`scribed.sources.drift`) and skipped.

The file has ended only when the last event is ``session.shutdown``; a resumed session appends
``session.resume`` and more events after it.

A session-state folder also holds ``workspace.yaml`` beside ``events.jsonl``: flat ``key: value``
lines (``id``, ``cwd``, ``git_root``, ``repository``, ``branch``, ``summary``, ``created_at``,
``updated_at``). Its place and summary fields become the sessions' :attr:`Session.meta`, over what
``session.start`` recorded; the agent name never comes from it. It is read without a YAML library:
a file that is not flat ``key: value`` lines (or too big, or unreadable) is ignored, with a debug log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from scribed.log import get as get_logger
from scribed.models import ParseResult, Role, Turn
from scribed.names import normalize_name
from scribed.sources import drift
from scribed.sources.common import (
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
    show,
    text_of,
    turn,
)

WORKSPACE = "workspace.yaml"
MAX_WORKSPACE_BYTES = 64 * 1024
# workspace.yaml keys kept as session metadata, and session.start's context keys under their names
_WORKSPACE_KEYS = ("cwd", "git_root", "repository", "branch", "summary")
_CONTEXT_KEYS = {"cwd": "cwd", "gitRoot": "git_root", "repository": "repository", "branch": "branch"}
_BLOCK = ("|", "|-", "|+", ">", ">-", ">+")
_SUBAGENT_EVENTS = frozenset({"subagent.started", "subagent.completed", "subagent.failed"})
_TURN_TYPES = frozenset(
    {
        "user.message",
        "assistant.message",
        "tool.execution_start",
        "tool.execution_complete",
        "session.compaction_complete",
        "exit_plan_mode.requested",  # the plan the agent asks approval for (compress/plan.py reads it)
    }
)
# Event types of the published schema (github/copilot-sdk session-events) that carry nothing to
# remember: bookkeeping, streaming deltas, UI and permission round trips.
_KNOWN = (
    _TURN_TYPES
    | _SUBAGENT_EVENTS
    | frozenset(
        """
    session.start session.resume session.shutdown session.context_cleared session.compaction_start
    session.idle session.error session.info session.warning session.model_change session.mode_changed
    session.title_changed session.plan_changed session.todos_changed session.truncation
    session.snapshot_rewind session.usage_checkpoint session.usage_info session.context_changed
    session.task_complete session.handoff session.workspace_file_changed session.permissions_changed
    session.session_limits_changed session.remote_steerable_changed session.schedule_created
    session.schedule_cancelled session.schedule_rearmed session.autopilot_objective_changed
    session.binary_asset session.custom_notification session.auto_mode_resolved
    session.managed_settings_resolved session.managed_settings_enforced session.tools_updated
    session.background_tasks_changed session.skills_loaded session.custom_agents_updated
    session.mcp_servers_loaded session.mcp_server_status_changed session.extensions_loaded
    session.extensions.attachments_pushed session.canvas.opened session.canvas.registry_changed
    session.canvas.closed session.canvas.unavailable session.canvas.recorded session.canvas.removed
    assistant.turn_start assistant.turn_end assistant.intent assistant.reasoning
    assistant.reasoning_delta assistant.message_start assistant.message_delta
    assistant.streaming_delta assistant.tool_call_delta assistant.server_tool_progress
    assistant.idle assistant.usage model.call_failure abort pending_messages.modified
    tool.user_requested tool.execution_partial_result tool.execution_progress tool_search.activated
    skill.invoked subagent.selected subagent.deselected hook.start hook.end hook.progress
    system.message system.notification permission.requested permission.completed
    user_input.requested user_input.completed elicitation.requested elicitation.completed
    sampling.requested sampling.completed mcp.oauth_required mcp.oauth_completed
    mcp.headers_refresh_required mcp.headers_refresh_completed mcp.tools.list_changed
    mcp.resources.list_changed mcp.prompts.list_changed mcp_app.tool_call_complete
    ui.ephemeral_query external_tool.requested external_tool.completed command.queued
    command.execute command.completed commands.changed capabilities.changed
    auto_mode_switch.requested auto_mode_switch.completed session_limits_exhausted.requested
    session_limits_exhausted.completed exit_plan_mode.requested exit_plan_mode.completed
    factory.run_updated factory.run_started factory.run_settled
    """.split()  # noqa: SIM905 - a word list reads better than 110 quoted strings
    )
)


def _tool_result_text(data: JsonObj) -> str:
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


def _injected_user(data: JsonObj) -> bool:
    """A user message the CLI wrote itself: a skill's body (``source: skill-…``) or autopilot's
    continuation prompt. Inter-agent prompts (``source: agent-…``) are a sub-agent's task: kept."""
    return get_str(data, "source").startswith("skill-") or get_bool(data, "isAutopilotContinuation")


def _scalar(raw: str) -> str | None:
    """A flat YAML scalar: plain, 'single' or "double" quoted; None for anything else (a list, a
    mapping, an unterminated quote)."""
    value = raw.strip()
    if value.startswith('"'):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, str) else None
    if value.startswith("'"):
        if len(value) < 2 or not value.endswith("'"):  # noqa: PLR2004 - the two quotes
            return None
        return value[1:-1].replace("''", "'")
    if value.startswith(("[", "{", "&", "*", "!")):
        return None
    return value.split(" #", 1)[0].rstrip()


def parse_workspace(text: str) -> dict[str, str] | None:
    """``key: value`` pairs of a flat YAML document (block scalars ``|``/``>`` joined); None when
    the text is anything else."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#") or line.strip() == "---":
            continue
        key, sep, rest = line.partition(":")
        if not sep or line[:1].isspace() or not key.strip() or (rest and not rest[:1].isspace()):
            return None
        if rest.strip() in _BLOCK:
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
                block.append(lines[i].strip())
                i += 1
            joiner = "\n" if rest.strip().startswith("|") else " "
            out[key.strip()] = joiner.join(block).strip()
            continue
        value = _scalar(rest)
        if value is None:
            return None
        out[key.strip()] = value
    return out


def workspace_meta(events: Path) -> dict[str, str]:
    """The place and summary fields of the ``workspace.yaml`` beside ``events``; {} when it is
    missing or not a flat ``key: value`` file."""
    path = events.with_name(WORKSPACE)
    try:
        if path.stat().st_size > MAX_WORKSPACE_BYTES:
            get_logger(__name__).debug("copilot_workspace_ignored", file=str(path), reason="too big")
            return {}
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        get_logger(__name__).debug("copilot_workspace_ignored", file=str(path), reason=str(exc))
        return {}
    fields = parse_workspace(text)
    if fields is None:
        get_logger(__name__).debug("copilot_workspace_ignored", file=str(path), reason="not flat key: value")
        return {}
    return {k: fields[k] for k in _WORKSPACE_KEYS if fields.get(k)}


@dataclass(slots=True)
class _Reader:
    """State of one pass over an events file."""

    src: Source
    tally: Tally
    routed: list[tuple[str | None, int, Turn]] = field(default_factory=list)  # (route key, segment, turn)
    names: dict[str, str] = field(default_factory=dict)  # agentId / toolCallId -> raw agent name
    tool_names: dict[str, str] = field(default_factory=dict)
    session_id: str | None = None
    shutdown_ts: datetime | None = None
    segment: int = 0  # main-agent conversations separated by session.context_cleared
    last_type: str = ""
    had_content: bool = False
    meta: dict[str, str] = field(default_factory=dict)  # session.start's context

    def learn_name(self, etype: str, data: JsonObj, agent_id: str | None) -> None:
        name = data.get("agentName")
        if not isinstance(name, str):
            name = data.get("agentDisplayName")
        if not isinstance(name, str):
            return  # an empty or hostile name is kept: it is refused, with a warning, at routing
        keys = [k for k in (agent_id, get_str(data, "agentId"), get_str(data, "toolCallId")) if k]
        for key in keys:
            if etype == "subagent.started":
                self.names[key] = name
            else:  # completed/failed confirm; the started event wins when both exist
                self.names.setdefault(key, name)

    def message(self, etype: str, data: JsonObj, ts: datetime | None, line: int, end: int) -> Turn | None:
        """A user or assistant message's turn; None when it is empty, malformed or injected."""
        content = data.get("content")
        if content is not None and not isinstance(content, str):
            self.tally.bad(line)
            return None
        if not content or not content.strip():
            return None
        if etype == "user.message" and _injected_user(data):
            drift.note(self.src.kind, "skipped injected user message")
            return None
        role: Role = "user" if etype == "user.message" else "assistant"
        return turn(role, content.strip(), ts=ts, line=line, end_offset=end)

    def turn_of(self, etype: str, data: JsonObj, ts: datetime | None, line: int, end: int) -> Turn | None:
        """The turn one conversation event contributes; None when it has nothing to keep."""
        if etype in ("user.message", "assistant.message"):
            return self.message(etype, data, ts, line, end)
        if etype == "tool.execution_start":
            name = get_str(data, "toolName") or get_str(data, "name") or "tool"
            call_id = get_str(data, "toolCallId")
            if call_id:
                self.tool_names[call_id] = name
            text = render_call(name, data.get("arguments"))
            return turn("assistant", text, kind="tool_call", ts=ts, line=line, end_offset=end, tool_name=name)
        if etype == "tool.execution_complete":
            call_id = get_str(data, "toolCallId")
            name = self.tool_names.get(call_id) or get_str(data, "toolName") or "tool"
            text = _tool_result_text(data)
            if not text.strip():
                return None
            return turn("tool", text, kind="tool_result", ts=ts, line=line, end_offset=end, tool_name=name)
        if etype == "exit_plan_mode.requested":
            plan = get_str(data, "planContent")
            if not plan.strip():
                return None
            args = {"plan": plan, "summary": get_str(data, "summary")}
            text = render_call("exit_plan_mode", args)
            return turn(
                "assistant",
                text,
                kind="tool_call",
                ts=ts,
                line=line,
                end_offset=end,
                tool_name="exit_plan_mode",
            )
        summary = get_str(data, "summaryContent")  # session.compaction_complete
        if not summary.strip():
            return None
        return turn("summary", summary.strip(), kind="summary", ts=ts, line=line, end_offset=end)

    def start(self, data: JsonObj) -> None:
        """``session.start``: the session's id and, from its context, where it ran (first one wins)."""
        self.session_id = self.session_id or safe_id(data.get("sessionId"))
        context = get_dict(data, "context")
        for key, name in _CONTEXT_KEYS.items():
            value = get_str(context, key)
            if value and name not in self.meta:
                self.meta[name] = value

    def read(self) -> None:
        for rec in iter_jsonl(self.src.path, self.tally):
            self.had_content = True
            obj = rec.obj
            etype = obj.get("type") if obj is not None else None
            if obj is None or not isinstance(etype, str):
                self.tally.bad(rec.line_no, rec.error)  # a line over the limit is named apart
                self.last_type = ""
                continue
            self.last_type = etype
            if etype in _TURN_TYPES and not isinstance(obj.get("data"), dict):
                self.tally.bad(rec.line_no)
                continue
            if etype not in _KNOWN:
                drift.unknown(self.src.kind, etype)
                continue
            data = get_dict(obj, "data")
            ts = parse_ts(obj.get("timestamp"))
            agent_id = get_str(obj, "agentId") or None
            if etype == "session.start":
                self.start(data)
            elif etype == "session.shutdown":
                self.shutdown_ts = ts or self.shutdown_ts
            elif etype == "session.context_cleared" and agent_id is None:
                self.segment += 1
            elif etype in _SUBAGENT_EVENTS:
                self.learn_name(etype, data, agent_id)
            if etype not in _TURN_TYPES:
                continue
            new = self.turn_of(etype, data, ts, rec.line_no, rec.end_offset)
            if new is not None:
                key = agent_id or get_str(data, "parentToolCallId") or None
                self.routed.append((key, self.segment, new))


def parse(src: Source) -> ParseResult:
    """Read one Copilot CLI events file into sessions."""
    r = _Reader(src, Tally(src.kind, src.path))
    r.read()
    session_id = r.session_id
    if session_id is None:
        session_id = src.path.parent.name if src.path.name == "events.jsonl" else src.path.stem
        session_id = session_id or src.path.stem
    main_agent = src.default_agent
    mains = [
        Draft(agent=main_agent, session_id=session_id if n == 0 else f"{session_id}.part{n + 1}")
        for n in range(r.segment + 1)
    ]
    mains[-1].end_hint = r.shutdown_ts
    subs: dict[str, Draft] = {}
    warnings: list[str] = []
    route: dict[str, str | None] = {}  # each key resolved once: a sub-agent name, or None for main

    def resolve(key: str) -> str | None:
        if key in route:
            return route[key]
        raw = r.names.get(key)
        target: str | None = None
        if raw is None:
            warnings.append(
                f"copilot: events from unknown sub-agent id '{show(key)}' in {src.path}; "
                f"events kept under {main_agent}"
            )
        else:
            target = normalize_name(raw)
            if target is None:
                warnings.append(
                    f"copilot: invalid sub-agent name '{show(raw)}' in {src.path}; events kept under {main_agent}"
                )
        route[key] = target
        return target

    for key, segment, t in r.routed:
        target = resolve(key) if key else None
        if target is None:
            mains[segment].turns.append(t)
            continue
        draft = subs.get(target)
        if draft is None:
            draft = subs[target] = Draft(agent=target, session_id=f"{session_id}/{target}")
        draft.turns.append(t)

    ended = r.last_type == "session.shutdown"
    result = finish(
        src, [*mains, *subs.values()], r.tally, warnings=warnings, ended=ended, had_content=r.had_content
    )
    cleared = {d.session_id for d in mains[:-1]}
    meta = {**r.meta, **(workspace_meta(src.path) if src.path.name == "events.jsonl" else {})}
    for sess in result.sessions:
        sess.meta = dict(meta)
        if sess.session_id in cleared:
            sess.ended = True  # the agent's context was cleared after it: that conversation is over
    return result
