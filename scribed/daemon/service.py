"""The long-running service behind ``scribed run``.

Filesystem events only *enqueue*: a per-file timer decides when a file has been quiet long
enough, and worker threads call the same :meth:`Scribe.process` run-once uses, under the root
lock (:mod:`scribed.daemon.work`). The daemon never writes memory files itself, so a crash at any
point leaves what run-once would: atomic files and a ledger that tells the next start what is
left (the catch-up walk). READY is sent before that walk: the walk feeds the queue in a thread.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any

from scribed import config as config_mod
from scribed import fsutil
from scribed import log as log_mod
from scribed.compress.entry import iso
from scribed.config import Config, ConfigError
from scribed.config_light import EX_CONFIG
from scribed.core.results import SourceItem
from scribed.core.scribe import Scribe, utcnow
from scribed.daemon import sdnotify
from scribed.daemon.chores import Chores
from scribed.daemon.deaths import Dead, Deaths
from scribed.daemon.instance import claim_instance
from scribed.daemon.schedule import promotion_trigger
from scribed.daemon.watch import Watcher
from scribed.daemon.work import Dispatcher
from scribed.fsutil import atomic_write
from scribed.progress import EVERY_SECONDS
from scribed.tiers import access
from scribed.tiers.cold import Layout

HEARTBEAT_SECONDS = 10.0
MAIN_TICK = 5.0  # signals wake the main loop at once (set_wakeup_fd); the tick is for housekeeping
MISSING_CHECK_SECONDS = 10.0
INBOX_CHECK_SECONDS = 5.0
COPY_RETRY_SECONDS = 300.0  # transcript copies a failed archive folder owes: tried again this often


def heartbeat_path(layout: Layout) -> Path:
    return layout.state / "heartbeat"


class Daemon(Chores):
    """Watch, time, queue and work: one :class:`Scribe` core, driven by events instead of a loop."""

    def __init__(
        self,
        cfg: Config,
        *,
        clock: Callable[[], datetime] = utcnow,
        scheduler_factory: Callable[[], Any] | None = None,
        notify: Callable[[str], bool] = sdnotify.notify,
        root_override: str | None = None,
    ) -> None:
        self.cfg = cfg
        self.root_override = root_override  # `scribed run --root`: a reload keeps it
        self.clock = clock
        self.notify = notify
        self.log = log_mod.get()
        self.trigger = promotion_trigger(cfg)
        self._stopping = threading.Event()
        self.dispatch = Dispatcher(Scribe(cfg, clock=clock), clock, self._stopping)
        self.layout = self.scribe.layout
        self.watcher = Watcher(
            cfg,
            self.layout,
            self.dispatch.on_path_event,
            self.dispatch.is_source,
            self.dispatch.known_files,
            on_drop=self._poke,
        )
        self.deaths = Deaths(self.log)
        self._retired: list[Scribe] = []
        self._scheduler_factory = scheduler_factory or self._default_scheduler
        self._scheduler: Any = None
        self._startup: threading.Thread | None = None
        self._startup_error: Exception | None = None
        self._signals: list[int] = []
        self._wake_r = self._wake_w = -1
        self.started_at = ""
        self._copies_due = 0.0  # the first tick tries the copies an earlier run still owes

    @property
    def scribe(self) -> Scribe:
        return self.dispatch.scribe

    def resolve(self, path: Path) -> SourceItem | None:
        return self.dispatch.resolve(path)

    def on_path_event(self, raw: str) -> bool:
        return self.dispatch.on_path_event(raw)

    def _default_scheduler(self) -> Any:
        from apscheduler.schedulers.background import BackgroundScheduler

        return BackgroundScheduler(timezone=self.cfg.promote.timezone, daemon=True)

    def restart_observers(self) -> int:
        """New watches for the current sources, then a catch-up for whatever changed in between."""
        self.watcher.stop()
        self.watcher.start()
        return self.dispatch.catch_up()

    def dead_threads(self) -> Dead:
        """Threads that should be alive and are not, by name (the start-up walk's too, when an
        exception ended it). A vanished watch folder is not fatal."""
        dead = self.dispatch.dead() + self.watcher.dead()
        t = self._startup
        if t is not None and not t.is_alive() and self.deaths.failed(t):
            dead.append((t.name, t))
        return dead

    # --- lifecycle --------------------------------------------------------------------------
    def status_line(self) -> str:
        last = self.dispatch.last_result
        tail = f"; last: {last['status']} {last['file']}" if last else ""
        return f"queue {self.dispatch.queue.depth}, in flight {self.dispatch.in_flight}, timers {len(self.dispatch.timers)}{tail}"

    def write_heartbeat(self, *, stopped: bool = False) -> None:
        """{state}/heartbeat: what ``scribed healthcheck`` and ``status`` read (no socket needed)."""
        w = self.dispatch
        data = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "time": iso(utcnow()),
            "unix": time.time(),
            "interval": HEARTBEAT_SECONDS,
            "started_at": self.started_at,
            "stopped": stopped,
            "queue": w.queue.depth,
            "pending": w.queue.depth,  # the same figure, under the name older `status` readers use
            "in_flight": w.in_flight,
            "timers": len(w.timers),
            "watch": self.watcher.mode,
            "last_result": w.last_result,
            "catch_up": w.catchup.public() if w.catchup is not None and not w.catchup.finished else None,
        }
        try:
            atomic_write(heartbeat_path(self.layout), json.dumps(data) + "\n")
        except OSError as exc:
            self.log.warning("heartbeat_failed", reason=str(exc.strerror or exc))

    def start(self) -> None:
        """Workers, timers and the scheduler, then READY; the watches and the catch-up walk follow
        in a thread (nothing is missed: the watches start before the walk, the walk feeds the queue)."""
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
        self.dispatch.timers.start()
        self.dispatch.start_workers(self.cfg.daemon.workers)
        self.write_heartbeat()
        self.notify("READY=1")  # before the scheduler and the walk, whose threads would compete for the GIL
        ready_ms = int((time.monotonic() - t0) * 1000)
        self.start_scheduler()
        self._startup = threading.Thread(target=self._watch_and_catch_up, name="scribed-startup", daemon=True)
        self._startup.start()
        self.notify(f"STATUS={self.status_line()}")
        nxt = self.next_promotion()
        self.log.info(
            "ready", watch=self.cfg.watch.mode, next_promotion=nxt.isoformat() if nxt else None, ms=ready_ms
        )

    def _watch_and_catch_up(self) -> None:
        t0 = time.monotonic()
        try:
            self.watcher.start()
            n = self.dispatch.catch_up()
        except Exception as exc:  # a startup thread dead in silence leaves a daemon doing nothing
            self._startup_error = exc
            self._poke()
            return
        self.log.info("caught_up", queued=n, watch=self.watcher.mode, ms=int((time.monotonic() - t0) * 1000))

    def wait_started(self, timeout: float | None = None) -> None:
        """Until the watches run and the catch-up walk has queued its files (tests, embedding)."""
        if self._startup is not None:
            self._startup.join(timeout)

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

        A second daemon on the same root raises :class:`AlreadyRunningError` before touching anything;
        a start its user may not write for (a file of the root another user made since the checks)
        raises :class:`ConfigError` naming the file and the user: a restart would fail the same way.
        """
        try:
            instance = claim_instance(self.layout)
        except OSError as exc:
            why = access.refusal(exc)
            if why is None:
                raise
            raise ConfigError(why) from exc
        old = self._install_signals()
        self.deaths.install()
        code = 1
        try:
            try:
                self.start()
            except OSError as exc:
                why = access.refusal(exc)
                if why is not None:
                    code = EX_CONFIG
                    raise ConfigError(why) from exc
                self.log.error(
                    "start_failed", reason=str(exc.strerror or exc), file=getattr(exc, "filename", None)
                )
                return 1
            code = self._loop()
            return code
        finally:
            self.shutdown(code)
            self.deaths.uninstall()
            self._restore_signals(old)
            os.close(instance)

    def _stop_signal(self, sigs: list[int]) -> bool:
        for sig in (signal.SIGTERM, signal.SIGINT):
            if sig in sigs:
                self.log.info("stopping", signal=signal.Signals(sig).name)
                return True
        return False

    def _loop(self) -> int:
        wd_interval = sdnotify.watchdog_interval()
        hb_due = wd_due = inbox_due = 0.0
        missing_due = time.monotonic() + MISSING_CHECK_SECONDS
        while True:
            self._wait(min(MAIN_TICK, wd_interval or MAIN_TICK))
            sigs, self._signals = self._signals, []
            if self._stop_signal(sigs):
                return 0
            if self._startup_failed():
                return 1
            try:
                if signal.SIGHUP in sigs:
                    self.reload()
                missing_due, inbox_due = self._housekeeping(missing_due, inbox_due)
            except OSError as exc:
                self.log.error(
                    "observer_failed", reason=str(exc.strerror or exc), file=getattr(exc, "filename", None)
                )
                return 1
            dead = self.dead_threads()
            if dead:
                self.log.error(
                    "thread_died",
                    threads=[name for name, _ in dead],
                    error=self.deaths.describe(dead),
                    reason="exiting so the supervisor restarts the service",
                )
                return 1
            self.dispatch.tick(EVERY_SECONDS - MAIN_TICK)  # a catch-up logs its progress every 5-10 s
            mono = time.monotonic()
            if wd_interval is not None and mono >= wd_due:
                self.notify("WATCHDOG=1")
                wd_due = mono + wd_interval
            if mono >= hb_due:
                self.write_heartbeat()
                self.notify(f"STATUS={self.status_line()}")
                hb_due = mono + HEARTBEAT_SECONDS

    def _startup_failed(self) -> bool:
        """The watch-and-catch-up thread died of a bug (not an OSError: the observer's, said below):
        logged with its reason and where, and the daemon exits 1, as for a dead worker, so the
        supervisor restarts it, rather than stay up, healthy to ``healthcheck``, doing nothing."""
        exc = self._startup_error
        if exc is None or isinstance(exc, OSError):
            return False
        where = traceback.extract_tb(exc.__traceback__)[-1:]
        self.log.error(
            "startup_failed",
            reason=fsutil.shown(f"{type(exc).__name__}: {exc}"),
            at=f"{where[0].filename}:{where[0].lineno}" if where else None,
            action="exiting so the supervisor restarts the service; nothing was watched or caught up",
        )
        return True

    def _housekeeping(self, missing_due: float, inbox_due: float) -> tuple[float, float]:
        """Startup errors, watch restarts, the inbox, expired own-write marks and owed transcript
        copies; the next due times."""
        if self._startup_error is not None:
            raise self._startup_error
        mono = time.monotonic()
        starting = self._startup is not None and self._startup.is_alive()
        if not starting and self.watcher.should_restart():  # a stat per missing folder: every tick
            self.watcher.restart_needed = False
            n = self.restart_observers()
            self.log.info(
                "watch_restarted",
                reason="a watched folder appeared, vanished or was replaced, or a source links to a file "
                "no watch sees",
                catch_up=n,
            )
        if mono >= inbox_due:
            inbox_due = mono + INBOX_CHECK_SECONDS
            self.apply_inbox_if_any()
        if mono >= missing_due:
            missing_due = mono + MISSING_CHECK_SECONDS
            self.dispatch.expire_own()
        if mono >= self._copies_due:
            self._copies_due = mono + COPY_RETRY_SECONDS
            self.retry_copies_if_owed()
        return missing_due, inbox_due

    def reload(self) -> bool:
        """SIGHUP: re-read the same config file; a bad one keeps the running config and says why."""
        path = self.cfg.path
        try:
            new = config_mod.load(str(path) if path else None)
            if self.root_override:
                new.root = self.root_override
            if new.root_path != self.cfg.root_path:
                raise ConfigError(
                    f"root cannot change on reload (was {self.cfg.root_path}); restart the service"
                )
            from scribed.cli.checks import problems  # the validation `run` started with

            fatal = [
                p.message for p in problems(new, from_flag=False, init=False, daemon="refuse") if p.fatal
            ]
            if fatal:
                raise ConfigError("; ".join(fatal))
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
        self.cfg, self.trigger = new, trigger
        self.dispatch.scribe = scribe
        self.watcher.cfg = new
        log_mod.configure(new.log.format, new.log.level)
        if self._scheduler is not None:
            self._reschedule(trigger)
        if (new.daemon.workers, new.daemon.queue_max) != (old_cfg.daemon.workers, old_cfg.daemon.queue_max):
            self.log.warning(
                "reload_partial", reason="daemon.workers and daemon.queue_max apply after a restart"
            )
        self.wait_started()
        n = self.restart_observers()
        self.log.info(
            "reload",
            config=str(path) if path else None,
            sources=len(new.sources),
            watch=self.watcher.mode,
            catch_up=n,
        )
        return True

    def shutdown(self, code: int = 0) -> None:
        """Stop taking work, give in-flight work ``shutdown_grace`` seconds, stop everything else."""
        self.notify("STOPPING=1")
        self._stopping.set()
        self.dispatch.timers.stop()
        if self._scheduler is not None:
            with contextlib.suppress(Exception):
                self._scheduler.shutdown(wait=False)
            self._scheduler = None
        self.wait_started(self.cfg.daemon.shutdown_grace)
        self.watcher.stop()
        abandoned = self.dispatch.join(self.cfg.daemon.shutdown_grace)
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
