"""Issue 13: the ledger's migrations run in one ``BEGIN IMMEDIATE`` transaction, so first runs racing on
a fresh root never fail (``table meta already exists``), and an older ledger is carried forward."""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
from pathlib import Path

from lossy_kit import env, make_root, memory_entries, write_session

from scribed.core.ledger import MIGRATIONS, Ledger, SourceRow


def _open(path: str, barrier: object, errors: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    try:
        Ledger(Path(path)).close()
    except Exception as exc:
        errors.put(f"{type(exc).__name__}: {exc}")  # type: ignore[attr-defined]


def test_processes_opening_a_fresh_ledger_at_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    errors = ctx.Queue()
    for round_ in range(12):
        path = tmp_path / f"r{round_}" / "ledger.sqlite"
        path.parent.mkdir()
        barrier = ctx.Barrier(6)
        procs = [ctx.Process(target=_open, args=(str(path), barrier, errors)) for _ in range(6)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert all(p.exitcode == 0 for p in procs)
        found = []
        while not errors.empty():
            found.append(errors.get())
        assert not found, found
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_first_runs_racing_on_a_fresh_root(tmp_path: Path) -> None:
    for round_ in range(3):
        root, (src,), cfg = make_root(tmp_path / f"r{round_}")
        write_session(src / "rollout-a.jsonl", "sess-a", 1)
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "scribed", "--config", str(cfg), "run-once"],
                env=env(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for _ in range(4)
        ]
        results = [(p.wait(120), p.stderr.read().decode() if p.stderr else "") for p in procs]
        for code, err in results:
            assert code == 0 and "already exists" not in err, err[-2000:]
        assert len(memory_entries(root)) == 1


def test_a_version_1_ledger_is_carried_forward(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    db = sqlite3.connect(path)
    db.executescript(";\n".join(MIGRATIONS[0]) + ";\nPRAGMA user_version=1;")
    db.execute(
        "INSERT INTO sources(path, kind, agent, size, mtime_ns, sha256, offset_done, status, attempts, last_error,"
        " updated_at) VALUES('/a', 'codex', 'worf', 10, 1, 'ab', 10, 'done', 0, '', 'now')"
    )
    db.execute(
        "INSERT INTO entries(id, path, session, agent, session_end, start_offset, end_offset, bytes_in,"
        " bytes_out, ratio, recall, compressor, created_at) VALUES('e-000000000001', '/a', 's', 'worf', 'x',"
        " 0, 10, 10, 5, 0.5, 1.0, 'extractive', 'now')"
    )
    db.commit()
    db.close()
    led = Ledger(path)
    try:
        assert led.source("/a") == SourceRow("/a", "codex", "worf", 10, 1, "ab", 10, "done", 0, "", "now", "")
        assert led.has_entry("e-000000000001") and not led.is_empty()
        assert led.session_entries("s") == []  # no line range: it is matched by its old id only
    finally:
        led.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
