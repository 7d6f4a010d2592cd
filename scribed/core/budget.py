"""How big an entry may be, and when an LLM answer left room for extractive key points."""

from __future__ import annotations

from scribed.compress import anchors
from scribed.compress.base import CompressResult
from scribed.compress.extractive import ENTRY_OVERHEAD
from scribed.config import CompressCfg
from scribed.models import Anchor

# An entry may exceed its budget by this factor before the guard trims it.
HARD_CAP = 1.15


def entry_budget(ccfg: CompressCfg, bytes_in: int, anchor_list: list[Anchor]) -> int:
    """An entry's size: ``ratio`` of the session, never below what its anchors need (small sessions
    get that floor, not padding), and ``max_bytes`` only as a guard for giant sessions."""
    floor = ENTRY_OVERHEAD + sum(len(anchors.format_anchor(a).encode()) + 3 for a in anchor_list)
    floor = min(floor, max(ccfg.min_bytes, bytes_in // 2))
    return int(min(ccfg.max_bytes, max(ccfg.min_bytes, floor, bytes_in * ccfg.ratio)))


def far_under(result: CompressResult, budget: int) -> bool:
    """An LLM answer under half its budget left room the extractive key points can use."""
    return len(result.summary.model_dump_json().encode()) < budget // 2
