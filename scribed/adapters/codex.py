"""OpenAI Codex CLI ``rollout-<ts>-<uuid>.jsonl``: one session per file, no end marker.

``response_item`` records are the conversation. ``event_msg`` user/agent messages repeat them in
real rollouts, so they are only used when a file has no ``response_item`` messages at all (older
or trimmed files). The user messages Codex injects (environment context, AGENTS.md instructions)
are boilerplate, not the user's words, and are skipped.
"""

from __future__ import annotations

import re

from scribed.adapters.common import (
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
from scribed.models import ParseResult, Role, Turn

_UUID_IN_NAME = re.compile(
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$"
)
_BOILERPLATE = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")


def _message_text(payload: JsonObj) -> str | None:
    """Join the text parts of a message; None if ``content`` has an unusable type."""
    content = payload.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[str] = []
    for item in content:
        if isinstance(item, dict) and item.get("type") in ("input_text", "output_text", "text"):
            parts.append(get_str(item, "text"))
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


def parse(src: Source) -> ParseResult:
    """Read one Codex rollout file."""
    tally = Tally(src.kind, src.path)
    session_id: str | None = None
    items: list[Turn] = []
    fallback: list[Turn] = []  # event_msg messages, used only if no response_item message exists
    has_item_messages = False
    tool_names: dict[str, str] = {}
    had_content = False

    for rec in iter_jsonl(src.path):
        had_content = True
        obj = rec.obj
        if obj is None:
            tally.bad(rec.line_no)
            continue
        rtype = obj.get("type")
        payload = obj.get("payload")
        if not isinstance(rtype, str) or not isinstance(payload, dict):
            tally.bad(rec.line_no)
            continue
        ts = parse_ts(obj.get("timestamp"))
        line, end = rec.line_no, rec.end_offset
        ptype = get_str(payload, "type")

        if rtype == "session_meta":
            session_id = session_id or safe_id(payload.get("id"))
        elif rtype == "compacted":
            text = get_str(payload, "message").strip()
            if text:
                items.append(turn("summary", text, kind="summary", ts=ts, line=line, end_offset=end))
        elif rtype == "event_msg" and ptype in ("user_message", "agent_message"):
            text = get_str(payload, "message").strip()
            if text and not (ptype == "user_message" and text.startswith(_BOILERPLATE)):
                who: Role = "user" if ptype == "user_message" else "assistant"
                fallback.append(turn(who, text, ts=ts, line=line, end_offset=end))
        elif rtype == "response_item":
            if ptype == "message":
                raw_role = payload.get("role")
                if raw_role not in ("user", "assistant"):
                    continue  # developer/system prompts
                body = _message_text(payload)
                if body is None:
                    tally.bad(line)
                    continue
                has_item_messages = True
                body = body.strip()
                if not body or (raw_role == "user" and body.startswith(_BOILERPLATE)):
                    continue
                who = "user" if raw_role == "user" else "assistant"
                items.append(turn(who, body, ts=ts, line=line, end_offset=end))
            elif ptype in ("function_call", "custom_tool_call", "local_shell_call"):
                name = get_str(payload, "name") or ("shell" if ptype == "local_shell_call" else "tool")
                call_id = get_str(payload, "call_id") or get_str(payload, "id")
                if call_id:
                    tool_names[call_id] = name
                args: object = payload.get("arguments")
                if ptype == "custom_tool_call":
                    args = payload.get("input")
                elif ptype == "local_shell_call":
                    args = get_dict(payload, "action")
                text = render_call(name, args)
                items.append(
                    turn(
                        "assistant", text, kind="tool_call", ts=ts, line=line, end_offset=end, tool_name=name
                    )
                )
            elif ptype in ("function_call_output", "custom_tool_call_output"):
                name = tool_names.get(get_str(payload, "call_id"), "tool")
                text = _output_text(payload.get("output"))
                if text.strip():
                    items.append(
                        turn(
                            "tool", text, kind="tool_result", ts=ts, line=line, end_offset=end, tool_name=name
                        )
                    )
            # reasoning, web_search_call, ...: skipped
        # turn_context, other event_msg types: bookkeeping

    turns = items
    if not has_item_messages and fallback:
        turns = sorted([*items, *fallback], key=lambda t: t.line)
    if session_id is None:
        m = _UUID_IN_NAME.search(src.path.name)
        session_id = m.group(1) if m and src.path.name.startswith("rollout-") else src.path.stem
    draft = Draft(agent=src.default_agent, session_id=session_id, turns=turns)
    return finish(src, [draft], tally, had_content=had_content)
