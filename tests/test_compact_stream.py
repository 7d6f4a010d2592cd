"""The compact loop meets a many-session file one session at a time (issue 15, item 4).

An Aider history holds every run in one file. The loop decides from each session's brief (its id,
agent, end state and turns' end offsets) and reads the sessions themselves again one at a time,
so compacting the file holds about one session, not every session's turns (about 1.45 times the
file when the loop took one parse of the whole file).
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from test_markdown_stream import _aider_history

from scribed import config as config_mod
from scribed import sources
from scribed.core.compact_read import MARKDOWN_WHOLE_MAX
from scribed.core.compact_session import SessionCompactor
from scribed.core.scribe import Scribe
from scribed.models import Session, Turn


def _setup(tmp_path: Path, sessions: int) -> tuple[Scribe, Path]:
    root = tmp_path / "root"
    (root / ".squad").mkdir(parents=True)
    src = tmp_path / "repo"
    src.mkdir()
    history = src / ".aider.chat.history.md"
    _aider_history(history, sessions)
    os.utime(history, (1_700_000_000, 1_700_000_000))
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\nworkers = 1\n'
        f'[[sources]]\nkind = "markdown"\npath = "{src}"\nagent = "data"\n'
    )
    return Scribe(config_mod.load(str(cfg))), history


def _peak(tmp_path: Path, sessions: int, seen: list[int]) -> tuple[int, int]:
    """Traced peak of one run-once over a history of ``sessions`` runs, and the file's size."""
    s, history = _setup(tmp_path, sessions)
    tracemalloc.start()
    try:
        s.run_once(force=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        s.close()
    return peak, history.stat().st_size


def test_compacting_a_history_holds_a_few_sessions_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's own memory: each session's compaction is a stub that counts the turns it gets,
    so the peak is the parse, the briefs and the sessions the loop holds at once. Four times the
    sessions must not cost more than a few sessions more (the whole parse held cost 1.45 times
    the file: about 70 sessions more here)."""
    seen: list[int] = []

    def count(
        self: SessionCompactor,
        item: Any,
        k: Any,
        parsed: tuple[Session, list[Turn]] | None = None,
        **_: Any,
    ) -> None:
        if not self.dry_run and parsed:  # the core's own pass, not the one ahead of the lock
            seen.append(len(parsed[1]))

    monkeypatch.setattr(SessionCompactor, "make", count)
    _peak(tmp_path / "warm", 2, seen)  # imports and caches, once
    small, small_size = _peak(tmp_path / "small", 20, seen)
    large, large_size = _peak(tmp_path / "large", 80, seen)
    assert len(seen) == 2 + 20 + 80  # every session reached the compactor
    per_session = (large_size - small_size) / 60
    growth = (large - small) / per_session
    print(f"peaks {small / 1e6:.2f} / {large / 1e6:.2f} MB; growth {growth:.1f} sessions")
    assert growth < 6, f"60 more sessions cost {growth:.0f} sessions' size more at peak"


def test_a_history_rewritten_between_the_readings_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sessions read again must be the ones the briefs describe; a file rewritten in between
    fails the run for that file (retried later) instead of compacting what the briefs do not say.
    (The streamed path under the lock, without the work done ahead of it.)"""
    monkeypatch.setattr(Scribe, "ahead", lambda *_a, **_k: None)
    s, history = _setup(tmp_path, 6)
    real = sources.read_file

    def rewrite_after(kind: str, path: Path, agent: str) -> sources.Reading:
        reading = real(kind, path, agent)
        text = history.read_text()
        history.write_text(text.replace("Decision: keep module m3", "Decision: drop module m3 now"))
        return reading

    monkeypatch.setattr(sources, "read_file", rewrite_after)
    rep = s.run_once(force=True)
    # the 3 sessions before the rewritten one are compacted, the 3 it was still to read fail (issue 33:
    # each session counted once)
    assert (rep.sessions, rep.compacted, rep.failed, rep.files_failed) == (6, 3, 3, 0)
    assert s.ledger.counts()["done"] == 0
    monkeypatch.setattr(sources, "read_file", real)
    rep = s.run_once(force=True)
    s.close()
    assert rep.failed == 0
    assert rep.compacted == 6 - 3  # the sessions before the rewritten one were compacted the first time


def test_a_history_gone_before_the_second_reading_is_a_failure_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Scribe, "ahead", lambda *_a, **_k: None)  # the streamed path under the lock
    s, history = _setup(tmp_path, 3)
    real = sources.read_file

    def remove_after(kind: str, path: Path, agent: str) -> sources.Reading:
        reading = real(kind, path, agent)
        history.unlink()
        return reading

    monkeypatch.setattr(sources, "read_file", remove_after)
    rep = s.run_once(force=True)
    s.close()
    assert (rep.sessions, rep.compacted, rep.failed) == (3, 0, 3)  # each session once
    assert "could not be read again: FileNotFoundError" in str(rep.failures), rep.failures


def test_a_history_prepared_ahead_is_not_read_again_under_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32, part 3: a streamed history (over MARKDOWN_WHOLE_MAX) is read, redacted and
    compressed before the lock; under it the commit writes from what was prepared (each part's
    ticket: its keys, size and end) instead of reading the file again, which took 5.5 s of lock
    for a 64 MB file. The entries, the offsets and a later run are what reading it gave."""
    s, history = _setup(tmp_path, 60)
    assert history.stat().st_size > MARKDOWN_WHOLE_MAX  # streamed: its sessions are read again
    locked, reads = [False], []
    real_commit, real_sessions = Scribe._commit, sources.Reading.sessions

    def commit(self: Scribe, *a: Any, **k: Any) -> None:
        locked[0] = True
        try:
            real_commit(self, *a, **k)
        finally:
            locked[0] = False

    def sessions_spy(self: sources.Reading) -> Any:
        reads.append(locked[0])
        return real_sessions(self)

    monkeypatch.setattr(Scribe, "_commit", commit)
    monkeypatch.setattr(sources.Reading, "sessions", sessions_spy)
    rep = s.run_once(force=True)
    assert (rep.sessions, rep.compacted, rep.failed) == (60, 60, 0)
    assert reads and not any(reads), "the file was read again under the lock"
    row = s.ledger.source(str(history))
    assert row is not None and (row.status, row.offset_done) == ("done", history.stat().st_size - 1)
    _aider_history(history, 61)  # one more run appended (the first 60 unchanged)
    os.utime(history, (1_700_000_100, 1_700_000_100))
    rep = s.run_once(force=True)
    s.close()
    assert (rep.compacted, rep.failed) == (1, 0)


def test_a_history_s_sessions_are_read_with_none_of_the_ones_before_alive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A streamed Aider history is read a session at a time in both passes (the briefs, the
    entries): when a session's turns are built, no earlier session's turns are alive (markdown's
    ``_sessions`` and Aider's ``iter_parts`` held the last part, with its lines, while the next
    was read; the compact loop's ``enumerate`` held the last session)."""
    import gc

    from scribed.sources import markdown_aider
    from scribed.sources.markdown_lines import Part

    s, history = _setup(tmp_path, 50)
    assert history.stat().st_size > MARKDOWN_WHOLE_MAX  # streamed
    alive: list[int] = []
    run = markdown_aider._Reader.run

    def watched(self: Any) -> Any:
        gc.collect()
        held = [
            o
            for o in gc.get_objects()
            if ((isinstance(o, Session) and o.source == history) or isinstance(o, Part)) and o.turns
        ]
        alive.append(len(held))
        return run(self)

    monkeypatch.setattr(markdown_aider._Reader, "run", watched)
    try:
        rep = s.run_once(force=True)
    finally:
        s.close()
    assert (rep.compacted, rep.failed) == (50, 0)
    assert len(alive) >= 100 and not any(alive), alive
