"""OpenAI Codex CLI ``rollout-<ts>-<uuid>.jsonl`` (or ``.jsonl.zst``): one session per file, no end marker.

``response_item`` records are the conversation. ``event_msg`` user/agent messages repeat them in
real rollouts, so they are only used when a file has no ``response_item`` messages at all (older
or trimmed files). Developer messages and the user messages Codex injects (environment context,
AGENTS.md instructions, ``<skill>`` bodies) are instructions, not the user's words, and are skipped.

Older rollouts are compressed to ``.jsonl.zst``; they are read through a streaming decoder
(:mod:`scribed.sources.zst`) with offsets in the decompressed content, like their ``.jsonl`` twin.

``session_meta.payload.source`` says who started the rollout. Rollouts the tool starts for itself
are not user sessions and give nothing: ``{"internal": …}`` in newer versions (memory
consolidation, the approval reviewer), ``{"subagent": "memory_consolidation" | "review" |
"compact"}`` in older ones. A spawned sub-agent (``{"subagent": {"thread_spawn": {…}}}``) is kept
as ``<parent thread>/<its id>``, under its role's name when that is a valid agent name.
"""

from __future__ import annotations

import re
from datetime import datetime

from scribed.models import ParseResult, Role, Turn
from scribed.names import normalize_name
from scribed.sources import drift
from scribed.sources.common import (
    Draft,
    JsonObj,
    Source,
    Tally,
    finish,
    get_dict,
    get_str,
    iter_jsonl,
    loads,
    parse_ts,
    render_call,
    safe_id,
    text_of,
    turn,
)

_UUID_IN_NAME = re.compile(
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl(?:\.zst)?$"
)
_BOILERPLATE = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<skill>",
    "<INSTRUCTIONS>",
)
_TOP_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "reasoning",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
        "other",
    }
)
_OWN_SUBAGENTS = frozenset({"memory_consolidation", "review", "compact"})
_GENERIC_ROLES = frozenset({"default"})


def _message_text(payload: JsonObj) -> str | None:
    """Join the text parts of a message; None if ``content`` has an unusable type."""
    content = payload.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = [
        get_str(item, "text")
        for item in content
        if isinstance(item, dict) and item.get("type") in ("input_text", "output_text", "text")
    ]
    return "\n\n".join(p for p in parts if p)


def _output_text(output: object) -> str:
    """Tool output: a plain string, an older ``{"output": ..., "metadata": ...}`` JSON string, or blocks."""
    if isinstance(output, str):
        if output.startswith('{"output"'):
            # Older Codex wrapped shell output with its exit code; keep both, drop the JSON.
            ok, parsed = loads(output)
            if ok and isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
                code = get_dict(parsed, "metadata").get("exit_code")
                text = str(parsed["output"])
                return f"exit {code}\n{text}" if isinstance(code, int) and code != 0 else text
        return output
    return text_of(output)


def own_rollout(source: object) -> str | None:
    """Why a rollout is the tool's own work (``internal memory_consolidation``), or None for a
    user's session or a spawned sub-agent."""
    if not isinstance(source, dict):
        return None
    if "internal" in source:
        inner = source.get("internal")
        return f"internal {inner if isinstance(inner, str) else 'session'}"
    sub = source.get("subagent")
    if isinstance(sub, str) and sub in _OWN_SUBAGENTS:
        return f"subagent {sub}"
    return None


def _spawn(source: object) -> JsonObj:
    """The ``thread_spawn`` details of a spawned sub-agent's rollout, else {}."""
    return get_dict(get_dict(source, "subagent"), "thread_spawn")


def _item_turn(payload: JsonObj, tool_names: dict[str, str], ts: object, line: int, end: int) -> Turn | None:
    """The turn of a tool call or tool output ``response_item``; None for anything else."""
    when = parse_ts(ts)
    ptype = get_str(payload, "type")
    if ptype in ("function_call", "custom_tool_call", "local_shell_call"):
        name = get_str(payload, "name") or ("shell" if ptype == "local_shell_call" else "tool")
        call_id = get_str(payload, "call_id") or get_str(payload, "id")
        if call_id:
            tool_names[call_id] = name
        args: object = payload.get("arguments")
        if ptype == "custom_tool_call":  # its arguments are ``input``; some rollouts write ``arguments``
            args = payload.get("input") if payload.get("input") is not None else payload.get("arguments")
        elif ptype == "local_shell_call":
            args = get_dict(payload, "action")
        text = render_call(name, args)
        return turn("assistant", text, kind="tool_call", ts=when, line=line, end_offset=end, tool_name=name)
    if ptype in ("function_call_output", "custom_tool_call_output"):
        name = tool_names.get(get_str(payload, "call_id"), "tool")
        text = _output_text(payload.get("output"))
        if text.strip():
            return turn("tool", text, kind="tool_result", ts=when, line=line, end_offset=end, tool_name=name)
    return None


class _Rollout:
    """What one rollout has said so far: its id and agent, its turns, its tool names."""

    def __init__(self, src: Source, tally: Tally) -> None:
        self.src, self.tally = src, tally
        self.agent = src.default_agent
        self.session_id: str | None = None
        self.items: list[Turn] = []
        self.fallback: list[Turn] = []  # event_msg messages, used only if no response_item message exists
        self.has_item_messages = False
        self.tool_names: dict[str, str] = {}

    def meta(self, payload: JsonObj) -> str | None:
        """Take the id and agent from the first ``session_meta``; why to skip the rollout, if so."""
        why = own_rollout(payload.get("source"))
        if why is not None:
            return why
        self.session_id = safe_id(payload.get("id"))
        spawn = _spawn(payload.get("source"))
        parent = safe_id(spawn.get("parent_thread_id"))
        if spawn and parent and self.session_id:
            self.session_id = f"{parent}/{self.session_id}"
            role = get_str(spawn, "agent_role") or get_str(spawn, "agent_type")
            named = normalize_name(role) if role not in _GENERIC_ROLES else None
            self.agent = named or self.agent
        return None

    def event(self, payload: JsonObj, ts: datetime | None, line: int, end: int) -> None:
        """An ``event_msg`` user or agent message: kept aside, in case there are no item messages."""
        ptype = get_str(payload, "type")
        text = get_str(payload, "message").strip()
        if text and not (ptype == "user_message" and text.startswith(_BOILERPLATE)):
            who: Role = "user" if ptype == "user_message" else "assistant"
            self.fallback.append(turn(who, text, ts=ts, line=line, end_offset=end))

    def message(self, payload: JsonObj, ts: datetime | None, line: int, end: int) -> None:
        """A ``response_item`` message; developer and system prompts are instructions, not conversation."""
        raw_role = payload.get("role")
        if raw_role not in ("user", "assistant"):
            return
        body = _message_text(payload)
        if body is None:
            self.tally.bad(line)
            return
        self.has_item_messages = True
        body = body.strip()
        if not body or (raw_role == "user" and body.startswith(_BOILERPLATE)):
            return
        who: Role = "user" if raw_role == "user" else "assistant"
        self.items.append(turn(who, body, ts=ts, line=line, end_offset=end))

    def item(self, obj: JsonObj, payload: JsonObj, line: int, end: int) -> None:
        """A ``response_item``: a message, a tool call or output, or a type we do not know yet."""
        ptype = get_str(payload, "type")
        if ptype not in _ITEM_TYPES:
            drift.unknown(self.src.kind, f"response_item.{ptype}")
        elif ptype == "message":
            self.message(payload, parse_ts(obj.get("timestamp")), line, end)
        else:
            new = _item_turn(payload, self.tool_names, obj.get("timestamp"), line, end)
            if new is not None:
                self.items.append(new)

    def draft(self) -> Draft:
        """The session: item turns (event messages only when there were none), named after the file if
        no ``session_meta`` named it."""
        turns = self.items
        if not self.has_item_messages and self.fallback:
            turns = sorted([*self.items, *self.fallback], key=lambda t: t.line)
        session_id = self.session_id
        if session_id is None:
            name = self.src.path.name
            m = _UUID_IN_NAME.search(name)
            stem = name.removesuffix(".zst").removesuffix(".jsonl")
            session_id = m.group(1) if m and name.startswith("rollout-") else stem
        return Draft(agent=self.agent, session_id=session_id, turns=turns)


def parse(src: Source) -> ParseResult:
    """Read one Codex rollout file (plain or zstd-compressed)."""
    tally = Tally(src.kind, src.path)
    r = _Rollout(src, tally)
    had_content = False
    for rec in iter_jsonl(src.path, tally):
        had_content = True
        obj = rec.obj
        rtype = obj.get("type") if obj is not None else None
        payload = obj.get("payload") if obj is not None else None
        if obj is None or not isinstance(rtype, str) or not isinstance(payload, dict):
            tally.bad(rec.line_no, rec.error)  # a line over the limit is named apart
            continue
        if rtype not in _TOP_TYPES:
            drift.unknown(src.kind, rtype)
            continue
        line, end = rec.line_no, rec.end_offset
        if rtype == "session_meta" and r.session_id is None:
            why = r.meta(payload)
            if why is not None:
                drift.note(src.kind, f"skipped {why} rollout")
                return ParseResult(sessions=[], size=src.size)
        elif rtype == "compacted":
            text = get_str(payload, "message").strip()
            if text:
                ts = parse_ts(obj.get("timestamp"))
                r.items.append(turn("summary", text, kind="summary", ts=ts, line=line, end_offset=end))
        elif rtype == "event_msg" and get_str(payload, "type") in ("user_message", "agent_message"):
            r.event(payload, parse_ts(obj.get("timestamp")), line, end)
        elif rtype == "response_item":
            r.item(obj, payload, line, end)
        # turn_context, other event_msg types: bookkeeping
    return finish(src, [r.draft()], tally, had_content=had_content)
