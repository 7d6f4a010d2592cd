"""The redaction door's cache is bounded by what it holds, not by a count of blocks (issue 32).

A block is one turn when the turn is longer than BLOCK_CHARS, so 512 blocks of a session of
100 KB messages held 51 MB after the session was done (a 76 MB Squad REPL file: 344 MB peak,
286 MB once bounded in characters)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from scribed.session import door
from scribed.sizedcache import SizedCache


def test_the_least_recent_go_first_and_the_total_stays_under_the_limit() -> None:
    c: SizedCache[str] = SizedCache(800, len)  # an item over 100 is not kept
    for k in "abcdefgh":
        c.put(k, k * 100)
    assert c.held == 800 and len(c) == 8
    assert c.get("a") == "a" * 100  # now the most recent
    c.put("i", "i" * 50)
    assert c.get("b") is None and c.get("a") is not None  # b was the least recent
    assert c.held == 750
    c.put("j", "j" * 101)  # over limit // 8: not kept, nothing pushed out
    assert c.get("j") is None and c.held == 750 and c.get("c") == "c" * 100
    c.clear()
    assert (len(c), c.held) == (0, 0)


def test_the_door_holds_at_most_its_characters_after_a_session_of_long_turns() -> None:
    door.clear_cache()
    turns = [f"turn {i}: " + "word " * 40_000 for i in range(120)]  # 200 KB each, 24 MB in all
    door.redacted_texts(turns)
    held = sum(sum(map(len, texts)) for texts, _ in door._cache._items.values())  # counted here
    assert held <= door.CACHED_CHARS
    assert len(door._cache) >= 50  # still caches: a growing session's earlier blocks are hits
    door.clear_cache()


def test_a_session_redacted_once_is_not_cached_and_still_reads_the_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A finished session's blocks are never redacted again: caching them held up to 16 M chars
    for nothing. A live view's (``remember``, the default) are, and compaction still reads them."""
    door.clear_cache()
    texts = [f"turn {i}: " + "word " * 10_000 for i in range(10)]
    door.redacted_texts(texts, remember=False)
    assert len(door._cache) == 0
    door.redacted_texts(texts)  # the live view of the growing session
    held = len(door._cache)
    assert held > 0
    calls: list[int] = []
    real = door.redact_within

    def counted(before: str, block: Sequence[str], after: str) -> list[str]:
        calls.append(1)
        return real(before, block, after)

    monkeypatch.setattr(door, "redact_within", counted)
    door.redacted_texts(texts, remember=False)
    assert calls == [] and len(door._cache) == held  # every block a hit, nothing added
    door.clear_cache()
