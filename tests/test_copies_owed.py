"""A transcript archive folder that fails mid-run (exploratory finding s11): the warning names the
folder, and the copy is made by a later run (run-once, the daemon's next pass) without compacting
the session again. Before, the warning named only the transcript and the copy was lost for good:
the session was recorded as compacted, so no later run read it again."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_transcript_archive import SID, cfg_dict, claude_file, make_root, write_config

from scribed import config, log
from scribed.core.ledger import Ledger
from scribed.core.scribe import Scribe
from scribed.tiers import transcripts

OTHER = "0ther000-1234-4abc-8def-0123456789ab"


@pytest.fixture
def events() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    log.configure("json", "info", stream=stream)
    yield stream
    log.configure("json", "error")


def logged(text: str, event: str) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in text.splitlines() if ln.startswith("{") and f'"{event}"' in ln]


def _unprivileged() -> list[str]:
    """A prefix under which a read-only folder cannot be written (root drops its override)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only folder stays writable")
    prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.skip("setpriv cannot drop capabilities here")
    return prefix


# The run as the CLI's, past its start checks: the folder fails after them (mid-run).
PAST_CHECKS = (
    "import json, sys; from scribed import config, log; from scribed.core.scribe import Scribe; "
    "log.configure('json', 'info'); s = Scribe(config.load(sys.argv[1])); "
    "print(json.dumps(s.run_once(force=True).public())); s.close()"
)


def _run_once(prefix: list[str], cfg: Path, *, mid_run: bool = False) -> tuple[dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    cmd = [*prefix, sys.executable, "-m", "scribed", "--config", str(cfg), "run-once", "--force", "--json"]
    if mid_run:
        cmd = [*prefix, sys.executable, "-c", PAST_CHECKS, str(cfg)]
    p = subprocess.run(cmd, capture_output=True, env=env, cwd=cfg.parent, timeout=120, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout), p.stderr


def _owed(root: Path) -> list[str]:
    ledger = Ledger(root / ".squad/memory/.scribed/ledger.sqlite")
    try:
        return [s for row in ledger.copies_owed() for s in row.sessions]
    finally:
        ledger.close()


def _entries(root: Path) -> int:
    ledger = Ledger(root / ".squad/memory/.scribed/ledger.sqlite")
    try:
        return len(ledger.entry_ids())
    finally:
        ledger.close()


def test_a_read_only_archive_folder_is_named_and_the_next_run_makes_the_copy(tmp_path: Path) -> None:
    prefix = _unprivileged()
    root, src, keep = make_root(tmp_path), tmp_path / "projects", tmp_path / "share"
    claude_file(src)
    claude_file(src, sid=OTHER)
    keep.mkdir()
    cfg = write_config(tmp_path, cfg_dict(root, src, folder=str(keep)))
    keep.chmod(0o555)  # the share turned read-only (after the start checks, which refuse it)
    try:
        first, err = _run_once(prefix, cfg, mid_run=True)
    finally:
        keep.chmod(0o755)
    assert first["compacted"] == 2 and list(keep.iterdir()) == []
    said = logged(err, "transcript_archive_failed")
    assert said and all(w["folder"] == str(keep) and w["file"].endswith(".jsonl") for w in said), err
    assert sorted(_owed(root)) == sorted([SID, OTHER])

    again, err = _run_once(prefix, cfg)  # the share writable again
    assert again["copies_retried"] == 2 and again["copies_owed"] == 0, err
    assert again["compacted"] == 0 and _entries(root) == 2  # not compacted again
    assert sorted(s for r in transcripts.iter_archives(keep) for s in r.sessions) == sorted([SID, OTHER])
    assert _owed(root) == []
    third, _ = _run_once(prefix, cfg)
    assert third["copies_retried"] == 0 and len(list(transcripts.iter_archives(keep))) == 2


def test_a_failed_sync_of_a_batch_is_owed_and_made_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: io.StringIO
) -> None:
    """The batch's copies written, its sync failing (a share that went away): no sidecar lists
    them, so each is owed and made again, listed, by the next run."""
    root, src, keep = make_root(tmp_path), tmp_path / "projects", tmp_path / "share"
    claude_file(src)
    data = cfg_dict(root, src, folder=str(keep))

    def fail() -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(transcripts.os, "sync", fail)
    scribe = Scribe(config.from_dict(data))
    try:
        assert scribe.run_once(force=True).compacted == 1
    finally:
        scribe.close()
    (said,) = logged(events.getvalue(), "transcript_archive_failed")
    assert said["folder"] == str(keep) and said["files"] == 1
    assert list(transcripts.iter_archives(keep)) == [] and _owed(root) == [SID]

    monkeypatch.undo()
    scribe = Scribe(config.from_dict(data))
    try:
        report = scribe.run_once(force=True)
    finally:
        scribe.close()
    assert report.copies_retried == 1 and report.compacted == 0
    assert "1 transcript copy missed by a failed archive folder made now" in report.why_not(0)
    assert [r.sessions for r in transcripts.iter_archives(keep)] == [[SID]] and _owed(root) == []


def test_the_daemon_makes_an_owed_copy_on_its_next_pass_and_a_gone_source_is_said(
    tmp_path: Path, events: io.StringIO
) -> None:
    """The daemon's worker meets the failure (a file where the folder was), its housekeeping makes
    the copy once the folder is back; a transcript deleted meanwhile is said lost, not retried."""
    from scribed.daemon.service import Daemon

    root, src, keep = make_root(tmp_path), tmp_path / "projects", tmp_path / "share"
    path = claude_file(src)
    gone = claude_file(src, sid=OTHER)
    for p in (path, gone):
        os.utime(p, (1e9, 1e9))  # long quiet: finished
    keep.write_text("not a folder\n")  # the share's mount point replaced by a file
    cfg = config.from_dict(cfg_dict(root, src, folder=str(keep)))
    d = Daemon(cfg, notify=lambda _msg: False)
    try:
        assert d.dispatch.work(str(path)).status == "compacted"  # type: ignore[union-attr]
        assert d.dispatch.work(str(gone)).status == "compacted"  # type: ignore[union-attr]
        said = logged(events.getvalue(), "transcript_archive_failed")
        assert [w["folder"] for w in said] == [str(keep)] * 2
        d.retry_copies_if_owed()  # still a file: still owed, said once
        assert len(logged(events.getvalue(), "transcript_archive_failed")) == 3
        keep.unlink()
        gone.unlink()
        d.retry_copies_if_owed()
    finally:
        d.scribe.close()
    assert [r.sessions for r in transcripts.iter_archives(keep)] == [[SID]]
    (lost,) = logged(events.getvalue(), "transcript_copy_lost")
    assert lost["file"].endswith(f"{OTHER}.jsonl")
    assert _owed(root) == []


def test_an_owed_copy_of_a_transcript_in_a_folder_named_with_a_secret_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: io.StringIO
) -> None:
    """The ledger keys such a transcript by its redacted path and a digest, a name no file has: the
    retry finds it by discovery. Before, it looked up the redacted name, found nothing, and dropped
    the copy with a wrong ``transcript_copy_lost`` while the transcript was still there."""
    root, keep = make_root(tmp_path), tmp_path / "share"
    src = tmp_path / "projects" / "xoxb-2911223344-5566778899-AbCdEfGhIjKlMnOpQrStUvWx"
    claude_file(src)
    data = cfg_dict(root, tmp_path / "projects", folder=str(keep))

    def fail() -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(transcripts.os, "sync", fail)
    scribe = Scribe(config.from_dict(data))
    try:
        assert scribe.run_once(force=True).compacted == 1
    finally:
        scribe.close()
    assert _owed(root) == [SID]

    monkeypatch.undo()
    scribe = Scribe(config.from_dict(data))
    try:
        report = scribe.run_once(force=True)
    finally:
        scribe.close()
    assert logged(events.getvalue(), "transcript_copy_lost") == []
    assert report.copies_retried == 1 and report.compacted == 0
    assert [r.sessions for r in transcripts.iter_archives(keep)] == [[SID]] and _owed(root) == []
