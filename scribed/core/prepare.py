"""The pure part of compacting one file, done before the root lock is taken (issue 32, part 3).

Parsing, the redaction door, anchors, the compressor and the transcript copy need no lock: a
:class:`Preparer` runs the serial steps on the file dry (an in-memory ledger holding only the
file's row, nothing written) and keeps what they made, a :class:`Prefetched`. The core then takes
the lock and runs the same steps for real, taking that work instead of redoing it while the file
still has the size, mtime and sha256 it was prepared from (compare-and-swap: a file changed since
is done afresh under the lock). So the lock is held to check the file and to write, not to read,
redact and compress. A pool worker (:mod:`scribed.core.pool`) prepares files the same way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scribed import heap
from scribed.config import Config
from scribed.core.compact import Compactor
from scribed.core.compact_read import PARSE_MAX_BYTES
from scribed.core.compact_session import Prefetched, RunContext, SessionCompactor
from scribed.core.compressors import Compressors
from scribed.core.content_key import Keyring
from scribed.core.discovery import sha256_bytes
from scribed.core.ledger import Ledger, SourceRow
from scribed.core.results import SourceItem
from scribed.fsutil import gzipped
from scribed.session.door import redacted
from scribed.tiers import hot_seed, transcripts
from scribed.tiers.cold import Layout


class Quiet:
    """A logger that says nothing (the core runs the same steps for real and logs them once)."""

    def __getattr__(self, _name: str) -> Any:
        return lambda *_a, **_k: None


class Clock:
    """The core's "now" for the file at hand (its quiet-time decision is the core's)."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now


class Preparer:
    """A dry-run compactor of its own: an in-memory ledger, no log. One per thread or process."""

    def __init__(
        self, cfg: Config, environ: dict[str, str], keys: Keyring, *, keep_max: int | None = PARSE_MAX_BYTES
    ) -> None:
        self.cfg = cfg
        log = Quiet()
        self.ledger = Ledger(None)
        self.ledger.checked = True  # the empty-ledger rebuild is the core's business
        self.clock = Clock()
        compressors = Compressors(cfg, self.clock, environ, None, log)
        ctx = RunContext(
            cfg, Layout(cfg.root_path), self.ledger, self.clock, dry_run=True, log=log, keys=keys
        )
        self.sessions = SessionCompactor(ctx, compressors)
        self.compactor = Compactor(ctx, self.sessions)
        self.compactor.keep_max = keep_max

    def prepare(self, item: SourceItem, row: SourceRow | None, now: datetime, force: bool) -> Prefetched:
        """Run the steps on ``item`` dry; what they made, with the file's state it was made from."""
        ledger, sessions, compactor = self.ledger, self.sessions, self.compactor
        self.clock.now = now
        with ledger.tx() as db:
            db.execute("DELETE FROM sources")
        if row is not None:
            ledger.upsert_source(row)
        sessions.captured = []
        st = item.path.stat()
        compactor.kept = out = Prefetched(
            (st.st_size, st.st_mtime_ns), "", False, None, sessions.captured, None
        )
        try:
            compactor.process(item, force=force)
            heap.trim(st.st_size)  # the compaction's pages back before the copy's
            if out.entries and out.reading is not None:
                if item.kind == "hot":
                    out.hot_archive = _hot_archive(item, out)
                elif self.cfg.archive.transcripts:
                    out.copy = transcripts.produce(item.path)  # the core archives after its first entry
            return out
        finally:
            sessions.captured = None
            compactor.kept = None


def _hot_archive(item: SourceItem, out: Prefetched) -> tuple[str, bytes] | None:
    """The compacted hot bytes' archive (redacted, gzipped) and their sha256, made ahead: the
    core writes it when the hot file still starts with those bytes (see ``_archive_and_reset_hot``)."""
    assert out.reading is not None
    parsed = out.reading.result
    sid = parsed.sessions[0].session_id if parsed.sessions else ""
    snap = hot_seed.snapshot(item.path.read_bytes(), parsed.size, sid)
    if snap is None:
        return None
    clean = redacted(snap.decode("utf-8", "replace")).encode()
    return sha256_bytes(snap), gzipped(clean)
