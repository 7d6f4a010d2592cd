"""The wiki doc model: blocks, merging near-duplicates, supersession, deprecation and the index."""

from __future__ import annotations

from pathlib import Path

import pytest

from scribed.compress.terms import near_dup, norm
from scribed.tiers.wiki import (
    INDEX_MAX_LINES,
    Fact,
    Source,
    Wiki,
    WikiDoc,
    WikiError,
    render_index,
    reversal_score,
    safe_body,
    valid_topic,
)


def fact(
    text: str,
    date: str = "2026-09-01",
    ref: str = "e-000000000001",
    agent: str = "picard",
    topic: str = "decisions",
    **kw: str,
) -> Fact:
    return Fact(
        topic=topic,
        kind="decision",
        text=text,
        date=date,
        source=Source(date=date, ref=ref, agent=agent, session=f"s-{ref[-4:]}"),
        **kw,  # type: ignore[arg-type]
    )


def doc(*facts: Fact) -> WikiDoc:
    d = WikiDoc.parse("decisions", "")
    for f in facts:
        d.add(f)
    return d


def test_topic_names() -> None:
    assert valid_topic("Auth") == "auth"
    assert valid_topic("api-v2_notes") == "api-v2_notes"
    for bad in ("", "../etc", "a/b", "a b", "index", "INDEX", ".hidden", "x" * 65, None, 3):
        assert valid_topic(bad) is None, bad


def test_normalization() -> None:
    assert norm("Use **`freeze_time()`**  in the Login tests!") == "use freeze time in the login tests"
    assert norm("keep it (supersedes: old thing)") == "keep it"
    assert near_dup("Use freeze_time() in the login tests.", "use `freeze_time()` in the LOGIN tests")
    long_a = (
        "stream rows with server side cursors in the export job so memory stays flat on large tenants today"
    )
    long_b = long_a + " always"
    assert near_dup(long_a, long_b)  # one extra word in 19: Jaccard 0.95
    assert not near_dup("use ruff for linting", "use mypy for type checking")
    assert not near_dup("", "x")


def test_render_parse_round_trip_is_byte_stable() -> None:
    d = doc(
        fact("use a token bucket in src/app/ratelimit.py keyed by API key", rationale="bursts from one key"),
        fact("stream rows with server-side cursors", date="2026-09-03", ref="e-000000000002", agent="riker"),
    )
    text = d.render()
    again = WikiDoc.parse("decisions", text)
    assert again.render() == text
    assert [b.title for b in again.blocks] == [b.title for b in d.blocks]
    b = again.blocks[0]
    assert b.status == "active" and b.kind == "decision" and b.date == "2026-09-01"
    assert b.body.endswith("\n**Why:** bursts from one key"), "the rationale is part of the statement"
    assert b.sources[0].ref == "e-000000000001" and b.sources[0].agent == "picard"
    # one heading (the title), the statement, ONE provenance line
    assert text.count("\n### use a token bucket in src/app/ratelimit.py keyed by API key\n") == 1
    assert (
        "\n*Source:* 2026-09-01 · entry=e-000000000001 · agent=picard · session=s-0001"
        " | confidence: 1 session, 1 agent\n" in text
    )
    assert "- status:" not in text and "- kind:" not in text and "- confidence:" not in text


def test_exact_and_near_duplicates_merge_and_raise_confidence() -> None:
    d = doc(
        fact("Use a token bucket keyed by API key."),
        fact(
            "use a **token bucket** keyed by `API key`",
            date="2026-09-05",
            ref="e-000000000002",
            agent="riker",
        ),
        fact("Use a token bucket keyed by API key", date="2026-09-07", ref="e-000000000003", agent="riker"),
    )
    assert len(d.blocks) == 1
    b = d.blocks[0]
    assert [s.ref for s in b.sources] == ["e-000000000001", "e-000000000002", "e-000000000003"]
    assert b.confidence() == "3 sessions, 2 agents"
    assert d.render().count("*Source:*") == 1
    assert "entry=e-000000000002 · agent=riker · session=s-0002; 2026-09-07" in d.render()
    assert "| confidence: 3 sessions, 2 agents" in d.render()
    assert b.date == "2026-09-01", "a block keeps its first date"


def test_same_entry_twice_is_present_not_merged() -> None:
    d = doc(fact("Use a token bucket keyed by API key."))
    before = d.render()
    r = d.add(fact("Use a token bucket keyed by API key."))
    assert r.action == "present"
    assert d.render() == before


def test_explicit_supersedes_marks_the_old_block_and_keeps_it() -> None:
    d = doc(fact("use freeze_time() in the login tests"))
    r = d.add(
        fact(
            "use an injected clock in src/auth/session.py",
            date="2026-09-15",
            ref="e-000000000002",
            supersedes="use freeze_time() in the login tests",
        )
    )
    assert r.action == "added" and r.superseded == ["2026-09-01: use freeze_time() in the login tests"]
    old, new = d.blocks
    assert old.status == "superseded by 2026-09-15: use an injected clock in src/auth/session.py"
    assert new.active and new.supersedes == "use freeze_time() in the login tests"
    text = d.render()
    assert "| replaces: use freeze_time() in the login tests" in text
    assert text.count("\n### ") == 2, "never silently deleted"
    # the old fact sits under Superseded, with a line saying what replaced it and when
    head, _, under = text.partition("\n## Superseded\n")
    assert "### use an injected clock" in head and "### use freeze_time()" in under
    assert "*Status:* superseded by 2026-09-15: use an injected clock in src/auth/session.py" in under
    again = WikiDoc.parse("decisions", text)
    assert again.render() == text and [b.active for b in again.blocks] == [True, False]


def test_reversal_by_wording_and_overlap_across_sessions() -> None:
    # the reversal is known only from "instead of X" naming the earlier decision
    d = doc(fact("use `freeze_time()` from freezegun in the login tests to pin the clock"))
    d.add(
        fact(
            "reverse the earlier choice: use an injected clock in src/auth/session.py instead of `freeze_time()`",
            date="2026-09-15",
            ref="e-000000000002",
        )
    )
    assert d.blocks[0].status.startswith("superseded by 2026-09-15: reverse the earlier choice")
    # "no longer" plus strong overlap
    d2 = doc(fact("deploy the api with blue green switches on friday evenings"))
    d2.add(
        fact(
            "we no longer deploy the api with blue green switches on friday evenings",
            date="2026-10-01",
            ref="e-2",
        )
    )
    assert not d2.blocks[0].active
    # overlap without reversal words is not a reversal; reversal words without overlap neither
    d3 = doc(fact("use ruff for linting the api package"))
    d3.add(fact("use ruff for formatting the api package too", date="2026-10-01", ref="e-000000000002"))
    d3.add(fact("use uv instead of pip for installs", date="2026-10-02", ref="e-000000000003"))
    assert all(b.active for b in d3.blocks)
    assert reversal_score("use uv instead of pip", "use ruff for linting") == 0
    # naming something else it replaces: consistent with the old fact, not a reversal of it
    assert reversal_score("use uv rather than pip for installs in CI", "use uv for installs in CI") == 0
    assert (
        reversal_score("reverts the nightly cron job for backups", "run a nightly cron job for backups") > 0
    )


def test_later_fact_already_present_supersedes_an_older_one_added_after_it() -> None:
    d = doc(
        fact("use Redis streams for the job queue instead of PostgreSQL advisory locks", date="2026-10-02")
    )
    r = d.add(
        fact("use PostgreSQL advisory locks for the job queue", date="2026-09-20", ref="e-000000000002")
    )
    assert r.superseded_by.startswith("2026-10-02")
    assert d.blocks[1].status.startswith("superseded by 2026-10-02")
    assert d.blocks[0].active


def test_duplicate_of_superseded_block_merges_only_if_not_newer() -> None:
    d = doc(fact("use freeze_time() in the login tests"))
    d.add(
        fact(
            "use an injected clock",
            date="2026-09-15",
            ref="e-2",
            supersedes="use freeze_time() in the login tests",
        )
    )
    # an older session saying the old thing: supports the superseded block
    r = d.add(fact("use freeze_time() in the login tests", date="2026-09-10", ref="e-3", agent="riker"))
    assert r.action == "merged" and len(d.blocks) == 2
    assert not d.blocks[0].active and len(d.blocks[0].sources) == 2
    # a newer session adopting it again: a new active block
    r = d.add(fact("use freeze_time() in the login tests", date="2026-10-01", ref="e-4"))
    assert r.action == "added" and d.blocks[-1].active


def test_deprecate() -> None:
    d = doc(
        fact("use a token bucket keyed by API key"),
        fact("stream rows with server-side cursors", date="2026-09-03", ref="e-2"),
        fact("stream logs to journald", date="2026-09-04", ref="e-3"),
    )
    b = d.deprecate("use a token bucket keyed by API key", "troi", "2026-11-29", "moved to the gateway")
    assert b.status == "deprecated 2026-11-29 by troi: moved to the gateway"
    assert "*Status:* deprecated 2026-11-29 by troi: moved to the gateway" in d.render()
    assert len(d.blocks) == 3
    with pytest.raises(WikiError, match="2 blocks match"):
        d.deprecate("stream", "troi", "2026-11-29")
    with pytest.raises(WikiError, match="no block titled"):
        d.deprecate("nothing like this", "troi", "2026-11-29")
    assert d.deprecate("server-side cursors", "troi", "2026-11-29").status == "deprecated 2026-11-29 by troi"
    # deprecated again: unchanged
    assert d.deprecate("server-side cursors", "data", "2026-12-01").status == "deprecated 2026-11-29 by troi"


def test_untouched_blocks_keep_their_bytes(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    human = (
        "# Our decisions\n\nHand-kept, please be nice.\n\n"
        "### 2026-08-01:   Use   PostgreSQL 16\n"
        "Some prose *exactly* as a person wrote it.\n\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    (wiki / "decisions.md").write_text(human)
    (wiki / "conventions.md").write_text("### 2026-08-02: weird   spacing  kept\n\n\n\nbody\n")
    w = Wiki(wiki, tmp_path)
    assert w.refs() == set()  # loads every topic
    w.add(fact("stream rows with server-side cursors", date="2026-09-03"))
    assert w.flush() == ["decisions"]
    text = (wiki / "decisions.md").read_text()
    assert text.startswith(human.rstrip("\n") + "\n\n### stream rows")
    assert (wiki / "conventions.md").read_text() == "### 2026-08-02: weird   spacing  kept\n\n\n\nbody\n"
    # nothing new: no write at all
    mtime = (wiki / "decisions.md").stat().st_mtime_ns
    w2 = Wiki(wiki, tmp_path)
    w2.add(fact("stream rows with server-side cursors", date="2026-09-03"))
    assert w2.flush() == []
    assert (wiki / "decisions.md").stat().st_mtime_ns == mtime


def test_index_is_deterministic_and_bounded(tmp_path: Path) -> None:
    w = Wiki(tmp_path / "wiki", tmp_path)
    w.add(fact("use a token bucket keyed by API key"))
    w.add(fact("Always run make check", topic="conventions"))
    w.add(fact("billing totals are in cents", topic="billing"))
    w.flush()
    index = (tmp_path / "wiki/index.md").read_text()
    assert index == w.index_text()
    lines = index.splitlines()
    assert lines[0] == "# Wiki index"
    assert "- [billing](billing.md): Durable facts filed under 'billing'. (1 active)" in lines
    assert any(ln.startswith("- [conventions](conventions.md): Team conventions") for ln in lines)
    assert any(ln.startswith("- [decisions](decisions.md): Decisions with their rationale") for ln in lines)
    # many topics: still at most 200 lines
    docs = []
    for i in range(450):
        d = WikiDoc.parse(f"topic-{i:03d}", "")
        d.add(fact(f"fact number {i}", topic=f"topic-{i:03d}"))
        docs.append(d)
    big = render_index(docs)
    assert len(big.splitlines()) <= INDEX_MAX_LINES
    assert "more topics" in big.splitlines()[-1]


def test_source_lines_round_trip() -> None:
    s = Source("2026-11-29", "w-0123456789ab", "troi", via="wiki-write")
    assert s.render() == "2026-11-29 · entry=w-0123456789ab · author=troi · via=wiki-write"
    back = Source.parse(s.render())
    assert (back.date, back.ref, back.agent, back.via) == (
        "2026-11-29",
        "w-0123456789ab",
        "troi",
        "wiki-write",
    )
    d = Source.parse("2026-09-01 · entry=d-aaaaaaaaaaaa · agent=picard · folded=e-1,e-2")
    assert d.extra == {"folded": "e-1,e-2"}


def test_folded_ids_count_as_refs() -> None:
    d = WikiDoc.parse("decisions", "")
    src = Source("2026-09-01", "d-aaaaaaaaaaaa", "picard", extra={"folded": "e-111111111111,e-222222222222"})
    d.add(Fact("decisions", "decision", "keep the digest facts", "2026-09-01", src))
    assert d.refs == {"d-aaaaaaaaaaaa", "e-111111111111", "e-222222222222"}


def test_bad_topic_in_store(tmp_path: Path) -> None:
    w = Wiki(tmp_path / "wiki", tmp_path)
    with pytest.raises(WikiError, match="bad topic"):
        w.doc("../escape")
    with pytest.raises(WikiError):
        w.doc("index")


def test_agent_text_cannot_break_the_file() -> None:
    body = safe_body(
        "intro\n### 2026-01-01: looks like a block\n```sh\n# a comment\n### 2026-01-02: in code\n"
    )
    assert body.splitlines() == [
        "intro",
        "#### 2026-01-01: looks like a block",
        "```sh",
        "# a comment",
        "### 2026-01-02: in code",
        "```",
    ]
    d = doc(fact("first fact about fences"))
    d.add(fact(body, date="2026-09-02", ref="e-2", title="a fenced note"))
    d.add(fact("third fact after it", date="2026-09-03", ref="e-3"))
    again = WikiDoc.parse("decisions", d.render())
    assert [b.title for b in again.blocks] == [
        "first fact about fences",
        "a fenced note",
        "third fact after it",
    ]


def test_a_repeated_reversal_still_supersedes() -> None:
    # the reversal was first promoted before the fact it reverses had a block (say, another agent's
    # older entry came later); a second session repeating the reversal marks it
    d = doc(fact("use an injected clock in the login tests", date="2026-09-01", ref="e-1"))
    d.add(fact("use freeze_time() in the login tests", date="2026-08-20", ref="e-2"))
    assert all(b.active for b in d.blocks)
    r = d.add(
        fact(
            "use an injected clock in the login tests",
            date="2026-09-20",
            ref="e-3",
            supersedes="use freeze_time() in the login tests",
        )
    )
    assert r.action == "merged" and r.superseded == ["2026-08-20: use freeze_time() in the login tests"]
    assert d.blocks[1].status == "superseded by 2026-09-01: use an injected clock in the login tests"


def test_a_removal_reverses_the_decision_it_names_across_sessions() -> None:
    """A helper's memory kept "use a Postgres advisory lock" active after a later session decided to
    remove the lock: taking a thing out had no reversal wording."""
    old = "use a Postgres advisory lock so only one scheduler instance runs jobs"
    d = doc(fact(old))
    d.add(
        fact(
            "remove the advisory lock completely; the scheduler runs on a single node",
            date="2026-10-01",
            ref="e-2",
        )
    )
    assert not d.blocks[0].active and d.blocks[0].title == old
    d2 = doc(fact(old))
    d2.add(fact("stop using the advisory lock for the scheduler", date="2026-10-01", ref="e-2"))
    assert not d2.blocks[0].active
    d4 = doc(fact(old))
    d4.add(
        fact("remove the advisory lock because it deadlocks under pgbouncer", date="2026-10-01", ref="e-2")
    )
    assert not d4.blocks[0].active
    d5 = doc(fact(old))
    d5.add(fact("don't remove the advisory lock: the second node still runs", date="2026-10-01", ref="e-2"))
    assert d5.blocks[0].active
    # decided against, asked, or taking out a part of it or something else (a review's cases)
    lock = "Use a Postgres advisory lock to serialise the migration jobs"
    for later in (
        "Decided against removing the Postgres advisory lock.",
        "Decision: nobody should remove the advisory lock",
        "Decision: we must not, under any circumstances, remove the advisory lock",
        "Should we remove the advisory lock?",
    ):
        assert reversal_score(later, lock) == 0, later
    assert (
        reversal_score("Decision: remove the Redis session cache warmup", "Use Redis for the session cache")
        == 0
    )
    assert reversal_score("remove the hourly backup cron", "run a nightly backup cron") == 0
    assert reversal_score("stop using the weekly billing report", "export the monthly billing report") == 0
    # removing something else, or everyday removals that share words, reverse nothing
    d3 = doc(fact(old), fact("use pnpm for the web workspace"))
    d3.add(fact("removed the unused import of the scheduler lock module", date="2026-10-02", ref="e-3"))
    d3.add(fact("removed the npm lockfile from the web workspace; use pnpm", date="2026-10-03", ref="e-4"))
    d3.add(fact("delete stale scheduler runs after 30 days", date="2026-10-04", ref="e-5"))
    assert all(b.active for b in d3.blocks), [(b.title, b.status) for b in d3.blocks]
