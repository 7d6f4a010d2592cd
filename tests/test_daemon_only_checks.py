"""What only the daemon refuses or cannot do (stop 48): a quiet time that cuts every live session
into fragments (s12) and a promotion cron line that never fires (s18). ``scribed run`` refuses (exit
78) or warns, ``check-config`` says the same line as a warning (``--strict`` fails), and
``run-once``, which compacts finished transcripts, is not bothered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

EX_CONFIG = 78


def _scribed(cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scribed", "--config", str(cfg), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _root(tmp: Path, session: str = "", promote: str = "") -> Path:
    """A root with one finished Claude session in its source folder; the config's path."""
    (tmp / "repo/.squad").mkdir(parents=True)
    src = tmp / "src"
    src.mkdir()
    recs = [
        {"type": "user", "sessionId": "s1", "cwd": str(tmp / "repo"), "timestamp": "2026-11-20T09:00:00Z",
         "message": {"role": "user", "content": "move the retry budget for the billing client to 5"}},
        {"type": "assistant", "sessionId": "s1", "cwd": str(tmp / "repo"), "timestamp": "2026-11-20T09:01:00Z",
         "message": {"role": "assistant", "content": "Set RETRY_BUDGET = 5 in billing/client.py."}},
    ]  # fmt: skip
    f = src / "s1.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    old = time.time() - 3600

    os.utime(f, (old, old))
    cfg = tmp / "scribed.toml"
    cfg.write_text(
        f'root = "repo"\n[session]\n{session}\n[compress]\nbackend = "extractive"\n[promote]\n{promote}\n'
        f'[[sources]]\nkind = "claude"\npath = "{src}"\nagent = "riker"\n'
    )
    return cfg


def _warnings(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("scribed: warning:")]


@pytest.mark.parametrize("quiet", ["0", "0.5"])
def test_a_quiet_time_that_finishes_every_write_is_refused_by_run_and_said_by_check_config(
    tmp_path: Path, quiet: str
) -> None:
    cfg = _root(tmp_path, session=f"quiet_seconds = {quiet}")
    run = _scribed(cfg, "run")
    assert run.returncode == EX_CONFIG, run.stderr
    assert "Traceback" not in run.stderr
    err = [ln for ln in run.stderr.splitlines() if ln.startswith("scribed: error:")]
    assert len(err) == 1 and "'session.quiet_seconds'" in err[0] and str(cfg) in err[0], run.stderr
    assert "run-once" in err[0] and "1800" in err[0], err  # what 0 is for, and what to set
    assert not (tmp_path / "repo/.squad/memory/.scribed/heartbeat").exists(), "run never started"
    chk = _scribed(cfg, "check-config")
    assert chk.returncode == 0, chk.stderr
    said = [w for w in _warnings(chk.stderr) if "'session.quiet_seconds'" in w]
    assert said == [err[0].replace("scribed: error:", "scribed: warning:")], chk.stderr
    assert _scribed(cfg, "check-config", "--strict").returncode == 1


def test_run_once_with_no_quiet_time_compacts_without_a_word(tmp_path: Path) -> None:
    """0 is what a batch over finished transcripts means: run-once neither warns nor refuses."""
    cfg = _root(tmp_path, session="quiet_seconds = 0")
    once = _scribed(cfg, "run-once", "--json")
    assert once.returncode == 0, once.stderr
    assert json.loads(once.stdout)["compacted"] == 1
    assert "quiet_seconds" not in once.stderr, once.stderr


@pytest.mark.parametrize(("quiet", "warned"), [("2", True), ("45.5", True), ("60", False), ("1800", False)])
def test_a_quiet_time_shorter_than_an_agents_pause_is_a_warning(
    tmp_path: Path, quiet: str, warned: bool
) -> None:
    cfg = _root(tmp_path, session=f"quiet_seconds = {quiet}")
    chk = _scribed(cfg, "check-config", "--strict")
    said = [w for w in _warnings(chk.stderr) if "'session.quiet_seconds'" in w]
    assert chk.returncode == (1 if warned else 0), chk.stderr
    assert len(said) == warned, chk.stderr
    if warned:
        assert f"after {quiet} s without a write" in said[0] and "several entries" in said[0], said


@pytest.mark.parametrize("schedule", ["0 3 31 2 *", "15 4 31 4,6 *", "0 0 30 2 1-5"])
def test_a_promotion_schedule_that_never_fires_is_a_warning(tmp_path: Path, schedule: str) -> None:
    """February 31, April 31: a valid cron line naming no date. check-config says it (and --strict
    fails), as does `scribed run` as it starts; a leap day or a 31st of any month is fine."""
    cfg = _root(tmp_path, promote=f'schedule = "{schedule}"')
    chk = _scribed(cfg, "check-config", "--strict")
    assert chk.returncode == 1, chk.stderr
    said = [w for w in _warnings(chk.stderr) if "'promote.schedule'" in w]
    assert len(said) == 1 and "never fires" in said[0] and schedule in said[0] and str(cfg) in said[0], said
    assert '"off"' in said[0], said  # the explicit way to never promote


@pytest.mark.parametrize("schedule", ["0 3 29 2 *", "0 3 31 * *", "0 3 * * *", "off"])
def test_a_schedule_that_fires_rarely_or_off_is_not_warned(tmp_path: Path, schedule: str) -> None:
    cfg = _root(tmp_path, promote=f'schedule = "{schedule}"')
    chk = _scribed(cfg, "check-config", "--strict")
    assert chk.returncode == 0 and not _warnings(chk.stderr), chk.stderr
