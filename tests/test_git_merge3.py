"""The merge driver merges three ways, with real git: a bare remote, two clones, the driver
configured by ``scribed git setup``. A block or entry one teammate changed takes that change
whatever the other side did elsewhere; changes to different lines of one block or entry are both
kept (as ``git merge-file`` keeps them); only the same lines changed differently are a conflict,
which git reports, with both versions in the file and nothing dropped."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest
from helpers import run_cli
from test_team_git import Clone, _session, clone_pair, git

from scribed.compress.entry import split_entries
from scribed.tiers import cold_store, git_merge, wiki_merge

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

WIKI = ".squad/memory/wiki/conventions.md"
CACHE = "Use sqlite for local caches; redis for shared ones."


def _entry_text(i: int, *lines: str) -> str:
    return (
        f"### 2026-11-01T10:00:{i:02d}Z: task {i}\n- provenance: id=e-{i:012x} · agent=a · session=s{i} · \n\n"
        "#### Key points\n" + "".join(f"{x}\n" for x in lines)
    )


KEY = ("- one", "- two", "- three", "- four", "- five")


def _both_ways(kind: str, base: str, ours: str, theirs: str) -> git_merge.Merged:
    """The merge, checked to hold the same whichever side merges (a wiki page's blocks may come in
    another order: this side's first, as git's text merge puts them)."""
    got = git_merge.merge_file(kind, ours, theirs, base)
    other = git_merge.merge_file(kind, theirs, ours, base)
    assert got.conflicts == other.conflicts
    if kind == "entries":
        assert got.text == other.text
    else:
        assert sorted(wiki_merge.chunks(got.text)[1]) == sorted(wiki_merge.chunks(other.text)[1])
    return got


@pytest.mark.parametrize(
    ("ours", "theirs", "want"),
    [
        (KEY, KEY, KEY),  # unchanged on both
        (("- one", "- TWO", *KEY[2:]), KEY, ("- one", "- TWO", *KEY[2:])),  # one side changed it
        (("- one", "- TWO", *KEY[2:]),) * 2 + (("- one", "- TWO", *KEY[2:]),),  # the same change twice
        (
            KEY[1:],
            ("- one", "- two", "- three", "- four", "- FIVE"),
            ("- two", "- three", "- four", "- FIVE"),
        ),
        ((*KEY, "- six"), ("- zero", *KEY), ("- zero", *KEY, "- six")),  # lines added at both ends
    ],
)
def test_an_entry_changed_on_one_or_both_sides_merges_three_ways(
    ours: tuple[str, ...], theirs: tuple[str, ...], want: tuple[str, ...]
) -> None:
    got = _both_ways("entries", _entry_text(1, *KEY), _entry_text(1, *ours), _entry_text(1, *theirs))
    assert got.text == got.marked == _entry_text(1, *want) and got.conflicts == ()


def test_entries_added_deleted_and_changed_follow_the_base() -> None:
    one, two, three = _entry_text(1, *KEY), _entry_text(2, *KEY), _entry_text(3, "- new")
    changed = _entry_text(2, "- one", "- TWO", *KEY[2:])
    base = one + "\n" + two

    def ids(text: str) -> list[str | None]:
        return [e.entry_id for e in split_entries(text)[1]]

    assert ids(_both_ways("entries", base, base + "\n" + three, base).text) == [
        "e-000000000001", "e-000000000002", "e-000000000003",
    ]  # fmt: skip
    assert ids(_both_ways("entries", base, one, base).text) == ["e-000000000001"]  # deleted, unchanged: goes
    kept = _both_ways("entries", base, one, one + "\n" + changed).text  # deleted here, changed there
    assert ids(kept) == ["e-000000000001", "e-000000000002"] and "- TWO" in kept
    # added on both sides with no base: two compactions of one session, the longer (as before)
    assert _both_ways("entries", "", two, changed + "- more\n").text == changed + "- more\n"


def test_one_line_changed_two_ways_is_a_conflict_with_both_versions(tmp_path: Path) -> None:
    base = _entry_text(1, *KEY)
    ours = _entry_text(1, "- one", "- TWO (alice)", *KEY[2:])
    theirs = _entry_text(1, "- one", "- Two (bob)", *KEY[2:])
    got = _both_ways("entries", base, ours, theirs)
    assert got.conflicts == ("entry e-000000000001",)
    assert got.text == _entry_text(1, "- one", "- TWO (alice)", "- Two (bob)", *KEY[2:])
    assert "<<<<<<< ours\n- TWO (alice)\n||||||| base\n- two\n=======\n- Two (bob)\n>>>>>>> theirs\n" in (
        git_merge.merge_file("entries", ours, theirs, base).marked
    )
    assert git_merge.repair("entries", got.marked) == got.text  # the markers carry the base
    path = tmp_path / cold_store.file_name(split_entries(base)[1][0])
    stored = cold_store.read_file(path, got.marked)
    assert stored.damaged and [e.text for e in stored.entries] == [got.text]


PAGE = "# Wiki: conventions\n\n> Team conventions.\n\n"


def _block(title: str, body: str, *sources: str) -> str:
    prov = "; ".join(f"2026-11-0{i} · entry=w-{i:012x} · author={a} · via=wiki-write" for i, a in sources)
    n = len({a for _, a in sources})
    conf = f"{len(sources)} session{'s' * (len(sources) != 1)}, {n} agent{'s' * (n != 1)}"
    return f"### {title}\n{body}\n\n*Source:* {prov} | confidence: {conf}\n"


def _page(*blocks: str) -> str:
    return PAGE + "\n".join(blocks)


CACHE_B = _block("Cache backend", CACHE, (1, "riker"))
FLAGS_B = _block("Feature flags", "Flags live in config/flags.toml.", (2, "worf"))
POOL_B = _block("Pool size", "Keep the pool at 20.", (3, "data"))


def test_wiki_blocks_merge_three_ways() -> None:
    fixed = _block("Cache backend", "Use sqlite for every cache.", (1, "riker"))
    base = _page(CACHE_B, POOL_B)
    # D7: a correction on one side, a new block on the other
    got = _both_ways("wiki", base, _page(fixed, POOL_B), _page(CACHE_B, POOL_B, FLAGS_B))
    assert got.text == _page(fixed, POOL_B, FLAGS_B) and got.conflicts == ()
    # deleted on one side and unchanged on the other goes; changed on the other stays
    assert _both_ways("wiki", base, _page(POOL_B), _page(CACHE_B, POOL_B, FLAGS_B)).text == _page(
        POOL_B, FLAGS_B
    )
    assert _both_ways("wiki", base, _page(POOL_B), _page(fixed, POOL_B)).text == _page(fixed, POOL_B)
    # two lines of one block changed on the two sides: both changes
    two = CACHE_B.replace("### Cache backend\n", "### Cache backend\nFirst line.\n")
    both = _block("Cache backend", f"First line.\n{CACHE}\nLast line.", (1, "riker"))
    last = _block("Cache backend", f"{CACHE}\nLast line.", (1, "riker"))
    assert _both_ways("wiki", _page(CACHE_B), _page(two), _page(last)).text == _page(both)


def test_wiki_evidence_added_on_both_sides_is_the_union_of_sources() -> None:
    base = _page(CACHE_B)
    ours = _page(_block("Cache backend", CACHE, (1, "riker"), (4, "data")))
    theirs = _page(_block("Cache backend", "Use sqlite for every cache.", (1, "riker"), (5, "worf")))
    got = _both_ways("wiki", base, ours, theirs)
    assert got.text == _page(
        _block("Cache backend", "Use sqlite for every cache.", (1, "riker"), (4, "data"), (5, "worf"))
    )
    # the same fact added on both sides (no base block): one block, both sources
    new = _both_ways(
        "wiki", PAGE, _page(_block("X", "x.", (1, "riker"))), _page(_block("X", "x.", (2, "worf")))
    )
    assert new.text == _page(_block("X", "x.", (1, "riker"), (2, "worf")))


def test_a_block_moved_under_superseded_keeps_the_other_sides_change() -> None:
    base = _page(CACHE_B, POOL_B)
    sup = "## Superseded\n\n" + CACHE_B.replace("\n", "\n*Status:* superseded 2026-11-09\n", 1)
    moved = _page(POOL_B, sup)
    sourced = _page(_block("Cache backend", CACHE, (1, "riker"), (6, "worf")), POOL_B)
    got = _both_ways("wiki", base, moved, sourced)
    assert got.conflicts == () and got.text.count("### Cache backend") == 1
    assert got.text.index("## Superseded") < got.text.index("### Cache backend")
    assert "author=worf" in got.text and "*Status:* superseded 2026-11-09" in got.text
    assert _both_ways("wiki", base, moved, base).text == moved  # a move and nothing else


def test_a_wiki_conflict_keeps_both_and_the_index_never_conflicts() -> None:
    base = _page(CACHE_B, POOL_B)
    ours = _page(CACHE_B.replace(CACHE, "Use sqlite for every cache."), POOL_B)
    theirs = _page(CACHE_B.replace(CACHE, "Use redis for every cache.\n======="), POOL_B, FLAGS_B)
    got = _both_ways("wiki", base, ours, theirs)
    assert got.conflicts == ("block '### Cache backend'",)
    assert "Use redis for every cache.\n=======\nUse sqlite for every cache.\n" in got.text  # sorted
    assert git_merge.repair("wiki", git_merge.merge_file("wiki", ours, theirs, base).marked) == got.text
    assert _blank_lines_between_blocks(got.text) == [1, 1]
    index = "# Wiki index\n\n- [db](db.md): facts. (1 active)\n"
    two = git_merge.merge_file(
        "index", index.replace("1 active", "2 active"), index.replace("1 active", "3 active"), index
    )
    assert two.conflicts == () and two.text == index.replace("1 active", "2 active")


def test_two_way_merges_keep_one_blank_line_between_blocks() -> None:
    """M2: the last block of one side ends without a blank line; the other side's block follows."""
    got = wiki_merge.merge_wiki(_page(CACHE_B), _page(CACHE_B, FLAGS_B))
    assert got == _page(CACHE_B, FLAGS_B) and _blank_lines_between_blocks(got) == [1]


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Clone, Clone]:
    """Two clones of one remote, each set up as docs/teams.md says (the driver in its git config)."""
    a, b = clone_pair(tmp_path, driver=True)
    assert "scribed git merge-file" in git(b.dir, "config", "merge.scribed.driver").stdout
    return a, b


def _write(c: Clone, agent: str, text: str, title: str = "", topic: str = "conventions") -> None:
    args = ["--config", str(c.cfg), "wiki-write", topic, "--agent", agent]
    p = run_cli(*args, *(["--title", title] if title else []), input=text.encode())
    assert p.returncode == 0, p.stderr.decode()


def _pull(c: Clone, how: str) -> tuple[int, str]:
    args = ["pull", "--no-edit", "--no-rebase"] if how == "merge" else ["pull", "--rebase"]
    p = git(c.dir, *args, check=False)
    return p.returncode, p.stdout + p.stderr


def _edit(c: Clone, rel: str, old: str, new: str, message: str) -> None:
    path = c.dir / rel
    text = path.read_text()
    assert old in text, (old, text)
    path.write_text(text.replace(old, new))
    git(c.dir, "commit", "-qam", message)


def _blank_lines_between_blocks(text: str) -> list[int]:
    """How many blank lines precede each ``### `` heading after the first."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("### ") and any(x.startswith("### ") for x in lines[:i]):
            n = 0
            while lines[i - 1 - n].strip() == "":
                n += 1
            out.append(n)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("how", ["merge", "rebase"])
def test_a_corrected_wiki_fact_survives_a_teammates_new_fact(pair: tuple[Clone, Clone], how: str) -> None:
    """D7: Alice corrects a fact by hand; Bob, not pulled, files another fact on the same page.
    The merge keeps Alice's correction (Bob never touched that block) and Bob's fact, one blank
    line between blocks (M2), on both clones."""
    a, b = pair
    _write(a, "riker", CACHE, "Cache backend")
    a.commit()
    a.push()
    b.pull("merge")
    _edit(a, WIKI, CACHE, "Use sqlite for every cache.", "alice: correct the cache fact")
    a.push()
    _write(b, "worf", "Feature flags live in config/flags.toml.", "Feature flags")
    b.commit()
    code, out = _pull(b, how)
    assert code == 0, out
    page = (b.dir / WIKI).read_text()
    assert "Use sqlite for every cache." in page and CACHE not in page, page
    assert "Feature flags live in config/flags.toml." in page and "<<<<<<<" not in page
    assert _blank_lines_between_blocks(page) == [1], page
    b.scribed("run-once")  # nothing brings the stale copy back
    b.commit()
    b.push()
    a.pull("merge")
    for c in (a, b):
        page = (c.dir / WIKI).read_text()
        assert "Use sqlite for every cache." in page and CACHE not in page, (c.name, page)
        assert "Feature flags" in page


@pytest.mark.slow
def test_two_teammates_adding_evidence_to_one_fact_keep_both_sources(pair: tuple[Clone, Clone]) -> None:
    """Both clones file the same fact again (each adds its source to the block's one provenance
    line): the merge keeps every source and counts them, where one version used to win."""
    a, b = pair
    _write(a, "riker", "Run postgres 16 in CI.", topic="db")
    a.commit()
    a.push()
    b.pull("merge")
    _write(a, "data", "Run postgres 16 in CI.", topic="db")
    a.commit()
    a.push()
    _write(b, "worf", "Run postgres 16 in CI.", topic="db")
    b.commit()
    code, out = _pull(b, "merge")
    assert code == 0, out
    page = (b.dir / ".squad/memory/wiki/db.md").read_text()
    prov = [line for line in page.splitlines() if line.startswith("*Source:*")]
    assert len(prov) == 1, page
    assert all(f"author={x}" in prov[0] for x in ("riker", "data", "worf")), prov
    assert prov[0].endswith("| confidence: 3 sessions, 3 agents"), prov


def _entry(c: Clone) -> Path:
    files = sorted((c.dir / ".squad/memory/cold/riker").glob("*.md"))
    assert len(files) == 1, files
    return files[0]


@pytest.fixture
def shared_entry(pair: tuple[Clone, Clone]) -> tuple[Clone, Clone, str]:
    """One cold entry both clones have (compacted on a, pulled by b)."""
    a, b = pair
    _session(a.sources["riker"], 1, 20, random.Random(5))
    a.scribed("run-once")
    a.commit()
    a.push()
    b.pull("merge")
    rel = _entry(a).relative_to(a.dir).as_posix()
    assert (b.dir / rel).read_text() == (a.dir / rel).read_text()
    return a, b, rel


def _lines(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["merge", "rebase"])
def test_two_hand_edits_of_one_cold_entry_are_both_kept(
    shared_entry: tuple[Clone, Clone, str], how: str
) -> None:
    """D6: Alice takes a line out of an entry (say it held a secret); Bob fixes its decision. The
    merge has both edits: the line stays out (the longer version, the one still holding it, used
    to win) and Bob's fix is in."""
    a, b, rel = shared_entry
    text = (a.dir / rel).read_text()
    done = _lines(text, "Done: ")[0]
    decision = _lines(text, "- use a token bucket")[0]
    _edit(a, rel, done + "\n", "", "alice: take the line out")
    a.push()
    _edit(b, rel, decision, decision + " (bob: confirmed with ops)", "bob: fix the decision")
    code, out = _pull(b, how)
    assert code == 0, out
    merged = (b.dir / rel).read_text()
    assert done not in merged and "(bob: confirmed with ops)" in merged and "<<<<<<<" not in merged, merged
    assert merged == text.replace(done + "\n", "").replace(decision, decision + " (bob: confirmed with ops)")
    b.scribed("run-once")
    assert (b.dir / rel).read_text() == merged
    assert done not in (b.dir / ".squad/memory/cold/riker.md").read_text()  # the view follows the store
    b.commit()
    b.push()
    a.pull("merge")
    a.scribed("run-once")
    assert (a.dir / rel).read_text() == merged


@pytest.mark.slow
def test_one_line_changed_differently_on_both_clones_is_a_conflict_that_keeps_both(
    shared_entry: tuple[Clone, Clone, str],
) -> None:
    """The same line of an entry and of a wiki fact changed two ways is a true conflict: git says
    so (exit 1, CONFLICT), the file holds both versions between markers around those lines only
    (the rest merged), and ``scribed run-once`` (docs/teams.md, "After a conflict") keeps both."""
    a, b, rel = shared_entry
    _write(a, "riker", CACHE, "Cache backend")
    a.commit()
    a.push()
    b.pull("merge")
    text = (a.dir / rel).read_text()
    decision = _lines(text, "- use a token bucket")[0]
    _edit(a, rel, decision, "- use a leaky bucket keyed by tenant", "alice: the bucket")
    _edit(a, WIKI, CACHE, "Use sqlite for every cache.", "alice: the cache")
    a.push()
    _edit(b, rel, decision, "- use a sliding window keyed by tenant", "bob: the bucket")
    _edit(b, WIKI, CACHE, "Use redis for every cache.", "bob: the cache")
    _write(b, "worf", "Feature flags live in config/flags.toml.", "Feature flags")
    b.commit()
    code, out = _pull(b, "merge")
    assert code != 0 and "CONFLICT" in out, out
    assert sorted(git(b.dir, "diff", "--name-only", "--diff-filter=U").stdout.split()) == sorted([rel, WIKI])
    entry, page = (b.dir / rel).read_text(), (b.dir / WIKI).read_text()
    for got, one, two in (
        (entry, "leaky bucket", "sliding window"),
        (page, "Use sqlite for every cache.", "Use redis for every cache."),
    ):
        assert got.count("<<<<<<< ") == 1 and one in got and two in got, got
    assert re.search(r"^Feature flags live in config/flags.toml.$", page, re.M), page  # outside the markers
    assert page.index("Feature flags live") > page.index(">>>>>>> ")
    b.scribed("run-once")
    entry, page = (b.dir / rel).read_text(), (b.dir / WIKI).read_text()
    for got, one, two in (
        (entry, "leaky bucket", "sliding window"),
        (page, "Use sqlite for every cache.", "Use redis for every cache."),
    ):
        assert "<<<<<<<" not in got and one in got and two in got, got
    view = (b.dir / ".squad/memory/cold/riker.md").read_text()
    assert "leaky bucket" in view and "sliding window" in view, view
    git(b.dir, "add", ".squad/memory")
    git(b.dir, "commit", "-q", "--no-edit")
    assert b"conflict markers" not in b.scribed("doctor").stdout
