"""A hot or cold file, cold folder or wiki page whose name is no agent or topic name (``My
Notes.md`` dropped into the wiki, ``Data Officer.md``) is left out of every listing of agents and
topics, as before, but now with one warning a file per process naming it and the name to rename it
to, and ``scribed doctor`` lists it (stop 49). Before, ``report``, ``context``, ``promote``, the
MCP resources and the team sync skipped it without a word, and ``status`` listed it as an agent.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli
from test_non_utf8_memory import BAD, STRICT, compacted, demo_copy

from scribed import log, names
from scribed.cli.mcp_server import resource_files
from scribed.tiers.cold import Layout

__all__ = ["compacted"]  # the module's fixture, shared


def _misnamed(compacted: Path, tmp_path: Path) -> Path:
    """A copy with a page, a hot file and a cold view a person named by hand, and a hidden file."""
    root = demo_copy(compacted, tmp_path)
    mem = root / ".squad/memory"
    shutil.copy(mem / "wiki/decisions.md", mem / "wiki/My Notes.md")
    shutil.copy(mem / "hot/riker.md", mem / "hot/Data Officer.md")
    shutil.copy(mem / "cold/riker.md", mem / "cold/worf.v2.md")
    (mem / "wiki/.My Notes.md.swp").write_text("an editor's")
    return root


def _said(stderr: bytes) -> list[tuple[str, str]]:
    events = [json.loads(ln) for ln in stderr.decode().splitlines() if ln.startswith("{")]
    return [
        (e["file"].rsplit("/memory/", 1)[1], e["reason"])
        for e in events
        if e["event"] in ("file_name_invalid", "file_name_not_utf8")
    ]


@pytest.mark.parametrize(
    ("name", "kind", "hint"),
    [
        ("My Notes.md", "topic", "my-notes.md"),
        ("Data Officer", "agent", "data-officer"),
        ("Picard.md", "agent", "picard.md"),
        ("release notes (v2).md", "topic", "release-notes-v2.md"),
        ("--draft--.md", "topic", "draft.md"),
    ],
)
def test_a_name_that_is_none_says_what_to_rename_it_to(name: str, kind: str, hint: str) -> None:
    why = names.not_a_name(Path("/m") / name, kind)
    assert (
        why is not None
        and f"not a valid {kind} name" in why
        and why.endswith(f"rename it to {hint} to have it read")
    )
    assert names.normalize_name(hint.removesuffix(".md")) == hint.removesuffix(".md")


@pytest.mark.parametrize("name", ["riker.md", "index.md", "ops_2026-q1.md", "worf"])
def test_a_name_that_is_one_is_not_said(name: str) -> None:
    assert names.not_a_name(Path("/m") / name, "agent") is None


def test_report_and_promote_say_each_once_and_go_on(compacted: Path, tmp_path: Path) -> None:
    root = _misnamed(compacted, tmp_path)
    cfg = str(root / "scribed.toml")
    p = run_cli("--config", cfg, "report", cwd=root, env=STRICT)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    said = _said(p.stderr)
    assert [f for f, _ in said] == ["hot/Data Officer.md", "cold/worf.v2.md", "wiki/My Notes.md"], p.stderr
    assert "rename it to data-officer.md" in said[0][1] and "rename it to my-notes.md" in said[2][1]
    assert "Data Officer" not in p.stdout.decode() and "riker" in p.stdout.decode()
    p = run_cli("--config", cfg, "status", "--json", cwd=root, env=STRICT)
    agents = [a["agent"] for a in json.loads(p.stdout)["tiers"]["agents"]]
    assert agents == ["picard", "riker", "troi", "worf"], agents  # "data officer" was listed
    assert [f for f, _ in _said(p.stderr)] == ["hot/Data Officer.md", "cold/worf.v2.md"], p.stderr
    p = run_cli("--config", cfg, "promote", "--dry-run", cwd=root, env=STRICT)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert sorted(f for f, _ in _said(p.stderr)) == ["cold/worf.v2.md", "wiki/My Notes.md"], p.stderr


def test_the_mcp_resources_leave_it_out_with_one_warning(compacted: Path, tmp_path: Path) -> None:
    root = _misnamed(compacted, tmp_path)
    (root / ".squad/memory/hot" / f"{BAD}.md").write_text("# hot\n")
    stream = io.StringIO()
    log.configure("json", "info", stream=stream)
    try:
        listed = [resource_files(Layout(root)) for _ in range(2)]  # a client lists twice
    finally:
        log.configure("json", "error")
    assert listed[0] == listed[1] and {n for _, n, _ in listed[0]} >= {"riker", "decisions"}
    assert not any(" " in n or "." in n or "caf" in n for _, n, _ in listed[0])
    said = [
        (e["event"], e["file"].rsplit("/memory/", 1)[1])
        for e in map(json.loads, stream.getvalue().splitlines())
    ]
    assert said == [
        ("file_name_invalid", "hot/Data Officer.md"),
        ("file_name_not_utf8", "hot/caf\\xe9.md"),
        ("file_name_invalid", "cold/worf.v2.md"),
        ("file_name_invalid", "wiki/My Notes.md"),
    ]


def test_doctor_lists_each_with_the_name_to_rename_it_to(compacted: Path, tmp_path: Path) -> None:
    root = _misnamed(compacted, tmp_path)
    (root / ".squad/memory/cold" / "Worf Store").mkdir()
    (root / ".squad/memory/wiki" / f"{BAD}.md").write_text("# page\n")
    cfg = str(root / "scribed.toml")
    p = run_cli("--config", cfg, "doctor", cwd=root, env=STRICT)
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    lines = [ln for ln in p.stdout.decode().splitlines() if ln.startswith("memory file left out")]
    assert [ln.split(": ", 1)[1].split(" — ")[0] for ln in lines] == [
        ".squad/memory/hot/Data Officer.md",
        ".squad/memory/cold/Worf Store",
        ".squad/memory/cold/worf.v2.md",
        ".squad/memory/wiki/My Notes.md",
        ".squad/memory/wiki/caf\\xe9.md",
    ], p.stdout
    assert "rename it to worf-store to have it read" in lines[1] and "not valid UTF-8" in lines[4]
    p = run_cli("--config", cfg, "doctor", "--json", cwd=root, env=STRICT)
    assert len(json.loads(p.stdout)["team"]["misnamed"]) == 5
