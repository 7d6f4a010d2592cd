"""Issue 13: a transcript whose modification time is in the future (clock skew, a copied file) counts
as modified when scribed first sees it, so it is compacted after the quiet time, not never."""

from __future__ import annotations

import os
import time
from pathlib import Path

from lossy_kit import daemon, make_root, memory_entries, run_once, wait_for, write_session

DAY = 86_400


def test_future_mtime_counts_as_now_for_run_once(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path, quiet=1)
    f = src / "rollout-f.jsonl"
    write_session(f, "sess-f", 5)
    future = time.time() + DAY
    os.utime(f, (future, future))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, "just seen: not quiet yet"
    time.sleep(2.1)
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert any("worker_5_0_0" in e for e in memory_entries(root))
    assert run_once(cfg)[1]["compacted"] == 0


def test_future_mtime_counts_as_now_for_the_daemon(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path, quiet=1)
    log = tmp_path / "daemon.log"
    with daemon(cfg, log):
        f = src / "rollout-g.jsonl"
        write_session(f, "sess-g", 6, old=False)
        future = time.time() + DAY
        os.utime(f, (future, future))
        wait_for(lambda: any("worker_6_0_0" in e for e in memory_entries(root)), 30, "compaction")
