"""Retired blocks of one title are distinct facts when their sources differ: a fact reversed, then
its reversal deprecated or reversed again, leaves two blocks under ``## Superseded`` with the same
title. The sync's dedup and the merge driver (with a base, an empty one, or none) keep both, each
with its own ``*Status:*`` line; two copies of one retired block (one source) are still one."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_cli
from test_wiki_place import LOG, NEW_STORE, OLD_STORE, RETRY, STORE, STORE_DEP, _block, _layout, _page

from scribed.core import wikisync
from scribed.curate.agent_writes import deprecate, write_agent_fact
from scribed.session.door import redacted
from scribed.tiers import git_merge, wiki_merge
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import WikiDoc

NEW_DEP = _block(
    "Session store",
    "Use Postgres instead of Redis for sessions.",
    "w-4",
    "deprecated 2026-12-08 by riker: gone",
)


def _retired(text: str) -> list[list[str]]:
    """The ``*Status:*`` lines of each retired ``Session store`` block, in order."""
    _, blocks = wiki_merge.chunks(text)
    return [
        [ln for ln in x.splitlines() if ln.startswith("*Status:*")]
        for s, t, x in blocks
        if t == "### Session store" and s == "## Superseded"
    ]


@pytest.mark.parametrize(
    "last",
    [
        ("deprecate", "gone"),  # the reversal deprecated
        ("write", "Use DynamoDB instead of Postgres for sessions."),  # reversed again
    ],
)
def test_a_fact_retired_twice_under_its_title_stays_two_blocks_through_the_sync(
    tmp_path: Path, last: tuple[str, str]
) -> None:
    layout = Layout(tmp_path)
    title = redacted("Session store")
    for text in ("Use Redis for sessions.", "Use Postgres instead of Redis for sessions."):
        write_agent_fact(layout, "ops", "riker", redacted(text), title=title)
    if last[0] == "deprecate":
        deprecate(layout, "ops", "Session store", "riker", reason=redacted(last[1]))
    else:
        write_agent_fact(layout, "ops", "riker", redacted(last[1]), title=title)
    page = (layout.wiki / "ops.md").read_text()
    assert [len(x) for x in _retired(page)] == [1, 1], page
    res, _ = wikisync.sync(layout, {})
    assert not res.deduped and not res.placed
    assert (layout.wiki / "ops.md").read_text() == page
    assert wiki_merge.merge_wiki(page, "") == page


def test_the_driver_keeps_a_fact_and_its_reversal_both_retired() -> None:
    """Base: a fact and its reversal; one side deprecates the reversal, the other adds a fact."""
    base = _page([NEW_STORE, LOG], [OLD_STORE])
    ours = _page([LOG], [NEW_DEP, OLD_STORE])
    theirs = _page([NEW_STORE, LOG, RETRY], [OLD_STORE])
    want = [("Logging", False), ("Retries", False), ("Session store", True), ("Session store", True)]
    for a, b in ((ours, theirs), (theirs, ours)):
        for old in (base, None):
            got = git_merge.merge_file("wiki", a, b, old)
            assert got.conflicts == () and _layout(got.text) == want, got.text
            assert [len(x) for x in _retired(got.text)] == [1, 1], got.text
            assert WikiDoc.parse("ops", got.text).counts() == {"active": 2, "superseded": 1, "deprecated": 1}
    # a retired block a text merge left twice (one source) is still one
    doubled = _page([LOG], [NEW_DEP, OLD_STORE, OLD_STORE])
    assert len(set(wiki_merge.block_keys(doubled))) == len(wiki_merge.block_keys(doubled)) - 1
    assert wiki_merge.merge_wiki(doubled, "") == ours


def test_the_driver_entry_keeps_both_retired_blocks(tmp_path: Path) -> None:
    """``scribed git merge-file %O %A %B %P``, as git runs it."""
    files = {"base": _page([NEW_STORE, LOG], [OLD_STORE]), "ours": _page([LOG], [NEW_DEP, OLD_STORE])}
    files["theirs"] = _page([NEW_STORE, LOG, RETRY], [OLD_STORE])
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    args = [str(tmp_path / x) for x in ("base", "ours", "theirs")]
    p = run_cli("git", "merge-file", *args, ".squad/memory/wiki/ops.md")
    assert p.returncode == 0, p.stderr
    assert [len(x) for x in _retired((tmp_path / "ours").read_text())] == [1, 1]


def test_an_active_copy_of_a_block_the_other_side_retired_goes_with_an_empty_base(tmp_path: Path) -> None:
    """An add/add (git gives the driver an empty base; the state branch passes ``""``): the stale
    active copy goes, as without a base; a reversal (another source) stays."""
    ours, theirs = _page([STORE, LOG]), _page([LOG], [STORE_DEP])
    want = [("Logging", False), ("Session store", True)]
    for a, b in ((ours, theirs), (theirs, ours)):
        for old in ("", None):
            got = git_merge.merge_file("wiki", a, b, old)
            assert _layout(got.text) == want and got.conflicts == (), got.text
    reversal = _page([NEW_STORE, LOG])
    got = git_merge.merge_file("wiki", reversal, theirs, "")
    assert _layout(got.text) == [("Session store", False), ("Logging", False), ("Session store", True)]
    for name, text in (("base", ""), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_text(text)
    args = [str(tmp_path / x) for x in ("base", "ours", "theirs")]
    p = run_cli("git", "merge-file", *args, ".squad/memory/wiki/ops.md")
    assert p.returncode == 0, p.stderr
    assert _layout((tmp_path / "ours").read_text()) == want


@pytest.mark.parametrize("author", ["worf", "riker"])  # another agent; the one who wrote and retired it
def test_a_fact_written_again_the_day_it_was_deprecated_is_current_again(tmp_path: Path, author: str) -> None:
    """A teammate deprecated a fact; an agent whose clone has that page writes it again the same
    day: it was said after the retirement and is current again, in a block of its own (it went into
    the retired block, "merged" or "present", and stayed under ``## Superseded``). An inbox file of
    that day, which may have been dropped before, still goes to the retired block."""
    from datetime import UTC, datetime

    layout = Layout(tmp_path)
    day = lambda: datetime(2026, 12, 8, 9, tzinfo=UTC)  # noqa: E731
    title, text = redacted("Session store"), redacted("Use Redis for sessions.")
    write_agent_fact(layout, "ops", "riker", text, title=title, clock=day)
    deprecate(layout, "ops", "Session store", "riker", reason=redacted("moving off Redis"), clock=day)
    inbox = write_agent_fact(layout, "ops", "troi", text, title=title, clock=day, via="inbox")
    assert inbox.action == "merged"
    r = write_agent_fact(layout, "ops", author, text, title=title, clock=day)
    assert r.action == "added", r
    page = (layout.wiki / "ops.md").read_text()
    assert _layout(page) == [("Session store", False), ("Session store", True)], page
    assert len(_retired(page)) == 1
    again = write_agent_fact(layout, "ops", author, text, title=title, clock=day)
    assert again.action == "present"
    res, _ = wikisync.sync(layout, {})
    assert not res.deduped and not res.placed
    assert (layout.wiki / "ops.md").read_text() == page
    assert wiki_merge.merge_wiki(page, "") == page
