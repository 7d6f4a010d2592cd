"""Live hot files: rendering, the write rules (marker, agent-written, symlink, debounce), and the
hand-over to cold when the transcript session ends, through the real pipeline."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scribed import config
from scribed.core.scribe import Scribe
from scribed.models import Session, Turn
from scribed.session.door import redact_session
from scribed.sources.markdown import front_matter, split_lines
from scribed.tiers import live
from scribed.tiers.cold import Layout

SECRET = "ghp_R7t2Kq9LmX4vB8nC1zD5wF3hJ6pS0aY2uE8i"
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


class FakeLog:
    """Records log calls the way the pipeline's structlog logger is called."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def _rec(self, level: str, event: str, **kw: Any) -> None:
        self.calls.append((level, event, kw))

    def warning(self, event: str, **kw: Any) -> None:
        self._rec("warning", event, **kw)

    def info(self, event: str, **kw: Any) -> None:
        self._rec("info", event, **kw)

    def events(self, level: str) -> list[str]:
        return [e for lv, e, _ in self.calls if lv == level]


def t(role: str, text: str, i: int, kind: str = "message", tool: str | None = None) -> Turn:
    return Turn(role, text, kind, T0 + timedelta(minutes=i), i + 1, (i + 1) * 100, tool)  # type: ignore[arg-type]


def session(turns: list[Turn], agent: str = "picard", sid: str = "s-1", src: Path | None = None) -> Session:
    return Session(
        agent=agent, session_id=sid, source=src or Path("/x/events.jsonl"), kind="copilot", turns=turns
    )


def busy_session(src: Path | None = None) -> Session:
    return session(
        [
            t("user", "Look at the login page", 0),
            t("assistant", "Decision: retry the login test with freeze_time() instead of sleeping.", 1),
            t("user", f"Fix the flaky login test (#590); the token {SECRET} leaked, rotate it", 2),
            t("assistant", "Revised decision: use an injected clock instead of freeze_time()", 3),
            t(
                "assistant",
                'task {"agent_type": "troi", "prompt": "review docs/auth.md"}',
                4,
                "tool_call",
                "task",
            ),
            t("assistant", "bash pytest tests/test_login.py -k flaky", 5, "tool_call", "bash"),
            t(
                "tool",
                "FAILED tests/test_login.py::test_expiry - AssertionError: expected 900s",
                6,
                "tool_result",
                "bash",
            ),
            t("assistant", "Fixed the expiry check; all login tests pass.", 7),
            t("assistant", "bash pytest tests/test_api.py", 8, "tool_call", "bash"),
            t("tool", "error: ConnectionError: database is locked", 9, "tool_result", "bash"),
        ],
        src=src,
    )


def fields_of(text: str) -> dict[str, str]:
    return front_matter(split_lines(text.encode()))[0]


# --- rendering ----------------------------------------------------------------------------------
def test_render_live_fields_and_marker() -> None:
    text = live.render_live(redact_session(busy_session()), "copilot", talking_to=["worf"])
    fm = fields_of(text)
    assert fm["scribed-live"] == "copilot:s-1"
    assert fm["source"] == "/x/events.jsonl"
    assert fm["updated"] == "2026-11-20T09:09:00Z"
    assert "Current task: Fix the flaky login test (#590)" in text
    assert SECRET not in text and "[REDACTED_SECRET]" in text
    decisions = text.split("Active decisions:")[1].split("Last actions:")[0]
    assert "use an injected clock instead of freeze_time()" in decisions
    assert "retry the login test" not in decisions, "a reversed decision is not active"
    actions = text.split("Last actions:")[1].split("Blockers:")[0].strip().splitlines()
    assert 3 <= len(actions) <= 5
    assert "pytest tests/test_api.py" in actions[0], "most recent first"
    blockers = text.split("Blockers:")[1].split("Talking to:")[0]
    assert "database is locked" in blockers
    assert "AssertionError" not in blockers, "an error followed by a fix is not a blocker"
    talking = text.split("Talking to:")[1]
    assert "user" in talking and "worf" in talking and "troi" in talking
    assert len(text.encode()) <= 4096


def test_last_actions_are_distinct_and_name_something() -> None:
    """Issue 30: the same line listed twice, and "That looks fine." as an action."""
    s = session(
        [
            t("user", "Rename the export flag to --since and update the docs", 0),
            t("assistant", "bash rg -n since_date src/", 1, "tool_call", "bash"),
            t("assistant", "Renaming `--since-date` to `--since` in src/cli.py and docs/export.md.", 2),
            t("assistant", "bash pytest -q tests/test_cli.py", 3, "tool_call", "bash"),
            t("assistant", "That looks fine.", 4),
            t("assistant", "bash pytest -q tests/test_cli.py", 5, "tool_call", "bash"),
            t("assistant", "Okay, moving on to the next file.", 6),
            t("assistant", "bash pytest -q tests/test_cli.py", 7, "tool_call", "bash"),
        ]
    )
    text = live.render_live(redact_session(s), "copilot")
    actions = text.split("Last actions:")[1].split("Blockers:")[0].strip().splitlines()
    bodies = [a.split(" ", 2)[-1] for a in actions]  # without "- HH:MM "
    assert len(bodies) == len(set(bodies)), actions
    assert not any("looks fine" in a or "moving on" in a for a in actions), actions
    assert "pytest -q tests/test_cli.py" in actions[0] and "09:07" in actions[0], actions
    assert any("`--since`" in a for a in actions) and any("rg -n since_date" in a for a in actions), actions


def test_render_live_is_stable_and_clock_free() -> None:
    s = busy_session()
    assert live.render_live(redact_session(s), "copilot") == live.render_live(redact_session(s), "copilot")


def test_render_live_trims_oldest_first_to_4k() -> None:
    turns = [t("user", "first request " + "x" * 50, 0)]
    for i in range(1, 40):
        turns.append(t("assistant", f"Decision: option {i:02d} " + "because " * 30, i))
        turns.append(t("assistant", f"bash make step-{i:02d} " + "y" * 280, 100 + i, "tool_call", "bash"))
    turns.append(t("user", "Ship release 2.0 " + "z" * 2000, 500))
    text = live.render_live(redact_session(session(turns)), "codex")
    assert len(text.encode()) <= 4096
    assert "option 39" in text, "the newest decision is kept"
    assert "option 01" not in text, "the oldest decisions go first"
    assert "step-39" in text and "step-30" not in text
    assert "Current task: Ship release 2.0" in text
    assert fields_of(text)["scribed-live"] == "codex:s-1"


def test_blocker_after_fix_stays_open() -> None:
    s = session(
        [
            t("tool", "error: KeyError: 'a'", 0, "tool_result"),
            t("assistant", "Resolved it.", 1),
            t("tool", "Traceback ...\nValueError: bad literal for int()", 2, "tool_result"),
        ]
    )
    blockers = live.render_live(redact_session(s), "claude").split("Blockers:")[1].split("Talking to:")[0]
    assert "ValueError: bad literal" in blockers and "KeyError" not in blockers


def test_empty_lists_say_none() -> None:
    text = live.render_live(redact_session(session([t("user", "hello there", 0)])), "copilot")
    assert "Active decisions: (none)" in text and "Blockers: (none)" in text
    assert "Talking to: user" in text


def task_of(s: Session) -> str:
    return live.render_live(redact_session(s), "copilot").split("Current task: ")[1].split("\n")[0]


@pytest.mark.parametrize(
    "nudge",
    ["continue", "ok, go on", "yes", "Thanks!", "hello there", "/compact", "great job", "Sounds good to me"],
)
def test_current_task_is_the_substantive_request_not_the_last_nudge(nudge: str) -> None:
    turns = [
        t("user", "hi", 0),
        t("user", "Port the CSV exporter to streaming writes (#812)", 1),
        t("assistant", "On it: starting with src/export/csv.py.", 2),
        t("user", nudge, 3),
        t("assistant", "Done with the first half.", 4),
    ]
    assert task_of(session(turns)) == "Port the CSV exporter to streaming writes (#812)"


def test_current_task_follows_a_pivot_and_short_requests_count() -> None:
    turns = [
        t("user", "Port the CSV exporter to streaming writes", 0),
        t("user", "continue", 1),
        t("user", "Stop that: profile the nightly job instead", 2),
        t("user", "yes", 3),
    ]
    assert task_of(session(turns)) == "Profile the nightly job instead", "the request, not the stop word"
    turns.append(t("user", "fix #590", 4))
    turns.append(t("user", "ok", 5))
    assert task_of(session(turns)) == "fix #590"
    assert task_of(session([t("user", "continue", 0)])) == "(not stated yet)"


# --- the write rules ------------------------------------------------------------------------------
def test_refresh_writes_once_then_only_on_change(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    log = FakeLog()
    s = busy_session()
    assert live.refresh(layout, redact_session(s), "copilot", log) is True
    hot = layout.hot_file("picard")
    assert hot.stat().st_mode & 0o777 == 0o600
    before = hot.stat().st_mtime_ns
    time.sleep(0.01)
    assert live.refresh(layout, redact_session(s), "copilot", log) is False
    assert hot.stat().st_mtime_ns == before, "unchanged content is not rewritten"
    s.turns.append(t("user", "Now update the changelog", 20))
    assert live.refresh(layout, redact_session(s), "copilot", log) is True
    assert "Current task: Now update the changelog" in hot.read_text()


def test_refresh_never_overwrites_agent_written_hot(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    hot = layout.hot_file("picard")
    hot.parent.mkdir(parents=True)
    mine = "# Hot memory: picard\n\nCurrent task: my own notes\n"
    hot.write_text(mine)
    log = FakeLog()
    s = busy_session()
    assert live.refresh(layout, redact_session(s), "copilot", log) is False
    s.turns.append(t("user", "another request", 30))
    assert live.refresh(layout, redact_session(s), "copilot", log) is False
    assert hot.read_text() == mine
    assert log.events("warning") == ["hot_agent_written"], "warned once, not on every change"


def test_refresh_replaces_blank_template_and_clear_restores_it(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    hot = layout.hot_file("picard")
    hot.parent.mkdir(parents=True)
    hot.write_text(live.TEMPLATE.format(agent="picard"))
    s = busy_session()
    assert live.refresh(layout, redact_session(s), "copilot", FakeLog()) is True
    assert fields_of(hot.read_text())["scribed-live"] == "copilot:s-1"
    assert live.clear(layout, "picard", "copilot", "other-session") is False
    assert live.clear(layout, "picard", "claude", "s-1") is False
    assert "scribed-live" in hot.read_text()
    assert live.clear(layout, "picard", "copilot", "s-1") is True
    assert hot.read_text() == live.TEMPLATE.format(agent="picard")
    assert live.clear(layout, "picard", "copilot", "s-1") is False, "nothing of ours left to clear"


def test_live_file_edited_by_hand_is_the_agents(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    log = FakeLog()
    s = busy_session()
    assert live.refresh(layout, redact_session(s), "copilot", log) is True
    hot = layout.hot_file("picard")
    edited = hot.read_text() + "My own note: ask worf about the gate.\n"  # front matter kept
    hot.write_text(edited)
    s.turns.append(t("user", "Now update the changelog", 20))
    assert live.refresh(layout, redact_session(s), "copilot", log) is False
    assert live.clear(layout, "picard", "copilot", "s-1") is False
    assert hot.read_text() == edited
    assert log.events("warning") == ["hot_agent_written"]


def test_clear_leaves_agent_written_hot_alone(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    hot = layout.hot_file("picard")
    hot.parent.mkdir(parents=True)
    hot.write_text("Current task: agent's own\n")
    assert live.clear(layout, "picard", "copilot", "s-1") is False
    assert hot.read_text() == "Current task: agent's own\n"
    assert live.clear(layout, "nobody", "copilot", "s-1") is False
    assert live.clear(layout, "../etc", "copilot", "s-1") is False


def test_symlinked_hot_is_never_written(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "root")
    target = tmp_path / "elsewhere.md"
    target.write_text("not yours\n")
    layout.hot.mkdir(parents=True)
    layout.hot_file("picard").symlink_to(target)
    log = FakeLog()
    assert live.refresh(layout, redact_session(busy_session()), "copilot", log) is False
    assert target.read_text() == "not yours\n"
    assert log.events("warning") == ["hot_symlink_not_written"]
    # even a symlink to a file carrying our marker is not cleared
    target.write_text("---\nscribed-live: copilot:s-1\n---\n")
    assert live.clear(layout, "picard", "copilot", "s-1") is False
    assert target.read_text().startswith("---\nscribed-live")


def test_newer_live_session_of_the_same_agent_wins(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    newer = busy_session()
    older = session([t("user", "old work", -600)], sid="s-0")
    assert live.refresh(layout, redact_session(newer), "copilot", FakeLog()) is True
    assert live.refresh(layout, redact_session(older), "copilot", FakeLog()) is False
    assert fields_of(layout.hot_file("picard").read_text())["scribed-live"] == "copilot:s-1"


# --- through the pipeline ---------------------------------------------------------------------------
def write_copilot(path: Path, sid: str, steps: list[tuple[str, dict[str, Any]]], *, start: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    ev = [{"type": "session.start", "id": "e0", "timestamp": start.isoformat(), "data": {"sessionId": sid}}]
    for i, (kind, data) in enumerate(steps, start=1):
        ts = (start + timedelta(seconds=30 * i)).isoformat().replace("+00:00", "Z")
        ev.append({"type": kind, "id": f"e{i}", "timestamp": ts, "data": data})
    path.write_text("".join(json.dumps(e) + "\n" for e in ev))


def append_shutdown(path: Path) -> None:
    with path.open("a") as fh:
        fh.write(
            json.dumps({"type": "session.shutdown", "id": "end", "data": {"shutdownType": "routine"}}) + "\n"
        )


LIVE_STEPS: list[tuple[str, dict[str, Any]]] = [
    ("user.message", {"content": "Migrate the billing webhooks to the v2 API"}),
    ("assistant.message", {"content": "Decision: keep the v1 endpoint behind a flag until March."}),
    ("tool.execution_start", {"toolName": "bash", "toolCallId": "c1", "arguments": {"command": "pytest -q"}}),
    (
        "tool.execution_complete",
        {"toolCallId": "c1", "result": {"content": "FAILED test_hook - KeyError: 'sig'"}},
    ),
    ("subagent.started", {"agentName": "worf", "agentId": "a1"}),
]


def make_scribe(root: Path, **kw: Any) -> Scribe:
    cfg = config.from_dict(
        {
            "root": str(root),
            "compress": {"backend": "extractive"},
            "sources": [
                {"kind": "copilot", "path": str(root / "transcripts"), "agent": "picard", "workspace": "*"}
            ],
        }
    )
    return Scribe(cfg, **kw)


@pytest.fixture
def live_root(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "squad"
    (root / ".squad/memory").mkdir(parents=True)
    events = root / "transcripts/live-1/events.jsonl"
    write_copilot(events, "live-1", LIVE_STEPS, start=datetime.now(UTC) - timedelta(minutes=5))
    return root, events


def run(scribe: Scribe) -> Any:
    try:
        return scribe.run_once()
    finally:
        scribe.close()


def test_pipeline_refreshes_live_hot_and_hands_over_to_cold(live_root: tuple[Path, Path]) -> None:
    root, events = live_root
    layout = Layout(root)
    hot = layout.hot_file("picard")

    report = run(make_scribe(root))
    assert report.compacted == 0, "a running session is not compacted"
    text = hot.read_text()
    assert fields_of(text)["scribed-live"] == "copilot:live-1"
    assert "Current task: Migrate the billing webhooks to the v2 API" in text
    assert "KeyError" in text.split("Blockers:")[1]
    assert not layout.cold_file("picard").exists()

    # a second run on the unchanged transcript does not rewrite the file, and never compacts it
    before = hot.stat().st_mtime_ns
    report = run(make_scribe(root))
    assert report.compacted == 0 and hot.stat().st_mtime_ns == before

    # the transcript grows: the hot file follows
    lines = events.read_text()
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    extra = {"type": "user.message", "id": "e9", "timestamp": now, "data": {"content": "Also add retries"}}
    events.write_text(lines + json.dumps(extra) + "\n")
    run(make_scribe(root))
    assert "Current task: Also add retries" in hot.read_text()

    # the session ends: compacted into cold, live hot re-seeded from the entry for the next spawn
    append_shutdown(events)
    report = run(make_scribe(root))
    assert [e.agent for e in report.entries] == ["picard"]
    seed = hot.read_text()
    assert fields_of(seed)["scribed-live"] == "seed:copilot:live-1"
    assert f"cold entry: .squad/memory/cold/picard.md (id {report.entries[0].entry_id})" in seed
    assert "keep the v1 endpoint behind a flag until March" in seed.split("Active decisions:")[1]
    assert "session ended: Migrate the billing webhooks to the v2 API" in seed
    assert "Also add retries" not in seed.split("Current task:")[1].split("Active decisions:")[0]
    assert "(no session running" in seed and len(seed.encode()) <= 4096
    cold_text = layout.cold_file("picard").read_text()
    assert "keep the v1 endpoint behind a flag until March" in cold_text
    assert "scribed-live" not in cold_text


def test_pipeline_keeps_agent_written_hot(live_root: tuple[Path, Path]) -> None:
    root, events = live_root
    hot = Layout(root).hot_file("picard")
    hot.parent.mkdir(parents=True)
    mine = "# Hot memory: picard\n\nCurrent task: hand-written by the agent\n"
    hot.write_text(mine)
    run(make_scribe(root))
    assert hot.read_text() == mine
    append_shutdown(events)
    run(make_scribe(root))
    assert hot.read_text() == mine, "clearing never touches an agent-written hot file"


def test_pipeline_skips_symlinked_hot(live_root: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = live_root
    target = tmp_path / "target.md"
    target.write_text("")
    hot = Layout(root).hot_file("picard")
    hot.parent.mkdir(parents=True)
    hot.symlink_to(target)
    run(make_scribe(root))
    assert target.read_text() == "" and hot.is_symlink()


def test_dry_run_writes_no_live_hot(live_root: tuple[Path, Path]) -> None:
    root, _ = live_root
    run(make_scribe(root, dry_run=True))
    assert not Layout(root).hot_file("picard").exists()


def test_quiet_session_is_compacted_not_made_live(tmp_path: Path) -> None:
    root = tmp_path / "squad"
    (root / ".squad/memory").mkdir(parents=True)
    events = root / "transcripts/old-1/events.jsonl"
    write_copilot(events, "old-1", LIVE_STEPS[:2], start=T0)
    old = (T0 + timedelta(minutes=5)).timestamp()
    os.utime(events, (old, old))
    report = run(make_scribe(root))
    assert report.compacted == 1
    seed = Layout(root).hot_file("picard").read_text()
    assert fields_of(seed)["scribed-live"] == "seed:copilot:old-1", "never live, but seeded at its end"
    assert "Migrate the billing webhooks" in seed


def test_pipeline_live_sub_agent_gets_its_own_hot(tmp_path: Path) -> None:
    root = tmp_path / "squad"
    (root / ".squad/memory").mkdir(parents=True)
    events = root / "transcripts/live-2/events.jsonl"
    write_copilot(events, "live-2", LIVE_STEPS, start=datetime.now(UTC) - timedelta(minutes=5))
    sub = {
        "type": "assistant.message",
        "id": "s1",
        "agentId": "a1",
        "timestamp": datetime.now(UTC).isoformat(),
        "data": {"content": "Decision: audit the webhook signatures first."},
    }
    with events.open("a") as fh:
        fh.write(json.dumps(sub) + "\n")
    run(make_scribe(root))
    layout = Layout(root)
    main_hot = layout.hot_file("picard").read_text()
    worf_hot = layout.hot_file("worf").read_text()
    assert "Talking to: user, worf" in main_hot
    assert fields_of(worf_hot)["scribed-live"] == "copilot:live-2/worf"
    assert "audit the webhook signatures first" in worf_hot
    assert "Talking to: coordinator (parent session), picard" in worf_hot
    append_shutdown(events)
    run(make_scribe(root))
    assert fields_of(layout.hot_file("worf").read_text())["scribed-live"] == "seed:copilot:live-2/worf"
    assert "audit the webhook signatures first" in layout.hot_file("worf").read_text()
    assert fields_of(layout.hot_file("picard").read_text())["scribed-live"] == "seed:copilot:live-2"


@pytest.mark.parametrize(
    ("said", "open_"),
    [
        ("I'll rerun the tests to check they pass.", True),
        ("The fix did not work, the test still fails.", True),
        ("Is it fixed?", True),
        ("This should be fixed by the retry change.", True),
        ("Let me look at why it fails.", True),
        ("I added debug logging around the date parser.", True),  # a change that may fix it
        ("I changed the log level to DEBUG to see more.", True),
        ("Nothing fixed it.", True),
        ("Neither change fixed the crash.", True),
        ("Fixed: the parser now validates dates.", False),
        ("Fixed the failing test by pinning numpy to 1.26.", False),
        ("Now the test passes.", False),
        ("Resolved it.", False),
    ],
)
def test_a_blocker_ends_at_a_fix_said_not_at_a_fix_word(said: str, open_: bool) -> None:
    """The live view's blockers ended at any fix word: "the fix did not work" and "I'll check
    they pass" emptied them while the test still failed."""
    s = session(
        [
            t("user", "fix the date test", 0),
            t("tool", "FAILED tests/test_parser.py::test_dates - ValueError: invalid date", 1, "tool_result"),
            t("assistant", said, 2),
        ]
    )
    blockers = live.render_live(redact_session(s), "claude").split("Blockers:")[1].split("Talking to:")[0]
    assert ("test_dates" in blockers) == open_, blockers
