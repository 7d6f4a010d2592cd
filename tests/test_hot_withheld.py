"""A seeded hot file edited by hand is kept (never destroy a person's words), but the seeds it
holds back are said: a warning when a finished session's seed is withheld, and `doctor` and
`status` name the file, the entry it lacks and what to do (the tester's D3: silent until now)."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli
from test_hot_reseed import T0, Log, entry_text, live_session, write_cold

from scribed.session.door import redact_session
from scribed.tiers import hot_seed, live
from scribed.tiers.cold import Layout

EDIT = ("Talking to: (none)", "Talking to: worf (use redis after all: human, 2026-12-07)")


def _edited_seed(tmp_path: Path) -> Layout:
    """picard's seed of s-1, edited by hand; then s-2's entry is written after it."""
    layout = Layout(tmp_path)
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z", eid="e-00000000000b"))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log())
    hot = layout.hot_file("picard")
    hot.write_text(hot.read_text().replace(*EDIT))
    write_cold(
        layout,
        entry_text("s-1", "2026-11-20T10:00:00Z", eid="e-00000000000b"),
        entry_text("s-2", "2026-11-25T10:00:00Z", eid="e-00000000000c"),
    )
    return layout


def test_a_withheld_seed_is_a_warning_naming_the_file_the_entry_and_what_to_do(tmp_path: Path) -> None:
    layout = _edited_seed(tmp_path)
    hot = layout.hot_file("picard")
    edited = hot.read_text()
    log = Log()
    assert hot_seed.reseed(layout, "picard", "copilot", "s-2", log) is False
    assert hot.read_text() == edited  # the person's words stay
    ((level, event, kw),) = log.calls
    assert (level, event) == ("warning", "hot_seed_withheld")
    assert kw["file"] == str(hot) and kw["agent"] == "picard" and kw["entry"] == "e-00000000000c"
    assert kw["reason"] == "edited since scribed seeded it"
    assert "delete" in kw["action"] and "wiki" in kw["action"]
    # the same entry again (a team sync re-seeds too): said once
    assert hot_seed.reseed(layout, "picard", "copilot", "s-2", log) is False
    assert len(log.calls) == 1


def test_no_warning_when_the_seed_would_not_have_been_written_anyway(tmp_path: Path) -> None:
    layout = _edited_seed(tmp_path)
    log = Log()
    # an older session's end never replaces a newer seed, edited or not
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", log) is False
    assert log.calls == []
    # an agent's own hot file (no marker) is compacted, then seeded: nothing is withheld
    layout.hot_file("picard").write_text("# Hot memory: picard\n\nCurrent task: my own notes\n")
    assert hot_seed.reseed(layout, "picard", "copilot", "s-2", log) is False
    assert log.calls == [] and hot_seed.withheld(layout) == []


def test_withheld_lists_edited_hot_files_missing_a_newer_entry(tmp_path: Path) -> None:
    layout = _edited_seed(tmp_path)
    (w,) = hot_seed.withheld(layout)
    assert (w.agent, w.file, w.shows, w.entry) == (
        "picard",
        ".squad/memory/hot/picard.md",
        "e-00000000000b",
        "e-00000000000c",
    )
    assert "edited since scribed seeded it" in w.line() and "e-00000000000c" in w.line()
    # an unedited seed, or an edited one that holds the newest entry, holds nothing back
    layout.hot_file("picard").unlink()
    assert hot_seed.reseed(layout, "picard", "copilot", "s-2", Log())
    assert hot_seed.withheld(layout) == []
    hot = layout.hot_file("picard")
    hot.write_text(hot.read_text().replace(*EDIT))
    assert hot_seed.withheld(layout) == []


def test_an_unreadable_cold_view_is_skipped_not_raised(tmp_path: Path) -> None:
    """``doctor``, ``status`` and ``run-once`` all list held-back files: one agent's unreadable cold
    view (here a folder where the file should be) must not stop them."""
    layout = _edited_seed(tmp_path)
    view = layout.cold_file("picard")
    view.unlink()
    view.mkdir()
    assert hot_seed.withheld(layout) == []


def test_the_warnings_said_are_one_per_hot_file(tmp_path: Path) -> None:
    """A daemon warns once per file and entry, remembering one entry per file: what it keeps stays
    as small as the number of hot files, however many sessions it compacts."""
    layout = _edited_seed(tmp_path)
    log = Log()
    assert hot_seed.reseed(layout, "picard", "copilot", "s-2", log) is False
    write_cold(
        layout,
        entry_text("s-1", "2026-11-20T10:00:00Z", eid="e-00000000000b"),
        entry_text("s-2", "2026-11-25T10:00:00Z", eid="e-00000000000c"),
        entry_text("s-3", "2026-11-28T10:00:00Z", eid="e-00000000000d"),
    )
    assert hot_seed.reseed(layout, "picard", "copilot", "s-3", log) is False
    assert [kw["entry"] for _, _, kw in log.calls] == ["e-00000000000c", "e-00000000000d"]
    assert sum(k == str(layout.hot_file("picard")) for k in hot_seed._said) == 1


def test_an_edited_hot_file_is_not_called_the_agents(tmp_path: Path) -> None:
    """M4: the warning of a live refresh said "hot file written by the agent" of a person's edit."""
    layout = _edited_seed(tmp_path)
    log = Log()
    red = redact_session(live_session("s-3", T0 + timedelta(days=7)))
    assert live.refresh(layout, red, "copilot", log) is False
    ((_, event, kw),) = log.calls
    assert event == "hot_agent_written"
    assert "agent" not in kw["reason"] and "edited since scribed seeded it" in kw["reason"]


# --- end to end: the tester's commands ------------------------------------------------------------
def _claude(path: Path, sid: str, cwd: Path, topic: str, day: str) -> None:
    """A four-record Claude Code session (the tester's mkclaude.py), two hours old."""

    def rec(i: int, typ: str, content: Any, ts: str) -> dict[str, Any]:
        return {
            "type": typ,
            "uuid": f"{sid}-{i}",
            "parentUuid": f"{sid}-{i - 1}" if i else None,
            "sessionId": sid,
            "timestamp": f"{day}T{ts}.000Z",
            "cwd": str(cwd),
            "gitBranch": "main",
            "message": {"role": typ, "content": content},
        }

    recs = [
        rec(0, "user", f"{topic}. See issue #77.", "09:00:00"),
        rec(
            1,
            "assistant",
            [
                {"type": "text", "text": f"Decision: use sqlite for the {topic} cache instead of redis."},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "pytest tests/test_x.py"},
                },
            ],
            "09:01:00",
        ),
        rec(
            2,
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "FAILED tests/test_x.py - ValueError: key",
                }
            ],
            "09:02:00",
        ),
        rec(
            3,
            "assistant",
            [
                {
                    "type": "text",
                    "text": f"Fixed the ValueError in src/cache.py. TODO: document the {topic} cache.",
                }
            ],
            "09:03:00",
        ),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    old = time.time() - 7200
    os.utime(path, (old, old))


def test_doctor_status_and_run_once_list_the_held_back_file(tmp_path: Path) -> None:
    """In-process, fast: the lines and the JSON keys (the real commands: the test below)."""
    from click.testing import CliRunner

    from scribed.cli.main import main

    layout = _edited_seed(tmp_path)
    (tmp_path / ".squad").mkdir(exist_ok=True)
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(f'root = "{tmp_path}"\n')
    runner = CliRunner()
    want = "hot file .squad/memory/hot/picard.md was edited since scribed seeded it"
    for cmd in (["doctor"], ["status"], ["run-once"]):
        res = runner.invoke(main, ["--config", str(cfg), *cmd])
        assert res.exit_code == 0, (cmd, res.output, res.stderr)
        assert (
            want in res.output
            and "e-00000000000c" in res.output
            and "(it shows e-00000000000b)" in res.output
        )
        res = runner.invoke(main, ["--config", str(cfg), *cmd, "--json"])
        (held,) = json.loads(res.stdout)["hot_withheld"]
        assert held == {
            "agent": "picard",
            "file": ".squad/memory/hot/picard.md",
            "shows": "e-00000000000b",
            "entry": "e-00000000000c",
            "reason": "edited since scribed seeded it",
        }
    assert "1 warning" in runner.invoke(main, ["--config", str(cfg), "doctor"]).output
    assert layout.hot_file("picard").read_text().count("worf (use redis after all") == 1


@pytest.mark.slow
def test_run_once_doctor_and_status_say_the_hot_file_is_held_back(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / ".squad").mkdir(parents=True)
    cfg = tmp_path / "h.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n'
        f'[[sources]]\nkind = "claude"\npath = "{tmp_path / "t"}"\nagent = "riker"\n'
    )
    _claude(
        tmp_path / "t/-p/a1.jsonl",
        "a1000000-0000-0000-0000-000000000001",
        root,
        "Add login rate limit",
        "2026-11-20",
    )
    assert run_cli("--config", str(cfg), "run-once").returncode == 0
    hot = root / ".squad/memory/hot/riker.md"
    text = hot.read_text()
    assert "use sqlite for the Add login rate limit cache" in text
    hot.write_text(
        text.replace("use sqlite for the Add login rate limit cache instead of redis", "use redis after all")
    )
    _claude(
        tmp_path / "t/-p/a2.jsonl",
        "a2000000-0000-0000-0000-000000000002",
        root,
        "Ship audit log export",
        "2026-11-25",
    )

    p = run_cli("--config", str(cfg), "run-once")
    assert p.returncode == 0, p.stderr.decode()
    events = [json.loads(line) for line in p.stderr.decode().splitlines() if line.startswith("{")]
    (w,) = [e for e in events if e["event"] == "hot_seed_withheld"]
    assert w["level"] == "warning" and w["file"] == str(hot) and w["agent"] == "riker"
    new_entry = w["entry"]
    assert new_entry in (root / ".squad/memory/cold/riker.md").read_text()
    assert "use redis after all" in hot.read_text()  # kept
    out = p.stdout.decode()
    assert "hot file .squad/memory/hot/riker.md was edited since scribed seeded it" in out
    assert new_entry in out

    p = run_cli("--config", str(cfg), "doctor")
    out = p.stdout.decode()
    assert p.returncode == 0 and "no warnings" not in out, out
    assert "hot/riker.md" in out and new_entry in out and "1 warning" in out
    p = run_cli("--config", str(cfg), "doctor", "--json")
    (held,) = json.loads(p.stdout)["hot_withheld"]
    assert held["entry"] == new_entry and held["agent"] == "riker"

    p = run_cli("--config", str(cfg), "status")
    out = p.stdout.decode()
    assert p.returncode == 0 and "hot/riker.md" in out and new_entry in out, out
    p = run_cli("--config", str(cfg), "status", "--json")
    assert json.loads(p.stdout)["hot_withheld"][0]["entry"] == new_entry

    # the remedy works: the file deleted, the next session's seed is written again
    hot.unlink()
    _claude(
        tmp_path / "t/-p/a3.jsonl",
        "a3000000-0000-0000-0000-000000000003",
        root,
        "Rotate the keys",
        "2026-11-27",
    )
    assert run_cli("--config", str(cfg), "run-once").returncode == 0
    assert "Rotate the keys" in hot.read_text()
    assert "hot/riker.md" not in run_cli("--config", str(cfg), "doctor").stdout.decode()
