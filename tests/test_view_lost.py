"""This machine's cold view (``cold/{agent}.md``, git-ignored) deleted or edited by hand, or deleted
by git when a pull untracks it, is no reason to delete the team's committed entries: only a fold
(a digest the view holds names the entry) or a promotion (its archive exists) retires one. Seen on
a newcomer's clone: a deleted view made the next run retire and delete every entry of the agent,
and the deletion reached every clone with the next push."""

from __future__ import annotations

from pathlib import Path

from helpers import run_cli

from scribed.compress.entry import split_entries


def _demo(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "demo"
    assert run_cli("demo", str(root)).returncode == 0
    cfg = str(root / "scribed.toml")
    assert run_cli("--config", cfg, "run-once").returncode == 0
    return root, cfg


def _store(root: Path, agent: str) -> list[str]:
    return sorted(p.name for p in (root / ".squad/memory/cold" / agent).glob("*.md"))


def test_a_deleted_view_keeps_every_entry_and_is_written_again(tmp_path: Path) -> None:
    root, cfg = _demo(tmp_path)
    before = _store(root, "riker")
    assert len(before) == 2
    view = root / ".squad/memory/cold/riker.md"
    view.unlink()
    p = run_cli("--config", cfg, "run-once")
    assert p.returncode == 0, p.stderr
    assert _store(root, "riker") == before
    assert not (root / ".squad/memory/cold/riker/retired.txt").exists()
    assert len(split_entries(view.read_text())[1]) == 2
    assert b"cold_view_restored" in p.stderr
    out = run_cli("--config", cfg, "context", "riker", "--include-cold").stdout.decode()
    assert "profile the nightly export job" in out or "rate" in out.lower(), out


def test_an_entry_cut_from_the_view_by_hand_comes_back(tmp_path: Path) -> None:
    root, cfg = _demo(tmp_path)
    view = root / ".squad/memory/cold/picard.md"
    pre, entries = split_entries(view.read_text())
    assert len(entries) == 1
    view.write_text(pre)
    assert run_cli("--config", cfg, "run-once").returncode == 0
    assert len(_store(root, "picard")) == 1
    assert len(split_entries(view.read_text())[1]) == 1
