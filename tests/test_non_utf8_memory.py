"""A file or folder whose name is not valid UTF-8 (``caf\\xe9.md``: an old Latin-1 disk, an archive
unpacked with the wrong encoding) in the memory folders or in a legacy Squad tree is skipped with
one warning naming it, its bad bytes escaped, and every other file is read (stop 49). Before,
``status`` and ``search`` (so ``context --query`` and the MCP search) stopped with a bare
UnicodeEncodeError, ``status --json`` named an agent ``caf\\udce9``, and ``import`` stopped on
one such history or decision file, importing nothing.

The commands run with a strict UTF-8 stdout (``PYTHONIOENCODING=utf-8``), as on a desktop whose
locale is ``en_US.UTF-8``; the C.UTF-8 locale of CI would let the raw bytes through unseen.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import run_cli

from scribed import fsutil, log
from scribed.cli import demo
from scribed.cli.mcp_server import tool_recent_sessions
from scribed.tiers.cold import Layout

BAD = os.fsdecode(b"caf\xe9")  # what the OS gives for the Latin-1 name: a lone surrogate
SHOWN = "caf\\xe9"
STRICT = {"PYTHONIOENCODING": "utf-8"}


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("memory") / "demo"
    root.mkdir()
    demo.build(root)
    assert run_cli("--config", str(root / "scribed.toml"), "run-once").returncode == 0
    return root


def demo_copy(compacted: Path, tmp_path: Path) -> Path:
    """A copy of the compacted demo with a wiki page written (every tier holds a file)."""
    root = tmp_path / "demo"
    shutil.copytree(compacted, root, symlinks=True)
    run_cli("--config", str(root / "scribed.toml"), "wiki-write", "decisions", "--agent", "riker",
            input=b"Use an injected clock in src/auth/session.py instead of freeze_time\n")  # fmt: skip
    return root


def _with_bad_names(compacted: Path, tmp_path: Path) -> Path:
    root = demo_copy(compacted, tmp_path)
    mem = root / ".squad/memory"
    for tier, good in (("hot", "riker"), ("cold", "riker"), ("wiki", "decisions")):
        shutil.copy(mem / tier / f"{good}.md", mem / tier / f"{BAD}.md")
    return root


def _warned(stderr: bytes) -> list[str]:
    events = [json.loads(ln) for ln in stderr.decode().splitlines() if ln.startswith("{")]
    return [e["file"].rsplit("/memory/", 1)[1] for e in events if e["event"] == "file_name_not_utf8"]


def test_utf8_only_keeps_the_good_names_and_says_each_other_one_escaped() -> None:
    said: list[str] = []
    kept = fsutil.utf8_only([Path("/m/café.md"), Path(f"/m/{BAD}/a.md"), Path("/m/b.md")], said.append)
    assert kept == [Path("/m/café.md"), Path("/m/b.md")]
    assert said == [f"/m/{SHOWN}/a.md"]


def test_a_reader_logs_each_such_name_once_per_process() -> None:
    stream = io.StringIO()
    log.configure("json", "info", stream=stream)
    name = f"/m/{BAD}-{os.getpid()}.md"  # a name no other test said in this process
    try:
        assert log.utf8_named([Path(name), Path("/m/a.md")]) == [Path("/m/a.md")]
        assert log.utf8_named([Path(name)]) == []  # the daemon's next cycle: said already
    finally:
        log.configure("json", "error")
    events = [json.loads(ln) for ln in stream.getvalue().splitlines()]
    assert [(e["event"], e["file"]) for e in events] == [("file_name_not_utf8", fsutil.shown(name))]
    assert "rename it" in events[0]["reason"]


def test_status_names_the_others_and_warns_once_per_file(compacted: Path, tmp_path: Path) -> None:
    root = _with_bad_names(compacted, tmp_path)
    p = run_cli("--config", str(root / "scribed.toml"), "status", cwd=root, env=STRICT)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    out = p.stdout.decode()
    assert "riker" in out and "worf" in out and "caf" not in out, out
    assert _warned(p.stderr) == [f"hot/{SHOWN}.md", f"cold/{SHOWN}.md", f"wiki/{SHOWN}.md"], p.stderr
    p = run_cli("--config", str(root / "scribed.toml"), "status", "--json", cwd=root, env=STRICT)
    agents = [a["agent"] for a in json.loads(p.stdout)["tiers"]["agents"]]
    assert p.returncode == 0 and agents == ["picard", "riker", "troi", "worf"], agents


@pytest.mark.parametrize(
    "args",
    [("search", "clock"), ("search", "--json", "clock"), ("context", "riker", "--query", "clock")],
    ids=["search", "search-json", "context-query"],
)
def test_search_and_context_find_the_others(compacted: Path, tmp_path: Path, args: tuple[str, ...]) -> None:
    root = _with_bad_names(compacted, tmp_path)
    p = run_cli("--config", str(root / "scribed.toml"), *args, cwd=root, env=STRICT)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert "injected clock" in p.stdout.decode() or "«clock»" in p.stdout.decode(), p.stdout
    assert _warned(p.stderr) == [f"cold/{SHOWN}.md", f"wiki/{SHOWN}.md"], p.stderr


def test_the_mcp_recent_sessions_leave_the_file_out(compacted: Path, tmp_path: Path) -> None:
    root = _with_bad_names(compacted, tmp_path)
    sessions = tool_recent_sessions(Layout(root))["sessions"]
    json.dumps(sessions, ensure_ascii=False).encode("utf-8")  # what the MCP transport writes
    assert {s["agent"] for s in sessions} == {"picard", "riker", "troi", "worf"}


HISTORY = """# History

## Learnings

### 2025-01-10: Stream rows with server-side cursors in src/export/job.py
The nightly export held 2.1 GiB in memory; server-side cursors keep it under 50 MB (#1201).
"""
DECISIONS = """# Decisions

### 2025-02-01: Pin {tool} to {version} in requirements-dev.txt
**By:** riker
**What:** {tool} {next} broke the fixtures in conftest.py; pinned until they are ported.
"""


def test_import_skips_such_a_history_or_decision_file_and_imports_the_rest(tmp_path: Path) -> None:
    squad = tmp_path / ".squad"
    for agent in ("riker", BAD):
        (squad / "agents" / agent).mkdir(parents=True)
        (squad / "agents" / agent / "history.md").write_text(HISTORY)
    (squad / "agents/riker" / f"history-archive-{BAD}.md").write_text(HISTORY.replace("2025", "2024"))
    (squad / "decisions.md").write_text(DECISIONS.format(tool="pytest", version="8.x", next="9"))
    (squad / "decisions/inbox").mkdir(parents=True)
    (squad / "decisions/inbox" / f"{BAD}.md").write_text(
        DECISIONS.format(tool="ruff", version="0.6", next="0.7")
    )
    p = run_cli("import", "--root", str(tmp_path), "--all", "--json", cwd=tmp_path, env=STRICT)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    data = json.loads(p.stdout)
    bad = sorted(w.split(": ")[0].removeprefix(f"{squad}/") for w in data["warnings"] if "UTF-8" in w)
    assert bad == [
        f"agents/{SHOWN}",
        f"agents/riker/history-archive-{SHOWN}.md",
        f"decisions/inbox/{SHOWN}.md",
    ]
    wiki = (squad / "memory/wiki/decisions.md").read_text()
    assert "pytest" in wiki and "ruff" not in wiki
    p = run_cli("import", "--root", str(tmp_path), "riker", "--dry-run", cwd=tmp_path, env=STRICT)
    said = [json.loads(ln)["reason"] for ln in p.stderr.decode().splitlines() if ln.startswith("{")]
    assert (
        p.returncode == 0 and f"{squad}/agents/riker/history-archive-{SHOWN}.md: its name is not" in said[0]
    ), said
