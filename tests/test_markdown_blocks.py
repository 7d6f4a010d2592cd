"""A speaker file read a block at a time (issue 32): the fenced lines between a fence and its
closing line are found with one search over a block's text, not looked at one by one. Whatever
the blocks' size (a fence opened in one block and closed three blocks on, an end comment inside
a command's output, a closing line with the wrong length or indent), the scan and the sessions
must be the line-by-line reader's."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_markdown_stream import _old_chat_parts, _scanned

from scribed.sources import markdown as md
from scribed.sources import markdown_lines
from scribed.sources.common import Source
from scribed.sources.markdown_lines import split_lines
from scribed.sources.turn_text import TurnText

_LINES = [
    "**User:** fix `src/a.py`", "Assistant: done", "## User", "> **user** quoted", "Dana (10:15): hi",
    "Tool: output", "$ pytest -q", "$ cat src/b.py", "```", "````", "```bash", "~~~", "~~~~", "  ```",
    "   ~~~", "    ```", "``", "``` ~~~", "```~~~", "~~~```", "```` `", "``` x", "\t```", "", "", "   ",
    "\x0c", "\u00a0", "words and words", "# 2025-02-03 heading", "2025-03-04T10:00:00Z then",
    "<!-- session: end -->", " <!--  SESSION:end --> ", "<!-- session: end --> x", "Session ended.",
    "Traceback (most recent call last):", "ValueError: bad", "    1→ out", "→ unicode ✗ line",
    "**Kim** (2025-01-03 10:15): strong", "Lee (09:00): strong too", "Kim: weak", "long " * 20,
]  # fmt: skip


def _source(path: Path) -> Source:
    return Source(
        kind="markdown", path=path, default_agent="d", mtime=datetime(2026, 1, 1, tzinfo=UTC), size=0
    )


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.sampled_from(_LINES), max_size=60),
    pad=st.sampled_from([0, 210]),
    chunk=st.sampled_from([1, 3, 8, 29, 1 << 16]),
    fm=st.booleans(),
    eol=st.sampled_from(["\n", "\r\n", ""]),
)
def test_blocks_of_any_size_read_as_lines_do(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], pad: int, chunk: int, fm: bool, eol: str
) -> None:
    """The convention's pass (chunks, speakers, dates) and the sessions are the line-by-line
    reader's, the file read in blocks of ``chunk`` bytes and a long line in pieces. ``pad`` lines
    first: the first 200 are read one by one, until the front matter is known."""
    head = ["---", "date: 2025-01-02", "---"] if fm else []
    text = "\n".join(head + ["prose"] * pad + lines) + eol
    path = tmp_path_factory.mktemp("chat") / "chat.md"
    path.write_bytes(text.encode())
    src = _source(path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(markdown_lines, "READ_CHUNK", chunk)
        mp.setattr(markdown_lines, "LINE_PIECE", 40)
        stream = md.Stream(src)
        got = list(stream)
        pieces = list(markdown_lines.iter_lines(path.open("rb"), len(text.encode())))
    if stream._chat is not None:
        assert _scanned(stream._chat) == _scanned(md._ChatScan(src, pieces))
    want, _ = _old_chat_parts(src, pieces)  # the whole-list reader, given the same lines
    assert [(s.session_id, s.ended, s.turns) for s in got] == [
        (p.session_id, p.ended, p.turns) for p in want if p.turns
    ]


def test_a_command_output_across_many_blocks_is_one_tool_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outputs longer than a block, closed by a fence of the right length only, one cut short by
    an end comment: the turns are the line-by-line reader's."""
    rng = random.Random(7)
    parts = ["**User:** run the tests", ""]
    for k in range(30):
        fence = rng.choice(["```", "````", "~~~~"])
        parts += [f"$ pytest tests/t{k}.py", "", fence]
        parts += [f"    {i}→ {rng.choice(['ok', '```', '~~~', 'FAILED x', '  ``` x'])}" for i in range(200)]
        parts += [fence[:3], "<!-- session: end -->" if k % 7 == 3 else fence + "`" * (k % 2), ""]
        parts += ["**Assistant:** Decision: retry them.", ""]
    path = tmp_path / "2026-02-02-run.md"
    path.write_text("\n".join(parts) + "\n")
    src = _source(path)
    want, _ = _old_chat_parts(src, split_lines(path.read_bytes()))
    monkeypatch.setattr(markdown_lines, "READ_CHUNK", 1000)
    got = list(md.Stream(src))
    assert sum(len(s.turns) for s in got) > 60
    assert [(s.session_id, s.turns) for s in got] == [(p.session_id, p.turns) for p in want if p.turns]


@pytest.mark.parametrize(("hold", "edge"), [(50, 20), (50, 80), (10_000, 100)])
def test_turn_text_extend_is_add_line_by_line(hold: int, edge: int) -> None:
    """Lines taken as a run keep exactly what adding them one by one keeps, a split included."""
    rng = random.Random(hold + edge)
    for _ in range(200):
        lines = [
            "x" * rng.randrange(0, 30) + rng.choice(["", " Error: bad"]) for _ in range(rng.randrange(0, 40))
        ]
        one, runs = TurnText(hold, edge), TurnText(hold, edge)
        for line in lines:
            one.add(line)
        cut = sorted(rng.sample(range(len(lines) + 1), min(3, len(lines) + 1)))
        for a, b in zip([0, *cut], [*cut, len(lines)], strict=True):
            runs.extend(lines[a:b])
        for kind in ("message", "tool_result"):
            assert runs.text(kind) == one.text(kind)


@pytest.mark.parametrize("chunk", [1, 5, 1 << 16])
def test_specstory_sections_are_found_at_a_block_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    """Sections past the banner's lines are found by one search a block, the block's first line
    included: the file is read as a SpecStory export whatever the blocks' size."""
    path = tmp_path / "2025-12-04_22-30-17Z-fix.md"
    body = ["# Fix the widget (2025-12-04 22:30:17Z)", *[f"note {k}" for k in range(12)]]
    body += [
        "_**User (2025-12-04 22:31:00Z)**_",
        "",
        "fix it",
        "",
        "---",
        "",
        "_**Agent (claude)**_",
        "",
        "done",
    ]
    path.write_text("\n".join(body) + "\n")
    monkeypatch.setattr(markdown_lines, "READ_CHUNK", chunk)
    sessions = list(md.Stream(_source(path)))
    assert [(t.role, t.text) for s in sessions for t in s.turns] == [
        ("user", "fix it"),
        ("assistant", "done"),
    ]
