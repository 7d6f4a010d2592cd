"""Issue 13: a source that cannot be read is a failure retried with backoff (shown in ``status``),
never "done"; once it is readable again it is compacted. Real ``run-once`` and the real daemon."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from lossy_kit import log_events, make_root, run_once, scribed, status, wait_for, write_session

from scribed.compress.entry import split_entries


@contextlib.contextmanager
def unreadable(path: Path, flag: Path) -> Iterator[dict[str, str]]:
    """``path`` cannot be opened for reading inside the block: file mode 000, and for root (whom modes
    do not stop) the hook that fails the open with EACCES. Yields the hook's environment."""
    flag.touch()
    mode = path.stat().st_mode if path.exists() else 0o600
    if path.exists() and os.geteuid() != 0:
        path.chmod(0)
    try:
        yield {"LOSSY_UNREADABLE": str(path), "LOSSY_FLAG": str(flag)}
    finally:
        flag.unlink(missing_ok=True)
        if path.exists():
            path.chmod(mode & 0o777)


def cold_text(root: Path, agent: str) -> str:
    p = root / f".squad/memory/cold/{agent}.md"
    return p.read_text() if p.exists() else ""


@pytest.mark.parametrize("kind", ["transcript", "hot"])
def test_unreadable_source_is_retried_then_compacted(tmp_path: Path, kind: str) -> None:
    root, (src,), cfg = make_root(tmp_path)
    if kind == "transcript":
        path, agent, fact = src / "rollout-a.jsonl", "a0", "worker_1_0_2"
        write_session(path, "sess-a", 1)
    else:
        path, agent, fact = root / ".squad/memory/hot/troi.md", "troi", "src/auth/rotate.py"
        path.write_text(
            "Current task: rotate the signing keys\n\nDecision: rotate keys weekly in src/auth/rotate.py.\n"
        )
        os.utime(path, (1_700_000_000, 1_700_000_000))
    with unreadable(path, tmp_path / "blocked") as hooks:
        for attempt in (1, 2):
            code, out, err = run_once(cfg, hooks=hooks)
            # the file failed as a whole: no session of it was read (issue 33: counted apart)
            assert code == 1 and out["files_failed"] == 1 and out["compacted"] == 0, err[-2000:]
            assert out["sessions"] == out["failed"] == 0, out
            assert "Permission denied" in err and "Traceback" not in err
            st = status(cfg)
            counts = st["sources"] if kind == "transcript" else st["hot_files"]
            assert counts["failed"] == 1 and counts["done"] == 0, st
            [retry] = st["retrying"]
            assert retry["attempts"] == attempt and path.name in retry["source"], retry
            assert "Permission denied" in retry["reason"]
        code, text, _ = scribed("--config", str(cfg), "status")
        assert code == 0 and "retrying" in text and path.name in text, text
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert fact in cold_text(root, agent)
    st = status(cfg)
    assert st["retrying"] == [] and (st["sources"] if kind == "transcript" else st["hot_files"])["done"] == 1


def test_daemon_retries_an_unreadable_transcript_with_backoff(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path, quiet=1)
    path = src / "rollout-a.jsonl"
    log = tmp_path / "daemon.log"
    from lossy_kit import daemon

    with unreadable(path, tmp_path / "blocked") as hooks, daemon(cfg, log, hooks):
        write_session(path, "sess-a", 1, old=False)
        if os.geteuid() != 0:
            path.chmod(0)

        def retries() -> list[float]:
            return [e["in_seconds"] for e in log_events(log) if e.get("event") == "retry_scheduled"]

        wait_for(lambda: len(retries()) >= 2, 40, "two retries")
        delays = retries()
        assert delays[1] > delays[0], delays  # backoff, not a tight loop
        st = status(cfg)
        assert st["sources"]["failed"] == 1 and st["sources"]["done"] == 0, st
        [retry] = st["retrying"]
        assert retry["attempts"] >= 2 and retry["next_retry"], retry
        assert not split_entries(cold_text(root, "a0"))[1], "an unreadable file was compacted"
        (tmp_path / "blocked").unlink()
        if os.geteuid() != 0:
            path.chmod(0o600)
        wait_for(lambda: "worker_1_0_2" in cold_text(root, "a0"), 40, "compaction once readable")
        wait_for(lambda: status(cfg)["sources"]["done"] == 1, 20, "done in status")
    assert "Traceback" not in log.read_text()


@pytest.mark.parametrize(
    ("exc", "status_", "attempts"),
    [
        (FileNotFoundError(2, "No such file or directory"), "skipped", None),
        (PermissionError(13, "Permission denied"), "failed", 1),
    ],
)
def test_a_pooled_reading_whose_file_fails_its_check(
    tmp_path: Path, exc: OSError, status_: str, attempts: int | None
) -> None:
    """The pool's reading is taken after a sha check that reads the file: a file gone since its stat
    is skipped as disappeared (as when its stat fails), one that cannot be read is a failure
    retried with backoff (a ledger row, attempts 1), never an internal error."""
    from scribed import config, sources
    from scribed.core.compact_session import Prefetched
    from scribed.core.ledger import source_key
    from scribed.core.results import SourceItem
    from scribed.core.scribe import Scribe

    _, (src,), cfg = make_root(tmp_path)
    path = src / "rollout-a.jsonl"
    write_session(path, "sess-a", 1)
    s = Scribe(config.load(str(cfg)))
    try:
        st = path.stat()
        reading = sources.read_file("codex", path, "a0")
        s.compactor.use(
            Prefetched(
                stamp=(st.st_size, st.st_mtime_ns),
                sha="x",
                hold=False,
                reading=reading,
                entries=[],
                copy=None,
            )
        )

        def boom(item: SourceItem, upto: int | None = None) -> str:
            raise exc

        s.compactor.sessions._source_sha = boom  # type: ignore[method-assign]
        out = s._process_guarded(SourceItem(path, "codex", "a0"), False)
        row = s.ledger.source(source_key(path))
    finally:
        s.close()
    assert out.status == status_, out
    if attempts is None:
        assert out.reason == "disappeared" and row is None
    else:
        assert row is not None and row.status == "failed" and row.attempts == attempts
        assert "Permission denied" in (out.reason or "")
