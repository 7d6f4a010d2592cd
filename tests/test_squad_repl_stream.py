"""A large Squad REPL file is read a session per pass (issue 32: every format streamed).

The default agent's session holds every message and each named agent's its exchanges, so a
parse of the whole file holds a named agent's replies twice; :class:`squad_repl.Stream` reads
the file once per session and holds one. The sessions it gives must be the whole parse's, on
documents with everything the grouping rule meets: named and unnamed replies, an invalid name,
the default agent by name, system messages, unanswered user messages, bad records, injected
context, envelope times, a duplicate ``messages`` key.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from scribed import sources
from scribed.models import Session
from scribed.sources import reading, squad_repl
from scribed.sources.common import Source

NAMES = ("riker", "worf", "data", "Bad Name!", None)


def _doc(rng: random.Random, n: int) -> dict[str, Any]:
    msgs: list[Any] = []
    for i in range(n):
        r = rng.random()
        if r < 0.05:
            msgs.append(rng.choice([42, "x", {"role": "user"}, {"role": "alien", "content": "?"}]))
            continue
        role = "user" if r < 0.4 else "system" if r < 0.45 else "agent"
        text = f"message {i}: edited `src/m{i % 7}.py` and ran the tests for case {rng.randrange(99)}"
        if rng.random() < 0.05:
            text = f"<system-reminder>context {i}</system-reminder>"  # injected: cleaned away
        m: dict[str, Any] = {"role": role, "content": text}
        if rng.random() < 0.7:
            m["timestamp"] = f"2026-11-02T08:{i // 60 % 60:02d}:{i % 60:02d}Z"
        if role == "agent":
            name = rng.choice(NAMES)
            if name is not None:
                m["agentName"] = name
        msgs.append(m)
    doc: dict[str, Any] = {"id": "0a1b2c3d", "messages": msgs}
    if rng.random() < 0.5:
        doc["createdAt"], doc["lastActiveAt"] = "2026-11-02T08:00:00Z", "2026-11-02T09:00:00Z"
    return doc


def _shape(s: Session) -> tuple[Any, ...]:
    turns = [(t.role, t.text, t.kind, t.ts, t.line, t.end_offset, t.tool_name) for t in s.turns]
    return (s.agent, s.session_id, s.start, s.end, s.ended, turns)


@pytest.mark.parametrize("seed", range(12))
def test_the_stream_gives_the_whole_parse_s_sessions(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "2026-11-02T08-00-00_0a1b2c3d.json"
    text = json.dumps(_doc(rng, rng.randrange(1, 300)))
    if seed == 3:  # a duplicate key: the last messages array counts
        text = text[:-1] + ', "messages": ' + json.dumps(_doc(rng, 40)["messages"]) + "}"
    path.write_text(text)
    whole = sources.parse_file("squad-repl", path, "data")
    st = path.stat()
    stream = squad_repl.Stream(Source("squad-repl", path, "data", _mtime(path), st.st_size))
    got = list(reading._cleaned(stream))
    assert [_shape(s) for s in got] == [_shape(s) for s in whole.sessions]
    assert sorted(stream.result([]).warnings) == sorted(whole.warnings)
    assert stream.result([]).size == whole.size


def _mtime(path: Path) -> Any:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)


def test_read_file_streams_a_large_file_and_reads_a_small_one_whole(tmp_path: Path) -> None:
    rng = random.Random(7)
    small = tmp_path / "small.json"
    small.write_text(json.dumps(_doc(rng, 50)))
    assert sources.read_file("squad-repl", small, "data").stream is None
    big = tmp_path / "big.json"
    doc = _doc(rng, 400)
    for m in doc["messages"]:
        if isinstance(m, dict) and isinstance(m.get("content"), str):
            m["content"] += " " + "padding words for size " * 150
    big.write_text(json.dumps(doc))
    assert big.stat().st_size > sources.STREAM_MIN_BYTES
    reading = sources.read_file("squad-repl", big, "data")
    assert reading.stream is not None and not reading.result.sessions
    whole = sources.parse_file("squad-repl", big, "data")
    assert [_shape(s) for s in reading.sessions()] == [_shape(s) for s in whole.sessions]
    assert [b.agent for b in reading.briefs] == [s.agent for s in whole.sessions]
    big.write_text(json.dumps(doc).replace("message 5:", "message five:"))
    os.utime(big)
    with pytest.raises(sources.ChangedError):
        list(reading.sessions())  # read again, it no longer gives what the briefs say


def _big_doc(tmp_path: Path) -> Path:
    """A file over the streaming size whose default session and two agents' sessions each hold
    hundreds of turns, a quiet hour old."""
    msgs: list[dict[str, str]] = []
    for i in range(600):
        pad = " ".join(f"step{i}-{k}" for k in range(300))
        msgs.append({"role": "user", "content": f"Ask {i}: check `src/m{i % 7}.py` {pad}"})
        name = ("riker", "worf")[i % 2]
        msgs.append({"role": "agent", "agentName": name, "content": f"Checked `src/m{i}.py` {pad}"})
    path = tmp_path / "src" / "2026-11-02T08-00-00_0a1b2c3d.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"id": "0a1b2c3d", "messages": msgs}))
    os.utime(path, (1_700_000_000, 1_700_000_000))
    assert path.stat().st_size > sources.STREAM_MIN_BYTES
    return path


@pytest.mark.parametrize("quiet", [True, False], ids=["compacted", "live-refreshed"])
def test_a_pass_over_the_file_holds_no_session_of_the_passes_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quiet: bool
) -> None:
    """Each pass of a streamed file (for the briefs, then for the entries or, while the file is
    still written, for the hot file's live views) starts with no session of the file alive (an
    entry made keeps its session without turns): every step between the file and the compactor
    (the stream, the cleaning, the reading, the compact loop, the live refresh) lets a session go
    before the next is read. An ``enumerate`` in the loop held the default session (every
    message) while the next agent's was read: 212 MB at a 64 MB file, 175 without it and the
    changes beside it (``python bench/memory.py --mb 54 --formats squad-repl``); a ``zip`` in the
    live refresh did the same for a file still written."""
    import gc
    import time

    from scribed import config as config_mod
    from scribed.core import compact_session
    from scribed.core.scribe import Scribe

    path = _big_doc(tmp_path)
    if not quiet:
        os.utime(path, (time.time(), time.time()))
    root = tmp_path / "root"
    (root / ".squad").mkdir(parents=True)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\nworkers = 1\n'
        f'[[sources]]\nkind = "squad-repl"\npath = "{path.parent}"\nagent = "data"\n'
    )
    alive: list[tuple[int | None, int]] = []
    parse = squad_repl._parse

    def watched(src: Source, only: int | None) -> Any:
        gc.collect()
        held = [o for o in gc.get_objects() if isinstance(o, Session) and o.source == path and o.turns]
        alive.append((only, len(held)))
        return parse(src, only)

    monkeypatch.setattr(squad_repl, "_parse", watched)
    let_go: list[bool] = []
    redact = compact_session.redact_session

    def door(sess: Session, turns: Any = None, **kw: Any) -> Any:
        let_go.append(kw.get("let_go", False))
        return redact(sess, turns, **kw)

    monkeypatch.setattr(compact_session, "redact_session", door)
    s = Scribe(config_mod.load(str(cfg)))
    try:
        report = s.run_once(force=quiet)
    finally:
        s.close()
    assert report.compacted == (3 if quiet else 0), report
    assert len(alive) >= 6  # three passes for the briefs, three for the entries or live views
    assert alive == [(k % 3, 0) for k in range(len(alive))], alive
    # read for its entry alone, each gives its raw text up at the door
    assert let_go == ([True] * 3 if quiet else [])
    if not quiet:  # each agent's live view written from its session
        assert len(list((root / ".squad" / "memory" / "hot").glob("*.md"))) == 3
