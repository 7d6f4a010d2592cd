"""Per-session fixed cost of run-once (issue 15), round 2. Hot files re-seeded inside a batch are
written once per agent per batch, after the batch's cold files and their folders' sync, so a seed on
disk points only at a durable entry; transcript copies are synced once per batch before their
sidecars list them; a source file's ledger key is redacted once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from test_crash import backlog, check_consistent
from test_hot_reseed import Log

from scribed import config as config_mod
from scribed import fsutil
from scribed.core import scribe
from scribed.core.scribe import Scribe
from scribed.tiers import cold, live


def test_held_swaps_compare_against_the_held_bytes_and_write_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = tmp_path / "memory"
    path = mem / "hot" / "a.md"
    writes: list[bytes] = []
    real = live._swap_now

    def spy(p: Path, expected: bytes | None, data: bytes, *, base: Path) -> bool:
        writes.append(data)
        return real(p, expected, data, base=base)

    monkeypatch.setattr(live, "_swap_now", spy)
    with live.batched_writes(Log()):
        assert live.swap(path, None, b"one", base=mem)
        assert live.current_bytes(path) == b"one"
        assert not path.exists()  # held
        assert not live.swap(path, None, b"two", base=mem)  # compared with the held bytes
        assert live.swap(path, b"one", b"three", base=mem)
    assert path.read_bytes() == b"three"
    assert writes == [b"three"]


def test_a_hot_file_an_agent_wrote_during_the_batch_is_left_in_place(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    path = mem / "hot" / "a.md"
    log = Log()
    with live.batched_writes(log):
        assert live.swap(path, None, b"seed", base=mem)
        path.parent.mkdir(parents=True)
        path.write_bytes(b"the agent's own words\n")
    assert path.read_bytes() == b"the agent's own words\n"
    assert log.events("warning") == ["hot_changed_during_batch"]


def test_a_batch_writes_each_hot_file_once_after_its_cold_files_are_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = backlog(tmp_path, 12, agents=3)
    events: list[str] = []
    real_swap, real_sync, real_write = live._swap_now, fsutil.fsync_dir, cold.atomic_write

    def swap(p: Path, expected: bytes | None, data: bytes, *, base: Path) -> bool:
        events.append("hot write")
        return real_swap(p, expected, data, base=base)

    def sync(path: Path, *, now: bool = False) -> None:
        if now or getattr(fsutil._deferred, "dirs", None) is None:
            events.append(f"sync {Path(path).name}")
        real_sync(path, now=now)

    def write(path: Path, text: str, **kw: Any) -> None:
        events.append(f"write {path.parent.name}")
        real_write(path, text, **kw)

    monkeypatch.setattr(live, "_swap_now", swap)
    monkeypatch.setattr(fsutil, "fsync_dir", sync)
    monkeypatch.setattr(cold, "atomic_write", write)
    monkeypatch.setattr(scribe, "BATCH_SECONDS", 600.0)  # one batch, however slow the machine
    s = Scribe(config_mod.load(str(cfg)))
    s.ledger._db.set_trace_callback(lambda sql: events.append(sql.split()[0].upper()))
    assert s.run_once(force=True).compacted == 12
    s.close()
    assert events.count("hot write") == 3, events  # one per agent, not one per session
    first = events.index("hot write")
    last_cold = max(i for i, e in enumerate(events[:first]) if e == "write cold")
    assert "sync cold" in events[last_cold:first], events[last_cold:first]
    assert "COMMIT" in events[first:]  # the batch commits after its hot files are written
    check_consistent(cfg, 12)
    root = config_mod.load(str(cfg)).root_path / ".squad/memory"
    for agent in ("a0", "a1", "a2"):
        seed = (root / "hot" / f"{agent}.md").read_text()
        entry = re.search(r"^entry: (\S+)$", seed, re.M)
        assert entry is not None, seed
        assert entry.group(1) in cold.known_ids(root / "cold" / f"{agent}.md")


def test_a_batch_syncs_its_transcript_copies_once_before_listing_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy's data is written with no fsync of its own; one sync at the batch's end makes them all
    durable, and only then are the sidecars that list them written (then the ledger commits)."""
    import os

    from scribed.tiers import transcripts

    cfg = backlog(tmp_path, 12, agents=3)
    events: list[str] = []
    real_sync, real_data, real_write = os.sync, transcripts._write, transcripts.atomic_write

    def sync() -> None:
        events.append("sync")
        real_sync()

    def data(source: Path, data_path: Path, *, sync: bool = True) -> tuple[int, int]:
        events.append("data fsync" if sync else "data")
        return real_data(source, data_path, sync=sync)

    def write(path: Path, text: str, **kw: Any) -> None:
        events.append("sidecar")
        real_write(path, text, **kw)

    monkeypatch.setattr(os, "sync", sync)
    monkeypatch.setattr(transcripts, "_write", data)
    monkeypatch.setattr(transcripts, "atomic_write", write)
    monkeypatch.setattr(scribe, "BATCH_SECONDS", 600.0)
    s = Scribe(config_mod.load(str(cfg)))
    s.ledger._db.set_trace_callback(lambda sql: events.append(sql.split()[0].upper()))
    assert s.run_once(force=True).compacted == 12
    s.close()
    assert events.count("data") == 12, events  # no fsync per copy …
    assert events.count("sync") == 1  # … one sync for the batch …
    first = events.index("sidecar")
    assert events.count("sidecar") == 12
    assert events.index("sync") < first  # … before any sidecar lists a copy …
    assert "COMMIT" in events[first:]  # … and the ledger commits after them
    check_consistent(cfg, 12)
    root = config_mod.load(str(cfg)).root_path
    dest = transcripts.folder(config_mod.load(str(cfg)), cold.Layout(root))
    assert len(list(transcripts.iter_archives(dest))) == 12


def test_a_copy_archived_again_in_a_batch_is_not_pruned_by_its_old_sidecar(tmp_path: Path) -> None:
    """Inside a batch a copy's new sidecar waits for the batch's end; the retention sweep must not
    take the old one's date for the copy's and delete the copy just written."""
    from datetime import UTC, datetime, timedelta

    from test_transcript_archive import cfg_dict, claude_file, make_root

    from scribed.session.door import redacted
    from scribed.tiers import transcripts

    root, src = make_root(tmp_path), tmp_path / "projects"
    path = claude_file(src)
    cfg = config_mod.from_dict(cfg_dict(root, src, retention_days=30))
    layout = cold.Layout(cfg.root_path)
    old = datetime(2025, 1, 1, tzinfo=UTC)
    kw: dict[str, Any] = {
        "kind": "claude",
        "session": redacted("s"),
        "agent": redacted("a"),
        "shown_as": redacted("p"),
    }
    transcripts.archive(cfg, layout, path, now=old, **kw)
    path.write_text(path.read_text() + "\n")  # grown: archived again, 40 days on
    transcripts._last_prune.clear()
    with transcripts.batched_copies(Log()):
        transcripts.archive(cfg, layout, path, now=old + timedelta(days=40), **kw)
    (rec,) = transcripts.iter_archives(transcripts.folder(cfg, layout))
    assert rec.archived_at.startswith("2025-02-10")


def test_a_source_key_is_redacted_once_per_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """run-once asks for a file's ledger key five or six times; the path's redaction was ~1 ms of a
    small session's cost. The rules are fixed for a process, so the key is kept."""
    from scribed.core import ledger, ledger_schema

    calls: list[str] = []
    real = ledger_schema.redact_path

    def spy(path: str) -> str:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(ledger_schema, "redact_path", spy)
    raw = "/tmp/source-key-cache/DB_PASSWORD=hunter2hunter2 notes.md"
    keys = {ledger.source_key(raw), ledger.source_key(Path(raw)), ledger.source_key(raw)}
    assert len(keys) == 1
    assert "hunter2hunter2" not in keys.pop()
    assert calls == [raw]


def test_a_batch_that_fails_writes_no_hot_file(tmp_path: Path) -> None:
    """Its cold files may not have been written (disk full): a seed must not point at them."""
    mem = tmp_path / "memory"
    path = mem / "hot" / "a.md"

    def batch() -> None:
        with live.batched_writes(Log()):
            assert live.swap(path, None, b"seed", base=mem)
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        batch()
    assert not path.exists()
    assert live._held_files() is None
