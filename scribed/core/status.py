"""What ``scribed status`` reads of the ledger and the sources, read-only, so the CLI never opens
the ledger itself."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed.core import scope_mark
from scribed.core.ledger import STATUSES, Ledger, SourceRow, source_key
from scribed.core.ledger_ids import effective_mtime, same_state
from scribed.core.results import Json
from scribed.log import Silent
from scribed.session.door import redacted, redacted_path
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.config import Config


@dataclass(slots=True)
class LedgerStatus:
    """Counts per status (transcripts and hot files apart), the last entry and promotion times,
    the sources being retried; ``error`` when the ledger could not be read."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    hot_counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    last_entry: str | None = None
    last_promotion: str | None = None
    retrying: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    outside: int = 0  # of the done ones: skipped as other repositories' (see core/scope_mark)


def ledger_status(layout: Layout) -> LedgerStatus:
    out = LedgerStatus()
    if not layout.ledger.exists():
        return out
    try:
        led = Ledger(layout.ledger, readonly=True)
        try:
            out.counts, out.hot_counts = led.counts(), led.counts(hot=True)
            out.outside = sum(scope_mark.is_skipped(r.last_error) for r in led.sources("done"))
            out.last_entry, out.last_promotion = led.last_entry_at(), led.get_meta("last_promotion_at")
            out.retrying = [
                {
                    "source": redacted_path(r.path),
                    "kind": r.kind,
                    "attempts": r.attempts,
                    "reason": redacted(r.last_error),
                    "next_retry": r.retry_at or None,
                }  # sources that failed: the daemon retries with backoff, run-once on its next run
                for r in led.sources("failed")
            ]
        finally:
            led.close()
    except sqlite3.Error as exc:
        out.error = str(exc)
    return out


@dataclass(slots=True)
class Waiting:
    """Source files holding sessions no run has compacted yet (new, or changed since): ``active``
    ones changed within ``[session] quiet_seconds`` (an end marker, which only a parse sees, may
    finish one sooner), ``ready`` ones are quiet: the next run or the daemon compacts them."""

    active: int = 0
    ready: int = 0
    last_change: float = 0.0  # the newest change among the active files (epoch)
    quiet_seconds: float = 0.0

    def to_json(self) -> Json:
        last = datetime.fromtimestamp(self.last_change, UTC).isoformat() if self.last_change else None
        return {
            "active": self.active,
            "ready": self.ready,
            "last_change": last,
            "quiet_seconds": self.quiet_seconds,
        }


def waiting(cfg: Config, layout: Layout, now: datetime) -> Waiting:
    """Stat every source file (and hot file) against the ledger's row for it: what is waiting."""
    from scribed.core import discovery

    rows: dict[str, SourceRow] = {}
    if layout.ledger.exists():
        with contextlib.suppress(sqlite3.Error):
            led = Ledger(layout.ledger, readonly=True)
            try:
                rows = {r.path: r for r in led.sources()}
            finally:
                led.close()
    out = Waiting(quiet_seconds=cfg.session.quiet_seconds)
    for item in discovery.items(cfg, layout, Silent()):  # a missing folder: reported, not logged
        try:
            st = item.path.stat()
        except OSError:
            continue
        row = rows.get(source_key(item.path))
        if row is not None and same_state(row, st) and row.status != "pending":
            continue  # done, quarantined, or failed (listed as retrying)
        if item.kind == "hot" and _scribed_wrote(item.path):
            continue  # a seed or live view scribed wrote after the run's scan: no session in it
        mtime = effective_mtime(st, row, now)
        if now.timestamp() - mtime < cfg.session.quiet_seconds:
            out.active += 1
            out.last_change = max(out.last_change, mtime)
        else:
            out.ready += 1
    return out


FRONT_BYTES = 8192  # a hot file's front matter is in its first lines


def _scribed_wrote(path: Path) -> bool:
    """Whether a hot file carries scribed's own front matter (a seed, a live view): the hot adapter
    reads no session in it, so it waits for nothing (it is written after a run's scan, and so
    had no ledger row: ``status`` counted every agent's seed as a session still active)."""
    from scribed.tiers import live  # here: status's other reads need no tier module

    try:
        with path.open("rb") as fh:
            head = fh.read(FRONT_BYTES)
    except OSError:
        return False
    return live.MARKER in live.live_fields(head)
