"""The fixed cost of a small session (issue 15): a batch writes each cold file once, not once per
session, and the transcript copy costs one fsync. Counted here so a change that brings the per-session
writes back fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scribed import fsutil
from scribed.compress.entry import split_entries
from scribed.session.door import redacted
from scribed.tiers import cold, transcripts
from scribed.tiers.cold import Layout
from tests.test_core import T0, _entry_text
from tests.test_transcript_archive import cfg_dict, claude_file, make_root


def test_a_batch_writes_each_cold_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lay = Layout(tmp_path)
    writes: list[Path] = []
    real = cold.atomic_write

    def counting(path: Path, *a: object, **k: object) -> None:
        writes.append(path)
        real(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(cold, "atomic_write", counting)
    ids = []
    with cold.batched_appends():
        for i in range(6):
            text, eid = _entry_text(i)
            ids.append(eid)
            assert cold.append(lay, "kim" if i % 2 else "lee", text, eid, max_bytes=100_000, now=T0) == (
                True,
                0,
            )
        assert not writes, "nothing written before the batch ends"
        assert [e.entry_id for e in cold.parsed(lay.cold_file("kim"))[1]] == ids[1::2], "but it is seen"
        text, eid = _entry_text(1)
        assert cold.append(lay, "kim", text, eid, max_bytes=100_000, now=T0) == (False, 0)
    assert sorted(writes) == sorted([lay.cold_file("kim"), lay.cold_file("lee")])
    _, entries = split_entries(lay.cold_file("lee").read_text())
    assert [e.entry_id for e in entries] == ids[0::2]


def test_a_batch_keeps_what_an_agent_wrote_meanwhile(tmp_path: Path) -> None:
    lay = Layout(tmp_path)
    t0, id0 = _entry_text(0)
    cold.append(lay, "kim", t0, id0, max_bytes=100_000, now=T0)
    path = lay.cold_file("kim")
    with cold.batched_appends():
        t1, id1 = _entry_text(1)
        cold.append(lay, "kim", t1, id1, max_bytes=100_000, now=T0)
        path.write_text(path.read_text() + "\nagent note\n")
    data = path.read_text()
    assert "agent note" in data
    assert [e.entry_id for e in split_entries(data)[1]] == [id0, id1]


def test_a_fold_in_a_batch_writes_the_held_entries_first(tmp_path: Path) -> None:
    """A fold archives entries; the cold file must hold them before (a ledger rebuilt from the archive
    after a crash would otherwise name entries no cold file holds)."""
    lay = Layout(tmp_path)
    ids: list[str] = []
    folded = 0
    with cold.batched_appends():
        for i in range(8):
            text, eid = _entry_text(i)
            ids.append(eid)
            folded = cold.append(lay, "kim", text, eid, max_bytes=6000, now=T0)[1]
            if folded:
                break
        on_disk = cold._entry_ids(split_entries(lay.cold_file("kim").read_text())[1])
    assert folded
    assert set(ids) <= on_disk, "every entry of the batch is in the file (or a digest of it) after the fold"


def test_the_transcript_copy_costs_one_fsync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scribed import config

    root, src = make_root(tmp_path), tmp_path / "projects"
    path = claude_file(src)
    cfg = config.from_dict(cfg_dict(root, src))
    count = [0]
    real = os.fsync

    def fsync(fd: int) -> None:
        count[0] += 1
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with fsutil.deferred_dir_sync():
        rec = transcripts.archive(
            cfg, Layout(root), path, kind="claude", session=redacted("s1"), agent=redacted("riker"),
            shown_as=redacted("p"),
        )  # fmt: skip
        assert count[0] == 1
    assert rec is not None and rec.path.is_file()
    assert [r.sessions for r in transcripts.iter_archives(rec.path.parent)] == [["s1"]]
