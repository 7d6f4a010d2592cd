"""The daemon under load and crashes: a burst of 1,000 files, and SIGKILL while it waits on the LLM."""

from __future__ import annotations

import gzip
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import llmserver
import pytest
from llmserver import FakeLLM, slow
from test_daemon import (
    DEADLINE,
    FIRST,
    Notifications,
    codex_records,
    sock_dir,  # noqa: F401  (fixture)
    start_service,
    stop,
    wait_for,
    write_config,
    write_rollouts,
)

from scribed.compress.entry import split_entries

fake_llm = llmserver.fake_llm


@pytest.fixture
def notifier(sock_dir: Path) -> Notifications:  # noqa: F811
    n = Notifications(str(sock_dir / "notify.sock"))
    yield n  # type: ignore[misc]
    n.close()


def entry_ids(root: Path) -> Counter[str]:
    seen: Counter[str] = Counter()
    for f in (root / ".squad/memory/cold").glob("*.md"):
        for e in split_entries(f.read_text())[1]:
            for i in e.ids:
                seen[i] += 1
    return seen


def ledger_entries(root: Path) -> int:
    db = root / ".squad/memory/.scribed/ledger.sqlite"
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        return int(con.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


@pytest.mark.slow
def test_burst_of_1000_files(tmp_path: Path, notifier: Notifications) -> None:
    root, src = tmp_path / "root", tmp_path / "sessions"
    root.mkdir()
    src.mkdir()
    cfg = write_config(
        tmp_path / "c.toml", root, src, mode="auto", quiet=1, extra="[cold]\nmax_bytes = 65536\n"
    )
    log = tmp_path / "daemon.log"
    proc = start_service(cfg, log, notifier.path)
    try:
        notifier.wait_ready(proc, log)
        burst = src / "burst"
        burst.mkdir()
        write_rollouts(burst, 1000)
        t0 = time.monotonic()
        wait_for(lambda: ledger_entries(root) >= 1000, 240, "1,000 compactions")
        took = time.monotonic() - t0
        time.sleep(2)  # nothing more arrives later
        assert ledger_entries(root) == 1000
        ids = entry_ids(root)
        assert set(ids.values()) == {1}, "no entry twice in cold"
        con = sqlite3.connect(root / ".squad/memory/.scribed/ledger.sqlite")
        ledger_ids = [r[0] for r in con.execute("SELECT id FROM entries")]
        con.close()
        assert len(set(ledger_ids)) == 1000
        archived = b"".join(
            gzip.decompress(p.read_bytes())
            for p in (root / ".squad/memory/.scribed/archive/cold").glob("*.gz")
        )
        lost = [i for i in ledger_ids if i not in ids and i.encode() not in archived]
        assert not lost, f"{len(lost)} entries neither in cold nor in the archive"
        assert len((root / ".squad/memory/cold/worf.md").read_bytes()) <= 65536
        code, _ = stop(proc)
        assert code == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in log.read_text()
    print(f"1,000 files compacted in {took:.1f} s")


def test_sigkill_while_waiting_on_the_llm(tmp_path: Path, notifier: Notifications, fake_llm: FakeLLM) -> None:
    root, src = tmp_path / "root", tmp_path / "sessions"
    root.mkdir()
    src.mkdir()
    extra = f'[llm]\nbase_url = "{fake_llm.url}"\nmodel = "tiny"\ntimeout_seconds = 30\nmax_retries = 0\n'
    cfg = write_config(tmp_path / "c.toml", root, src, quiet=1, extra=extra)
    cfg.write_text(cfg.read_text().replace('backend = "extractive"', 'backend = "llm"'))
    log = tmp_path / "daemon.log"
    fake_llm.default = slow(60)
    proc = start_service(cfg, log, notifier.path)
    try:
        notifier.wait_ready(proc, log)
        (src / "rollout-a.jsonl").write_text(
            codex_records("a", datetime(2026, 11, 20, 10, tzinfo=UTC), FIRST)
        )
        wait_for(lambda: fake_llm.chat_requests, DEADLINE, "an LLM call in flight")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not (root / ".squad/memory/cold/worf.md").exists()
    fake_llm.default = llmserver.echo_summary()
    proc = start_service(cfg, log, notifier.path)
    try:
        notifier.wait_ready(proc, log)
        wait_for(lambda: ledger_entries(root) >= 1, DEADLINE, "compaction after restart")
        time.sleep(1.5)
        ids = entry_ids(root)
        assert len(ids) == 1 and set(ids.values()) == {1}
        assert not [p for p in (root / ".squad/memory").rglob(".scribed-tmp-*")]
        code, _ = stop(proc)
        assert code == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert subprocess  # subprocess is used via start_service's Popen


@pytest.mark.slow  # a real-client tier: `python -m pytest -m slow`, run by CI
def test_source_folder_that_disappears_while_watched(tmp_path: Path, notifier: Notifications) -> None:
    """A watched folder removed under the service: a warning naming it, the service stays up, and
    the folder is watched again once it comes back."""
    root, src = tmp_path / "root", tmp_path / "sessions" / "sub"
    root.mkdir()
    src.mkdir(parents=True)
    cfg = write_config(tmp_path / "c.toml", root, src, quiet=1)
    log = tmp_path / "daemon.log"
    proc = start_service(cfg, log, notifier.path)
    try:
        notifier.wait_ready(proc, log)
        import shutil

        shutil.rmtree(src)
        wait_for(
            lambda: "source_missing" in log.read_text() and str(src) in log.read_text(),
            DEADLINE,
            "a warning naming the vanished folder",
        )
        assert proc.poll() is None, log.read_text()
        src.mkdir()
        (src / "rollout-back.jsonl").write_text(
            codex_records("back", datetime(2026, 11, 20, 10, tzinfo=UTC), FIRST)
        )
        wait_for(lambda: ledger_entries(root) >= 1, DEADLINE + 15, "compaction after the folder came back")
        code, _ = stop(proc)
        assert code == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in log.read_text()
