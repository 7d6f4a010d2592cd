"""One file, one reading, whatever reaches it: two configured sources whose folders overlap (the
same path twice, one inside the other, one through a symlink) and a file with two hard-linked
names are each read and compacted once per run. The first source owns a file both list (said
with both named, in run-once, check-config and doctor); a hard-linked file keeps the name the
ledger knows it by, else the first by name; the daemon watches each folder once and arms one timer.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers import run_cli
from test_daemon import FIRST, SECOND, FakeClock, FakeScheduler, codex_records, wait_for

from scribed import config
from scribed.core import discovery
from scribed.daemon.service import Daemon
from scribed.tiers.cold import Layout

T0 = datetime(2026, 11, 20, 10, tzinfo=UTC)
SHAPES = ("same", "parent", "child", "link")


def _rollout(path: Path, session: str, texts: list[tuple[str, str]] = FIRST) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(codex_records(session, T0, texts))
    return path


def _setup(
    tmp_path: Path, shape: str, agents: tuple[str, str] = ("worf", "worf"), mode: str = "auto"
) -> Path:
    """A root and two codex sources reaching ``sessions/sub`` (its rollout) both (``one``: a single
    source of ``sessions``); the config's path."""
    root, real = tmp_path / "root", tmp_path / "sessions"
    (root / ".squad").mkdir(parents=True, exist_ok=True)
    _rollout(real / "sub/rollout-a.jsonl", "a")
    _rollout(real / "rollout-top.jsonl", "top")  # the parent's alone
    if shape == "link":
        (tmp_path / "link").symlink_to(real, target_is_directory=True)
    folders = {
        "one": (real,),
        "same": (real, real),
        "parent": (real, real / "sub"),
        "child": (real / "sub", real),
        "link": (real, tmp_path / "link"),
    }[shape]
    cfg = tmp_path / "c.toml"
    text = (
        f'root = "{root}"\n[session]\nquiet_seconds = 2\n[compress]\nbackend = "extractive"\n'
        f'[watch]\nmode = "{mode}"\npoll_interval = 0.3\n[daemon]\nshutdown_grace = 5\n'
    )
    for folder, agent in zip(folders, agents[: len(folders)], strict=True):
        text += f'[[sources]]\nkind = "codex"\npath = "{folder}"\nagent = "{agent}"\nworkspace = "*"\n'
    cfg.write_text(text)
    return cfg


@pytest.mark.parametrize("shape", SHAPES)
def test_two_sources_reaching_one_folder_list_each_file_once(tmp_path: Path, shape: str) -> None:
    cfg_path = _setup(tmp_path, shape, ("worf", "data"))
    cfg = config.load(str(cfg_path))
    items = [i for i in discovery.items(cfg, Layout(cfg.root_path), None) if i.kind != "hot"]
    names = sorted(i.path.name for i in items)
    assert names == ["rollout-a.jsonl", "rollout-top.jsonl"], items
    first = cfg.sources[0].expanded
    for i in items:  # each one the first source's that lists it, under that source's path
        owner = "worf" if i.path.is_relative_to(first) else "data"
        assert i.agent == owner, i
    shared = next(i for i in items if i.path.name == "rollout-a.jsonl")
    assert shared.path.is_relative_to(first) and shared.agent == "worf", shared


def test_the_overlap_is_said_naming_both_sources(tmp_path: Path) -> None:
    cfg_path = _setup(tmp_path, "link", ("worf", "data"))
    check = run_cli("--config", str(cfg_path), "check-config")
    assert check.returncode == 0, check.stderr
    said = [line for line in check.stderr.decode().splitlines() if "#1" in line and "#2" in line]
    assert len(said) == 1 and "agent worf" in said[0] and "agent data" in said[0], check.stderr
    doctor = json.loads(run_cli("--config", str(cfg_path), "doctor", "--json").stdout)
    problems = [s["problem"] for s in doctor["sources"]]
    assert problems[0] == "" and "#1" in problems[1] and "#2" in problems[1], problems
    assert [s["files"] for s in doctor["sources"]] == [2, 0], doctor["sources"]  # each file once


@pytest.mark.parametrize("shape", SHAPES)
def test_run_once_compacts_a_file_two_sources_reach_once(tmp_path: Path, shape: str) -> None:
    cfg_path = _setup(tmp_path, shape, ("worf", "data"))
    args = ("--config", str(cfg_path), "run-once", "--force", "--json")
    p = run_cli(*args)
    err = p.stderr.decode()
    assert p.returncode == 0 and "Traceback" not in err, err
    out = json.loads(p.stdout)
    sources = sorted(Path(e["source"]).name for e in out["entries"] if "rollout" in e["source"])
    assert sources == ["rollout-a.jsonl", "rollout-top.jsonl"], out["entries"]
    assert out["skips"] == {} and out["files"] == 2, out  # the two rollouts (this run makes the hot file)
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    overlap = [e["reason"] for e in events if e["event"] == "source_warning" and "#2" in e["reason"]]
    assert len(overlap) == 1 and "#1" in overlap[0], err
    assert out["warnings"] >= 1
    again = run_cli(*args)
    out2 = json.loads(again.stdout)
    assert out2["compacted"] == 0 and out2["skips"] == {}, out2
    assert again.stderr.decode().count('"source_warning"') == 1  # said again, once: a run's warning
    entries = sorted(p.name for p in (tmp_path / "root/.squad/memory/cold").glob("*/*.md"))
    assert len(entries) == 2, entries


# --- hard links -----------------------------------------------------------------------------------
def test_a_hard_linked_file_is_listed_once_under_its_first_name(tmp_path: Path) -> None:
    cfg = config.load(str(_setup(tmp_path, "one")))
    real = tmp_path / "sessions"
    os.link(real / "sub/rollout-a.jsonl", real / "rollout-b.jsonl")  # sorts first
    os.link(real / "sub/rollout-a.jsonl", real / "sub/rollout-c.jsonl")
    layout = Layout(cfg.root_path)
    names = sorted(
        str(i.path.relative_to(real)) for i in discovery.items(cfg, layout, None) if i.kind != "hot"
    )
    assert names == ["rollout-b.jsonl", "rollout-top.jsonl"]
    # the name the ledger knows the file by keeps it: a link made later never takes it over
    known = {str(real / "sub/rollout-c.jsonl")}
    got = discovery.items(cfg, layout, None, known=lambda key: key in known)
    assert sorted(str(i.path.relative_to(real)) for i in got if i.kind != "hot") == [
        "rollout-top.jsonl",
        "sub/rollout-c.jsonl",
    ]


def test_a_hard_link_across_two_sources_is_listed_once(tmp_path: Path) -> None:
    root, a, b = tmp_path / "root", tmp_path / "a", tmp_path / "b"
    (root / ".squad").mkdir(parents=True)
    _rollout(a / "rollout-a.jsonl", "a")
    b.mkdir()
    os.link(a / "rollout-a.jsonl", b / "rollout-a.jsonl")
    cfg_path = tmp_path / "c.toml"
    cfg_path.write_text(
        f'root = "{root}"\n'
        + "".join(
            f'[[sources]]\nkind = "codex"\npath = "{f}"\nagent = "{n}"\nworkspace = "*"\n'
            for f, n in ((b, "data"), (a, "worf"))
        )
    )
    cfg = config.load(str(cfg_path))
    got = [i for i in discovery.items(cfg, Layout(root), None) if i.kind != "hot"]
    assert [(i.path, i.agent) for i in got] == [(b / "rollout-a.jsonl", "data")]


def test_run_once_compacts_a_hard_linked_file_once(tmp_path: Path) -> None:
    cfg_path = _setup(tmp_path, "one")
    real = tmp_path / "sessions"
    os.link(real / "sub/rollout-a.jsonl", real / "sub/rollout-b.jsonl")
    args = ("--config", str(cfg_path), "run-once", "--force", "--json")
    out = json.loads(run_cli(*args).stdout)
    sources = sorted(Path(e["source"]).name for e in out["entries"] if "rollout" in e["source"])
    assert sources == ["rollout-a.jsonl", "rollout-top.jsonl"], out["entries"]
    assert out["skips"] == {}, out  # the second name was never read: no "compacted before"
    with (real / "sub/rollout-b.jsonl").open("a") as fh:  # the session grows through the other name
        fh.write(codex_records("a", T0, SECOND, meta=False))
    out = json.loads(run_cli(*args).stdout)
    assert [Path(e["source"]).name for e in out["entries"]] == ["rollout-a.jsonl"], out
    os.link(real / "sub/rollout-a.jsonl", real / "rollout-0.jsonl")  # made later, sorts first
    out = json.loads(run_cli(*args).stdout)
    assert out["compacted"] == 0 and out["skips"] == {}, out


# --- the daemon -----------------------------------------------------------------------------------
def _daemon(cfg_path: Path) -> Daemon:
    cfg = config.load(str(cfg_path))
    return Daemon(
        cfg, clock=FakeClock(datetime.now(UTC)), scheduler_factory=FakeScheduler, notify=lambda _m: False
    )


@pytest.mark.parametrize("mode", ["inotify", "polling"])
@pytest.mark.parametrize("shape", ["parent", "child", "link"])
def test_the_daemon_watches_an_overlap_once_and_arms_one_timer(tmp_path: Path, shape: str, mode: str) -> None:
    cfg_path = _setup(tmp_path, shape, ("worf", "data"), mode=mode)
    d = _daemon(cfg_path)
    real = tmp_path / "sessions"
    try:
        d.watcher.start()
        assert d.watcher.mode == mode
        obs = d.watcher.observer
        inotify = mode == "inotify"
        watched = [e.watch.path for e in obs.emitters] if inotify else list(obs._roots)  # type: ignore[union-attr]
        hot = str(d.layout.hot)
        assert sorted(w for w in watched if w != hot) == [
            str(d.scribe.cfg.sources[shape == "child"].expanded)
        ]
        time.sleep(0.3)
        _rollout(real / "sub/rollout-new.jsonl", "new")
        owner = d.scribe.cfg.sources[0].expanded / (
            "rollout-new.jsonl" if shape == "child" else "sub/rollout-new.jsonl"
        )
        wait_for(lambda: d.dispatch.timers.deadline(str(owner)) is not None, 10, f"{mode} event for {owner}")
        time.sleep(1)
        armed = sorted({k for k, _ in d.dispatch.timers._live if "rollout-new" in k})
        assert armed == [str(owner)], armed
    finally:
        d.watcher.stop()
        d.scribe.close()


def test_an_event_on_a_hard_link_arms_the_name_it_is_compacted_under(tmp_path: Path) -> None:
    """The tool writes through its own name; the timer armed is the name discovery keeps, also
    for a link made while the daemon runs (that name is walked for when first met)."""
    cfg_path = _setup(tmp_path, "one")
    real = tmp_path / "sessions"
    own = real / "sub/rollout-a.jsonl"
    d = _daemon(cfg_path)
    try:
        assert d.dispatch.on_path_event(str(own))
        before = d.dispatch.timers.deadline(str(own))
        assert before is not None
        os.link(own, real / "rollout-0.jsonl")  # sorts first: the name kept from now on
        d.dispatch.clock.advance(5)  # type: ignore[attr-defined]  # a FakeClock: a re-arm would be later
        kept = [i.path for i in d.scribe.items(quiet=True) if i.path.name in ("rollout-0.jsonl", own.name)]
        assert kept == [real / "rollout-0.jsonl"]
        assert d.dispatch.on_path_event(str(own))
        assert d.dispatch.timers.deadline(str(real / "rollout-0.jsonl")) is not None
        assert d.dispatch.timers.deadline(str(own)) == before  # not armed again
    finally:
        d.scribe.close()


@pytest.mark.parametrize("mode", ["inotify", "polling"])
def test_a_source_inside_another_s_watch_gets_its_events_under_its_path(tmp_path: Path, mode: str) -> None:
    """A markdown source reached through a symlink into a codex source's folder: one watch (the
    codex folder's), and a note written there arms the markdown source's key, which the codex
    source's rule alone would not take."""
    root, real = tmp_path / "root", tmp_path / "sessions"
    (root / ".squad").mkdir(parents=True)
    _rollout(real / "notes/rollout-a.jsonl", "a")
    (tmp_path / "notes").symlink_to(real / "notes", target_is_directory=True)
    cfg_path = tmp_path / "c.toml"
    cfg_path.write_text(
        f'root = "{root}"\n[session]\nquiet_seconds = 2\n[watch]\nmode = "{mode}"\npoll_interval = 0.3\n'
        f'[[sources]]\nkind = "markdown"\npath = "{tmp_path / "notes"}"\nagent = "data"\n'
        f'[[sources]]\nkind = "codex"\npath = "{real}"\nagent = "worf"\nworkspace = "*"\n'
    )
    d = _daemon(cfg_path)
    try:
        d.watcher.start()
        obs = d.watcher.observer
        inotify = mode == "inotify"
        watched = [e.watch.path for e in obs.emitters] if inotify else list(obs._roots)  # type: ignore[union-attr]
        assert sorted(w for w in watched if w != str(d.layout.hot)) == [str(real)]
        time.sleep(0.3)
        (real / "notes/plan.md").write_text("User: plan the cache in src/cache.py\n\nAssistant: done.\n")
        want = str(tmp_path / "notes/plan.md")
        wait_for(lambda: d.dispatch.timers.deadline(want) is not None, 10, f"{mode} event for {want}")
        assert not [k for k, _ in d.dispatch.timers._live if k.startswith(str(real))]
    finally:
        d.watcher.stop()
        d.scribe.close()


def test_the_daemon_walks_once_for_every_file_of_two_overlapping_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The catch-up resolves each file it queues: a file two sources reach may be a second name,
    but one walk of the sources answers for every name it listed (a walk per file was quadratic)."""
    cfg_path = _setup(tmp_path, "link", ("worf", "data"))
    for n in range(30):
        _rollout(tmp_path / f"sessions/sub/rollout-{n:02d}.jsonl", f"s{n}")
    d = _daemon(cfg_path)
    walks: list[object] = []
    listed = discovery.listed
    monkeypatch.setattr(discovery, "listed", lambda *a, **kw: walks.append(a) or listed(*a, **kw))
    try:
        items = [i for i in d.scribe.items(quiet=True) if i.kind != "hot"]
        walks.clear()
        for i in items:
            assert d.dispatch.resolve(i.path) == i
        for i in items:  # the same files under the second source's path: the first's names
            other = tmp_path / "link" / i.path.relative_to(tmp_path / "sessions")
            assert d.dispatch.resolve(other) == i
        assert len(walks) == 1
    finally:
        d.scribe.close()


def _nested(tmp: Path, first: dict[str, str], second: dict[str, str]) -> list[str]:
    """The overlaps of two sources, the second's folder inside the first's or holding it."""
    from scribed import config
    from scribed.core.file_names import overlaps

    (tmp / ".squad").mkdir(exist_ok=True)
    (tmp / ".specstory/history").mkdir(parents=True, exist_ok=True)
    (tmp / "docs/notes").mkdir(parents=True, exist_ok=True)
    placed = [{**s, "path": str(tmp / s["path"])} for s in (first, second)]
    cfg = config.from_dict({"root": str(tmp), "sources": placed})
    return [o.reason for o in overlaps(cfg)]


AIDER = {"kind": "markdown", "path": ".", "glob": ".aider.chat.history.md", "agent": "aider"}
SPECSTORY = {"kind": "markdown", "path": ".specstory/history", "agent": "specstory"}


@pytest.mark.parametrize("order", ["aider first", "specstory first"])
def test_a_source_whose_glob_cannot_reach_a_nested_folder_does_not_overlap_it(
    tmp_path: Path, order: str
) -> None:
    """What `scribed setup` writes for a repository with an Aider history and SpecStory exports
    (finding s20): the Aider source's folder holds the SpecStory one, but its glob names one file
    at the top: no file is listed by both, so no warning (it failed setup's own --strict)."""
    pair = (AIDER, SPECSTORY) if order == "aider first" else (SPECSTORY, AIDER)
    assert _nested(tmp_path, *pair) == []


@pytest.mark.parametrize(
    ("outer", "inner"),
    [
        ({"kind": "markdown", "path": ".", "agent": "notes"}, SPECSTORY),  # **/.specstory/history/*.md
        ({"kind": "markdown", "path": ".", "glob": ".*/*/*.md", "agent": "notes"}, SPECSTORY),
        ({"kind": "markdown", "path": ".", "glob": "docs/**/*.{md,txt}", "agent": "notes"},
         {"kind": "markdown", "path": "docs/notes", "agent": "n2"}),
        (SPECSTORY, {"kind": "markdown", "path": ".", "glob": ".specstory/*/*.md", "agent": "notes"}),
    ],
)  # fmt: skip
def test_a_glob_that_walks_into_a_nested_folder_still_overlaps_it(
    tmp_path: Path, outer: dict[str, str], inner: dict[str, str]
) -> None:
    said = _nested(tmp_path, outer, inner)
    assert len(said) == 1 and "#1" in said[0] and "#2" in said[0], said
