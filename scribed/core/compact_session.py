"""One session's new turns → one cold entry. The turns pass the redaction door first; the entry id
is derived from the raw session and content it holds (not the path), so a rerun after any crash, a
lost ledger or a renamed transcript finds what is already written."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scribed import sources
from scribed.compress import anchors, entry
from scribed.compress.base import CompressResult
from scribed.config import Config
from scribed.core import ledger as ledger_mod
from scribed.core.budget import HARD_CAP, entry_budget
from scribed.core.compressors import Compressors
from scribed.core.discovery import display_path
from scribed.core.ledger import Ledger, source_key
from scribed.core.results import EntryReport, SourceItem
from scribed.fsutil import ensure_dir
from scribed.models import Anchor, Session, Turn
from scribed.session.door import Redacted, RedactedSession, redact_session, redacted, redacted_path
from scribed.sources import zst
from scribed.sources.zst import sha256_prefix
from scribed.tiers import cold, transcripts
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.log import Logger

SHA_CACHE_MAX = 64


@dataclass(slots=True)
class _Written:
    """A rendered entry and what it was made from."""

    red: RedactedSession
    meta: entry.EntryMeta
    result: CompressResult
    llm_error: str
    anchors: list[Anchor]
    text: Redacted


# (source path, entry id, bytes in) → the rendered entry and the ms it took: what a pool worker
# hands the parent (see :mod:`scribed.core.pool`).
PreparedKey = tuple[str, str, int]
Prepared = tuple[PreparedKey, _Written, int]


@dataclass(slots=True)
class Prefetched:
    """A pool worker's work on one source file, for the parent to take instead of doing it: the
    parse (``reading``, None for a large file: the parent streams it itself), the entries rendered
    and the transcript copy. The parse and the copy count only while the file still has ``stamp``
    and ``sha`` (see :meth:`scribed.core.compact.Compactor.use`)."""

    stamp: tuple[int, int]  # (size, mtime_ns) before the worker read it
    sha: str  # the provenance sha256 of the file the worker read ("" when not taken)
    hold: bool  # the parse held an unterminated last line (an open session's)
    reading: sources.Reading | None
    entries: list[Prepared]
    copy: transcripts.Copy | None
    hot_archive: tuple[str, bytes] | None = None  # a hot file's: (sha256 of the bytes, their archive)


@dataclass(frozen=True, slots=True)
class RunContext:
    """What the per-file and per-session steps share; the Scribe (or a pool worker) builds it once."""

    cfg: Config
    layout: Layout
    ledger: Ledger
    clock: Callable[[], datetime]
    dry_run: bool
    log: Logger


class Step:
    """A compaction step: the run context's fields as attributes, read by every method."""

    def __init__(self, ctx: RunContext) -> None:
        self.cfg, self.layout, self.ledger = ctx.cfg, ctx.layout, ctx.ledger
        self.clock, self.dry_run, self.log = ctx.clock, ctx.dry_run, ctx.log


class SessionCompactor(Step):
    """Summarise, guard, append to cold, record in the ledger, keep a redacted transcript copy."""

    def __init__(self, ctx: RunContext, compressors: Compressors) -> None:
        super().__init__(ctx)
        self.compressors = compressors
        self._sha_cache: dict[str, str] = {}
        self._sha_lock = threading.Lock()
        self.captured: list[Prepared] | None = None  # in a pool worker: the entries rendered
        self.prepared: dict[PreparedKey, tuple[_Written, int]] = {}  # in the parent: a worker's entries
        self.from_pool = 0  # entries the parent took from a worker (benchmarks and tests read it)
        self.copy: transcripts.Copy | None = None  # in the parent: the file's copy a worker made

    def iso_now(self) -> str:
        return entry.iso(self.clock())

    def compact(
        self, item: SourceItem, sess: Session, turns: list[Turn], bytes_in: int, offset_done: int
    ) -> EntryReport | None:
        """The entry for ``turns`` of ``sess``; None when the ledger already holds it."""
        t0 = time.monotonic()
        end_off = max(t.end_offset for t in turns)
        entry_id = ledger_mod.content_id(sess.session_id, turns)  # the same records, wherever the file is
        legacy = ledger_mod.legacy_id(
            item.path, sess.session_id, offset_done, end_off, hot=item.kind == "hot"
        )
        if self.ledger.has_entry(entry_id) or self.ledger.has_entry(legacy):
            return None
        key = (str(item.path), entry_id, bytes_in)
        done = self.prepared.pop(key, None)
        if done is None:
            w = self._write_entry(item, sess, turns, entry_id, bytes_in)
            ms = int((time.monotonic() - t0) * 1000)
        else:
            w, ms = done
            self.from_pool += 1
        if self.captured is not None:
            self.captured.append((key, w, ms))
        rep = self._report(w, bytes_in, ms)
        if not self.dry_run:
            digests = b"" if item.kind == "hot" else ledger_mod.turn_digests(w.red.session.turns)
            self._store(item, w, rep, offset_done, end_off, digests=digests)  # of redacted turns
        return rep

    def _write_entry(
        self, item: SourceItem, sess: Session, turns: list[Turn], entry_id: str, bytes_in: int
    ) -> _Written:
        stamps = [t.ts for t in turns if t.ts is not None]
        end = max(stamps) if stamps else (sess.end or datetime.fromtimestamp(item.path.stat().st_mtime, UTC))
        start = min(stamps) if stamps else sess.start
        red = redact_session(replace(sess, start=start, end=end), turns)  # the door
        sub = red.session
        anchor_list = anchors.extract(sub)
        budget = entry_budget(self.cfg.compress, bytes_in, anchor_list)
        result, llm_error = self.compressors.compress(red, anchor_list, budget)
        meta = entry.EntryMeta(
            entry_id=entry_id,
            agent=sess.agent,
            session=sub.session_id,
            source=redacted_path(display_path(self.layout.root, item.path)),
            kind=item.kind,
            end=end,
            first_line=sub.turns[0].line,
            last_line=sub.turns[-1].line,
            turns=len(sub.turns),
            sha256=self._source_sha(item),
            compressor=result.compressor,
            bytes_in=bytes_in,
        )
        summary = entry.fit_with_room(result.summary, anchor_list, meta, budget)
        summary, rec = entry.guard(summary, anchor_list, meta, int(budget * HARD_CAP))
        meta.recall = rec
        # An LLM's answer is outside text too: the rendered entry passes the door once more.
        text = redacted(entry.render(summary, meta))
        return _Written(red, meta, result, llm_error, anchor_list, text)

    @staticmethod
    def _report(w: _Written, bytes_in: int, ms: int) -> EntryReport:
        bytes_out = len(w.text.encode())
        return EntryReport(
            agent=w.red.agent,
            session=w.red.session_id,
            source=w.meta.source,
            bytes_in=bytes_in,
            bytes_out=bytes_out,
            ratio=bytes_out / bytes_in if bytes_in else 0.0,
            recall=w.meta.recall,
            compressor=w.result.compressor,
            entry_id=w.meta.entry_id,
            llm_error=w.llm_error,
            tokens_in=w.result.tokens_in,
            tokens_out=w.result.tokens_out,
            ms=ms,
        )

    def _store(
        self, item: SourceItem, w: _Written, rep: EntryReport, start_off: int, end_off: int, *, digests: bytes
    ) -> None:
        sub, agent = w.red.session, w.red.agent
        ensure_dir(self.layout.cold)
        cold.append(
            self.layout, agent, w.text, rep.entry_id, max_bytes=self.cfg.cold.max_bytes, now=self.clock()
        )
        self.ledger.add_entry(
            id=rep.entry_id,
            path=source_key(item.path),
            session=sub.session_id,
            agent=agent,
            session_end=entry.iso(w.meta.end),
            start_offset=start_off,
            end_offset=end_off,
            first_line=sub.turns[0].line,
            last_line=sub.turns[-1].line,
            bytes_in=rep.bytes_in,
            bytes_out=rep.bytes_out,
            ratio=rep.ratio,
            recall=rep.recall,
            compressor=rep.compressor,
            tokens_in=rep.tokens_in,
            tokens_out=rep.tokens_out,
            ms=rep.ms,
            llm_error=redacted(rep.llm_error),
            created_at=self.iso_now(),
            turn_digests=digests,
        )
        self._archive_transcript(item, w.red.session_id, redacted(agent), w.meta.source)
        self.log.info(
            "compacted",
            agent=agent,
            session=sub.session_id,
            source=w.meta.source,
            bytes_in=rep.bytes_in,
            bytes_out=rep.bytes_out,
            ratio=round(rep.ratio, 4),
            recall=round(rep.recall, 3),
            compressor=rep.compressor,
            anchors=len(w.anchors),
            tokens_in=rep.tokens_in,
            tokens_out=rep.tokens_out,
            ms=rep.ms,
            llm_error=rep.llm_error or None,
            notes=w.result.notes or None,
        )

    def _source_sha(self, item: SourceItem, upto: int | None = None) -> str:
        """sha256 of the source file as compacted (provenance), or of its first ``upto`` bytes: the
        whole file's digest, cached, when that is all of it (``Compactor._finish`` asks for the
        bytes it compacted, which for a finished file are the bytes just hashed here)."""
        path = item.path
        st = path.stat()
        whole = zst.logical_size(path, st.st_size)
        if upto is not None and upto != whole:
            return sha256_prefix(path, upto)
        key = f"{path}\0{st.st_size}\0{st.st_mtime_ns}"
        with self._sha_lock:
            if key in self._sha_cache:
                return self._sha_cache[key]
        digest = sha256_prefix(path, whole)
        with self._sha_lock:
            if len(self._sha_cache) > SHA_CACHE_MAX:
                self._sha_cache.clear()
            self._sha_cache[key] = digest
        return digest

    def _archive_transcript(
        self, item: SourceItem, session: Redacted, agent: Redacted, shown_as: str
    ) -> None:
        """Keep a redacted, compressed copy of the compacted transcript (see :mod:`scribed.tiers.transcripts`);
        a failed copy is a warning, never a failed compaction: the cold entry is already durable."""
        if item.kind == "hot":
            return
        try:
            with transcripts.made_ahead(self.copy):
                transcripts.archive(
                    self.cfg, self.layout, item.path, kind=item.kind, session=session, agent=agent,
                    shown_as=redacted_path(shown_as), now=self.clock(),
                )  # fmt: skip
        except OSError as exc:
            self.log.warning("transcript_archive_failed", file=shown_as, reason=str(exc.strerror or exc))
