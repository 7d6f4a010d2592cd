"""One session's new turns → one cold entry. The turns pass the redaction door first; the entry is
recognised by what it holds, not the path (this machine's keyed digest of its raw turns, else its
id, made from the redacted turns), so a rerun after any crash, a lost ledger or a renamed
transcript finds what is already written, and two clones compacting one session at the same points
write one file (at different points, the team sync makes their entries one: :mod:`scribed.tiers.cold_overlap`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from scribed import dates, sources
from scribed.compress import anchors, entry, entry_fit, entry_guard
from scribed.compress.base import CompressResult
from scribed.config import Config
from scribed.core import copies_owed
from scribed.core import ledger as ledger_mod
from scribed.core.budget import HARD_CAP, entry_budget
from scribed.core.compressors import Compressors
from scribed.core.content_key import Keyring
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
    claimed: datetime | None = None  # the future date the part's stamps claimed (see _redact)


def _slim(w: _Written) -> _Written:
    """``w`` without its redacted turns, as it is kept until the commit (or sent by a pool worker):
    what the commit writes is the rendered text and the meta; the turns (a 64 MB session's) would
    be held beside the commit's own reading of the file."""
    return replace(w, red=RedactedSession(replace(w.red.session, turns=[]), w.red.source))


# (source path, content key, bytes in) → the rendered entry and the ms it took: what a pool worker
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
    tickets: dict[int, Ticket] = field(default_factory=dict)  # by session index (see Compactor)


@dataclass(frozen=True, slots=True)
class Ticket:
    """One session's part as it was prepared before the lock: what the commit decides and writes
    with (its keys, its size, its end), so that under the lock the file need not be read again
    for it (a streamed markdown file would be: seconds for a large one). ``skip``: the part was
    skipped (a SKIP_* reason), nothing else is set."""

    agent: str
    session_id: str  # raw, as parsed
    offset_done: int  # the offset the part was cut at
    skip: str = ""
    content_key: str = ""
    legacy: tuple[str, str] = ("", "")  # ids an entry written before content keys may have
    bytes_in: int = 0
    end_offset: int = 0
    turn_keys: bytes = b""


@dataclass(frozen=True, slots=True)
class RunContext:
    """What the per-file and per-session steps share; the Scribe (or a pool worker) builds it once."""

    cfg: Config
    layout: Layout
    ledger: Ledger
    clock: Callable[[], datetime]
    dry_run: bool
    log: Logger
    keys: Keyring  # the root's content key (see :mod:`scribed.core.content_key`)


class Step:
    """A compaction step: the run context's fields as attributes, read by every method."""

    def __init__(self, ctx: RunContext) -> None:
        self.cfg, self.layout, self.ledger = ctx.cfg, ctx.layout, ctx.ledger
        self.clock, self.dry_run, self.log, self.keys = ctx.clock, ctx.dry_run, ctx.log, ctx.keys


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
        return self.make(item, self.ticket(item, sess, turns, bytes_in, offset_done), (sess, turns))

    def ticket(
        self, item: SourceItem, sess: Session, turns: list[Turn], bytes_in: int, offset_done: int
    ) -> Ticket:
        """What deciding and writing the entry for ``turns`` needs besides its text."""
        end_off = max(t.end_offset for t in turns)
        raw_sid = sess.session_id
        hot = item.kind == "hot"
        # a hot file's id is a digest of what the agent wrote: keyed
        sid = self.keys.hot_session(raw_sid) if hot else raw_sid
        return Ticket(
            agent=sess.agent,
            session_id=raw_sid,
            offset_done=offset_done,
            content_key=self.keys.content_key(sid, turns),  # the same records, wherever the file is
            legacy=(  # an entry written before ids were made from redacted turns: its old ids
                ledger_mod.legacy_content_id(raw_sid, turns),
                ledger_mod.legacy_id(item.path, raw_sid, offset_done, end_off, hot=hot),
            ),
            bytes_in=bytes_in,
            end_offset=end_off,
            turn_keys=b""
            if hot or (self.dry_run and self.captured is None)
            else self.keys.turn_digests(turns),
        )

    def make(
        self,
        item: SourceItem,
        k: Ticket,
        parsed: tuple[Session, list[Turn]] | None = None,
        *,
        let_go: bool = False,
    ) -> EntryReport | None:
        """:meth:`compact` from the part's ticket: with ``parsed`` (its session and turns) the entry
        is made when none was prepared; without, from the prepared entry alone (a part prepared
        before the lock: the caller checked the file is the one prepared and the entry is there).
        ``let_go``: the caller reads no more of the parsed turns (see :func:`redact_session`)."""
        t0 = time.monotonic()
        ckey = k.content_key
        if self.ledger.has_content(ckey) or any(map(self.ledger.has_entry, k.legacy)):
            return None
        key = (str(item.path), ckey, k.bytes_in)
        done = self.prepared.pop(key, None)
        if done is None:
            if parsed is None:
                raise RuntimeError(f"the prepared entry of {item.path} is gone")  # the caller checks it
            sess, turns = parsed
            if item.kind == "hot":
                sess = replace(sess, session_id=self.keys.hot_session(k.session_id))
            red, claimed = self._redact(item, sess, turns, let_go=let_go)
            entry_id = ledger_mod.content_id(red)  # a hash of every redacted turn: made once
            if self._known(entry_id, ckey):
                return None
            w = replace(self._write_entry(item, red, k.bytes_in, entry_id), claimed=claimed)
            ms = int((time.monotonic() - t0) * 1000)
        else:
            w, ms = done
            self.from_pool += 1
            if self._known(w.meta.entry_id, ckey):
                return None
        if self.captured is not None:
            self.captured.append((key, _slim(w), ms))
        rep = self._report(w, k.bytes_in, ms)
        if not self.dry_run:
            self._store(item, w, rep, k.offset_done, k.end_offset, content_key=ckey, turn_keys=k.turn_keys)
        return rep

    def _known(self, entry_id: str, ckey: str) -> bool:
        """The entry is known by its id alone (a rebuilt ledger, another clone's entry, a replaced
        key): it is filed under its content key from now on, and not written again."""
        if not self.ledger.has_entry(entry_id):
            return False
        if not self.dry_run:
            self.ledger.file_under(entry_id, ckey)
        return True

    def _redact(
        self, item: SourceItem, sess: Session, turns: list[Turn], *, let_go: bool = False
    ) -> tuple[RedactedSession, datetime | None]:
        """``turns`` through the door, with the session's times as the entry shows them (a part
        dated past the run's clock is dated by its file: :mod:`scribed.dates`), and the
        future date it claimed (None when its dates were believed)."""
        d = dates.session_dates(
            (t.ts for t in turns),
            sess.start,
            sess.end,
            now=self.clock(),
            mtime=lambda: dates.file_mtime(item.path),
        )
        # the door; a finished session is redacted once: its blocks are not cached (a growing
        # session's live view is: it reads the session again at each change)
        red = redact_session(replace(sess, start=d.start, end=d.end), turns, remember=False, let_go=let_go)
        return red, d.claimed

    def _write_entry(self, item: SourceItem, red: RedactedSession, bytes_in: int, entry_id: str) -> _Written:
        sub = red.session
        assert sub.end is not None  # _redact set it
        anchor_list = anchors.extract(sub)
        budget = entry_budget(self.cfg.compress, bytes_in, anchor_list)
        result, llm_error = self.compressors.compress(red, anchor_list, budget)
        meta = entry.EntryMeta(
            entry_id=entry_id,
            agent=sub.agent,
            session=sub.session_id,
            source=redacted_path(display_path(self.layout.root, item.path)),
            kind=item.kind,
            end=sub.end,
            first_line=sub.turns[0].line,
            last_line=sub.turns[-1].line,
            turns=len(sub.turns),
            sha256=self._provenance_sha(item),
            compressor=result.compressor,
            bytes_in=bytes_in,
        )
        summary = entry_fit.fit_with_room(result.summary, anchor_list, meta, budget, int(budget * HARD_CAP))
        summary, rec = entry_guard.guard(
            summary, anchor_list, meta, int(budget * HARD_CAP), result.summary.errors
        )
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
            claimed=entry.iso(w.claimed) if w.claimed else "",
            dated=entry.iso(w.meta.end) if w.claimed else "",
        )

    def _store(
        self,
        item: SourceItem,
        w: _Written,
        rep: EntryReport,
        start_off: int,
        end_off: int,
        *,
        content_key: str,
        turn_keys: bytes,
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
            first_line=w.meta.first_line,
            last_line=w.meta.last_line,
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
            content_key=content_key,
            turn_keys=turn_keys,
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

    def _provenance_sha(self, item: SourceItem) -> str:
        """The ``sha256=`` of an entry's provenance: the transcript's, which anyone holding the file
        can check (and which confirms a guess only to someone holding every other byte of it); a hot
        file's is keyed, as its session id is: the file is this machine's, reset once compacted."""
        if item.kind == "hot":
            return self.keys.hexdigest(item.path.read_bytes())
        return self._source_sha(item)

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
        a failed copy is a warning naming the archive folder, never a failed compaction (the cold
        entry is already durable): the copy is owed, and made by a later run (:mod:`scribed.core.copies_owed`)."""
        if item.kind == "hot":
            return
        shown = redacted_path(shown_as)
        try:
            with transcripts.made_ahead(self.copy):
                transcripts.archive(
                    self.cfg, self.layout, item.path, kind=item.kind, session=session, agent=agent,
                    shown_as=shown, now=self.clock(),
                )  # fmt: skip
        except OSError as exc:
            self.log.warning(
                "transcript_archive_failed", folder=str(transcripts.folder(self.cfg, self.layout)),
                file=shown_as, reason=str(exc.strerror or exc),
                action="the copy is made again by the next run once the folder takes it",
            )  # fmt: skip
            copies_owed.owe(
                self.ledger, item.path, item.kind, shown_as=shown, sessions=[session], agents=[agent]
            )
