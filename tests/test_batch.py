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
from scribed.core.scribe import Scribe


def _scribe(cfg: Path) -> Scribe:
    return Scribe(config_mod.load(str(cfg)))


def test_one_commit_per_batch_after_the_folders_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = backlog(tmp_path, 12)
    s = _scribe(cfg)
    events: list[str] = []
    real = fsutil.fsync_dir

    def spy(path: Path) -> None:
        if getattr(fsutil._deferred, "dirs", None) is None:
            events.append(f"sync {Path(path).name}")
        real(path)

    monkeypatch.setattr(fsutil, "fsync_dir", spy)
    s.ledger._db.set_trace_callback(lambda sql: events.append(sql.split()[0].upper()))
    rep = s.run_once(force=True)
    s.close()
    assert rep.compacted == 12
    commits = [i for i, e in enumerate(events) if e == "COMMIT"]
    assert len(commits) == 1, events  # one batch, not two or more per file
    assert "sync cold" in events[: commits[0]], events[-20:]  # the cold folder was synced first
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
