"""run_once batches its ledger writes: one commit per batch of source files, made only after the
folders written in the batch were synced, so a crash never leaves a ledger row whose cold entry
is not durable, and a batch cut short is redone on rerun without duplicates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_crash import backlog, check_consistent

from scribed import config as config_mod
from scribed import fsutil
from scribed.core import compact_session
from scribed.core import scribe as scribe_mod
from scribed.core.scribe import Scribe


def _scribe(cfg: Path) -> Scribe:
    return Scribe(config_mod.load(str(cfg)))


def test_one_commit_per_batch_after_the_folders_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = backlog(tmp_path, 12)
    s = _scribe(cfg)
    events: list[str] = []
    real = fsutil.fsync_dir

    def spy(path: Path, *, now: bool = False) -> None:
        if now or getattr(fsutil._deferred, "dirs", None) is None:
            events.append(f"sync {Path(path).name}")
        real(path, now=now)

    monkeypatch.setattr(fsutil, "fsync_dir", spy)
    monkeypatch.setattr(scribe_mod, "BATCH_SECONDS", 600.0)  # one batch, however loaded the machine
    s.ledger._db.set_trace_callback(lambda sql: events.append(sql.split()[0].upper()))
    checkpoint = s.ledger.checkpoint

    def fold_checkpoint() -> None:
        events.append("fold")
        checkpoint()

    monkeypatch.setattr(s.ledger, "checkpoint", fold_checkpoint)
    rep = s.run_once(force=True)
    s.close()
    assert rep.compacted == 12
    commits = [i for i, e in enumerate(events) if e == "COMMIT"]
    # The run's housekeeping (a ledger row written before any session: issue 31's content key) may
    # commit on its own; then one batch, which commits early only before a fold. This backlog's
    # small cold budget folds often, how often depending on the entries' sizes and so on the length
    # of tmp_path in their provenance (3 folds under /tmp/x/t, 6 under pytest's tmp_path).
    first_cold = events.index("sync cold")
    batch = [c for c in commits if c > first_cold]
    assert len(commits) - len(batch) <= 1, events
    ends = [c for k, c in enumerate(batch) if events[c - 1] != "fold" or k == len(batch) - 1]
    assert ends == batch[-1:] and len(commits) < 12, events
    starts = [commits[len(commits) - len(batch) - 1] + 1 if len(commits) > len(batch) else 0]
    starts += [c + 1 for c in batch[:-1]]
    for start, c in zip(starts, batch, strict=True):
        assert "sync cold" in events[start:c], events[start:c][-20:]  # the cold folder was synced first
    check_consistent(cfg, 12)


def test_a_batch_cut_short_is_redone_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = backlog(tmp_path, 10)
    real = compact_session.cold.append
    calls = [0]

    def crash(*a: Any, **k: Any) -> Any:
        calls[0] += 1
        if calls[0] == 7:
            raise KeyboardInterrupt  # escapes the per-file guard, as a kill would
        return real(*a, **k)

    monkeypatch.setattr(compact_session.cold, "append", crash)
    monkeypatch.setattr(scribe_mod, "BATCH_SECONDS", 600.0)  # one batch, however loaded the machine
    s = _scribe(cfg)
    with pytest.raises(KeyboardInterrupt):
        s.run_once(force=True)
    assert s.ledger.counts()["done"] == 0  # the batch was not committed …
    s.close()
    monkeypatch.setattr(compact_session.cold, "append", real)
    s = _scribe(cfg)
    rep = s.run_once(force=True)  # … so the rerun redoes it: six entries found in cold, four new
    s.close()
    assert rep.compacted == 4
    check_consistent(cfg, 10)


def test_a_fold_inside_a_batch_never_drops_an_uncommitted_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fold keeps only a few dozen of the folded ids in its digest; an entry folded away before its
    ledger row committed would be compacted again after a crash. So a fold inside a batch first
    commits the batch so far. Found by review: 60 sessions, a crash before the batch's commit, and
    the rerun appended 12 sessions a second time."""
    import contextlib
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import gen

    from scribed.core.ledger import Ledger
    from scribed.tiers import cold

    root, tr = tmp_path / "root", tmp_path / "root" / "transcripts"
    cfg = config_mod.from_dict(
        {"root": str(root), "session": {"quiet_seconds": 0}, "cold": {"max_bytes": 4096},
         "compress": {"backend": "extractive", "workers": 1}, "log": {"format": "json", "level": "error"},
         "sources": gen.sources(tr, ("claude",))}
    )  # fmt: skip
    sessions = list(gen.iter_sessions(5, 60, min_kb=3, max_kb=6, formats=("claude",)))
    gen.write_session(sessions[0], tr)
    s = Scribe(cfg)
    assert s.run_once(force=True).compacted == 1  # an earlier, committed batch
    s.close()
    for x in sessions[1:]:
        gen.write_session(x, tr)
    real = Ledger.batch

    @contextlib.contextmanager
    def crash_before_commit(self: Ledger) -> Any:
        with real(self):
            yield
            raise KeyboardInterrupt  # the batch's files are written and synced; its commit never comes

    monkeypatch.setattr(Ledger, "batch", crash_before_commit)
    s = Scribe(cfg)
    with pytest.raises(KeyboardInterrupt):
        s.run_once(force=True)
    s.close()
    monkeypatch.setattr(Ledger, "batch", real)
    s = Scribe(cfg)
    assert s.run_once(force=True).failed == 0
    s.close()
    _, entries = cold.split_entries((root / ".squad/memory/cold/riker.md").read_text("utf-8"))
    assert cold.sessions_held(entries) == 60  # 72 before the fix: 12 sessions twice


def test_a_fold_archive_is_synced_before_the_cold_file_that_drops_its_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a batch folder syncs wait for the batch's end; a fold's archive must not: after a
    power cut the rewritten cold file (holding only the digest) could survive without the archive
    of the entries it dropped."""
    from scribed.tiers import cold

    cfg = backlog(tmp_path, 12)
    events: list[tuple[str, str]] = []
    real_sync, real_archive, real_write = cold.fsync_dir, cold.write_gzip_archive, cold.atomic_write

    def sync(path: Path, *, now: bool = False) -> None:
        events.append(("sync-now" if now else "sync-later", Path(path).name))
        real_sync(path, now=now)

    def archive(dest: Path, data: bytes, **kw: Any) -> None:
        events.append(("archive", dest.parent.name))
        real_archive(dest, data, **kw)

    def write(path: Path, text: str, **kw: Any) -> None:
        events.append(("write", path.parent.name))
        real_write(path, text, **kw)

    monkeypatch.setattr(cold, "fsync_dir", sync)
    monkeypatch.setattr(cold, "write_gzip_archive", archive)
    monkeypatch.setattr(cold, "atomic_write", write)
    s = _scribe(cfg)
    assert s.run_once(force=True).compacted == 12
    s.close()
    assert ("archive", "cold") in events  # this backlog folds
    unsynced = False
    for kind, folder in events:
        if kind == "archive":
            unsynced = True
        elif kind == "sync-now" and folder == "cold":
            unsynced = False
        elif kind == "write":
            assert not unsynced, events
