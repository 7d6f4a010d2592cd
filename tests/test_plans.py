"""Plans are memory (issue 30, part 1): the agent's own todo list and plan reach the entry's Open items
and Progress, the hot seed, `scribed context` and the live hot file."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scribed import config as config_mod
from scribed.compress import plan
from scribed.core.scribe import Scribe
from scribed.models import Turn
from scribed.recall import context
from scribed.sources.common import PLAN_TOOLS
from scribed.tiers import cold
from scribed.tiers.cold import Layout

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

DONE_ITEM = "Write the Parquet writer in tally/export/parquet.py"
NOW_ITEM = "Wire --format parquet into the CLI"
NEXT_ITEM = "Partition by the tenant's timezone for --since (#318)"


def ts(i: int) -> str:
    return (T0 + timedelta(seconds=30 * i)).isoformat().replace("+00:00", "Z")


def call(name: str, args: Any, kind: str = "tool_call") -> Turn:
    text = f"{name} {json.dumps(args)}" if not isinstance(args, str) else f"{name}\n{args}"
    return Turn("assistant" if kind == "tool_call" else "tool", text, kind, tool_name=name)  # type: ignore[arg-type]


# --- the shapes ----------------------------------------------------------------------------------------
def test_plan_tools_are_the_ones_adapters_keep_whole() -> None:
    assert plan.PLAN_TOOLS == PLAN_TOOLS


def test_claude_todowrite_last_state_wins() -> None:
    first = [{"content": DONE_ITEM, "status": "in_progress", "activeForm": "Writing"}]
    last = [
        {"content": DONE_ITEM, "status": "completed", "activeForm": "Writing"},
        {"content": NEXT_ITEM, "status": "pending", "activeForm": "Partitioning"},
        {"content": NOW_ITEM, "status": "in_progress", "activeForm": "Wiring"},
    ]
    p = plan.final([call("TodoWrite", {"todos": first}), call("TodoWrite", {"todos": last})])
    assert p is not None
    assert p.open() == [f"(in progress) {NOW_ITEM}", NEXT_ITEM]
    assert p.done() == [DONE_ITEM]


def test_specstory_checklist_and_codex_update_plan_and_copilot_update_todo() -> None:
    spec = (
        "**Agent task list:**\n- [X] 🌡️ Read the widget\n- [⚡] 🌡️ Hide start times\n- [ ] 🌡️ Test the changes"
    )
    p = plan.final([call("TodoWrite", spec)])
    assert p is not None and p.open() == ["(in progress) Hide start times", "Test the changes"]
    assert p.done() == ["Read the widget"]
    codex = {
        "explanation": "x",
        "plan": [{"step": "Port", "status": "completed"}, {"step": "Retry", "status": "pending"}],
    }
    p = plan.final([call("update_plan", codex)])
    assert p is not None and p.open() == ["Retry"] and p.done() == ["Port"]
    p = plan.final([call("update_todo", {"todos": "- [x] a thing\n- [ ] b thing\n- [ ] c thing"})])
    assert p is not None and p.open() == ["b thing", "c thing"] and p.done() == ["a thing"]


def test_copilot_sql_todos_are_replayed() -> None:
    insert = (
        "INSERT INTO todos (id, title, status) VALUES ('size', 'Enforce a 10 MB limit in api/upload.py', "
        "'pending'), ('mime', 'Check MIME types', 'pending'), ('docs', 'Document the limit', 'pending'), "
        "('old', 'Drop the old handler', 'pending');"
    )
    turns = [
        call("sql", {"description": "plan", "query": insert}),
        call(
            "sql",
            {
                "query": "UPDATE todos SET status = 'done' WHERE id = 'size'; UPDATE todos SET status = 'in_progress' WHERE id IN ('mime')"
            },
        ),
        call("sql", {"query": "DELETE FROM todos WHERE id = 'old'"}),
        call("sql", {"query": "SELECT * FROM todos WHERE status != 'done'"}),
    ]
    p = plan.final(turns)
    assert p is not None
    assert p.open() == ["(in progress) Check MIME types", "Document the limit"]
    assert p.done() == ["Enforce a 10 MB limit in api/upload.py"]


def test_plan_mode_steps_are_planned_and_a_rejected_plan_is_not_the_plan() -> None:
    md = "# Plan: streaming export\n\n## Steps\n1. Add `StreamWriter` to export/csv.py\n   - detail\n2. Switch the CLI to it\n"
    p = plan.final([call("ExitPlanMode", {"plan": md})])
    assert p is not None
    assert p.open() == ["(planned) Add `StreamWriter` to export/csv.py", "(planned) Switch the CLI to it"]
    todo = call("TodoWrite", {"todos": [{"content": "Keep going", "status": "pending"}]})
    rejected = Turn(
        "tool",
        "error: The user doesn't want to proceed with this tool use.",
        "tool_result",
        tool_name="ExitPlanMode",
    )
    p = plan.final([todo, call("ExitPlanMode", {"plan": md}), rejected])
    assert p is not None and p.open() == ["Keep going"]


def test_codex_custom_tool_call_update_plan_with_arguments(tmp_path: Path) -> None:
    from scribed import sources

    args = json.dumps(
        {"plan": [{"step": "Build", "status": "in_progress"}, {"step": "Ship", "status": "pending"}]}
    )
    recs = [
        {"timestamp": ts(0), "type": "session_meta", "payload": {"id": "x-2", "cwd": "/repo"}},
        {
            "timestamp": ts(1),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Build it"}],
            },
        },
        {
            "timestamp": ts(2),
            "type": "response_item",
            "payload": {"type": "custom_tool_call", "call_id": "p", "name": "update_plan", "arguments": args},
        },
    ]
    path = tmp_path / "rollout-2026-11-20T09-00-00-0197aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    (s,) = sources.parse_file("codex", path, "picard").sessions
    p = plan.final(s.turns)
    assert p is not None and p.open() == ["(in progress) Build", "Ship"]


def test_claude_task_tools_are_replayed() -> None:
    turns = [
        call("TaskCreate", {"subject": DONE_ITEM, "activeForm": "Writing"}),
        call("TaskCreate", {"subject": NOW_ITEM, "activeForm": "Wiring"}),
        call("TaskCreate", {"subject": "Throwaway"}),
        call("TaskCreate", {"subject": NEXT_ITEM}),
        call("TaskUpdate", {"taskId": "1", "status": "completed"}),
        call("TaskUpdate", {"taskId": "2", "status": "in_progress"}),
        call("TaskUpdate", {"taskId": "3", "status": "deleted"}),
    ]
    p = plan.final(turns)
    assert p is not None
    assert p.open() == [f"(in progress) {NOW_ITEM}", NEXT_ITEM] and p.done() == [DONE_ITEM]


def test_cursor_todo_write_merges_by_id() -> None:
    first = {
        "todos": [
            {"id": "1", "content": "A", "status": "pending"},
            {"id": "2", "content": "B", "status": "pending"},
        ]
    }
    second = {"merge": True, "todos": [{"id": "1", "content": "A", "status": "completed"}]}
    p = plan.final([call("todo_write", first), call("todo_write", second)])
    assert p is not None and p.open() == ["B"] and p.done() == ["A"]


# --- end to end: Claude Code, Codex, Copilot CLI ---------------------------------------------------------
def _claude(root: Path) -> None:
    recs: list[dict[str, Any]] = []

    def u(i: int, content: Any) -> None:
        recs.append(
            {
                "type": "user",
                "uuid": f"u{i}",
                "sessionId": "c-1",
                "timestamp": ts(i),
                "message": {"role": "user", "content": content},
            }
        )

    def a(i: int, blocks: list[dict[str, Any]]) -> None:
        recs.append(
            {
                "type": "assistant",
                "uuid": f"a{i}",
                "sessionId": "c-1",
                "timestamp": ts(i),
                "message": {"role": "assistant", "id": f"m{i}", "content": blocks},
            }
        )

    first = [
        {"content": DONE_ITEM, "status": "in_progress", "activeForm": "Writing"},
        {"content": NOW_ITEM, "status": "pending", "activeForm": "Wiring"},
        {"content": NEXT_ITEM, "status": "pending", "activeForm": "Partitioning"},
    ]
    last = [dict(first[0], status="completed"), dict(first[1], status="in_progress"), first[2]]
    u(0, "Add Parquet export to `tally export ledger` (#300)")
    a(1, [{"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": first}}])
    u(2, [{"type": "tool_result", "tool_use_id": "t1", "content": "Todos have been modified successfully."}])
    a(3, [{"type": "tool_use", "id": "t2", "name": "TodoWrite", "input": {"todos": last}}])
    u(4, [{"type": "tool_result", "tool_use_id": "t2", "content": "Todos have been modified successfully."}])
    u(5, "looks good so far")
    a(6, [{"type": "text", "text": "The writer is in place and its unit tests pass."}])
    path = root / "t/claude/-repo/c-1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


def _codex(root: Path) -> None:
    steps = [
        {"step": DONE_ITEM, "status": "completed"},
        {"step": NOW_ITEM, "status": "in_progress"},
        {"step": NEXT_ITEM, "status": "pending"},
    ]
    recs = [
        {
            "timestamp": ts(0),
            "type": "session_meta",
            "payload": {"id": "x-1", "cwd": "/repo", "originator": "codex_cli"},
        },
        {
            "timestamp": ts(1),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Add Parquet export to `tally export ledger` (#300)"}
                ],
            },
        },
        {
            "timestamp": ts(2),
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "update_plan",
                "arguments": json.dumps({"plan": steps}),
                "call_id": "c1",
            },
        },
        {
            "timestamp": ts(3),
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c1", "output": "Plan updated"},
        },
        {
            "timestamp": ts(4),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "lgtm"}],
            },
        },
        {
            "timestamp": ts(5),
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "The writer is in place and its unit tests pass."}
                ],
            },
        },
    ]
    path = root / "t/codex/2026/11/20/rollout-2026-11-20T09-00-00-0197aaaa-bbbb-cccc-dddd-eeeeeeeeeeee.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


def _copilot(root: Path) -> None:
    def q(s: str) -> str:
        return s.replace("'", "''")

    insert = (
        f"INSERT INTO todos (id, title, status) VALUES ('w', '{q(DONE_ITEM)}', 'pending'), "
        f"('c', '{q(NOW_ITEM)}', 'pending'), ('p', '{q(NEXT_ITEM)}', 'pending');"
    )
    steps: list[tuple[str, dict[str, Any]]] = [
        ("session.start", {"sessionId": "k-1"}),
        ("user.message", {"content": "Add Parquet export to `tally export ledger` (#300)"}),
        (
            "tool.execution_start",
            {"toolCallId": "q1", "toolName": "sql", "arguments": {"description": "plan", "query": insert}},
        ),
        ("tool.execution_complete", {"toolCallId": "q1", "result": {"content": "3 rows"}}),
        (
            "tool.execution_start",
            {
                "toolCallId": "q2",
                "toolName": "sql",
                "arguments": {
                    "query": "UPDATE todos SET status = 'done' WHERE id = 'w'; UPDATE todos SET status = 'in_progress' WHERE id = 'c'"
                },
            },
        ),
        ("tool.execution_complete", {"toolCallId": "q2", "result": {"content": "ok"}}),
        ("user.message", {"content": "ok, do it"}),
        ("assistant.message", {"content": "The writer is in place and its unit tests pass."}),
    ]
    path = root / "t/copilot/k-1/events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    events = [
        {"type": k, "id": f"e{i}", "timestamp": ts(i), "parentId": None, "data": d}
        for i, (k, d) in enumerate(steps)
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


KINDS = {"claude": ("claude", _claude), "codex": ("codex", _codex), "copilot": ("copilot", _copilot)}


def _run(root: Path, kind: str, *, quiet: int) -> Layout:
    (root / ".squad/memory").mkdir(parents=True, exist_ok=True)
    KINDS[kind][1](root)
    cfg = config_mod.from_dict(
        {
            "root": str(root),
            "session": {"quiet_seconds": quiet},
            "compress": {"backend": "extractive"},
            "log": {"format": "json", "level": "error"},
            "sources": [
                {
                    "kind": kind,
                    "path": str(root / "t" / kind),
                    "agent": "picard",
                    **({"workspace": "*"} if kind in ("codex", "copilot") else {}),
                }
            ],
        }
    )
    scribe = Scribe(cfg)
    try:
        rep = scribe.run_once()
    finally:
        scribe.close()
    assert rep.failed == 0
    return Layout(root)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_finished_sessions_plan_is_in_open_items_seed_and_context(tmp_path: Path, kind: str) -> None:
    layout = _run(tmp_path, kind, quiet=0)
    _, (entry,) = cold.split_entries(layout.cold_file("picard").read_text())
    sec = cold.sections(entry.text)
    assert sec["open_items"] == [f"(in progress) {NOW_ITEM}", NEXT_ITEM]
    assert sec["progress"] == [DONE_ITEM], "the completed item is progress"
    assert not any(DONE_ITEM in x for x in sec["open_items"]), "a completed item is not open"
    hot = layout.hot_file("picard").read_text()
    spawn = context.build(layout, "picard").text
    for text in (hot, spawn):
        task = text.split("Current task:")[1].split("Active decisions:")[0]
        assert f"- (in progress) {NOW_ITEM}\n" in task and f"- {NEXT_ITEM}\n" in task
        assert DONE_ITEM not in task
    assert len(hot.encode()) <= 4096


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_live_sessions_hot_file_shows_the_plan(tmp_path: Path, kind: str) -> None:
    layout = _run(tmp_path, kind, quiet=3600)
    hot = layout.hot_file("picard").read_text()
    assert "scribed-live: " in hot and "seed:" not in hot.split("---")[1]
    assert "Current task: Add Parquet export to `tally export ledger` (#300)\n" in hot, "not the go-ahead"
    assert f"Plan: 1 of 3 done\n- in progress: {NOW_ITEM}\n- next: {NEXT_ITEM}\n" in hot
    assert len(hot.encode()) <= 4096
