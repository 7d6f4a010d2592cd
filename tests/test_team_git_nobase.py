"""A clone without the merge driver (a teammate who never ran ``scribed git setup``): git's own
text merge leaves markers without a base section, and the repair keeps both versions of the lines
both sides changed, says so, and tells the clone its driver is missing; a spawn's ``scribed
context`` during the merge writes no committed file. Real git, a bare remote and two clones
(:mod:`test_team_git`'s)."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest
from helpers import run_cli
from test_team_git import Clone, _session, git, squad_remote

from scribed.tiers import cold_store, git_merge

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MEMORY = ".squad/memory"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Clone, Clone]:
    """a and b share one entry of riker's; .gitattributes asks for ``merge=scribed`` (committed)
    but neither clone has the driver in its git config."""
    remote = squad_remote(tmp_path)
    a, b = Clone(tmp_path, "a", remote), Clone(tmp_path, "b", remote)
    for c in (a, b):
        git(c.dir, "config", "merge.conflictStyle", "merge")  # git's default: no base section
    a.scribed("git", "setup")
    git(a.dir, "config", "--remove-section", "merge.scribed")
    a.sessions.add(_session(a.sources["riker"], 1, 20, random.Random(3)))
    a.scribed("run-once")
    a.commit()
    a.push()
    b.pull("merge")
    b.scribed("run-once")
    return a, b


def _entry(c: Clone) -> Path:
    (p,) = [p for p in (c.dir / MEMORY / "cold/riker").glob("*.md")]
    return p


def _edit(c: Clone, line: str) -> None:
    p = _entry(c)
    text = p.read_text()
    lines = text.rstrip("\n").split("\n")
    new = "\n".join([*lines[:-1], line]) + "\n"  # the entry's last line, changed
    assert new != text, text
    p.write_text(new)
    c.commit()


def _conflict(a: Clone, b: Clone) -> Path:
    """The same line of the entry changed two ways, a's pushed, b's pulled: git's markers, no base."""
    _edit(a, "- note: alice (short)")
    a.push()
    _edit(b, "- note: bob with a much longer correction text here")
    p = git(b.dir, "pull", "-q", "--no-rebase", "--no-edit", check=False)
    assert "CONFLICT" in p.stdout + p.stderr, p.stdout + p.stderr
    f = _entry(b)
    text = f.read_text()
    assert "<<<<<<<" in text and "|||||||" not in text, text
    return f


def test_a_conflict_without_the_base_keeps_both_versions_and_says_so(pair: tuple[Clone, Clone]) -> None:
    a, b = pair
    f = _conflict(a, b)
    p = b.scribed("run-once")
    log = (p.stdout + p.stderr).decode()
    text = f.read_text()
    assert "<<<<<<<" not in text, text
    assert "alice (short)" in text and "bob with a much longer" in text, text
    assert "without_base" in log and cold_store.key_of_name(f.name) in log, log
    view = (b.dir / MEMORY / "cold/riker.md").read_text()
    assert "alice (short)" in view and "bob with a much longer" in view


def test_a_wiki_conflict_without_the_base_keeps_both_versions(pair: tuple[Clone, Clone]) -> None:
    a, b = pair
    for c, text in ((a, "Deploy on Tuesdays."), (b, "Deploy on Mondays.")):
        p = run_cli(
            "--config",
            str(c.cfg),
            "wiki-write",
            "ops",
            "--agent",
            "riker",
            "--title",
            "Deploy day",
            input=text.encode(),
        )
        assert p.returncode == 0, p.stderr.decode()
        c.commit()
    a.push()
    p = git(b.dir, "pull", "-q", "--no-rebase", "--no-edit", check=False)
    page = b.dir / MEMORY / "wiki/ops.md"
    assert "<<<<<<<" in page.read_text(), "both sides changed the same line: git must leave a conflict"
    p2 = b.scribed("run-once")
    text = page.read_text()
    assert "<<<<<<<" not in text and "Tuesdays" in text and "Mondays" in text, text
    assert "without_base" in (p2.stdout + p2.stderr).decode()


def test_doctor_and_run_once_name_a_missing_merge_driver(pair: tuple[Clone, Clone]) -> None:
    _, b = pair
    out = b.scribed("doctor").stdout.decode()
    assert "merge.scribed.driver" in out and "scribed git setup" in out, out
    p = b.scribed("run-once")
    assert "merge_driver_missing" in (p.stdout + p.stderr).decode()
    assert (p.stdout + p.stderr).decode().count("merge_driver_missing") == 1  # once a run
    b.scribed("git", "setup")
    out = b.scribed("doctor").stdout.decode()
    assert "merge.scribed.driver" not in out, out


def test_context_during_a_merge_writes_no_committed_file(pair: tuple[Clone, Clone]) -> None:
    a, b = pair
    f = _conflict(a, b)
    before = f.read_bytes()
    out = b.scribed("context", "riker", "--include-cold").stdout.decode()
    assert f.read_bytes() == before  # the file being resolved is as git left it
    assert "alice (short)" in out and "bob with a much longer" in out and "<<<<<<<" not in out, out
    status = git(b.dir, "status", "--porcelain").stdout
    assert re.search(r"^UU .*cold/riker/", status, re.M), status
    b.scribed("run-once")  # the repair is the run's
    assert "<<<<<<<" not in f.read_text()


def test_a_repair_without_the_base_merges_the_marked_lines_only() -> None:
    """Unit: the conflicting region holds both versions, one after the other; the rest once."""
    text = "### T\n- a\n<<<<<<< HEAD\n- ours line\n=======\n- theirs line\n>>>>>>> x\n- z\n"
    fixed = git_merge.repair("wiki", text)
    assert fixed is not None and "- ours line" in fixed and "- theirs line" in fixed
    assert fixed.count("- a\n") == 1 and fixed.count("- z\n") == 1


def test_a_reverted_wiki_write_comes_back_and_the_warning_says_how_to_retire_it(
    pair: tuple[Clone, Clone],
) -> None:
    """scribed never deletes a block, so one gone from a page is lost to it, a ``git revert`` of a
    wiki-write too: it is written back, and the warning gives the command that retires a fact."""
    a, _ = pair
    for title, text in (("One", "Fact one."), ("Deploy day", "Deploy with --force on Fridays.")):
        p = run_cli(
            "--config",
            str(a.cfg),
            "wiki-write",
            "ops",
            "--agent",
            "riker",
            "--title",
            title,
            input=text.encode(),
        )
        assert p.returncode == 0, p.stderr.decode()
        a.commit()
    a.scribed("run-once")
    git(a.dir, "revert", "--no-edit", "HEAD")
    log = (lambda p: (p.stdout + p.stderr).decode())(a.scribed("run-once"))
    assert "wiki_block_restored" in log, log
    hinted = f"scribed --config {a.cfg} wiki-deprecate ops 'Deploy day' --agent AGENT"  # its config kept
    assert hinted in log, log
    p = run_cli(
        "--config", str(a.cfg), "wiki-deprecate", "ops", "Deploy day", "--agent", "riker", "--reason", "wrong"
    )
    assert p.returncode == 0, p.stderr.decode()
    page = (a.dir / MEMORY / "wiki/ops.md").read_text()
    assert page.index("## Superseded") < page.index("Fridays"), page


def _compaction(source: str) -> str:
    return (
        "### 2026-11-10T10:03:00Z: Fix the login flake in src/auth.py, issue #12\n"
        f"- provenance: id=e-a718bb8bb3c7 · agent=riker · session=s-same · source=`{source}` (claude)"
        " · lines 1–4 · sha256=dc63 · ratio=0.510\n\n#### Outcome\nDone: tests pass (5 passed).\n"
        "#### Decisions\n- use an injected clock in src/auth.py\n"
    )


def test_one_session_compacted_in_two_clones_repairs_to_one_provenance_line(tmp_path: Path) -> None:
    """Without the driver, two clones' compactions of one session (same id, each its own source
    path) meet as git's add/add markers, the provenance line in conflict: the repair keeps one
    provenance line (F5: it kept both), the same one whichever clone repairs."""
    got = []
    for ours, theirs in (("/home/a/s.jsonl", "/home/b/s.jsonl"), ("/home/b/s.jsonl", "/home/a/s.jsonl")):
        (tmp_path / "ours").write_text(_compaction(ours))
        (tmp_path / "base").write_text("")
        (tmp_path / "theirs").write_text(_compaction(theirs))
        p = git(tmp_path, "merge-file", "-p", "ours", "base", "theirs", check=False)
        assert "<<<<<<<" in p.stdout and "|||||||" not in p.stdout, p.stdout
        f = cold_store.read_file(tmp_path / "2026-11-10T100300Z-e-a718bb8bb3c7.md", p.stdout)
        (e,) = f.entries
        assert e.text.count("- provenance: ") == 1, e.text
        got.append(e.text)
    assert got[0] == got[1]
