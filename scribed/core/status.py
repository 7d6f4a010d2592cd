"""What ``scribed status`` reads of the ledger, read-only, so the CLI never opens it itself."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from scribed.core.ledger import STATUSES, Ledger
from scribed.session.door import redacted, redacted_path
from scribed.tiers.cold import Layout


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


def ledger_status(layout: Layout) -> LedgerStatus:
    out = LedgerStatus()
    if not layout.ledger.exists():
        return out
    try:
        led = Ledger(layout.ledger, readonly=True)
        try:
            out.counts, out.hot_counts = led.counts(), led.counts(hot=True)
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
