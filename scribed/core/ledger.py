"""The SQLite ledger: scribed's only state, in ``{root}/.squad/memory/.scribed/ledger.sqlite``.

Forward-only migrations keyed on ``PRAGMA user_version`` (the tables and their steps are
:mod:`scribed.core.ledger_schema`), applied in one ``BEGIN IMMEDIATE`` transaction so two first
runs on a fresh root never race. What it records lets a rerun (or a restarted daemon) tell what
is new, grown, half-processed or failed, without duplicates.
Nothing secret is stored: paths and reasons pass the redactor before they get here.

The ledger is a cache of what the memory files already say: every cold entry carries its
provenance (id, session, line range), so a ledger that is lost, emptied or corrupt is rebuilt
from the cold files, their archives and the wiki (:func:`ensure`) instead of compacting again.
Entry ids hash the session id and the redacted content of the turns they hold (:func:`content_id`),
not the source's path, so a renamed or rotated transcript is recognized as already compacted; the
ledger also files each entry under a keyed digest of its raw turns (:mod:`scribed.core.content_key`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scribed.core.content_key import Keyring
from scribed.core.ledger_ids import OwedCopy as OwedCopy
from scribed.core.ledger_ids import Recognizer as Recognizer
from scribed.core.ledger_ids import SessionEntry as SessionEntry
from scribed.core.ledger_ids import SourceRow as SourceRow
from scribed.core.ledger_ids import content_id as content_id
from scribed.core.ledger_ids import effective_mtime as effective_mtime
from scribed.core.ledger_ids import legacy_content_id as legacy_content_id
from scribed.core.ledger_ids import legacy_id as legacy_id
from scribed.core.ledger_ids import same_state as same_state
from scribed.core.ledger_ids import says as says
from scribed.core.ledger_ids import uncovered as uncovered
from scribed.core.ledger_rebuild import REFILED, rebuild_rows, refile_shown
from scribed.core.ledger_schema import MIGRATIONS as MIGRATIONS
from scribed.core.ledger_schema import migrated_copy, version_of
from scribed.core.ledger_schema import redacted_key as redacted_key
from scribed.core.ledger_schema import source_key as source_key
from scribed.fsutil import ensure_dir

STATUSES = ("pending", "done", "failed", "quarantined")
_SIDECARS = ("-wal", "-shm", "-journal")


def _log() -> Any:
    from scribed.log import get

    return get()


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


class Ledger:
    """Thread-safe handle on the ledger (one connection, serialized by a lock)."""

    def __init__(self, path: Path | None, *, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        self._lock = threading.RLock()
        self._ident: tuple[int, int] | None = None
        self.checked = False  # set by ensure(): the empty-ledger check ran on this connection
        self.copied = False  # read-only, from an older release: migrated in memory (_migrated_copy)
        self._batching = False  # inside batch(): tx() is a savepoint of the batch's transaction
        self.found = ""  # why the file opened holds nothing: "missing", "corrupt (…), set aside as …"
        self._db = self._connect()
        if not readonly:
            self._migrate()

    # --- opening ----------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        path = self.path
        if path is None:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        elif self.readonly:
            db = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
            )
            if version_of(db) < len(MIGRATIONS):
                db, self.copied = migrated_copy(db), True
        else:
            db = self._connect_rw(path)
        db.row_factory = sqlite3.Row
        return db

    def _connect_rw(self, path: Path) -> sqlite3.Connection:
        ensure_dir(path.parent)
        _clear_stale(path)
        self.found = "" if path.exists() else "missing"
        try:
            db = self._open_file(path)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):  # locked, unreachable: not a damaged file
                raise
            dest = _set_aside(path, str(exc))
            self.found = f"corrupt ({exc}), set aside as {dest.name}"
            db = self._open_file(path)
        st = path.stat()
        self._ident = (st.st_dev, st.st_ino)
        return db

    @staticmethod
    def _open_file(path: Path) -> sqlite3.Connection:
        new = not path.exists()
        db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        try:
            if new:
                path.chmod(0o600)
            _busy_retry(lambda: db.execute("PRAGMA journal_mode=WAL"))
            db.execute("PRAGMA synchronous=FULL")
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # "file is not a database" here
        except BaseException:
            db.close()
            raise
        return db

    def _migrate(self) -> None:
        """Apply the missing migrations in one write transaction (the version is read inside it)."""
        with self._lock:
            if self._version() >= len(MIGRATIONS):
                return
            self._db.create_function("scribed_source_key", 1, source_key, deterministic=True)
            _busy_retry(lambda: self._db.execute("BEGIN IMMEDIATE"))
            try:
                version = self._version()
                for i, stmts in enumerate(MIGRATIONS[version:], start=version + 1):
                    for sql in stmts:
                        self._db.execute(sql)
                    self._db.execute(f"PRAGMA user_version={i}")
                if version == 0:  # a new ledger: no older rebuild filed anything under a shown path
                    self._db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES(?, '1')", (REFILED,))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()

    # --- loss -------------------------------------------------------------------------------
    def lost(self) -> str:
        """Why the file this connection writes is no longer the ledger on disk ("" if it is)."""
        if self.path is None or self.readonly or self._ident is None:
            return ""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return "missing"
        except OSError:
            return ""
        if (st.st_dev, st.st_ino) != self._ident:
            return "replaced"
        return "truncated" if st.st_size == 0 else ""

    def reopen_if_lost(self) -> str:
        """Open the ledger afresh when it was deleted, replaced or truncated under us; returns why."""
        with self._lock:
            why = self.lost()
            if not why:
                return ""
            assert self.path is not None
            if why != "replaced":  # the files left belong to the lost ledger, not to a new one
                for suffix in _SIDECARS:
                    _unlink(_sidecar(self.path, suffix))
                if why == "truncated":
                    _unlink(self.path)
            self.close()
            self._db = self._connect()
            self._migrate()
            self.checked = False
            return why

    def is_empty(self) -> bool:
        with self._lock:
            return all(
                self._db.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() is None
                for t in ("entries", "sources")
            )

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction (one commit, one WAL sync) for the writes of many sources; ``tx()`` inside
        is a savepoint. Holds the ledger for its length, so callers keep batches short. On an error
        nothing of the batch is kept: the memory files written during it already hold the entries, and
        a rerun finds them there (the cold file is written before its ledger row, never after)."""
        with self._lock:
            if self._batching or self.readonly or self.path is None:
                yield
                return
            _busy_retry(lambda: self._db.execute("BEGIN IMMEDIATE"))
            self._batching = True
            try:
                yield
            except BaseException:
                self._batching = False
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._batching = False
            if self._db.in_transaction:  # not when the ledger was reopened (lost) during the batch
                self._db.execute("COMMIT")

    def checkpoint(self) -> None:
        """Inside :meth:`batch`: commit what the batch holds so far and go on in a new transaction
        (a fold is about to drop ids the rows of this batch must be durable for)."""
        with self._lock:
            if self._batching and self._db.in_transaction:
                self._db.execute("COMMIT")
                _busy_retry(lambda: self._db.execute("BEGIN IMMEDIATE"))

    @contextlib.contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._batching and self._db.in_transaction:
                self._db.execute("SAVEPOINT tx")
                try:
                    yield self._db
                except BaseException:
                    self._db.execute("ROLLBACK TO tx")
                    self._db.execute("RELEASE tx")
                    raise
                self._db.execute("RELEASE tx")
                return
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
        return None if row is None else _source_row(row)

    def sources(self, status: str | None = None) -> list[SourceRow]:
        with self._lock:
            if status:
                rows = self._db.execute(
                    "SELECT * FROM sources WHERE status=? ORDER BY path", (status,)
                ).fetchall()
            else:
                rows = self._db.execute("SELECT * FROM sources ORDER BY path").fetchall()
        return [_source_row(r) for r in rows]

    def upsert_source(self, row: SourceRow) -> None:
        with self.tx() as db:
            db.execute(
                """INSERT INTO sources(path, kind, agent, size, mtime_ns, sha256, offset_done, status, attempts,
                                       last_error, updated_at, retry_at)
                   VALUES(:path, :kind, :agent, :size, :mtime_ns, :sha256, :offset_done, :status, :attempts,
                          :last_error, :updated_at, :retry_at)
                   ON CONFLICT(path) DO UPDATE SET kind=excluded.kind, agent=excluded.agent, size=excluded.size,
                     mtime_ns=excluded.mtime_ns, sha256=excluded.sha256, offset_done=excluded.offset_done,
                     status=excluded.status, attempts=excluded.attempts, last_error=excluded.last_error,
                     updated_at=excluded.updated_at, retry_at=excluded.retry_at""",
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
                    "retry_at": row.retry_at,
                },
            )

    def set_retry_at(self, path: str, when: str) -> None:
        """When the daemon tries a failed source again (what ``status`` shows)."""
        with self.tx() as db:
            db.execute("UPDATE sources SET retry_at=? WHERE path=?", (when, path))

    def counts(self, *, hot: bool = False) -> dict[str, int]:
        """Rows by status: transcript sources, or (``hot=True``) the hot files scribed reads."""
        with self._lock:
            rows = self._db.execute(
                "SELECT status, COUNT(*) FROM sources WHERE (kind = 'hot') = ? GROUP BY status", (int(hot),)
            ).fetchall()
        out = dict.fromkeys(STATUSES, 0)
        out.update({str(r[0]): int(r[1]) for r in rows})
        return out

    # --- transcript copies owed -------------------------------------------------------------
    def owe_copy(self, owed: OwedCopy) -> None:
        """Record a copy not made; one already owed for the path keeps its sessions and agents."""
        with self.tx() as db:
            row = db.execute("SELECT sessions, agents FROM copies_owed WHERE path=?", (owed.path,)).fetchone()
            sessions, agents = set(owed.sessions), set(owed.agents)
            if row is not None:
                sessions.update(json.loads(row[0]))
                agents.update(json.loads(row[1]))
            db.execute(
                "INSERT OR REPLACE INTO copies_owed(path, kind, shown_as, stamp, sessions, agents) "
                "VALUES(?, ?, ?, ?, ?, ?)",
                (owed.path, owed.kind, owed.shown_as, owed.stamp, json.dumps(sorted(sessions)),
                 json.dumps(sorted(agents))),
            )  # fmt: skip

    def copies_owed(self) -> list[OwedCopy]:
        """The copies still owed; with none, one indexless look at an empty table."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, kind, shown_as, stamp, sessions, agents FROM copies_owed ORDER BY path"
            ).fetchall()
        return [
            OwedCopy(str(r[0]), str(r[1]), str(r[2]), str(r[3]), json.loads(r[4]), json.loads(r[5]))
            for r in rows
        ]

    def copy_made(self, path: str) -> None:
        """The copy owed for ``path`` is made (or no longer wanted)."""
        with self.tx() as db:
            db.execute("DELETE FROM copies_owed WHERE path=?", (path,))

    # --- entries ----------------------------------------------------------------------------
    def has_entry(self, entry_id: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM entries WHERE id=?", (entry_id,)).fetchone() is not None

    def has_content(self, key: str) -> bool:
        """An entry filed under this content key (:meth:`Keyring.content_key`) exists."""
        with self._lock:
            return (
                self._db.execute("SELECT 1 FROM entries WHERE content_key=?", (key,)).fetchone() is not None
            )

    def file_under(self, entry_id: str, key: str) -> None:
        """File an entry known by its id alone (rebuilt from files, another clone's, from before keys)
        under its content key too, so the next lookup needs no redaction."""
        with self.tx() as db:
            db.execute("UPDATE entries SET content_key=? WHERE id=? AND content_key IS NULL", (key, entry_id))

    def rekey(self, keys: Keyring) -> str:
        """Bring the keyed columns in line with ``keys``: digests from before keys are keyed (and the
        unkeyed ones overwritten on disk), and a key that is not the one the columns were made with
        (the key file was lost or replaced) leaves them empty: entries are then recognised by their
        ids. Returns what it did ("" when nothing)."""
        check = keys.check()
        if self.readonly and not self.copied:  # a dry run on the current ledger: nothing to change
            return ""
        with self._lock:
            was = self.get_meta("content_key_check")
            stale = was is not None and was != check
            legacy = (
                self._db.execute("SELECT 1 FROM entries WHERE turn_digests IS NOT NULL LIMIT 1").fetchone()
                is not None
            )
            if was == check and not legacy:
                return ""
            self._db.execute("PRAGMA secure_delete=ON")  # freed pages are zeroed, not left readable
            with self.tx() as db:
                if stale:
                    db.execute("UPDATE entries SET content_key=NULL, turn_keys=NULL, legacy_keys=NULL")
                rows = db.execute(
                    "SELECT id, turn_digests FROM entries WHERE turn_digests IS NOT NULL"
                ).fetchall()
                db.executemany(
                    "UPDATE entries SET legacy_keys=?, turn_digests=NULL WHERE id=?",
                    [(keys.legacy(bytes(r[1])), r[0]) for r in rows],
                )
                db.execute(
                    "INSERT INTO meta(key, value) VALUES('content_key_check', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                    (check,),
                )
            if not self._batching and self.path is not None and not self.readonly:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the old pages leave the WAL
        done = [f"{len(rows)} entries' digests keyed"] if rows else []
        return "; ".join([*(["key replaced: keyed columns cleared"] if stale else []), *done])

    def add_entry(self, **fields: Any) -> None:
        self.add_entries([fields])

    def add_entries(self, rows: Sequence[dict[str, Any]]) -> None:
        """Record entries (same columns in every row) in one transaction; a known id is kept."""
        if not rows:
            return
        cols = ", ".join(rows[0])
        marks = ", ".join(f":{k}" for k in rows[0])
        with self.tx() as db:
            db.executemany(f"INSERT OR IGNORE INTO entries({cols}) VALUES({marks})", rows)

    def session_entries(self, session: str) -> list[SessionEntry]:
        """The entries of one session, from any source path (see :class:`SessionEntry`)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, first_line, last_line, path, session_end, content_key, turn_keys, legacy_keys "
                "FROM entries WHERE session=? AND last_line > 0",
                (session,),
            ).fetchall()
        return [
            SessionEntry(*(str(r[0]), int(r[1]), int(r[2]), str(r[3]), str(r[4])), *_keyed(r)) for r in rows
        ]

    def move_entries(self, old: str, new: str) -> None:
        """File the entries of source ``old`` under ``new``, the same transcript moved there: its
        line ranges are the new file's, so a later edit or cut there is told as in place."""
        with self.tx() as db:
            db.execute("UPDATE entries SET path=? WHERE path=?", (new, old))

    def entry_ids(self) -> dict[str, tuple[str, str, str]]:
        """Every entry the ledger knows: id → (source path, session, agent)."""
        with self._lock:
            rows = self._db.execute("SELECT id, path, session, agent FROM entries").fetchall()
        return {str(r[0]): (str(r[1]), str(r[2]), str(r[3])) for r in rows}

    def forget(self, ids: Sequence[str]) -> None:
        """Drop entries the memory files no longer hold and mark their sources unread, so the next
        pass compacts those sessions again (the files are the truth; see
        :mod:`scribed.core.ledger_reconcile`)."""
        with self.tx() as db:
            for eid in ids:
                row = db.execute("SELECT path FROM entries WHERE id=?", (eid,)).fetchone()
                db.execute("DELETE FROM entries WHERE id=?", (eid,))
                if row is not None:
                    db.execute(
                        "UPDATE sources SET size=0, mtime_ns=0, sha256='', offset_done=0, status='pending' "
                        "WHERE path=?",
                        (row[0],),
                    )

    def last_entry_at(self) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT MAX(created_at) FROM entries").fetchone()
        return None if row is None or row[0] is None else str(row[0])


def _source_row(row: sqlite3.Row) -> SourceRow:
    d = dict(row)
    return SourceRow(**{k: d[k] for k in SourceRow.__slots__ if k in d})


def _keyed(r: sqlite3.Row) -> tuple[str, bytes, bytes]:
    return str(r[5] or ""), bytes(r[6] or b""), bytes(r[7] or b"")


def _busy_retry(op: Any, tries: int = 50) -> Any:
    """Run ``op``, retrying "database is locked" (a journal-mode switch does not wait for a lock)."""
    for i in range(tries):
        try:
            return op()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or i == tries - 1:
                raise
            time.sleep(0.02 * (i + 1))
    return None  # pragma: no cover


def _clear_stale(path: Path) -> None:
    """A missing or empty ledger next to a WAL: the WAL belongs to the lost ledger and would be
    replayed into the new one. An empty file with a WAL goes too, so the new ledger is a new file
    (a daemon still holding the lost one sees it was replaced)."""
    try:
        empty = path.stat().st_size == 0
    except FileNotFoundError:
        empty = True
    if not empty:
        return
    if not _sidecar(path, "-wal").exists():  # a -journal here may be a first open in progress
        return
    _unlink(path)
    for suffix in ("-wal", "-shm"):
        _unlink(_sidecar(path, suffix))


def _set_aside(path: Path, why: str) -> Path:
    """Keep a corrupt ledger for inspection under a dated name; a fresh one is rebuilt in its place.
    Returns that name."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    dest = path.with_name(f"{path.name}.corrupt-{stamp}")
    with contextlib.suppress(OSError):
        os.replace(path, dest)
    for suffix in _SIDECARS:
        _unlink(_sidecar(path, suffix))
    _log().warning("ledger_corrupt", file=str(path), moved_to=str(dest), reason=why)
    return dest


# --- lost or empty ledger ---------------------------------------------------------------------
def ensure(ledger: Ledger, memory: Path, archive: Path, root: Path | None = None) -> str:
    """Reopen a ledger lost while open; rebuild an empty one from the memory files (``root``: the
    squad root, which provenance paths inside it are relative to), and once refile the entries an
    older rebuild filed under shown paths (:func:`refile_shown`). Returns what it did.

    Called before each unit of work (cheap: one ``stat`` once checked), under the root lock.
    """
    with ledger._lock:
        why = ledger.reopen_if_lost()
        if ledger.checked:
            return ""
        ledger.checked = True
        if root is not None and not ledger.readonly and ledger.get_meta(REFILED) is None:
            with ledger.tx() as db:
                if refiled := refile_shown(db, root):
                    _log().info("ledger_refiled", file=str(ledger.path), paths=refiled)
        if ledger.readonly or not ledger.is_empty():
            return f"reopened ({why})" if why else ""
        why = why or ledger.found  # lost while open, else how it was found: missing, corrupt
        rows = rebuild_rows(
            memory, archive, git=True, root=root
        )  # what the memory files (and git) say was compacted
        if rows:
            cols = ", ".join(rows[0])
            marks = ", ".join(f":{k}" for k in rows[0])
            with ledger.tx() as db:
                db.executemany(f"INSERT OR IGNORE INTO entries({cols}) VALUES({marks})", rows)
                stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                db.execute(
                    "INSERT INTO meta(key, value) VALUES('rebuilt_at', ?) "
                    "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                    (stamp,),
                )
            _log().warning(
                "ledger_rebuilt",
                file=str(ledger.path) if ledger.path else ":memory:",
                reason=why or "empty",
                entries=len(rows),
            )
        return f"rebuilt {len(rows)} entries ({why or 'empty'})"
