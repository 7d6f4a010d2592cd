"""A source whose file name carries a secret is keyed by its redacted path (plus a digest), and a
ledger written before that rule is re-keyed in place, so nothing is compacted twice."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from scribed.core.ledger import Ledger, SourceRow, source_key

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _row(path: str) -> SourceRow:
    return SourceRow(
        path=path, kind="claude", agent="picard", size=10, mtime_ns=1, sha256="ab", offset_done=10,
        status="done", attempts=0, last_error="", updated_at="",
    )  # fmt: skip


def test_key_hides_the_secret_and_stays_unique() -> None:
    a, b = f"/t/{SECRET}/s.jsonl", "/t/" + SECRET.replace("a1", "z9") + "/s.jsonl"
    assert SECRET not in source_key(a) and source_key(a) != source_key(b)
    assert source_key("/t/plain/s.jsonl") == "/t/plain/s.jsonl"  # ordinary paths are unchanged
    assert source_key(source_key(a)) == source_key(a)  # re-keying twice changes nothing


def test_old_ledger_is_rekeyed_without_losing_rows(tmp_path: Path) -> None:
    db_path = tmp_path / "ledger.db"
    raw = f"/t/{SECRET}/s.jsonl"
    led = Ledger(db_path)
    led.upsert_source(_row("placeholder"))
    led.close()
    with sqlite3.connect(db_path) as db:  # as a ledger from before the rule left it
        db.execute("UPDATE sources SET path=?", (raw,))
        db.execute("ALTER TABLE entries DROP COLUMN turn_digests")  # added by migration 4
        db.execute("DROP INDEX entries_content_key")  # and these by migration 5
        for col in ("content_key", "turn_keys", "legacy_keys"):
            db.execute(f"ALTER TABLE entries DROP COLUMN {col}")
        db.execute("PRAGMA user_version=2")
    led = Ledger(db_path)
    try:
        assert led.source(source_key(raw)) is not None
        assert all(SECRET not in r.path for r in led.sources())
    finally:
        led.close()
    assert SECRET.encode() not in db_path.read_bytes()
