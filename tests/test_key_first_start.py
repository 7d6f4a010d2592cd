"""A root's first content key made by several creators at once (stop 48, s06): the daemon's workers
asked for it together at its first start, in one process with one temp name, so one unlinked the
other's file, warned ``content_key_unwritable`` and went on with a key of its own, and the ledger
said "key replaced: keyed columns cleared" at that start and the next. Exactly one key must be
made, and every thread and process must read that one."""

from __future__ import annotations

import errno
import multiprocessing
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_daemon import (
    Notifications,
    log_events,
    sock_dir,  # noqa: F401  (fixture)
    start_service,
    stop,
    wait_for,
    write_config,
    write_rollouts,
)

from scribed import config
from scribed.core.content_key import KEY_FILE, load
from scribed.core.scribe import Scribe

THREADS = 4
PROCS = 3


def _slow_rand(n: int) -> bytes:
    """Random bytes, late: the creators' writes overlap as they did on a loaded machine."""
    time.sleep(0.02)
    return os.urandom(n)


def _creators(state: str, barrier: Any, got: Any) -> None:
    """THREADS threads of one process load the key at once; each puts its key (or its error)."""

    def one() -> None:
        barrier.wait()
        try:
            got.put(load(Path(state), create=True, rand=_slow_rand).key_bytes().hex())
        except Exception as exc:  # the test reports it, with the others' results
            got.put(f"error: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=one) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)


def _no_links(src: object, dst: object) -> None:
    raise OSError(errno.EPERM, "Operation not permitted")


@pytest.mark.parametrize("links", [True, False], ids=["hard-links", "no-hard-links"])
def test_threads_and_processes_making_the_first_key_at_once_agree_on_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    """``no-hard-links``: a file system that refuses ``link`` (some FUSE and SMB mounts); the key is
    then renamed into place, and only the state folder's lock keeps a second creator from
    renaming its own over the first's (the forked creators inherit the patch)."""
    if not links:
        monkeypatch.setattr(os, "link", _no_links)
    ctx = multiprocessing.get_context("fork")
    for n in range(3):
        state = tmp_path / f"s{n}"
        state.mkdir()
        barrier, got = ctx.Barrier(THREADS * PROCS), ctx.Queue()
        procs = [ctx.Process(target=_creators, args=(str(state), barrier, got)) for _ in range(PROCS)]
        for p in procs:
            p.start()
        keys = [got.get(timeout=30) for _ in range(THREADS * PROCS)]
        for p in procs:
            p.join(30)
        assert not [k for k in keys if k.startswith("error")], keys
        assert set(keys) == {(state / KEY_FILE).read_text().strip()}
        assert sorted(x.name for x in state.iterdir()) == [KEY_FILE]  # no temp file left


class _Events:
    """A logger that keeps each event (name and fields)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        return lambda event, **kw: self.seen.append((event, kw))


def test_a_scribes_threads_load_the_key_once(tmp_path: Path) -> None:
    """The daemon's workers share one Scribe: the first to ask loads the key and brings the ledger
    in line with it; the others wait for that key rather than load (and rekey) their own."""
    root = tmp_path / "root"
    (root / ".squad").mkdir(parents=True)
    calls: list[int] = []

    def rand(n: int) -> bytes:
        calls.append(n)
        return _slow_rand(n)

    (tmp_path / "c.toml").write_text(f'root = "{root}"\n')
    scribe = Scribe(config.load(str(tmp_path / "c.toml")), rand=rand)
    scribe.log = events = _Events()  # type: ignore[assignment]
    barrier, got = threading.Barrier(6), []
    try:

        def ask() -> None:
            barrier.wait()
            got.append(scribe.keys)

        threads = [threading.Thread(target=ask) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        scribe.close()
    assert len(got) == 6 and all(k is got[0] for k in got)
    assert calls == [32]  # one key made, by one thread
    assert [e for e, _ in events.seen] == [], events.seen
    key = (root / ".squad/memory/.scribed" / KEY_FILE).read_text().strip()
    assert got[0].key_bytes().hex() == key


@pytest.fixture
def notifier(sock_dir: Path) -> Any:  # noqa: F811
    n = Notifications(str(sock_dir / "notify.sock"))
    yield n
    n.close()


def test_the_daemons_first_start_makes_one_key_without_a_warning(
    tmp_path: Path, notifier: Notifications
) -> None:
    """A backlog waiting at the first start: the workers compact at once, and neither that start
    nor the next says the key was unwritable or replaced."""
    root, src = tmp_path / "root", tmp_path / "sessions"
    (root / ".squad").mkdir(parents=True)
    src.mkdir()
    write_rollouts(src, 8)
    old = time.time() - 3600  # quiet long ago: taken by the catch-up walk, the workers together
    for f in src.iterdir():
        os.utime(f, (old, old))
    cfg = write_config(tmp_path / "c.toml", root, src, quiet=1, extra="workers = 4\n")  # in [daemon]
    log = tmp_path / "daemon.log"
    for start in (1, 2):
        proc = start_service(cfg, log, notifier.path)
        try:
            notifier.wait_ready(proc, log)
            if start == 1:
                wait_for(lambda: log_events(log).count("compacted") >= 8, what="the backlog compacted")
            code, _ = stop(proc)
            assert code == 0, log.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = log.read_text()
    assert "content_key_unwritable" not in text and "key replaced" not in text, text
    state = root / ".squad/memory/.scribed"
    assert [p.name for p in state.iterdir() if p.name.startswith((KEY_FILE, ".content"))] == [KEY_FILE]
