"""One unit of work: one source file. Parse it (streaming), decide whether it is finished, take the
part not compacted yet, pass it through the redaction door, compact it (see
:mod:`scribed.core.compact_session`) and record it in the ledger. The steps are methods of
:class:`Compactor`; the state one file carries between them is a
:class:`~scribed.core.compact_read.Job`. Opening and reading the file are
:mod:`scribed.core.compact_read`'s, where it resumes :mod:`scribed.core.compact_resume`'s.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator

from scribed import heap, sources
from scribed.compress.base import CompressError
from scribed.core import ledger as ledger_mod
from scribed.core.compact_read import PARSE_MAX_BYTES, Job, Reader
from scribed.core.compact_resume import BYTE_KINDS, Resuming
from scribed.core.compact_session import Prefetched, RunContext, SessionCompactor, Ticket
from scribed.core.discovery import sha256_bytes
from scribed.core.ledger import source_key
from scribed.core.results import SKIP_ACTIVE, SKIP_DONE, SKIP_EMPTY, EntryReport, FileOutcome, SourceItem
from scribed.fsutil import write_gzip_archive, write_gzipped
from scribed.models import ParseResult, Session
from scribed.session.door import redact_session, redacted
from scribed.tiers import hot_seed, live


class Compactor(Reader, Resuming):
    """The per-file steps; :class:`scribed.core.scribe.Scribe` owns it and holds the lock."""

    def __init__(self, ctx: RunContext, sessions: SessionCompactor) -> None:
        super().__init__(ctx)
        self.sessions = sessions
        self.given: Prefetched | None = None  # in the parent: a pool worker's work on the file at hand
        self.kept: Prefetched | None = None  # in a pool worker: where the parse is kept for the parent
        self.tickets: dict[int, Ticket] = {}  # the given's, once its reading is taken (see _read)
        self.from_pool = 0  # parses the parent took from a worker (benchmarks and tests read it)
        self.keep_max: int | None = PARSE_MAX_BYTES  # when preparing: the largest file whose parse is kept
        self.warned = 0  # source warnings of the file at hand

    def use(self, given: Prefetched | None) -> None:
        """Take a pool worker's work on the next file (None: none, the parent does it all)."""
        self.given = given
        self.tickets = {}
        self.sessions.prepared = {k: (w, ms) for k, w, ms in given.entries} if given else {}
        self.sessions.copy = None  # the copy only with a parse that still holds (see _read)

    def process(self, item: SourceItem, *, force: bool = False) -> FileOutcome:
        """Compact whatever is finished and new in one source file; the outcome counts the file's
        warnings (the run's report adds them up)."""
        self.warned = 0
        out = self._process(item, force)
        self._say_future(item, out)
        out.warnings += self.warned
        return out

    def _say_future(self, item: SourceItem, out: FileOutcome) -> None:
        """One warning for a file whose new entries claimed dates past the run's clock (a wrong
        clock wrote them; each entry is dated by the file instead: :mod:`scribed.dates`).
        A part is compacted once, so a file is not warned about again until it grows."""
        said = [e for e in out.entries if e.claimed]
        if not said:
            return
        last = max(said, key=lambda e: e.claimed)
        self.log.warning(
            "future_timestamps",
            file=source_key(item.path),
            claimed=last.claimed,
            dated=last.dated,
            sessions=len(said),
            reason=f"its time stamps reach {last.claimed}, more than a day past this machine's clock",
            action=(
                f"entry dated {last.dated} (the file's modification time or the run's clock, the earlier); "
                "set the clock right on the machine that wrote the transcript"
            ),
        )
        self.warned += 1

    def _process(self, item: SourceItem, force: bool) -> FileOutcome:
        ledger_mod.ensure(
            self.ledger, self.layout.memory, self.layout.archive, self.layout.root
        )  # lost or empty: rebuilt
        opened = self._open(item)
        if isinstance(opened, FileOutcome):
            return opened
        st, row = opened
        outside = self._outside(item, st, row)
        if outside is not None:
            return outside
        now = self.clock()
        mtime = ledger_mod.effective_mtime(st, row, now)  # a future mtime counts from when it was seen
        quiet = (now.timestamp() - mtime) >= self.cfg.session.quiet_seconds
        reading = self._parse(item, st, row, hold=not (quiet or force))
        if isinstance(reading, FileOutcome):
            return reading
        self._note_future_mtime(item, st, row, now)
        if not reading.briefs:
            self._mark(
                item,
                st,
                row,
                status="done",
                offset=row.offset_done if row else 0,
                sha=row.sha256 if row else "",
            )
            return FileOutcome("empty")
        job = Job(item, st, row, reading, finished=reading.result.ended or quiet or force, mtime=mtime)
        waiting = self._pick(job)
        if waiting is not None:
            return waiting
        job.offset_done = job.new_offset = self._resume_offset(job)
        if not job.finished:  # only ended sessions wholly before every open session's new turns
            job.todo = self._before_open(job)
        out, held = self._compact_all(job)
        if out.failed:
            return self._fail(job, out)
        return self._finish(job, out, held)

    # --- steps ----------------------------------------------------------------------------------
    def _pick(self, job: Job) -> FileOutcome | None:
        """Which sessions to compact now. A file holding several sessions (an Aider history) finishes
        them one by one: a session followed by another one's header is compacted now, the open last
        one once the file is quiet. Returns the outcome when nothing can be compacted yet."""
        briefs = job.briefs
        n = len(briefs)
        job.todo = list(range(n))
        if job.finished:
            return None
        byte_kind = job.item.kind in BYTE_KINDS
        job.todo = [i for i, b in enumerate(briefs) if b.ended and b.offsets] if byte_kind else []
        job.live = [i for i, b in enumerate(briefs) if not b.ended] if job.todo else list(range(n))
        if job.todo:
            return None
        if job.item.kind != "hot" and not self.dry_run:
            try:
                self._refresh_live(job, self._walk(job, set(job.live)))
            except sources.ChangedError as exc:
                return self._fail(job, self._changed(job, exc))
        out = FileOutcome(
            "not-finished", reason="not finished (quiet time not reached)", last_change=job.mtime
        )
        out.skip(SKIP_ACTIVE, n)
        return out

    def _refresh_live(self, job: Job, pairs: Iterable[tuple[int, Session]]) -> None:
        """Refresh the hot file's live section of each open session: ``pairs`` are sessions with
        their index in the file, the others passed over; each is let go before the next is read
        (not a ``zip``: its reused result tuple would hold it, as ``enumerate``'s would)."""
        open_ = set(job.live)
        for i, sess in pairs:
            if i in open_:
                peers = [redacted(b.agent) for k, b in enumerate(job.briefs) if k != i]
                live.refresh(
                    self.layout,
                    redact_session(sess),
                    job.item.kind,
                    self.log,
                    talking_to=peers,
                    now=self.clock(),
                )
            del sess

    @staticmethod
    def _walk(job: Job, wanted: set[int]) -> Iterator[tuple[int, Session]]:
        """The file's sessions with their index, up to the last one ``wanted`` (read lazily)."""
        if not wanted:
            return
        last = max(wanted)
        i = 0  # not enumerate: its reused result tuple holds the last session while the next is read
        for sess in job.reading.sessions():
            yield i, sess
            if i >= last:
                return
            del sess  # not held while the next session is read
            i += 1  # noqa: SIM113  (enumerate would hold the session, see above)

    @staticmethod
    def _before_open(job: Job) -> list[int]:
        briefs = job.briefs
        first_open = min(
            (e for i in job.live for e in briefs[i].offsets if e > job.offset_done),
            default=None,
        )
        return [i for i in job.todo if first_open is None or max(briefs[i].offsets) < first_open]

    def _compact_all(self, job: Job) -> tuple[FileOutcome, list[Session]]:
        """Compact the todo sessions as they are read; returns the outcome and the open sessions."""
        out = FileOutcome("compacted")
        tickets = self._prepared(job)
        if tickets is not None:  # every part prepared from this very file: it is not read again
            for i, k in tickets:
                self._commit_ticket(job, i, k, out)
            return out, []
        raw = self._raw_sizes(job.item, job.briefs)
        todo, opened = set(job.todo), set(job.live)
        held: list[Session] = []
        reached = 0
        try:
            for i, sess in self._walk(job, todo | opened):
                if i in opened:
                    held.append(sess)
                if i in todo:
                    reached += 1
                    sizes = {id(t): n for t, n in zip(sess.turns, raw[i], strict=True)} if raw else {}
                    self._compact_session(job, sess, sizes, out, i)
                    del sizes
                del sess  # the next session is read without this one
        except sources.ChangedError as exc:
            self._changed(job, exc, out, unread=len(todo) - reached)
        return out, held

    def _changed(
        self, job: Job, exc: Exception, out: FileOutcome | None = None, *, unread: int = 0
    ) -> FileOutcome:
        """The file read again (for its sessions) is not the file read first: retry it later.
        The ``unread`` sessions it was to compact fail; with none left, the file itself does."""
        out = out or FileOutcome("failed")
        out.sessions += unread
        out.failed += unread
        out.file_failed = not unread
        out.reason = f"source changed while read: {exc}"
        if unread:
            out.reasons.append(out.reason + (f" ({unread} sessions)" if unread > 1 else ""))
        self.log.error("source_changed", file=job.key, reason=out.reason)
        return out

    def _prepared(self, job: Job) -> list[tuple[int, Ticket]] | None:
        """The tickets of the parts to compact, in order, when each was prepared from the file as it
        is (its reading taken, see :meth:`_read`) and the ledger knows none of their sessions from
        elsewhere (else which turns are new is decided from the turns). None: read the file."""
        tickets, item = self.tickets, job.item
        if not tickets or job.live or item.kind == "hot":
            return None
        out = [(i, tickets.get(i)) for i in job.todo]
        for _, k in out:
            if k is None or k.offset_done != job.offset_done:
                return None
            if k.skip:
                continue
            if (str(item.path), k.content_key, k.bytes_in) not in self.sessions.prepared:
                return None
            if job.offset_done == 0 and self.ledger.session_entries(redacted(k.session_id)):
                return None
        return out  # type: ignore[return-value]  # no None left

    def _commit_ticket(self, job: Job, i: int, k: Ticket, out: FileOutcome) -> None:
        """:meth:`_compact_session` for a prepared part (session ``i`` of the file)."""
        if job.briefs[i].offsets:
            job.new_offset = max(job.new_offset, max(job.briefs[i].offsets))
        if k.skip:
            out.skip(k.skip)
            return
        out.sessions += 1
        self._compact_one(job, k.agent, k.session_id, lambda: self.sessions.make(job.item, k), out)

    def _compact_session(
        self, job: Job, sess: Session, raw_sizes: dict[int, int], out: FileOutcome, index: int = -1
    ) -> None:
        """Compact one session's turns not compacted yet (``index``: in the file, when preparing)."""
        turns = [t for t in sess.turns if t.end_offset > job.offset_done]
        if job.offset_done == 0 and job.item.kind != "hot":  # a path the ledger does not know: moved?
            known = self.ledger.session_entries(redacted(sess.session_id))
            turns = ledger_mod.uncovered(
                known, sess.turns, turns, path=source_key(job.item.path),
                rec=ledger_mod.Recognizer(sess, self.keys),
            )  # fmt: skip
        if sess.turns:
            job.new_offset = max(job.new_offset, max(t.end_offset for t in sess.turns))
        skip = SKIP_DONE if not turns else "" if any(map(ledger_mod.says, turns)) else SKIP_EMPTY
        if skip:  # every turn compacted before (a resumed file, a copy at a new path), or only a
            # tool's banner or output: nothing to remember
            if self.kept is not None:
                self.kept.tickets[index] = Ticket(sess.agent, sess.session_id, job.offset_done, skip)
            out.skip(skip)
            return
        out.sessions += 1
        bytes_in = sum(raw_sizes.get(id(t), len(t.text.encode())) for t in turns)
        k = self.sessions.ticket(job.item, sess, turns, bytes_in, job.offset_done)
        if self.kept is not None:
            self.kept.tickets[index] = k
        # a streamed session is read for its entry alone (an open one, held for the hot file, is
        # never compacted: todo and live are disjoint; the check keeps it so if that changes)
        let_go = job.reading.stream is not None and index not in job.live
        self._compact_one(
            job,
            sess.agent,
            sess.session_id,
            lambda: self.sessions.make(job.item, k, (sess, turns), let_go=let_go),
            out,
        )
        heap.trim(bytes_in)  # its work's pages back before the next session's

    def _compact_one(
        self, job: Job, agent: str, session: str, run: Callable[[], EntryReport | None], out: FileOutcome
    ) -> None:
        """``run`` (the entry of one session's part), its failure a failed session."""
        rep: EntryReport | None
        try:
            rep = run()
        except CompressError as exc:
            out.fail(f"{agent}/{session}: {exc.reason}")
            self.log.error(
                "compaction_failed",
                agent=agent,
                session=session,
                file=job.key,
                reason=exc.reason,
            )
            return
        except OSError as exc:
            out.fail(f"{agent}/{session}: write failed: {exc.strerror or exc}")
            self.log.error(
                "write_failed",
                agent=agent,
                file=job.key,
                reason=out.reason,
                target=getattr(exc, "filename", None),
            )
            return
        if rep is None:
            out.skip(SKIP_DONE, counted=True)
        else:
            out.entries.append(rep)

    def _fail(self, job: Job, out: FileOutcome) -> FileOutcome:
        row = job.row
        attempts = (row.attempts if row else 0) + 1
        status = "quarantined" if attempts >= self.cfg.daemon.max_attempts else "failed"
        offset, sha = (row.offset_done, row.sha256) if row else (0, "")
        self._mark(
            job.item, job.st, row, status=status, offset=offset, sha=sha, error=out.reason, attempts=attempts
        )
        out.status = "failed"
        return out

    def _finish(self, job: Job, out: FileOutcome, held: list[Session]) -> FileOutcome:
        item, path, st = job.item, job.item.path, job.st
        sha = ""
        if item.kind in BYTE_KINDS:  # a file compacted to its end was just hashed for its entries
            sha = self.sessions._source_sha(item, job.new_offset)  # one hash, shared
        elif item.kind == "hot":
            sha = (
                self.keys.hexdigest(path.read_bytes()) if not self.dry_run else ""
            )  # keyed: see _archive_and_reset_hot
        if item.kind == "hot" and not self.dry_run and self._archive_and_reset_hot(item, job.parsed):
            st = path.lstat() if path.exists() else st  # else the kept text is compacted next run
        if item.kind != "hot" and not self.dry_run:
            for i in job.todo:
                b = job.briefs[i]
                hot_seed.reseed(
                    self.layout, b.agent, item.kind, redacted(b.session_id), self.log, now=self.clock()
                )
        if not job.finished:
            # Not "done": the unchanged-check must not skip the file, or its open session would never
            # be compacted once it goes quiet. The offset covers only what was compacted.
            if not self.dry_run:
                self._refresh_live(job, list(zip(job.live, held, strict=True)))
            if job.new_offset > job.offset_done:
                self._mark(item, st, job.row, status="pending", offset=job.new_offset, sha=sha)
            out.status, out.reason = "not-finished", "open session not quiet yet"
            out.skip(SKIP_ACTIVE, len(job.live))
            out.last_change = job.mtime
            return out
        self._mark(item, st, job.row, status="done", offset=job.new_offset, sha=sha)
        if not out.entries:
            out.status = "unchanged"
        return out

    # --- helpers --------------------------------------------------------------------------------
    @staticmethod
    def _raw_sizes(item: SourceItem, briefs: list[sources.Brief]) -> list[array[int]]:
        """Attribute the file's bytes to turns (each turn owns the bytes since the previous record,
        in end-offset order, ties in file order): per session, per turn. Empty for other kinds."""
        if item.kind not in BYTE_KINDS and item.kind != "hot":
            return []
        flat = array("q")
        for b in briefs:
            flat.extend(b.offsets)
        n = len(flat)
        monotonic = all(flat[k] <= flat[k + 1] for k in range(n - 1))
        order: Iterable[int] = range(n) if monotonic else sorted(range(n), key=flat.__getitem__)
        sizes = array("q", bytes(8 * n))
        prev = 0
        for k in order:
            sizes[k] = max(0, flat[k] - prev)
            prev = max(prev, flat[k])
        out: list[array[int]] = []
        at = 0
        for b in briefs:
            out.append(sizes[at : at + len(b.offsets)])
            at += len(b.offsets)
        return out

    def _archive_and_reset_hot(self, item: SourceItem, parsed: ParseResult) -> bool:
        """Archive the compacted bytes, redacted (after the cold entry is durable), then reset hot
        to the seed of that entry, compare-and-swap (see :mod:`scribed.tiers.hot_seed`): text an agent
        appended since the parse stays in hot. Returns whether hot now holds only the seed.
        """
        path = item.path
        agent = path.stem.lower()
        sid = parsed.sessions[0].session_id if parsed.sessions else ""
        snap = hot_seed.snapshot(path.read_bytes(), parsed.size, sid)
        if snap is None:
            self.log.warning("hot_changed_during_compaction", file=str(path), reason="left in place")
            return False
        # What an agent wrote in its hot file is this machine's: its digests are keyed (the archive's
        # name, the session id its entry shows), so none confirms a guess at a secret in it.
        dest = self.layout.archive / "hot" / f"{agent}-{self.keys.hexdigest(snap)[:12]}.md.gz"
        made = self.given.hot_archive if self.given is not None else None
        if made is not None and made[0] == sha256_bytes(snap):  # redacted and compressed before the lock
            write_gzipped(dest, made[1])
        else:
            write_gzip_archive(dest, redacted(snap.decode("utf-8", "replace")).encode())
        shown = redacted(self.keys.hot_session(sid)) if sid else redacted(sid)
        return hot_seed.reset(
            self.layout, path, agent, snap, session_id=shown, log=self.log, now=self.clock()
        )
