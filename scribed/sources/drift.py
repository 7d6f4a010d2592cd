"""Counts of what the adapters met but do not understand, so format drift is visible.

Tools add record types between versions. An adapter skips a type it does not know (never fatal)
and counts it here; ``scribed doctor`` shows the counts per source. The counters are process-wide
and bounded: record types come from file content, so a hostile file cannot grow them.
"""

from __future__ import annotations

import threading
from collections import Counter

from scribed.sources.common import show

MAX_LABELS = 256
_lock = threading.Lock()
_counts: Counter[tuple[str, str]] = Counter()


def unknown(kind: str, rtype: object) -> None:
    """Count one record of a type ``kind``'s adapter does not know."""
    note(kind, f"unknown type {show(str(rtype), 60)}")


def note(kind: str, label: str) -> None:
    """Count one occurrence of ``label`` (e.g. ``skipped internal rollout``) for ``kind``."""
    key = (kind, label)
    with _lock:
        if key in _counts or len(_counts) < MAX_LABELS:
            _counts[key] += 1


def take() -> dict[str, dict[str, int]]:
    """The counts so far, per kind, and start again from zero."""
    with _lock:
        items = list(_counts.items())
        _counts.clear()
    out: dict[str, dict[str, int]] = {}
    for (kind, label), n in sorted(items):
        out.setdefault(kind, {})[label] = n
    return out


__all__ = ["MAX_LABELS", "note", "take", "unknown"]
