"""Huge markdown transcripts are read as streams (issue 15, item 4).

An Aider history holds every run in one file; reading it as one list of lines cost about ten
times the file in memory. :func:`iter_lines` must give exactly the lines :func:`split_lines`
gives (offsets are ledger positions), and parsing must hold about one session at a time.
"""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pytest

from scribed.sources import markdown_lines, parse_file
from scribed.sources.markdown_lines import iter_lines, split_lines

TRICKY = (
    b"\xef\xbb\xbf# aider chat started at 2026-01-01 10:00:00\r\n\r\n#### hi  \r"
    b"\n\nreply \xff\xfe broken utf-8\rlone cr\n\n> tool  \n" + b"x" * 300 + b"\r\r\n\n\x0b\x0clast"
)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64, 1 << 20])
@pytest.mark.parametrize("data", [TRICKY, TRICKY + b"\n", TRICKY + b"\r", b"", b"\n", b"\r\n", b"one"])
def test_iter_lines_is_split_lines_at_any_chunk_size(
    monkeypatch: pytest.MonkeyPatch, chunk: int, data: bytes
) -> None:
    monkeypatch.setattr(markdown_lines, "READ_CHUNK", chunk)
    assert list(iter_lines(io.BytesIO(data), len(data) + 10)) == split_lines(data)
    cut = len(data) // 2
    assert list(iter_lines(io.BytesIO(data), cut)) == split_lines(data[:cut])  # the first pass's size


def _aider_history(path: Path, sessions: int) -> None:
    """Many runs of mostly tool output: what is kept of each is small, its lines are not."""
    hb = "  "
    with path.open("w") as f:
        for k in range(sessions):
            f.write(f"\n# aider chat started at 2026-01-{1 + k % 28:02d} {k % 24:02d}:{k // 672:02d}:00\n\n")
            f.write(f"#### run the tests for module m{k}{hb}\n\n")
            f.write("".join(f"> tests/test_m{k}.py::test_{j} PASSED{hb}\n" for j in range(600)))
            f.write(f"\nDecision: keep module m{k} on the queue.\n\n")


def test_aider_history_is_parsed_one_session_at_a_time(tmp_path: Path) -> None:
    """Peak traced memory stays below the file's size; reading it whole took about ten times that."""
    path = tmp_path / ".aider.chat.history.md"
    _aider_history(path, 160)
    size = path.stat().st_size
    assert size > 3_500_000
    tracemalloc.start()
    try:
        result = parse_file("markdown", path, "data")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(result.sessions) == 160
    assert result.size == size
    assert result.sessions[-1].turns[-1].end_offset == size - 1  # the last line is blank
    assert peak < size, f"peak {peak / 1e6:.1f} MB parsing a {size / 1e6:.1f} MB history"
