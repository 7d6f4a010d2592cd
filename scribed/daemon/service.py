"""The long-running service behind ``scribed run``.

Filesystem events only *enqueue*: a per-file timer decides when a file has been quiet long
enough, and worker threads call the same :meth:`Scribe.process` run-once uses, under the root
lock. The daemon never writes memory files itself, so a crash at any point leaves what run-once
would: atomic files and a ledger that tells the next start what is left (the catch-up walk).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import heapq
import itertools
import json
import os
import queue
import re
import select
import signal
import socket
import sqlite3
import threading
import time
import zoneinfo
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout
from watchdog.events import FileSystemEvent, FileSystemEventHandler

from scribed import config as config_mod
from scribed import log as log_mod
from scribed import sources
from scribed.compress.entry import iso
from scribed.config import Config, ConfigError
from scribed.core.pipeline import FileOutcome, Scribe, SourceItem, utcnow
from scribed.daemon import sdnotify
from scribed.fsutil import FILE_MODE, TMP_PREFIX, atomic_write, ensure_dir
from scribed.names import normalize_name
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from apscheduler.triggers.cron import CronTrigger
    from watchdog.observers.api import BaseObserver

HEARTBEAT_SECONDS = 10.0
MAIN_TICK = 5.0
TIMER_MAX_WAIT = 5.0  # signals wake the main loop at once (set_wakeup_fd); the tick is for housekeeping
WORKER_IDLE_WAIT = 30.0  # idle workers block; shutdown wakes them with sentinels
SETTLE_SECONDS = 0.5  # an end-marker check waits for a burst of writes to settle
MAX_BACKOFF = 3600.0
OWN_WRITE_TTL = 120.0
MISFIRE_GRACE = 6 * 3600  # a laptop waking from sleep still runs the night's promotion
MISSING_CHECK_SECONDS = 10.0
INBOX_CHECK_SECONDS = 5.0
LIVE_REFRESH_SECONDS = 10.0  # live hot files of kinds without end markers
# Kinds whose adapter can see an explicit end marker: worth a check right after writes settle.
END_MARKER_KINDS = frozenset({"copilot", "markdown"})
WATCH_EVENTS = frozenset({"created", "modified", "closed", "moved"})
_TEMP_SUFFIXES = ("~", ".tmp", ".swp", ".part")
_INOTIFY_LIMITS = (errno.ENOSPC, errno.EMFILE, errno.ENFILE)


def heartbeat_path(layout: Layout) -> Path:
    return layout.state / "heartbeat"


class AlreadyRunning(RuntimeError):
    """Another daemon serves this root; the message (one line) names its pid and the lock file."""


def claim_instance(layout: Layout) -> int:
    """Hold ``{state}/daemon.pid`` (non-blocking flock, our pid inside) for the daemon's life.

    Two daemons on one root would double the watchers and race each other's heartbeat; the kernel
    drops the lock with the process, so a crashed daemon leaves no stale claim. Returns the fd.
    """
    path = layout.state / "daemon.pid"
    ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = ""
        with contextlib.suppress(OSError, UnicodeDecodeError):
            holder = os.pread(fd, 32, 0).decode().strip()
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise
        who = f" (pid {holder})" if holder.isdigit() else ""
        raise AlreadyRunning(
            f"another scribed daemon{who} already serves {layout.root} (it holds {path}); "
            "`scribed status` shows it"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def is_temp_name(name: str) -> bool:
    """Editor swap files, partial downloads, dot files and scribed's own temp files are never sessions."""
    return name.startswith((".", "~", TMP_PREFIX)) or name.endswith(_TEMP_SUFFIXES)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a ``Path.glob`` pattern (``**`` = any folders, ``*`` within one name) to a regex.

    Events name single files, so matching them against the kind's patterns avoids re-walking the tree.
    """
    parts = pattern.split("/")
    out: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        rx, j = "", 0
        while j < len(part):
            c = part[j]
            if c == "*":
                rx += "[^/]*"
            elif c == "?":
                rx += "[^/]"
            elif c == "[" and (k := part.find("]", j + 2)) != -1:
                body = part[j + 1 : k]
                rx += "[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]"
                j = k
            else:
                rx += re.escape(c)
            j += 1
        out.append(rx if last else rx + "/")
    return re.compile("".join(out) + r"\Z")


# --- promotion schedule -------------------------------------------------------------------------
def promotion_trigger(cfg: Config) -> CronTrigger:
    """The cron trigger for ``[promote]``; a bad schedule or zone is the user's config error."""
    from apscheduler.triggers.cron import CronTrigger

    try:
        zoneinfo.ZoneInfo(cfg.promote.timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(
            f"bad value for 'promote.timezone': unknown time zone (got {cfg.promote.timezone!r})"
        ) from exc
    fields = cfg.promote.schedule.split()
    try:
        if len(fields) != 5:
            raise ValueError(f"expected 5 fields (minute hour day month weekday), got {len(fields)}")
        minute, hour, day, month, dow = fields
        return CronTrigger(
            minute=minute,
            hour=hour,
            day=day,
            month=month,
            day_of_week=crontab_weekdays(dow),
            timezone=cfg.promote.timezone,
        )
    except ValueError as exc:
        raise ConfigError(f"bad value for 'promote.schedule': {exc} (got {cfg.promote.schedule!r})") from exc


_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def crontab_weekdays(field: str) -> str:
    """Cron's weekday field (0 or 7 = Sunday) in APScheduler 3's terms (0 = Monday).

    ``CronTrigger.from_crontab`` passes numbers through unchanged, so "* * * * 1" would fire on
    Tuesdays; spelling the days out as names removes the off-by-one.
    """
    if field == "*":
        return "*"
    days: set[int] = set()
    for part in field.lower().split(","):
        rng, _, step_s = part.partition("/")
        step = int(step_s) if step_s else 1
        if step < 1:
            raise ValueError(f"bad weekday step in {part!r}")

        def num(tok: str) -> int:
            if tok in _DAY_NAMES:
                return _DAY_NAMES.index(tok)
            n = int(tok)
            if not 0 <= n <= 7:
                raise ValueError(f"weekday {n} out of range 0-7")
            return n

        if rng == "*":
            lo, hi = 0, 6
        elif "-" in rng:
            a, b = rng.split("-", 1)
            lo, hi = num(a), num(b)
            if hi < lo:
                hi += 7  # fri-mon wraps over the weekend
        else:
            lo = hi = num(rng)
            if step_s:
                hi = 6
        days.update(d % 7 for d in range(lo, hi + 1, step))
    return ",".join(_DAY_NAMES[d] for d in sorted(days))


def next_fire(trigger: CronTrigger, now: datetime) -> datetime | None:
    fire: datetime | None = trigger.get_next_fire_time(None, now)
    return fire


def previous_fire(trigger: CronTrigger, now: datetime) -> datetime | None:
    """The last scheduled time at or before ``now`` (APScheduler 3 only looks forward)."""
    window = timedelta(hours=1)
    while window <= timedelta(days=5 * 366):
        t = next_fire(trigger, now - window)
        if t is not None and t <= now:
            while True:
                n = next_fire(trigger, t + timedelta(microseconds=1))
                if n is None or n > now:
                    return t
                t = n
        window *= 2
    return None


def parse_iso(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


# --- timers -------------------------------------------------------------------------------------
class Timers:
    """Per-file deadlines on one heap, fired by one thread; re-arming a file replaces its deadline.

    The clock is injectable (seconds since the epoch) and :meth:`wakeup` lets tests move time.
    Each (path, slot) has at most one live deadline; stale heap entries are skipped and compacted.
    """

    def __init__(self, clock: Callable[[], float], fire: Callable[[str], None]) -> None:
        self._clock = clock
        self._fire = fire
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, str, str]] = []
        self._live: dict[tuple[str, str], tuple[float, int]] = {}
        self._seq = itertools.count()
        self._stopped = False
        self.thread: threading.Thread | None = None
        self.log = log_mod.get()

    def arm(self, path: str, deadline: float, slot: str = "quiet", *, later_only: bool = False) -> None:
        with self._cond:
            key = (path, slot)
            cur = self._live.get(key)
            if later_only and cur is not None and cur[0] >= deadline:
                return
            seq = next(self._seq)
            self._live[key] = (deadline, seq)
            heapq.heappush(self._heap, (deadline, seq, path, slot))
            if len(self._heap) > 2 * len(self._live) + 64:
                self._heap = [(d, s, p, sl) for (p, sl), (d, s) in self._live.items()]
                heapq.heapify(self._heap)
            self._cond.notify()

    def cancel(self, path: str, slot: str = "quiet") -> None:
        with self._cond:
            self._live.pop((path, slot), None)

    def deadline(self, path: str, slot: str = "quiet") -> float | None:
        with self._cond:
            cur = self._live.get((path, slot))
        return None if cur is None else cur[0]

    def __len__(self) -> int:
        with self._cond:
            return len(self._live)

    def heap_size(self) -> int:
        with self._cond:
            return len(self._heap)

    def pop_due(self, now: float | None = None) -> list[str]:
        """Remove and return the paths whose deadline has passed (each once)."""
        with self._cond:
            return self._pop_due_locked(self._clock() if now is None else now)

    def _pop_due_locked(self, now: float) -> list[str]:
        due: list[str] = []
        seen: set[str] = set()
        while self._heap and self._heap[0][0] <= now:
            d, seq, path, slot = heapq.heappop(self._heap)
            if self._live.get((path, slot)) != (d, seq):
                continue  # re-armed or cancelled since
            del self._live[(path, slot)]
            if path not in seen:
                seen.add(path)
                due.append(path)
        return due

    def wakeup(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def start(self) -> None:
        self._stopped = False
        self.thread = threading.Thread(target=self._run, name="scribed-timers", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                now = self._clock()
                due = self._pop_due_locked(now)
                if not due:
                    # Wake at least every few seconds: a wall clock that jumped (suspend) is noticed.
                    wait = (
                        min(TIMER_MAX_WAIT, max(0.01, self._heap[0][0] - now))
                        if self._heap
                        else TIMER_MAX_WAIT
                    )
                    self._cond.wait(wait)
                    continue
            for path in due:
                try:
                    self._fire(path)
                except Exception as exc:  # the one timer thread must outlive any one file
                    self.log.error("timer_failed", file=path, reason=f"{type(exc).__name__}: {exc}")


# --- work queue ---------------------------------------------------------------------------------
class WorkQueue:
    """A bounded queue of paths; a path already waiting is not queued twice (floods stay small)."""

    def __init__(self, maxsize: int) -> None:
        # Unbounded underneath so wake() can always add its sentinels; offer() enforces the bound.
        self._q: queue.Queue[str] = queue.Queue()
        self._max = maxsize
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self.overflows = 0

    def offer(self, path: str) -> str:
        """Queue ``path`` without blocking: "queued", "pending" (already waiting) or "full"."""
        with self._lock:
            if path in self._pending:
                return "pending"
            if self._q.qsize() >= self._max:
                self.overflows += 1
                return "full"
            self._q.put_nowait(path)
            self._pending.add(path)
            return "queued"

    def take(self, timeout: float) -> str | None:
        try:
            path = self._q.get(timeout=timeout)
        except queue.Empty:
            return None
        if not path:
            return None  # a wake() sentinel
        with self._lock:
            self._pending.discard(path)
        return path

    def wake(self, n: int) -> None:
        """Unblock ``n`` workers waiting in take() (shutdown), so they need not poll."""
        for _ in range(n):
            self._q.put_nowait("")

    @property
    def depth(self) -> int:
        with self._lock:
            return len(self._pending)

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)


class _Handler(FileSystemEventHandler):
    """Turns watchdog events into timer arms. Never does work, never raises."""

    def __init__(self, daemon: Daemon) -> None:
        self._daemon = daemon

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            if event.is_directory or event.event_type not in WATCH_EVENTS:
                return
            raw = event.dest_path if event.event_type == "moved" else event.src_path
            self._daemon.on_path_event(os.fsdecode(raw))
        except Exception as exc:  # a dead dispatcher thread would silently stop all watching
            with contextlib.suppress(Exception):
                self._daemon.log.error("event_failed", reason=f"{type(exc).__name__}: {exc}")


# --- the daemon ---------------------------------------------------------------------------------
class Daemon:
    """Watch, time, queue and work: one :class:`Scribe` core, driven by events instead of a loop."""

    def __init__(
        self,
        cfg: Config,
        *,
        clock: Callable[[], datetime] = utcnow,
        scheduler_factory: Callable[[], Any] | None = None,
        notify: Callable[[str], bool] = sdnotify.notify,
    ) -> None:
        self.cfg = cfg
        self.clock = clock
        self.notify = notify
        self.log = log_mod.get()
        self.trigger = promotion_trigger(cfg)
        self.scribe = Scribe(cfg, clock=clock)
        self.layout = self.scribe.layout
        self._retired: list[Scribe] = []
        self._scheduler_factory = scheduler_factory or self._default_scheduler
        self._scheduler: Any = None
        self.queue = WorkQueue(cfg.daemon.queue_max)
        self.timers = Timers(self._now, self.submit)
        # One lock instance shared by all our threads (not thread-local): workers overlap among
        # themselves, while another process (run-once, a second container) waits for all to finish.
        self._gate = FileLock(str(self.layout.lock), mode=FILE_MODE, thread_local=False)
        self._state_lock = threading.Lock()
        self._inflight: set[str] = set()
        self._dirty: set[str] = set()
        self._attempts: dict[str, int] = {}
        self._own: dict[str, tuple[int, float]] = {}
        self._observer: BaseObserver | None = None
        self._missing: set[Path] = set()
        self._restart_watch = False
        self._workers: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._signals: list[int] = []
        self._wake_r = self._wake_w = -1
        self._rx: dict[str, re.Pattern[str]] = {}
        self.watch_mode = ""
        self.last_result: dict[str, Any] = {}
        self.started_at = ""

    # --- small helpers ----------------------------------------------------------------------
    def _now(self) -> float:
        return self.clock().timestamp()

    def _default_scheduler(self) -> Any:
        from apscheduler.schedulers.background import BackgroundScheduler

        return BackgroundScheduler(timezone=self.cfg.promote.timezone, daemon=True)

    def _regex(self, pattern: str) -> re.Pattern[str]:
        rx = self._rx.get(pattern)
        if rx is None:
            rx = self._rx[pattern] = glob_regex(pattern)
        return rx

    def resolve(self, path: Path) -> SourceItem | None:
        """The source item a file belongs to, by the same rules discovery uses; None if it is not one."""
        for src in self.cfg.sources:
            folder = src.expanded
            if sources.match(src.kind, folder, src.glob, path):  # the very rule run-once's discovery uses
                agent = normalize_name(src.agent) or src.kind.replace("squad-repl", "squad")
                return SourceItem(path, src.kind, agent)
        if sources.match("hot", self.layout.hot, "", path):
            return SourceItem(path, "hot", path.stem.lower())
        return None

    def _unchanged(self, key: str, st: os.stat_result) -> bool:
        row = self.scribe.ledger.source(key)
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

    # --- events -> timers -> queue ----------------------------------------------------------
    def on_path_event(self, raw: str) -> bool:
        """A file changed: (re)arm its quiet timer. Returns whether it was taken."""
        if self._stopping.is_set():
            return False
        path = Path(raw)
        if sources.is_temp(path.name) or self.layout.state in path.parents:
            return False
        item = self.resolve(path)
        if item is None:
            return False
        key = str(path)
        try:
            st = path.stat()
        except OSError:
            return False
        if self._is_own_write(key, st):
            return False
        now = self._now()
        self.timers.arm(key, now + self.cfg.session.quiet_seconds)
        if item.kind in END_MARKER_KINDS:
            self.timers.arm(key, now + SETTLE_SECONDS, "quick")
        elif item.kind != "hot" and self.timers.deadline(key, "live") is None:
            # Throttled, not debounced: a session that writes all the time still gets its live hot
            # file refreshed every LIVE_REFRESH_SECONDS without re-reading it on every append.
            self.timers.arm(key, now + LIVE_REFRESH_SECONDS, "live")
        return True

    def submit(self, path: str) -> None:
        """Queue a file for a worker; a full queue retries it a second later instead of blocking."""
        if self._stopping.is_set():
            return
        if self.queue.offer(path) == "full":
            self.timers.arm(path, self._now() + 1.0, "retry")

    def catch_up(self) -> int:
        """Queue every source file the ledger does not show as done (what changed while we were down)."""
        n = 0
        for item in self.scribe.items():
            if self._stopping.is_set():
                break
            key = str(item.path)
            try:
                st = item.path.stat()
            except OSError:
                continue
            if self._unchanged(key, st):
                continue
            self.submit(key)
            n += 1
        return n

    # --- work -------------------------------------------------------------------------------
    def _acquire_gate(self) -> bool:
        waited = False
        while True:
            try:
                self._gate.acquire(timeout=0.5)
                return True
            except Timeout:
                if self._stopping.is_set():
                    return False
                if not waited:
                    waited = True
                    self.log.info("waiting_for_lock", lock=str(self.layout.lock))

    def _worker(self) -> None:
        while not self._stopping.is_set():
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
            except Exception as exc:  # one bad file must not cost a worker
                self.log.error("work_failed", file=path, reason=f"{type(exc).__name__}: {exc}")
            finally:
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
        if not self._acquire_gate():
            return None  # stopping: left for the catch-up of the next start
        try:
            try:
                out = scribe.process(item)
            except OSError as exc:
                reason = str(exc.strerror or exc)
                self.log.error("source_failed", file=path, reason=reason)
                out = FileOutcome("failed", failed=1, reason=reason)
            if item.kind == "hot" and out.status == "compacted":
                with contextlib.suppress(OSError):
                    st = item.path.stat()
                    with self._state_lock:
                        self._own[path] = (st.st_mtime_ns, time.monotonic() + OWN_WRITE_TTL)
        finally:
            self._gate.release()
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
            deadline = max(mtime + self.cfg.session.quiet_seconds, now) + 0.01
            self.timers.arm(key, deadline, later_only=True)
        elif out.status == "failed":
            row = scribe.ledger.source(key)
            if row is not None and row.status == "quarantined":
                self._attempts.pop(key, None)
                return
            if row is not None and row.status == "failed" and row.attempts:
                attempts = row.attempts
            else:
                attempts = self._attempts.get(key, 0) + 1
                if attempts >= self.cfg.daemon.max_attempts:
                    self._attempts.pop(key, None)
                    self.log.error("source_given_up", file=key, attempts=attempts, reason=out.reason)
                    return
                self._attempts[key] = attempts
            delay = min(2.0**attempts, MAX_BACKOFF)
            self.timers.arm(key, now + delay, "retry")
            with contextlib.suppress(sqlite3.Error):  # shown by `scribed status`
                scribe.ledger.set_retry_at(key, iso(self.clock() + timedelta(seconds=delay)))
            self.log.warning("retry_scheduled", file=key, attempts=attempts, in_seconds=delay)
        else:
            self._attempts.pop(key, None)

    # --- watching ---------------------------------------------------------------------------
    def _native_observer(self) -> BaseObserver:
        from watchdog.observers import Observer

        return Observer()

    def _polling_observer(self) -> BaseObserver:
        from watchdog.observers.polling import PollingObserver

        return PollingObserver(timeout=self.cfg.watch.poll_interval)

    def watch_folders(self) -> list[tuple[Path, bool]]:
        """(folder, recursive) for every existing source folder and the hot folder."""
        out: list[tuple[Path, bool]] = []
        self._missing = set()
        for src in self.cfg.sources:
            folder = src.expanded
            if folder.is_dir():
                if (folder, True) not in out:
                    out.append((folder, True))
            else:
                self._missing.add(folder)
                self.log.warning(
                    "source_missing", source=str(folder), kind=src.kind, reason="not watched until it exists"
                )
        ensure_dir(self.layout.hot)
        out.append((self.layout.hot, False))
        return out

    def _observe(
        self, make: Callable[[], BaseObserver], folders: Iterable[tuple[Path, bool]]
    ) -> BaseObserver:
        obs = make()
        handler = _Handler(self)
        for folder, recursive in folders:
            obs.schedule(handler, str(folder), recursive=recursive)
        try:
            obs.start()
        except BaseException:
            with contextlib.suppress(Exception):
                obs.stop()
            raise
        return obs

    def start_observers(self) -> None:
        """Start watching; ``auto`` falls back to polling when inotify cannot start (watch limits)."""
        folders = self.watch_folders()
        mode = self.cfg.watch.mode
        if mode == "polling":
            self._observer, self.watch_mode = self._observe(self._polling_observer, folders), "polling"
            return
        try:
            self._observer, self.watch_mode = self._observe(self._native_observer, folders), "inotify"
        except OSError as exc:
            if mode != "auto":
                raise
            hint = (
                " (raise fs.inotify.max_user_watches / max_user_instances)"
                if exc.errno in _INOTIFY_LIMITS
                else ""
            )
            self.log.warning(
                "observer_fallback",
                reason=f"{exc.strerror or exc}{hint}",
                errno=exc.errno,
                mode="polling",
                poll_interval=self.cfg.watch.poll_interval,
            )
            self._observer, self.watch_mode = self._observe(self._polling_observer, folders), "polling"

    def stop_observers(self, timeout: float = 5.0) -> None:
        obs, self._observer = self._observer, None
        if obs is None:
            return
        with contextlib.suppress(Exception):
            obs.stop()
        with contextlib.suppress(RuntimeError):
            obs.join(timeout)

    def restart_observers(self) -> int:
        """New watches for the current sources, then a catch-up for whatever changed in between."""
        self.stop_observers()
        self.start_observers()
        return self.catch_up()

    def dead_threads(self) -> list[str]:
        """Names of threads that should be alive and are not. A vanished watch folder is not fatal."""
        dead = [t.name for t in self._workers if not t.is_alive()]
        if self.timers.thread is not None and not self.timers.thread.is_alive():
            dead.append(self.timers.thread.name)
        obs = self._observer
        if obs is not None:
            if not obs.is_alive():
                dead.append("observer")
            for em in list(obs.emitters):
                if not em.is_alive():
                    if Path(em.watch.path).is_dir():
                        dead.append(f"watch {em.watch.path}")
                    else:
                        self._restart_watch = True  # folder deleted: watch the parent's future instead
        return dead

    # --- promotion --------------------------------------------------------------------------
    def next_promotion(self) -> datetime | None:
        return next_fire(self.trigger, self.clock())

    def last_promotion(self) -> datetime | None:
        return parse_iso(self.scribe.ledger.get_meta("last_promotion_at"))

    def promotion_overdue(self) -> bool:
        """True when the last scheduled promotion time passed without a promotion (asleep, stopped)."""
        prev = previous_fire(self.trigger, self.clock())
        if prev is None:
            return False
        last = self.last_promotion()
        return last is None or last < prev

    def apply_inbox_if_any(self) -> None:
        """Apply wiki entries agents dropped in ``inbox/wiki/``; skipped this round if the lock is busy
        (the main loop must keep pinging the watchdog)."""
        inbox = self.layout.memory / "inbox" / "wiki"
        try:
            if not any(p.suffix == ".md" for p in inbox.iterdir()):
                return
        except OSError:
            return
        try:
            self._gate.acquire(timeout=0)
        except Timeout:
            return
        try:
            self.scribe.apply_inbox()
        except Exception as exc:  # one bad inbox pass must not stop the service
            self.log.error("inbox_failed", reason=f"{type(exc).__name__}: {exc}")
        finally:
            self._gate.release()

    def promote(self) -> bool:
        """Run cold → wiki promotion if this build has it; record when, under the root lock."""
        if not self._acquire_gate():
            return False
        try:
            from scribed.core.promote import promote

            # A Scribe, not a Config: promote() then knows we already hold the root lock.
            result = promote(self.scribe)
            summary = {k: v for k, v in result.items() if isinstance(v, int | float | str | bool)}
            when = iso(self.clock())
            self.scribe.ledger.set_meta("last_promotion_at", when)
            self.log.info("promoted", at=when, report=summary or None)
            return True
        except Exception as exc:  # the scheduler thread logs nothing useful; we do
            self.log.error("promotion_failed", reason=f"{type(exc).__name__}: {exc}")
            return False
        finally:
            self._gate.release()

    def start_scheduler(self) -> None:
        sched = self._scheduler_factory()
        kwargs: dict[str, Any] = {
            "trigger": self.trigger,
            "id": "promote",
            "name": "promotion",
            "coalesce": True,
            "max_instances": 1,
            "misfire_grace_time": MISFIRE_GRACE,
            "replace_existing": True,
        }
        if self.promotion_overdue():
            last = self.last_promotion()
            self.log.info("promotion_overdue", last=iso(last) if last else None, running="now")
            kwargs["next_run_time"] = self.clock()
        sched.add_job(self.promote, **kwargs)
        sched.start()
        self._scheduler = sched

    # --- lifecycle --------------------------------------------------------------------------
    def status_line(self) -> str:
        last = self.last_result
        tail = f"; last: {last['status']} {last['file']}" if last else ""
        return f"queue {self.queue.depth}, pending {self.queue.pending()}, timers {len(self.timers)}{tail}"

    def write_heartbeat(self, *, stopped: bool = False) -> None:
        """{state}/heartbeat: what ``scribed healthcheck`` and ``status`` read (no socket needed)."""
        with self._state_lock:
            in_flight = len(self._inflight)
        data = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "time": iso(utcnow()),
            "unix": time.time(),
            "interval": HEARTBEAT_SECONDS,
            "started_at": self.started_at,
            "stopped": stopped,
            "queue": self.queue.depth,
            "pending": self.queue.pending(),
            "in_flight": in_flight,
            "timers": len(self.timers),
            "watch": self.watch_mode,
            "last_result": self.last_result,
        }
        try:
            atomic_write(heartbeat_path(self.layout), json.dumps(data) + "\n")
        except OSError as exc:
            self.log.warning("heartbeat_failed", reason=str(exc.strerror or exc))

    def start(self) -> int:
        """Observers first (so nothing written during the walk is missed), then workers and catch-up."""
        t0 = time.monotonic()
        self.started_at = iso(utcnow())
        self._stopping.clear()
        self.scribe.prepare()
        self.log.info(
            "started",
            pid=os.getpid(),
            root=str(self.layout.root),
            sources=len(self.cfg.sources),
            workers=self.cfg.daemon.workers,
            watch=self.cfg.watch.mode,
            quiet_seconds=self.cfg.session.quiet_seconds,
        )
        self.start_observers()
        self.timers.start()
        self._workers = [
            threading.Thread(target=self._worker, name=f"scribed-worker-{i}", daemon=True)
            for i in range(self.cfg.daemon.workers)
        ]
        for t in self._workers:
            t.start()
        n = self.catch_up()
        self.start_scheduler()
        self.write_heartbeat()
        self.notify("READY=1")
        self.notify(f"STATUS={self.status_line()}")
        nxt = self.next_promotion()
        self.log.info(
            "ready",
            catch_up=n,
            watch=self.watch_mode,
            next_promotion=nxt.isoformat() if nxt else None,
            ms=int((time.monotonic() - t0) * 1000),
        )
        return n

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signals.append(signum)  # only a flag: the main loop does the work

    def request_stop(self) -> None:
        """Stop from another thread (tests, embedding): same path as SIGTERM."""
        self._signals.append(signal.SIGTERM)
        self._poke()

    def _poke(self) -> None:
        if self._wake_w >= 0:
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"\0")

    def _install_signals(self) -> dict[int, Any]:
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        old: dict[int, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return old
        signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            old[sig] = signal.signal(sig, self._on_signal)
        return old

    def _restore_signals(self, old: dict[int, Any]) -> None:
        if old:
            for sig, handler in old.items():
                signal.signal(sig, handler)
            signal.set_wakeup_fd(-1)
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def _wait(self, timeout: float) -> None:
        with contextlib.suppress(InterruptedError):
            ready, _, _ = select.select([self._wake_r], [], [], timeout)
            if ready:
                with contextlib.suppress(BlockingIOError, OSError):
                    while os.read(self._wake_r, 512):
                        pass

    def run(self) -> int:
        """Block until SIGTERM/SIGINT (exit 0) or a dead thread (exit 1, so the supervisor restarts us).

        A second daemon on the same root raises :class:`AlreadyRunning` before touching anything.
        """
        instance = claim_instance(self.layout)
        old = self._install_signals()
        code = 1
        try:
            try:
                self.start()
            except OSError as exc:
                self.log.error(
                    "start_failed", reason=str(exc.strerror or exc), file=getattr(exc, "filename", None)
                )
                return 1
            code = self._loop()
            return code
        finally:
            self.shutdown(code)
            self._restore_signals(old)
            os.close(instance)

    def _loop(self) -> int:
        wd_interval = sdnotify.watchdog_interval()
        hb_due = wd_due = 0.0
        missing_due = time.monotonic() + MISSING_CHECK_SECONDS
        inbox_due = 0.0
        while True:
            self._wait(min(MAIN_TICK, wd_interval or MAIN_TICK))
            sigs, self._signals = self._signals, []
            if signal.SIGTERM in sigs or signal.SIGINT in sigs:
                sig = signal.SIGTERM if signal.SIGTERM in sigs else signal.SIGINT
                self.log.info("stopping", signal=signal.Signals(sig).name)
                return 0
            try:
                if signal.SIGHUP in sigs:
                    self.reload()
                mono = time.monotonic()
                if self._restart_watch or (mono >= missing_due and any(p.is_dir() for p in self._missing)):
                    self._restart_watch = False
                    n = self.restart_observers()
                    self.log.info(
                        "watch_restarted", reason="a source folder appeared or vanished", catch_up=n
                    )
                if mono >= inbox_due:
                    inbox_due = mono + INBOX_CHECK_SECONDS
                    self.apply_inbox_if_any()
                if mono >= missing_due:
                    missing_due = mono + MISSING_CHECK_SECONDS
                    self._expire_own()
            except OSError as exc:
                self.log.error(
                    "observer_failed", reason=str(exc.strerror or exc), file=getattr(exc, "filename", None)
                )
                return 1
            dead = self.dead_threads()
            if dead:
                self.log.error(
                    "thread_died", threads=dead, reason="exiting so the supervisor restarts the service"
                )
                return 1
            mono = time.monotonic()
            if wd_interval is not None and mono >= wd_due:
                self.notify("WATCHDOG=1")
                wd_due = mono + wd_interval
            if mono >= hb_due:
                self.write_heartbeat()
                self.notify(f"STATUS={self.status_line()}")
                hb_due = mono + HEARTBEAT_SECONDS

    def _expire_own(self) -> None:
        now = time.monotonic()
        with self._state_lock:
            for key in [k for k, (_, exp) in self._own.items() if exp < now]:
                del self._own[key]

    def reload(self) -> bool:
        """SIGHUP: re-read the same config file; a bad one keeps the running config and says why."""
        path = self.cfg.path
        try:
            new = config_mod.load(str(path) if path else None)
            if new.root_path != self.cfg.root_path:
                raise ConfigError(
                    f"root cannot change on reload (was {self.cfg.root_path}); restart the service"
                )
            trigger = promotion_trigger(new)
            scribe = Scribe(new, clock=self.clock)
        except (ConfigError, OSError) as exc:
            self.log.error(
                "reload_failed",
                config=str(path) if path else None,
                reason=str(exc),
                keeping="previous config",
            )
            return False
        old_cfg = self.cfg
        self._retired.append(self.scribe)  # in-flight work may still use it; closed at shutdown
        self.cfg, self.scribe, self.trigger = new, scribe, trigger
        self._rx.clear()
        log_mod.configure(new.log.format, new.log.level)
        if self._scheduler is not None:
            self._scheduler.reschedule_job("promote", trigger=trigger)
        if (new.daemon.workers, new.daemon.queue_max) != (old_cfg.daemon.workers, old_cfg.daemon.queue_max):
            self.log.warning(
                "reload_partial", reason="daemon.workers and daemon.queue_max apply after a restart"
            )
        n = self.restart_observers()
        self.log.info(
            "reload",
            config=str(path) if path else None,
            sources=len(new.sources),
            watch=self.watch_mode,
            catch_up=n,
        )
        return True

    def shutdown(self, code: int = 0) -> None:
        """Stop taking work, give in-flight work ``shutdown_grace`` seconds, stop everything else."""
        self.notify("STOPPING=1")
        self._stopping.set()
        self.queue.wake(len(self._workers))
        self.timers.stop()
        if self._scheduler is not None:
            with contextlib.suppress(Exception):
                self._scheduler.shutdown(wait=False)
            self._scheduler = None
        self.stop_observers()
        deadline = time.monotonic() + self.cfg.daemon.shutdown_grace
        for t in self._workers:
            t.join(max(0.0, deadline - time.monotonic()))
        abandoned = [t.name for t in self._workers if t.is_alive()]
        if abandoned:
            self.log.warning(
                "shutdown_abandoned",
                workers=abandoned,
                reason="in-flight work left unprocessed; caught up on next start",
            )
        self.write_heartbeat(stopped=True)
        if not abandoned:
            for s in [*self._retired, self.scribe]:
                s.close()
        self.log.info("stopped", code=code, abandoned=len(abandoned))
