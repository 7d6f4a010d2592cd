"""Transcript copies a failed archive write still owes (exploratory finding s11).

The archive folder may be a share that fails mid-run (read-only, full, gone). The compaction does
not wait for its copy: its session is recorded as compacted, so no later run reads the transcript
again, and without a record the copy would be lost for good. A failed copy is recorded in the
ledger (``copies_owed``, :meth:`Ledger.owe_copy`); each run-once, and the daemon every few minutes,
makes the owed copies of sources still there and unchanged since compacted (or compacted again
since): no re-compaction, no new entry, the sidecar gains the sessions. With nothing owed this is
one look at an empty table.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from scribed.config import Config
from scribed.core.ledger import Ledger, OwedCopy, redacted_key, same_state, source_key
from scribed.core.results import SourceItem
from scribed.log import Logger
from scribed.session.door import Redacted
from scribed.tiers import transcripts
from scribed.tiers.cold import Layout


def stamp(st: os.stat_result) -> str:
    """A source's state as the archive's sidecar records it (size:mtime_ns)."""
    return f"{st.st_size}:{st.st_mtime_ns}"


def owe(
    ledger: Ledger, source: Path, kind: str, *, shown_as: str, sessions: list[str], agents: list[str]
) -> None:
    """Record that the copy of ``source`` (for ``sessions``) was not made; a source gone since
    is owed nothing (there is nothing left to copy)."""
    try:
        st = source.stat()
    except OSError:
        return
    ledger.owe_copy(OwedCopy(source_key(source), kind, shown_as, stamp(st), sessions, agents))


def owe_batch(ledger: Ledger) -> Callable[[list[transcripts.Archived]], None]:
    """What :func:`transcripts.batched_copies` calls with the copies a failed batch did not list."""

    def owed(recs: list[transcripts.Archived]) -> None:
        for rec in recs:
            if rec.origin is not None:
                owe(
                    ledger,
                    rec.origin,
                    rec.kind,
                    shown_as=rec.source,
                    sessions=rec.sessions,
                    agents=rec.agents,
                )

    return owed


@dataclass(slots=True)
class Retried:
    """What a retry did: copies made, copies still owed, copies given up (their source is gone),
    warnings logged."""

    made: int = 0
    left: int = 0
    lost: int = 0
    warned: int = 0


def retry(
    cfg: Config,
    layout: Layout,
    ledger: Ledger,
    log: Logger,
    *,
    now: datetime,
    items: Callable[[], Iterable[SourceItem]],
) -> Retried:
    """Make the owed copies. A source is found by its ledger key, which is its path unless the path
    holds a secret (a redacted key, :func:`redacted_key`); a redacted key, or a path gone, is looked
    up in ``items``, the run's discovery, walked once. A copy is made
    when the source has the state it was compacted in, or the ledger's row says its current state
    was compacted since; else it waits. The first failed write stops the retry (the folder still
    fails: one warning, not one per copy)."""
    res = Retried()
    rows = ledger.copies_owed()
    if not rows:
        return res
    if not cfg.archive.transcripts:  # archiving turned off since: no copy is wanted any more
        for row in rows:
            ledger.copy_made(row.path)
        return res
    found: dict[str, Path] | None = None
    for i, row in enumerate(rows):
        path, st = (None, None) if redacted_key(row.path) else _stat(Path(row.path))
        if st is None:  # a redacted key (no file has that name), or gone: found by discovery if there
            if found is None:
                found = {source_key(it.path): it.path for it in items()}
            path, st = _stat(found.get(row.path))
        if path is None or st is None:
            ledger.copy_made(row.path)
            res.lost += 1
            res.warned += 1
            log.warning(
                "transcript_copy_lost", file=row.shown_as, sessions=len(row.sessions),
                reason="the transcript is gone; its copy was owed since the archive folder failed",
            )  # fmt: skip
            continue
        if stamp(st) != row.stamp and not same_state(ledger.source(row.path), st):
            res.left += 1  # changed since, not compacted again yet: copied once it is
            continue
        try:
            transcripts.archive_sessions(
                cfg, layout, path, kind=row.kind, sessions=map(Redacted, row.sessions),
                agents=map(Redacted, row.agents), shown_as=Redacted(row.shown_as), now=now,
            )  # fmt: skip
        except OSError as exc:
            res.left += len(rows) - i
            res.warned += 1
            log.warning(
                "transcript_archive_failed", folder=str(transcripts.folder(cfg, layout)), file=row.shown_as,
                reason=str(exc.strerror or exc), owed=len(rows) - i,
                action="retried by the next run; fix the folder or set [archive] folder",
            )  # fmt: skip
            return res
        ledger.copy_made(row.path)
        res.made += 1
    return res


def _stat(path: Path | None) -> tuple[Path | None, os.stat_result | None]:
    """``path`` and its state, None for a source not found or gone."""
    try:
        return path, path.stat() if path is not None else None
    except OSError:
        return path, None
