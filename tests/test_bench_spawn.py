"""bench/spawn_sees.py (issue 30 part 7): what the default spawn context holds, per session."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gen  # noqa: E402
import spawn_sees  # noqa: E402


def test_the_spawn_after_a_planned_session_holds_its_outcome_open_items_plan_and_task() -> None:
    claude = next(s for s in gen.iter_sessions(1, 4, min_kb=4, max_kb=20) if s.fmt == "claude")
    row = spawn_sees.measure(claude, True, ("keaton", "## Learnings\n- nothing about this session\n"))
    after, live, squad = row["after"], row["live"], row["squad"]
    assert after["outcome"] == (1, 1) and after["plan_open"] == (2, 2), row
    assert after["open_items"][0] == after["open_items"][1] >= 1, row
    assert live["task"] == (1, 1) and live["plan_now"] == (1, 1), row
    assert 0 < after["bytes"] <= 4096 + 200, row  # the hot file's 4 KB and the block's markers
    assert squad["outcome"] == (0, 1) and squad["bytes"] > 0, row


def test_a_plan_is_inserted_after_the_request_and_read_back(tmp_path: Path) -> None:
    from scribed.compress import plan
    from scribed.sources import parse_file

    s = next(s for s in gen.iter_sessions(1, 4, min_kb=4, max_kb=20) if s.fmt == "claude")
    path = tmp_path / "s.jsonl"
    path.write_bytes(spawn_sees.with_plan(s.data, s.id))
    (sess,) = parse_file("claude", path, "worf").sessions
    final = plan.final(sess.turns)
    assert final is not None and len(final.done()) == 1
