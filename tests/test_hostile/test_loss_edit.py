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


def test_an_untimed_session_rewritten_loses_nothing(tmp_path: Path) -> None:
    """An Aider history has no time per message: its session's end is its start, which no edit
    moves, so the end cannot tell an edit from a rewrite. Such a range is compacted again (a
    duplicate rather than new content lost; found by review)."""
    root = tmp_path / "root"
    (root / ".squad/memory/hot").mkdir(parents=True)
    src = tmp_path / "md"
    src.mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[session]\nquiet_seconds = 1\n[cold]\nttl_days = 3650\n'
        f'[[sources]]\nkind = "markdown"\npath = "{src}"\nagent = "a0"\n'
    )
    f = src / ".aider.chat.history.md"

    def history(tag: str) -> str:
        asks = "".join(
            f"#### Please fix job {tag}{i} in ci/job_{tag}{i}.yml.\n\n"
            f"Decision: pin worker_{tag}_{i} to queue q_{tag}_{i} in src/w_{tag}/p_{i}.py.\n\n"
            for i in range(3)
        )
        return "\n# aider chat started at 2026-11-01 10:00:00\n\n" + asks

    f.write_text(history("old"))
    os.utime(f, (OLD, OLD))
    assert run_once(cfg)[1]["compacted"] == 1
    f.write_text(history("new"))  # the same session id and end, other content
    os.utime(f, (OLD + 100, OLD + 100))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert any("worker_new_2" in e for e in memory_entries(root))
