"""The process pool for backlogs (``[compress] workers``) and the work done before the root lock
(``Scribe.ahead``) change nothing but speed and lock time: the same backlog run with everything
under the lock, serially (each file's work done ahead in this process) and pooled leaves
byte-identical tier files, transcript copies and the same ledger rows, and the pooled parent
neither parses a file nor makes a copy a worker already did."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import gen  # noqa: E402

SESSIONS = 12


def backlog(folder: Path) -> Path:
    transcripts = folder / "transcripts"
    if not transcripts.exists():
        for s in gen.iter_sessions(5, SESSIONS, min_kb=2, max_kb=40):
            gen.write_session(s, transcripts)
    return transcripts


def _config(root: Path, transcripts: Path, workers: int) -> Any:
    from scribed import config as config_mod

    return config_mod.from_dict(
        {
            "root": str(root),
            "session": {"quiet_seconds": 0},
            "compress": {"backend": "extractive", "workers": workers},
            "log": {"format": "json", "level": "error"},
            "sources": gen.sources(transcripts),
        }
    )


def state(root: Path) -> dict[str, str]:
    """Every file scribed wrote (its bytes' digest) and every ledger row but the timings."""
    mem = root / ".squad/memory"
    out = {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(mem.rglob("*"))
        if p.is_file()
        and (".scribed" not in (q := p.relative_to(mem).parts) or "transcripts" in q)  # copies too
    }
    db = sqlite3.connect(mem / ".scribed/ledger.sqlite")
    db.row_factory = sqlite3.Row
    for table, key in (("entries", "id"), ("sources", "path")):
        for r in db.execute(f"SELECT * FROM {table} ORDER BY {key}"):
            row = {k: r[k].hex() if isinstance(r[k], bytes) else r[k] for k in r.keys() if k != "ms"}  # noqa: SIM118
            out[f"{table}:{r[key]}"] = json.dumps(row, sort_keys=True)
    db.close()
    return out


def run(
    folder: Path, workers: int, *, parent: dict[str, int] | None = None, locked: bool = False
) -> dict[str, object]:
    """One run-once; ``parent`` counts the parses and transcript copies this process made itself;
    ``locked``: no work ahead of the lock (every step under it, as before issue 32)."""
    from scribed import sources
    from scribed.core import pool
    from scribed.core.scribe import Scribe
    from scribed.tiers import transcripts as copies

    saved = (pool.POOL_MIN_BYTES, pool._spool_dir, Scribe.ahead)  # restored at the end: no leak
    if locked:
        Scribe.ahead = lambda *_a, **_k: None  # type: ignore[method-assign]

    parent = {"parses": 0, "copies": 0} if parent is None else parent
    read_file, fill = sources.read_file, copies._fill

    def counted_read(*a: object, **k: object) -> object:
        parent["parses"] += 1
        return read_file(*a, **k)  # type: ignore[arg-type]

    def counted_fill(*a: object, **k: object) -> object:
        parent["copies"] += 1
        return fill(*a, **k)  # type: ignore[arg-type]

    sources.read_file, copies._fill = counted_read, counted_fill  # type: ignore[assignment]

    pool.POOL_MIN_BYTES = 0  # the test backlog is small
    transcripts = backlog(folder)
    root = folder / f"root-{workers}{'-locked' if locked else ''}"
    root.mkdir()
    cfg = _config(root, transcripts, workers)
    stale = root / ".squad/memory/.scribed/pool/left-by-a-killed-run"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"x")
    spools: list[str] = []
    spool_dir = pool._spool_dir

    def recorded(layout: object) -> str:
        spools.append(spool_dir(layout))  # type: ignore[arg-type]
        return spools[-1]

    pool._spool_dir = recorded  # type: ignore[assignment]
    # one content key for both runs: the ledger's keyed columns are then compared byte for byte too
    scribe = Scribe(cfg, clock=lambda: datetime(2026, 11, 20, 9, 0, tzinfo=UTC), rand=lambda n: b"\x07" * n)
    try:
        rep = scribe.run_once(force=True)
        from_pool = scribe.compactor.sessions.from_pool
        parses_from_pool = scribe.compactor.from_pool
    finally:
        scribe.close()
        sources.read_file, copies._fill = read_file, fill  # type: ignore[assignment]
        pool.POOL_MIN_BYTES, pool._spool_dir, Scribe.ahead = saved  # type: ignore[method-assign]
    return {
        "compacted": rep.compacted,
        "failed": rep.failed,
        "from_pool": from_pool,
        "parses_from_pool": parses_from_pool,
        **{f"parent_{k}": v for k, v in parent.items()},
        "state": state(root),
        "spools_outside_root": [x for x in spools if not x.startswith(str(root))],
        "spools": len(spools),
        "pool_left": (root / ".squad/memory/.scribed/pool").exists(),
    }


def _child(folder: Path, workers: int, *, locked: bool = False) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        str(folder),
        str(workers),
        *(["locked"] if locked else []),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def test_pooled_run_is_byte_identical_to_the_serial_one(tmp_path: Path) -> None:
    backlog(tmp_path)
    locked = _child(tmp_path, 1, locked=True)
    serial = _child(tmp_path, 1)
    pooled = _child(tmp_path, 2)
    assert locked["compacted"] == serial["compacted"] == pooled["compacted"] == SESSIONS
    assert locked["failed"] == serial["failed"] == pooled["failed"] == 0
    assert locked["from_pool"] == 0
    assert locked["parent_parses"] == locked["parent_copies"] == SESSIONS  # one file per session
    # serially, every entry and copy was made before the lock (ahead) and taken under it
    assert (serial["from_pool"], serial["parses_from_pool"], serial["parent_copies"]) == (SESSIONS,) * 3
    assert serial["state"] == locked["state"]
    assert pooled["from_pool"] == SESSIONS  # every entry was rendered by a worker
    # every file was parsed and copied by a worker only
    assert (pooled["parses_from_pool"], pooled["parent_parses"], pooled["parent_copies"]) == (SESSIONS, 0, 0)
    assert any("transcripts" in k for k in serial["state"])  # the copies are compared too
    assert pooled["state"] == serial["state"]
    # the workers' results (raw parses) stay in the git-ignored state folder, and nothing is left:
    # neither this run's spool nor the one a killed run left
    assert (pooled["spools"], pooled["spools_outside_root"], pooled["pool_left"]) == (1, [], False)


def test_no_pool_here_means_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where worker processes cannot start, run-once compacts everything itself."""
    from scribed.core import pool, scribe

    def refuse(*_a: object, **_k: object) -> None:
        raise OSError(38, "no semaphores here")

    monkeypatch.setattr(pool, "POOL_MIN_BYTES", 0)
    monkeypatch.setattr(scribe, "Prefetch", refuse)
    out = run(tmp_path, 2)
    # no spool: each file's work was done in this process, ahead of the lock, and taken under it
    assert (out["compacted"], out["failed"], out["spools"]) == (SESSIONS, 0, 0)
    assert out["from_pool"] == out["parses_from_pool"] == out["parent_copies"] == SESSIONS


def test_a_dry_run_starts_no_pool_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A preview writes nothing under the root: not even the pool's spool (found in review)."""
    from scribed.core import pool
    from scribed.core.scribe import Scribe

    monkeypatch.setattr(pool, "POOL_MIN_BYTES", 0)
    root = tmp_path / "root"
    root.mkdir()
    cfg = _config(root, backlog(tmp_path), 2)
    scribe = Scribe(cfg, dry_run=True)
    try:
        rep = scribe.run_once(force=True)
    finally:
        scribe.close()
    assert rep.compacted == SESSIONS
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == []


def test_a_killed_runs_spool_is_removed_by_the_next_run(tmp_path: Path) -> None:
    """A run killed mid-pool leaves raw parses (secrets in clear) in the spool; the next run-once
    removes them even when its own backlog starts no pool (found by review)."""
    from scribed.core.scribe import Scribe

    root = tmp_path / "root"
    left = root / ".squad/memory/.scribed/pool/tmpabc"
    left.mkdir(parents=True)
    (left / "result").write_bytes(b"password=hunter2abc")
    cfg = _config(root, backlog(tmp_path), 1)
    scribe = Scribe(cfg)
    try:
        assert scribe.run(force=True).compacted == SESSIONS
    finally:
        scribe.close()
    assert not (root / ".squad/memory/.scribed/pool").exists()


_ORPHAN = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from scribed.core import pool
if __name__ == "__main__":
    ex = ProcessPoolExecutor(2, mp_context=pool._context(), initializer=pool._watch_parent, initargs=(os.getpid(),))
    pids = {ex.submit(os.getpid).result() for _ in range(8)}
    print(" ".join(map(str, pids)), flush=True)
    time.sleep(60)
"""


def test_workers_end_when_the_parent_is_killed(tmp_path: Path) -> None:
    """A parent killed with SIGKILL (out of memory, kill -9) leaves no workers blocked forever on
    the pool's queue (found by review: they outlived it by minutes)."""
    import signal
    import time

    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert pids and all(Path(f"/proc/{p}").exists() for p in pids)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its reaper counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_workers_killed_mid_run_leave_the_rest_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed (out of memory, by hand) breaks the pool; the run goes on in-process
    instead of aborting with BrokenProcessPool (found by review)."""
    import signal
    import time

    from scribed.core import pool

    real = pool.Prefetch.take
    calls = [0]

    def take(self: pool.Prefetch, item: object) -> object:
        calls[0] += 1
        if calls[0] == 2:
            for proc in list(self._ex._processes.values()):  # type: ignore[attr-defined]
                os.kill(proc.pid, signal.SIGKILL)
            time.sleep(0.5)
        return real(self, item)  # type: ignore[arg-type]

    from scribed.core.scribe import Scribe

    ahead, done_here = Scribe.ahead, [0]

    def counted(self: Scribe, item: object, **k: bool) -> object:
        got = ahead(self, item, **k)  # type: ignore[arg-type]
        done_here[0] += got is not None
        return got

    monkeypatch.setattr(pool.Prefetch, "take", take)
    monkeypatch.setattr(Scribe, "ahead", counted)
    out = run(tmp_path, 2)
    assert (out["compacted"], out["failed"]) == (SESSIONS, 0)
    assert done_here[0] > 0  # the files the broken pool did not do, this process did


def test_a_slow_parent_gets_each_files_own_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers write their results to a ring of files the parent names and reuses; a parent
    that reads each result as late as it can (after the worker did every file sent, the one sent
    by this take included) still gets each file's own work, never a later file's that reused the
    name. With a ring one file shorter this fails at every take after the first few."""
    import builtins
    from concurrent.futures import wait

    from scribed.core import pool
    from scribed.core.scribe import Scribe

    root = tmp_path / "root"
    root.mkdir()
    cfg = _config(root, backlog(tmp_path), 1)  # one worker: it does every file, in order
    scribe = Scribe(cfg)
    pre = pool.Prefetch(
        cfg, dict(os.environ), scribe.ledger, scribe.keys, now=datetime(2026, 11, 20, tzinfo=UTC), force=True
    )

    def late_open(name: str, mode: str = "r") -> Any:
        wait([f for _, f in pre._pending])  # the worker is as far ahead as it may go
        return builtins.open(name, mode)

    monkeypatch.setattr(pool, "open", late_open, raising=False)
    try:
        items = [i for i in scribe.items() if i.kind != "hot"]
        pre.start(items)
        got = []
        for item in items:
            out = pre.take(item)
            got.append(out is not None and out.reading is not None and out.entries[0][0][0] == str(item.path))
        files = sorted(p.name for p in Path(pre._spool).iterdir())
    finally:
        pre.close()
        scribe.close()
    assert len(items) == SESSIONS
    assert all(got), got
    assert files == [str(n) for n in range(pre.window + 1)]  # the ring, no more


def test_a_rewritten_result_file_holds_only_the_new_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ring file is rewritten in place (not opened with O_TRUNC: see ``_prepare``); a shorter
    result after a longer one must still leave exactly its own bytes, nothing of the older parse
    (a raw transcript's, secrets included)."""
    import pickle

    from scribed.core import pool

    results = iter(["x" * 5000 + "OLD-SECRET", "short"])
    monkeypatch.setattr(pool, "_work", lambda *_a: next(results))
    spool = tmp_path / "spool"
    spool.mkdir()
    now = datetime(2026, 11, 20, tzinfo=UTC)
    item = object()
    for _ in range(2):
        path = pool._prepare(item, None, now, False, spool=str(spool), name="0")  # type: ignore[arg-type]
    data = Path(path).read_bytes()
    assert data == pickle.dumps("short", protocol=pickle.HIGHEST_PROTOCOL)
    assert b"OLD-SECRET" not in data


if __name__ == "__main__":
    from scribed import log

    log.configure("json", "error")
    print(json.dumps(run(Path(sys.argv[1]), int(sys.argv[2]), locked=sys.argv[3:] == ["locked"])))


def test_workers_fork_from_a_server_that_has_scribed_imported() -> None:
    """Each worker imported scribed itself (0.26 s of CPU a worker and run): the forkserver preloads
    it once. The worker's own import count shows it: a forked worker finds the module in place."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from scribed.core import pool

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform: workers are spawned")
    ctx = pool._context()
    assert ctx.get_start_method() == "forkserver"
    with ProcessPoolExecutor(1, mp_context=ctx) as ex:
        assert ex.submit(_imported_before_the_task).result(timeout=60)


def _imported_before_the_task() -> bool:
    """Run in a worker: whether scribed's compaction modules were there before this task came
    (the task's own unpickling imports only this test module, which imports none of them)."""
    import sys

    return "scribed.core.compact_session" in sys.modules
