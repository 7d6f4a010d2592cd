"""Numbers that add up and skips that say why (issue 33, parts 3 and 5): a run counts each session
once (compacted + skipped + failed = sessions, the skip reasons add up to skipped), a file that
fails as a whole is counted apart, and `run-once` ends with why sessions were not compacted."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from helpers import run_cli

from scribed import config as config_mod
from scribed import sources
from scribed.cli import demo
from scribed.core.results import SKIP_ACTIVE, SKIP_DONE, SKIP_EMPTY, RunReport
from scribed.core.scribe import Scribe


def _adds_up(rep: RunReport | dict[str, object]) -> None:
    d = rep.public() if isinstance(rep, RunReport) else rep
    assert d["sessions"] == d["compacted"] + d["skipped"] + d["failed"], d
    skips = d["skips"]
    assert isinstance(skips, dict) and sum(skips.values()) == d["skipped"], d


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "squad"
    root.mkdir()
    demo.build(root)
    return root


def _touch(path: Path, ago: float) -> None:
    t = time.time() - ago
    os.utime(path, (t, t))


def _transcripts(root: Path, kind: str) -> list[Path]:
    return sorted(p for p in (root / "transcripts" / kind).rglob("*.jsonl"))


def test_a_fresh_run_on_active_sessions_says_why_and_what_to_do(root: Path) -> None:
    """The newcomer's first run: sessions changed a minute ago, nothing compacted, and the run
    says so with the quiet time and the flag that compacts now."""
    cfg = root / "scribed.toml"
    cfg.write_text(cfg.read_text().split('[[sources]]\nkind = "copilot"')[0])  # copilot's files end marked
    for p in [
        *_transcripts(root, "claude"),
        *_transcripts(root, "codex"),
        root / ".squad/memory/hot/riker.md",
    ]:
        _touch(p, 60)
    p = run_cli("--config", str(cfg), "run-once")
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    assert "3 sessions: 0 compacted, 3 skipped, 0 failed" in out, out
    line = re.search(r"^3 sessions still active \(last change (\d+) (s|min) ago; .*$", out, re.M)
    assert line, out
    assert line.group(0).endswith("finished after 30 min quiet — `--force` to compact now)"), line.group(0)
    assert 55 <= int(line.group(1)) * (60 if line.group(2) == "min" else 1) <= 120, line.group(0)
    p = run_cli("--config", str(cfg), "run-once", "--json")
    data = json.loads(p.stdout)
    assert data["skips"] == {SKIP_ACTIVE: 3} and data["quiet_seconds"] == 1800 and data["last_change"]
    _adds_up(data)
    p = run_cli("--config", str(cfg), "status")  # status counts them too (it said 0 done, 0 pending)
    waiting = [ln for ln in p.stdout.decode().splitlines() if ln.startswith("waiting:")]
    assert waiting and re.search(
        r"3 files with sessions still active \(last change \d+ (s|min) ago; finished after 30 min quiet, or at "
        rf"an end marker — `scribed --config {re.escape(str(cfg))} run-once --force` compacts them now\)$",
        waiting[0],
    ), waiting
    p = run_cli("--config", str(cfg), "run-once", "--force")  # … and the flag it names does it
    assert "3 sessions: 3 compacted, 0 skipped, 0 failed" in p.stdout.decode(), p.stdout.decode()
    assert "still active" not in p.stdout.decode()
    status = json.loads(run_cli("--config", str(cfg), "status", "--json").stdout)
    assert (status["waiting"]["active"], status["waiting"]["ready"]) == (0, 0), status["waiting"]


def test_every_kind_of_skip_is_counted_once_and_named(root: Path, tmp_path: Path) -> None:
    cfg = config_mod.load(str(root / "scribed.toml"))
    s = Scribe(cfg)
    first = s.run()
    _adds_up(first)
    assert first.compacted == 5 and first.skipped == 0
    # a copy of a compacted transcript at another path: its session is already in the ledger
    [claude] = _transcripts(root, "claude")
    copy = claude.parent.parent / "-repo-copy" / claude.name
    copy.parent.mkdir()
    shutil.copy2(claude, copy)
    # a Codex session that only ran a command since its entry: nothing to remember
    [codex] = _transcripts(root, "codex")
    with codex.open("a") as fh:
        fh.write(
            json.dumps(
                {
                    "timestamp": "2026-11-20T13:00:00.000Z",
                    "type": "response_item",
                    "payload": {"type": "function_call_output", "call_id": "c9", "output": "ok\n"},
                }
            )
            + "\n"
        )
    _touch(codex, 7200)
    # and an open one: a hot file written a minute ago
    hot = root / ".squad/memory/hot/troi.md"
    hot.write_text("Current task: wire the retry budget into src/http/retry.py\n")
    _touch(hot, 60)
    rep = s.run()
    s.close()
    _adds_up(rep)
    assert rep.skips == {SKIP_DONE: 1, SKIP_EMPTY: 1, SKIP_ACTIVE: 1}, rep.public()
    lines = rep.why_not(time.time())
    assert lines[0].startswith("1 session still active (last change 1 min ago;"), lines
    assert "1 session compacted before (the ledger holds their entries)" in lines[1], lines
    assert "1 session with nothing to remember (only tool output since the last entry)" in lines[2], lines


def test_a_file_that_fails_as_a_whole_is_not_a_failed_session(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reported "1 compacted, 0 skipped, 1 failed" of a run of one session: another file could
    not be read. The session counts once (compacted); the file's failure apart, with its reason."""
    cfg_path = root / "scribed.toml"
    cfg_path.write_text(cfg_path.read_text().split('[[sources]]\nkind = "copilot"')[0])
    (root / ".squad/memory/hot/riker.md").unlink()
    [codex] = _transcripts(root, "codex")
    real = sources.read_file

    def unreadable(kind: str, path: Path, agent: str) -> sources.Reading:
        if path == codex:
            raise PermissionError(13, "Permission denied", str(path))
        return real(kind, path, agent)

    real_parse = sources.parse_file

    def unparsable(kind: str, path: Path, agent: str) -> object:
        if path == codex:
            raise PermissionError(13, "Permission denied", str(path))
        return real_parse(kind, path, agent)

    monkeypatch.setattr(sources, "read_file", unreadable)
    monkeypatch.setattr(sources, "parse_file", unparsable)  # the work done ahead of the lock parses whole
    cfg = config_mod.load(str(cfg_path))
    cfg.compress.workers = 1  # in this process, where the patch is
    s = Scribe(cfg)
    rep = s.run()
    s.close()
    _adds_up(rep)
    assert (rep.sessions, rep.compacted, rep.skipped, rep.failed, rep.files_failed) == (1, 1, 0, 0, 1)
    assert not rep.ok
    [line, detail] = rep.why_not(time.time())
    assert line == "1 file could not be read: retried on the next run (`scribed status` shows the reasons)"
    assert detail.startswith(f"  {codex}: ") and "Permission denied" in detail, detail


def test_the_hot_files_a_run_seeds_are_not_waiting(root: Path) -> None:
    """An exploratory tester's first run: every session quiet, no hot file yet; the run seeds one
    per agent after its scan, and `status` counted each as a session still active, telling the user
    to `--force` a compaction of nothing."""
    cfg = root / "scribed.toml"
    for p in (root / ".squad/memory/hot").glob("*.md"):
        p.unlink()
    for p in (root / "transcripts").rglob("*.jsonl"):
        _touch(p, 7200)
    p = run_cli("--config", str(cfg), "run-once", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["compacted"] >= 1, p.stderr.decode()
    seeded = list((root / ".squad/memory/hot").glob("*.md"))
    assert seeded, "the run seeds the agents' hot files"
    status = json.loads(run_cli("--config", str(cfg), "status", "--json").stdout)
    assert (status["waiting"]["active"], status["waiting"]["ready"]) == (0, 0), status["waiting"]
    # a hot file an agent wrote since is a session waiting (no front matter of scribed's)
    seeded[0].write_text("# Hot\n\nCurrent task: port the exporter to csv\n")
    status = json.loads(run_cli("--config", str(cfg), "status", "--json").stdout)
    assert status["waiting"]["active"] == 1, status["waiting"]
