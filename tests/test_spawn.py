"""``scribed context AGENT`` runs at every agent spawn (issue 15: ≤ 150 ms): the way a coordinator
starts it, it loads no pydantic, LLM client, scheduler, watcher or structlog, whatever the situation
(cold history is parsed by :mod:`scribed.compress.entry` without the pydantic models)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from scribed.cli import spawn
from scribed.cli.main import main

# click too: a plain call must take the fast path (scribed.cli.spawn), not fall back to the click command.
HEAVY = (
    "pydantic",
    "openai",
    "httpx",
    "apscheduler",
    "watchdog",
    "structlog",
    "filelock",
    "sqlite3",
    "click",
)

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


def _cold_and_wiki(root: Path) -> None:
    mem = root / ".squad/memory"
    (mem / "cold").mkdir(exist_ok=True)
    (mem / "cold/data.md").write_text(
        "# Cold memory: data\n\n### 2026-01-02T10:00:00Z: Export retry\n"
        "- provenance: id=e-0123abcd · agent=data\n\n#### Goal\nFix the export retry loop.\n"
    )
    (mem / "wiki").mkdir(exist_ok=True)
    (mem / "wiki/export.md").write_text("# Export\n\n## Retry loop\nBack off 3 times.\n")


def _spawn(*args: str) -> str:
    code = PROBE.format(heavy=HEAVY)
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return proc.stdout


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--format", "json"],
        ["--max-bytes", "4000", "--situation", "onboarding"],
        ["--situation", "spec"],
        ["--include-cold"],
        ["--situation", "resume"],
        ["--situation", "debug", "--format", "json"],
        ["--situation", "post-incident", "--max-bytes", "900"],
        ["--include-wiki"],
        ["--include-wiki", "export", "--include-cold", "--format", "json"],
    ],
)
def test_spawn_context_loads_nothing_heavy(tmp_path: Path, extra: list[str]) -> None:
    root = _root(tmp_path)
    _cold_and_wiki(root)
    cfg = tmp_path / "scribed.toml"  # a plain, valid config file is read without pydantic
    cfg.write_text(
        f'root = "{root}"\n[log]\nlevel = "warning"\n[[sources]]\nkind = "codex"\npath = "t"\nagent = "data"\n'
    )
    out = _spawn("--config", str(cfg), "context", "data", *extra)
    assert "fix the export retry loop" in out
    cold = "--include-cold" in extra or any(s in extra for s in ("resume", "debug", "post-incident"))
    assert ("Fix the export retry loop." in out) == cold
    wiki = "--include-wiki" in extra or any(s in extra for s in ("spec", "onboarding", "post-incident"))
    assert ("Back off 3 times." in out) == wiki
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
    from scribed.recall import context
    from scribed.sources import injected
    from scribed.tiers import live

    assert (context.MARK_OPEN, context.MARK_CLOSE) == (injected.MARK_OPEN, injected.MARK_CLOSE)
    assert context.mark("a\n\n") == injected.mark("a\n\n")
    assert context.LIVE_MARKER == live.MARKER


def _tree(tmp: Path) -> Path:
    root = _root(tmp / "r")
    mem = root / ".squad/memory"
    (mem / "hot/live.md").write_text(
        "---\nscribed-live: copilot:abc\ndigest: 000000000000\n---\n"
        "<!-- Written by scribed from a running session; replaced on each change, cleared when it ends. -->\n\n"
        "# Hot memory: live\n\nCurrent task: the retry loop\n"
    )
    (mem / "hot/ansi.md").write_text("# Hot memory: ansi\n\n\x1b[31mred\x1b[0m text\n")
    (mem / "hot/leak.md").write_text("# Hot\n\npassword = hunter2hunter2\nünïcode ✓\n")
    (mem / "cold").mkdir()
    (mem / "cold/data.md").write_text(
        "# Cold memory: data\n\n## 2026-01-02 s1\nFixed the export retry loop.\n\n"
        "## 2026-01-03 s2\nDecided to keep v1 behind a flag.\n"
    )
    (mem / "wiki").mkdir()
    (mem / "wiki/export.md").write_text("# Export\n\n## Retry loop\nBack off 3 times.\n")
    (tmp / "good.toml").write_text(f'root = "{root}"\n[log]\nformat = "json"\n')
    (tmp / "bad.toml").write_text("[compress]\nratio = 2\n")
    (tmp / "badagent.toml").write_text('[[sources]]\nkind = "codex"\npath = "/t"\nagent = "Bad Name!"\n')
    (tmp / "nosquad").mkdir()
    (tmp / "bare/.squad").mkdir(parents=True)
    return root


CALLS = [
    ["context", "data", "--root", "R"],
    ["context", "Data", "--root=R", "--format=json"],
    ["context", "data", "--root", "R", "--include-cold"],
    ["context", "data", "--root", "R", "--situation", "resume", "--max-bytes", "300"],
    ["context", "data", "--situation", "Post-Incident", "--root", "R", "--max-bytes", "0"],
    ["context", "data", "--root", "R", "--situation", "spec", "--format", "json"],
    ["context", "live", "--root", "R"],
    ["context", "leak", "--root", "R", "--format", "json"],
    ["context", "nobody", "--root", "R"],
    ["context", "nobody", "--root", "R", "--situation", "debug"],
    ["context", "nobody", "--root", "R", "--include-cold", "--format", "json"],
    ["--config", "T/good.toml", "context", "data"],
    ["context", "data", "--config", "T/good.toml"],
    ["context", "data", "--root", "T/nosquad"],
    ["--config", "T/bad.toml", "context", "data", "--root", "R"],
    ["--config", "T/badagent.toml", "context", "data", "--root", "R"],
    ["--config", "T/missing.toml", "context", "data", "--root", "R"],
    ["context", "bad name", "--root", "R"],
    ["context", "data", "--root", "R", "--situation", "nope"],
    ["context", "data", "--root", "R", "--max-bytes", "-1"],
    ["context", "data", "--root", "R", "--max-bytes", "x"],
    ["context", "data", "--root", "R", "--format", "xml"],
    ["context", "data", "--root", "R", "--root", "T/nosquad"],
    ["context", "data", "extra", "--root", "R"],
    ["context", "--help"],
    ["context"],
    ["--root", "R", "context", "data"],
    ["--init", "context", "data", "--root", "T/nosquad"],
    ["context", "data", "--root", "R", "--include-wiki"],
    ["context", "data", "--root", "R", "--query", "retry"],
    ["context", "ansi", "--root", "R"],
    ["context", "data", "--include-wiki", "export", "--root", "R"],
    ["context", "data", "--include-wiki=export,nope", "--include-wiki", "--root", "R", "--format", "json"],
    ["context", "data", "--root", "R", "--include-wiki", "--include-cold", "--max-bytes", "400"],
    ["context", "data", "--root", "R", "--include-wiki="],
    ["context", "nobody", "--root", "T/bare", "--include-wiki"],
    ["context", "nobody", "--root", "T/bare", "--situation", "post-incident", "--format", "json"],
    ["context", "data", "--root", "R", "--include-wiki", "Bad Name!"],
    ["context", "data", "--root", "R", "--include-wiki", "-"],
    ["context", "--include-wiki", "data", "--root", "R"],
    ["--include-wiki", "context", "data", "--root", "R"],
    ["context", "data", "--root", "R", "--max-bytes", "20"],  # hot alone is over: said on stderr
    ["context", "leak", "--root", "R", "--max-bytes", "20", "--format", "json"],
]
# The calls the fast path answers itself; every other one it hands to click untouched.
FAST = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 28, 31, 32, 33, 34, 35, 36, 41, 42}


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_the_fast_path_prints_what_the_click_command_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], i: int
) -> None:
    root = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCRIBED_CONFIG", raising=False)
    monkeypatch.delenv("SCRIBED_DEBUG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    argv = [str(root) if a == "R" else a for a in CALLS[i]]
    argv = [a.replace("=R", f"={root}").replace("T/", f"{tmp_path}/") for a in argv]
    code = spawn.run(argv)
    fast = capsys.readouterr()
    res = CliRunner().invoke(main, argv)
    assert (code is not None) == (i in FAST), (argv, code, res.stderr)
    if code is None:
        assert fast.out == fast.err == "", argv  # handed over before writing a byte
    else:
        assert (code, fast.out, fast.err) == (res.exit_code, res.stdout, res.stderr), argv
        assert res.exit_code == 0 and "scribed:context" in fast.out


def test_a_busy_root_still_exits_1_now_that_the_lock_module_loads_lazily(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scribed.core import scribe
    from scribed.core.lock import RootBusyError

    def busy(*_a: object, **_k: object) -> None:
        raise RootBusyError("another scribed is working on this root")

    (tmp_path / ".squad").mkdir()
    monkeypatch.setattr(scribe.Scribe, "run", busy)
    res = CliRunner().invoke(main, ["run-once", "--root", str(tmp_path)])
    assert (res.exit_code, res.stderr) == (1, "scribed: error: another scribed is working on this root\n")


def test_the_fast_path_finds_the_root_from_a_subfolder_as_click_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A spawn started in repo/src (no config file, no .squad/ there) reads repo's memory, on the
    fast path too: the same bytes as the click command."""
    root = _tree(tmp_path)
    (root / ".git").mkdir()
    (root / "src").mkdir()
    monkeypatch.chdir(root / "src")
    monkeypatch.delenv("SCRIBED_CONFIG", raising=False)
    monkeypatch.delenv("SCRIBED_DEBUG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    argv = ["context", "data", "--max-bytes", "20"]
    code = spawn.run(argv)
    fast = capsys.readouterr()
    res = CliRunner().invoke(main, argv)
    assert (code, fast.out, fast.err) == (res.exit_code, res.stdout, res.stderr)
    assert code == 0 and "the block is" in fast.err and "Fixed the export" not in fast.out
    assert "scribed:context" in fast.out
