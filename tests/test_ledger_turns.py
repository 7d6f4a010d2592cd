"""Per-turn digests in the ledger: which turns of a transcript edited in place an entry already
holds (``ledger_ids.uncovered``), counted turn for turn, and ledgers written before them. The
digests are keyed (``content_key.Keyring``); the entry ids are the shared ones (redacted turns)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from scribed.core.content_key import Keyring
from scribed.core.ledger import MIGRATIONS, Ledger
from scribed.core.ledger_ids import DIGEST_BYTES, Recognizer, SessionEntry, content_id, uncovered
from scribed.models import Session, Turn
from scribed.session.door import redact_session

KEYS = Keyring(bytes(range(32)))


def turn_digests(turns: list[Turn]) -> bytes:
    return KEYS.turn_digests(turns)


def _session(turns: list[Turn]) -> Session:
    return Session("data", "s", Path("/h.md"), "markdown", list(turns))


def _turns(*texts: str) -> list[Turn]:
    """Alternating user and assistant messages, one line apart, untimed (an Aider history)."""
    roles = ("user", "assistant")
    return [Turn(roles[i % 2], t, line=2 * i + 1) for i, t in enumerate(texts)]  # type: ignore[arg-type]


def _left(entries: list[SessionEntry], now: list[Turn], path: str = "/h.md") -> list[Turn]:
    return uncovered(entries, now, list(now), path=path, rec=Recognizer(_session(now), KEYS))


def _entry(turns: list[Turn], *, digests: bool = True) -> SessionEntry:
    return SessionEntry(
        content_id(redact_session(_session(turns))), turns[0].line, turns[-1].line, "/h.md",
        "2026-11-01T10:00:00Z", KEYS.content_key("s", turns), turn_digests(turns) if digests else b"",
    )  # fmt: skip


def test_a_digest_per_turn_that_tells_every_field() -> None:
    base = Turn("assistant", "pinned the worker", line=3)
    d = turn_digests([base])
    assert len(d) == DIGEST_BYTES
    assert Keyring(bytes(32)).turn_digests([base]) != d  # keyed: another root's key, another digest
    assert turn_digests([Turn("assistant", "pinned the worker", line=9)]) == d  # the line is no content
    for other in (
        Turn("user", "pinned the worker"),
        Turn("assistant", "pinned the worker.", line=3),
        Turn("assistant", "pinned the worker", kind="tool_result", line=3),
        Turn("assistant", "pinned the worker", line=3, tool_name="bash"),
    ):
        assert turn_digests([other]) != d


def test_only_the_edited_turn_is_left() -> None:
    old = _turns("fix the job", "pinned worker 1", "and the cache?", "keyed by the lockfile")
    new = _turns("fix the job", "pinned worker 1 to q2", "and the cache?", "keyed by the lockfile")
    assert [t.text for t in _left([_entry(old)], new)] == ["pinned worker 1 to q2"]


def test_a_turn_said_twice_is_covered_as_often_as_an_entry_holds_it() -> None:
    """One 'continue' more than the entry holds is new (with its answer); counting by set would
    have taken it as held."""
    old = _turns("continue", "did A", "continue", "did B")
    new = _turns("continue", "did A", "continue", "did C", "continue", "did B")
    assert [t.text for t in _left([_entry(old)], new)] == ["did C", "continue"]


def test_turns_inside_a_covered_range_take_their_digests_first() -> None:
    """An unchanged range (its content id matches) holds its turns; a copy of one of them later in
    the file is new."""
    first = _turns("deploy it", "deployed")
    rest = [Turn("user", "deploy it", line=5), Turn("assistant", "deployed again", line=7)]
    assert [t.text for t in _left([_entry(first)], first + rest)] == ["deploy it", "deployed again"]


def test_an_entry_written_before_digests_covers_only_its_unchanged_range() -> None:
    old = _turns("fix the job", "pinned worker 1")
    new = _turns("fix the job", "pinned worker 1 to q2")
    assert _left([_entry(old, digests=False)], new) == new


def test_another_files_entries_cover_no_turn_word_for_word() -> None:
    """Two Aider histories started in the same second share the session id: one agent's entry
    must not hide the other's turns (found by review)."""
    old = _turns("fix the job", "pinned worker 1", "thanks")
    new = _turns("fix the job", "pinned worker 1", "and the cache?", "keyed by the lockfile")
    assert _left([_entry(old)], new, path="/other/h.md") == new
    assert [t.text for t in _left([_entry(old)], new)] == ["and the cache?", "keyed by the lockfile"]


def test_changed_tool_output_alone_comes_with_the_message_before_it() -> None:
    """A part with no message is not compacted: tool output an edit changed would be lost alone
    (found by review)."""
    old = [
        *_turns("run the tests", "running them"),
        Turn("tool", "> 3 failed: KeyError q_7", "tool_result", line=5),
    ]
    new = [
        *_turns("run the tests", "running them"),
        Turn("tool", "> 3 failed: KeyError ROLLBACK", "tool_result", line=5),
    ]
    assert [t.text for t in _left([_entry(old)], new)] == ["running them", "> 3 failed: KeyError ROLLBACK"]
    first = [Turn("tool", "> banner v2", "tool_result", line=1), *_turns("go", "went")]
    was = [Turn("tool", "> banner v1", "tool_result", line=1), *_turns("go", "went")]
    for t in first[1:]:
        t.line += 2
    for t in was[1:]:
        t.line += 2
    assert [t.text for t in _left([_entry(was)], first)] == ["> banner v2", "go"]  # none before: the next


def test_a_version_3_ledger_gains_the_column_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    db = sqlite3.connect(path)
    db.create_function("scribed_source_key", 1, str, deterministic=True)
    db.executescript(";\n".join(s for m in MIGRATIONS[:3] for s in m) + ";\nPRAGMA user_version=3;")
    db.execute(
        "INSERT INTO entries(id, path, session, agent, session_end, start_offset, end_offset, bytes_in,"
        " bytes_out, ratio, recall, compressor, created_at, first_line, last_line) VALUES('e-000000000002',"
        " '/a', 's', 'worf', 'x', 0, 10, 10, 5, 0.5, 1.0, 'extractive', 'now', 1, 4)"
    )
    db.commit()
    db.close()
    led = Ledger(path)
    try:
        assert led.session_entries("s") == [SessionEntry("e-000000000002", 1, 4, "/a", "x")]
        led.add_entry(
            id="e-000000000003", path="/a", session="s", agent="worf", session_end="y", start_offset=0,
            end_offset=20, bytes_in=20, bytes_out=5, ratio=0.25, recall=1.0, compressor="extractive",
            created_at="now", first_line=5, last_line=8, content_key="k-1", turn_keys=b"\x01" * DIGEST_BYTES,
        )  # fmt: skip
        got = sorted(led.session_entries("s"))
        assert got[1] == SessionEntry("e-000000000003", 5, 8, "/a", "y", "k-1", b"\x01" * DIGEST_BYTES)
        assert led.has_content("k-1") and not led.has_content("k-2")
    finally:
        led.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) == 6


def test_digests_from_before_keys_are_keyed_in_place(tmp_path: Path) -> None:
    """A version 4 ledger's per-turn digests (unkeyed, of redacted turns) are replaced by keyed ones,
    and the unkeyed bytes leave the file; the keyed ones still tell the turns they stood for."""
    path = tmp_path / "ledger.sqlite"
    db = sqlite3.connect(path)
    db.create_function("scribed_source_key", 1, str, deterministic=True)
    db.executescript(";\n".join(s for m in MIGRATIONS[:4] for s in m) + ";\nPRAGMA user_version=4;")
    old = bytes.fromhex("a1b2c3d4e5f60718") + bytes.fromhex("1122334455667788")
    db.execute(
        "INSERT INTO entries(id, path, session, agent, session_end, start_offset, end_offset, bytes_in,"
        " bytes_out, ratio, recall, compressor, created_at, first_line, last_line, turn_digests) VALUES("
        "'e-000000000002', '/a', 's', 'worf', 'x', 0, 10, 10, 5, 0.5, 1.0, 'extractive', 'now', 1, 4, ?)",
        (old,),
    )
    db.commit()
    db.close()
    led = Ledger(path)
    try:
        assert led.rekey(Keyring(bytes(32))) == "1 entries' digests keyed"
        assert led.rekey(Keyring(bytes(32))) == ""  # done once
        (e,) = led.session_entries("s")
        assert e.legacy_keys == Keyring(bytes(32)).legacy(old) and len(e.legacy_keys) == 2 * DIGEST_BYTES
        assert "key replaced" in led.rekey(KEYS)  # another key: what the old one keyed is of no use
        assert led.session_entries("s")[0].legacy_keys == b""
    finally:
        led.close()
    assert old[:8] not in path.read_bytes() and old[8:] not in path.read_bytes()
