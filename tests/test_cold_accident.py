"""A cold entry file emptied, cut short or deleted with a plain ``rm`` is an accident, not git's
doing: git records its own removals in the index (a checkout, a pulled or local ``git rm``, a
revert), so a committed entry file the index still holds while the working tree lacks it, or a file
that is there but holds no entry of its own (empty, truncated), is written back, from this
machine's view or from git's history, and said; nothing leaves the view in silence.

Real git in a temporary folder; the team sync and doctor's report run in-process (fast), the CLI
only where the run's own log line or the ledger is what is tested."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_hot_reseed import Log
from test_team_git import _session

from scribed import config
from scribed.core import team_doctor, team_sync
from scribed.core.cold_sync import SyncResult
from scribed.core.scribe import Scribe
from scribed.tiers.cold import preamble
from scribed.tiers.layout import Layout

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

AGENT = "riker"
COLD = ".squad/memory/cold"


def git(cwd: Path, *args: str) -> str:
    p = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, (args, p.stdout, p.stderr)
    return p.stdout


def _entry(n: int) -> str:
    """A compacted entry of its own: its id, session, file and decision differ from every other."""
    return (
        f"### 2026-11-0{n}T10:03:00Z: Task {n}: fix src/mod_{n}.py, issue #{n}\n"
        f"- provenance: id=e-00000000000{n} · agent={AGENT} · session=s-{n} · source=`/t/s-{n}.jsonl` "
        f"(claude) · lines 1–4 · sha256={n:064x} · ratio=0.5\n\n"
        f"#### Outcome\nDone: tests pass ({n} passed).\n#### Decisions\n"
        f"- use approach alpha-{n} for src/mod_{n}.py\n"
    )


def _repo(tmp_path: Path, name: str = "a", n: int = 2) -> Path:
    """A git work tree whose memory holds ``n`` committed entries of one agent, synced once."""
    root = tmp_path / name
    (root / COLD).mkdir(parents=True)
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / COLD / f"{AGENT}.md").write_text(
        preamble(AGENT) + "\n" + "\n".join(_entry(i) for i in range(1, n + 1))
    )
    team_sync.sync(Layout(root), today="2026-12-01")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memory")
    return root


def _clone(tmp_path: Path, src: Path, name: str) -> Path:
    git(tmp_path, "clone", "-q", str(src), name)
    return tmp_path / name


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _sync(root: Path) -> SyncResult:
    return team_sync.sync(Layout(root), today="2026-12-01")


def _files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / COLD / AGENT).glob("*.md"))}


def _view_ids(root: Path) -> list[str]:
    view = root / COLD / f"{AGENT}.md"
    return re.findall(r"provenance: id=(e-[0-9a-f]+)", view.read_text()) if view.exists() else []


def _status(root: Path) -> str:
    return git(root, "status", "--porcelain", "--untracked-files=all", "--", COLD).strip()


class _Log(Log):
    def debug(self, event: str, **kw: object) -> None:
        self.calls.append(("debug", event, dict(kw)))


def _locked(root: Path, *, reconcile: bool = False) -> _Log:
    """The root lock taken and let go by the core (a sync each way), the ledger reconciled between
    when asked: what a run does before and after its sessions; returns what it logged."""
    scribe = Scribe(config.from_dict({"root": str(root)}))
    log = _Log()
    scribe.log = log  # type: ignore[assignment]
    try:
        with scribe.locked():
            if reconcile:
                scribe.reconcile()
    finally:
        scribe.close()
    return log


def _run(cfg: config.Config) -> _Log:
    """``run-once`` in-process; returns what it logged."""
    scribe = Scribe(cfg)
    log = _Log()
    scribe.log = log  # type: ignore[assignment]
    try:
        scribe.run_once()
    finally:
        scribe.close()
    return log


def _file_of(root: Path, n: int) -> Path:
    (path,) = (root / COLD / AGENT).glob(f"*-e-00000000000{n}.md")
    return path


# --- a file deleted by hand ---------------------------------------------------------------------------
def test_an_entry_file_deleted_with_plain_rm_is_written_back_and_git_rm_still_removes(tmp_path: Path) -> None:
    """``rm`` of a committed entry file: git's index still has it, so it is no removal of git's;
    the sync writes it back from the view (the same bytes: ``git status`` is clean) and says which
    file and why. ``git rm`` of the other: the index agrees, the entry leaves, nothing written."""
    root = _repo(tmp_path)
    before = _files(root)
    one, two = _file_of(root, 1), _file_of(root, 2)
    one.unlink()
    res = _sync(root)
    assert list(res.restored) == ["e-000000000001"], res
    assert res.restored["e-000000000001"].file == f"cold/{AGENT}/{one.name}"
    assert "rm" in res.restored["e-000000000001"].why, res.restored
    assert not res.git_removed
    assert _files(root) == before and _status(root) == ""
    assert _view_ids(root) == ["e-000000000001", "e-000000000002"]
    again = _sync(root)  # and again: nothing to do
    assert not again.restored and not again.agents

    git(root, "rm", "-q", str(two.relative_to(root)))
    res = _sync(root)
    assert res.git_removed == {AGENT: ["e-000000000002"]} and not res.restored, res
    assert not two.exists() and _view_ids(root) == ["e-000000000001"]


def test_a_run_says_which_file_it_wrote_back(tmp_path: Path) -> None:
    """The same through the core (what ``run-once`` and the daemon log): the file is named."""
    root = _repo(tmp_path)
    one = _file_of(root, 1)
    one.unlink()
    log = _locked(root)
    said = [kw for lv, e, kw in log.calls if e == "cold_entry_restored"]
    assert len(said) == 1 and said[0]["file"] == f"cold/{AGENT}/{one.name}", log.calls
    assert "cold_entry_left_by_git" not in log.events("info")
    assert one.is_file()


# --- a file emptied or cut short ----------------------------------------------------------------------
def test_an_emptied_entry_file_is_named_by_doctor_and_written_back(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    before = _files(root)
    one = _file_of(root, 1)
    one.write_text("")
    (got,) = team_doctor.report(Layout(root)).damaged
    assert got["file"].endswith(f"cold/{AGENT}/{one.name}") and "empty" in got["why"], got
    assert "scribed run-once" in got["fix"], got
    res = _sync(root)
    assert "e-000000000001" in res.restored and "empty" in res.restored["e-000000000001"].why, res
    assert not res.git_removed
    assert _files(root) == before and _status(root) == ""
    assert _view_ids(root) == ["e-000000000001", "e-000000000002"]
    assert team_doctor.report(Layout(root)).damaged == []


def test_damaged_entry_files_pulled_from_a_teammate_are_restored_and_every_clone_converges(
    tmp_path: Path,
) -> None:
    """a cuts one entry file short and empties another, commits them; b (whose view has both) and
    a fresh clone c (no view: git's history has them) write both back, with no ``x-`` file for the
    fragment; once b's repair is committed, a, b and c hold the same files."""
    a = _repo(tmp_path, "a", n=3)
    good = _files(a)
    b = _clone(tmp_path, a, "b")
    _sync(b)
    one, two = _file_of(a, 1), _file_of(a, 2)
    one.write_bytes(one.read_bytes()[:60])  # the heading, no provenance line
    two.write_text("")
    git(a, "commit", "-qam", "bad files")
    git(b, "pull", "-q", "--no-rebase", "--no-edit")
    c = _clone(tmp_path, a, "c")

    damaged = sorted(Path(d["file"]).name for d in team_doctor.report(Layout(b)).damaged)
    assert damaged == sorted([one.name, two.name]), damaged
    for clone, source in ((b, "view"), (c, "git")):
        res = _sync(clone)
        assert sorted(res.restored) == ["e-000000000001", "e-000000000002"], (clone.name, res)
        assert all(source in r.why for r in res.restored.values()), (clone.name, res.restored)
        assert _files(clone) == good, clone.name
        assert _view_ids(clone) == [f"e-00000000000{i}" for i in (1, 2, 3)], clone.name
        assert team_doctor.report(Layout(clone)).damaged == []
        assert not _sync(clone).agents, "a second sync changed something"

    git(b, "commit", "-qam", "memory: repaired on b")
    git(c, "commit", "-qam", "memory: repaired on c")  # the same repair: the merge is clean
    for clone in (a, c):
        git(clone, "pull", "-q", "--no-rebase", "--no-edit", str(b), "main")
    for clone in (a, b, c):
        _sync(clone)
        assert _files(clone) == good and _status(clone) == "", clone.name


def test_a_damaged_file_nothing_can_restore_is_left_listed_and_not_renamed(tmp_path: Path) -> None:
    """Outside git, a fresh view and a file cut short: nothing holds the entry, so the file is left
    as it is (no ``x-`` rename, no fragment served as an entry) and doctor keeps naming it."""
    root = tmp_path / "r"
    (root / COLD / AGENT).mkdir(parents=True)
    name = "2026-11-01T100300Z-e-000000000001.md"
    (root / COLD / AGENT / name).write_text(_entry(1)[:60])
    res = _sync(root)
    assert res.unrestored == {f"cold/{AGENT}/{name}": "holds no entry id (cut short?)"}, res
    assert sorted(p.name for p in (root / COLD / AGENT).iterdir()) == [name]
    assert "Task 1" not in _read(root / COLD / f"{AGENT}.md")
    (got,) = team_doctor.report(Layout(root)).damaged
    assert got["file"].endswith(name) and "git log" in got["fix"], got


# --- the view lost it too: the ledger's reconcile -----------------------------------------------------
def test_an_entry_gone_from_file_and_view_comes_back_from_git_not_parked(tmp_path: Path) -> None:
    """``rm`` of the committed file and the entry cut from the view: the ledger still has it and
    git's index too, so it is no removal of git's: the run writes it back from git (the same bytes)
    and names the file, where it used to park it as "left by git" for good (its session gone, it
    could not be compacted again)."""
    root = _repo(tmp_path)
    _locked(root, reconcile=True)  # the ledger, rebuilt from the files
    one = _file_of(root, 1)
    text = one.read_bytes()
    one.unlink()
    view = root / COLD / f"{AGENT}.md"
    view.write_text(
        "".join(c for c in re.split(r"(?m)^(?=### )", view.read_text()) if "id=e-000000000001" not in c)
    )
    log = _locked(root, reconcile=True)
    said = [kw for lv, e, kw in log.calls if e == "cold_entry_restored"]
    assert [kw["file"] for kw in said] == [f"cold/{AGENT}/{one.name}"], log.calls
    assert "cold_entry_lost" not in log.events("warning"), log.calls
    assert one.read_bytes() == text and _status(root) == ""
    assert _view_ids(root) == ["e-000000000001", "e-000000000002"]


# --- outside git: compacted again ---------------------------------------------------------------------
def test_outside_git_an_emptied_file_gone_from_the_view_is_compacted_again_and_said(tmp_path: Path) -> None:
    """No git to restore from and no view holding the entry: its session (the transcript is here) is
    compacted again, the file written again, and the run says so, naming the file."""
    root = tmp_path / "r"
    (root / ".squad").mkdir(parents=True)
    src = tmp_path / "tx"
    src.mkdir()
    _session(src, 1, 3, random.Random(5))
    cfg = config.from_dict(
        {
            "root": str(root),
            "compress": {"backend": "extractive"},
            "sources": [{"kind": "claude", "path": str(src), "agent": AGENT}],
        }
    )
    _run(cfg)
    (entry,) = (root / COLD / AGENT).glob("*.md")
    text = entry.read_bytes()
    entry.write_text("")
    view = root / COLD / f"{AGENT}.md"
    view.write_text(re.split(r"(?m)^(?=### )", view.read_text())[0])
    log = _run(cfg)
    said = {e: kw for lv, e, kw in log.calls if lv == "warning"}
    assert said["cold_file_damaged"]["file"] == f"cold/{AGENT}/{entry.name}", log.calls
    assert "cold_entry_missing" in said, log.calls
    assert entry.read_bytes() == text
    assert len(_view_ids(root)) == 1
    assert team_doctor.report(Layout(root)).damaged == []


def test_a_wiki_page_deleted_with_plain_rm_is_written_back_and_git_rm_still_removes(tmp_path: Path) -> None:
    """The same rule for a wiki page: git's index still has it after a plain ``rm``."""
    root = _repo(tmp_path, n=1)
    wiki = root / ".squad/memory/wiki"
    wiki.mkdir()
    for topic in ("ops", "auth"):
        (wiki / f"{topic}.md").write_text(f"# {topic}\n\n### Fact about {topic}\nPin the {topic} image.\n")
    _sync(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "wiki")
    text = (wiki / "ops.md").read_bytes()
    (wiki / "ops.md").unlink()
    git(root, "rm", "-q", ".squad/memory/wiki/auth.md")
    res = _sync(root)
    assert list(res.wiki.restored) == ["ops.md"] and res.wiki.left == ["auth.md"], res.wiki
    assert (wiki / "ops.md").read_bytes() == text and not (wiki / "auth.md").exists()
