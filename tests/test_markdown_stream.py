"""Huge markdown transcripts are read as streams (issue 15, item 4).

An Aider history holds every run in one file; reading it as one list of lines cost about ten
times the file in memory. :func:`iter_lines` must give exactly the lines :func:`split_lines`
gives (offsets are ledger positions), and parsing must hold about one session at a time.
"""

from __future__ import annotations

import hashlib
import io
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from md_chat_reference import chat_turns, text_date

from scribed.names import normalize_name
from scribed.sources import hot as _hot
from scribed.sources import markdown as md
from scribed.sources import markdown_lines, parse_file, read_file
from scribed.sources.common import Source, parse_ts, safe_id
from scribed.sources.markdown_blocks import Cursor
from scribed.sources.markdown_lines import Line, Part, front_matter, iter_blocks, iter_lines, split_lines

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


def _old_chat_parts(src: Source, lines: list[Line]) -> tuple[list[Part], bool]:
    """The list-based reading the streamed one replaced (scribed 0e94917, its chat_turns f2b29dd's),
    kept as the reference."""
    fields, skip = front_matter(lines)
    body = lines[skip:]
    chunks: list[list[Line]] = [[]]
    for ln in body:
        if md._END_COMMENT.fullmatch(ln.text):
            chunks.append([])
        else:
            chunks[-1].append(ln)
    ended = len(chunks) > 1 and not any(ln.text.strip() for ln in chunks[-1])
    if ended:
        chunks.pop()
    else:
        last = next((k for k in range(len(chunks[-1]) - 1, -1, -1) if chunks[-1][k].text.strip()), None)
        if last is not None and md._END_MARK.fullmatch(chunks[-1][last].text.strip()):
            ended = True
            chunks[-1] = chunks[-1][:last]
    agent = normalize_name(fields.get("agent", "")) or ""
    base = safe_id(fields.get("session", "")) or src.path.stem
    fm_start = parse_ts(
        fields.get("started") or fields.get("start") or fields.get("date") or fields.get("created")
    )
    fm_end = parse_ts(fields.get("ended") or fields.get("end"))
    parts: list[Part] = []
    for k, chunk in enumerate(chunks):
        turns = chat_turns(chunk)
        if k == 0:
            start = fm_start or fm_end or md._name_date(src.path.stem) or text_date(chunk)
            sid = base
        else:
            start = text_date(chunk)
            sid = (
                f"{base}@{start:%Y-%m-%dT%H:%M:%SZ}"
                if start
                else f"{base}@line-{chunk[0].no if chunk else 0}"
            )
        part = Part(session_id=sid, turns=turns, start=start, agent=agent)
        if start is not None:
            stamps = [t.ts for t in turns if t.ts is not None and t.ts >= start]
            end = (fm_end if k == len(chunks) - 1 else None) or (max(stamps) if stamps else start)
            part.end = max(end, start)
        part.ended = k < len(chunks) - 1 or ended
        parts.append(part)
    return parts, ended


_FM = "---\nagent: Kim\nsession: s-1\ndate: 2026-03-01T10:00:00Z\nended: 2026-03-01T12:00:00Z\n---\n"
_CHUNK = "## 2026-03-0{d} 09:00\n\nUser: fix the cache in src/c{d}.py\n\nAssistant: Decision: keep it.\n"
_END = "<!-- session: end -->\n"


@pytest.mark.parametrize(
    "text",
    [
        "",
        _END,
        _END + _END,
        _CHUNK.format(d=1),
        _CHUNK.format(d=1) + "Session ended.\n\n",
        _CHUNK.format(d=1) + _END,
        _CHUNK.format(d=1) + _END + "\n  \n",
        _CHUNK.format(d=1) + _END + _CHUNK.format(d=2),
        _CHUNK.format(d=1) + _END + _CHUNK.format(d=2) + "--- session ended ---\n",
        _CHUNK.format(d=1) + _END + _END + _CHUNK.format(d=2) + _END,
        _FM + _CHUNK.format(d=1) + _END + _CHUNK.format(d=2) + _END,
        _FM + _CHUNK.format(d=1) + _END + _CHUNK.format(d=2),
        _FM + _END + "User: no date here\n" + _END + "User: nor here\n",
        "---\nagent: x\n" + "User: a front matter never closed\n" * 250 + _END + "User: b\n",
    ],
)
def test_streamed_chat_parts_are_the_list_based_ones(tmp_path: Path, text: str) -> None:
    """Sessions split at end comments, read as a stream, are the ones the whole list gave."""
    path = tmp_path / "2026-02-02-notes.md"
    path.write_text(text)
    src = Source(
        kind="markdown", path=path, default_agent="d", mtime=datetime(2026, 1, 1, tzinfo=UTC), size=0
    )
    data = path.read_bytes()
    lines = split_lines(data)
    want, want_ended = _old_chat_parts(src, lines)
    chat = md._ChatParts(src, md._ChatScan(src, lines), Cursor(iter_blocks(io.BytesIO(data), len(data))))
    got = list(chat)
    assert got == want
    assert chat.ended == want_ended


def _scanned(chat: md._ChatScan) -> tuple[object, ...]:
    chunks = [(c.first, c.date, c.date_no, c.last_no, c.last_text, c.speakers.result()) for c in chat.chunks]
    return (chat.skip, chat.drop, chat.ended, chat.agent, chat.base, chat.fm_start, chat.fm_end, chunks)


@pytest.mark.parametrize(
    "text",
    [
        "",
        _CHUNK.format(d=1) + "Session ended.\n\n",
        _CHUNK.format(d=1) + _END + _END + _CHUNK.format(d=2) + _END,
        _FM + _CHUNK.format(d=1) + _END + _CHUNK.format(d=2),
        "---\nagent: x\n" + "User: a front matter never closed\n" * 250 + _END + "User: b\n",
        _FM + "User: " + "long " * 30_000 + "\n" + _END + "User: b\n",  # a line in pieces
    ],
)
def test_a_speaker_file_is_read_twice_with_the_speakers_of_a_pass_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """The convention's pass feeds the speaker pass (issue 32: a speaker file was read three
    times): the same chunks, speakers and dates as a pass of its own over the lines, and the
    file read twice in all (that pass, then the turns)."""
    monkeypatch.setattr(markdown_lines, "LINE_PIECE", 1 << 16)  # the long line comes in pieces
    monkeypatch.setattr(markdown_lines, "READ_CHUNK", 1 << 12)
    path = tmp_path / "2026-02-02-notes.md"
    path.write_text(text)
    src = Source(
        kind="markdown", path=path, default_agent="d", mtime=datetime(2026, 1, 1, tzinfo=UTC), size=0
    )
    passes = []
    blocks = markdown_lines.iter_blocks

    def counted(fh: io.BufferedReader, limit: int, bad: markdown_lines.BadBytes | None = None) -> object:
        passes.append(limit)
        return blocks(fh, limit, bad)

    monkeypatch.setattr(markdown_lines, "iter_blocks", counted)
    monkeypatch.setattr(md, "iter_blocks", counted)
    stream = md.Stream(src)
    sessions = list(stream)
    lines = list(iter_lines(path.open("rb"), len(text.encode()) + 1))
    if not text:
        assert stream._chat is None
        return
    assert stream._chat is not None
    assert _scanned(stream._chat) == _scanned(md._ChatScan(src, lines))
    assert len(passes) == 3  # the pass of the convention and the speakers, the turns, and the ``lines`` above
    assert sessions == list(md.Stream(src))  # a second iteration reads the turns only


def test_many_end_comments_are_read_one_session_at_a_time(tmp_path: Path) -> None:
    """A plain transcript with a session per end comment is read as a stream: a reading for the
    compact loop (its briefs, then the sessions one at a time) never holds every session's lines or
    turns (a turn per tool line here: about six times the file)."""
    path = tmp_path / "notes.md"
    with path.open("w") as f:
        for k in range(120):
            f.write(_CHUNK.format(d=1 + k % 9))
            f.write("".join(f"Tool: tests/test_m{k}.py::test_{j} PASSED\n" for j in range(400)))
            f.write(_END)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        reading = read_file("markdown", path, "data")
        read = sum(1 for _ in reading.sessions())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert read == len(reading.briefs) == 120
    assert reading.result.ended
    assert peak < size, f"peak {peak / 1e6:.1f} MB parsing a {size / 1e6:.1f} MB transcript"


_LINES = [
    "**User:** fix the bug in `src/a.py`", "User: hello", "Assistant: done, tests pass", "## Assistant",
    "> **user** quoted", "**Dana** (2025-01-03 10:15): hi", "Dana: ok then", "Bob: sure", "**Bob**: weak",
    "Tool: output", "$ pytest -q", "```", "```bash", "~~~", "````", "", "", "prose line with words",
    "# 2025-02-03 heading", "2025-03-04T10:00:00Z something", _END.strip(), "  <!-- session:end -->  ",
    "Session ended.", "**Session ended**", "Session ended: 2025-04-01T10:00:00Z", "---", "date: 2025-01-01",
    "agent: riker", "- item one", "Error: KeyError 'x'", "$ ls -la", "Note: not a speaker", "System: brief",
    "**Assistant (10:15):** at a time", "Claude: I did it", "    indented", "Dana (11:00): later",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.sampled_from(_LINES), max_size=40),
    fm=st.booleans(),
    eol=st.sampled_from(["\n", "\r\n", ""]),
    name=st.sampled_from(["chat.md", "2025-05-06-notes.md"]),
)
def test_streamed_chat_turns_are_the_list_based_ones(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], fm: bool, eol: str, name: str
) -> None:
    """Any mix of speakers, fences, commands, end comments and markers: the sessions the streamed
    reader gives (parse_file and the compact loop's reading) are the list-based reader's."""
    text = "\n".join((["---", "date: 2025-01-02", "agent: data", "---"] if fm else []) + lines) + eol
    path = tmp_path_factory.mktemp("chat") / name
    path.write_bytes(text.encode())
    src = Source(
        kind="markdown", path=path, default_agent="d", mtime=datetime(2026, 1, 1, tzinfo=UTC), size=0
    )
    want, want_ended = _old_chat_parts(src, split_lines(path.read_bytes()))
    stream = md.Stream(src)
    got = list(stream)
    assert [(s.session_id, s.start, s.end, s.ended, s.turns) for s in got] == [
        (p.session_id, p.start or s.start, p.end or s.end, p.ended, p.turns)
        for p, s in zip([p for p in want if p.turns], got, strict=True)
    ]
    assert list(stream) == got  # a second pass reuses the first one's scans
    assert stream.ended == want_ended or not got


def _old_hot(path: Path) -> tuple[list[tuple[str, int, int]], str, int]:
    """f2b29dd's hot reading (the whole file, split into lines), kept as the reference."""
    data = path.read_bytes()
    lines = split_lines(data)
    fields, skip = front_matter(lines)
    if (
        not data.strip()
        or "scribed-live" in fields
        or all(_hot._TEMPLATE_LINE.fullmatch(x.text) for x in lines[skip:])
    ):
        return [], "", len(data)
    turns = []
    for block in markdown_lines.paragraphs(lines[skip:]):
        text = "\n".join(x.text for x in block).strip()
        if text:
            turns.append((text, block[0].no, block[-1].end))
    return turns, "hot-" + hashlib.sha256(data).hexdigest()[:12], len(data)


_HOT_LINES = ["# Hot", "", "Current task:", "Current task: fix `src/a.py`", "- Next: TBD", "```", "code", "---",
              "scribed-live: 1", "agent: x", "prose line", "  ", "## Notes", "<!-- c -->"]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.sampled_from(_HOT_LINES), max_size=30), eol=st.sampled_from(["\n", "\r\n"]))
def test_streamed_hot_file_is_the_whole_file_reading(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], eol: str
) -> None:
    path = tmp_path_factory.mktemp("hot") / "data.md"
    path.write_bytes(eol.join(lines).encode())
    turns, sid, size = _old_hot(path)
    got = parse_file("hot", path, "data")
    assert got.size == size
    assert [(t.text, t.line, t.end_offset) for s in got.sessions for t in s.turns] == turns
    assert [s.session_id for s in got.sessions] == ([sid] if turns else [])


@pytest.mark.parametrize("chunk", [1, 3, 64])
@pytest.mark.parametrize("piece", [4, 9])
@pytest.mark.parametrize(
    "data",
    [
        TRICKY,
        b"short\n" + "é€x".encode() * 40 + b"\r\nend",
        b"\xef\xbb\xbf" + b"y" * 50,
        b"\x80" * 30 + b"\n",
        b"z" * 40,
    ],
)
def test_a_long_line_is_read_in_pieces(
    monkeypatch: pytest.MonkeyPatch, chunk: int, piece: int, data: bytes
) -> None:
    """Past LINE_PIECE bytes a line comes as pieces cut between characters: with its number, each
    piece's end offset, and its text the line's when they are put together."""
    monkeypatch.setattr(markdown_lines, "READ_CHUNK", chunk)
    monkeypatch.setattr(markdown_lines, "LINE_PIECE", piece)
    got = list(iter_lines(io.BytesIO(data), len(data)))
    want = split_lines(data)
    assert [ln.no for ln in got] == sorted(ln.no for ln in got)
    assert [ln.end for ln in got] == sorted({ln.end for ln in got})
    for w in want:
        pieces = [ln for ln in got if ln.no == w.no]
        assert "".join(ln.text for ln in pieces) == w.text
        assert pieces[-1].end == w.end
        starts = [ln.end for ln in got if ln.end < pieces[0].end][-1:] or [0]
        sizes = [
            b - a
            for a, b in zip([*starts, *(ln.end for ln in pieces)], (ln.end for ln in pieces), strict=False)
        ]
        assert all(n <= piece for n in sizes[:-1]), sizes
    assert len(got) > len(want) or max(map(len, data.splitlines() or [b""])) <= piece + chunk
