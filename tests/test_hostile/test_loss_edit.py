"""A transcript edited in place after it was compacted (a line removed, its tail cut) is the same
session: it gets no second entry. One rewritten with a session that goes on past the entry's end
is compacted again (what an entry holds is then no longer what the file says)."""

from __future__ import annotations

import os
from pathlib import Path

from lossy_kit import OLD, make_root, memory_entries, run_once, write_session


def _lines(f: Path) -> list[str]:
    return f.read_text().splitlines(keepends=True)


def test_a_line_removed_in_the_middle_adds_no_entry(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-e.jsonl"
    write_session(f, "sess-e", 5)
    assert run_once(cfg)[1]["compacted"] == 1
    lines = _lines(f)
    f.write_text("".join(lines[:2] + lines[3:]))  # one assistant message scrubbed by hand
    os.utime(f, (OLD, OLD))
    code, out, _ = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, out["entries"]
    assert len(memory_entries(root)) == 1


def test_a_cut_tail_adds_no_entry(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-f.jsonl"
    write_session(f, "sess-f", 6)
    assert run_once(cfg)[1]["compacted"] == 1
    f.write_text("".join(_lines(f)[:-2]))
    os.utime(f, (OLD, OLD))
    code, out, _ = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, out["entries"]
    assert len(memory_entries(root)) == 1


def test_a_rewrite_that_goes_on_is_compacted_again(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-g.jsonl"
    write_session(f, "sess-g", 7)
    assert run_once(cfg)[1]["compacted"] == 1
    write_session(f, "sess-g", 7, part=3)  # the same id, other turns, ending 30 minutes later
    os.utime(f, (OLD + 100, OLD + 100))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert any("worker_7_3_0" in e for e in memory_entries(root))
