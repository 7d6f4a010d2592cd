"""A wiki block is current or retired by what its text records (its ``*Status:*`` line), never by
where a text merge put it: one clone deprecating a fact (the first ``## Superseded`` of the page)
while another adds one must leave the new fact active, through the merge driver, git's own text
merge repaired by the next run, and every reader. A fact reversed under its own title is two
blocks, both kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli
from test_team_git import Clone, git, squad_remote

from scribed.core import wikisync
from scribed.curate.agent_writes import write_agent_fact
from scribed.recall.search import Index
from scribed.session.door import redacted
from scribed.tiers import git_merge, wiki_mark, wiki_merge
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import WikiDoc
from scribed.tiers.wiki_block import parse_block

HEAD = "# Wiki: ops\n\n> Durable facts filed under 'ops'.\n\n"


def _block(title: str, body: str, ref: str, status: str = "") -> str:
    mark = f"*Status:* {status}\n" if status else ""
    return (
        f"### {title}\n{mark}{body}\n\n*Source:* 2026-12-07 · entry={ref} · author=riker · via=wiki-write"
        " | confidence: 1 session, 1 agent\n"
    )


def _page(active: list[str], retired: list[str] | None = None) -> str:
    return HEAD + "\n".join([*active, *(["## Superseded\n", *retired] if retired else [])])


def _layout(text: str) -> list[tuple[str, bool]]:
    """Each block's title and whether it sits under ``## Superseded``."""
    under, out = False, []
    for line in text.splitlines():
        under = under or line == "## Superseded"
        if line.startswith("### "):
            out.append((line[4:], under))
    return out


STORE = _block("Session store", "Use Redis for sessions.", "w-1")
STORE_DEP = _block(
    "Session store", "Use Redis for sessions.", "w-1", "deprecated 2026-12-07 by riker: Postgres"
)
LOG = _block("Logging", "Log as JSON.", "w-2")
LOG_DEP = _block("Logging", "Log as JSON.", "w-2", "deprecated 2026-12-07 by riker: gone")
RETRY = _block("Retries", "Retry three times on 503.", "w-3")


@pytest.mark.parametrize(
    ("base", "deprecated", "added", "want"),
    [
        (  # the deprecation makes the page's first Superseded section; the other side adds a fact
            _page([STORE]),
            _page([], [STORE_DEP]),
            _page([STORE, RETRY]),
            [("Retries", False), ("Session store", True)],
        ),
        (  # the page has another active fact
            _page([STORE, LOG]),
            _page([STORE], [LOG_DEP]),
            _page([STORE, LOG, RETRY]),
            [("Session store", False), ("Retries", False), ("Logging", True)],
        ),
    ],
)
def test_a_fact_added_while_the_other_side_deprecates_stays_active(
    base: str, deprecated: str, added: str, want: list[tuple[str, bool]]
) -> None:
    for ours, theirs in ((added, deprecated), (deprecated, added)):
        got = git_merge.merge_file("wiki", ours, theirs, base)
        assert got.conflicts == () and _layout(got.text) == want, got.text
        assert got.text.count("## Superseded") == 1
        doc = WikiDoc.parse("ops", got.text)
        assert doc.counts()["active"] == sum(not sup for _, sup in want)


def test_a_text_merge_that_put_a_current_fact_under_superseded_is_laid_out_again() -> None:
    """What git's own merge (no driver) makes of the same two changes, and what reads it."""
    merged = HEAD + "## Superseded\n\n" + STORE_DEP + "\n" + RETRY  # a union of the two sides
    doc = WikiDoc.parse("ops", merged)
    assert [(b.title, b.active) for b in doc.blocks] == [("Session store", False), ("Retries", True)]
    assert doc.counts() == {"active": 1, "superseded": 0, "deprecated": 1}
    fixed, moved = wiki_merge.placed(merged)
    assert moved == ["### Retries"] and _layout(fixed) == [("Retries", False), ("Session store", True)]
    assert wiki_merge.placed(fixed) == (fixed, [])  # laid out already: the same bytes
    assert doc.render() == fixed
    # and the other way: a block marked retired above the section goes under it
    up = _page([LOG_DEP, STORE])
    down, moved = wiki_merge.placed(up)
    assert moved == ["### Logging"] and _layout(down) == [("Session store", False), ("Logging", True)]
    # the sync's write-back of a lost block lays the page out the same
    assert wiki_merge.merge_wiki(merged, HEAD + RETRY) == fixed


def test_the_status_is_the_mark_in_both_formats() -> None:
    """:func:`wiki_mark.status` (the merge's reading) is the parser's, whatever the section."""
    old = "### 2026-11-01: use SQLite\n- status: {}\n- source: 2026-11-01 · entry=e-000000000008\n"
    cases = {
        RETRY: "active",
        STORE_DEP: "deprecated 2026-12-07 by riker: Postgres",
        _block("X", "x.", "w-9", "superseded by 2026-12-08: Y"): "superseded by 2026-12-08: Y",
        old.format("superseded by 2026-11-02: use Postgres"): "superseded by 2026-11-02: use Postgres",
        old.format("active"): "active",
        "### 2026-11-01: use SQLite\n- replaced by: use Postgres\n": "active",  # no mark of the format
        "### Title only\n": "active",
        "### T\r\n*Status:* deprecated\r\nbody\r\n": "deprecated",
    }
    for raw, want in cases.items():
        assert wiki_mark.status(raw) == want == parse_block(raw).status, raw


def test_search_reads_the_mark_not_the_section(tmp_path: Path) -> None:
    lay = Layout(tmp_path)
    lay.wiki.mkdir(parents=True)
    (lay.wiki / "ops.md").write_text(HEAD + "## Superseded\n\n" + STORE_DEP + "\n" + RETRY)
    with Index(lay) as ix:
        ix.refresh()
        assert {h.heading: h.status for h in ix.search("Redis OR Retry")} == {
            "Session store": "deprecated",
            "Retries": "active",
        }


NEW_STORE = _block("Session store", "Use Postgres instead of Redis for sessions.", "w-4")
OLD_STORE = _block(
    "Session store", "Use Redis for sessions.", "w-1", "superseded by 2026-12-07: Session store"
)


def test_a_fact_reversed_under_its_own_title_keeps_both_blocks() -> None:
    """The reversing fact and the one it superseded share a title, not a source: two facts."""
    reversed_ = _page([NEW_STORE, LOG], [OLD_STORE])
    base, other = _page([STORE, LOG]), _page([STORE, LOG, RETRY])
    for ours, theirs in ((reversed_, other), (other, reversed_)):
        got = git_merge.merge_file("wiki", ours, theirs, base)
        assert got.conflicts == () and "Use Postgres instead of Redis" in got.text, got.text
        assert _layout(got.text) == [
            ("Session store", False),
            ("Logging", False),
            ("Retries", False),
            ("Session store", True),
        ]
    assert wiki_merge.merge_wiki(reversed_, "") == reversed_  # the sync's dedup: not a doubled block
    # a block a text merge left twice (two edits taken both ways): once, with both statements
    doubled = _page([STORE, LOG, STORE.replace("for sessions.", "for sessions (cluster mode).")])
    once = wiki_merge.merge_wiki(doubled, "")
    assert once.count("### Session store") == 1 and once.count("entry=w-1") == 1, once
    assert "\nUse Redis for sessions.\n" in once and "\nUse Redis for sessions (cluster mode).\n" in once
    # a stale active copy of the block the other side retired (one source) still goes
    assert _layout(wiki_merge.merge_wiki(_page([STORE]), _page([], [STORE_DEP]))) == [("Session store", True)]


def test_wiki_write_reversing_a_fact_under_its_title_keeps_the_new_fact(tmp_path: Path) -> None:
    """The team sync after the write (the lock let go) took the two blocks for one doubled by a
    text merge and kept the superseded one: the decision just written was gone."""
    layout = Layout(tmp_path)
    for text in ("Use Redis for sessions.", "Use Postgres instead of Redis for sessions."):
        write_agent_fact(layout, "ops", "riker", redacted(text), title=redacted("Session store"))
    page = (layout.wiki / "ops.md").read_text()
    assert _layout(page) == [("Session store", False), ("Session store", True)], page
    res, _ = wikisync.sync(layout, {})
    assert (layout.wiki / "ops.md").read_text() == page and not res.deduped and not res.placed
    assert "(1 active, 1 superseded)" in (layout.wiki / "index.md").read_text()


def test_a_deprecation_and_an_edit_of_the_statement_merge_without_a_conflict() -> None:
    """The move wins, with the other side's edit to the statement (docs/teams.md)."""
    base = _page([STORE, LOG])
    edited = _page([STORE.replace("for sessions.", "for sessions (cluster mode)."), LOG])
    for ours, theirs in ((edited, _page([LOG], [STORE_DEP])), (_page([LOG], [STORE_DEP]), edited)):
        got = git_merge.merge_file("wiki", ours, theirs, base)
        assert got.conflicts == (), got.marked
        assert _layout(got.text) == [("Logging", False), ("Session store", True)]
        assert STORE_DEP.replace("for sessions.", "for sessions (cluster mode).") in got.text, got.text


SUP = "superseded by 2026-12-08: Use Postgres for sessions"
DEP2 = "deprecated 2026-12-09 by worf: sessions live in Postgres now"


@pytest.mark.parametrize(
    ("mine", "other", "line"),
    [
        (
            DEP2,
            "deprecated 2026-12-07 by riker: Postgres",
            f"deprecated 2026-12-07 by riker: Postgres; {DEP2}",
        ),
        (SUP, "deprecated 2026-12-07 by riker: Postgres", f"{SUP}; deprecated 2026-12-07 by riker: Postgres"),
        (  # a superseded fact each clone deprecated (wiki-deprecate keeps the pointer): named once
            f"{SUP}; {DEP2}",
            f"{SUP}; deprecated 2026-12-07 by riker: Postgres",
            f"{SUP}; deprecated 2026-12-07 by riker: Postgres; {DEP2}",
        ),
        (  # a reason holding "; " and a mark's words is one mark, not a supersession of its own
            "deprecated 2026-12-09 by worf: dropped; superseded by nothing, we removed Django",
            "deprecated 2026-12-07 by riker: Postgres",
            "deprecated 2026-12-07 by riker: Postgres; "
            "deprecated 2026-12-09 by worf: dropped; superseded by nothing, we removed Django",
        ),
        (
            f"{SUP}; deprecated 2026-12-09 by worf: moved; deprecated upstream as well",
            f"{SUP}; deprecated 2026-12-10 by data-2",
            f"{SUP}; deprecated 2026-12-09 by worf: moved; deprecated upstream as well; "
            "deprecated 2026-12-10 by data-2",
        ),
    ],
)
def test_two_clones_retiring_one_fact_give_one_status_line(mine: str, other: str, line: str) -> None:
    """Two clones deprecating one fact (other days, other reasons), or one superseding it: the
    fact is retired on both sides, so no conflict and one ``*Status:*`` line holding both (the
    supersession first), the same whichever side merges; before, a conflict whose repair left
    two status lines, the second read as the statement's first line."""
    base = _page([STORE, LOG])
    a = _page([LOG], [_block("Session store", "Use Redis for sessions.", "w-1", mine)])
    b = _page([LOG], [_block("Session store", "Use Redis for sessions.", "w-1", other)])
    texts = set()
    for ours, theirs in ((a, b), (b, a)):
        got = git_merge.merge_file("wiki", ours, theirs, base)
        assert got.conflicts == (), got.marked
        assert got.text.count("*Status:*") == 1 and f"*Status:* {line}\n" in got.text, got.text
        assert _layout(got.text) == [("Logging", False), ("Session store", True)]
        texts.add(got.text)
    assert len(texts) == 1
    (block,) = [x for x in WikiDoc.parse("ops", next(iter(texts))).blocks if x.title == "Session store"]
    assert block.status == line and block.text.startswith("Use Redis")
    assert wiki_mark.state(block.status) == wiki_mark.state(mine)  # superseded only when it names one
    # merged again with either side (a third clone still on one of them): nothing changes
    assert git_merge.merge_file("wiki", next(iter(texts)), a, base).text == next(iter(texts))


def test_a_status_line_changed_two_ways_not_both_retiring_is_a_conflict() -> None:
    """One side's mark retires the fact, the other's is no retirement (a hand edit to ``active``):
    the two cannot be one line, so both are kept for a person."""
    base = _page([STORE, LOG])
    active = _page([_block("Session store", "Use Redis for sessions.", "w-1", "active"), LOG])
    got = git_merge.merge_file("wiki", active, _page([LOG], [STORE_DEP]), base)
    assert got.conflicts == ("block '### Session store'",)
    assert "*Status:* active" in got.text and "*Status:* deprecated" in got.text


def test_a_fact_whose_title_is_its_statement_merges_its_sources_and_its_mark() -> None:
    """A block of a title and a provenance line only (``wiki-write`` without ``--title``)."""
    src = "2026-12-0{0} · entry=w-{0} · author={1} · via=wiki-write"

    def fact(*who: tuple[int, str], status: str = "") -> str:
        n, agents = len(who), len({a for _, a in who})
        conf = f"{n} session{'s' * (n != 1)}, {agents} agent{'s' * (agents != 1)}"
        prov = "; ".join(src.format(i, a) for i, a in who)
        mark = f"*Status:* {status}\n" if status else ""
        return f"### Run postgres 16 in CI.\n{mark}*Source:* {prov} | confidence: {conf}\n"

    base = _page([fact((1, "riker"))])
    got = git_merge.merge_file(
        "wiki", _page([fact((1, "riker"), (2, "data"))]), _page([fact((1, "riker"), (3, "worf"))]), base
    )
    assert got.conflicts == () and got.text == _page([fact((1, "riker"), (2, "data"), (3, "worf"))]), (
        got.marked
    )
    dep = _page([], [fact((1, "riker"), status="deprecated 2026-12-09 by worf")])
    got = git_merge.merge_file("wiki", dep, _page([fact((1, "riker"), (2, "data"))]), base)
    assert got.conflicts == ()
    assert got.text == _page([], [fact((1, "riker"), (2, "data"), status="deprecated 2026-12-09 by worf")])


PAGE = ".squad/memory/wiki/ops.md"


def _fact(c: Clone, *args: str, text: str = "") -> None:
    p = run_cli("--config", str(c.cfg), *args, "--agent", "riker", input=text.encode())
    assert p.returncode == 0, p.stderr.decode()


@pytest.fixture(params=["driver", "no driver"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Clone, Clone, bool]:
    """Two clones of one remote, with the merge driver in their git config or, like a teammate who
    never ran ``scribed git setup``, without it (git's own text merge; .gitattributes committed)."""
    remote = squad_remote(tmp_path)
    a, b = Clone(tmp_path, "a", remote), Clone(tmp_path, "b", remote)
    a.scribed("git", "setup")
    a.commit()
    a.push()
    b.pull("merge")
    driver = request.param == "driver"
    if driver:
        b.scribed("git", "setup")
    else:
        git(a.dir, "config", "--remove-section", "merge.scribed")
    return a, b, driver


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_fact_written_while_a_teammate_deprecates_another_stays_active(
    pair: tuple[Clone, Clone, bool],
) -> None:
    """F1: a deprecates the page's only fact (the page's first ``## Superseded``) while b, not
    pulled, writes a new one; b pulls. The new fact is active on both clones, in the file, the
    index and search, with the driver at once, without it after b's next run."""
    a, b, driver = pair
    _fact(a, "wiki-write", "ops", "--title", "Session store", text="Use Redis for sessions.")
    a.commit()
    a.push()
    b.pull("merge")
    _fact(a, "wiki-deprecate", "ops", "Session store", "--reason", "moved to Postgres")
    a.commit()
    a.push()
    _fact(b, "wiki-write", "ops", "--title", "Retries", text="Retry three times on 503.")
    b.commit()
    b.pull("merge")  # without the driver, index.md conflicts: both sides taken, rewritten by the run
    want = [("Retries", False), ("Session store", True)]
    assert (_layout((b.dir / PAGE).read_text()) == want) is driver  # git's text merge put it under
    log = b.scribed("run-once")
    assert (b"wiki_block_placed" in log.stdout + log.stderr) is not driver
    assert _layout((b.dir / PAGE).read_text()) == want
    hit = b.scribed("search", "Retry three times", "--json").stdout
    assert json.loads(hit)["hits"][0]["status"] == "active", hit
    assert "(1 active, 1 deprecated)" in (b.dir / ".squad/memory/wiki/index.md").read_text()
    b.commit()
    b.push()
    a.pull("merge")
    a.scribed("run-once")
    a.commit()
    assert (a.dir / PAGE).read_text() == (b.dir / PAGE).read_text()
    assert git(a.dir, "status", "--porcelain").stdout == ""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_two_clones_deprecating_one_fact_keep_each_reason_whole(tmp_path: Path) -> None:
    """Review finding (stop 49): the merge split the status line at every "; ", a reason's
    included, and sorted the pieces, so a reason "dropped; superseded by nothing, …" came out
    first and the fact read as superseded by a successor that does not exist. Through real git
    and the merge driver, each clone's mark is kept whole and the fact stays deprecated."""
    remote = squad_remote(tmp_path)
    a, b = Clone(tmp_path, "a", remote), Clone(tmp_path, "b", remote)
    a.scribed("git", "setup")
    _fact(a, "wiki-write", "ops", "--title", "Session store", text="Use Redis for sessions.")
    a.commit()
    a.push()
    b.pull("merge")
    b.scribed("git", "setup")

    def mark(c: Clone, agent: str, reason: str) -> str:
        c.scribed("wiki-deprecate", "ops", "Session store", "--agent", agent, "--reason", reason)
        c.commit()
        (blk,) = WikiDoc.parse("ops", (c.dir / PAGE).read_text()).blocks
        return blk.status

    ma = mark(a, "riker", "dropped; superseded by nothing, we removed Django")
    a.push()
    mb = mark(b, "worf", "gone; the gateway caches sessions now")
    b.pull("merge")
    text = (b.dir / PAGE).read_text()
    assert "<<<<<<<" not in text and text.count("*Status:*") == 1, text
    (blk,) = WikiDoc.parse("ops", text).blocks
    assert blk.status == f"{ma}; {mb}" and wiki_mark.state(blk.status) == "deprecated", blk.status
    b.scribed("run-once")
    hit = b.scribed("search", "Redis for sessions", "--json").stdout
    assert json.loads(hit)["hits"][0]["status"] == "deprecated", hit
