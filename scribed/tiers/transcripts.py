"""The transcript archive: a redacted, zstd-compressed copy of each compacted transcript.

Tools delete their raw transcripts (Claude Code after 30 days by default; Codex compresses and
rotates them), and with them every fact a summary missed. When a session is compacted, scribed
keeps a copy of its source file in its own state folder (``.squad/memory/.scribed/tiers/transcripts/`` or
``[archive] folder``), redacted line by line and compressed as it streams, so memory stays bounded.

One archive per source file: ``<kind>-<hash of the path>.zst`` with a ``.json`` sidecar naming the
source, the sessions it holds and when it was archived. A file that grew is archived again and
replaces its older copy; copies not refreshed for ``retention_days`` are deleted.
``scribed show SESSION`` prints an archive back (:func:`find`, :func:`read_chunks`), and
:func:`iter_archives` lets the search index read them.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import zstandard

from scribed.config import Config
from scribed.dates import utcnow
from scribed.fsutil import atomic_write, ensure_dir, fsync_dir, replacing
from scribed.session.door import Redacted, redacted_chunks
from scribed.sources import zst
from scribed.tiers.cold import Layout
from scribed.tiers.records import Json

if TYPE_CHECKING:
    from scribed.log import Logger

SUFFIX = ".zst"
META_SUFFIX = ".json"
CHUNK_BYTES = 1 << 20  # redaction works on about this much text at a time, cut at line ends
# zstd's own default: on generated transcripts 8x the speed of level 10 for 21% more bytes (the
# archive is written once per compaction, on the hot path; any level reads back the same).
ZSTD_LEVEL = 3
# A line longer than a chunk (a pasted log with no line break) is cut into chunks too: each is still
# judged with 64 KiB of text on either side (session/door), so only memory changes.
_LINE_LIMIT = CHUNK_BYTES
PRUNE_EVERY_SECONDS = 3600.0
MIN_SESSION_PREFIX = 6
_prune_lock = threading.Lock()
_last_prune: dict[str, float] = {}


@dataclass(slots=True)
class Archived:
    """One archived transcript, as its sidecar describes it."""

    path: Path  # the .zst archive
    source: str  # the source file, redacted, as provenance shows it
    kind: str
    sessions: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    stamp: str = ""  # size:mtime_ns of the source when archived
    archived_at: str = ""
    bytes_in: int = 0  # redacted, uncompressed
    bytes_out: int = 0  # compressed
    origin: Path | None = None  # the source this process archived (never stored: ``source`` shows it)

    def public(self) -> Json:
        return {
            "archive": str(self.path),
            "source": self.source,
            "kind": self.kind,
            "sessions": self.sessions,
            "agents": self.agents,
            "archived_at": self.archived_at,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
        }


def folder(cfg: Config, layout: Layout) -> Path:
    """Where archives go: ``[archive] folder`` or the state folder's ``transcripts/``."""
    return cfg.archive.expanded or layout.state / "transcripts"


def _names(dest: Path, kind: str, source: Path) -> tuple[Path, Path]:
    digest = hashlib.sha256(str(source).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    base = dest / f"{kind}-{digest}"
    return base.with_name(base.name + SUFFIX), base.with_name(base.name + META_SUFFIX)


def _load(meta_path: Path) -> Archived | None:
    """A sidecar, or None when it is missing or not ours (inside :func:`batched_copies`, a held one)."""
    held = _held()
    if held is not None and meta_path in held:
        return held[meta_path]
    try:
        data = json.loads(meta_path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("source"), str):
        return None

    def strs(key: str) -> list[str]:
        value = data.get(key)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def num(key: str) -> int:
        value = data.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return Archived(
        path=meta_path.with_name(meta_path.name.removesuffix(META_SUFFIX) + SUFFIX),
        source=data["source"],
        kind=str(data.get("kind", "")),
        sessions=strs("sessions"),
        agents=strs("agents"),
        stamp=str(data.get("stamp", "")),
        archived_at=str(data.get("archived_at", "")),
        bytes_in=num("bytes_in"),
        bytes_out=num("bytes_out"),
    )


def _save(meta_path: Path, a: Archived) -> None:
    """Write the sidecar atomically, with no fsync of its own: the copy is not memory (a compaction
    never waits on it), and this halves its cost per session. A crash right after can lose the
    sidecar (an unlisted copy, archived again when its source changes), never a cold entry. The
    folder sync is still made (at the end of a batch, with the data file's). Inside
    :func:`batched_copies` it is held until the batch's copies are durable."""
    held = _held()
    if held is not None:
        held[meta_path] = a
        return
    data = a.public()
    data.pop("archive")
    data["stamp"] = a.stamp
    atomic_write(meta_path, json.dumps(data, indent=1, ensure_ascii=False) + "\n", sync=False)
    fsync_dir(meta_path.parent)


@dataclass(frozen=True, slots=True)
class Copy:
    """A copy made ahead (by a pool worker, :func:`produce`), placed by :func:`archive` only when
    the source still has the ``stamp`` it was made from."""

    source: Path
    stamp: str  # size:mtime_ns of the source it was made from
    data: bytes  # the redacted, compressed copy
    bytes_in: int  # redacted, uncompressed


def _stamp(source: Path) -> str:
    st = source.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


_cctx = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    """This thread's compressor: making one costs ~0.1 ms (its context's tables), 20x a small
    transcript's compression; one is reused for every copy (a compressor is not thread-safe; each
    ``stream_writer`` starts a new frame)."""
    cctx: zstandard.ZstdCompressor | None = getattr(_cctx, "c", None)
    if cctx is None:
        cctx = _cctx.c = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    return cctx


def _fill(raw: BinaryIO, source: Path) -> int:
    """Stream ``source`` through the door and zstd into ``raw``; returns the redacted bytes."""
    written = 0
    with zst.open_binary(source) as src, _compressor().stream_writer(raw, closefd=False) as writer:
        for chunk in redacted_chunks(src, CHUNK_BYTES, _LINE_LIMIT):  # the door, streamed
            writer.write(chunk)
            written += len(chunk)
    return written


def produce(source: Path) -> Copy | None:
    """The copy of ``source`` in memory, writing nothing (a pool worker's part); None when the
    source changed while it was read."""
    before = _stamp(source)
    buf = io.BytesIO()
    written = _fill(buf, source)
    return Copy(source, before, buf.getvalue(), written) if _stamp(source) == before else None


def _ahead(source: Path) -> Copy | None:
    """The copy of ``source`` made ahead (see :func:`made_ahead`) while it still holds."""
    copy: Copy | None = getattr(_batch, "ahead", None)
    return copy if copy is not None and copy.source == source and copy.stamp == _stamp(source) else None


def _write(source: Path, data_path: Path, *, sync: bool = True) -> tuple[int, int]:
    """Write the redacted, compressed copy atomically (the one made ahead when it holds); returns
    (bytes in, bytes out). ``sync=False``: no fsync, :func:`batched_copies` syncs the batch's
    copies at once."""
    copy = _ahead(source)
    ensure_dir(data_path.parent)
    with replacing(data_path, sync=sync) as raw:
        if copy is None:
            written = _fill(raw, source)
        else:
            raw.write(copy.data)
            written = copy.bytes_in
    fsync_dir(data_path.parent)
    return written, data_path.stat().st_size


def archive(
    cfg: Config,
    layout: Layout,
    source: Path,
    *,
    kind: str,
    session: Redacted,
    agent: Redacted,
    shown_as: Redacted,
    now: datetime | None = None,
) -> Archived | None:
    """Archive ``source`` (redacted, compressed) after one of its sessions was compacted.

    Cheap when nothing changed: a source archived at its current size and mtime only gains the
    session's id. Returns None when archiving is off. Raises ``OSError`` on a failed write; the
    caller logs it (a compaction never fails because its copy could not be kept). Inside
    :func:`made_ahead`, a pool worker's copy is placed instead when it is of this source as it is.
    """
    return archive_sessions(
        cfg, layout, source, kind=kind, sessions=[session], agents=[agent], shown_as=shown_as, now=now
    )


def archive_sessions(
    cfg: Config,
    layout: Layout,
    source: Path,
    *,
    kind: str,
    sessions: Iterable[Redacted],
    agents: Iterable[Redacted],
    shown_as: Redacted,
    now: datetime | None = None,
) -> Archived | None:
    """:func:`archive` for several sessions at once: a copy owed since a failed write is made with
    every session it was owed for (see :mod:`scribed.core.copies_owed`)."""
    if not cfg.archive.transcripts:
        return None
    dest = folder(cfg, layout)
    when = now or utcnow()
    data_path, meta_path = _names(dest, kind, source)
    st = source.stat()
    stamp = f"{st.st_size}:{st.st_mtime_ns}"
    new_sessions, new_agents = set(sessions), set(agents)
    old = _load(meta_path)
    if old is not None and old.stamp == stamp and data_path.is_file():
        if new_sessions <= set(old.sessions) and new_agents <= set(old.agents):
            return old
        old.sessions = sorted({*old.sessions, *new_sessions})
        old.agents = sorted({*old.agents, *new_agents})
        old.origin = source
        _save(meta_path, old)
        return old
    bytes_in, bytes_out = _write(source, data_path, sync=_held() is None)
    rec = Archived(
        path=data_path,
        source=shown_as,
        kind=kind,
        sessions=sorted({*(old.sessions if old else []), *new_sessions}),
        agents=sorted({*(old.agents if old else []), *new_agents}),
        stamp=stamp,
        archived_at=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        bytes_in=bytes_in,
        bytes_out=bytes_out,
        origin=source,
    )
    _save(meta_path, rec)
    maybe_prune(dest, cfg.archive.retention_days, when)
    return rec


_batch = threading.local()


def _held() -> dict[Path, Archived] | None:
    held: dict[Path, Archived] | None = getattr(_batch, "metas", None)
    return held


@contextlib.contextmanager
def batched_copies(log: Logger, owe: Callable[[list[Archived]], None] | None = None) -> Iterator[None]:
    """Inside, in this thread, :func:`archive` writes each copy's data with no fsync and holds its
    sidecar; leaving makes the batch's copies durable with one ``os.sync()`` (as promotion does for
    its archives), then writes the sidecars. So a sidecar never lists a copy a crash could lose: a
    crash before leaves the copies unlisted, and the rerun of the uncommitted batch (its ledger
    commit comes after this) archives them again. One sync per batch, not one fsync per session.
    A failure is a warning naming the archive folder, and the batch's copies go to ``owe`` (each
    with its ``origin``), to be made again by a later run: the compaction does not depend on its
    copy, and its session is not compacted again. Nested: the outer one syncs."""
    if _held() is not None:
        yield
        return
    _batch.metas = metas = dict[Path, Archived]()
    try:
        yield
    finally:
        _batch.metas = None
        if metas:
            try:
                os.sync()
                for meta_path, rec in metas.items():
                    _save(meta_path, rec)
            except OSError as exc:
                log.warning(
                    "transcript_archive_failed",
                    folder=str(next(iter(metas)).parent),
                    files=len(metas),
                    reason=str(exc.strerror or exc),
                    action="the copies are made again by the next run once the folder takes them",
                )
                if owe is not None:
                    owe(list(metas.values()))


@contextlib.contextmanager
def made_ahead(copy: Copy | None) -> Iterator[None]:
    """Inside, in this thread, :func:`archive` places ``copy`` (a pool worker's, :func:`produce`)
    instead of making the copy again, when its source still has the stamp it was made from."""
    _batch.ahead = copy
    try:
        yield
    finally:
        _batch.ahead = None


def iter_archives(dest: Path) -> Iterator[Archived]:
    """Every archive in ``dest`` whose sidecar and data are both there, in name order."""
    try:
        metas = sorted(
            p for p in dest.iterdir() if p.name.endswith(META_SUFFIX) and not p.name.startswith(".")
        )
    except OSError:
        return
    for meta in metas:
        rec = _load(meta)
        if rec is not None and rec.path.is_file():
            yield rec


def find(dest: Path, session: str) -> list[Archived]:
    """Archives holding ``session``: an exact id, else a unique prefix of at least 6 characters
    (or the sub-agent sessions ``<session>/…`` of a parent)."""
    exact: list[Archived] = []
    partial: list[Archived] = []
    for rec in iter_archives(dest):
        if session in rec.sessions:
            exact.append(rec)
        elif len(session) >= MIN_SESSION_PREFIX and any(s.startswith(session) for s in rec.sessions):
            partial.append(rec)
    return exact or partial


def read_chunks(rec: Archived) -> Iterator[bytes]:
    """The archived (redacted) transcript, decompressed as it streams."""
    with zst.open_binary(rec.path) as fh:
        while chunk := fh.read(1 << 16):
            yield chunk


def prune(dest: Path, retention_days: int, now: datetime) -> int:
    """Delete archives not refreshed for ``retention_days``. Returns how many went."""
    cutoff = now - timedelta(days=retention_days)
    gone = 0
    for rec in list(iter_archives(dest)):  # in a batch, a copy archived again has its held sidecar
        try:
            when = datetime.strptime(rec.archived_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except ValueError:
            continue
        if when < cutoff:
            for p in (rec.path, rec.path.with_name(rec.path.name.removesuffix(SUFFIX) + META_SUFFIX)):
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
            gone += 1
    return gone


def maybe_prune(dest: Path, retention_days: int, now: datetime) -> int:
    """:func:`prune`, at most once an hour per folder and process (it reads every sidecar)."""
    key = str(dest)
    with _prune_lock:
        last = _last_prune.get(key, 0.0)
        if time.monotonic() - last < PRUNE_EVERY_SECONDS and last:
            return 0
        _last_prune[key] = time.monotonic()
    return prune(dest, retention_days, now)


__all__ = [
    "Archived",
    "Copy",
    "archive",
    "archive_sessions",
    "find",
    "folder",
    "iter_archives",
    "made_ahead",
    "maybe_prune",
    "produce",
    "prune",
    "read_chunks",
]
