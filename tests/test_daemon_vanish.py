"""A watched source folder deleted and made again, or moved away and replaced (a tool resetting its
folder, a re-clone, a ``git clean``): its watch is dropped with a warning naming it, watched again
once the folder exists, and a catch-up walk takes what was written meanwhile; no thread death.
And a thread that does die says why (``thread_died`` carries the exception)."""

from __future__ import annotations

import io
import json
import shutil
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from test_daemon import (
    DEADLINE,
    FIRST,
    SECOND,
    FakeClock,
    FakeScheduler,
    Notifications,
    codex_records,
    log_events,
    make_daemon,
    sock_dir,  # noqa: F401  (fixture)
    squad,  # noqa: F401  (fixture)
    start_service,
    stop,
    wait_for,
    write_config,
)

from scribed import config, log
from scribed.daemon.service import Daemon

WHEN = datetime(2026, 11, 20, 10, tzinfo=UTC)


@pytest.fixture
def events() -> Iterator[io.StringIO]:
    """The daemon's log as JSON lines, debug included."""
    stream = io.StringIO()
    log.configure("json", "debug", stream=stream)
    yield stream
    log.configure("json", "error")


@pytest.fixture
def notifier(sock_dir: Path) -> Iterator[Notifications]:  # noqa: F811
    n = Notifications(str(sock_dir / "notify.sock"))
    yield n
    n.close()


def logged(stream: io.StringIO, event: str) -> list[dict[str, Any]]:
    out = []
    for line in stream.getvalue().splitlines():
        rec = json.loads(line)
        if rec.get("event") == event:
            out.append(rec)
    return out


def session(folder: Path, name: str, texts: list[tuple[str, str]] = FIRST) -> Path:
    f = folder / f"rollout-{name}.jsonl"
    f.write_text(codex_records(name, WHEN, texts))
    return f


def emitter_of(d: Daemon, folder: Path) -> Any:
    obs = d.watcher.observer
    return next(em for em in getattr(obs, "emitters", []) if em.watch.path == str(folder))


def rewatch(d: Daemon) -> None:
    """What the main loop does on its next tick: new watches, then the catch-up walk."""
    d._housekeeping(float("inf"), float("inf"))


@pytest.mark.parametrize("mode", ["inotify", "polling"])
def test_a_source_folder_deleted_and_made_again_is_watched_again(
    tmp_path: Path,
    squad: tuple[Path, Path],  # noqa: F811
    events: io.StringIO,
    mode: str,
) -> None:
    src = squad[1]
    d = make_daemon(tmp_path, squad, FakeClock(datetime.now(UTC)), mode=mode, quiet=60)
    try:
        d.watcher.start()
        em = emitter_of(d, src) if mode == "inotify" else None
        first = session(src, "a")
        wait_for(lambda: d.dispatch.timers.deadline(str(first)) is not None, 10, f"{mode} event")
        shutil.rmtree(src)
        if em is not None:  # watchdog ends the watch of a deleted folder: it was taken for a death
            wait_for(lambda: not em.is_alive(), 10, "the watch of the deleted folder to end")
        else:
            wait_for(lambda: d.watcher.observer.vanished, 10, "the poller to see the folder gone")  # type: ignore[union-attr]
        src.mkdir()
        back = session(src, "b", SECOND)  # written before any watch is back: the catch-up's
        assert d.dead_threads() == []
        dropped = logged(events, "watch_dropped")
        assert [r["folder"] for r in dropped] == [str(src)] and "deleted" in dropped[0]["reason"]
        assert d.watcher.should_restart()
        rewatch(d)
        assert d.dispatch.queue.offer(str(back)) == "pending"  # queued by the catch-up walk
        assert [r["folder"] for r in logged(events, "watch_rearmed")] == [str(src)]
        later = session(src, "c")  # the new watch sees the new folder
        wait_for(lambda: d.dispatch.timers.deadline(str(later)) is not None, 10, f"{mode} event after")
        assert d.dead_threads() == [] and not d.watcher.should_restart()
    finally:
        d.watcher.stop()
        d.scribe.close()


def test_a_source_folder_moved_away_and_replaced_is_watched_again(
    tmp_path: Path,
    squad: tuple[Path, Path],  # noqa: F811
    events: io.StringIO,
) -> None:
    """inotify's watch follows the folder it was set on: moved away, it went on reporting that
    folder's files under the old name, and the new folder at the path went unwatched."""
    src = squad[1]
    d = make_daemon(tmp_path, squad, FakeClock(datetime.now(UTC)), mode="inotify", quiet=60)
    try:
        d.watcher.start()
        src.rename(src.with_name("sessions.old"))
        src.mkdir()
        back = session(src, "b")
        assert d.dead_threads() == []
        dropped = logged(events, "watch_dropped")
        assert [r["folder"] for r in dropped] == [str(src)] and "replaced" in dropped[0]["reason"]
        rewatch(d)
        assert d.dispatch.queue.offer(str(back)) == "pending"
        later = session(src, "c")
        wait_for(lambda: d.dispatch.timers.deadline(str(later)) is not None, 10, "an event in the new folder")
    finally:
        d.watcher.stop()
        d.scribe.close()


def test_a_watch_that_crashes_is_a_death_that_says_why(
    tmp_path: Path,
    squad: tuple[Path, Path],  # noqa: F811
    events: io.StringIO,
) -> None:
    """A watch ended by an exception, its folder still there, is a death (not a dropped folder)."""
    src = squad[1]
    d = make_daemon(tmp_path, squad, FakeClock(datetime.now(UTC)), mode="inotify", quiet=60)
    d.deaths.install()
    try:
        d.watcher.start()
        em = emitter_of(d, src)
        real = em.queue_events

        def broken(*a: Any, **k: Any) -> None:
            real(*a, **k)
            raise RuntimeError("inotify read failed")

        em.queue_events = broken
        session(src, "a")  # wakes the blocked read: the next call raises
        wait_for(lambda: not em.is_alive(), 10, "the watch thread to die")
        dead = d.dead_threads()
        assert [name for name, _ in dead] == [f"watch {src}"]
        assert d.deaths.describe(dead) == f"watch {src}: RuntimeError: inotify read failed"
        assert logged(events, "watch_dropped") == []
        assert "Traceback" in logged(events, "thread_traceback")[0]["traceback"]
    finally:
        d.deaths.uninstall()
        d.watcher.stop()
        d.scribe.close()


def test_thread_died_carries_the_exception(
    tmp_path: Path,
    squad: tuple[Path, Path],  # noqa: F811
    events: io.StringIO,
) -> None:
    root, src = squad
    sent: list[str] = []
    cfg = config.load(str(write_config(tmp_path / "c.toml", root, src, quiet=60)))
    d = Daemon(cfg, scheduler_factory=FakeScheduler, notify=lambda m: bool(sent.append(m)) or True)
    result: list[int] = []
    t = threading.Thread(target=lambda: result.append(d.run()))
    t.start()
    try:
        wait_for(lambda: "READY=1" in sent, 10, "READY=1")
        d.wait_started(10)

        def work() -> None:
            raise ValueError("ledger row 7 has no key")

        dying = threading.Thread(target=work, name="scribed-worker-9")
        dying.start()
        dying.join()
        d.dispatch.workers.append(dying)
        d._poke()
        t.join(10)
        assert result == [1]
    finally:
        if t.is_alive():
            d.request_stop()
            t.join(15)
    died = logged(events, "thread_died")
    assert len(died) == 1 and died[0]["threads"] == ["scribed-worker-9"]
    assert died[0]["error"] == "scribed-worker-9: ValueError: ledger row 7 has no key"
    assert logged(events, "thread_failed")[0]["thread"] == "scribed-worker-9"
    assert threading.excepthook != d.deaths.hook  # put back when run() ends


@pytest.mark.slow  # a real-client tier: `python -m pytest -m slow`, run by CI
def test_service_survives_its_source_folder_deleted_and_made_again(
    tmp_path: Path, notifier: Notifications
) -> None:
    """The finding's steps through ``scribed run``: rm -rf the folder, mkdir it again at once and
    write a session into it: the service stays up and compacts it."""
    root, src = tmp_path / "root", tmp_path / "sessions"
    root.mkdir()
    src.mkdir()
    cfg = write_config(tmp_path / "c.toml", root, src, mode="inotify", quiet=1)
    out = tmp_path / "daemon.log"
    proc = start_service(cfg, out, notifier.path)
    try:
        notifier.wait_ready(proc, out)
        wait_for(lambda: "caught_up" in log_events(out), DEADLINE, "the watches set")
        shutil.rmtree(src)
        src.mkdir()
        session(src, "back")
        wait_for(lambda: "compacted" in log_events(out), DEADLINE, "the session in the new folder compacted")
        assert proc.poll() is None, out.read_text()
        assert "watch_dropped" in log_events(out) and str(src) in out.read_text()
        code, _ = stop(proc)
        assert code == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = out.read_text()
    assert "thread_died" not in text and "Traceback" not in text
