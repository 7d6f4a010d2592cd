"""The ledger's tables and their forward-only migrations, and the key a source's row is filed under.

Apart from :mod:`scribed.core.ledger` (which re-exports :data:`MIGRATIONS` and :func:`source_key`)
so the shape of the file is read in one place, beside the handle's connection, transactions and
queries: a migration that rewrites keys (3) takes its function from here, and a read-only ledger
from an older release is migrated in memory (:func:`migrated_copy`) with the same steps.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3

from scribed.session.redact import REDACTED, redact_path

MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE sources (
            path TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            agent TEXT NOT NULL,
            size INTEGER NOT NULL DEFAULT 0,
            mtime_ns INTEGER NOT NULL DEFAULT 0,
            sha256 TEXT NOT NULL DEFAULT '',
            offset_done INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL DEFAULT ''
        )""",
        """CREATE TABLE entries (
            id TEXT PRIMARY KEY,
            path TEXT NOT NULL,
            session TEXT NOT NULL,
            agent TEXT NOT NULL,
            session_end TEXT NOT NULL,
            start_offset INTEGER NOT NULL,
            end_offset INTEGER NOT NULL,
            bytes_in INTEGER NOT NULL,
            bytes_out INTEGER NOT NULL,
            ratio REAL NOT NULL,
            recall REAL NOT NULL,
            compressor TEXT NOT NULL,
            tokens_in INTEGER NOT NULL DEFAULT 0,
            tokens_out INTEGER NOT NULL DEFAULT 0,
            ms INTEGER NOT NULL DEFAULT 0,
            llm_error TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX entries_path ON entries(path)",
        "CREATE INDEX sources_status ON sources(status)",
    ],
    # 2: entries know the source lines they hold (content ids are checked against them), and a
    # failed source says when the daemon retries it.
    [
        "ALTER TABLE entries ADD COLUMN first_line INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE entries ADD COLUMN last_line INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE sources ADD COLUMN retry_at TEXT NOT NULL DEFAULT ''",
        "CREATE INDEX entries_session ON entries(session)",
    ],
    # 3: a source's key is its path with any secret in it redacted (plus a digest of the real path),
    # so the ledger stores no secret even when a file name carries one.
    [
        "UPDATE OR IGNORE sources SET path = scribed_source_key(path)",
        "UPDATE entries SET path = scribed_source_key(path)",
    ],
    # 4: a digest of each turn an entry holds (see :func:`~scribed.core.ledger_ids.turn_digests`), so a
    # transcript edited in place is compacted again only in the turns no entry holds.
    ["ALTER TABLE entries ADD COLUMN turn_digests BLOB"],
    # 5: what this machine files an entry's raw turns under and their per-turn digests, keyed with
    # the root's content key (see :mod:`scribed.core.content_key`); an entry from before keeps its id,
    # and its old digests move to ``legacy_keys``, keyed too (:meth:`Ledger.rekey`).
    [
        "ALTER TABLE entries ADD COLUMN content_key TEXT",
        "ALTER TABLE entries ADD COLUMN turn_keys BLOB",
        "ALTER TABLE entries ADD COLUMN legacy_keys BLOB",
        "CREATE INDEX entries_content_key ON entries(content_key)",
    ],
    # 6: transcript copies a failed archive write still owes (see :mod:`scribed.core.copies_owed`):
    # the session is compacted, so only this row says to make its copy again.
    [
        """CREATE TABLE IF NOT EXISTS copies_owed (
            path TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            shown_as TEXT NOT NULL,
            stamp TEXT NOT NULL,
            sessions TEXT NOT NULL,
            agents TEXT NOT NULL
        )"""
    ],
]


_DIGEST = 16  # hex digits of the real path's digest a redacted key ends with
_HEX = "0123456789abcdef"


def source_key(path: os.PathLike[str] | str) -> str:
    """The ledger's key for a source file: its path, or, where a name in it holds a secret, the
    redacted path and a digest of the real one (still unique; nothing secret is stored)."""
    return _source_key(str(path))


@functools.lru_cache(maxsize=4096)
def _source_key(raw: str) -> str:
    """Cached: the rules are fixed for a process, and a run asks five or six times per file."""
    shown = redact_path(raw)
    if shown == raw:
        return raw
    return f"{shown}#{hashlib.sha256(raw.encode('utf-8', 'surrogateescape')).hexdigest()[:_DIGEST]}"


def redacted_key(key: str) -> bool:
    """Whether a ledger key is a redacted one (:func:`source_key` of a path holding a secret), so
    no file has that name: the source is found again by discovery. ``source_key`` of such a key
    returns it unchanged, so comparing the two cannot tell."""
    shown, sep, digest = key.rpartition("#")
    return bool(sep) and len(digest) == _DIGEST and digest.strip(_HEX) == "" and REDACTED in shown


def migrated_copy(db: sqlite3.Connection) -> sqlite3.Connection:
    """A read-only ledger from an older release, migrated in memory: a dry run writes nothing, and
    must not fail on a column the current code reads."""
    mem = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.backup(mem)
    db.close()
    mem.create_function("scribed_source_key", 1, source_key, deterministic=True)
    version = version_of(mem)
    for i, stmts in enumerate(MIGRATIONS[version:], start=version + 1):
        for sql in stmts:
            mem.execute(sql)
        mem.execute(f"PRAGMA user_version={i}")
    return mem


def version_of(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])
