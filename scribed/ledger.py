"""The SQLite ledger: scribed's only state, in ``{root}/.squad/memory/.scribed/ledger.sqlite``.

Forward-only migrations keyed on ``PRAGMA user_version``. What it records lets a rerun (or a
restarted daemon) tell what is new, grown, half-processed or failed, without duplicates.
Nothing secret is stored: paths and reasons pass the redactor before they get here.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scribed.fsutil import ensure_dir

MIGRATIONS: list[str] = [
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE sources (
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
    );
    CREATE TABLE entries (
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
    );
    CREATE INDEX entries_path ON entries(path);
    CREATE INDEX sources_status ON sources(status);
    """,
]

STATUSES = ("pending", "done", "failed", "quarantined")


@dataclass(slots=True)
class SourceRow:
    path: str
    kind: str
    agent: str
    size: int
    mtime_ns: int
    sha256: str
    offset_done: int
    status: str
    attempts: int
    last_error: str
    updated_at: str


class Ledger:
    """Thread-safe handle on the ledger (one connection, serialized by a lock)."""

    def __init__(self, path: Path | None, *, readonly: bool = False) -> None:
        self.path = path
        self._lock = threading.RLock()
        if path is None:
            self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        elif readonly:
            self._db = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
            )
        else:
            ensure_dir(path.parent)
            new = not path.exists()
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
            if new:
                path.chmod(0o600)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
        self._db.row_factory = sqlite3.Row
        if not readonly:
            self._migrate()

    def _migrate(self) -> None:
        with self._lock:
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            for i, sql in enumerate(MIGRATIONS[version:], start=version + 1):
                self._db.executescript(f"BEGIN; {sql}; PRAGMA user_version={i}; COMMIT;")

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()

    @contextlib.contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # --- meta -------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (key, value),
            )

    # --- sources ----------------------------------------------------------------------------
    def source(self, path: str) -> SourceRow | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM sources WHERE path=?", (path,)).fetchone()
        return None if row is None else SourceRow(**dict(row))

    def sources(self, status: str | None = None) -> list[SourceRow]:
        with self._lock:
            if status:
                rows = self._db.execute(
                    "SELECT * FROM sources WHERE status=? ORDER BY path", (status,)
                ).fetchall()
            else:
                rows = self._db.execute("SELECT * FROM sources ORDER BY path").fetchall()
        return [SourceRow(**dict(r)) for r in rows]

    def upsert_source(self, row: SourceRow) -> None:
        with self.tx() as db:
            db.execute(
                """INSERT INTO sources(path, kind, agent, size, mtime_ns, sha256, offset_done, status, attempts,
                                       last_error, updated_at)
                   VALUES(:path, :kind, :agent, :size, :mtime_ns, :sha256, :offset_done, :status, :attempts,
                          :last_error, :updated_at)
                   ON CONFLICT(path) DO UPDATE SET kind=excluded.kind, agent=excluded.agent, size=excluded.size,
                     mtime_ns=excluded.mtime_ns, sha256=excluded.sha256, offset_done=excluded.offset_done,
                     status=excluded.status, attempts=excluded.attempts, last_error=excluded.last_error,
                     updated_at=excluded.updated_at""",
                {
                    "path": row.path,
                    "kind": row.kind,
                    "agent": row.agent,
                    "size": row.size,
                    "mtime_ns": row.mtime_ns,
                    "sha256": row.sha256,
                    "offset_done": row.offset_done,
                    "status": row.status,
                    "attempts": row.attempts,
                    "last_error": row.last_error,
                    "updated_at": row.updated_at,
                },
            )

    def counts(self, *, hot: bool = False) -> dict[str, int]:
        """Rows by status: transcript sources, or (``hot=True``) the hot files scribed reads."""
        with self._lock:
            rows = self._db.execute(
                "SELECT status, COUNT(*) FROM sources WHERE (kind = 'hot') = ? GROUP BY status", (int(hot),)
            ).fetchall()
        out = dict.fromkeys(STATUSES, 0)
        out.update({str(r[0]): int(r[1]) for r in rows})
        return out

    # --- entries ----------------------------------------------------------------------------
    def has_entry(self, entry_id: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM entries WHERE id=?", (entry_id,)).fetchone() is not None

    def add_entry(self, **fields: Any) -> None:
        cols = ", ".join(fields)
        marks = ", ".join(f":{k}" for k in fields)
        with self.tx() as db:
            db.execute(f"INSERT OR IGNORE INTO entries({cols}) VALUES({marks})", fields)

    def entries(self, path: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            if path is None:
                rows = self._db.execute("SELECT * FROM entries ORDER BY created_at, id").fetchall()
            else:
                rows = self._db.execute(
                    "SELECT * FROM entries WHERE path=? ORDER BY created_at, id", (path,)
                ).fetchall()
        return [dict(r) for r in rows]

    def last_entry_at(self) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT MAX(created_at) FROM entries").fetchone()
        return None if row is None or row[0] is None else str(row[0])
