"""The daemon: timers, queue, event filters and promotion with an injected clock; real watchdog
observers on tmp folders; then the real ``scribed run`` in a subprocess (systemd notify, signals,
healthcheck, catch-up after a restart). Waits poll with generous deadlines, so passing is fast.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli, run_json
from watchdog.events import DirCreatedEvent, FileClosedEvent, FileCreatedEvent, FileMovedEvent

from scribed import config
from scribed.cli.daemon import collect_status
from scribed.compress.entry import split_entries
from scribed.config import ConfigError
from scribed.daemon import sdnotify
from scribed.daemon.schedule import previous_fire
from scribed.daemon.service import Daemon
from scribed.daemon.timers import Timers
from scribed.daemon.watch import EventHandler
from scribed.daemon.workqueue import WorkQueue

DEADLINE = 30.0


# --- helpers ----------------------------------------------------------------------------------
class FakeClock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class FakeScheduler:
    def __init__(self) -> None:
        self.jobs: list[tuple[Callable[[], Any], dict[str, Any]]] = []
        self.started = False

    def add_job(self, func: Callable[[], Any], **kw: Any) -> None:
        self.jobs.append((func, kw))

    def start(self) -> None:
        self.started = True

    def shutdown(self, wait: bool = True) -> None:
        self.started = False

    def reschedule_job(self, job_id: str, trigger: Any) -> None:
        pass

    def get_job(self, job_id: str) -> Any:
        return next((kw for _, kw in self.jobs if kw.get("id") == job_id), None)

    def remove_job(self, job_id: str) -> None:
        self.jobs = [(f, kw) for f, kw in self.jobs if kw.get("id") != job_id]


def wait_for(pred: Callable[[], Any], timeout: float = DEADLINE, what: str = "condition") -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def write_config(
    path: Path, root: Path, source: Path, *, mode: str = "auto", quiet: float = 2, extra: str = ""
) -> Path:
    path.write_text(
        f'root = "{root}"\n[session]\nquiet_seconds = {quiet}\n[compress]\nbackend = "extractive"\n'
        f'[watch]\nmode = "{mode}"\npoll_interval = 0.3\n[daemon]\nshutdown_grace = 5\n{extra}'
        f'[[sources]]\nkind = "codex"\npath = "{source}"\nagent = "worf"\n'
        'workspace = "*"\n'  # codex_records' sessions record cwd /r, or none: every one is taken
    )
    return path


def codex_records(session: str, start: datetime, texts: list[tuple[str, str]], *, meta: bool = True) -> str:
    """Codex rollout JSONL: session_meta, then user input_text / assistant output_text messages."""
    recs: list[dict[str, Any]] = []
    t = start
    if meta:
        recs.append(
            {
                "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "type": "session_meta",
                "payload": {"id": session, "cwd": "/r"},
            }
        )
    for role, text in texts:
        t += timedelta(seconds=30)
        kind = "input_text" if role == "user" else "output_text"
        recs.append(
            {
                "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "type": "response_item",
                "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
            }
        )
    return "".join(json.dumps(r) + "\n" for r in recs)


def write_rollouts(folder: Path, n: int) -> None:
    """``n`` small Codex rollouts of one decision each (``rollout-0000.jsonl`` …), for load tests."""
    for i in range(n):
        (folder / f"rollout-{i:04d}.jsonl").write_text(
            codex_records(
                f"s{i}",
                datetime(2026, 11, 20, 10, tzinfo=UTC),
                [("user", f"task {i}"), ("assistant", f"Decision: use lib_{i} in src/m{i}.py.")],
            )
        )


FIRST = [
    ("user", "The writers race on the shared state file; please make the writes safe."),
    ("assistant", "Decision: use an exclusive flock in src/lockfile.py around every write."),
    ("assistant", "Done: the race is gone and tests/test_lock.py passes."),
]
SECOND = [
    ("user", "Now the cache grows without bound, cap it."),
    ("assistant", "Decision: switch the cache to an LRU of 512 entries in src/cache.py."),
    ("assistant", "Open item: measure the hit rate of src/cache.py under load."),
]


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="sd-", dir="/tmp"))  # AF_UNIX paths must stay short
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def squad(tmp_path: Path) -> tuple[Path, Path]:
    root, src = tmp_path / "root", tmp_path / "sessions"
    root.mkdir()
    src.mkdir()
    return root, src


def make_daemon(tmp_path: Path, squad: tuple[Path, Path], clock: FakeClock, **kw: Any) -> Daemon:
    root, src = squad
    cfg = config.load(str(write_config(tmp_path / "c.toml", root, src, **kw)))
    return Daemon(cfg, clock=clock, scheduler_factory=FakeScheduler, notify=lambda _msg: False)


# --- systemd notify ---------------------------------------------------------------------------
def test_sdnotify_path_and_abstract_sockets(sock_dir: Path) -> None:
    path = str(sock_dir / "n.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind(path)
        assert sdnotify.notify("READY=1", {"NOTIFY_SOCKET": path})
        assert s.recv(256) == b"READY=1"
    name = f"scribed-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind("\0" + name)
        assert sdnotify.notify("STOPPING=1", {"NOTIFY_SOCKET": "@" + name})
        assert s.recv(256) == b"STOPPING=1"
    assert not sdnotify.notify("READY=1", {})
    assert not sdnotify.notify("READY=1", {"NOTIFY_SOCKET": str(sock_dir / "absent.sock")})
    assert sdnotify.watchdog_interval({"WATCHDOG_USEC": "60000000"}) == 30.0
    assert sdnotify.watchdog_interval({"WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "1"}) is None
    assert sdnotify.watchdog_interval({}) is None


# --- timers and the work queue ----------------------------------------------------------------
def test_timer_rearm_and_fire() -> None:
    fired: list[str] = []
    now = [1000.0]
    t = Timers(lambda: now[0], fired.append)
    t.arm("a", 1010)
    t.arm("a", 1020)  # a second event pushes the deadline out
    t.arm("b", 1015)
    assert t.pop_due(1012) == []
    assert t.pop_due(1016) == ["b"]
    assert t.pop_due(1019) == []
    assert t.pop_due(1020) == ["a"]
    assert t.pop_due(5000) == [] and len(t) == 0
    t.arm("c", 1030)
    t.arm("c", 1025, later_only=True)  # "not finished yet" must not shorten an event's deadline
    assert t.deadline("c") == 1030
    for i in range(10_000):  # re-arming one file forever keeps the heap small
        t.arm("c", 2000 + i)
    assert t.heap_size() < 200 and len(t) == 1
    # the thread fires once the (injected) clock passes the deadline
    t.start()
    try:
        now[0] = 20_000.0
        t.wakeup()
        wait_for(lambda: fired == ["c"], 5, "timer thread")
    finally:
        t.stop()


def test_event_rearms_quiet_timer(tmp_path: Path, squad: tuple[Path, Path]) -> None:
    clock = FakeClock(datetime.now(UTC))
    d = make_daemon(tmp_path, squad, clock, quiet=60)
    try:
        f = squad[1] / "2026" / "rollout-a.jsonl"
        f.parent.mkdir()
        f.write_text(codex_records("a", datetime(2026, 11, 20, 10, tzinfo=UTC), FIRST))
        t0 = clock().timestamp()
        assert d.on_path_event(str(f))
        assert d.dispatch.timers.deadline(str(f)) == pytest.approx(t0 + 60)
        # the live-hot refresh is throttled (kept), not debounced (pushed back) by later events
        assert d.dispatch.timers.deadline(str(f), "live") == pytest.approx(t0 + 10)
        clock.advance(45)
        assert d.on_path_event(str(f))
        assert d.dispatch.timers.deadline(str(f)) == pytest.approx(t0 + 105)
        assert d.dispatch.timers.deadline(str(f), "live") == pytest.approx(t0 + 10)
        assert d.dispatch.timers.pop_due() == [str(f)]  # the live refresh fires
        clock.advance(59)
        assert d.dispatch.timers.pop_due() == []
        clock.advance(2)
        assert d.dispatch.timers.pop_due() == [str(f)]
    finally:
        d.scribe.close()


def test_pending_set_dedups_a_flood() -> None:
    q = WorkQueue(maxsize=100)
    results = [q.offer(f"/s/f{i % 10}.jsonl") for i in range(10_000)]
    assert results.count("queued") == 10 and q.depth == 10
    distinct = [q.offer(f"/s/g{i}.jsonl") for i in range(10_000)]
    assert q.depth == 100 and distinct.count("queued") == 90 and q.overflows == 10_000 - 90
    taken = q.take(0.1)
    assert taken == "/s/f0.jsonl" and q.depth == 99
    assert q.offer(taken) == "queued"  # once taken it may be queued again


def test_flood_through_daemon_is_bounded(tmp_path: Path, squad: tuple[Path, Path]) -> None:
    clock = FakeClock(datetime.now(UTC))
    d = make_daemon(tmp_path, squad, clock, extra="")
    w = d.dispatch
    w.queue = WorkQueue(maxsize=50)
    try:
        for i in range(10_000):
            w.submit(f"{squad[1]}/x{i % 500}.jsonl")
        assert w.queue.depth == 50
        assert len(w.timers) == 450  # the overflow waits on one retry timer per file, not per event
        assert w.timers.heap_size() <= 2 * 450 + 64
    finally:
        d.scribe.close()


# --- the event filter -------------------------------------------------------------------------
def test_handler_ignores_temp_dot_state_and_own_writes(tmp_path: Path, squad: tuple[Path, Path]) -> None:
    src = squad[1]
    clock = FakeClock(datetime.now(UTC))
    d = make_daemon(tmp_path, squad, clock, quiet=60)
    try:
        day = src / "2026" / "11"
        day.mkdir(parents=True)
        good = day / "rollout-x.jsonl"
        good.write_text(codex_records("x", datetime(2026, 11, 20, 10, tzinfo=UTC), FIRST))
        ignored = [
            day / ".rollout-y.jsonl",
            day / "rollout-y.jsonl.tmp",
            day / "rollout-y.jsonl~",
            day / ".rollout-y.jsonl.swp",
            day / "rollout-y.jsonl.part",
            day / ".scribed-tmp-abc",
            day / "notes.txt",
            src / ".hidden" / "rollout-z.jsonl",
            d.layout.state / "heartbeat",
            tmp_path / "elsewhere.jsonl",
        ]
        for p in ignored:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(good.read_text())
        h = EventHandler(d.on_path_event)
        for p in ignored:
            h.on_any_event(FileCreatedEvent(str(p)))
        h.on_any_event(DirCreatedEvent(str(day)))
        assert len(d.dispatch.timers) == 0
        h.on_any_event(FileMovedEvent(str(day / ".tmp123"), str(good)))  # atomic rename: dest counts
        assert d.dispatch.timers.deadline(str(good)) is not None

        # A handler that meets a bug logs it and lives on.
        EventHandler(lambda raw: 1 / 0).on_any_event(FileClosedEvent(str(good)))

        # Scribed's own writes: a compacted hot file is reset by scribed; that echo is not new work.
        d2 = make_daemon(tmp_path, squad, FakeClock(datetime.now(UTC) + timedelta(hours=1)), quiet=60)
        hot = d2.layout.hot / "data.md"
        hot.parent.mkdir(parents=True, exist_ok=True)
        hot.write_text(
            "# Hot memory: data\n\nCurrent task: fix the flaky login test in src/auth/login.py\n"
            "Active decisions: retry the token fetch twice before failing\n"
        )
        out = d2.dispatch.work(str(hot))
        assert out is not None and out.status == "compacted", out
        assert "scribed-live: seed:hot:" in hot.read_text()  # re-seeded by scribed from the entry
        assert not d2.on_path_event(str(hot))
        # ...and an already-compacted, unchanged source is no news either.
        assert d2.dispatch.work(str(good)) is not None
        assert not d2.on_path_event(str(good))
        with good.open("a") as fh:  # the agent goes on: that is news
            fh.write(codex_records("x", datetime(2026, 11, 20, 11, tzinfo=UTC), SECOND, meta=False))
        assert d2.on_path_event(str(good))
        d2.scribe.close()
    finally:
        d.scribe.close()


# --- promotion schedule -----------------------------------------------------------------------
def test_next_promotion_and_overdue_on_start(tmp_path: Path, squad: tuple[Path, Path]) -> None:
    clock = FakeClock(datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
    d = make_daemon(tmp_path, squad, clock)
    try:
        assert d.next_promotion() == datetime(2026, 11, 21, 3, 0, tzinfo=UTC)
        assert previous_fire(d.trigger, clock()) == datetime(2026, 11, 20, 3, 0, tzinfo=UTC)
        # never promoted: overdue, so the job's first run is now
        assert d.promotion_overdue()
        d.start_scheduler()
        sched = d._scheduler
        assert isinstance(sched, FakeScheduler) and sched.started
        _, kw = sched.jobs[0]
        assert kw["next_run_time"] == clock() and kw["coalesce"] and kw["max_instances"] == 1
        assert kw["misfire_grace_time"] >= 3600
        assert d.promote()
        assert d.scribe.ledger.get_meta("last_promotion_at") == "2026-11-20T10:00:00Z"
        # promoted after the last 03:00: not overdue, the job waits for its schedule
        d.start_scheduler()
        assert "next_run_time" not in d._scheduler.jobs[0][1]
        # a laptop asleep across 03:00 of the next day: overdue again
        clock.advance(24 * 3600)
        assert d.promotion_overdue()
    finally:
        d.scribe.close()

    clock = FakeClock(datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
    d = make_daemon(
        tmp_path, squad, clock, extra='[promote]\nschedule = "30 2 * * 1"\ntimezone = "Europe/Paris"\n'
    )
    try:  # Mondays 02:30 Paris = 01:30 UTC in November; 2026-11-20 is a Friday
        assert d.next_promotion() == datetime(2026, 11, 23, 1, 30, tzinfo=UTC)
    finally:
        d.scribe.close()
    for extra in ('[promote]\nschedule = "61 3 * * *"\n', '[promote]\ntimezone = "Mars/Olympus"\n'):
        with pytest.raises(ConfigError, match="promote"):
            make_daemon(tmp_path, squad, clock, extra=extra)


def test_promotion_off_schedules_nothing_and_a_reload_turns_it_on_and_off(
    tmp_path: Path, squad: tuple[Path, Path]
) -> None:
    """``[promote] schedule = "off"`` (a team's CI job promotes): the daemon, on the real
    APScheduler, has no promotion job and is never overdue; SIGHUP's reload adds and removes it."""
    from apscheduler.schedulers.background import BackgroundScheduler

    root, src = squad
    (root / ".squad").mkdir()  # a reload runs the checks `run` runs: a root needs its .squad/
    path = write_config(tmp_path / "c.toml", root, src, extra='[promote]\nschedule = "off"\n')
    clock = FakeClock(datetime(2026, 11, 20, 10, 0, tzinfo=UTC))
    d = Daemon(
        config.load(str(path)), clock=clock, scheduler_factory=BackgroundScheduler, notify=lambda _m: False
    )
    try:
        assert d.trigger is None and d.next_promotion() is None and not d.promotion_overdue()
        d.start_scheduler()
        assert d._scheduler.get_jobs() == []
        write_config(path, root, src, extra='[promote]\nschedule = "0 3 * * *"\n')
        assert d.reload()
        assert d._scheduler.get_job("promote") is not None
        write_config(path, root, src, extra='[promote]\nschedule = "OFF"\n')
        assert d.reload()
        assert d._scheduler.get_job("promote") is None
        assert collect_status(d.cfg)["next_promotion"] is None
    finally:
        d._scheduler.shutdown(wait=False)
        d.scribe.close()


def test_a_reload_keeps_the_root_given_with_run_root(tmp_path: Path, squad: tuple[Path, Path]) -> None:
    """``scribed run --root R`` with a config naming another root: SIGHUP's reload re-reads the
    file and keeps R (it refused every reload before: "root cannot change")."""
    root, src = squad
    (root / ".squad").mkdir()
    path = write_config(tmp_path / "c.toml", tmp_path / "elsewhere", src)
    cfg = config.load(str(path))
    cfg.root = str(root)
    d = Daemon(cfg, scheduler_factory=FakeScheduler, notify=lambda _m: False, root_override=str(root))
    try:
        assert d.reload()
        assert d.cfg.root_path == root
    finally:
        d.scribe.close()


# --- real observers ---------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["inotify", "polling"])
def test_real_observer_sees_file_in_new_subfolder(
    tmp_path: Path, squad: tuple[Path, Path], mode: str
) -> None:
    clock = FakeClock(datetime.now(UTC))
    d = make_daemon(tmp_path, squad, clock, mode=mode, quiet=60)
    try:
        d.watcher.start()
        assert d.watcher.mode == mode
        sub = squad[1] / "2026" / "11" / "20"
        sub.mkdir(parents=True)  # a folder created after start-up
        f = sub / "rollout-new.jsonl"
        f.write_text(codex_records("n", datetime(2026, 11, 20, 10, tzinfo=UTC), FIRST))
        wait_for(lambda: d.dispatch.timers.deadline(str(f)) is not None, 10, f"{mode} event")
        (sub / ".swap.tmp").write_text("x")
        time.sleep(0.5)
        assert (
            len(d.dispatch.timers) == 2
        )  # the file's quiet timer and its live-hot refresh; not the swap file
        assert not d.dead_threads()
    finally:
        d.watcher.stop()
        d.scribe.close()


def test_auto_mode_falls_back_to_polling(tmp_path: Path, squad: tuple[Path, Path]) -> None:
    class NoWatches:
        def schedule(self, *a: Any, **kw: Any) -> None:
            pass

        def start(self) -> None:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

        def stop(self) -> None:
            pass

    d = make_daemon(tmp_path, squad, FakeClock(datetime.now(UTC)), mode="auto")
    d.watcher.native_observer = NoWatches  # type: ignore[assignment,method-assign]
    try:
        d.watcher.start()
        assert d.watcher.mode == "polling"
    finally:
        d.watcher.stop()
        d.scribe.close()


def _run_in_thread(d: Daemon, result: list[int]) -> threading.Thread:
    t = threading.Thread(target=lambda: result.append(d.run()))  # not the main thread: no signal handlers
    t.start()
    return t


@pytest.mark.parametrize("kill_a_thread", [True, False])
def test_run_loop_exit_codes(tmp_path: Path, squad: tuple[Path, Path], kill_a_thread: bool) -> None:
    """A dead worker ends run() with 1 (the supervisor restarts us); a stop request with 0."""
    root, src = squad
    sent: list[str] = []

    def notify(msg: str) -> bool:
        sent.append(msg)
        return True

    cfg = config.load(str(write_config(tmp_path / "c.toml", root, src, quiet=60)))
    d = Daemon(cfg, scheduler_factory=FakeScheduler, notify=notify)
    result: list[int] = []
    t = _run_in_thread(d, result)
    try:
        wait_for(lambda: "READY=1" in sent, 10, "READY=1")
        assert (root / ".squad/memory/.scribed/heartbeat").exists()
        if kill_a_thread:
            dead = threading.Thread(target=lambda: None, name="scribed-worker-x")
            dead.start()
            dead.join()
            d.dispatch.workers.append(dead)
        else:
            d.request_stop()
        t.join(15)
        assert result == [1 if kill_a_thread else 0]
    finally:
        if t.is_alive():
            d.request_stop()
            t.join(15)
    hb = json.loads((root / ".squad/memory/.scribed/heartbeat").read_text())
    assert hb["stopped"] is True and hb["pid"] == os.getpid()
    assert "STOPPING=1" in sent


# --- the real service in a subprocess -----------------------------------------------------------
def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SCRIBED_", "NOTIFY_SOCKET", "WATCHDOG_"))
    }
    env.update(extra)
    return env


class Notifications:
    """A systemd-style notify socket: a thread drains it (a full datagram queue would block senders)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.messages: list[str] = []
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(path)
        self._sock.settimeout(0.2)
        self._stop = False
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stop:
            try:
                self.messages.extend(self._sock.recv(4096).decode().split("\n"))
            except TimeoutError:
                continue

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        self._sock.close()

    def wait_ready(self, proc: subprocess.Popen[bytes], log: Path) -> float:
        """Seconds until a new READY=1 (the daemon must not have exited)."""
        t0, seen = time.monotonic(), self.messages.count("READY=1")
        while time.monotonic() - t0 < DEADLINE:
            if self.messages.count("READY=1") > seen:
                return time.monotonic() - t0
            if proc.poll() is not None:
                raise AssertionError(f"daemon exited {proc.returncode}: {log.read_text()}")
            time.sleep(0.02)
        raise AssertionError(f"no READY=1: {log.read_text()}")


def start_service(
    cfg: Path, log: Path, notify_path: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "scribed", "--config", str(cfg), "--init", "run"],
        env=_env({"NOTIFY_SOCKET": notify_path, **(env or {})}),
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
    )


def cold_entries(root: Path) -> list[str]:
    p = root / ".squad/memory/cold/worf.md"
    return [e.text for e in split_entries(p.read_text())[1]] if p.exists() else []


def log_events(log: Path) -> list[str]:
    """The ``event`` names of the daemon's JSON log lines."""
    out = []
    for line in log.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError, AttributeError):
            out.append(json.loads(line).get("event"))
    return out


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> tuple[int, float]:
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return code, time.monotonic() - t0


@pytest.fixture
def notifier(sock_dir: Path) -> Iterator[Notifications]:
    n = Notifications(str(sock_dir / "notify.sock"))
    yield n
    n.close()


def check_status_of_running(cfg: Path) -> None:
    code, status, err = run_json("--config", str(cfg), "status")
    assert code == 0, err
    assert status["daemon"]["alive"] and status["next_promotion"]
    assert status["sources"]["done"] == 1 and status["last_compaction"]
    assert status["last_promotion"]  # overdue on first start: ran at once
    assert status["tiers"]["agents"][0]["agent"] == "worf"


def check_reloads(proc: subprocess.Popen[bytes], cfg: Path, log: Path, root: Path) -> None:
    """SIGHUP with a broken config keeps the daemon (and its config) running; a good one reloads."""
    good_cfg = cfg.read_text()
    cfg.write_text("root = [broken\n")
    proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "reload_failed" in log_events(log), what="reload_failed")
    assert proc.poll() is None
    hb = root / ".squad/memory/.scribed/heartbeat"
    beat = json.loads(hb.read_text())["unix"]
    wait_for(lambda: json.loads(hb.read_text())["unix"] > beat, what="heartbeat after a bad reload")
    # valid TOML and values, but not a config `run` would start with (issue 33: the one validation)
    cfg.write_text(good_cfg + '\n[llm]\nbase_url = "localhost:11434"\nmodel = "m"\n')
    proc.send_signal(signal.SIGHUP)
    wait_for(lambda: log_events(log).count("reload_failed") == 2, what="a second reload_failed")
    assert proc.poll() is None
    cfg.write_text(good_cfg)
    proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "reload" in log_events(log), what="reload")
    assert run_cli("--config", str(cfg), "healthcheck").returncode == 0


def check_catch_up_after_restart(
    cfg: Path, log: Path, notifier: Notifications, root: Path, src: Path
) -> float:
    """Written while the daemon was down: compacted after the restart (catch-up). Returns seconds."""
    later = src / "2026" / "11" / "21"
    later.mkdir(parents=True)
    facts = [
        ("user", "Ship it."),
        ("assistant", "Decision: tag v1.4.0 from the release branch in docs/RELEASE.md."),
    ]
    (later / "rollout-2026-11-21T09-00-00-bbbb.jsonl").write_text(
        codex_records("sess-b", datetime(2026, 11, 21, 9, tzinfo=UTC), facts)
    )
    t0 = time.monotonic()
    proc = start_service(cfg, log, notifier.path)
    try:
        notifier.wait_ready(proc, log)
        wait_for(lambda: any("docs/RELEASE.md" in e for e in cold_entries(root)), what="catch-up compaction")
        took = time.monotonic() - t0
        assert len(cold_entries(root)) == 3
        code, _ = stop(proc, signal.SIGINT)
        assert code == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return took


@pytest.mark.slow  # a real-client tier: `python -m pytest -m slow`, run by CI
def test_service_end_to_end(tmp_path: Path, squad: tuple[Path, Path], notifier: Notifications) -> None:
    root, src = squad
    cfg = write_config(tmp_path / "c.toml", root, src, mode="auto", quiet=2)
    log = tmp_path / "daemon.log"
    timings: dict[str, float] = {}
    proc = start_service(cfg, log, notifier.path, {"WATCHDOG_USEC": "1000000"})
    try:
        timings["ready"] = notifier.wait_ready(proc, log)
        hc = run_cli("--config", str(cfg), "healthcheck")
        assert hc.returncode == 0, hc.stderr

        # A transcript in a folder created after start-up is compacted after its quiet time.
        sub = src / "2026" / "11" / "20"
        sub.mkdir(parents=True)
        f = sub / "rollout-2026-11-20T10-00-00-aaaa.jsonl"
        t0 = time.monotonic()
        f.write_text(codex_records("sess-a", datetime(2026, 11, 20, 10, tzinfo=UTC), FIRST))
        entries = wait_for(lambda: cold_entries(root), what="first compaction")
        timings["compact"] = time.monotonic() - t0
        assert len(entries) == 1 and "src/lockfile.py" in entries[0]

        # Appending yields exactly one more entry holding the new facts.
        t0 = time.monotonic()
        with f.open("a") as fh:
            fh.write(codex_records("sess-a", datetime(2026, 11, 20, 11, tzinfo=UTC), SECOND, meta=False))
        wait_for(lambda: len(cold_entries(root)) >= 2, what="second entry")
        timings["append"] = time.monotonic() - t0
        time.sleep(2.5)  # a further quiet period must not add a duplicate
        entries = cold_entries(root)
        assert len(entries) == 2, entries
        assert "src/cache.py" in entries[1] and "src/cache.py" not in entries[0]
        assert "src/lockfile.py" not in entries[1]

        check_status_of_running(cfg)

        check_reloads(proc, cfg, log, root)

        code, timings["stop"] = stop(proc)
        assert code == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    wait_for(lambda: "STOPPING=1" in notifier.messages, 5, "STOPPING=1")
    assert "WATCHDOG=1" in notifier.messages
    assert any(m.startswith("STATUS=queue ") for m in notifier.messages)
    hc = run_cli("--config", str(cfg), "healthcheck")
    assert hc.returncode == 1 and b"stopped" in hc.stderr

    timings["catch_up"] = check_catch_up_after_restart(cfg, log, notifier, root, src)
    events = log_events(log)
    for ev in ("started", "ready", "stopping", "stopped", "compacted"):
        assert ev in events, ev
    assert "Traceback" not in log.read_text()
    print("timings (s):", {k: round(v, 2) for k, v in timings.items()})


def test_service_polling_mode(tmp_path: Path, squad: tuple[Path, Path], notifier: Notifications) -> None:
    root, src = squad
    cfg = write_config(tmp_path / "c.toml", root, src, mode="polling", quiet=2)
    log = tmp_path / "daemon.log"
    proc = start_service(cfg, log, notifier.path)
    try:
        notifier.wait_ready(proc, log)
        sub = src / "new"
        sub.mkdir()
        (sub / "rollout-p.jsonl").write_text(
            codex_records("p", datetime(2026, 11, 20, 10, tzinfo=UTC), FIRST)
        )
        wait_for(lambda: cold_entries(root), what="compaction in polling mode")
        # An agent's wiki write dropped in the inbox is applied by the running service, then removed.
        inbox = root / ".squad/memory/inbox/wiki"
        inbox.mkdir(parents=True)
        (inbox / "note.md").write_text(
            "---\ntopic: conventions\nagent: worf\ntitle: Lockfiles\n---\nAlways commit uv.lock with pyproject.toml.\n"
        )
        wiki = root / ".squad/memory/wiki/conventions.md"
        wait_for(lambda: wiki.exists() and not (inbox / "note.md").exists(), what="inbox applied")
        assert "Always commit uv.lock" in wiki.read_text() and "worf" in wiki.read_text()
        code, took = stop(proc)
        assert code == 0 and took < 10
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    ready = [line for line in log.read_text().splitlines() if '"event": "ready"' in line]
    assert ready and json.loads(ready[0])["watch"] == "polling"


def test_status_on_a_fresh_root(tmp_path: Path, squad: tuple[Path, Path]) -> None:
    root, src = squad
    cfg = write_config(tmp_path / "c.toml", root, src)
    code, data, err = run_json("--config", str(cfg), "status")
    assert code == 0, err
    assert not data["daemon"]["alive"] and data["sources"] == {
        "pending": 0,
        "done": 0,
        "failed": 0,
        "quarantined": 0,
    }
    assert data["last_compaction"] is None and data["next_promotion"]
    p = run_cli("--config", str(cfg), "status")
    assert p.returncode == 0 and b"not running" in p.stdout
    hc = run_cli("--config", str(cfg), "healthcheck")
    assert hc.returncode == 1 and b"no heartbeat" in hc.stderr
    assert not (root / ".squad").exists()  # status and healthcheck write nothing
