"""``scribed context AGENT`` runs at every agent spawn (issue 15: ≤ 150 ms): the way a coordinator
starts it, it loads no pydantic, LLM client, scheduler, watcher or structlog. (Cold history parses
entries with :mod:`scribed.compress.entry`, which loads the models and so pydantic: not covered here.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pydantic", "openai", "httpx", "apscheduler", "watchdog", "structlog", "filelock", "sqlite3")

PROBE = """
import runpy, sys
sys.argv = ["scribed", *sys.argv[1:]]
try:
    runpy.run_module("scribed", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
heavy = {heavy!r}
print("LOADED", sorted(m for m in sys.modules if m.split(".")[0] in heavy), "EXIT", code)
"""


def _root(tmp_path: Path) -> Path:
    hot = tmp_path / ".squad/memory/hot/data.md"
    hot.parent.mkdir(parents=True)
    hot.write_text("# Hot memory: data\n\nCurrent task: fix the export retry loop in `src/export/run.py`.\n")
    return tmp_path


def _spawn(*args: str) -> str:
    code = PROBE.format(heavy=HEAVY)
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--format", "json"],
        ["--include-wiki", "--max-bytes", "4000"],
        ["--situation", "spec"],
    ],
)
def test_spawn_context_loads_nothing_heavy(tmp_path: Path, extra: list[str]) -> None:
    root = _root(tmp_path)
    cfg = tmp_path / "scribed.toml"  # a plain, valid config file is read without pydantic
    cfg.write_text(
        f'root = "{root}"\n[log]\nlevel = "warning"\n[[sources]]\nkind = "codex"\npath = "t"\nagent = "data"\n'
    )
    out = _spawn("--config", str(cfg), "context", "data", *extra)
    assert "fix the export retry loop" in out
    assert out.rstrip().endswith("LOADED [] EXIT 0"), out[-400:]


def test_a_config_pydantic_must_judge_still_gets_its_message(tmp_path: Path) -> None:
    """The light reader defers what it is not sure of; then pydantic loads and words the error."""
    root = _root(tmp_path)
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(f'root = "{root}"\n[compress]\nratio = 2\n')
    code = PROBE.format(heavy=HEAVY)
    proc = subprocess.run(
        [sys.executable, "-c", code, "--config", str(cfg), "context", "data"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "bad value for 'compress.ratio'" in proc.stderr
    assert "'pydantic'" in proc.stdout and proc.stdout.rstrip().endswith("EXIT 2")


def test_the_markers_repeated_for_the_spawn_path_match_their_owners() -> None:
    from scribed.sources import injected
    from scribed.tiers import context, live

    assert (context.MARK_OPEN, context.MARK_CLOSE) == (injected.MARK_OPEN, injected.MARK_CLOSE)
    assert context.mark("a\n\n") == injected.mark("a\n\n")
    assert context.LIVE_MARKER == live.MARKER
