"""Symlinks in a source folder: a file reached twice is compacted once, a dangling link or a loop
is a warning and a skip (never a hang), a symlinked folder inside a source is not followed but
said, and a source folder that is itself a symlink (``~/.claude/projects`` on another disk) is
read and watched like any other, as is a linked file whose target lies outside the source.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import run_cli
from test_daemon import FIRST, SECOND, FakeClock, FakeScheduler, codex_records, wait_for, write_config

from scribed import config, sources
from scribed.daemon.service import Daemon

T0 = datetime(2026, 11, 20, 10, tzinfo=UTC)


def _rollout(path: Path, session: str, texts: list[tuple[str, str]] = FIRST) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(codex_records(session, T0, texts))
    return path


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """A codex source folder holding every kind of link, and a folder outside it."""
    src, out = tmp_path / "sessions", tmp_path / "outside"
    _rollout(src / "2026/11/20/rollout-a.jsonl", "a")
    _rollout(out / "rollout-b.jsonl", "b")
    _rollout(out / "deep/rollout-c.jsonl", "c")
    day = src / "2026/11/20"
    (day / "rollout-a-again.jsonl").symlink_to("rollout-a.jsonl")  # a second name for a file inside
    (day / "rollout-b.jsonl").symlink_to(out / "rollout-b.jsonl")  # a file outside, reached twice
    (day / "rollout-b-too.jsonl").symlink_to(out / "rollout-b.jsonl")
    (day / "rollout-gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")  # dangling
    (day / "rollout-self.jsonl").symlink_to("rollout-self.jsonl")  # a loop of one
    (day / "rollout-x.jsonl").symlink_to("rollout-y.jsonl")  # a loop of two
    (day / "rollout-y.jsonl").symlink_to("rollout-x.jsonl")
    (src / "2026/up").symlink_to("..", target_is_directory=True)  # a folder loop
    (src / "2026/linked").symlink_to(out / "deep", target_is_directory=True)  # a folder outside
    return src, out


def test_discovery_lists_each_file_once_and_says_what_it_skipped(tmp_path: Path) -> None:
    src, _ = _tree(tmp_path)
    os.utime(src / "2026/11/20/rollout-b-too.jsonl", (1, 1), follow_symlinks=False)  # the older link
    notes: list[sources.LinkNote] = []
    t = time.monotonic()
    found = [p.relative_to(src).as_posix() for p in sources.discover("codex", src, "", notes)]
    assert time.monotonic() - t < 5
    assert found == ["2026/11/20/rollout-a.jsonl", "2026/11/20/rollout-b-too.jsonl"]
    said = {n.path.relative_to(src).as_posix(): (n.warn, n.reason) for n in notes}
    assert said == {
        "2026/11/20/rollout-a-again.jsonl": (
            False,
            f"the same file as {src}/2026/11/20/rollout-a.jsonl: read once, as that",
        ),
        "2026/11/20/rollout-b.jsonl": (
            False,
            f"the same file as {src}/2026/11/20/rollout-b-too.jsonl: read once, as that",
        ),
        "2026/11/20/rollout-gone.jsonl": (
            True,
            f"a symlink to {tmp_path}/nowhere.jsonl, which does not exist: skipped",
        ),
        "2026/11/20/rollout-self.jsonl": (True, "a symlink loop: skipped"),
        "2026/11/20/rollout-x.jsonl": (True, "a symlink loop: skipped"),
        "2026/11/20/rollout-y.jsonl": (True, "a symlink loop: skipped"),
        "2026/up": (
            True,
            f"a symlinked folder (to {src}): not followed; give it a source of its own to read it",
        ),
        "2026/linked": (
            True,
            f"a symlinked folder (to {tmp_path}/outside/deep): not followed; give it a source of its own to read it",
        ),
    }
    # the daemon's per-file rule agrees with discovery on every name in the tree
    day = src / "2026/11/20"
    for p in day.iterdir():
        assert sources.match("codex", src, "", p) == (p.name in ("rollout-a.jsonl", "rollout-b-too.jsonl")), p


def test_a_link_made_later_does_not_take_over_from_the_one_read_before(tmp_path: Path) -> None:
    """The link kept is the oldest (then the first by name): a newer link sorting first is the duplicate,
    so the file keeps its ledger key and is not compacted again under a new one."""
    src, out = tmp_path / "sessions", tmp_path / "outside"
    _rollout(out / "rollout-b.jsonl", "b")
    src.mkdir()
    (src / "rollout-m.jsonl").symlink_to(out / "rollout-b.jsonl")
    os.utime(src / "rollout-m.jsonl", (1000, 1000), follow_symlinks=False)
    assert [p.name for p in sources.discover("codex", src)] == ["rollout-m.jsonl"]
    (src / "rollout-a.jsonl").symlink_to(out / "rollout-b.jsonl")
    assert [p.name for p in sources.discover("codex", src)] == ["rollout-m.jsonl"]
    assert not sources.match("codex", src, "", src / "rollout-a.jsonl")


# --- the real CLI on a demo root ------------------------------------------------------------------
def test_run_once_on_a_demo_root_with_every_kind_of_link(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    assert run_cli("demo", str(demo)).returncode == 0
    claude = demo / "transcripts/claude"
    (real,) = claude.rglob("*.jsonl")
    project = real.parent
    outside = tmp_path / "outside"
    outside.mkdir()
    other = outside / "aaaaaaaa-9d0e-4c55-8a41-6b2f2d9e1c01.jsonl"
    other.write_bytes(
        real.read_bytes()
        .replace(b"4f35c1aa-9d0e-4c55-8a41-6b2f2d9e1c01", other.stem.encode())
        .replace(b"rate limiting", b"request caching")
    )
    (project / "again.jsonl").symlink_to(real.name)
    (project / "elsewhere.jsonl").symlink_to(other)
    (project / "gone.jsonl").symlink_to(outside / "nothing.jsonl")
    (project / "self.jsonl").symlink_to("self.jsonl")
    (project / "up").symlink_to("..", target_is_directory=True)
    (claude / "-linked").symlink_to(outside, target_is_directory=True)
    t = time.monotonic()
    p = run_cli("--config", str(demo / "scribed.toml"), "run-once", "--force", "--json", timeout=120)
    assert time.monotonic() - t < 60
    err = p.stderr.decode()
    assert p.returncode == 0 and "Traceback" not in err, err
    out = json.loads(p.stdout)
    claude_entries = sorted(
        Path(e["source"]).name for e in out["entries"] if e["agent"] == "riker" and "hot" not in e["source"]
    )
    assert claude_entries == sorted(["elsewhere.jsonl", real.name]), out["entries"]
    assert out["skips"] == {}, out  # the second name was never read: no "compacted before" skip
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    warned = {
        Path(e["file"]).name: e["reason"]
        for e in events
        if e["event"] == "source_warning" and e["kind"] == "claude"
    }
    assert set(warned) == {"gone.jsonl", "self.jsonl", "up", "-linked"}, warned
    assert "does not exist" in warned["gone.jsonl"] and "loop" in warned["self.jsonl"]
    assert "not followed" in warned["up"] and "not followed" in warned["-linked"]
    assert out["warnings"] >= 4
    doctor = json.loads(run_cli("--config", str(demo / "scribed.toml"), "doctor", "--json").stdout)
    issues = [i for s in doctor["sources"] for i in s["issues"] if s["kind"] == "claude"]
    assert {Path(i["file"]).name for i in issues} == {"gone.jsonl", "self.jsonl", "up", "-linked"}
    assert all(i["fix"] for i in issues), issues


def test_a_symlinked_source_folder_is_read(tmp_path: Path) -> None:
    real = tmp_path / "disk/projects"
    _rollout(real / "2026/11/20/rollout-a.jsonl", "a")
    link = tmp_path / "codex-sessions"
    link.symlink_to(real, target_is_directory=True)
    assert [p.relative_to(link).as_posix() for p in sources.discover("codex", link)] == [
        "2026/11/20/rollout-a.jsonl"
    ]


# --- the daemon's watchers ------------------------------------------------------------------------
def _daemon(tmp_path: Path, source: Path, mode: str) -> Daemon:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    cfg = config.load(str(write_config(tmp_path / "c.toml", root, source, mode=mode, quiet=60)))
    return Daemon(
        cfg, clock=FakeClock(datetime.now(UTC)), scheduler_factory=FakeScheduler, notify=lambda _m: False
    )


@pytest.mark.parametrize("mode", ["inotify", "polling"])
def test_a_symlinked_source_folder_is_watched(tmp_path: Path, mode: str) -> None:
    """A new file in a new sub-folder of a source reached through a symlink arms its timer, under
    the source's own path (the key run-once gives it)."""
    real = tmp_path / "disk/sessions"
    _rollout(real / "2026/11/19/rollout-old.jsonl", "old")
    link = tmp_path / "sessions"
    link.symlink_to(real, target_is_directory=True)
    os.utime(link, (1, 1), follow_symlinks=False)  # made long ago, as a user's link is
    d = _daemon(tmp_path, link, mode)
    try:
        d.watcher.start()
        assert d.watcher.mode == mode
        time.sleep(0.3)
        new = _rollout(real / "2027/01/02/rollout-new.jsonl", "new")  # folders made after start-up
        top = _rollout(real / "rollout-top.jsonl", "top")  # straight in the linked folder
        for f in (new, top):
            seen = link / f.relative_to(real)
            wait_for(
                lambda s=seen: d.dispatch.timers.deadline(str(s)) is not None, 10, f"{mode} event for {seen}"
            )
        assert not [k for k, _ in d.dispatch.timers._live if k.startswith(str(real))], (
            "a key under the real path"
        )
    finally:
        d.watcher.stop()
        d.scribe.close()


@pytest.mark.parametrize("mode", ["inotify", "polling"])
def test_a_linked_file_outside_the_source_is_watched(tmp_path: Path, mode: str) -> None:
    src, out = tmp_path / "sessions", tmp_path / "aider-repo"
    target = _rollout(out / "rollout-b.jsonl", "b")
    src.mkdir()
    link = src / "rollout-b.jsonl"
    link.symlink_to(target)
    d = _daemon(tmp_path, src, mode)
    try:
        d.watcher.start()
        time.sleep(0.5)
        assert d.dispatch.timers.deadline(str(link)) is None
        with target.open("a") as fh:  # the tool writes to its own file, not through the link
            fh.write(codex_records("b", T0, SECOND))
        wait_for(lambda: d.dispatch.timers.deadline(str(link)) is not None, 10, f"{mode} event for the link")
        assert d.dispatch.timers.deadline(str(target)) is None
    finally:
        d.watcher.stop()
        d.scribe.close()


def test_a_link_out_made_while_watching_gets_its_watch(tmp_path: Path) -> None:
    """inotify watches folders: a link made later to a file elsewhere asks for the watches again."""
    src, out = tmp_path / "sessions", tmp_path / "aider-repo"
    target = _rollout(out / "rollout-b.jsonl", "b")
    src.mkdir()
    d = _daemon(tmp_path, src, "inotify")
    try:
        d.watcher.start()
        time.sleep(0.3)
        link = src / "rollout-b.jsonl"
        link.symlink_to(target)
        wait_for(lambda: d.dispatch.timers.deadline(str(link)) is not None, 10, "the link's creation")
        wait_for(lambda: d.watcher.restart_needed, 10, "a restart asked for")
        d.watcher.restart_needed = False
        d.restart_observers()
        time.sleep(0.3)
        before = d.dispatch.timers.deadline(str(link))
        d.dispatch.clock.advance(5)  # type: ignore[attr-defined]  # a FakeClock: a later event re-arms later
        with target.open("a") as fh:
            fh.write(codex_records("b", T0, SECOND))
        wait_for(lambda: d.dispatch.timers.deadline(str(link)) != before, 10, "an event for the link")
    finally:
        d.watcher.stop()
        d.scribe.close()


def test_a_linked_transcript_that_grows_is_read_again(tmp_path: Path) -> None:
    """The ledger stamps the file a link leads to: the link's own stamp never changes, so a session
    written through it (the tool writes to its own file) was "unchanged" for good."""
    root, src, out = tmp_path / "root", tmp_path / "sessions", tmp_path / "outside"
    (root / ".squad").mkdir(parents=True)
    target = _rollout(out / "rollout-b.jsonl", "b")
    src.mkdir()
    (src / "rollout-b.jsonl").symlink_to(target)
    os.utime(src / "rollout-b.jsonl", (1, 1), follow_symlinks=False)
    cfg = write_config(tmp_path / "c.toml", root, src, quiet=2)
    args = ("--config", str(cfg), "run-once", "--force", "--json")
    first = json.loads(run_cli(*args).stdout)
    assert first["compacted"] == 1, first
    with target.open("a") as fh:
        fh.write(codex_records("b", T0, SECOND, meta=False))
    second = json.loads(run_cli(*args).stdout)
    assert second["compacted"] == 1, second  # the new turns: an entry of their own
    cold = (root / ".squad/memory/cold/worf.md").read_text()
    assert "flock" in cold and "LRU" in cold
