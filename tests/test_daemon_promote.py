"""Promotion while the daemon compacts a backlog: the two never overlap on a root, and no entry
ends up twice across cold and wiki (issue 13: a daemon once produced duplicate sessions)."""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_crash import backlog

from scribed import config as config_mod
from scribed.compress.entry import split_entries
from scribed.core import promote as promote_mod
from scribed.daemon.service import Daemon

N = 60
_WIKI_REF = re.compile(r"entry=([^\s·;]+)")


class FakeScheduler:
    def add_job(self, func: Any, **kw: Any) -> None:
        pass

    def start(self) -> None:
        pass


def placements(mem: Path) -> tuple[Counter[str], Counter[str]]:
    """(times each entry id is in cold, times each id is a wiki fact's source)."""
    cold: Counter[str] = Counter()
    for f in (mem / "cold").glob("*.md"):
        for e in split_entries(f.read_text())[1]:
            cold.update(e.ids)
    wiki: Counter[str] = Counter()
    for f in (mem / "wiki").rglob("*.md"):
        wiki.update(set(_WIKI_REF.findall(f.read_text())))
    return cold, wiki


def done_sources(mem: Path) -> int:
    con = sqlite3.connect(mem / ".scribed/ledger.sqlite")
    try:
        return int(con.execute("SELECT COUNT(*) FROM sources WHERE status = 'done'").fetchone()[0])
    finally:
        con.close()


class Occupancy:
    """Who holds the root right now; two at once (a compaction and a promotion) is the bug."""

    def __init__(self) -> None:
        self.busy: list[str] = []
        self.overlaps: list[list[str]] = []
        self.calls = Counter[str]()
        self._guard = threading.Lock()

    def wrap(self, kind: str, fn: Any, pause: float = 0.0) -> Any:
        def wrapped(*a: Any, **kw: Any) -> Any:
            who = f"{kind}:{threading.get_ident()}"
            with self._guard:
                self.busy.append(who)
                self.calls[kind] += 1
                if len(self.busy) > 1:
                    self.overlaps.append(list(self.busy))
            try:
                time.sleep(pause)  # a backlog that takes a while: promotion lands in the middle of it
                return fn(*a, **kw)
            finally:
                with self._guard:
                    self.busy.remove(who)

        return wrapped


def assert_no_duplicates(mem: Path) -> None:
    cold, wiki = placements(mem)
    twice_in_cold = [i for i, n in cold.items() if n > 1]
    in_both = sorted(set(cold) & set(wiki))
    assert not twice_in_cold and not in_both, (twice_in_cold[:5], in_both[:5])
    con = sqlite3.connect(mem / ".scribed/ledger.sqlite")
    ids = [r[0] for r in con.execute("SELECT id FROM entries")]
    con.close()
    assert len(ids) == len(set(ids)) == N  # one entry per session, none compacted twice
    assert wiki, "promotion moved nothing: the test would prove nothing"


@pytest.mark.timeout(300)
def test_promotion_during_backlog_compaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg_path = backlog(tmp_path, N, agents=3)
    cfg_path.write_text(cfg_path.read_text() + "[daemon]\nworkers = 2\n")
    cfg = config_mod.load(str(cfg_path))
    when = datetime(2027, 1, 15, tzinfo=UTC)  # every backlog session is past the 30-day cold TTL
    assert when - timedelta(days=cfg.cold.ttl_days) > datetime(2026, 10, 28, tzinfo=UTC)
    d = Daemon(cfg, clock=lambda: when, scheduler_factory=FakeScheduler, notify=lambda _m: False)
    mem = cfg.root_path / ".squad/memory"
    occ = Occupancy()
    monkeypatch.setattr(d.scribe, "process", occ.wrap("process", d.scribe.process, pause=0.01))
    monkeypatch.setattr(promote_mod, "promote", occ.wrap("promote", promote_mod.promote))
    d.start()
    try:
        d.wait_started(60)
        mid = 0  # promotions that ran with the backlog partly compacted
        end = time.monotonic() + 240
        while (done := done_sources(mem)) < N and time.monotonic() < end:
            assert d.promote()
            mid += done > 0
        assert done_sources(mem) == N, "backlog not compacted in time"
        assert d.promote()  # a last one once everything is in cold
    finally:
        d.request_stop()
        d.shutdown()
    assert mid >= 2 and occ.calls["process"] >= N, (mid, occ.calls)
    assert not occ.overlaps, f"promotion and compaction overlapped: {occ.overlaps[:3]}"
    assert_no_duplicates(mem)
