"""A giant session's key points come from its windows' best units (issue 32: memory follows what
is kept, not the session). Tested with a small WINDOW_CHARS: the same code a 76 MB session runs."""

from __future__ import annotations

import tracemalloc

import pytest

from scribed.compress import extractive, units, window
from scribed.models import Turn


def _turns(n: int, filler: int = 30) -> list[Turn]:
    out = []
    for i in range(n):
        said = " ".join(
            f"The retry loop in module m{i} waits a little longer each time." for _ in range(filler)
        )
        fact = f"Decided: `src/export/part_{i}.py` keeps `flush_batch_{i}()` under 870 ms."
        out.append(Turn("user", f"look at part {i}", "message", None, 2 * i + 1, 2 * i + 1, None))
        out.append(Turn("assistant", f"{said}\n\n{fact}", "message", None, 2 * i + 2, 2 * i + 2, None))
    return out


def _points(turns: list[Turn], room: int = 4000) -> list[str]:
    return extractive._key_points(turns, room, "", [])


def test_a_session_under_the_threshold_is_split_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    turns = _turns(40)
    whole = _points(turns)
    calls: list[int] = []
    real = units.split
    monkeypatch.setattr(units, "split", lambda ts, **k: calls.append(len(list(ts))) or real(ts, **k))
    assert _points(turns) == whole
    assert calls == [len(turns)]  # one pool of every turn


def test_a_giant_session_keeps_each_window_s_best_and_stays_in_its_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    turns = _turns(120)
    size = sum(len(t.text) for t in turns)
    monkeypatch.setattr(window, "WINDOW_CHARS", size // 10)  # ten windows
    points = _points(turns)
    assert points == _points(turns)  # deterministic
    assert sum(len(p.encode()) + 3 for p in points) <= 4000
    facts = [p for p in points if "flush_batch_" in p]
    assert len(facts) >= 10  # the named facts, not the repeated filler
    monkeypatch.setattr(window, "WINDOW_CHARS", size)  # the session whole, as under the threshold
    whole = _points(turns)
    # the windows' survivors hold what the whole pool would choose (54 of 55 points here)
    assert len(set(points) & set(whole)) >= 0.9 * len(points), (len(points), len(whole))


def test_windows_hold_a_window_s_units_not_the_session_s(monkeypatch: pytest.MonkeyPatch) -> None:
    turns = _turns(400, filler=10)  # ~2.4 MB of distinct sentences
    size = sum(len(t.text) for t in turns)

    def peak() -> int:
        tracemalloc.start()
        try:
            _points(turns)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    monkeypatch.setattr(window, "WINDOW_CHARS", size)
    whole = peak()
    monkeypatch.setattr(window, "WINDOW_CHARS", size // 16)
    windowed = peak()
    assert windowed < whole / 3, (windowed, whole)
