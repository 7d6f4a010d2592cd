"""Tier files merged entry by entry: the merge driver, the repair of a file git left with conflict
markers, and the store's file names (scribed.tiers.git_merge, scribed.tiers.cold_store)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import run_cli

from scribed.compress.entry import split_entries
from scribed.tiers import cold_store, git_merge, wiki_merge


def entry(i: int, body: str = "", day: int = 1) -> str:
    return (
        f"### 2026-11-{day:02d}T10:00:{i:02d}Z: task {i}\n- provenance: id=e-{i:012x} · agent=a · session=s{i} · \n\n"
        f"#### Goal\ntask {i}\n#### Key points\n- common line\n{body}"
    )


def test_sides_splits_both_versions_and_drops_a_diff3_base() -> None:
    text = "a\n<<<<<<< HEAD\nY\n||||||| base\nB\n=======\nX\n>>>>>>> x\nz\n"
    assert cold_store.sides(text) == ("a\nY\nz\n", "a\nX\nz\n")
    assert cold_store.sides("no markers\n") is None
    fenced = "```\n<<<<<<< HEAD\n```\n"
    assert cold_store.sides(fenced) is None or "<<<<<<<" in cold_store.sides(fenced)[0]


def test_merging_entries_keeps_each_once_and_is_idempotent() -> None:
    rnd = random.Random(1)
    for _ in range(200):
        base = [entry(i) for i in range(rnd.randint(0, 3))]
        ours = base + [entry(10 + i, day=2) for i in range(rnd.randint(0, 2))]
        theirs = base + [entry(20 + i, day=2) for i in range(rnd.randint(0, 2))]
        merged = git_merge.merge_entries("".join(ours), "".join(theirs))
        ids = [e.entry_id for e in split_entries(merged)[1]]
        assert sorted(ids) == sorted({e.entry_id for t in ours + theirs for e in split_entries(t)[1]})
        assert git_merge.merge_entries(merged, "".join(ours)) == merged
        assert git_merge.merge_entries("".join(theirs), merged) == merged  # the same whichever side
        assert "<<<<<<<" not in merged


def test_two_versions_of_one_entry_resolve_the_same_on_every_clone() -> None:
    short, long = entry(1), entry(1, "- a longer key point\n")
    assert git_merge.merge_entries(short, long) == git_merge.merge_entries(long, short)
    assert "a longer key point" in git_merge.merge_entries(short, long)


WIKI = (
    "# Decisions\n\n### Use Argon2\nUse Argon2 for hashing.\n*Source:* 2026-11-01 · entry=e-000000000001\n\n"
)


def test_wiki_blocks_of_both_sides_once_and_a_reversal_wins() -> None:
    ours = WIKI + "### Cap the LRU at 512\nCap it.\n*Source:* 2026-11-02 · entry=e-000000000002\n\n"
    theirs = WIKI + "### Pin workers\nPin them.\n*Source:* 2026-11-03 · entry=e-000000000003\n\n"
    merged = wiki_merge.merge_wiki(ours, theirs)
    assert [t for t in merged.splitlines() if t.startswith("### ")] == [
        "### Use Argon2",
        "### Cap the LRU at 512",
        "### Pin workers",
    ]
    assert wiki_merge.merge_wiki(merged, theirs) == merged
    reversed_ = (
        "# Decisions\n\n## Superseded\n\n### Use Argon2\n*Status:* superseded\nUse Argon2 for hashing.\n"
    )
    both = wiki_merge.merge_wiki(WIKI, reversed_)
    assert both.count("### Use Argon2") == 1 and both.index("## Superseded") < both.index("### Use Argon2")
    assert wiki_merge.merge_wiki(reversed_, WIKI).count("### Use Argon2") == 1


def test_retired_lines_merge_as_a_set() -> None:
    a = "e-000000000001 left cold\ne-000000000002 folded into d-000000000009\n"
    b = "e-000000000003 left cold\ne-000000000001 left cold\n"
    merged = git_merge.merge_lines(a, b)
    assert merged.splitlines() == sorted(merged.splitlines()) and len(merged.splitlines()) == 3


def test_retired_lines_are_dated_and_bounded() -> None:
    """retired.txt does not grow without bound: a line older than RETIRED_DAYS goes, a recent one
    and an undated one (written before lines were dated) stay."""
    rows = {
        "e-000000000001": "2025-01-02 left cold",
        "e-000000000002": "2026-11-30 folded into d-000000000009",
        "e-000000000003": "left cold",
    }
    got = cold_store.prune_retired(rows, "2026-12-06")
    assert set(got) == {"e-000000000002", "e-000000000003"}
    assert cold_store.prune_retired(rows, "2025-06-01") == rows


def test_a_store_file_with_markers_is_read_as_both_versions(tmp_path: Path) -> None:
    """Markers without a base: one entry holding the lines of both versions, none dropped."""
    one, two = entry(1), entry(1, "- more\n")
    e = split_entries(one)[1][0]
    p = tmp_path / cold_store.file_name(e)
    got = cold_store.read_file(p, f"<<<<<<< HEAD\n{one}=======\n{two}>>>>>>> theirs\n")
    assert got.damaged and got.unbased and len(got.entries) == 1
    assert got.entries[0].text == two
    other = entry(1, "- less\n")
    got = cold_store.read_file(p, f"<<<<<<< HEAD\n{two}=======\n{other}>>>>>>> theirs\n")
    assert len(got.entries) == 1 and "- more\n" in got.entries[0].text and "- less\n" in got.entries[0].text
    assert not cold_store.read_file(p, one).damaged


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_driver_merges_a_wiki_page_git_would_conflict_on(tmp_path: Path) -> None:
    def git(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=check)

    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    git("config", "user.email", "t@example.invalid")
    git("config", "user.name", "t")
    (repo / ".squad").mkdir()
    p = run_cli("git", "setup", "--root", str(repo))
    assert p.returncode == 0, p.stderr
    assert b"change(s)" in p.stdout
    again = run_cli("git", "setup", "--root", str(repo))
    assert b"nothing to change" in again.stdout  # idempotent
    wiki = repo / ".squad/memory/wiki/decisions.md"
    wiki.parent.mkdir(parents=True)
    wiki.write_text(WIKI)
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "other")
    wiki.write_text(WIKI + "### Pin workers\nPin them.\n*Source:* 2026-11-03 · entry=e-000000000003\n")
    git("commit", "-qam", "theirs")
    git("checkout", "-q", "-")
    wiki.write_text(WIKI + "### Cap the LRU\nCap it.\n*Source:* 2026-11-02 · entry=e-000000000002\n")
    git("commit", "-qam", "ours")
    merged = git("merge", "-q", "--no-edit", "other", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = wiki.read_text()
    assert "<<<<<<<" not in text and "### Pin workers" in text and "### Cap the LRU" in text
    assert ".squad/memory/wiki/**/*.md merge=scribed" in (repo / ".gitattributes").read_text()
    assert "/hot/" in (repo / ".squad/memory/.gitignore").read_text()


def test_git_setup_outside_a_work_tree_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".squad").mkdir()
    p = run_cli("git", "setup", "--root", str(tmp_path))
    assert p.returncode == 2 and b"not in a git work tree" in p.stderr and b"Traceback" not in p.stderr


def test_a_tier_file_left_with_markers_is_named_never_served_and_repaired(tmp_path: Path) -> None:
    root = tmp_path / "r"
    memory = root / ".squad/memory"
    (memory / "hot").mkdir(parents=True)
    (memory / "wiki").mkdir()
    hot = memory / "hot/picard.md"
    hot.write_text(
        "# Hot memory: picard\n\n<<<<<<< HEAD\nCurrent task: fix the login flake in tests/test_login.py\n"
        "=======\nCurrent task: tune the cache in src/cache.py\n>>>>>>> theirs\n"
    )
    wiki = memory / "wiki/decisions.md"
    ours = WIKI + "### Cap the LRU\nCap it.\n*Source:* 2026-11-02 · entry=e-000000000002\n"
    theirs = WIKI + "### Pin workers\nPin them.\n*Source:* 2026-11-03 · entry=e-000000000003\n"
    wiki.write_text(f"{WIKI}<<<<<<< HEAD\n{ours[len(WIKI) :]}=======\n{theirs[len(WIKI) :]}>>>>>>> theirs\n")
    ctx = run_cli("context", "picard", "--situation", "post-incident", "--root", str(root))
    assert ctx.returncode == 0, ctx.stderr
    assert (
        b"<<<<<<<" not in ctx.stdout and b"=======" not in ctx.stdout and b"fix the login flake" in ctx.stdout
    )
    doc = run_cli("doctor", "--root", str(root))
    assert doc.stdout.count(b"tier file with conflict markers") == 2, doc.stdout
    run = run_cli("run-once", "--root", str(root))
    assert run.returncode == 0, run.stderr
    assert "<<<<<<<" not in hot.read_text() and "fix the login flake" in hot.read_text()
    text = wiki.read_text()
    assert "<<<<<<<" not in text and "### Pin workers" in text and "### Cap the LRU" in text
    assert b"conflict markers" not in run_cli("doctor", "--root", str(root)).stdout


@pytest.mark.parametrize("backend", ["orphan", "two-layer"])
@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("run-once",), None),
        (("promote",), None),
        (("wiki-write", "--agent", "picard", "decisions"), b"Use Argon2."),
    ],
)
def test_a_state_branch_backend_is_refused_before_anything_is_written(
    tmp_path: Path, backend: str, args: tuple[str, ...], stdin: bytes | None
) -> None:
    squad = tmp_path / ".squad"
    squad.mkdir()
    (squad / "config.json").write_text(json.dumps({"stateBackend": backend}))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    p = run_cli(*args, "--root", str(tmp_path), input=stdin)
    assert p.returncode == 2, p.stderr
    err = p.stderr.decode()
    assert f"stateBackend='{backend}'" in err and "nothing was written" in err and len(err.splitlines()) == 1
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
