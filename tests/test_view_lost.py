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


def test_digests_folding_digests_stay_folded_and_the_view_bounded(tmp_path: Path) -> None:
    """A fold retires what it folded even when its digest does not list it: a digest lists a
    bounded number of ids and never the older digest it folds, whose text is in its fold archive.
    Seen on the 1,000-file burst (tests/test_daemon_load.py): with only listed ids as evidence, the
    older digests came back and the 64 KB view grew to 96 KB."""
    from test_daemon import write_config, write_rollouts

    root, src = tmp_path / "root", tmp_path / "sessions"
    (root / ".squad").mkdir(parents=True)
    src.mkdir()
    cfg = write_config(tmp_path / "c.toml", root, src, quiet=0, extra="[cold]\nmax_bytes = 8192\n")
    write_rollouts(src, 120)
    for _ in range(2):
        p = run_cli("--config", str(cfg), "run-once", "--force", timeout=300)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        assert b"cold_view_restored" not in p.stderr
    view = root / ".squad/memory/cold/worf.md"
    assert len(view.read_bytes()) <= 8192
    listed = {e.entry_id for e in split_entries(view.read_text())[1]}
    stored = {
        p.name.rsplit("-", 2)[-2] + "-" + p.name.rsplit("-", 1)[-1][:-3]
        for p in (view.parent / "worf").glob("*.md")
    }
    assert listed == stored, (listed, stored)
