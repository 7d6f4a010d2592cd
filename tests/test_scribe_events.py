"""What a run says about itself: a repaired wiki page is a wiki event (M1), a ledger set aside as
corrupt is rebuilt for that reason, not "empty" (M3), and `run-once` stopped by SIGTERM or SIGINT
finishes cleanly and says how many sessions it saved and that a rerun continues (M9)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_hot_reseed import Log, entry_text, write_cold

from scribed import config
from scribed.core import ledger as ledger_mod
from scribed.core.scribe import Scribe
from scribed.tiers.cold import Layout

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import gen  # noqa: E402


def test_a_repaired_wiki_page_is_logged_as_a_wiki_page(tmp_path: Path) -> None:
    """M1: a wiki page a text merge left with conflict markers was logged `cold_file_repaired`."""
    (tmp_path / ".squad/memory/wiki").mkdir(parents=True)
    page = tmp_path / ".squad/memory/wiki/conventions.md"
    page.write_text(
        "# conventions\n\n<<<<<<< HEAD\n### Cache backend\nUse sqlite.\n=======\n"
        "### Feature flags\nIn config/flags.toml.\n>>>>>>> theirs\n"
    )
    scribe = Scribe(config.from_dict({"root": str(tmp_path)}))
    log = Log()
    scribe.log = log  # type: ignore[assignment]
    try:
        with scribe.locked():
            pass
    finally:
        scribe.close()
    assert "<<<<<<<" not in page.read_text()
    repaired = [(e, kw) for lv, e, kw in log.calls if e.endswith("_repaired")]
    assert repaired == [("wiki_page_repaired", {"file": "wiki/conventions.md"})]


def test_a_ledger_set_aside_as_corrupt_is_rebuilt_for_that_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M3: `echo garbage > ledger.sqlite` was kept aside as corrupt, then logged rebuilt as "empty"."""
    log = Log()
    monkeypatch.setattr(ledger_mod, "_log", lambda: log)
    layout = Layout(tmp_path)
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z"))  # what the rebuild finds
    mem = layout.memory
    path = mem / ".scribed/ledger.sqlite"
    path.parent.mkdir(parents=True)
    path.write_text("garbage\n")
    led = ledger_mod.Ledger(path)
    try:
        ledger_mod.ensure(led, mem, mem / ".scribed/archive")
    finally:
        led.close()
    events = {e: kw for _, e, kw in log.calls}
    assert events["ledger_corrupt"]["reason"] == "file is not a database"
    reason = events["ledger_rebuilt"]["reason"]
    assert reason.startswith("corrupt (file is not a database)") and "ledger.sqlite.corrupt-" in reason
    # a ledger that is not there at all is rebuilt as missing, not empty
    path.unlink()
    log.calls.clear()
    led = ledger_mod.Ledger(path)
    try:
        ledger_mod.ensure(led, mem, mem / ".scribed/archive")
    finally:
        led.close()
    events = {e: kw for _, e, kw in log.calls}
    assert events["ledger_rebuilt"]["reason"] == "missing"


# --- signals: real processes ----------------------------------------------------------------------
SESSIONS = 60


def _backlog(tmp_path: Path, *, workers: int) -> Path:
    cfg = tmp_path / "c.toml"
    transcripts = tmp_path / "transcripts"
    for s in gen.iter_sessions(11, SESSIONS, min_kb=40, max_kb=80):
        gen.write_session(s, transcripts)
    (tmp_path / "root/.squad").mkdir(parents=True)
    gen.daemon_config(cfg, tmp_path / "root", transcripts, quiet=0)
    cfg.write_text(
        cfg.read_text().replace('backend = "extractive"\n', f'backend = "extractive"\nworkers = {workers}\n')
    )
    return cfg


def _run(cfg: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.Popen(
        [sys.executable, "-m", "scribed", "--config", str(cfg), "run-once", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )


def _entries(tmp_path: Path) -> int:
    db = tmp_path / "root/.squad/memory/.scribed/ledger.sqlite"
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(con.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sig", "code", "workers", "group"),
    [
        (signal.SIGTERM, 143, 1, False),
        (signal.SIGTERM, 143, 2, False),
        (signal.SIGINT, 130, 1, False),
        (signal.SIGINT, 130, 2, True),  # Ctrl-C: the terminal signals the workers too
    ],
)
def test_run_once_stopped_by_a_signal_says_what_it_saved(
    tmp_path: Path, sig: signal.Signals, code: int, workers: int, group: bool
) -> None:
    cfg = _backlog(tmp_path, workers=workers)
    proc = _run(cfg)
    try:
        deadline = time.monotonic() + 120
        while _entries(tmp_path) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be stopped"
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == code, err.decode()[-2000:]
    lines = [ln for ln in err.decode().splitlines() if not ln.startswith("{")]
    assert len(lines) == 1, err.decode()[-2000:]
    assert "Traceback" not in err.decode()
    line = lines[0]
    name = sig.name
    assert line.startswith(f"scribed: interrupted by {name}: "), line
    saved = int(line.split(": ")[2].split()[0])
    assert "sessions saved" in line or "session saved" in line
    assert f"`scribed --config {cfg} run-once` again continues" in line  # the hint carries the config given
    # a pool's batch may commit the last sessions before the signal lands (the run then stops in
    # its closing work): what it says is still what it saved, and the rerun takes the rest (none)
    assert 0 < saved <= SESSIONS
    mem = tmp_path / "root/.squad/memory"
    assert not (mem / ".scribed/pool").exists()
    assert not [p for p in mem.rglob(".scribed-tmp-*")]
    # the rerun takes the rest, and nothing twice
    rerun = _run(cfg, "--json")
    out, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, err.decode()[-2000:]
    assert saved + json.loads(out)["compacted"] == SESSIONS
    assert _entries(tmp_path) == SESSIONS
