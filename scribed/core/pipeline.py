"""The names the daemon and older callers import from here; the core lives in
:mod:`scribed.core.scribe` (the object), :mod:`scribed.core.compact` (one file),
:mod:`scribed.core.compact_session` (one session) and their helpers."""

from __future__ import annotations

from scribed.core.budget import entry_budget
from scribed.core.compact import BYTE_KINDS
from scribed.core.compressors import BREAKER_FAILURES, BREAKER_PAUSE_SECONDS
from scribed.core.discovery import peak_rss_mb, sha256_bytes, sha256_prefix
from scribed.core.results import EntryReport, FileOutcome, RunReport, SourceItem
from scribed.core.scribe import Scribe, utcnow
from scribed.tiers.live import TEMPLATE as HOT_TEMPLATE

__all__ = [
    "BREAKER_FAILURES",
    "BREAKER_PAUSE_SECONDS",
    "BYTE_KINDS",
    "HOT_TEMPLATE",
    "EntryReport",
    "FileOutcome",
    "RunReport",
    "Scribe",
    "SourceItem",
    "entry_budget",
    "peak_rss_mb",
    "sha256_bytes",
    "sha256_prefix",
    "utcnow",
]
