"""A source folder that holds the root's own memory (``path = ".squad"`` to read Squad's logs, or
a glob naming ``.squad/**``) never reads the tiers back as transcripts. Before, each run compacted
the last run's cold entries, cold file and hot file again, as sessions of the source's agent: a new
entry per memory file per run, without end. run-once, doctor and the daemon's events skip them
alike; the run says how many it skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_cli
from test_source_overlap import _daemon

LOG = """# Session log

**User:** Please fix the flaky retry in src/net/retry.py; the backoff caps at 30s.

**Assistant:** I changed `RetryPolicy.max_delay` to 30 and added tests in tests/test_retry.py. All 14 tests pass.
"""


def _root(tmp_path: Path, path: str = ".squad", glob: str = "") -> tuple[Path, Path]:
    """A root whose markdown source reaches its ``.squad/memory`` (one session log in ``.squad/log``,
    read by a second source when the first does not reach it)."""
    root = tmp_path / "root"
    (root / ".squad/log").mkdir(parents=True)
    (root / ".squad/log/2026-12-01-session.md").write_text(LOG)
    cfg = tmp_path / "c.toml"
    text = f'root = "{root}"\n[session]\nquiet_seconds = 0\n[compress]\nbackend = "extractive"\n'
    for folder in [path] if (root / path / "log").is_dir() or glob else [path, ".squad/log"]:
        text += f'[[sources]]\nkind = "markdown"\npath = "{root / folder}"\nagent = "scribe"\n'
    cfg.write_text(text + (f'glob = "{glob}"\n' if glob else ""))
    return root, cfg


def _cold(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / ".squad/memory/cold").rglob("*.md"))


@pytest.mark.parametrize(("path", "glob"), [(".squad", ""), (".", ".squad/**/*.md"), (".squad/memory", "")])
def test_run_once_never_compacts_its_own_memory_files(tmp_path: Path, path: str, glob: str) -> None:
    root, cfg = _root(tmp_path, path, glob)
    args = ("--config", str(cfg), "run-once", "--json")
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr.decode()
    cold = _cold(root)
    for _ in range(2):  # the memory exists now: hot, cold file, entry file
        again = run_cli(*args)
        assert again.returncode == 0, again.stderr.decode()
        assert json.loads(again.stdout)["compacted"] == 0
        assert _cold(root) == cold
    assert len([c for c in cold if c.count("/") == 4]) == 1  # one entry file: the log's session
    said = [json.loads(x) for x in again.stderr.decode().splitlines() if "source_memory_skipped" in x]
    assert said and said[0]["files"] >= 3, again.stderr.decode()


def test_doctor_counts_only_the_transcripts(tmp_path: Path) -> None:
    _, cfg = _root(tmp_path)
    assert run_cli("--config", str(cfg), "run-once").returncode == 0
    doctor = json.loads(run_cli("--config", str(cfg), "doctor", "--json").stdout)
    assert [s["files"] for s in doctor["sources"]] == [1]


def test_the_daemon_takes_no_event_on_its_own_memory(tmp_path: Path) -> None:
    root, cfg = _root(tmp_path)
    assert run_cli("--config", str(cfg), "run-once").returncode == 0
    d = _daemon(cfg)
    try:
        for p in (root / ".squad/memory").rglob("*.md"):
            got = d.dispatch.resolve(p)
            assert got is None or got.kind == "hot", (p, got)
        log = d.dispatch.resolve(root / ".squad/log/2026-12-01-session.md")
        assert log is not None and log.kind == "markdown"
    finally:
        d.scribe.close()
