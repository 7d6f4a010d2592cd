"""Progress on long work (issue 32, part 4).

The daemon's first catch-up logs where it stands (files and bytes done and left, an ETA) at least
every 10 s and ``status`` shows it; the TTY bars count bytes; ``--json`` output holds no progress.
"""

from __future__ import annotations

import io
import itertools
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli
from test_daemon import FakeClock, codex_records, make_daemon
from test_progress import backlog, run_on_tty

from scribed import log as log_mod
from scribed.progress import Tracker, describe


@pytest.fixture
def squad(tmp_path: Path) -> tuple[Path, Path]:
    root, src = tmp_path / "root", tmp_path / "sessions"
    root.mkdir()
    src.mkdir()
    return root, src


def test_tracker_eta_is_the_bytes_rate() -> None:
    now = [100.0]
    t = Tracker(4, 4000, clock=lambda: now[0])
    assert t.eta_seconds() is None and not t.due()
    now[0] += 10
    t.add(1000)
    assert t.eta_seconds() == 30.0  # 1000 bytes in 10 s, 3000 left
    assert t.due() and not t.due()  # counts from the time it said yes
    p = t.public()
    assert (p["done"], p["left"], p["bytes_done"], p["bytes_left"], p["eta_s"]) == (1, 3, 1000, 3000, 30.0)
    assert describe(p) == "1 of 4 files, 0.0 of 0.0 MB, about 30 s left"


@pytest.mark.slow  # a real-client tier: `python -m pytest -m slow`, run by CI
def test_a_catch_up_over_200_files_logs_progress_with_an_eta_every_10_s(
    tmp_path: Path, squad: tuple[Path, Path]
) -> None:
    """200 queued files, each taking 3 s of an injected clock to compact, the main loop ticking
    every 5 s as the daemon's does: a progress line at least every 10 s of that clock, each with
    the files and bytes done and left and an ETA; the heartbeat (what ``status`` reads) has it."""
    clock = FakeClock(datetime(2026, 11, 20, 12, tzinfo=UTC))
    d = make_daemon(tmp_path, squad, clock, quiet=0)
    root, src = squad
    for i in range(200):
        f = src / f"rollout-{i:03d}.jsonl"
        f.write_text(
            codex_records(
                f"s{i}", datetime(2026, 11, 1, tzinfo=UTC), [("user", f"fix bug {i} in src/m{i}.py")]
            )
        )
    w = d.dispatch
    now = [0.0]
    w.monotonic = lambda: now[0]
    logs: list[dict[str, Any]] = []

    class Recorder:
        def __getattr__(self, _level: str) -> Any:
            return lambda event, **kw: logs.append({"event": event, **kw})

    w.log = Recorder()  # type: ignore[assignment]
    try:
        assert w.catch_up() == 200
        beats = []
        for k in range(200):
            path = w.queue.take(0.1)
            assert path is not None
            w.work(path)
            w._caught(path)
            for _ in range(3):  # three seconds per file; the main loop ticks every 5
                now[0] += 1.0
                if now[0] % 5 == 0:
                    w.tick(5.0)
            if k == 100:
                d.write_heartbeat()
                beats.append(json.loads((root / ".squad/memory/.scribed/heartbeat").read_text()))
        lines = [x for x in logs if x["event"].startswith("catch_up")]
        progress = [x for x in lines if x["event"] == "catch_up_progress"]
        assert lines[0]["event"] == "catch_up_started" and lines[-1]["event"] == "catch_up_done"
        assert lines[-1]["done"] == 200 and lines[-1]["left"] == 0 and lines[-1]["bytes_left"] == 0
        stamps = [x["elapsed_s"] for x in lines]
        assert max(b - a for a, b in itertools.pairwise(stamps)) <= 10.0, stamps
        assert len(progress) >= 600 / 10 - 1
        assert all(x["eta_s"] is not None and x["bytes_left"] > 0 for x in progress)
        mid = progress[len(progress) // 2]
        assert mid["eta_s"] == pytest.approx(
            mid["elapsed_s"] * mid["bytes_left"] / mid["bytes_done"], rel=0.05
        )
        assert beats[0]["catch_up"]["done"] == 101 and beats[0]["catch_up"]["eta_s"] > 0
    finally:
        d.scribe.close()


def test_run_once_bar_counts_bytes_and_json_holds_no_progress(tmp_path: Path) -> None:
    cfg = backlog(tmp_path)
    code, out, term = run_on_tty("--config", str(cfg), "run-once", "--force")
    assert code == 0, term
    assert re.search(r"compacting \d+/24 files: +\d+%\|", term), term[-2000:]
    assert re.search(r"\d+(\.\d+)?k?/3\.\d+k \[\d\d:\d\d<[\d:?]+, [\d.?]+k?B/s\]", term), term[
        -1500:
    ]  # bytes, an ETA
    cfg = backlog(tmp_path / "again")
    code, out, term = run_on_tty("--config", str(cfg), "run-once", "--force", "--json")
    assert code == 0
    assert json.loads(out)["compacted"] == 24
    assert "compacting" not in term and "%|" not in term
    p = run_cli("--config", str(cfg), "run-once", "--json")
    assert json.loads(p.stdout.decode())["compacted"] == 0


def test_promote_shows_a_bar_that_counts_bytes(tmp_path: Path) -> None:
    cfg = backlog(tmp_path)
    assert run_cli("--config", str(cfg), "run-once", "--force").returncode == 0
    code, _, term = run_on_tty("--config", str(cfg), "promote", "--as-of", "2030-01-01")
    assert code == 0, term
    assert re.search(r"promoting \d+/\d+ entries: +\d+%\|", term), term[-2000:]
    assert re.search(r"k? \[\d\d:\d\d<[\d:?]+, [\d.?]+k?B/s\]", term), term[-1500:]  # bytes, an ETA


def test_the_bar_counts_items_and_bytes() -> None:
    buf = io.StringIO()
    items = [b"x" * 100] * 30
    assert list(log_mod.progress(items, "work", unit="entry", enabled=True, stream=buf, size=len)) == items
    assert "work 0/30 entries:" in buf.getvalue() and "0.00/2.93k [" in buf.getvalue(), buf.getvalue()[-300:]
