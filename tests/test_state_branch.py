"""Squad's state backends (``stateBackend`` orphan / two-layer), with real git: scribed keeps its
tiers in the clone's ``.git/scribed/memory`` and shares them on the ``squad-state`` branch with git
plumbing. Nothing is written into the working tree; two clones whose branches diverged are merged
entry by entry; a commit that lands on the branch while scribed works is kept."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import run_cli
from test_team_git import Clone, _session, git
from test_wiki_place import LOG, STORE, STORE_DEP, _layout, _page

from scribed.core import statebranch
from scribed.tiers import git_merge
from scribed.tiers.layout import Layout

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _remote(tmp: Path, backend: str) -> Path:
    """A bare remote whose main holds ``.squad/config.json`` with the backend, and a squad-state
    branch holding Squad's own files (as ``squad init --state-backend`` leaves it)."""
    remote = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", str(remote))
    seed = tmp / "seed"
    git(tmp, "init", "-q", "-b", "main", str(seed))
    git(seed, "config", "user.email", "s@example.invalid")
    git(seed, "config", "user.name", "s")
    (seed / ".squad").mkdir()
    (seed / ".squad/config.json").write_text(json.dumps({"version": 1, "stateBackend": backend}))
    (seed / ".squad/team.md").write_text("# Team\n")
    git(seed, "add", ".")
    git(seed, "commit", "-q", "-m", "squad")

    def plumb(args: list[str], data: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=seed, input=data, capture_output=True, text=True, check=True
        ).stdout.strip()

    hist = plumb(["hash-object", "-w", "--stdin"], "# Project Context\n\n## Learnings\n")
    sub = plumb(["mktree"], f"100644 blob {hist}\thistory.md\n")
    agents = plumb(["mktree"], f"040000 tree {sub}\triker\n")
    top = plumb(["mktree"], f"040000 tree {agents}\tagents\n")
    commit = git(seed, "commit-tree", top, "-m", "init: squad-state orphan branch").stdout.strip()
    git(seed, "update-ref", "refs/heads/squad-state", commit)
    git(seed, "push", "-q", str(remote), "main", "squad-state")
    git(remote, "symbolic-ref", "HEAD", "refs/heads/main")
    return remote


class StateClone(Clone):
    def fact(self, topic: str, text: str) -> None:
        p = run_cli("--config", str(self.cfg), "wiki-write", topic, "--agent", "riker", input=text.encode())
        assert p.returncode == 0, p.stderr.decode()

    def fetch(self) -> None:
        git(self.dir, "fetch", "-q", "origin", "+refs/heads/squad-state:refs/remotes/origin/squad-state")

    def push_state(self) -> bool:
        return git(self.dir, "push", "-q", "origin", "squad-state", check=False).returncode == 0

    def state_files(self) -> list[str]:
        out = git(self.dir, "ls-tree", "-r", "--name-only", "squad-state").stdout.split()
        return sorted(out)

    def sessions_on_branch(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for path in self.state_files():
            if path.startswith("memory/cold/") and path.endswith(".md"):
                text = git(self.dir, "show", f"squad-state:{path}").stdout
                for m in re.finditer(r" · session=([^ ·]+) · ", text):
                    counts[m.group(1)] = counts.get(m.group(1), 0) + 1
        return counts


@pytest.fixture(params=["orphan", "two-layer"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[StateClone, StateClone]:
    remote = _remote(tmp_path, request.param)
    a, b = StateClone(tmp_path, "a", remote), StateClone(tmp_path, "b", remote)
    for c in (a, b):
        c.fetch()
        git(c.dir, "branch", "-q", "squad-state", "origin/squad-state")
    return a, b


def test_the_tiers_go_to_squad_state_and_nothing_into_the_working_tree(
    pair: tuple[StateClone, StateClone],
) -> None:
    a, _ = pair
    rnd = random.Random(1)
    a.sessions.add(_session(a.sources["riker"], 1, 3, rnd))
    a.scribed("run-once")
    a.fact("conventions", "Use an injected clock in tests.")
    a.scribed("promote", "--as-of", "2027-01-15")
    assert git(a.dir, "status", "--porcelain", "--ignored").stdout.strip() == ""
    files = a.state_files()
    assert "agents/riker/history.md" in files  # Squad's own file, untouched
    assert any(f.startswith("memory/wiki/") for f in files), files
    assert (a.dir / ".git/scribed/memory/hot/riker.md").is_file()
    assert not any(
        f.startswith("memory/hot/") or (f.endswith("riker.md") and "/cold/riker.md" in f) for f in files
    )
    log = git(a.dir, "log", "--format=%s", "squad-state").stdout.splitlines()
    assert log[0].startswith("scribed: ") and log[-1].startswith("init:")
    out = a.scribed("context", "riker", "--situation", "debug").stdout.decode()
    assert "injected clock" in out or "src/mod_1.py" in out, out


def test_two_clones_whose_branches_diverged_end_with_every_session_once(
    pair: tuple[StateClone, StateClone],
) -> None:
    """Both compact, both commit to squad-state; b's push is refused (non-fast-forward), b fetches,
    its next run merges origin/squad-state entry by entry (a wiki page both wrote included); then
    both hold every session once and print the same context."""
    a, b = pair
    rnd = random.Random(2)
    for n, c in enumerate((a, b)):
        c.sessions.add(_session(c.sources["riker"], n, 5 + n, rnd))
        c.scribed("run-once")
        c.fact("conventions", f"Convention {n}: name tests test_{n}_*.")
    assert a.push_state()
    assert not b.push_state()  # diverged
    b.fetch()
    out = b.scribed("run-once")
    assert b"state_branch_took_remote" in out.stdout + out.stderr
    assert b.push_state()
    a.fetch()
    a.scribed("run-once")
    every = a.sessions | b.sessions
    for c in (a, b):
        assert c.sessions_on_branch() == dict.fromkeys(every, 1)
        page = git(c.dir, "show", "squad-state:memory/wiki/conventions.md").stdout
        assert "Convention 0" in page and "Convention 1" in page and "<<<<<<<" not in page
        assert git(c.dir, "status", "--porcelain").stdout.strip() == ""
    assert git(a.dir, "rev-parse", "squad-state").stdout == git(b.dir, "rev-parse", "squad-state").stdout
    got = [c.scribed("context", "riker", "--situation", "debug").stdout for c in (a, b)]
    assert got[0] == got[1]
    assert git(a.dir, "rev-list", "--merges", "--count", "squad-state").stdout.strip() == "1"


def test_a_spawn_sees_a_fetched_branch_without_a_run(pair: tuple[StateClone, StateClone]) -> None:
    a, b = pair
    a.sessions.add(_session(a.sources["riker"], 4, 9, random.Random(4)))
    a.scribed("run-once")
    assert a.push_state()
    b.fetch()  # what squad sync's post-merge hook does; no scribed run on b
    out = b.scribed("context", "riker", "--include-cold").stdout.decode()
    assert "src/mod_4.py" in out, out


def test_a_commit_landing_on_the_branch_meanwhile_is_kept(pair: tuple[StateClone, StateClone]) -> None:
    """Squad writes decisions.md to squad-state between scribed's tree and its ref update: the
    compare-and-swap fails, scribed pulls again and commits on top; Squad's commit stays."""
    a, _ = pair
    layout = Layout(a.dir)
    g = statebranch.Git(a.dir)
    statebranch.pull(layout, g)
    page = layout.wiki / "conventions.md"
    page.parent.mkdir(parents=True)
    page.write_text("# conventions\n\n### 2026-11-02: Use uv\n- provenance: x\n")
    real_move = g.move
    tries: list[str] = []

    def racing_move(new: str, old: str) -> bool:
        if not tries:  # Squad's own write lands first
            blob = g.text("hash-object", "-w", "--stdin", data=b"# Squad Decisions\n")
            tree = statebranch._rewrite(
                g, g.text("rev-parse", f"{old}^{{tree}}"), [f"100644 {blob}\tdecisions.md"]
            )
            assert real_move(g.commit(tree, [old], "squad: decisions"), old)
        tries.append(new)
        return real_move(new, old)

    g.move = racing_move  # type: ignore[method-assign]
    res = statebranch.push(layout, g, "scribed")
    assert len(tries) == 2 and res.commit == tries[1]
    files = a.state_files()
    assert "decisions.md" in files and "memory/wiki/conventions.md" in files
    assert git(a.dir, "log", "--format=%s", "-2", "squad-state").stdout.split("\n")[1] == "squad: decisions"


BAD = os.fsdecode(b"caf\xe9")  # a Latin-1 name as the OS gives it: a lone surrogate
SHOWN = "caf\\xe9"


def _not_utf8_said(p: subprocess.CompletedProcess[bytes]) -> list[str]:
    events = [json.loads(ln) for ln in p.stderr.decode().splitlines() if ln.startswith("{")]
    return [e["file"] for e in events if e["event"] == "file_name_not_utf8"]


def test_a_local_file_whose_name_is_not_utf8_is_said_and_the_rest_pushed(
    pair: tuple[StateClone, StateClone],
) -> None:
    """A wiki page so named in the local copy stopped every push (and the command that made it)
    with a bare UnicodeEncodeError; it is now one warning and stays this clone's."""
    a, _ = pair
    a.fact("conventions", "Use an injected clock in tests.")
    wiki = Layout(a.dir).wiki
    (wiki / f"{BAD}.md").write_bytes((wiki / "conventions.md").read_bytes())
    p = run_cli("--config", str(a.cfg), "wiki-write", "testing", "--agent", "riker", input=b"Run pytest -x.")
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert _not_utf8_said(p) == [f"{wiki}/{SHOWN}.md"]
    assert [f for f in a.state_files() if f.startswith("memory/wiki/")] == [
        "memory/wiki/conventions.md",
        "memory/wiki/index.md",
        "memory/wiki/testing.md",
    ]


def test_a_branch_file_whose_name_is_not_utf8_is_said_and_left_there(
    pair: tuple[StateClone, StateClone],
) -> None:
    """Such a page or Squad history on the branch (another tool's commit) was pulled into the local
    copy, and every push after stopped on it; it is now a warning naming it on the branch, never
    pulled, deleted nor imported, and the rest is pulled, pushed and imported."""
    a, _ = pair
    g = statebranch.Git(a.dir)
    tip = g.rev(statebranch.REF)
    blob = g.text("hash-object", "-w", "--stdin", data=HISTORY_TEXT.encode())
    rows = [f"100644 {blob}\t{name}" for name in ("memory/wiki/db.md", f"memory/wiki/{BAD}.md")]
    rows.append(f"100644 {blob}\tagents/{BAD}/history.md")
    g.env["GIT_INDEX_FILE"] = str(a.dir / ".git/test-index")
    g.run("read-tree", tip)
    g.run(
        "update-index",
        "--index-info",
        data="".join(f"{r}\n" for r in rows).encode("utf-8", "surrogateescape"),
    )
    tree = g.text("write-tree")
    del g.env["GIT_INDEX_FILE"]
    assert g.move(g.commit(tree, [tip], "squad: files so named"), tip)
    p = run_cli("--config", str(a.cfg), "wiki-write", "testing", "--agent", "riker", input=b"Run pytest -x.")
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert _not_utf8_said(p) == [f"squad-state:memory/wiki/{SHOWN}.md"]
    assert "on the squad-state branch" in p.stderr.decode()
    assert sorted(os.listdir(Layout(a.dir).wiki)) == ["db.md", "index.md", "testing.md"]
    files = g.run("ls-tree", "-r", "-z", "--name-only", "squad-state").split(b"\0")
    assert b"memory/wiki/testing.md" in files and b"memory/wiki/caf\xe9.md" in files  # left there
    p = run_cli("import", "--root", str(a.dir), "--all", "--json")
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert _not_utf8_said(p) == [f"squad-state:agents/{SHOWN}/history.md"]
    assert not any("caf" in w for w in json.loads(p.stdout)["warnings"]), p.stdout


def test_a_page_not_utf8_named_both_branches_changed_is_left_to_the_user(tmp_path: Path) -> None:
    """Merged, its text could not be stored (the index line is UTF-8): ``git merge-tree``'s
    conflict on it stopped the pull with a bare UnicodeEncodeError; it is now named, escaped,
    with the conflicts scribed leaves to the user, and the branch is left as it is."""
    git(tmp_path, "init", "-q", str(tmp_path / "repo"))
    g = statebranch.Git(tmp_path / "repo")
    root = g.commit(g.text("mktree", data=b""), [], "init")

    def side(text: str) -> str:
        g.env["GIT_INDEX_FILE"] = str(tmp_path / "side-index")
        blob = g.text("hash-object", "-w", "--stdin", data=text.encode())
        g.run("read-tree", "--empty")
        g.run(
            "update-index",
            "--index-info",
            data=f"100644 {blob}\tmemory/wiki/{BAD}.md\n".encode(errors="surrogateescape"),
        )
        tree = g.text("write-tree")
        del g.env["GIT_INDEX_FILE"]
        return g.commit(tree, [root], "x")

    res = statebranch.BranchResult()
    assert statebranch._merge_tree(g, side(MINE), side(THEIRS), "origin/squad-state", res) == ""
    assert f"memory/wiki/{SHOWN}.md" in res.diverged and not res.merged, res.diverged


HISTORY_TEXT = (
    "# History\n\n## Learnings\n\n### 2025-01-10: Stream rows in src/export/job.py\nKeeps it under 50 MB.\n"
)


def test_a_root_that_is_not_the_top_of_a_clone_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    root = tmp_path / "repo/sub"
    (root / ".squad").mkdir(parents=True)
    git(tmp_path / "repo", "init", "-q")
    (root / ".squad/config.json").write_text('{"stateBackend": "orphan"}')
    before = sorted(p for p in tmp_path.rglob("*") if ".git" not in p.parts)
    for args in (["run-once"], ["wiki-write", "conventions", "--agent", "riker"]):
        p = run_cli(*args, "--root", str(root), input=b"A fact here.")
        assert p.returncode == 2, p.stderr
        assert b"stateBackend='orphan'" in p.stderr and b"nothing was written" in p.stderr
    assert sorted(p for p in tmp_path.rglob("*") if ".git" not in p.parts) == before


_DB = "# Wiki: db\n\n> Durable facts filed under 'db'.\n\n### Main store\n"
_PROV = (
    "\n\n*Source:* 2026-12-07 · entry=w-{} · author={} · via=wiki-write | confidence: 1 session, 1 agent\n"
)
MINE = _DB + "Use Postgres 15." + _PROV.format("000000000001", "worf")
THEIRS = _DB + "Use Postgres 16 with logical replication." + _PROV.format("000000000002", "riker")


def _page_commits(tmp_path: Path, path: str) -> tuple[statebranch.Git, Callable[[str], str]]:
    """A repository with an empty root commit, and a maker of one child commit holding ``path`` with
    a text: two such are two branches that each added the page (no base stage in a merge)."""
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    g = statebranch.Git(repo)
    root = g.commit(g.text("mktree", data=b""), [], "init")

    def side(text: str) -> str:
        blob = g.text("hash-object", "-w", "--stdin", data=text.encode())
        return g.commit(statebranch._rewrite(g, f"{root}^{{tree}}", [f"100644 {blob}\t{path}"]), [root], "x")

    return g, side


def _both_statements(text: str) -> None:
    assert "Use Postgres 15." in text and "Use Postgres 16 with logical replication." in text, text
    assert text == git_merge.merge("wiki", MINE, THEIRS, "")  # as the driver merges an add/add
    assert text == git_merge.merge("wiki", MINE, THEIRS, None)  # a caller without a base: the same
    assert git_merge.merge_file("wiki", MINE, THEIRS, "").conflicts == ("block '### Main store'",)


def test_a_page_both_branches_created_keeps_both_statements_of_one_title(tmp_path: Path) -> None:
    """``git merge-tree`` gives no base stage for a page added on both sides (base=None here):
    both clones' statements under the one title are kept, as the driver keeps an add/add, where
    the longer one used to win and the other was dropped."""
    g, side = _page_commits(tmp_path, "memory/wiki/db.md")

    res = statebranch.BranchResult()
    tree = statebranch._merge_tree(g, side(MINE), side(THEIRS), "origin/squad-state", res)
    assert tree and res.merged == ["wiki/db.md"] and not res.diverged
    _both_statements(g.text("cat-file", "blob", f"{tree}:memory/wiki/db.md") + "\n")


def test_a_page_made_here_and_on_the_branch_since_the_last_pull_keeps_both(tmp_path: Path) -> None:
    """The same add/add when the branch is pulled (no base: the page was not there at the last pull)."""
    layout = Layout(tmp_path)
    (layout.wiki).mkdir(parents=True)
    (layout.wiki / "db.md").write_text(MINE)
    res = statebranch.BranchResult()
    statebranch._apply(layout, "wiki/db.md", None, THEIRS.encode(), res)
    assert res.merged == ["wiki/db.md"]
    _both_statements((layout.wiki / "db.md").read_text())


def test_a_fact_one_clone_deprecated_on_a_page_both_created_is_not_current(tmp_path: Path) -> None:
    """A page both clones made (no base), one deprecating a fact before the first push: its active
    copy on the other clone goes (it read as current and superseded at once), in ``git merge-tree``
    and in a pull; a fact that reversed it under its title (another source) stays."""
    ours, theirs = _page([STORE, LOG]), _page([LOG], [STORE_DEP])
    want = [("Logging", False), ("Session store", True)]
    g, side = _page_commits(tmp_path, "memory/wiki/ops.md")

    for a, b in ((ours, theirs), (theirs, ours)):
        res = statebranch.BranchResult()
        tree = statebranch._merge_tree(g, side(a), side(b), "origin/squad-state", res)
        assert tree and res.merged == ["wiki/ops.md"]
        assert _layout(g.text("cat-file", "blob", f"{tree}:memory/wiki/ops.md")) == want
        layout = Layout(tmp_path / f"pull-{len(a)}")
        layout.wiki.mkdir(parents=True)
        (layout.wiki / "ops.md").write_text(a)
        statebranch._apply(layout, "wiki/ops.md", None, b.encode(), statebranch.BranchResult())
        assert _layout((layout.wiki / "ops.md").read_text()) == want
