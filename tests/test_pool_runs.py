"""Two runs on one root, and a killed one: a run's start sweeps only the leftovers of runs that
are gone (the tester's D5: a second `run-once` deleted the first one's live worker spool, logged
as "a killed run's spool", and could delete its temp files), and still every leftover of a killed
run (raw parses in the spool, temp files) is removed by the next run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from scribed import fsutil
from scribed.core import pool
from scribed.tiers.cold import Layout

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import gen  # noqa: E402


def _gone_pid() -> int:
    """The pid of a process that has ended (and was reaped)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.fixture
def sleeper() -> Any:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield p
    p.kill()
    p.wait()


def test_temp_files_are_named_by_their_process() -> None:
    """A temp file names the process writing it (pid and start time), so a sweep can tell a live
    run's file from a killed run's."""
    tag = fsutil.run_tag()
    assert tag.split(".")[0] == str(os.getpid())
    assert fsutil.tmp_prefix() == f"{fsutil.TMP_PREFIX}{tag}-"
    assert fsutil.run_alive(tag)


def test_a_sweep_keeps_a_live_runs_temp_files_and_removes_a_gone_ones(tmp_path: Path, sleeper: Any) -> None:
    live_tag = fsutil.run_tag(sleeper.pid)
    assert fsutil.run_alive(live_tag)
    gone = _gone_pid()
    assert not fsutil.run_alive(str(gone))
    keep = tmp_path / "cold" / f"{fsutil.TMP_PREFIX}{live_tag}-abc123"
    drop = [
        tmp_path / "cold" / f"{fsutil.TMP_PREFIX}{gone}-abc123",  # its process is gone
        tmp_path / f"{fsutil.TMP_PREFIX}x8y7z6",  # no owner named (an older scribed's)
        tmp_path / "hot" / f"{fsutil.TMP_PREFIX}{sleeper.pid}.1-abc123",  # that pid, another start: reused
    ]
    old = tmp_path / "wiki" / f"{fsutil.TMP_PREFIX}{live_tag}-old000"  # no write takes a day
    for p in [keep, *drop, old]:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("half")
    day_ago = time.time() - 2 * 86400
    os.utime(old, (day_ago, day_ago))
    assert fsutil.clean_temp_files(tmp_path) == len(drop) + 1
    assert keep.exists() and not old.exists() and not any(p.exists() for p in drop)


def test_a_sweep_keeps_a_live_runs_spool_and_removes_a_gone_ones(tmp_path: Path, sleeper: Any) -> None:
    layout = Layout(tmp_path)
    base = layout.state / pool.SPOOL
    live = base / f"{fsutil.run_tag(sleeper.pid)}-abc"
    gone = base / f"{_gone_pid()}-abc"
    legacy = base / "3"  # a ring file of the flat spool older runs used
    for d in (live, gone):
        d.mkdir(parents=True)
        (d / "0").write_bytes(b"password=hunter2abc")
    legacy.write_bytes(b"x")
    assert pool.sweep(layout) is True
    assert (live / "0").exists() and not gone.exists() and not legacy.exists()
    assert pool.sweep(layout) is False  # nothing of a gone run left
    # a run's own spool is its own folder, named by it
    own = Path(pool._spool_dir(layout))
    assert own.parent == base and own.name.startswith(fsutil.run_tag() + "-")
    assert pool.sweep(layout) is False and own.is_dir()


# --- real processes -------------------------------------------------------------------------------
SESSIONS = 80


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "c.toml"
    transcripts = tmp_path / "transcripts"
    for s in gen.iter_sessions(7, SESSIONS, min_kb=50, max_kb=80):
        gen.write_session(s, transcripts)
    (tmp_path / "root/.squad").mkdir(parents=True)
    gen.daemon_config(cfg, tmp_path / "root", transcripts, quiet=0)
    cfg.write_text(
        cfg.read_text().replace('backend = "extractive"\n', 'backend = "extractive"\nworkers = 2\n')
    )
    return cfg


def _start(cfg: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.Popen(
        [sys.executable, "-m", "scribed", "--config", str(cfg), "run-once", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


def _spools(tmp_path: Path) -> list[Path]:
    base = tmp_path / "root/.squad/memory/.scribed" / pool.SPOOL
    return sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def _wait_for_spool(tmp_path: Path, proc: subprocess.Popen[bytes]) -> Path:
    """The running run's spool, once its workers have one."""
    base = tmp_path / "root/.squad/memory/.scribed" / pool.SPOOL
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError):
            if any(base.iterdir()):
                found = _spools(tmp_path)
                return found[0] if found else base  # else the flat spool of the code before
        time.sleep(0.02)
    raise AssertionError("the run started no pool")


def _events(err: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_a_second_run_leaves_the_first_runs_spool_alone(tmp_path: Path) -> None:
    """A hook's `run-once` (no sources of its own: it starts, sweeps and ends in a second) while a
    backlog's run works, then the same run twice at once, as cron and a hook would start it."""
    cfg = _config(tmp_path)
    hook = tmp_path / "hook.toml"
    hook.write_text(f'root = "{tmp_path / "root"}"\n[log]\nformat = "json"\nlevel = "info"\n')
    first = _start(cfg)
    try:
        spool = _wait_for_spool(tmp_path, first)
        quick = _start(hook)
        _, err0 = quick.communicate(timeout=120)
        assert quick.returncode == 0, err0[-2000:]
        assert first.poll() is None, "the backlog's run ended before the second run started"
        assert spool.exists()  # the live run's spool was left alone
        second = _start(cfg)
        out2, err2 = second.communicate(timeout=600)
        out1, err1 = first.communicate(timeout=600)
    finally:
        first.kill()
    assert first.returncode == second.returncode == 0, (err1[-2000:], err2[-2000:])
    events = _events(err0) + _events(err1) + _events(err2)
    bad = [e for e in events if e["event"].startswith(("pool_spool", "pool_result", "temp_files"))]
    assert bad == [], bad
    r1, r2 = json.loads(out1), json.loads(out2)
    assert r1["compacted"] + r2["compacted"] == SESSIONS and r1["failed"] == r2["failed"] == 0
    assert not (tmp_path / "root/.squad/memory/.scribed" / pool.SPOOL).exists()


@pytest.mark.slow
def test_a_killed_runs_spool_and_temp_files_are_removed_by_the_next_run(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    first = _start(cfg)
    try:
        spool = _wait_for_spool(tmp_path, first)
        tag = fsutil.run_tag(first.pid)
        assert spool.name.startswith(tag + "-")
        mem = tmp_path / "root/.squad/memory"
        stray = mem / "cold" / f"{fsutil.TMP_PREFIX}{tag}-killed"  # as a write cut short leaves it
        stray.parent.mkdir(parents=True, exist_ok=True)
        stray.write_text("half")
        time.sleep(0.5)
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=60)
    finally:
        first.kill()
    assert spool.exists() and stray.exists()
    second = _start(cfg)
    out, err = second.communicate(timeout=600)
    assert second.returncode == 0, err[-2000:]
    events = {e["event"] for e in _events(err)}
    assert {"pool_spool_removed", "temp_files_removed"} <= events, events
    assert "pool_result_unused" not in events
    assert not spool.exists() and not stray.exists()
    assert json.loads(out)["failed"] == 0
    assert not (mem / ".scribed" / pool.SPOOL).exists()
