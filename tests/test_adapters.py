"""Adapters turn every source format into Sessions and never crash on what they read."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scribed.models import MAX_TEXT_CHARS, MAX_TOOL_CHARS, ParseResult, Session
from scribed.sources import KINDS, discover, parse_file
from scribed.sources.common import (
    get_bool,
    get_dict,
    get_list,
    get_str,
    iter_jsonl,
    loads,
    parse_ts,
    render_call,
)

SAMPLES = Path(__file__).parent / "samples"
COPILOT_ID = "37f4c2de-9b1a-4e0f-8d7c-2a6b5e9f1c03"
CLAUDE_ID = "4f35a1b2-7c8d-4e9f-a0b1-c2d3e4f5a6b7"
CODEX_ID = "0197a3f2-5e6d-7c8b-9a0f-1e2d3c4b5a69"
REPL_ID = "8b1f7c2e-3d4a-4b5c-9e6f-7a8b9c0d1e2f"
COPILOT_SAMPLE = SAMPLES / "copilot" / COPILOT_ID / "events.jsonl"
CLAUDE_SAMPLE = SAMPLES / "claude" / "-home-dev-api" / f"{CLAUDE_ID}.jsonl"
CLAUDE_AGENT_SAMPLE = SAMPLES / "claude" / "-home-dev-api" / "agent-a1b2c3.jsonl"
CODEX_SAMPLE = SAMPLES / "codex" / "2026" / "04" / "30" / f"rollout-2026-04-30T10-00-00-{CODEX_ID}.jsonl"
REPL_SAMPLE = SAMPLES / "squad-repl" / f"2026-06-02T21-15-30Z_{REPL_ID}.json"
MD_SAMPLE = SAMPLES / "markdown" / "2026-06-02T21-15-30Z-export-permissions.md"
MD_FRONT = SAMPLES / "markdown" / "release-notes-chat.md"
MD_PLAIN = SAMPLES / "markdown" / "plain-notes.txt"
MD_LATIN1 = SAMPLES / "markdown" / "latin1-notes.md"
HOT_SAMPLE = SAMPLES / "hot" / "ripley.md"

JSONL_KINDS = ("copilot", "claude", "codex")
# A file name each kind accepts, so property tests hit the real code paths.
FILE_NAMES = {
    "copilot": "events.jsonl",
    "claude": f"{CLAUDE_ID}.jsonl",
    "codex": f"rollout-2026-04-30T10-00-00-{CODEX_ID}.jsonl",
    "squad-repl": f"2026-06-02T21-15-30Z_{REPL_ID}.json",
    "markdown": "notes.md",
    "hot": "ripley.md",
}


def dt(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def parse(kind: str, path: Path, agent: str = "scribe") -> ParseResult:
    return parse_file(kind, path, agent)


def only(result: ParseResult) -> Session:
    assert len(result.sessions) == 1, result
    return result.sessions[0]


def by_id(result: ParseResult) -> dict[str, Session]:
    return {s.session_id: s for s in result.sessions}


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def no_internal_errors(result: ParseResult) -> None:
    assert not [w for w in result.warnings if "internal error" in w], result.warnings


def ev(etype: str, data: Any = None, ts: str = "2026-02-11T19:34:00Z", **extra: Any) -> dict[str, Any]:
    return {"type": etype, "id": "e", "timestamp": ts, "parentId": None, "data": data or {}, **extra}


# --------------------------------------------------------------------------- copilot


def test_copilot_sample_main_and_subagent_sessions() -> None:
    r = parse("copilot", COPILOT_SAMPLE)
    sessions = by_id(r)
    assert set(sessions) == {COPILOT_ID, f"{COPILOT_ID}/tester"}
    main, tester = sessions[COPILOT_ID], sessions[f"{COPILOT_ID}/tester"]
    assert main.agent == "scribe" and tester.agent == "tester"
    assert main.kind == "copilot" and main.source == COPILOT_SAMPLE
    # The tester's own messages went to its session, not the main one.
    assert any("test_empty_server_table_uses_defaults" in t.text for t in tester.turns)
    assert not any("covering both an empty table" in t.text for t in main.turns)
    assert [t.kind for t in tester.turns] == ["message", "tool_call", "tool_result", "message"]
    # Compaction summary becomes a summary turn.
    summaries = [t for t in main.turns if t.kind == "summary"]
    assert len(summaries) == 1 and summaries[0].role == "summary" and "Goal: fix #590" in summaries[0].text
    # Tool calls carry the tool name; shell commands come first so anchors find them.
    bash = [t for t in main.turns if t.kind == "tool_call" and t.tool_name == "bash"]
    assert bash[0].text.startswith("bash cd /home/dev/repo && python -m pytest")
    results = [t for t in main.turns if t.kind == "tool_result"]
    assert results[0].tool_name == "view" and results[0].role == "tool"
    assert "KeyError: 'host'" in results[1].text
    # One malformed line, one summarizing warning naming file, count and line.
    assert r.malformed == 1 and main.malformed == 1 and tester.malformed == 0
    bad = [w for w in r.warnings if "malformed" in w]
    assert bad == [f"copilot: 1 malformed line skipped in {COPILOT_SAMPLE} (first at line 19)"]
    # Ended: last event is session.shutdown, whose timestamp is the end.
    assert r.ended and main.ended and tester.ended
    assert main.end == dt("2026-02-11T20:10:00Z")
    assert main.start == dt("2026-02-11T19:34:02Z")
    assert tester.start == dt("2026-02-11T19:34:25Z") and tester.end == dt("2026-02-11T19:34:30Z")
    # Hostile sub-agent name: events stay under the main agent, with a warning.
    assert any("hostile name" in t.text for t in main.turns)
    assert (
        f"copilot: invalid sub-agent name '../../../tmp/x' in {COPILOT_SAMPLE}; events kept under scribe"
        in r.warnings
    )
    assert any("invalid sub-agent" in w for w in main.warnings)


def test_copilot_turn_positions_are_lines_and_byte_offsets() -> None:
    r = parse("copilot", COPILOT_SAMPLE)
    raw = COPILOT_SAMPLE.read_bytes()
    line_ends = [i + 1 for i, b in enumerate(raw) if b == ord("\n")]
    for s in r.sessions:
        for t in s.turns:
            assert t.end_offset == line_ends[t.line - 1]
            assert t.ts is not None and t.ts.tzinfo is not None and t.ts.utcoffset() == UTC.utcoffset(None)
    assert r.size == len(raw)


@pytest.mark.parametrize("bad_name", ["../../../tmp/x", "a\u0000b", "Has Space", "", "x" * 65])
def test_copilot_invalid_subagent_name_stays_under_main(tmp_path: Path, bad_name: str) -> None:
    path = write_jsonl(
        tmp_path / "s1" / "events.jsonl",
        [
            ev("session.start", {"sessionId": "s1"}),
            ev("user.message", {"content": "start"}),
            ev("subagent.started", {"toolCallId": "call_9", "agentName": bad_name}),
            ev("assistant.message", {"content": "from the sub-agent"}, agentId="call_9"),
        ],
    )
    r = parse("copilot", path, "coord")
    s = only(r)
    assert s.agent == "coord" and s.session_id == "s1"
    assert [t.text for t in s.turns] == ["start", "from the sub-agent"]
    warn = [w for w in r.warnings if "invalid sub-agent name" in w]
    assert len(warn) == 1 and str(path) in warn[0] and warn[0].endswith("events kept under coord")
    assert "\x00" not in warn[0]


def test_copilot_subagent_matched_by_agent_id_fields(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "events.jsonl",
        [
            ev("session.start", {"sessionId": "s2"}),
            ev("user.message", {"content": "go"}),
            # Sub-agent events may come before their subagent.started is written.
            ev("assistant.message", {"content": "early dallas"}, agentId="agent-7"),
            ev("subagent.started", {"agentId": "agent-7", "agentName": "Dallas"}),
            ev("subagent.started", {"agentName": "lambert"}, agentId="agent-8"),
            ev("assistant.message", {"content": "lambert here"}, agentId="agent-8"),
            ev("assistant.message", {"content": "dallas again"}, agentId="agent-7"),
            ev("assistant.message", {"content": "who am i"}, agentId="agent-unknown"),
        ],
    )
    r = parse("copilot", path)
    sessions = by_id(r)
    assert [t.text for t in sessions["s2/dallas"].turns] == ["early dallas", "dallas again"]
    assert sessions["s2/dallas"].agent == "dallas"
    assert [t.text for t in sessions["s2/lambert"].turns] == ["lambert here"]
    assert [t.text for t in sessions["s2"].turns] == ["go", "who am i"]
    assert any("unknown sub-agent id 'agent-unknown'" in w for w in r.warnings)


def test_copilot_end_detection(tmp_path: Path) -> None:
    start = ev("session.start", {"sessionId": "s3"})
    msg = ev("user.message", {"content": "hi"}, ts="2026-02-11T19:40:00Z")
    shutdown = ev("session.shutdown", {"shutdownType": "routine"}, ts="2026-02-11T19:50:00Z")
    resume = ev("session.resume", {}, ts="2026-02-12T08:00:00Z")
    later = ev("user.message", {"content": "back again"}, ts="2026-02-12T08:00:05Z")

    ended = parse("copilot", write_jsonl(tmp_path / "a.jsonl", [start, msg, shutdown, "", "  "]))
    assert ended.ended and only(ended).ended and only(ended).end == dt("2026-02-11T19:50:00Z")

    resumed = parse("copilot", write_jsonl(tmp_path / "b.jsonl", [start, msg, shutdown, resume, later]))
    assert not resumed.ended and not only(resumed).ended
    assert only(resumed).end == dt("2026-02-12T08:00:05Z")

    resumed_only = parse("copilot", write_jsonl(tmp_path / "c.jsonl", [start, msg, shutdown, resume]))
    assert not resumed_only.ended

    crashed = parse("copilot", write_jsonl(tmp_path / "d.jsonl", [start, msg]))
    assert not crashed.ended

    torn = parse("copilot", write_jsonl(tmp_path / "e.jsonl", [start, msg, shutdown, '{"type":"user.mess']))
    assert not torn.ended and torn.malformed == 1


def test_copilot_wrong_data_type_is_malformed(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "events.jsonl",
        [
            {"type": "user.message", "data": ["not", "an", "object"]},
            {"type": "user.message", "data": {"content": 42}},
            {"type": 7, "data": {}},
            ev("user.message", {"content": "kept"}),
            {"type": "session.info", "data": "ignored types are not malformed"},
        ],
    )
    r = parse("copilot", path)
    assert r.malformed == 3 and [t.text for t in only(r).turns] == ["kept"]
    assert any("3 malformed lines" in w and "(first at line 1)" in w for w in r.warnings)


def test_copilot_session_id_fallbacks(tmp_path: Path) -> None:
    events = [ev("user.message", {"content": "no start event"})]
    folder = parse("copilot", write_jsonl(tmp_path / "abc-123" / "events.jsonl", events))
    assert only(folder).session_id == "abc-123"
    legacy = parse("copilot", write_jsonl(tmp_path / "0f0e-legacy.jsonl", events))
    assert only(legacy).session_id == "0f0e-legacy"
    hostile = [ev("session.start", {"sessionId": "../../etc"}), *events]
    assert only(parse("copilot", write_jsonl(tmp_path / "x1" / "events.jsonl", hostile))).session_id == "x1"


# --------------------------------------------------------------------------- claude


def test_claude_sample() -> None:
    r = parse("claude", CLAUDE_SAMPLE)
    s = only(r)
    assert s.session_id == CLAUDE_ID and s.agent == "scribe" and not r.ended
    texts = [t.text for t in s.turns]
    # isMeta echo, file-history-snapshot, queue-operation, thinking and compact_boundary are skipped.
    assert not any("<command-name>" in x or "Let me read the existing" in x for x in texts)
    assert not any(x == "also add tests" or "Conversation compacted" in x for x in texts)
    assert s.turns[0].role == "user" and s.turns[0].text.startswith("Add a config file loader")
    calls = [t for t in s.turns if t.kind == "tool_call"]
    assert [t.tool_name for t in calls] == ["Read", "Bash", "Write", "Bash"]
    assert calls[0].text == 'Read {"file_path":"/home/dev/api/api/settings.py"}'
    assert calls[1].text.startswith("Bash python -c 'import tomllib")
    assert all(t.role == "assistant" for t in calls)
    outputs = [t for t in s.turns if t.kind == "tool_result"]
    assert [t.tool_name for t in outputs] == ["Read", "Bash", "Write", "Bash"]
    assert all(t.role == "tool" for t in outputs)
    assert outputs[1].text == "tomllib"  # list-of-blocks content flattened
    assert outputs[3].text.startswith("error: E   AssertionError")
    summaries = [t for t in s.turns if t.kind == "summary"]
    assert len(summaries) == 2 and all(t.role == "summary" for t in summaries)
    assert "Primary Request" in summaries[0].text and summaries[1].text.startswith("TOML config loader")
    assert r.malformed == 1 and s.malformed == 1
    assert f"claude: 1 malformed line skipped in {CLAUDE_SAMPLE} (first at line 9)" in r.warnings
    assert s.start == dt("2025-05-26T07:27:40.079Z") and s.end == dt("2025-05-26T07:40:20Z")


def test_claude_subagent_files_keep_default_agent(tmp_path: Path) -> None:
    s = only(parse("claude", CLAUDE_AGENT_SAMPLE, "dallas"))
    assert s.agent == "dallas" and s.session_id == "agent-a1b2c3"
    assert [t.kind for t in s.turns] == ["message", "tool_call", "tool_result", "message"]
    nested = tmp_path / CLAUDE_ID / "subagents" / "task-9.jsonl"
    nested.parent.mkdir(parents=True)
    shutil.copy(CLAUDE_AGENT_SAMPLE, nested)
    assert only(parse("claude", nested)).session_id == "task-9"


def test_claude_string_content_and_bookkeeping(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "sess.jsonl",
        [
            {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
            {"type": "queue-operation", "operation": "enqueue", "content": "queued"},
            {"type": "progress", "data": {"x": 1}},
            {
                "type": "user",
                "isMeta": True,
                "message": {"role": "user", "content": "<local-command-stdout>"},
            },
            {
                "type": "user",
                "timestamp": "2025-01-01T00:00:00Z",
                "message": {"role": "user", "content": "hello"},
            },
            {"type": "assistant", "message": {"role": "assistant", "content": "plain string reply"}},
            {"type": "system", "subtype": "informational", "content": "Hook ran", "timestamp": 1735689600},
        ],
    )
    s = only(parse("claude", path))
    assert s.session_id == "sess"  # no sessionId field: the file stem
    assert [(t.role, t.text) for t in s.turns] == [
        ("user", "hello"),
        ("assistant", "plain string reply"),
        ("system", "Hook ran"),
    ]
    assert s.turns[2].ts == dt("2025-01-01T00:00:00Z")


# --------------------------------------------------------------------------- codex


def test_codex_sample() -> None:
    r = parse("codex", CODEX_SAMPLE)
    s = only(r)
    assert s.session_id == CODEX_ID and not r.ended and not s.ended
    users = [t for t in s.turns if t.role == "user"]
    assert len(users) == 1 and users[0].text.startswith(
        "The /healthz endpoint returns 500"
    )  # boilerplate skipped
    assistants = [t.text for t in s.turns if t.role == "assistant" and t.kind == "message"]
    assert len(assistants) == 2  # event_msg duplicates ignored
    calls = [t for t in s.turns if t.kind == "tool_call"]
    assert calls[0].text.startswith("shell bash -lc sed -n '1,80p' svc/health.py")
    assert calls[0].tool_name == "shell"
    assert calls[1].tool_name == "apply_patch" and "*** Begin Patch" in calls[1].text
    outputs = [t for t in s.turns if t.kind == "tool_result"]
    assert outputs[0].text.startswith("from fastapi import APIRouter")  # JSON wrapper removed
    assert outputs[2].text.startswith("exit 1\n") and outputs[2].tool_name == "shell"
    summaries = [t for t in s.turns if t.kind == "summary"]
    assert len(summaries) == 1 and summaries[0].text.startswith("Goal: /healthz returns 200")
    assert not any("Inspecting health handler" in t.text for t in s.turns)  # reasoning skipped
    assert r.malformed == 1 and any("(first at line 14)" in w for w in r.warnings)


def test_codex_event_messages_used_only_without_response_items(tmp_path: Path) -> None:
    recs = [
        {
            "timestamp": "2026-04-30T10:00:00Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "do X"},
        },
        {
            "timestamp": "2026-04-30T10:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["ls","-la"]}',
                "call_id": "c",
            },
        },
        {
            "timestamp": "2026-04-30T10:00:02Z",
            "type": "event_msg",
            "payload": {"type": "agent_message", "message": "done X"},
        },
    ]
    s = only(parse("codex", write_jsonl(tmp_path / "rollout-2026-04-30T10-00-00-nouuid.jsonl", recs)))
    assert [(t.role, t.kind, t.text) for t in s.turns] == [
        ("user", "message", "do X"),
        ("assistant", "tool_call", "shell ls -la"),
        ("assistant", "message", "done X"),
    ]
    assert s.session_id == "rollout-2026-04-30T10-00-00-nouuid"


def test_codex_session_id_from_file_name(tmp_path: Path) -> None:
    name = f"rollout-2026-04-30T10-00-00-{CODEX_ID}.jsonl"
    msg = {
        "type": "response_item",
        "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    }
    assert only(parse("codex", write_jsonl(tmp_path / name, [msg]))).session_id == CODEX_ID


# --------------------------------------------------------------------------- squad repl


def test_squad_repl_grouping() -> None:
    r = parse("squad-repl", REPL_SAMPLE, "coordinator")
    sessions = by_id(r)
    assert set(sessions) == {REPL_ID, f"{REPL_ID}/ripley", f"{REPL_ID}/dallas", f"{REPL_ID}/lambert"}
    main = sessions[REPL_ID]
    assert main.agent == "coordinator" and len(main.turns) == 15
    assert main.turns[0].role == "system" and main.turns[2].text.startswith("[ripley] Routing")
    dallas = sessions[f"{REPL_ID}/dallas"]
    assert dallas.agent == "dallas"
    assert [(t.role, t.line) for t in dallas.turns] == [
        ("user", 2),
        ("assistant", 4),
        ("user", 5),
        ("assistant", 7),
        ("user", 13),
        ("assistant", 14),
    ]
    assert all(t.line == t.end_offset for t in dallas.turns)
    lambert = sessions[f"{REPL_ID}/lambert"]
    assert [t.line for t in lambert.turns] == [5, 6, 13, 15]
    assert lambert.turns[1].text.startswith("Added tests/test_export.py")  # no [name] prefix in own session
    assert [t.line for t in sessions[f"{REPL_ID}/ripley"].turns] == [2, 3, 11, 12]
    # The last user message got no reply from a named agent: it is only in the main session.
    assert main.turns[-1].line == 16 and all(t.line != 16 for t in dallas.turns + lambert.turns)
    # The hostile name never becomes a session; its message stays in the main one.
    assert any(t.text == "I should not become a file." for t in main.turns)
    assert any("invalid agent name '../../etc/passwd'" in w for w in r.warnings)
    assert r.malformed == 1 and any("(first at message 10)" in w for w in r.warnings)
    assert not r.ended and main.start == dt("2026-06-02T21:15:30Z") and main.end == dt("2026-06-02T21:38:00Z")
    assert r.size == REPL_SAMPLE.stat().st_size


def test_squad_repl_odd_documents(tmp_path: Path) -> None:
    empty = tmp_path / "a.json"
    empty.write_text(json.dumps({"id": "x", "createdAt": "2026-01-01T00:00:00Z", "messages": []}))
    r = parse("squad-repl", empty)
    assert r.sessions == [] and r.warnings == []
    for i, doc in enumerate(["[1, 2]", '"text"', '{"messages": 5}', "{not json"]):
        p = tmp_path / f"b{i}.json"
        p.write_text(doc)
        res = parse("squad-repl", p)
        assert res.sessions == [] and len(res.warnings) == 1 and str(p) in res.warnings[0]
    no_ts = tmp_path / "c.json"
    no_ts.write_text(
        json.dumps(
            {
                "id": "c",
                "createdAt": "2026-01-01T10:00:00Z",
                "lastActiveAt": "2026-01-01T11:00:00Z",
                "messages": [{"role": "user", "content": "hi", "timestamp": {"bad": 1}}],
            }
        )
    )
    s = only(parse("squad-repl", no_ts))
    assert s.start == dt("2026-01-01T10:00:00Z") and s.end == dt("2026-01-01T11:00:00Z")


# --------------------------------------------------------------------------- markdown


def test_markdown_transcript_with_markers_and_commands() -> None:
    r = parse("markdown", MD_SAMPLE)
    s = only(r)
    assert s.session_id == "2026-06-02T21-15-30Z-export-permissions"
    assert r.ended and s.ended  # <!-- session: end -->
    assert s.start == dt("2026-06-02T21:15:30Z")  # from the file name
    roles = [(t.role, t.kind) for t in s.turns]
    assert roles[1] == ("user", "message") and roles[2] == ("assistant", "message")
    calls = [t for t in s.turns if t.kind == "tool_call"]
    assert [t.text for t in calls] == [
        "shell docker compose exec exporter ls -ld /var/exports",
        "shell docker compose exec exporter id",
        "shell make test",
    ]
    outputs = [t for t in s.turns if t.kind == "tool_result"]
    assert outputs[0].text == "drwxr-xr-x 2 root root 4096 May 30 02:11 /var/exports"
    assert outputs[-1].text.startswith("git diff --stat")  # "Tool:" marker
    assert all(t.role == "tool" for t in outputs)
    assert not any("session: end" in t.text for t in s.turns)
    decision = next(t for t in s.turns if "Decision:" in t.text)
    assert decision.role == "user" and decision.line == 29
    data = MD_SAMPLE.read_bytes()
    assert all(0 < t.end_offset <= len(data) for t in s.turns)
    assert data[: s.turns[-1].end_offset].decode().rstrip().endswith("DATE=2026-06-01`.")


def test_markdown_front_matter() -> None:
    r = parse("markdown", MD_FRONT)
    s = only(r)
    assert s.agent == "dallas" and s.session_id == "relnotes-2-4"
    assert s.start == dt("2026-03-14T09:00:00Z") and s.end == dt("2026-03-14T09:42:00Z")
    assert s.turns[0].ts == dt("2026-03-14T09:00:00Z") and s.turns[0].role == "user"
    assert [t.kind for t in s.turns].count("tool_result") == 1
    assert "title:" not in s.turns[0].text and not r.warnings


def test_markdown_without_markers_uses_paragraphs_and_mtime(tmp_path: Path) -> None:
    path = tmp_path / MD_PLAIN.name
    shutil.copy(MD_PLAIN, path)
    os.utime(path, (1_700_000_000, 1_700_000_000))
    r = parse("markdown", path)
    s = only(r)
    assert len(s.turns) == 4 and all(t.role == "assistant" and t.kind == "message" for t in s.turns)
    assert [t.line for t in s.turns] == [1, 4, 7, 10]
    assert s.start == s.end == datetime.fromtimestamp(1_700_000_000, tz=UTC)
    assert r.warnings == [f"markdown: no date in {path}; using mtime"]


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("---\ndate: 2026-01-05\n---\nUser: hi\n", "2026-01-05T00:00:00Z"),
        ("notes\n\n### 2026-02-03: Topic\nUser: hi\n", "2026-02-03T00:00:00Z"),
        ("User: hi at 2026-02-03T10:11:12Z\n\nAgent: ok\n", "2026-02-03T10:11:12Z"),
    ],
)
def test_markdown_date_rules(tmp_path: Path, text: str, start: str) -> None:
    path = tmp_path / "log.md"
    path.write_text(text)
    r = parse("markdown", path)
    assert only(r).start == dt(start) and not r.warnings


def test_markdown_file_name_date_beats_text(tmp_path: Path) -> None:
    path = tmp_path / "2025-12-24_14-30-notes.md"
    path.write_text("### 2026-02-03: later heading\nUser: hi\n")
    assert only(parse("markdown", path)).start == dt("2025-12-24T14:30:00Z")


@pytest.mark.parametrize(
    ("user", "assistant"),
    [
        ("User: q", "Assistant: a"),
        ("**User:** q", "**Assistant:** a"),
        ("**User**: q", "**Agent**: a"),
        ("## User\n\nq", "## Assistant\n\na"),
        ("> **user**\n> q", "> **assistant**\n> a"),
        ("Human: q", "Agent: a"),
    ],
)
def test_markdown_speaker_markers(tmp_path: Path, user: str, assistant: str) -> None:
    path = tmp_path / "t.md"
    path.write_text(f"{user}\n\n{assistant}\n\nUser settings are stored in ~/.cfg, not a marker.\n")
    s = only(parse("markdown", path))
    assert [(t.role, t.text.splitlines()[0]) for t in s.turns] == [("user", "q"), ("assistant", "a")]
    assert "User settings are stored" in s.turns[1].text


def test_markdown_session_ended_line_and_invalid_agent(tmp_path: Path) -> None:
    path = tmp_path / "2026-01-01-x.md"
    path.write_text("---\nagent: ../evil\n---\nUser: hi\n\nAssistant: bye\n\n_Session ended._\n")
    r = parse("markdown", path, "fallback")
    s = only(r)
    assert r.ended and s.agent == "fallback" and s.turns[-1].text == "bye"


def test_markdown_latin1_is_replaced_not_fatal() -> None:
    s = only(parse("markdown", MD_LATIN1))
    assert s.turns[0].role == "user" and "caf\ufffd" in s.turns[0].text
    assert s.turns[1].text.startswith("J'ai mis")


# --------------------------------------------------------------------------- hot


def test_hot_file_is_one_session(tmp_path: Path) -> None:
    path = tmp_path / "ripley.md"
    shutil.copy(HOT_SAMPLE, path)
    os.utime(path, (1_750_000_000, 1_750_000_000))
    r = parse("hot", path, "scribe")
    s = only(r)
    assert s.agent == "ripley"
    assert s.session_id == "hot-" + hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    assert len(s.turns) == 6 and all(t.role == "assistant" for t in s.turns)
    assert s.turns[1].text.startswith("Current task: Coordinating")
    assert s.start == s.end == datetime.fromtimestamp(1_750_000_000, tz=UTC)
    assert not r.ended and not r.warnings


def test_hot_live_marker_and_template_yield_nothing() -> None:
    for name in ("dallas.md", "lambert.md"):
        r = parse("hot", SAMPLES / "hot" / name)
        assert r.sessions == [] and r.warnings == []


def test_hot_template_variants(tmp_path: Path) -> None:
    path = tmp_path / "ash.md"
    # The template scribed itself writes when it resets a hot file.
    path.write_text(
        "# Hot memory: ash\n\nCurrent task:\nActive decisions:\nLast actions:\nBlockers:\nTalking to:\n"
    )
    assert parse("hot", path).sessions == []
    path.write_text(
        "# ash\n\n**Current task:** \n- Active decisions: —\n<!-- fill me -->\nBlockers: (none)\n---\n"
    )
    assert parse("hot", path).sessions == []
    path.write_text("# ash\n\nCurrent task: reading logs\n")
    assert len(only(parse("hot", path)).turns) == 2


def test_hot_invalid_agent_name(tmp_path: Path) -> None:
    path = tmp_path / "Bad Name.md"
    path.write_text("Current task: x\n")
    r = parse("hot", path)
    assert r.sessions == [] and len(r.warnings) == 1 and "invalid agent name" in r.warnings[0]


# --------------------------------------------------------------------------- robustness


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_files_give_nothing(tmp_path: Path, kind: str, content: bytes) -> None:
    path = tmp_path / FILE_NAMES[kind]
    path.write_bytes(content)
    r = parse(kind, path)
    assert r.sessions == [] and r.warnings == [] and r.malformed == 0


@pytest.mark.parametrize("kind", KINDS)
def test_binary_garbage_warns(tmp_path: Path, kind: str) -> None:
    path = tmp_path / FILE_NAMES[kind]
    path.write_bytes(bytes(range(256)) * 8 + b"\x00\xff\xfe\n\x89PNG\r\n\x1a\n")
    r = parse(kind, path)
    no_internal_errors(r)
    assert r.sessions == [] and r.warnings
    assert all(str(path) in w for w in r.warnings)


@pytest.mark.parametrize("kind", KINDS)
def test_unreadable_path_is_a_warning(tmp_path: Path, kind: str) -> None:
    r = parse(kind, tmp_path / "missing" / FILE_NAMES[kind])
    assert r.sessions == [] and len(r.warnings) == 1 and "cannot read" in r.warnings[0]
    d = tmp_path / FILE_NAMES[kind]
    d.mkdir()
    r = parse(kind, d)
    assert r.sessions == [] and r.warnings


def test_unknown_kind_is_a_caller_bug(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown source kind 'nope'"):
        parse_file("nope", tmp_path / "x", "scribe")
    with pytest.raises(ValueError, match="unknown source kind 'nope'"):
        list(discover("nope", tmp_path))


def test_invalid_utf8_inside_values_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    good = b'{"type":"user","message":{"role":"user","content":"caf\xe9 \xff ok"}}\n'
    broken = b'{"type":"user",\xff\xfe"message":1}\n'
    path.write_bytes(good + broken + good)
    r = parse("claude", path)
    s = only(r)
    assert [t.text for t in s.turns] == ["caf\ufffd \ufffd ok"] * 2
    assert r.malformed == 1 and s.turns[1].line == 3


@pytest.mark.parametrize("kind", JSONL_KINDS)
def test_deep_nesting_line_is_malformed_not_fatal(tmp_path: Path, kind: str) -> None:
    good = {
        "copilot": ev("user.message", {"content": "after the bomb"}),
        "claude": {"type": "user", "message": {"role": "user", "content": "after the bomb"}},
        "codex": {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "after the bomb"}],
            },
        },
    }[kind]
    path = write_jsonl(tmp_path / FILE_NAMES[kind], ["[" * 100_000, "{" * 50_000, good])
    r = parse(kind, path)
    assert r.malformed == 2 and [t.text for t in only(r).turns] == ["after the bomb"]
    assert any("2 malformed lines" in w and "(first at line 1)" in w for w in r.warnings)


def test_deep_nesting_whole_file_formats(tmp_path: Path) -> None:
    for kind in ("squad-repl", "markdown", "hot"):
        path = tmp_path / FILE_NAMES[kind]
        path.write_text("[" * 100_000)
        no_internal_errors(parse(kind, path))


def test_non_object_lines_counted(tmp_path: Path) -> None:
    ok = {"type": "user", "message": {"role": "user", "content": "fine"}}
    path = write_jsonl(tmp_path / "x.jsonl", ["1", '"str"', "[1,2]", "null", "true", ok])
    r = parse("claude", path)
    assert r.malformed == 5 and len(only(r).turns) == 1
    assert sum("malformed" in w for w in r.warnings) == 1


WEIRD: list[Any] = [None, 1, -1.5, True, "", "x", [], [1, "a", None], {}, {"a": {"b": []}}, 1e308]


@pytest.mark.parametrize("weird", WEIRD)
def test_unexpected_field_types_never_raise(tmp_path: Path, weird: Any) -> None:
    copilot = [
        ev("session.start", weird),
        {"type": "session.start", "data": {"sessionId": weird, "context": weird}, "timestamp": weird},
        {"type": weird, "data": weird, "agentId": weird},
        {"type": "user.message", "data": {"content": weird}, "timestamp": weird, "agentId": weird},
        {"type": "subagent.started", "data": {"agentName": weird, "toolCallId": weird, "agentId": weird}},
        {
            "type": "tool.execution_start",
            "data": {"toolName": weird, "arguments": weird, "toolCallId": weird},
        },
        {"type": "tool.execution_complete", "data": {"result": weird, "error": weird, "toolCallId": weird}},
        {"type": "session.compaction_complete", "data": {"summaryContent": weird}},
        {"type": "session.shutdown", "data": weird, "timestamp": weird},
    ]
    claude = [
        {"type": "user", "message": weird, "sessionId": weird, "isMeta": weird},
        {"type": "user", "message": {"content": weird}, "timestamp": weird},
        {
            "type": "assistant",
            "message": {"content": [weird, {"type": "tool_use", "name": weird, "input": weird, "id": weird}]},
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": weird, "content": weird, "is_error": weird}
                ]
            },
        },
        {
            "type": "user",
            "isCompactSummary": weird,
            "message": {"content": [{"type": "text", "text": weird}]},
        },
        {"type": "summary", "summary": weird},
        {"type": "system", "content": weird, "subtype": weird, "message": weird},
    ]
    codex = [
        {"type": "session_meta", "payload": {"id": weird}},
        {"type": "session_meta", "payload": weird},
        {"type": "response_item", "payload": {"type": "message", "role": weird, "content": weird}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [weird, {"type": "input_text", "text": weird}],
            },
        },
        {
            "type": "response_item",
            "payload": {"type": weird, "name": weird, "arguments": weird, "call_id": weird},
        },
        {
            "type": "response_item",
            "payload": {"type": "function_call", "name": weird, "arguments": weird, "call_id": weird},
        },
        {
            "type": "response_item",
            "payload": {"type": "function_call_output", "output": weird, "call_id": weird},
        },
        {"type": "response_item", "payload": {"type": "local_shell_call", "action": weird}},
        {"type": "compacted", "payload": {"message": weird}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": weird}},
    ]
    for kind, recs in (("copilot", copilot), ("claude", claude), ("codex", codex)):
        no_internal_errors(parse(kind, write_jsonl(tmp_path / kind / FILE_NAMES[kind], recs)))
    repl = tmp_path / FILE_NAMES["squad-repl"]
    for doc in (
        {"id": weird, "createdAt": weird, "lastActiveAt": weird, "messages": weird},
        {
            "id": "x",
            "messages": [weird, {"role": weird, "content": weird, "agentName": weird, "timestamp": weird}],
        },
        {"id": "x", "messages": [{"role": "agent", "content": "hi", "agentName": weird, "timestamp": weird}]},
    ):
        repl.write_text(json.dumps(doc))
        no_internal_errors(parse("squad-repl", repl))


def test_user_text_whole_tool_text_clipped(tmp_path: Path) -> None:
    big = "x" * 200_000
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"type": "user", "message": {"content": big}},
            {
                "type": "assistant",
                "message": {
                    "content": [{"type": "tool_use", "id": "t", "name": "Write", "input": {"content": big}}]
                },
            },
            {
                "type": "user",
                "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": big}]},
            },
        ],
    )
    s = only(parse("claude", path))
    # The user's words are kept whole (no turn is clipped before selection); tool text keeps its
    # head and tail (and its error lines, none here).
    assert s.turns[0].text == big
    assert all(len(t.text) <= MAX_TOOL_CHARS for t in s.turns[1:])
    assert "chars elided" in s.turns[2].text


def test_streaming_30mb_claude_file(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    out = {
        "type": "user",
        "timestamp": "2025-05-26T07:00:00Z",
        "message": {
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "line of output\n" * 2000}]
        },
    }
    call = {
        "type": "assistant",
        "timestamp": "2025-05-26T07:00:01Z",
        "message": {
            "content": [
                {"type": "text", "text": "Running it. " * 50},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}},
            ]
        },
    }
    chunk = (json.dumps(out) + "\n" + json.dumps(call) + "\n").encode()
    reps = 30_000_000 // len(chunk) + 1
    with path.open("wb") as fh:
        for _ in range(reps):
            fh.write(chunk)
    r = parse("claude", path)
    s = only(r)
    assert r.size == path.stat().st_size >= 30_000_000 and r.malformed == 0
    assert len(s.turns) == reps * 3
    assert max(len(t.text) for t in s.turns) <= MAX_TEXT_CHARS
    assert s.turns[-1].end_offset == r.size


# --------------------------------------------------------------------------- helpers


def test_parse_ts() -> None:
    assert parse_ts("2026-02-11T19:33:46.140Z") == datetime(2026, 2, 11, 19, 33, 46, 140000, tzinfo=UTC)
    assert parse_ts("2026-02-11T21:33:46+02:00") == datetime(2026, 2, 11, 19, 33, 46, tzinfo=UTC)
    assert parse_ts("2026-02-11 19:33:46") == datetime(2026, 2, 11, 19, 33, 46, tzinfo=UTC)
    assert parse_ts("2026-04-30T10:00:00.123456789Z") is not None
    assert (
        parse_ts(1_700_000_000)
        == parse_ts(1_700_000_000_000)
        == datetime.fromtimestamp(1_700_000_000, tz=UTC)
    )
    assert parse_ts("1700000000") == datetime.fromtimestamp(1_700_000_000, tz=UTC)
    bad_values: list[object] = [
        None,
        True,
        "",
        "yesterday",
        {"t": 1},
        [],
        float("nan"),
        1e300,
        -5,
        "2026-13-45T00:00:00Z",
    ]
    for bad in bad_values:
        assert parse_ts(bad) is None


def test_getters_and_loads() -> None:
    d = {"s": "x", "n": 1, "d": {"a": 1}, "l": [1], "b": True}
    assert get_str(d, "s") == "x" and get_str(d, "n") == "" and get_str([1], "s") == ""
    assert get_dict(d, "d") == {"a": 1} and get_dict(d, "l") == {} and get_dict(None, "d") == {}
    assert get_list(d, "l") == [1] and get_list(d, "d") == []
    assert get_bool(d, "b") and not get_bool(d, "n") and not get_bool("b", "b")
    assert loads("[" * 100_000) == (False, None)
    assert loads("null") == (True, None)
    assert render_call("shell", '{"command":["git","status"]}') == "shell git status"
    assert render_call("Read", {"file_path": "/x"}) == 'Read {"file_path":"/x"}'
    assert render_call("t", None) == "t"


def test_iter_jsonl_offsets_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a":1}\r\n\r\n{"b":2}\n[3]\n{"c":')
    rows = list(iter_jsonl(path))
    assert [(r.line_no, r.end_offset, r.obj, r.error is None) for r in rows] == [
        (1, 12, {"a": 1}, True),
        (3, 22, {"b": 2}, True),
        (4, 26, None, False),
        (5, 31, None, False),
    ]


def test_discover(tmp_path: Path) -> None:
    def touch(rel: str) -> Path:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
        return p

    cop = tmp_path / "copilot"
    for rel in (
        "copilot/b/events.jsonl",
        "copilot/a/events.jsonl",
        "copilot/legacy.jsonl",
        "copilot/.hidden/events.jsonl",
        "copilot/a/other.jsonl",
        "copilot/.x.jsonl",
        "copilot/y.jsonl.tmp",
        "copilot/z.jsonl~",
    ):
        touch(rel)
    assert [p.relative_to(cop).as_posix() for p in discover("copilot", cop)] == [
        "a/events.jsonl",
        "b/events.jsonl",
        "legacy.jsonl",
    ]
    cl = tmp_path / "claude"
    for rel in (
        "claude/p1/s1.jsonl",
        "claude/p1/s1/subagents/agent-1.jsonl",
        "claude/p2/~lock.jsonl",
        "claude/p2/s2.jsonl.swp",
        "claude/p2/s3.jsonl.part",
        "claude/.cache/s4.jsonl",
    ):
        touch(rel)
    (cl / "link").symlink_to(cl / "p1", target_is_directory=True)
    (cl / "p2" / "dir.jsonl").mkdir()
    assert [p.relative_to(cl).as_posix() for p in discover("claude", cl)] == [
        "p1/s1/subagents/agent-1.jsonl",
        "p1/s1.jsonl",
    ]
    cx = tmp_path / "codex"
    touch("codex/2026/01/02/other.jsonl")
    assert [p.name for p in discover("codex", cx)] == ["other.jsonl"]  # fallback
    touch("codex/2026/01/02/rollout-2026-01-02T00-00-00-x.jsonl")
    assert [p.name for p in discover("codex", cx)] == ["rollout-2026-01-02T00-00-00-x.jsonl"]
    touch("repl/a.json")
    touch("repl/sub/b.json")
    assert [p.name for p in discover("squad-repl", tmp_path / "repl")] == ["a.json"]
    for rel in ("md/a.md", "md/x/b.markdown", "md/c.txt", "md/d.json", "md/.e.md", "md/f.md.swp"):
        touch(rel)
    assert [p.name for p in discover("markdown", tmp_path / "md")] == ["a.md", "c.txt", "b.markdown"]
    assert [p.name for p in discover("hot", tmp_path / "md")] == ["a.md"]
    assert [p.name for p in discover("markdown", tmp_path / "md", "**/*.json")] == ["d.json"]
    assert list(discover("claude", tmp_path / "missing")) == []
    assert list(discover("claude", touch("afile"))) == []


def test_discover_finds_samples() -> None:
    assert list(discover("copilot", SAMPLES / "copilot")) == [COPILOT_SAMPLE]
    assert list(discover("codex", SAMPLES / "codex")) == [CODEX_SAMPLE]
    assert len(list(discover("markdown", SAMPLES / "markdown"))) == 4
    assert [p.name for p in discover("hot", SAMPLES / "hot")] == ["dallas.md", "lambert.md", "ripley.md"]


# --------------------------------------------------------------------------- properties

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_TYPES = {
    "copilot": [
        "session.start",
        "session.shutdown",
        "session.resume",
        "user.message",
        "assistant.message",
        "tool.execution_start",
        "tool.execution_complete",
        "subagent.started",
        "session.compaction_complete",
    ],
    "claude": ["user", "assistant", "system", "summary", "file-history-snapshot"],
    "codex": ["session_meta", "response_item", "compacted", "event_msg", "turn_context"],
}
_record = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(sorted({t for ts in _TYPES.values() for t in ts})) | _json,
        "timestamp": st.sampled_from(["2026-01-01T00:00:00Z", 1_700_000_000]) | _json,
        "agentId": st.sampled_from(["a1", "a2"]) | _json,
        "data": st.fixed_dictionaries(
            {},
            optional={
                "content": _json,
                "agentName": st.sampled_from(["tester", "../x", "a\x00b"]) | _json,
                "toolCallId": st.sampled_from(["a1", "a2"]) | _json,
                "agentId": _json,
                "result": _json,
                "summaryContent": _json,
                "arguments": _json,
            },
        )
        | _json,
        "message": st.fixed_dictionaries(
            {},
            optional={
                "content": _json
                | st.lists(
                    st.fixed_dictionaries(
                        {"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking"])},
                        optional={
                            "text": _json,
                            "name": _json,
                            "input": _json,
                            "content": _json,
                            "tool_use_id": _json,
                        },
                    ),
                    max_size=3,
                )
            },
        )
        | _json,
        "payload": st.fixed_dictionaries(
            {
                "type": st.sampled_from(["message", "function_call", "function_call_output", "user_message"])
                | _json
            },
            optional={
                "role": st.sampled_from(["user", "assistant"]) | _json,
                "content": _json,
                "arguments": _json,
                "output": _json,
                "message": _json,
                "id": _json,
            },
        )
        | _json,
        "isMeta": _json,
        "isCompactSummary": _json,
    },
)
_PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _parse_bytes(kind: str, data: bytes) -> ParseResult:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / FILE_NAMES[kind]
        path.write_bytes(data)
        return parse_file(kind, path, "scribe")


@pytest.mark.parametrize("kind", KINDS)
@_PROPS
@given(data=st.binary(max_size=600))
def test_property_arbitrary_bytes_never_raise(kind: str, data: bytes) -> None:
    r = _parse_bytes(kind, data)
    no_internal_errors(r)
    for s in r.sessions:
        assert s.turns and s.start is not None and s.end is not None


@pytest.mark.parametrize("kind", [*JSONL_KINDS, "squad-repl"])
@_PROPS
@given(values=st.lists(_json, max_size=6))
def test_property_arbitrary_json_lines_never_raise(kind: str, values: list[Any]) -> None:
    if kind == "squad-repl":
        data = json.dumps({"id": "x", "messages": values}).encode()
    else:
        data = "\n".join(json.dumps(v) for v in values).encode()
    no_internal_errors(_parse_bytes(kind, data))


@pytest.mark.parametrize("kind", JSONL_KINDS)
@_PROPS
@given(records=st.lists(_record, min_size=1, max_size=8))
def test_property_shaped_records_never_raise(kind: str, records: list[dict[str, Any]]) -> None:
    r = _parse_bytes(kind, "\n".join(json.dumps(x) for x in records).encode())
    no_internal_errors(r)
    for s in r.sessions:
        assert "/" not in s.agent and "\x00" not in s.session_id
        for t in s.turns:
            assert t.line >= 1 and t.end_offset > 0
