"""Issue 13: a transcript is known by its session id and content, not by its path. A renamed, moved
or rotated file is not compacted again; what it gains later is compacted once, on its own."""

from __future__ import annotations

import os
from pathlib import Path

from lossy_kit import OLD, duplicates, make_root, memory_entries, run_once, session_counts, write_session


def test_renamed_transcript_is_not_compacted_again(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-a.jsonl"
    write_session(f, "sess-a", 1)
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    f.rename(src / "rollout-a-renamed.jsonl")
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, out["entries"]
    assert duplicates(root) == {}


def test_rotated_transcript_that_grew(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-b.jsonl"
    write_session(f, "sess-b", 2)
    assert run_once(cfg)[1]["compacted"] == 1
    write_session(f, "sess-b", 2, part=1, append=True)
    assert run_once(cfg)[1]["compacted"] == 1  # the grown part: a second entry
    # rotated: moved into a dated folder, and the old name starts a new session
    dated = src / "2026" / "11" / "01"
    dated.mkdir(parents=True)
    moved = dated / "rollout-b.jsonl"
    f.rename(moved)
    write_session(f, "sess-c", 3)
    code, out, err = run_once(cfg)
    assert code == 0, err[-2000:]
    assert [e["session"] for e in out["entries"]] == ["sess-c"], out["entries"]
    # the moved file grows: only the new part is compacted
    write_session(moved, "sess-b", 2, part=2, append=True)
    os.utime(moved, (OLD + 100, OLD + 100))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    new = [e for e in memory_entries(root) if "worker_2_2_0" in e]
    assert len(new) == 1 and "worker_2_0_0" not in new[0] and "worker_2_1_0" not in new[0]
    assert duplicates(root) == {} and len(session_counts(root)) == 4
    assert run_once(cfg)[1]["compacted"] == 0


def test_copied_transcript_is_one_session(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-d.jsonl"
    write_session(f, "sess-d", 4)
    assert run_once(cfg)[1]["compacted"] == 1
    backup = src / "backup"
    backup.mkdir()
    (backup / "rollout-d.jsonl").write_bytes(f.read_bytes())
    os.utime(backup / "rollout-d.jsonl", (OLD, OLD))
    code, out, _ = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, out["entries"]
    assert duplicates(root) == {}
