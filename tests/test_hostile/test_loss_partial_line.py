"""Issue 13: a JSONL transcript's last line without its newline yet is a record still being written.
It waits for its newline while the session is open, is read as it is once the session has ended, and
is never read twice into two entries when the writer finishes it later."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from lossy_kit import OLD, codex, facts, make_root, memory_entries, run_once

from scribed.sources import common

T0 = datetime(2026, 11, 3, 9, tzinfo=UTC)


def entries_with(root: Path, needle: str) -> int:
    return sum(needle in e for e in memory_entries(root))


@pytest.mark.parametrize("how", ["force", "quiet"])
def test_unterminated_last_record_is_never_read_twice(tmp_path: Path, how: str) -> None:
    root, (src,), cfg = make_root(tmp_path, quiet=3600)
    f = src / "rollout-p.jsonl"
    f.write_text(codex("sess-p", T0, facts(1, 0)).rstrip("\n"))  # the last record has no newline yet
    more: tuple[str, ...] = ("--force",) if how == "force" else ()
    if how == "quiet":
        os.utime(f, (OLD, OLD))
    code, out, err = run_once(cfg, *more)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert entries_with(root, "worker_1_0_3") == 1, "the session had ended: its last record is read"
    with f.open("a") as fh:  # the writer finishes the line and the session goes on
        fh.write("\n" + codex("sess-p", T0.replace(hour=10), facts(1, 1), meta=False))
    if how == "quiet":
        os.utime(f, (OLD + 60, OLD + 60))
    code, out, err = run_once(cfg, *more)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert entries_with(root, "worker_1_1_0") == 1
    assert entries_with(root, "worker_1_0_3") == 1, "the finished line was read again into the next entry"
    code, out, err = run_once(cfg, *more)
    assert code == 0 and out["compacted"] == 0, err[-2000:]


def test_half_written_record_waits_for_its_newline(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path, quiet=3600)
    f = src / "rollout-h.jsonl"
    whole = codex("sess-h", T0, facts(2, 0))
    head, last = whole.rstrip("\n").rsplit("\n", 1)
    f.write_text(head + "\n" + last[: len(last) // 2])  # the writer is in the middle of a record
    code, out, err = run_once(cfg)  # not quiet: the session is open
    assert code == 0 and out["compacted"] == 0, err[-2000:]
    assert "malformed" not in err, "a record still being written is not a malformed line"
    f.write_text(whole)
    os.utime(f, (OLD, OLD))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1 and "malformed" not in err, err[-2000:]
    assert entries_with(root, "worker_2_0_3") == 1


def test_iter_jsonl_holds_only_the_unterminated_tail(tmp_path: Path) -> None:
    iter_jsonl, hold_partial_tail = common.iter_jsonl, common.hold_partial_tail
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"a":1}\n\n{"b":2}\r\n{"c":3}')
    assert [r.obj for r in iter_jsonl(p)] == [{"a": 1}, {"b": 2}, {"c": 3}]
    with hold_partial_tail():
        assert [(r.obj, r.end_offset) for r in iter_jsonl(p)] == [({"a": 1}, 8), ({"b": 2}, 18)]
        p.write_bytes(p.read_bytes() + b"\n")
        assert [r.obj for r in iter_jsonl(p)][-1] == {"c": 3}
    with hold_partial_tail(False):
        p.write_bytes(b'{"a":1}\n' + json.dumps({"d": 4}).encode())
        assert [r.obj for r in iter_jsonl(p)] == [{"a": 1}, {"d": 4}]
