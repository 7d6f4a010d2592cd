"""Issue 13: a lost or 0-byte ledger is rebuilt from the provenance the memory files carry (cold
entries, archived originals of folded entries, the wiki), so the next run adds no duplicate entry.
Deleted or truncated between runs, in the middle of a run, and under the running daemon."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from lossy_kit import (
    daemon,
    duplicates,
    make_root,
    memory_entries,
    run_once,
    scribed,
    session_counts,
    wait_for,
    write_session,
)

from scribed.core.ledger import Ledger

N = 20
GROWN = (2, 7, 11, 16)


def ledger_path(root: Path) -> Path:
    return root / ".squad/memory/.scribed/ledger.sqlite"


def lose(path: Path, action: str) -> None:
    if action == "delete":
        path.unlink()  # as `rm` does: the -wal/-shm files, if any, stay behind
    elif action == "garbage":
        path.write_bytes(b"this is not a database\n" * 300)
    else:
        with path.open("r+b") as fh:
            fh.truncate(0)


def backlog(tmp_path: Path) -> tuple[Path, list[Path], Path]:
    """N sessions over two agents with a small cold budget (entries get folded and archived); a few of
    them grew after their first compaction, so they have two entries each."""
    root, srcs, cfg = make_root(tmp_path, agents=2, cold_max=6000)
    for i in range(N):
        write_session(srcs[i % 2] / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i)
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == N, err[-2000:]
    for i in GROWN:
        write_session(srcs[i % 2] / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i, part=1, append=True)
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == len(GROWN), err[-2000:]
    return root, srcs, cfg


@pytest.mark.parametrize("action", ["delete", "truncate", "garbage"])
def test_ledger_lost_between_runs(tmp_path: Path, action: str) -> None:
    root, _srcs, cfg = backlog(tmp_path)
    before = session_counts(root)
    assert len(before) == N + len(GROWN) and not duplicates(root)
    assert any((root / ".squad/memory/.scribed/archive/cold").glob("*.gz")), "the budget made folds"
    lose(ledger_path(root), action)
    code, out, err = run_once(cfg)
    assert code == 0, err[-2000:]
    assert out["compacted"] == 0, out["entries"]
    assert duplicates(root) == {} and session_counts(root) == before
    assert "ledger_rebuilt" in err
    if action == "garbage":
        assert "ledger_corrupt" in err and list(ledger_path(root).parent.glob("ledger.sqlite.corrupt-*"))
    led = Ledger(ledger_path(root), readonly=True)
    try:
        assert led.counts()["done"] == N
    finally:
        led.close()
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 0 and "ledger_rebuilt" not in err, err[-2000:]


@pytest.mark.parametrize("action", ["delete", "truncate"])
def test_ledger_lost_mid_run(tmp_path: Path, action: str) -> None:
    root, srcs, cfg = make_root(tmp_path, agents=2, cold_max=6000)
    first = range(N // 2)
    for i in first:
        write_session(srcs[i % 2] / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i)
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == len(first), err[-2000:]
    for i in GROWN[:2]:
        write_session(srcs[i % 2] / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i, part=1, append=True)
    for i in range(N // 2, N):
        write_session(srcs[i % 2] / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i)
    # The ledger goes away after the 6th of 20 files; the run goes on (a write in flight may fail: exit 1).
    code, out, err = run_once(cfg, hooks={"LOSSY_LEDGER": action, "LOSSY_AFTER": "6"})
    assert code in (0, 1) and "Traceback" not in err, err[-2000:]
    for _ in range(2):
        code, out, err = run_once(cfg)
        assert code == 0, err[-2000:]
    assert out["compacted"] == 0
    counts = session_counts(root)
    assert duplicates(root) == {}
    assert sorted({k.split(" ")[0] for k in counts}) == [f"sess-{i:02d}" for i in range(N)]
    assert len(counts) == N + 2
    text = "".join(memory_entries(root))
    for i in range(N):
        assert f"worker_{i}_0_0" in text, i
    for i in GROWN[:2]:
        assert f"worker_{i}_1_0" in text, i
    sqlite3.connect(ledger_path(root)).execute("PRAGMA integrity_check").fetchone()


def test_ledger_lost_after_promotion(tmp_path: Path) -> None:
    """Entries promoted to the wiki are known by their archived originals, or by the wiki alone."""
    root, (src,), cfg = make_root(tmp_path, ttl_days=30)
    for i in range(8):
        write_session(src / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i)
    assert run_once(cfg)[1]["compacted"] == 8
    code, out, err = scribed("--config", str(cfg), "promote", "--as-of", "2027-06-01")
    assert code == 0, err[-2000:]
    promoted = root / ".squad/memory/.scribed/archive/promoted"
    assert len(list(promoted.rglob("*.md.gz"))) == 8 and not memory_entries_in_cold(root)
    for drop_archive in (False, True):
        if drop_archive:
            shutil.rmtree(promoted)  # only the wiki's sources name the entries now
        ledger_path(root).unlink()
        code, out, err = run_once(cfg)
        assert code == 0 and out["compacted"] == 0, (drop_archive, out["entries"])
        assert "ledger_rebuilt" in err


def memory_entries_in_cold(root: Path) -> list[str]:
    cold = root / ".squad/memory/cold"
    return [p.read_text() for p in cold.glob("*.md") if "· session=" in p.read_text()]


def test_daemon_keeps_going_after_its_ledger_is_deleted(tmp_path: Path) -> None:
    root, srcs, cfg = make_root(tmp_path, quiet=1, cold_max=6000)
    (src,) = srcs
    for i in range(10):
        write_session(src / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i)
    log = tmp_path / "daemon.log"
    with daemon(cfg, log):
        wait_for(lambda: len(session_counts(root)) == 10, 60, "catch-up of 10 sessions")
        ledger_path(root).unlink()
        for i in (1, 4, 8):
            write_session(src / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i, part=1, append=True, old=False)
        for i in range(10, 15):
            write_session(src / f"rollout-{i:02d}.jsonl", f"sess-{i:02d}", i, old=False)
        wait_for(lambda: len(session_counts(root)) >= 18, 60, "the grown and the new sessions")
        wait_for(lambda: ledger_path(root).exists(), 10, "the ledger back")
    assert duplicates(root) == {}
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, err[-2000:]
    assert duplicates(root) == {} and len(session_counts(root)) == 18
    assert "Traceback" not in log.read_text()
