"""The one core both drivers (the CLI and the daemon) call. A :class:`Scribe` owns the root's layout,
its ledger and its lock, and every write: compacting sources, promotion, import, wiki writes,
deprecation, review decisions and the inbox. Drivers never take the lock or open the ledger.

Two kinds of methods: the whole operations (:meth:`Scribe.run`, :meth:`Scribe.run_once`,
:meth:`Scribe.promote`, :meth:`Scribe.import_squad`, :meth:`Scribe.write_fact`,
:meth:`Scribe.deprecate`, :meth:`Scribe.review`) take the root lock themselves; the steps the
daemon schedules (:meth:`Scribe.process`, :meth:`Scribe.apply_inbox`) expect the caller to hold it
(the daemon holds it through its own gate). Compaction holds the lock for milliseconds: a file is
read, redacted and compressed before it is taken (:meth:`Scribe.ahead`), and under it only checked
unchanged and written (see :mod:`scribed.core.prepare`). The lock itself, and what each
taking of it brings in step (the state branch, the team's cold store), is
:mod:`scribed.core.scribe_lock`'s.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from scribed import heap, hint
from scribed.compress.base import Compressor
from scribed.compress.entry import iso
from scribed.compress.extractive import ExtractiveCompressor
from scribed.config import Config, ConfigError
from scribed.core import (
    cold_remove,
    content_key,
    copies_owed,
    discovery,
    hot_reseed,
    ledger_reconcile,
)
from scribed.core import ledger as ledger_mod
from scribed.core import pool as pool_mod
from scribed.core.cold_sync import IN_INDEX
from scribed.core.compact import Compactor
from scribed.core.compact_session import RunContext, SessionCompactor
from scribed.core.compressors import Compressors
from scribed.core.content_key import Keyring
from scribed.core.ledger import Ledger, SourceRow, source_key
from scribed.core.scribe_lock import Locking

if TYPE_CHECKING:
    from scribed.core.gitsetup import GitSetup
from scribed.core.compact_session import Prefetched
from scribed.core.pool import Prefetch
from scribed.core.prepare import Preparer
from scribed.core.results import (
    DeprecateResult,
    FactResult,
    FileOutcome,
    ImportResult,
    InboxResult,
    PromoteResult,
    ReviewResult,
    RunReport,
    SourceItem,
)
from scribed.dates import utcnow as utcnow  # re-exported: the daemon takes its default clock here
from scribed.fsutil import (
    UnsafePathError,
    check_interrupt,
    clean_temp_files,
    deferred_dir_sync,
    sync_deferred,
)
from scribed.log import get as get_logger
from scribed.session.door import redacted
from scribed.tiers import audit, cold, live, transcripts
from scribed.tiers.cold import Layout

BATCH_FILES = 64  # source files per ledger commit in run_once
BATCH_SECONDS = 2.0  # … or this long, whichever comes first (the batch holds the ledger)
BATCH_BYTES = 32 << 20  # … or files this large: their prepared work waits in memory for the batch


class Scribe(Locking):
    """The core object both drivers (run-once and the daemon) call."""

    def __init__(
        self,
        cfg: Config,
        *,
        dry_run: bool = False,
        clock: Callable[[], datetime] = utcnow,
        environ: Mapping[str, str] | None = None,
        llm_factory: Callable[[], Compressor] | None = None,
        rand: Callable[[int], bytes] = os.urandom,
    ) -> None:
        heap.settle()  # before any big file: a freed long text's pages go back (see heap)
        self.cfg = cfg
        self.rand = rand  # the content key's bytes, when a root has none yet
        self.dry_run = dry_run
        self.clock = clock
        self.environ = dict(os.environ if environ is None else environ)
        self.layout = Layout(cfg.root_path)
        self.log = get_logger()
        discovery.validate_sources(cfg)
        try:
            self.layout.check_state()  # before anything is created in them
        except UnsafePathError as exc:
            raise ConfigError(str(exc.strerror or exc)) from exc
        self.compressors = Compressors(cfg, clock, self.environ, llm_factory, self.log)
        self._llm_factory = llm_factory  # set: an LLM compresses, in this process (no pool)
        self._ledger: Ledger | None = None  # opened on first use: a refused command writes nothing
        self._compactor: Compactor | None = None
        self._keys: Keyring | None = None
        self._keys_lock = threading.Lock()  # the daemon's workers ask for the key at once: one loads it
        self._held = threading.local()  # per thread: the daemon's threads share one Scribe
        self.last_report: RunReport | None = None  # run_once's, as it grows: what an interrupt saved
        self._preps = threading.local()  # per thread: a Preparer (see ahead)

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = self._open_ledger()
        return self._ledger

    @property
    def keys(self) -> Keyring:
        """The root's content key (see :mod:`scribed.core.content_key`), loaded or made with the
        ledger, whose keyed columns it brings in line (a dry run: a key of its own, nothing written)."""
        if self._keys is None:
            with self._keys_lock:
                if self._keys is None:
                    self._keys = self._load_keys()
        return self._keys

    def _load_keys(self) -> Keyring:
        ledger = self.ledger  # the state folder exists (with its .gitignore) before the key is written
        try:
            keys = content_key.load(self.layout.state, create=not self.dry_run, rand=self.rand, log=self.log)
        except OSError as exc:  # a full disk, a read-only folder: the run goes on (and fails where it writes)
            self.log.warning(
                "content_key_unwritable",
                file=str(self.layout.state / content_key.KEY_FILE),
                reason=str(exc.strerror or exc),
                fallback="a key for this process only: its digests are recognised by id after the next start",
            )
            keys = content_key.Keyring(self.rand(content_key.KEY_BYTES))
        did = ledger.rekey(keys)
        if did:
            self.log.info("content_keys", done=did)
        return keys

    @property
    def compactor(self) -> Compactor:
        """The per-file steps (see :mod:`scribed.core.compact`), built with the ledger on first use."""
        if self._compactor is None:
            ctx = RunContext(
                self.cfg, self.layout, self.ledger, self.clock, self.dry_run, self.log, self.keys
            )
            self._compactor = Compactor(ctx, SessionCompactor(ctx, self.compressors))
        return self._compactor

    def _open_ledger(self) -> Ledger:
        if self.dry_run:
            return Ledger(self.layout.ledger, readonly=True) if self.layout.ledger.exists() else Ledger(None)
        audit.ensure_state(self.layout)  # with its .gitignore: the ledger and copies are not for git
        return Ledger(self.layout.ledger)

    @property
    def extractive(self) -> ExtractiveCompressor:
        return self.compressors.extractive

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()

    # --- discovery ------------------------------------------------------------------------------
    def items(self, report: RunReport | None = None, *, quiet: bool = False) -> Iterator[SourceItem]:
        """Every file of every configured source, each once, plus the hot files; the links skipped
        and sources overlapping are said (counted in ``report``) unless ``quiet``."""
        return discovery.items(self.cfg, self.layout, None if quiet else self.log, report, self.known)

    def known(self, path: os.PathLike[str] | str) -> bool:
        """Whether the ledger has a row for this source file: of a file's two names, the one it was
        compacted under keeps it (:mod:`scribed.core.file_names`)."""
        return self.ledger.source(source_key(path)) is not None

    def prepare(self) -> None:
        """Start-of-run housekeeping: temp files and the pool's spool a killed run left behind (only
        those of runs that are gone: another run may be working now, outside the lock)."""
        if self.dry_run:
            return
        # the whole memory folder, not five named folders of it: a temp file a killed run left at its
        # top or in another folder stayed for good (tests/test_crash.py's random kill failed once)
        d = self.layout.memory
        n = clean_temp_files(d)
        if n:
            self.log.warning("temp_files_removed", folder=str(d), count=n)
        if pool_mod.sweep(self.layout):  # killed runs' spools: raw parses, secrets included
            self.log.warning("pool_spool_removed", folder=str(self.layout.state / pool_mod.SPOOL))
        from scribed.core.gittree import driver_missing

        missing = driver_missing(self.layout)  # once a run (and once when the daemon starts)
        if missing:
            self.log.warning("merge_driver_missing", reason=missing)

    def reconcile(self) -> ledger_reconcile.Reconciled:
        """Entries the ledger has but no file holds: compacted again, or reported lost."""
        if self.dry_run:
            return ledger_reconcile.Reconciled()
        ledger_mod.ensure(self.ledger, self.layout.memory, self.layout.archive, self.layout.root)
        res = ledger_reconcile.reconcile(self.layout, self.ledger)
        for eid, (file, where) in res.restored.items():
            self.log.warning(
                "cold_entry_restored",
                entry=eid,
                file=file,
                reason=f"{IN_INDEX}, and gone from this machine's view: written back from git ({where})",
            )
        for eid in res.again:
            self.log.warning("cold_entry_missing", entry=eid, action="compacting its session again")
        for row in res.lost:
            self.log.warning("cold_entry_lost", entry=row["id"], session=row["session"], agent=row["agent"])
        return res

    def display_path(self, path: os.PathLike[str] | str) -> str:
        """A source path for provenance: relative to the root inside it, ``~/…`` under home."""
        from pathlib import Path

        return discovery.display_path(self.layout.root, Path(path))

    # --- steps (the caller holds the lock) ------------------------------------------------------
    def process(
        self, item: SourceItem, *, force: bool = False, ahead: Prefetched | None = None
    ) -> FileOutcome:
        """Compact whatever is finished and new in one source file (see :mod:`scribed.core.compact`),
        taking the work :meth:`ahead` did on it while the file is still the one it read."""
        if ahead is not None:  # else whatever Compactor.use was given (a test's), or nothing
            self.compactor.use(ahead)
        try:
            return self.compactor.process(item, force=force)
        finally:
            self.compactor.use(None)

    def ahead(self, item: SourceItem, *, force: bool = False) -> Prefetched | None:
        """Parse, redact, compress and copy ``item`` now, without the lock (see
        :mod:`scribed.core.prepare`), for :meth:`process` to take under it. None when there is
        nothing to do, when an LLM compresses (its calls stay under the lock, bounded by
        ``[llm] max_concurrency``) or when it failed (the lock's path meets the failure). A
        markdown file over 1 MiB keeps its briefs, not its parse: under the lock its sessions are
        read again one at a time (memory follows its largest session). Reads the ledger only once it is open (the first run's first file
        is done under the lock)."""
        if self.dry_run or self._ledger is None or not pool_mod.extractive(self.cfg, self._llm_factory):
            return None
        try:
            st = discovery.file_stat(item)
        except OSError:
            return None
        if item.kind == "hot" and item.path.is_symlink():
            return None
        row = self._ledger.source(source_key(item.path))
        if row and ledger_mod.same_state(row, st) and row.status in ("done", "quarantined"):
            return None
        prep: Preparer | None = getattr(self._preps, "p", None)
        if prep is None:
            prep = self._preps.p = Preparer(self.cfg, self.environ, self.keys, keep_max=None)
        try:
            return prep.prepare(item, row, self.clock(), force)
        except Exception as exc:  # a bug or a file gone: the locked path meets it and reports it
            self.log.debug(
                "ahead_failed", file=str(item.path), reason=redacted(f"{type(exc).__name__}: {exc}")
            )
            return None

    def apply_inbox(self, report: RunReport | None = None) -> InboxResult:
        """Apply agent-written wiki entries dropped in ``.squad/memory/inbox/wiki/``."""
        from scribed.core.promote import apply_inbox

        res = apply_inbox(self.layout, self.cfg, self.clock, dry_run=self.dry_run)
        for w in res.warnings:
            self.log.warning("inbox_warning", reason=w)
        if report is not None:
            report.inbox = {"applied": len(res.applied), "quarantined": len(res.quarantined)}
            report.warnings += len(res.warnings)
        return res

    def retry_copies(self, report: RunReport | None = None) -> copies_owed.Retried:
        """Make the transcript copies a failed archive folder still owes (see
        :mod:`scribed.core.copies_owed`); the caller holds the lock. Cheap with none owed."""
        if self.dry_run:
            return copies_owed.Retried()
        res = copies_owed.retry(
            self.cfg,
            self.layout,
            self.ledger,
            self.log,
            now=self.clock(),
            items=lambda: self.items(quiet=True),
        )
        if res.made or res.left or res.lost:
            self.log.info("transcript_copies_retried", made=res.made, left=res.left, lost=res.lost or None)
        if report is not None:
            report.copies_retried, report.copies_owed = res.made, res.left
            report.warnings += res.warned
        return res

    def run_once(
        self,
        *,
        force: bool = False,
        progress: Callable[[list[SourceItem]], Iterator[SourceItem]] | None = None,
    ) -> RunReport:
        """Process every source file once. The lock is taken for the housekeeping, then for each
        batch's writes; each file is read and compacted before its batch takes it."""
        t0 = time.monotonic()
        report = self.last_report = RunReport(quiet_seconds=self.cfg.session.quiet_seconds)
        with self.locked(wait=True):
            self.prepare()
            self.reconcile()
            self.apply_inbox(report)
            self.retry_copies(report)
            self.ledger  # noqa: B018  # opened under the lock: ahead() reads it from here on
        items = list(self.items(report))
        it: Iterator[SourceItem] = progress(items) if progress else iter(items)
        self._process_batched(items, it, report, force)
        self.log.info(
            "run_complete",
            files=report.files,
            sessions=report.sessions,
            compacted=report.compacted,
            skipped=report.skipped,
            failed=report.failed,
            files_failed=report.files_failed or None,
            bytes_in=sum(e.bytes_in for e in report.entries),
            bytes_out=sum(e.bytes_out for e in report.entries),
            ms=int((time.monotonic() - t0) * 1000),
            peak_rss_mb=discovery.peak_rss_mb(),
            dry_run=self.dry_run or None,
        )
        return report

    def _process_batched(
        self, items: list[SourceItem], it: Iterator[SourceItem], report: RunReport, force: bool
    ) -> None:
        """Process ``items`` in batches of up to :data:`BATCH_FILES` files, :data:`BATCH_SECONDS` or
        :data:`BATCH_BYTES`: each file's work is done first, without the lock (a pool worker's, or
        :meth:`ahead`'s), then the batch takes the lock for its writes (:meth:`_commit`). A
        compacted hot file goes alone: its reset must follow a cold entry already durable."""
        with contextlib.ExitStack() as outer:
            pool = self._pool(outer, items, force)
            batch: list[tuple[SourceItem, Prefetched | None]] = []
            size, t0 = 0, time.monotonic()
            for item in it:
                check_interrupt()  # a stopping signal Python swallowed (fsutil.interrupts_kept)
                if item.kind == "hot":
                    self._commit(batch, report, force)
                    self._commit([(item, self.ahead(item, force=force))], report, force)
                    batch, size, t0 = [], 0, time.monotonic()
                    continue
                given = pool.take(item) if pool else None
                batch.append((item, given or self.ahead(item, force=force)))
                with contextlib.suppress(OSError):
                    size += item.path.stat().st_size
                if len(batch) >= BATCH_FILES or size >= BATCH_BYTES or time.monotonic() - t0 > BATCH_SECONDS:
                    self._commit(batch, report, force)
                    batch, size, t0 = [], 0, time.monotonic()
            self._commit(batch, report, force)

    def _commit(
        self, batch: list[tuple[SourceItem, Prefetched | None]], report: RunReport, force: bool
    ) -> None:
        """Under the lock, the batch's files: checked unchanged and written, one ledger commit, one
        sync per folder and one rewrite per cold file (see :func:`scribed.fsutil.deferred_dir_sync`,
        :func:`scribed.tiers.cold.batched_appends`); hot files re-seeded in it are written once each,
        after the cold files and their folders' sync (:func:`scribed.tiers.live.batched_writes`);
        transcript copies are synced once (:func:`scribed.tiers.transcripts.batched_copies`)."""
        if not batch:
            return
        with self.locked(wait=True):
            if self.dry_run or all(item.kind == "hot" for item, _ in batch):
                for item, given in batch:
                    report.add(item, self._process_guarded(item, force, given))
                return
            held: list[tuple[SourceItem, FileOutcome]] = []  # reported once the batch commits
            # an error or interrupt rolls the batch back
            with contextlib.ExitStack() as stack:
                stack.enter_context(self.ledger.batch())  # commits last: after the folders' sync
                stack.enter_context(deferred_dir_sync())
                owe = copies_owed.owe_batch(self.ledger)  # a failed batch's copies: made by a later run
                stack.enter_context(transcripts.batched_copies(self.log, owe))  # copies: durable before it
                stack.enter_context(live.batched_writes(self.log))  # hot seeds: after cold's sync
                stack.enter_context(cold.batched_appends(self._checkpoint))  # writes first: before all
                for item, given in batch:
                    held.append((item, self._process_guarded(item, force, given)))
                self._close_batch(stack, held, report, force)

    def _checkpoint(self) -> None:
        """Mid-batch (before a fold): the cold files are written; sync their folders, then commit."""
        sync_deferred()
        self.ledger.checkpoint()

    def _close_batch(
        self,
        stack: contextlib.ExitStack,
        held: list[tuple[SourceItem, FileOutcome]],
        report: RunReport,
        force: bool,
    ) -> None:
        """End the open batch: write its cold files, sync, commit. When its cold files cannot be
        written (disk full) its ledger rows roll back, and its files are done again one by one, so
        each one that fails is reported failed, as outside a batch."""
        try:
            stack.close()
        except OSError as exc:
            self.log.warning("batch_write_failed", files=len(held), reason=str(exc.strerror or exc))
            held[:] = [(item, self._process_guarded(item, force)) for item, _ in held]
        for item, out in held:
            report.add(item, out)
        held.clear()

    def _pool(self, stack: contextlib.ExitStack, items: list[SourceItem], force: bool) -> Prefetch | None:
        """The process pool for a backlog (see :mod:`scribed.core.pool`), closed with ``stack``."""
        if self.dry_run:  # a preview writes nothing, the pool's spool included
            return None
        todo = pool_mod.wanted(self.cfg, items, self.ledger, llm_factory=self._llm_factory)
        if not todo:
            return None
        try:
            pre = Prefetch(self.cfg, self.environ, self.ledger, self.keys, now=self.clock(), force=force)
            stack.callback(pre.close)
            pre.start(todo)
        except (OSError, RuntimeError, ValueError) as exc:  # no processes here: compact in this one
            self.log.warning("pool_unavailable", reason=str(exc), fallback="in-process")
            return None
        self.log.info("pool_started", workers=pre.workers, files=len(todo))
        return pre

    def _process_guarded(self, item: SourceItem, force: bool, given: Prefetched | None = None) -> FileOutcome:
        """A failure on one file (a bug included) must not stop the others; it stays queued."""
        try:
            return self.process(item, force=force, ahead=given)
        except OSError as exc:
            self.log.error("source_failed", file=str(item.path), reason=str(exc.strerror or exc))
            return FileOutcome("failed", file_failed=True, reason=str(exc.strerror or exc))
        except Exception as exc:
            reason = redacted(f"internal error: {type(exc).__name__}: {exc}")
            self.log.error("source_failed", file=str(item.path), reason=reason)
            return FileOutcome("failed", file_failed=True, reason=reason)

    # --- whole operations (they take the lock) --------------------------------------------------
    def run(
        self,
        *,
        force: bool = False,
        progress: Callable[[list[SourceItem]], Iterator[SourceItem]] | None = None,
    ) -> RunReport:
        """``scribed run-once``: every source once (see :meth:`run_once`: the root lock is taken for
        each batch's writes, waiting for another scribed that holds it)."""
        return self.run_once(force=force, progress=progress)

    def promote(self, *, as_of: datetime | None = None) -> PromoteResult:
        """Cold → wiki promotion under the root lock; records when it ran (once, in the ledger)."""
        from scribed.core.promote import promote

        with self.locked():
            return promote(self, as_of=as_of, dry_run=self.dry_run, lock=False)

    # --- what a driver may read or note in the ledger -------------------------------------------
    def source_state(self, path: os.PathLike[str] | str) -> SourceRow | None:
        """The ledger's row for a source file (the daemon's "unchanged since last time" check)."""
        return self.ledger.source(source_key(path))

    def schedule_retry(self, path: os.PathLike[str] | str, when: datetime) -> None:
        """Note when a failed source is tried again (``scribed status`` shows it)."""
        with contextlib.suppress(sqlite3.Error):
            self.ledger.set_retry_at(source_key(path), iso(when))

    def last_promotion_at(self) -> str | None:
        return self.ledger.get_meta("last_promotion_at")

    def import_squad(self, agents: list[str] | None, *, as_of: datetime | None = None) -> ImportResult:
        """Seed cold and wiki from a legacy Squad repo. Raises ``ImportRefusedError``."""
        from scribed.core import importer

        names = importer.plan(self.cfg, agents)  # a refusal writes nothing, not even the lock
        with self.locked():
            return importer.run_import(
                self.cfg, names, everything=agents is None, dry_run=self.dry_run,
                as_of=as_of or self.clock(), clock=self.clock, ledger=self.ledger,
            )  # fmt: skip

    def git_setup(self) -> GitSetup:
        """``scribed git setup`` under the root lock (the views reach the store first)."""
        from scribed.core.gitsetup import setup

        with self.locked():
            return setup(self.layout)

    def write_fact(
        self,
        topic: str,
        agent: str,
        text: str,
        *,
        title: str = "",
        via: str = "wiki-write",
        timeout: float = -1,
    ) -> FactResult:
        """An agent's fact into ``wiki/{topic}.md``; its text and title pass the door here. A text
        over the fact limit is refused before the lock (:class:`FactTooLargeError`, a WikiError)."""
        from scribed.curate.agent_writes import check_fact_size, write_agent_fact

        check_fact_size(text)
        with self.locked(timeout=timeout):
            return write_agent_fact(
                self.layout, topic, agent, redacted(text), title=redacted(title), clock=self.clock, via=via
            )

    def remove_cold(self, wanted: list[str]) -> list[cold_remove.Removal]:
        """Remove cold entries for the whole team (see :func:`cold_remove.remove`): then the hot files
        seeded from them are seeded again and the search index forgets their text."""
        with self.locked():
            rows, res = cold_remove.remove(self.layout, wanted, self.clock().date().isoformat())
            for r in rows:
                if not r.left:
                    self.log.info("cold_entry_removed", entry=r.id, agent=r.agent, files=r.files)
            for agent, keys in res.hand_removed.items():
                reseeded = hot_reseed.reseed_removed(self.layout, agent, keys, self.log, now=self.clock())
                for r in rows:
                    r.hot = r.hot or (reseeded and r.agent == agent)
        if any(not r.left for r in rows):
            from scribed.recall.search import Index

            try:
                with Index(self.layout) as index:
                    index.forget_removed()
            except (OSError, sqlite3.Error) as exc:  # derived data: rebuilt by `scribed search --rebuild`
                self.log.warning(
                    "search_index_not_updated", reason=str(exc), action=hint.cmd("search", "--rebuild")
                )
        return rows

    def deprecate(self, topic: str, title: str, agent: str, *, reason: str = "") -> DeprecateResult:
        """Mark a wiki block deprecated (kept, never deleted)."""
        from scribed.curate.agent_writes import deprecate

        with self.locked():
            return deprecate(self.layout, topic, title, agent, reason=redacted(reason), clock=self.clock)

    def review(self, ids: list[str], *, approve: bool, reason: str = "") -> ReviewResult:
        """Approve (merge into the wiki) or reject review proposals."""
        from scribed.curate import review

        with self.locked():
            if approve:
                data = review.approve(self.layout, ids, self.clock)
            else:
                data = review.reject(self.layout, ids, self.clock, redacted(reason))
        return data
