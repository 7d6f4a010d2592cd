"""Claude Code ``<sessionId>.jsonl`` and its sub-agents: one session per file.

Only ``user``/``assistant``/``system``/``summary`` records carry conversation. Bookkeeping and
injected context (``file-history-snapshot``, ``queue-operation``, ``ai-title``, ``attachment``,
``progress``, …) and ``isMeta`` echoes of commands, skills and hooks are skipped without counting
as malformed; a type nobody knows is counted (:mod:`scribed.sources.drift`) and skipped.

One assistant message is written as several records, one per content block, sharing
``message.id`` (older versions repeated the blocks so far): blocks already seen for a message are
dropped and its consecutive text blocks become one turn. After a ``compact_boundary`` the
``isCompactSummary`` record is a summary, not a request. ``<synthetic>`` assistant records are the
tool's own notices. Thinking blocks are dropped as noise.

Sub-agents live in ``<sessionId>/subagents/agent-<id>.jsonl`` (older versions: ``agent-<id>.jsonl``
beside the session) with ``agent-<id>.meta.json`` naming the agent type: a custom type with a valid
name (a team member such as ``troi``) becomes the sub-agent's agent; built-in helpers (``Explore``,
``general-purpose``, …) and unnamed ones stay with the default agent. Its session id is the file stem.
In the main file, the Task call and result that spawned a sub-agent with its own file shrink to a
pointer, so the sub-agent's prompt and report are not kept twice. ``agent-acompact-*`` files are
the tool's internal compaction runs and are skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

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
    text_of,
    turn,
)

_CONVERSATION = frozenset({"user", "assistant", "system", "summary"})
# Record types known to carry no conversation (titles, modes, snapshots, injected attachments,
# sub-agent progress echoes, queued input the user typed ahead: its text arrives as a user record).
_BOOKKEEPING = frozenset(
    {
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        "ai-title",
        "custom-title",
        "agent-name",
        "last-prompt",
        "mode",
        "atis-latch",
        "bridge-session",
        "pr-link",
        "tag",
        "worktree-state",
    }
)
# system subtypes that are the tool's own notices, not part of the conversation.
_SYSTEM_NOISE = frozenset(
    {
        "compact_boundary",
        "microcompact_boundary",
        "turn_duration",
        "stop_hook_summary",
        "local_command",
        "api_error",
    }
)
_SPAWN_TOOLS = frozenset({"Task", "Agent"})
_AGENT_ID_IN_TEXT = re.compile(r"\bagent_?[iI]d:\s*([A-Za-z0-9@._-]{1,80})")
_META_KEYS = ("agentType", "agent_type", "subagent_type", "name")
# Claude Code's built-in agent types are helpers of the agent that spawned them, not team members.
_BUILTIN_TYPES = frozenset(
    {
        "general-purpose",
        "explore",
        "plan",
        "bash",
        "statusline-setup",
        "output-style-setup",
        "claude-code-guide",
    }
)
MAX_META_BYTES = 65536


def _is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def _meta_agent(path: Path) -> str | None:
    """The agent named by the ``.meta.json`` beside a sub-agent file, if valid."""
    meta = path.with_name(path.name.removesuffix(".jsonl") + ".meta.json")
    try:
        if not meta.is_file() or meta.stat().st_size > MAX_META_BYTES:
            return None
        data = json.loads(meta.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    for key in _META_KEYS:
        name = normalize_name(get_str(data, key))
        if name:
            return None if name in _BUILTIN_TYPES else name
    return None


def _subagent_file(main: Path, agent_id: str) -> Path | None:
    """The file a sub-agent of the session ``main`` was written to, if it exists."""
    if not re.fullmatch(r"[A-Za-z0-9@._-]{1,80}", agent_id) or agent_id.startswith("."):
        return None
    for p in (
        main.parent / main.stem / "subagents" / f"agent-{agent_id}.jsonl",
        main.parent / f"agent-{agent_id}.jsonl",
    ):
        try:
            if p.is_file():
                return p
        except OSError:
            continue
    return None


def _block_key(block: JsonObj) -> str:
    """What identifies a content block across the records of one message."""
    btype = get_str(block, "type")
    if btype == "tool_use":
        return f"tool_use:{get_str(block, 'id')}"
    return f"{btype}:{get_str(block, 'text') or get_str(block, 'thinking')}"


@dataclass(slots=True)
class _Reader:
    """State of one pass over a session file."""

    src: Source
    tally: Tally
    draft: Draft
    subagent: bool
    tool_names: dict[str, str] = field(default_factory=dict)
    spawn_calls: dict[str, tuple[Turn, JsonObj]] = field(default_factory=dict)  # Task calls by tool_use id
    seen_blocks: dict[str, set[str]] = field(default_factory=dict)  # message.id -> block keys
    text_turn: dict[str, Turn] = field(default_factory=dict)  # message.id -> its last text turn

    def blocks(
        self,
        content: list[object],
        role: Role,
        *,
        summary: bool,
        ts: datetime | None,
        line: int,
        end: int,
        rec: JsonObj,
    ) -> list[Turn]:
        """Turns from a content block list; consecutive text blocks become one message."""
        out: list[Turn] = []
        texts: list[str] = []

        def flush() -> None:
            text = "\n\n".join(texts).strip()
            texts.clear()
            if text and summary:
                out.append(turn("summary", text, kind="summary", ts=ts, line=line, end_offset=end))
            elif text:
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
                out.append(self.tool_use(block, ts, line, end))
            elif btype == "tool_result":
                flush()
                result = self.tool_result(block, rec, ts, line, end)
                if result is not None:
                    out.append(result)
            # thinking, redacted_thinking, image, document: not worth keeping
        flush()
        return out

    def tool_use(self, block: JsonObj, ts: datetime | None, line: int, end: int) -> Turn:
        name = get_str(block, "name") or "tool"
        block_id = get_str(block, "id")
        if block_id:
            self.tool_names[block_id] = name
        call = turn(
            "assistant",
            render_call(name, block.get("input")),
            kind="tool_call",
            ts=ts,
            line=line,
            end_offset=end,
            tool_name=name,
        )
        if name in _SPAWN_TOOLS and block_id:
            self.spawn_calls[block_id] = (call, get_dict(block, "input"))
        return call

    def tool_result(
        self, block: JsonObj, rec: JsonObj, ts: datetime | None, line: int, end: int
    ) -> Turn | None:
        use_id = get_str(block, "tool_use_id")
        name = self.tool_names.get(use_id, "tool")
        text = text_of(block.get("content"))
        if use_id in self.spawn_calls and not self.subagent:
            pointer = self.spawn_pointer(use_id, rec, text)
            if pointer is not None:
                return turn(
                    "tool", pointer, kind="tool_result", ts=ts, line=line, end_offset=end, tool_name=name
                )
        if get_bool(block, "is_error"):
            text = f"error: {text}"
        if not text.strip():
            return None
        return turn("tool", text, kind="tool_result", ts=ts, line=line, end_offset=end, tool_name=name)

    def spawn_pointer(self, use_id: str, rec: JsonObj, text: str) -> str | None:
        """For a Task whose sub-agent has its own file: shrink the call, return the result's pointer."""
        agent_id = get_str(get_dict(rec, "toolUseResult"), "agentId")
        if not agent_id:
            m = _AGENT_ID_IN_TEXT.search(text)
            agent_id = m.group(1) if m else ""
        path = _subagent_file(self.src.path, agent_id) if agent_id else None
        if path is None:
            return None
        call, args = self.spawn_calls[use_id]
        kind = get_str(args, "subagent_type") or get_str(args, "name") or "sub-agent"
        desc = get_str(args, "description")
        call.text = f"{call.tool_name} {kind}: {desc}".rstrip(": ") if desc else f"{call.tool_name} {kind}"
        return f"sub-agent agent-{agent_id} ({kind}) ran; its transcript is compacted as its own session"

    def assistant_content(
        self, obj: JsonObj, content: list[object], ts: datetime | None, line: int, end: int
    ) -> list[Turn]:
        """Blocks not seen before for this message id; its text continues the message's last turn."""
        msg_id = get_str(get_dict(obj, "message"), "id")
        if msg_id:
            seen = self.seen_blocks.setdefault(msg_id, set())
            fresh: list[object] = []
            for block in content:
                key = _block_key(block) if isinstance(block, dict) else f"str:{block}"
                if key not in seen:
                    seen.add(key)
                    fresh.append(block)
            content = fresh
        turns = self.blocks(content, "assistant", summary=False, ts=ts, line=line, end=end, rec=obj)
        if not msg_id or not turns:
            return turns
        prev = self.text_turn.get(msg_id)
        first = turns[0]
        if prev is not None and self.draft.turns and self.draft.turns[-1] is prev and first.kind == "message":
            prev.text = f"{prev.text}\n\n{first.text}"
            prev.end_offset = max(prev.end_offset, first.end_offset)
            turns = turns[1:]
        last = turns[-1] if turns else prev
        if last is not None and last.kind == "message":
            self.text_turn[msg_id] = last
        return turns

    def record_turns(self, obj: JsonObj, rtype: str, line: int, end: int) -> list[Turn] | None:
        """The turns of one conversation record; None when its fields have unusable types."""
        ts = parse_ts(obj.get("timestamp"))
        if rtype in ("summary", "system"):
            return _notice_turns(obj, rtype, ts, line, end)
        message = obj.get("message")
        if not isinstance(message, dict):
            return None
        if rtype == "assistant" and get_str(message, "model") == "<synthetic>":
            return []  # the tool's own notice (an API error, an interrupt), not the model's words
        content = message.get("content")
        role: Role = "user" if rtype == "user" else "assistant"
        compact = rtype == "user" and get_bool(obj, "isCompactSummary")
        if isinstance(content, str):
            text = content.strip()
            if compact and text:
                return [turn("summary", text, kind="summary", ts=ts, line=line, end_offset=end)]
            return [turn(role, text, ts=ts, line=line, end_offset=end)] if text else []
        if isinstance(content, list):
            if rtype == "assistant":
                return self.assistant_content(obj, content, ts, line, end)
            return self.blocks(content, role, summary=compact, ts=ts, line=line, end=end, rec=obj)
        return None


def _notice_turns(obj: JsonObj, rtype: str, ts: datetime | None, line: int, end: int) -> list[Turn]:
    """A ``summary`` record (a compaction) or a ``system`` notice as one turn; noise and empty text: none."""
    if rtype == "summary":
        text = get_str(obj, "summary").strip()
        return [turn("summary", text, kind="summary", ts=ts, line=line, end_offset=end)] if text else []
    if get_str(obj, "subtype") in _SYSTEM_NOISE:
        return []
    text = (get_str(obj, "content") or text_of(get_dict(obj, "message").get("content"))).strip()
    return [turn("system", text, ts=ts, line=line, end_offset=end)] if text else []


def parse(src: Source) -> ParseResult:
    """Read one Claude Code session or sub-agent file."""
    tally = Tally(src.kind, src.path)
    subagent = _is_subagent_file(src.path)
    if subagent and src.path.name.startswith("agent-acompact"):
        drift.note(src.kind, "skipped internal compaction run")
        return ParseResult(sessions=[], size=src.size)
    agent = (_meta_agent(src.path) if subagent else None) or src.default_agent
    session_id: str | None = src.path.stem if subagent else None
    r = _Reader(src, tally, Draft(agent=agent, session_id=""), subagent)
    had_content = False

    for rec in iter_jsonl(src.path, tally):
        had_content = True
        obj = rec.obj
        rtype = obj.get("type") if obj is not None else None
        if obj is None or not isinstance(rtype, str):
            tally.bad(rec.line_no, rec.error)  # a line over the limit is named apart
            continue
        if rtype not in _CONVERSATION:
            if rtype not in _BOOKKEEPING:
                drift.unknown(src.kind, rtype)
            continue
        if get_bool(obj, "isMeta"):
            continue
        if session_id is None:
            session_id = safe_id(obj.get("sessionId"))
        turns = r.record_turns(obj, rtype, rec.line_no, rec.end_offset)
        if turns is None:
            tally.bad(rec.line_no)
            continue
        r.draft.turns.extend(turns)

    r.draft.session_id = session_id or src.path.stem
    return finish(src, [r.draft], tally, had_content=had_content)
