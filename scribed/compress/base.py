"""The one interface both compressors implement."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from scribed.models import Anchor, Session, Summary


class CompressError(Exception):
    """A compressor could not produce a valid summary. ``reason`` is short and loggable."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class CompressResult:
    summary: Summary
    compressor: str  # "extractive" or "llm:<model>"
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    notes: list[str] = field(default_factory=list)  # e.g. "repaired json", "map-reduce 3 chunks"


class Compressor(Protocol):
    name: str

    def compress(self, session: Session, anchors: list[Anchor], budget: int) -> CompressResult:
        """Summarize an already-redacted session into about ``budget`` bytes of entry text.

        Raises :class:`CompressError` on failure; never returns a half-valid summary.
        """
        ...
