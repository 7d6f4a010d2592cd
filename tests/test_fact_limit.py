"""One size limit for a wiki fact, whichever way an agent writes it (``scribed wiki-write`` from a
file or stdin, MCP's ``wiki_write``, a file dropped in the inbox), and every input read bounded:
a 20 MB build log became one 20 MB fact that every search and context read after, and
``wiki-write --file /dev/urandom`` read until the kernel killed it (t48 s02)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import run_cli

from scribed import config
from scribed.cli import mcp_server
from scribed.cli.main import main
from scribed.curate import agent_writes
from scribed.curate.agent_writes import MAX_FACT_BYTES, apply_inbox, inbox_dir
from scribed.tiers.cold import Layout

AS_LIMIT = 1 << 30  # the CLI runs in ~300 MB of address space; a whole-file read of more dies here


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".squad").mkdir()
    return tmp_path


def _page(root: Path) -> Path:
    return root / ".squad/memory/wiki/notes.md"


def _lines(size: int) -> bytes:
    """``size`` bytes of a plausible log: short lines of words and numbers."""
    line = b"2026-05-01 12:00:01 INFO build step 42 compiled src/api/handler.py in 0.31 s\n"
    return (line * (size // len(line) + 1))[:size]


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def test_a_file_over_the_limit_is_refused_naming_it_and_nothing_is_written(root: Path) -> None:
    log = root / "build output.log"
    log.write_bytes(_lines(MAX_FACT_BYTES + 1))
    p = run_cli("wiki-write", "notes", "--agent", "picard", "--root", str(root), "--file", str(log))
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert f"--file {log}: {MAX_FACT_BYTES + 1:,} bytes, over the {MAX_FACT_BYTES:,}-byte limit" in err, err
    assert "Traceback" not in err and not _page(root).exists()


@pytest.mark.parametrize("how", ["--file /dev/zero", "stdin from /dev/zero", "stdin from /dev/urandom"])
def test_an_endless_input_is_refused_without_being_held(root: Path, how: str) -> None:
    """In 1 GiB of address space: a whole read dies of MemoryError (exit 1, a traceback), a
    bounded one stops a byte past the limit."""
    args = [sys.executable, "-m", "scribed", "wiki-write", "notes", "--agent", "picard", "--root", str(root)]
    device = how.rsplit(" ", 1)[1]
    with open(device, "rb") as dev:
        p = subprocess.run(
            args + (["--file", device] if how.startswith("--file") else []),
            stdin=dev if how.startswith("stdin") else subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
            preexec_fn=_capped,
        )
    err = p.stderr.decode()
    assert p.returncode == 2, err[-2000:]
    who = f"--file {device}" if how.startswith("--file") else "stdin"
    assert f"{who}: more than {MAX_FACT_BYTES:,} bytes, over the" in err, err
    assert not _page(root).exists()


def _cli(root: Path, data: bytes) -> str:
    p = CliRunner().invoke(
        main, ["wiki-write", "notes", "--agent", "picard", "--root", str(root)], input=data
    )
    return "" if p.exit_code == 0 else f"exit {p.exit_code}: {p.output}"


def _mcp_text(root: Path, data: bytes) -> str:
    try:
        cfg = config.from_dict({"root": str(root)})
        mcp_server.tool_wiki_write(Layout(root), "notes", "picard", text=data.decode(), cfg=cfg)
    except mcp_server.BadArgumentError as exc:
        return str(exc)
    return ""


def _mcp_file(root: Path, data: bytes) -> str:
    (root / "fact.md").write_bytes(data)
    try:
        cfg = config.from_dict({"root": str(root)})
        mcp_server.tool_wiki_write(Layout(root), "notes", "picard", file="fact.md", cfg=cfg)
    except mcp_server.BadArgumentError as exc:
        return str(exc)
    return ""


def _inbox(root: Path, data: bytes) -> str:
    head = b"---\ntopic: notes\nagent: picard\n---\n"
    box = inbox_dir(Layout(root))
    box.mkdir(parents=True)
    (box / "fact.md").write_bytes(head + data[len(head) :])
    res = apply_inbox(Layout(root), config.from_dict({"root": str(root)}))
    return "; ".join(res.warnings)


DOORS: dict[str, Callable[[Path, bytes], str]] = {
    "wiki-write": _cli,
    "mcp text": _mcp_text,
    "mcp file": _mcp_file,
    "inbox": _inbox,
}


@pytest.mark.parametrize("door", DOORS)
def test_every_way_in_shares_one_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, door: str) -> None:
    """The limit lowered once, in agent_writes: each door takes a fact of exactly the limit and
    refuses one byte more, saying the limit (a door with a limit of its own misses one of them)."""
    monkeypatch.setattr(agent_writes, "MAX_FACT_BYTES", 300)
    for size, refused in ((300, False), (301, True)):
        root = tmp_path / str(size)
        (root / ".squad").mkdir(parents=True)
        said = DOORS[door](root, _lines(size))
        assert bool(said) == refused, (size, said)
        assert ("over the 300-byte limit of a wiki fact" in said) == refused, said
        assert _page(root).exists() != refused


def test_an_inbox_file_over_the_limit_is_quarantined_unread(root: Path) -> None:
    """A 2 GiB (sparse) inbox file, in 1 GiB of address space: quarantined with its size and the
    limit, never read (the whole-file read died of MemoryError, and every run after it too)."""
    box = inbox_dir(Layout(root))
    box.mkdir(parents=True)
    with open(box / "dump.md", "wb") as f:
        f.write(b"---\ntopic: notes\nagent: picard\n---\n")
        f.truncate(2 << 30)
    (box / "ok.md").write_text("---\ntopic: notes\nagent: picard\n---\nThe API times out after 30 s.\n")
    p = subprocess.run(
        [sys.executable, "-m", "scribed", "promote", "--root", str(root), "--json"],
        capture_output=True,
        timeout=120,
        preexec_fn=_capped,
    )
    err = p.stderr.decode()
    assert p.returncode == 0, err[-2000:]
    inbox = json.loads(p.stdout)["inbox"]
    assert [q["file"] for q in inbox["quarantined"]] == ["dump.md"], inbox
    assert (
        f"inbox/wiki/dump.md: {2 << 30:,} bytes, over the {MAX_FACT_BYTES:,}-byte limit"
        in inbox["warnings"][0]
    )
    assert '"inbox_quarantined"' in err and "over the" in err, err
    quarantine = Layout(root).quarantine
    assert (quarantine / "wiki-inbox-dump.md").stat().st_size == 2 << 30
    assert "over the" in (quarantine / "wiki-inbox-dump.md.reason").read_text()
    assert "The API times out after 30 s." in _page(root).read_text(), "the good file is applied"
    assert not list(box.iterdir())
