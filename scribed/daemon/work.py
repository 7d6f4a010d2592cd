"""Events → timers → queue → workers → :meth:`Scribe.process`, one file at a time under the root lock
(its reading, redaction and compression done before, :meth:`Scribe.ahead`).

Every unit of work (a file, the inbox, a promotion) takes the core's root lock
(:meth:`Scribe.locked_unless`) on its own: a fresh flock per unit excludes the daemon's other
threads as well as other processes, so promotion never runs while a file is being compacted.
The ledger is the only retry counter: the core records each failure's attempt and quarantines a
source at ``daemon.max_attempts``; the daemon only decides *when* to try again.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed import fsutil, sources
from scribed import log as log_mod
from scribed.compress.entry import iso
from scribed.core import discovery, file_names
from scribed.core.results import FileOutcome, RunReport, SourceItem
from scribed.core.scribe import Scribe
from scribed.daemon.deaths import Dead
from scribed.daemon.timers import Timers
from scribed.daemon.workqueue import WorkQueue
from scribed.progress import EVERY_SECONDS, Tracker

if TYPE_CHECKING:
    from scribed.log import Logger

WORKER_IDLE_WAIT = 30.0  # idle workers block; shutdown wakes them with sentinels
SETTLE_SECONDS = 0.5  # an end-marker check waits for a burst of writes to settle
MAX_BACKOFF = 3600.0
UNRECORDED_RETRY = 300.0  # a failure the ledger could not count (an exception): tried again this much later
OWN_WRITE_TTL = 120.0
LIVE_REFRESH_SECONDS = 10.0  # live hot files of kinds without end markers
LOCK_POLL = 0.5
# Kinds whose adapter can see an explicit end marker: worth a check right after writes settle.
END_MARKER_KINDS = frozenset({"copilot", "markdown"})


class RootGate:
    """Turns on the core's root lock for the daemon's threads, first come first served.

    The lock itself is the core's (:meth:`Scribe.locked_unless`, a fresh flock per unit, so
    other processes wait too). A flock is not fair: a worker that releases it and takes the next
    file at once would win it again and again, starving a promotion or the inbox during a backlog.
    Tickets make the daemon's own threads queue in order.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next = 0
        self._serving = 0
        self._abandoned: set[int] = set()

    def _advance(self) -> None:
        self._serving += 1
        while self._serving in self._abandoned:
            self._abandoned.discard(self._serving)
            self._serving += 1
        self._cond.notify_all()

    def _my_turn(self, stopping: threading.Event) -> int | None:
        with self._cond:
            ticket, self._next = self._next, self._next + 1
            while self._serving != ticket:
                if stopping.is_set():
                    self._abandoned.add(ticket)
                    return None
                self._cond.wait(LOCK_POLL)
            return ticket

    def _done(self) -> None:
        with self._cond:
            self._advance()

    @contextlib.contextmanager
    def hold(self, scribe: Scribe, stopping: threading.Event, log: Logger) -> Iterator[bool]:
        """The root lock, waited for in short steps so a stop request is noticed; yields False
        (lock not taken) once stopping."""
        if self._my_turn(stopping) is None:
            yield False
            return
        try:
            with scribe.locked_unless(stopping, poll=LOCK_POLL) as held:
                yield held
        finally:
            self._done()


class Dispatcher:
    """Decides what is work and when, and runs it; ``scribe`` is replaced on a config reload."""

    def __init__(self, scribe: Scribe, clock: Callable[[], datetime], stopping: threading.Event) -> None:
        self.scribe = scribe
        self.clock = clock
        self.stopping = stopping
        self.log = log_mod.get()
        self.queue = WorkQueue(scribe.cfg.daemon.queue_max)
        self.timers = Timers(self._now, self.submit)
        self._state_lock = threading.Lock()
        self._inflight: set[str] = set()
        self._dirty: set[str] = set()
        self._own: dict[str, tuple[int, float]] = {}
        self._not_utf8: set[str] = set()  # the names said (escaped): by the catch-up, _say_not_utf8
        self.workers: list[threading.Thread] = []
        self.gate = RootGate()
        self.last_result: dict[str, Any] = {}
        self.monotonic: Callable[[], float] = time.monotonic  # the catch-up's progress clock (tests set it)
        self.catchup: Tracker | None = None
        self._catching: dict[str, int] = {}  # the catch-up's files not done yet, their sizes
        self._names: file_names.Owners | None = None

    def _now(self) -> float:
        return self.clock().timestamp()

    @property
    def in_flight(self) -> int:
        with self._state_lock:
            return len(self._inflight)

    # --- what is a source -------------------------------------------------------------------
    def resolve(self, path: Path) -> SourceItem | None:
        """The source item a file belongs to, by the same rule discovery uses; None if it is not one.
        A second name of a file (a hard link, a file two sources reach) gives the item of the name
        the file is compacted under."""
        cfg, layout = self.scribe.cfg, self.scribe.layout
        for src in () if discovery.own_memory(layout, path) else cfg.sources:  # the tiers: no transcript
            if sources.match(src.kind, src.expanded, src.glob, path):  # run-once's discovery rule
                return self._owners().of(discovery.item(cfg, src, path))
        if sources.match("hot", layout.hot, "", path):
            return SourceItem(path, "hot", path.stem.lower())
        return None

    def _owners(self) -> file_names.Owners:
        """The names files are compacted under, for the config in force (a reload starts afresh)."""
        scribe = self.scribe
        owners = self._names
        if owners is None or owners.cfg is not scribe.cfg:
            owners = self._names = file_names.Owners(
                scribe.cfg, lambda: discovery.listed(scribe.cfg, None, known=scribe.known)
            )
        return owners

    def is_source(self, raw: str) -> bool:
        """Worth watching: a source file outside scribed's state folder, not a temp file."""
        path = Path(raw)
        if sources.is_temp(path.name) or self.scribe.layout.state in path.parents:
            return False
        if self.resolve(path) is not None:
            return True
        self._say_not_utf8(path)
        return False

    def _say_not_utf8(self, path: Path) -> None:
        """A source file whose name is not UTF-8, made while the daemon runs: skipped as discovery
        skips it, and said once (by its escaped name), as each run-once says it."""
        if fsutil.utf8_name(str(path)):
            return
        shown = fsutil.shown(path)
        for src in self.scribe.cfg.sources:
            reason = sources.not_utf8(src.kind, src.expanded, src.glob, path)
            if reason is None:
                continue
            with self._state_lock:
                said = shown in self._not_utf8
                self._not_utf8.add(shown)
            if not said:
                self.log.warning("source_warning", file=shown, kind=src.kind, reason=reason)
            return

    def known_files(self) -> list[str]:
        """Every source file the core's discovery lists now (the polling baseline)."""
        return [str(item.path) for item in self.scribe.items(quiet=True)]  # the catch-up says what it skips

    def _unchanged(self, key: str, st: os.stat_result) -> bool:
        row = self.scribe.source_state(key)
        return (
            row is not None
            and row.size == st.st_size
            and row.mtime_ns == st.st_mtime_ns
            and row.status in ("done", "quarantined")
        )

    def _is_own_write(self, key: str, st: os.stat_result) -> bool:
        """True for the echo of a file scribed itself just wrote (a hot file reset) or already compacted."""
        with self._state_lock:
            own = self._own.get(key)
        if own is not None and own[0] == st.st_mtime_ns:
            return True
        return self._unchanged(key, st)

    def expire_own(self) -> None:
        now = time.monotonic()
        with self._state_lock:
            for key in [k for k, (_, exp) in self._own.items() if exp < now]:
                del self._own[key]

    # --- events -> timers -> queue ----------------------------------------------------------
    def on_path_event(self, raw: str) -> bool:
        """A file changed: (re)arm its quiet timer. Returns whether it was taken."""
        if self.stopping.is_set():
            return False
        path = Path(raw)
        if sources.is_temp(path.name) or self.scribe.layout.state in path.parents:
            return False
        item = self.resolve(path)
        if item is None:
            self._say_not_utf8(path)
            return False
        key = str(item.path)  # a second name's event arms the timer of the name read
        try:
            st = path.stat()
        except OSError:
            return False
        if self._is_own_write(key, st):
            return False
        now = self._now()
        self.timers.arm(key, now + self.scribe.cfg.session.quiet_seconds)
        if item.kind in END_MARKER_KINDS:
            self.timers.arm(key, now + SETTLE_SECONDS, "quick")
        elif item.kind != "hot" and self.timers.deadline(key, "live") is None:
            # Throttled, not debounced: a session that writes all the time still gets its live hot
            # file refreshed every LIVE_REFRESH_SECONDS without re-reading it on every append.
            self.timers.arm(key, now + LIVE_REFRESH_SECONDS, "live")
        return True

    def submit(self, path: str) -> None:
        """Queue a file for a worker; a full queue retries it a second later instead of blocking."""
        if self.stopping.is_set():
            return
        if self.queue.offer(path) == "full":
            self.timers.arm(path, self._now() + 1.0, "retry")

    def catch_up(self) -> int:
        """Queue every source file the ledger does not show as done (what changed while we were down);
        its progress (files and bytes done and left, an ETA) is logged while it lasts (:meth:`tick`)."""
        todo: dict[str, int] = {}
        said = RunReport()
        for item in self.scribe.items(said):  # the core's discovery, the one run-once walks
            if self.stopping.is_set():
                break
            key = str(item.path)
            try:
                st = item.path.stat()
            except OSError:
                continue
            if self._unchanged(key, st):
                continue
            todo[key] = st.st_size
        with self._state_lock:  # said by the walk: not again by the watches (_say_not_utf8)
            self._not_utf8.update(w["source"] for w in said.source_warnings)
        if todo:
            with self._state_lock:
                self._catching = dict(todo)
                self.catchup = Tracker(len(todo), sum(todo.values()), clock=self.monotonic)
            self.log.info("catch_up_started", **self.catchup.public())
        for key in todo:
            self.submit(key)
        return len(todo)

    def tick(self, every: float = EVERY_SECONDS) -> None:
        """Log the catch-up's progress when ``every`` seconds passed since the last line (the main
        loop calls this at each of its ticks, each finished file too)."""
        tracker = self.catchup
        if tracker is None or tracker.finished or not tracker.due(every):
            return
        self.log.info("catch_up_progress", **tracker.public())

    def _caught(self, key: str) -> None:
        """A file of the catch-up is done (compacted, skipped or failed: it is no longer to do)."""
        with self._state_lock:
            size = self._catching.pop(key, None)
            tracker = self.catchup
        if size is None or tracker is None:
            return
        tracker.add(size)
        if tracker.finished:
            self.log.info("catch_up_done", **tracker.public())
        else:
            self.tick()

    # --- workers ----------------------------------------------------------------------------
    def start_workers(self, n: int) -> None:
        self.workers = [
            threading.Thread(target=self._worker, name=f"scribed-worker-{i}", daemon=True) for i in range(n)
        ]
        for t in self.workers:
            t.start()

    def _worker(self) -> None:
        while not self.stopping.is_set():
            path = self.queue.take(timeout=WORKER_IDLE_WAIT)
            if path is None:
                continue
            with self._state_lock:
                if path in self._inflight:
                    self._dirty.add(path)  # another worker has it: run again when it is done
                    continue
                self._inflight.add(path)
            try:
                self.work(path)
            except Exception as exc:  # work() handles its own failures; this is a last guard
                self.log.error("work_failed", file=path, reason=f"{type(exc).__name__}: {exc}")
            finally:
                self._caught(path)
                with self._state_lock:
                    self._inflight.discard(path)
                    again = path in self._dirty
                    self._dirty.discard(path)
                if again:
                    self.submit(path)

    def work(self, path: str) -> FileOutcome | None:
        """One unit of work: process one file under the root lock, then decide its next timer."""
        item = self.resolve(Path(path))
        if item is None:
            return None  # gone, renamed away, or no longer a source after a reload
        scribe = self.scribe
        given = scribe.ahead(item)  # read, redacted and compressed before the lock: it is held to write
        with self.gate.hold(scribe, self.stopping, self.log) as held:
            if not held:
                return None  # stopping: left for the catch-up of the next start
            try:
                out = scribe.process(item, ahead=given)
            except Exception as exc:  # any failure of one file is logged and retried, never fatal
                reason = (
                    str(exc.strerror or exc) if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
                )
                self.log.error("source_failed", file=path, reason=reason)
                out = FileOutcome("failed", file_failed=True, reason=reason)
            if item.kind == "hot" and out.status == "compacted":
                with contextlib.suppress(OSError):
                    st = item.path.stat()
                    with self._state_lock:
                        self._own[path] = (st.st_mtime_ns, time.monotonic() + OWN_WRITE_TTL)
        self._after(item, out, scribe)
        return out

    def _after(self, item: SourceItem, out: FileOutcome, scribe: Scribe) -> None:
        key = str(item.path)
        now = self._now()
        self.last_result = {
            "file": item.path.name,
            "agent": item.agent,
            "status": out.status,
            "entries": len(out.entries),
            "at": iso(self.clock()),
        }
        if out.status == "not-finished":
            try:
                mtime = min(item.path.stat().st_mtime, now)  # a future mtime counts as now (clock skew)
            except OSError:
                return
            deadline = max(mtime + scribe.cfg.session.quiet_seconds, now) + 0.01
            self.timers.arm(key, deadline, later_only=True)
        elif out.status == "failed":
            self._retry_later(key, out.reason, scribe)

    def _retry_later(self, key: str, reason: str, scribe: Scribe) -> None:
        """Back off by the ledger's attempt count; a quarantined source waits for a change."""
        row = scribe.source_state(key)
        if row is not None and row.status == "quarantined":
            self.log.error("source_given_up", file=key, attempts=row.attempts, reason=reason)
            return
        if row is not None and row.status == "failed" and row.attempts:
            attempts, delay = row.attempts, min(2.0**row.attempts, MAX_BACKOFF)
        else:  # the core raised before it could count the failure
            attempts, delay = 0, UNRECORDED_RETRY
        self.timers.arm(key, self._now() + delay, "retry")
        scribe.schedule_retry(key, self.clock() + timedelta(seconds=delay))  # shown by `scribed status`
        self.log.warning("retry_scheduled", file=key, attempts=attempts, in_seconds=delay)

    def join(self, grace: float) -> list[str]:
        """Wake and join the workers within ``grace`` seconds; the names of those still busy."""
        self.queue.wake(len(self.workers))
        deadline = time.monotonic() + grace
        for t in self.workers:
            t.join(max(0.0, deadline - time.monotonic()))
        return [t.name for t in self.workers if t.is_alive()]

    def dead(self) -> Dead:
        """The workers and the timer thread that should be alive and are not, by name."""
        dead: Dead = [(t.name, t) for t in self.workers if not t.is_alive()]
        if self.timers.thread is not None and not self.timers.thread.is_alive():
            dead.append((self.timers.thread.name, self.timers.thread))
        return dead
