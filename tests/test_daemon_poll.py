"""The stat-light poller: what it notices, and that an idle poll stats folders, not every file.
Also: one unit of work that raises is logged and retried later, and the worker lives on."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_daemon import FIRST, FakeClock, codex_records, make_daemon, squad  # noqa: F401  (fixture)

from scribed.daemon import poll
from scribed.daemon.poll import Poller
from scribed.daemon.work import UNRECORDED_RETRY

FOLDERS, PER_FOLDER = 20, 50


def tree(base: Path) -> list[Path]:
    files = []
    for d in range(FOLDERS):
        folder = base / f"2026/01/{d:02d}"
        folder.mkdir(parents=True)
        for i in range(PER_FOLDER):
            p = folder / f"rollout-{i}.jsonl"
            p.write_text("{}\n")
            files.append(p)
    old = time.time() - 3600  # settled folders and files: nothing looks freshly changed
    for p in [*files, *{p.parent for p in files}, base / "2026/01", base / "2026", base]:
        os.utime(p, (old, old))
    return files


def make_poller(base: Path, seen: list[str], interval: float = 5.0) -> Poller:
    p = Poller(interval, seen.append, lambda path: path.endswith(".jsonl"))
    p.schedule(str(base), recursive=True)
    return p


def test_idle_poll_stats_folders_and_a_slice(tmp_path: Path) -> None:
    files = tree(tmp_path)
    seen: list[str] = []
    p = make_poller(tmp_path, seen)
    p.start()
    p.stop()
    p.join(5)
    before = p.stats
    p.poll()
    per_poll = p.stats - before
    dirs = FOLDERS + 3  # the day folders, 2026/, 2026/01/ and the root
    slice_ = -(-len(files) * 5 // int(poll.SWEEP_SECONDS))
    assert per_poll <= dirs + slice_, per_poll  # not one stat per file per poll
    assert per_poll < len(files) / 4
    assert not seen
    # over one sweep every file was looked at once: an append to an old file is noticed
    with files[-1].open("a") as fh:
        fh.write("{}\n")
    for _ in range(int(poll.SWEEP_SECONDS / 5) + 1):
        p.poll()
    assert seen == [str(files[-1])]


def test_poller_sees_new_changed_renamed_and_growing(tmp_path: Path) -> None:
    files = tree(tmp_path)
    seen: list[str] = []
    p = make_poller(tmp_path, seen)
    p.start()
    p.stop()
    p.join(5)
    new = files[0].parent / "rollout-new.jsonl"
    new.write_text("{}\n")
    (files[0].parent / "notes.txt").write_text("x")  # not wanted: never reported
    sub = tmp_path / "2026/02/01"
    sub.mkdir(parents=True)
    (sub / "rollout-a.jsonl").write_text("{}\n")
    tmp = files[5].parent / ".tmp-x"
    tmp.write_text("{}\n{}\n")
    tmp.replace(files[5])  # an atomic rewrite changes the folder too
    files[9].unlink()
    p.poll()
    assert sorted(seen) == sorted([str(new), str(sub / "rollout-a.jsonl"), str(files[5])])
    seen.clear()
    with new.open("a") as fh:  # seen changing: now followed on every poll
        fh.write("{}\n")
    p.poll()
    assert seen == [str(new)]
    p.poll()
    assert seen == [str(new)]


def test_poller_thread_runs_and_notices_a_vanished_root(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    seen: list[str] = []
    p = make_poller(root, seen, interval=0.05)
    p.start()
    try:
        (root / "rollout-x.jsonl").write_text("{}\n")
        end = time.monotonic() + 10
        while not seen and time.monotonic() < end:
            time.sleep(0.02)
        assert seen == [str(root / "rollout-x.jsonl")]
        (root / "rollout-x.jsonl").unlink()
        root.rmdir()
        while not p.vanished and time.monotonic() < end:
            time.sleep(0.02)
        assert p.vanished and p.is_alive()
    finally:
        p.stop()
        p.join(5)


def test_a_unit_of_work_that_raises_is_retried_later(
    tmp_path: Path,
    squad: tuple[Path, Path],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock(datetime.now(UTC))
    d = make_daemon(tmp_path, squad, clock, quiet=60)
    try:
        f = squad[1] / "rollout-a.jsonl"
        f.write_text(codex_records("a", datetime(2026, 11, 20, 10, tzinfo=UTC), FIRST))

        def broken(*_a: object, **_k: object) -> None:
            raise KeyError("a bug in the core")

        monkeypatch.setattr(d.scribe, "process", broken)
        out = d.dispatch.work(str(f))
        assert out is not None and out.status == "failed" and "KeyError" in out.reason
        retry = d.dispatch.timers.deadline(str(f), "retry")
        assert retry == pytest.approx(clock().timestamp() + UNRECORDED_RETRY)
        # through a real worker thread: it logs, schedules the retry and lives on
        d.dispatch.start_workers(1)
        d.dispatch.submit(str(f))
        end = time.monotonic() + 10
        while d.dispatch.queue.depth and time.monotonic() < end:
            time.sleep(0.02)
        time.sleep(0.1)
        assert d.dispatch.dead() == []  # the worker lives on
        assert d.dispatch.last_result["status"] == "failed"
    finally:
        d._stopping.set()
        d.dispatch.join(5)
        d.scribe.close()
