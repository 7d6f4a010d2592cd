"""A giant turn is gathered in bounded memory and kept exactly as the whole text would be (issue 32).

:class:`scribed.sources.turn_text.TurnText` holds a turn's lines whole up to a size, then only its
head and tail and the error lines between; what it gives must be what ``turn`` keeps of the whole
text: ``clip`` for messages and calls, ``clip_tool_output`` (head, tail, error lines of the middle,
the middle's length) for tool output.
"""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from scribed.models import MAX_TOOL_CHARS, clip
from scribed.sources.common import MAX_TURN_CHARS, clip_tool_output
from scribed.sources.turn_text import TurnText

_LINES = st.sampled_from([
    "", "  ", "ok", "FAILED tests/test_a.py::test_x - AssertionError", "Traceback (most recent call last):",
    "E   KeyError: 'k'", "error: cannot find module", "exit code 2", "  indented error: x  ", "note ÄÖÜ ıİ ſ",
    "word " * 120 + "ValueError: long", "x" * 900, "npm ERR! code 1", "panic: runtime", "plain log line 42",
])  # fmt: skip


def _expected(text: str, kind: str) -> str:
    if kind == "tool_result":
        return clip_tool_output(text)
    return clip(text, MAX_TOOL_CHARS if kind == "tool_call" else MAX_TURN_CHARS)


def _gathered(lines: list[str], kind: str, chars: str | None, hold: int, edge: int) -> str:
    acc = TurnText(hold=hold, edge=edge)
    for line in lines:
        acc.add(line)
    text, clipped = acc.text(kind, chars)  # type: ignore[arg-type]
    return text if clipped else _expected(text, kind)


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(_LINES, min_size=0, max_size=400),
    kind=st.sampled_from(["tool_result", "tool_call"]),
    chars=st.sampled_from([None, "\n"]),
    hold=st.integers(4000, 20_000),
    extra=st.integers(0, 3000),
)
def test_a_long_tool_turn_is_kept_as_the_whole_text_would_be(
    lines: list[str], kind: str, chars: str | None, hold: int, extra: int
) -> None:
    """Small windows (a tool output's clip keeps 2 x 1,980 chars): any mix of error lines,
    repeats, blanks, long lines and non-ASCII case folds gives the whole text's clip."""
    text = "\n".join(lines).strip(chars)
    assert _gathered(lines, kind, chars, hold, 4000 + extra) == _expected(text, kind)


@settings(max_examples=5, deadline=None)
@given(n=st.integers(6000, 8000), chars=st.sampled_from([None, "\n"]))
def test_a_long_message_is_kept_as_the_whole_text_would_be(n: int, chars: str | None) -> None:
    lines = [f"line {i} " + "w" * (i % 1500) for i in range(n)]
    text = "\n".join(lines).strip(chars)
    assert len(text) > 4 * MAX_TURN_CHARS
    assert _gathered(lines, "message", chars, 4 * MAX_TURN_CHARS, MAX_TURN_CHARS) == _expected(
        text, "message"
    )


def test_a_hundred_megabyte_turn_holds_a_few_megabytes() -> None:
    """A 100 MB turn (8 MiB lines, as a long line is read) never holds more than its edges."""
    piece = "log line ok " * (8 << 17)
    acc = TurnText()
    tracemalloc.start()
    try:
        for _ in range(12):
            acc.add(piece)
        text, clipped = acc.text("message")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert clipped and len(text) < MAX_TURN_CHARS + 100
    assert peak < 5 * len(piece), peak
