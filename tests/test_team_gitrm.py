"""What git removes is not a loss, and a cold entry can be removed for the whole team: real git,
a bare remote and two clones (:mod:`test_team_git`'s), branch switches, ``git rm``, ``git revert``,
``pull --rebase``, ``git clean``, and ``scribed cold-remove``.

A file missing from the working tree that git has committed on some ref was put there by git (a
checkout, a pull of a deletion, a revert): written back, it is an untracked file that blocks the
checkout back, or a deletion every teammate's next run undoes. One git never saw (``git clean``,
a crash) is still written back."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import run_cli
from test_team_git import Clone, _session, clone_pair, git, share

from scribed.core import team_sync
from scribed.tiers.layout import Layout

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MEMORY = ".squad/memory"


@pytest.fixture
def team_(tmp_path: Path) -> tuple[Clone, Clone]:
    return clone_pair(tmp_path, driver=False)


def _files(c: Clone, agent: str) -> list[str]:
    return sorted(p.name for p in (c.dir / MEMORY / "cold" / agent).glob("*.md"))


def _key(name: str) -> str:
    m = re.search(r"([a-z]-[0-9a-f]{6,40})\.md$", name)
    assert m, name
    return m.group(1)


def _view_ids(c: Clone, agent: str) -> list[str]:
    view = c.dir / MEMORY / "cold" / f"{agent}.md"
    return re.findall(r"provenance: id=([a-z]-[0-9a-f]+)", view.read_text()) if view.exists() else []


def _hot_entry(c: Clone, agent: str) -> str:
    hot = c.dir / MEMORY / "hot" / f"{agent}.md"
    m = re.search(r"^entry: (\S+)$", hot.read_text(), re.M) if hot.exists() else None
    return m.group(1) if m else ""


def _status(c: Clone) -> str:
    return git(c.dir, "status", "--porcelain", "--untracked-files=all").stdout.strip()


def _warned(p: subprocess.CompletedProcess[bytes]) -> str:
    return (p.stdout + p.stderr).decode()


def _fact(c: Clone, text: str) -> None:
    p = run_cli("--config", str(c.cfg), "wiki-write", "conventions", "--agent", "riker", input=text.encode())
    assert p.returncode == 0, p.stderr.decode()


# --- D1: a checkout is not a loss --------------------------------------------------------------
def test_a_branch_without_the_newest_entry_leaves_it_out_and_the_checkout_back_works(
    team_: tuple[Clone, Clone],
) -> None:
    """On a branch made before an entry was committed, the run neither writes the entry back nor
    compacts its session again, and the hot file is seeded from the newest entry the branch has;
    back on main the entry is there again, and it seeds the hot file again."""
    a, _ = team_
    rnd = random.Random(43)
    a.sessions.add(_session(a.sources["riker"], 1, 3, rnd))
    a.scribed("run-once")
    _fact(a, "Pin the CI image by digest.")
    a.commit()
    git(a.dir, "branch", "feature")
    a.sessions.add(_session(a.sources["riker"], 2, 9, rnd))
    a.scribed("run-once")
    _fact(a, "Name test fixtures after the module they serve.")
    a.commit()
    old, new = (_key(n) for n in _files(a, "riker"))
    page = a.dir / MEMORY / "wiki" / "conventions.md"
    assert _hot_entry(a, "riker") == new

    git(a.dir, "checkout", "-q", "feature")
    p = a.scribed("run-once", "--json")
    assert json.loads(p.stdout)["compacted"] == 0, "its session was compacted again"
    assert "restored" not in _warned(p), _warned(p)
    assert _status(a) == "", "a file git would refuse to overwrite on the way back"
    assert "fixtures" not in page.read_text() and "by digest" in page.read_text()
    assert _view_ids(a, "riker") == [old]
    assert _hot_entry(a, "riker") == old, "the hot file still served the entry this branch lacks"
    assert "src/mod_2.py" not in a.scribed("context", "riker").stdout.decode()
    p = a.scribed("run-once", "--json")  # and again: nothing asked, nothing done
    assert json.loads(p.stdout)["compacted"] == 0

    git(a.dir, "checkout", "-q", "main")
    a.scribed("run-once")
    assert _view_ids(a, "riker") == [old, new]
    assert _hot_entry(a, "riker") == new
    assert _status(a) == ""
    assert page.read_text().count("fixtures") == 1


def test_checking_out_a_commit_from_before_memory_writes_nothing_git_tracks_elsewhere(
    team_: tuple[Clone, Clone],
) -> None:
    """A detached checkout of the first commit (no memory, no ``.squad/memory/.gitignore``): a run
    there, one that compacts a new session too, writes back no entry, wiki page, wiki index or
    ``.gitignore``, so ``git checkout main`` works; there the new entry joins the old one."""
    a, _ = team_
    first = git(a.dir, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    rnd = random.Random(41)
    a.sessions.add(_session(a.sources["riker"], 1, 5, rnd))
    a.scribed("run-once")
    _fact(a, "Pin the CI image by digest.")
    a.commit()
    (entry,) = _files(a, "riker")
    git(a.dir, "checkout", "-q", "--detach", first)
    assert not (a.dir / MEMORY / ".gitignore").exists()
    a.sessions.add(_session(a.sources["riker"], 2, 6, rnd))  # the daemon compacts a session here
    p = a.scribed("run-once")
    assert "restored" not in _warned(p), _warned(p)
    on_main = set(git(a.dir, "ls-tree", "-r", "--name-only", "main").stdout.split())
    written = {line[3:] for line in _status(a).splitlines() if line.startswith("??")}
    assert not written & on_main, written & on_main
    assert entry not in _files(a, "riker")

    git(a.dir, "checkout", "-q", "main")  # refused before: untracked files would be overwritten
    a.scribed("run-once")
    assert len(_view_ids(a, "riker")) == 2
    page = (a.dir / MEMORY / "wiki" / "conventions.md").read_text()
    assert page.count("by digest") == 1
    assert [
        line for line in _status(a).splitlines() if not line.startswith("?? .squad/memory/cold/riker/")
    ] == []


def test_a_wiki_write_on_a_commit_from_before_the_wiki_leaves_the_index_out(
    team_: tuple[Clone, Clone],
) -> None:
    """On a detached checkout of a commit without the wiki, a ``wiki-write`` of a new topic writes
    its page (git has it nowhere) but no ``index.md``: git has that on main, and written here it
    made ``git checkout main`` refuse ("untracked working tree files would be overwritten"). Back
    on main the index lists the new topic."""
    a, _ = team_
    first = git(a.dir, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    _fact(a, "Pin the CI image by digest.")
    a.commit()
    git(a.dir, "checkout", "-q", "--detach", first)
    a.scribed("run-once")
    p = run_cli(
        "--config",
        str(a.cfg),
        "wiki-write",
        "process",
        "--agent",
        "riker",
        input=b"Hotfixes need two reviews.",
    )
    assert p.returncode == 0, p.stderr.decode()
    wiki = a.dir / MEMORY / "wiki"
    assert (wiki / "process.md").is_file()
    assert not (wiki / "index.md").exists()
    git(a.dir, "checkout", "-q", "main")
    a.scribed("run-once")
    index = (wiki / "index.md").read_text()
    assert "[process](process.md)" in index and "[conventions](conventions.md)" in index


@pytest.mark.slow
def test_a_checkout_from_before_a_merge_commit_writes_back_nothing_the_merge_alone_made(
    tmp_path: Path,
) -> None:
    """b merges a's fact into a page it also filed one on (the driver's page, a version only the
    merge commit has) and compacts a session while the merge is open (an entry file only the merge
    commit adds). A checkout of b's side before the merge writes neither back: git's history of
    merge commits was not read, so the run restored a's block into the older page
    (``wiki_block_restored``) and wrote the entry file, and ``git checkout main`` was refused."""
    a, b = clone_pair(tmp_path, driver=True)
    rnd = random.Random(47)
    _fact(a, "Pin the CI image by digest.")
    a.commit()
    a.push()
    _fact(b, "Name test fixtures after the module they serve.")
    b.commit()
    mine = git(b.dir, "rev-parse", "HEAD").stdout.strip()
    git(b.dir, "pull", "-q", "--no-rebase", "--no-commit")
    b.sessions.add(_session(b.sources["riker"], 1, 4, rnd))
    b.scribed("run-once")
    b.commit()
    (entry,) = _files(b, "riker")
    page = b.dir / MEMORY / "wiki" / "conventions.md"
    assert "by digest" in page.read_text() and "fixtures" in page.read_text()

    git(b.dir, "checkout", "-q", "--detach", mine)
    p = b.scribed("run-once")
    assert "restored" not in _warned(p), _warned(p)
    assert "by digest" not in page.read_text()
    assert _files(b, "riker") == []
    assert _status(b) == "", "a file git would refuse to overwrite on the way back"
    git(b.dir, "checkout", "-q", "main")
    b.scribed("run-once")
    assert _files(b, "riker") == [entry]
    assert page.read_text().count("by digest") == 1
    assert _status(b) == ""


def test_an_entry_git_clean_removed_is_written_back(team_: tuple[Clone, Clone]) -> None:
    """Never committed: ``git clean`` (or a hand, a crash) lost it, and the view still has it."""
    a, _ = team_
    a.sessions.add(_session(a.sources["worf"], 1, 4, random.Random(3)))
    a.scribed("run-once")
    (name,) = _files(a, "worf")
    git(a.dir, "clean", "-fq", f"{MEMORY}/cold")
    assert _files(a, "worf") == []
    p = a.scribed("run-once", "--json")
    assert "cold_entry_restored" in _warned(p)
    assert json.loads(p.stdout)["compacted"] == 0
    assert _files(a, "worf") == [name]


# --- D2: removing an entry ------------------------------------------------------------------------
def test_an_entry_removed_with_git_rm_and_pushed_stays_removed_on_every_clone(
    team_: tuple[Clone, Clone],
) -> None:
    """b deletes a's newest entry with ``git rm``, commits and pushes: neither clone writes it
    back, a (whose session it is) does not compact it again, and both hot files are seeded from
    the newest entry left."""
    a, b = team_
    share(a, "riker", range(3, 5), random.Random(47))
    b.pull("merge")
    b.scribed("run-once")
    old, new = _files(b, "riker")
    assert _hot_entry(a, "riker") == _hot_entry(b, "riker") == _key(new)

    git(b.dir, "rm", "-q", f"{MEMORY}/cold/riker/{new}")
    git(b.dir, "commit", "-qm", "remove an entry with a wrong decision")
    b.push()
    p = b.scribed("run-once")
    assert "cold_entry_restored" not in _warned(p)
    a.pull("merge")
    p = a.scribed("run-once", "--json")
    assert "cold_entry_restored" not in _warned(p)
    assert json.loads(p.stdout)["compacted"] == 0, "the owner compacted it again"
    for c in (a, b):
        assert _files(c, "riker") == [old], c.name
        assert _view_ids(c, "riker") == [_key(old)], c.name
        assert _hot_entry(c, "riker") == _key(old), c.name
        assert _status(c) == "", (c.name, _status(c))
    assert json.loads(a.scribed("run-once", "--json").stdout)["compacted"] == 0


@pytest.mark.slow
def test_a_reverted_memory_commit_stays_reverted_after_pull_rebase(team_: tuple[Clone, Clone]) -> None:
    """b reverts the commit that added a's entry; a, with a commit of its own, pulls with
    ``--rebase``: the entry stays out on both, and a's own new entry is kept."""
    a, b = team_
    rnd = random.Random(53)
    share(a, "worf", range(6, 7), rnd)
    added = git(a.dir, "rev-parse", "HEAD").stdout.strip()
    b.pull("merge")
    b.scribed("run-once")
    git(b.dir, "revert", "--no-edit", added)
    b.push()
    assert "cold_entry_restored" not in _warned(b.scribed("run-once"))
    a.sessions.add(_session(a.sources["riker"], 1, 8, rnd))
    a.scribed("run-once")
    a.commit()
    a.pull("rebase")
    p = a.scribed("run-once", "--json")
    assert "cold_entry_restored" not in _warned(p)
    assert json.loads(p.stdout)["compacted"] == 0
    a.push()
    b.pull("merge")
    b.scribed("run-once")
    for c in (a, b):
        assert _files(c, "worf") == [] and _view_ids(c, "worf") == [], c.name
        assert len(_files(c, "riker")) == 1, c.name
        assert _status(c) == "", (c.name, _status(c))


@pytest.mark.slow
def test_cold_remove_removes_an_entry_for_the_whole_team(team_: tuple[Clone, Clone]) -> None:
    """``scribed cold-remove`` on a: the store file, the view's entry, the hot seed and the search
    hit go; ``retired.txt`` says why; b drops it on its next run and re-seeds its hot file. The
    entry is not compacted again when a's ledger is rebuilt, and a second removal changes nothing."""
    a, b = team_
    share(a, "riker", range(3, 5), random.Random(59))
    b.pull("merge")
    b.scribed("run-once")
    old, new = _files(a, "riker")
    gone = _key(new)
    assert _hot_entry(b, "riker") == gone
    assert "mod_1" in a.scribed("search", "mod_1", "--tier", "cold").stdout.decode()

    p = a.scribed("cold-remove", gone)
    out = p.stdout.decode()
    assert gone in out and "riker" in out and "commit" in out.lower(), out
    assert _files(a, "riker") == [old]
    assert _view_ids(a, "riker") == [_key(old)]
    assert _hot_entry(a, "riker") == _key(old)
    retired = (a.dir / MEMORY / "cold/riker/retired.txt").read_text()
    assert re.search(rf"^{gone} \d{{4}}-\d\d-\d\d removed by hand\b", retired, re.M), retired
    assert "mod_1" not in a.scribed("search", "mod_1", "--tier", "cold").stdout.decode()
    again = a.scribed("cold-remove", gone)
    assert "already" in again.stdout.decode()
    a.commit()
    a.push()

    b.pull("merge")
    p = b.scribed("run-once")
    assert "cold_entry_restored" not in _warned(p)
    assert _files(b, "riker") == [old] and _view_ids(b, "riker") == [_key(old)]
    assert _hot_entry(b, "riker") == _key(old)
    assert "mod_1" not in b.scribed("context", "riker", "--include-cold").stdout.decode()
    assert _status(b) == ""

    for p_ in (a.dir / MEMORY / ".scribed").glob("ledger.sqlite*"):
        p_.unlink()  # the ledger is a cache: rebuilt from the files
    p = a.scribed("run-once", "--json")
    assert json.loads(p.stdout)["compacted"] == 0, "the removed entry was compacted again"
    assert _files(a, "riker") == [old]
    assert gone in (a.dir / MEMORY / "cold/riker/retired.txt").read_text()
    assert _status(a) == ""


def test_cold_remove_names_what_it_cannot_find(team_: tuple[Clone, Clone]) -> None:
    a, _ = team_
    share(a, "riker", range(3, 4), random.Random(61))
    (name,) = _files(a, "riker")
    p = run_cli("--config", str(a.cfg), "cold-remove", "e-0123456789ab", _key(name))
    assert p.returncode == 2, p
    err = p.stderr.decode()
    assert "e-0123456789ab" in err and "cold" in err, err
    assert _files(a, "riker") == [name], "nothing is removed when one id is wrong"
    p = a.scribed("cold-remove", f"{MEMORY}/cold/riker/{name}", "--json")  # its file's path names it too
    assert json.loads(p.stdout)["removed"][0]["id"] == _key(name)
    assert _files(a, "riker") == []


# --- no git, or git that cannot answer: as before -------------------------------------------------
def _root_with_entry(tmp_path: Path) -> tuple[Path, Path, str]:
    root = tmp_path / "demo"
    assert run_cli("demo", str(root)).returncode == 0
    cfg = root / "scribed.toml"
    assert run_cli("--config", str(cfg), "run-once").returncode == 0
    (entry, *_) = sorted((root / MEMORY / "cold" / "riker").glob("*.md"))
    return root, cfg, entry.name


def test_outside_git_a_missing_entry_is_written_back(tmp_path: Path) -> None:
    root, cfg, name = _root_with_entry(tmp_path)
    (root / MEMORY / "cold" / "riker" / name).unlink()
    p = run_cli("--config", str(cfg), "run-once")
    assert p.returncode == 0 and b"cold_entry_restored" in p.stderr
    assert (root / MEMORY / "cold" / "riker" / name).is_file()


def test_git_that_does_not_answer_in_time_keeps_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git that hangs (a huge history, a network file system) is stopped at the time limit; the
    entry is written back, as without git, and the sync says why."""
    root, _, name = _root_with_entry(tmp_path)
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    fake = bin_ / "git"
    fake.write_text("#!/bin/sh\nsleep 5\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:/usr/bin:/bin")
    from scribed.core import gittree

    monkeypatch.setattr(gittree, "TIMEOUT", 0.3)
    layout = Layout(root)
    team_sync.sync(layout)
    (root / MEMORY / "cold" / "riker" / name).unlink()
    res = team_sync.sync(layout)
    assert res.restored and "0.3 s" in res.git_failed, res
    assert (root / MEMORY / "cold" / "riker" / name).is_file()


# --- the ledger rebuilt after a removal, on a session that grew --------------------------------------
def _claude(path: Path, sid: str, turns: list[tuple[str, str]], start: int = 0) -> None:
    with path.open("a") as fh:
        for i, (role, text) in enumerate(turns, start):
            rec = {
                "type": role,
                "uuid": f"{sid}-{i}",
                "parentUuid": f"{sid}-{i - 1}" if i else None,
                "sessionId": sid,
                "timestamp": f"2026-11-20T09:{i:02d}:00.000Z",
                "cwd": "/repo",
                "message": {"role": role, "content": text},
            }
            fh.write(json.dumps(rec) + "\n")


def test_a_removed_part_of_a_session_stays_out_when_the_ledger_is_rebuilt_and_the_session_grows(
    tmp_path: Path,
) -> None:
    root = tmp_path / "r"
    (root / ".squad").mkdir(parents=True)
    src = tmp_path / "t" / "-p"
    src.mkdir(parents=True)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n'
        f'[[sources]]\nkind = "claude"\npath = "{src.parent}"\nagent = "bob"\n'
    )
    sid = "a1000000-0000-0000-0000-000000000001"
    t = src / f"{sid}.jsonl"

    def run() -> dict[str, object]:
        p = run_cli("--config", str(cfg), "run-once", "--force", "--json")
        assert p.returncode == 0, p.stderr.decode()
        return dict(json.loads(p.stdout))

    _claude(
        t,
        sid,
        [
            ("user", "Add the login rate limit, see issue #77."),
            ("assistant", "Done: the limiter is in src/limit.py."),
        ],
    )
    run()
    _claude(
        t,
        sid,
        [
            ("user", "Also mention customer Globex Corp in src/billing.py."),
            ("assistant", "Done: Globex Corp is named in src/billing.py."),
        ],
        start=2,
    )
    run()
    store = root / MEMORY / "cold" / "bob"
    names = sorted(p.name for p in store.glob("*.md"))
    assert len(names) == 2
    (second,) = [n for n in names if "Globex" in (store / n).read_text()]
    p = run_cli("--config", str(cfg), "cold-remove", _key(second))
    assert p.returncode == 0, p.stderr.decode()
    for f in (root / MEMORY / ".scribed").glob("ledger.sqlite*"):
        f.unlink()
    _claude(
        t,
        sid,
        [("user", "Now add a test for the limiter."), ("assistant", "Added tests/test_limit.py; 3 passed.")],
        start=4,
    )
    run()
    texts = (
        "".join(p.read_text() for p in store.glob("*.md")) + (root / MEMORY / "cold" / "bob.md").read_text()
    )
    assert "Globex" not in texts, "the removed part came back with the session's new turns"
    assert "test_limit" in texts
    assert _key(second) in (store / "retired.txt").read_text()


# --- N2: a removal by hand holds on a branch made before it ----------------------------------------
@pytest.mark.slow
def test_an_entry_removed_by_hand_stays_out_on_a_branch_made_before_the_removal(
    team_: tuple[Clone, Clone],
) -> None:
    """a removes an entry with ``cold-remove`` and commits; a branch made before still has its file
    and a ``retired.txt`` without the line. Checked out, the entry is in no view, hot seed, context
    or search hit, and the checkout is left as git wrote it; a teammate who pulled the removal
    keeps it out on that branch too. Reverting the removal's commit brings the entry back."""
    a, b = team_
    share(a, "riker", range(3, 5), random.Random(71))
    old, new = _files(a, "riker")
    gone = _key(new)
    git(a.dir, "branch", "feature")
    git(a.dir, "push", "-q", "origin", "feature")
    a.scribed("cold-remove", gone)
    a.commit()
    removal = git(a.dir, "rev-parse", "HEAD").stdout.strip()
    a.push()
    b.pull("merge")
    b.scribed("run-once")
    git(b.dir, "fetch", "-q", "origin", "feature:feature")

    for c in (a, b):
        git(c.dir, "checkout", "-q", "feature")
        p = c.scribed("run-once")
        assert "cold_entry_restored" not in _warned(p), _warned(p)
        assert _view_ids(c, "riker") == [_key(old)], c.name
        assert _hot_entry(c, "riker") == _key(old), c.name
        assert "mod_1" not in c.scribed("context", "riker", "--include-cold").stdout.decode(), c.name
        assert "mod_1" not in c.scribed("search", "mod_1", "--tier", "cold").stdout.decode(), c.name
        assert _status(c) == "", (c.name, _status(c))  # the branch's committed file is left alone
        assert new in _files(c, "riker")
        git(c.dir, "checkout", "-q", "main")
        c.scribed("run-once")
        assert _view_ids(c, "riker") == [_key(old)] and _status(c) == "", c.name

    git(a.dir, "revert", "--no-edit", removal)  # the documented undo
    a.scribed("run-once")
    assert _view_ids(a, "riker") == [_key(old), gone]
    assert _status(a) == ""


# --- N1: git stash -u of an entry not committed yet ----------------------------------------------
def test_an_entry_stashed_with_git_stash_u_is_not_written_back_and_the_pop_works(
    team_: tuple[Clone, Clone],
) -> None:
    """A new entry (not committed yet) is an untracked file: ``git stash -u`` puts it away. The
    next run leaves it out of the view and writes nothing back, so ``git stash pop`` can restore
    it; after the pop the entry is in the view again."""
    a, _ = team_
    rnd = random.Random(73)
    share(a, "riker", range(3, 4), rnd)
    (old,) = _files(a, "riker")
    a.sessions.add(_session(a.sources["riker"], 5, 9, rnd))
    a.scribed("run-once")
    new = next(n for n in _files(a, "riker") if n != old)
    (a.dir / "README.md").write_text("a code change\n")
    git(a.dir, "stash", "-u", "-q")
    assert _files(a, "riker") == [old]
    p = a.scribed("run-once", "--json")
    assert "cold_entry_restored" not in _warned(p), _warned(p)
    assert json.loads(p.stdout)["compacted"] == 0, "its session was compacted again"
    assert _files(a, "riker") == [old] and _view_ids(a, "riker") == [_key(old)]
    pop = git(a.dir, "stash", "pop", check=False)
    assert pop.returncode == 0, pop.stderr
    a.scribed("run-once")
    assert _files(a, "riker") == [old, new]
    assert _view_ids(a, "riker") == [_key(old), _key(new)]
