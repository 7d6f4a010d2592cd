"""Anchors, the retention guard, entry rendering, the cold fold and the ledger."""

from __future__ import annotations

import gzip
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scribed.compress import anchors, entry, entry_fit, entry_guard
from scribed.compress.extractive import ExtractiveCompressor
from scribed.core.ledger import Ledger, SourceRow
from scribed.models import Session, Summary, Turn
from scribed.tiers import cold
from scribed.tiers.cold import Layout

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def sess(*turns: tuple[str, str] | Turn) -> Session:
    out = []
    for i, t in enumerate(turns):
        if isinstance(t, Turn):
            out.append(t)
        else:
            out.append(
                Turn(
                    role=t[0],
                    text=t[1],
                    ts=T0 + timedelta(minutes=i),
                    line=i + 1,  # type: ignore[arg-type]
                    end_offset=(i + 1) * 100,
                )
            )
    return Session(agent="kim", session_id="s1", source=Path("/x.md"), kind="markdown", turns=out)


def meta(bytes_in: int = 10_000) -> entry.EntryMeta:
    return entry.EntryMeta(
        entry_id="e-0123456789ab",
        agent="kim",
        session="s1",
        source="/x.md",
        kind="markdown",
        end=T0,
        first_line=1,
        last_line=9,
        turns=9,
        sha256="0" * 64,
        compressor="extractive",
        bytes_in=bytes_in,
    )


def test_anchor_types() -> None:
    s = sess(
        ("user", "Fix #590 in src/auth/session.py. Never push to main directly."),
        ("assistant", "Running `pytest tests/test_login.py -k flaky` now."),
        ("tool", "E   AssertionError: expected 900s, got 899.7s"),
        (
            "assistant",
            "Decision: use an injected clock via `Clock.now()`.\nTODO: delete tests/helpers/retry.py",
        ),
        ("assistant", "- [x] write the fixture\n- [ ] update docs/auth.md"),
    )
    s.turns[2].kind = "tool_result"
    got = {(a.type, a.text) for a in anchors.extract(s)}
    assert ("issue", "#590") in got
    assert ("path", "src/auth/session.py") in got
    assert ("path", "tests/helpers/retry.py") in got
    assert ("command", "pytest tests/test_login.py -k flaky") in got
    assert ("error", "AssertionError: expected 900s, got 899.7s") in got
    assert ("decision", "use an injected clock via `Clock.now()`") in got
    assert ("todo", "delete tests/helpers/retry.py") in got
    assert ("todo", "update docs/auth.md") in got
    assert ("todo", "write the fixture") not in got
    assert ("identifier", "Clock.now()") in got
    assert any(t == "directive" and "Never push to main" in x for t, x in got)


def test_reversed_decision_keeps_final_form_only() -> None:
    s = sess(
        ("assistant", "Decision: store sessions in Redis with a 15 minute TTL."),
        ("assistant", "Some unrelated chatter about logs."),
        ("assistant", "Decision: reversing the earlier call, store sessions in Postgres instead of Redis."),
    )
    ds = [a for a in anchors.extract(s) if a.type == "decision"]
    assert len(ds) == 1
    assert ds[0].text.startswith("reversing the earlier call, store sessions in Postgres")
    assert ds[0].superseded == "store sessions in Redis with a 15 minute TTL"


def test_a_decision_said_twice_is_reversed_once() -> None:
    """The user says it plainly, the assistant repeats it with a path in backticks: one decision,
    so a later reversal leaves neither spelling current (seen on a real Aider history's shape)."""
    s = sess(
        ("user", "We decided to store sessions in SQLite via src/store.py; implement the schema."),
        ("assistant", "Decision: store sessions in SQLite via `src/store.py`."),
        ("user", "On second thought, sessions should go to Postgres, not SQLite."),
        ("assistant", "Decision: store sessions in Postgres via `src/store.py` (replaces SQLite)."),
    )
    ds = [a for a in anchors.extract(s) if a.type == "decision"]
    assert [d.text for d in ds] == ["store sessions in Postgres via `src/store.py` (replaces SQLite)"]
    # the assistant's shorter spelling keeps what the user's said besides (after ";")
    assert ds[0].superseded == "store sessions in SQLite via src/store.py; implement the schema"


def test_one_reversal_rule_for_anchors_and_facts() -> None:
    """anchors and the wiki share reversal_wording.REVERSAL: each now knows the other's reversal words."""
    from scribed.compress.reversal import reversal_score

    s = sess(
        ("assistant", "Decision: store sessions in Redis with a 15 minute TTL."),
        ("assistant", "Decision: we dropped Redis, store sessions in Postgres with the same TTL."),
    )
    ds = [a for a in anchors.extract(s) if a.type == "decision"]
    assert [d.superseded for d in ds] == ["store sessions in Redis with a 15 minute TTL"]
    old = "Store sessions in Redis with a 15 minute TTL for the web tier."
    new = "On second thought, store sessions in Postgres with a 15 minute TTL for the web tier."
    assert reversal_score(new, old) > 0


def test_closed_todo_is_not_open() -> None:
    s = sess(("assistant", "TODO: bump the lockfile"), ("assistant", "DONE: bump the lockfile"))
    assert not [a for a in anchors.extract(s) if a.type == "todo"]


def test_guard_restores_dropped_anchors_within_cap() -> None:
    s = sess(("user", "Decision: ship v2 API under /v2 only. See #77 and src/api/v2.py"))
    found = anchors.extract(s)
    bare = Summary(goal="ship the API")
    m = meta()
    amended, rec = entry_guard.guard(bare, found, m, hard_cap=4000)
    text = entry.render(amended, m)
    assert rec == 1.0
    for a in found:
        assert a.text in text
    # a tiny cap restores what fits, in priority order, and reports the recall honestly
    amended2, rec2 = entry_guard.guard(bare, found, m, hard_cap=entry.size_of(bare, m) + 100)
    assert rec2 > 0
    assert amended2.key_facts[0].startswith("decision:"), "decisions are restored first"
    assert entry.size_of(amended2, m) <= entry.size_of(bare, m) + 100
    _tiny, rec3 = entry_guard.guard(bare, found, m, hard_cap=entry.size_of(bare, m) + 40)
    assert 0 < rec3 < 1.0, "what does not fit is reported, not hidden"


def test_render_parse_roundtrip_and_fit() -> None:
    m = meta(bytes_in=5000)
    s = Summary(
        goal="g" * 50,
        outcome="done",
        decisions=[f"decision {i} " + "x" * 100 for i in range(30)],
        files=["`a/b.py`"],
        knowledge=["k" * 200] * 10,
    )
    fitted = entry_fit.fit(s, m, 1500)
    text = entry.render(fitted, m)
    assert len(text.encode()) <= 1500
    assert fitted.decisions, "decisions are the last to go"
    pre, entries = entry.split_entries("# Cold\n\n" + text)
    assert pre.startswith("# Cold")
    assert len(entries) == 1 and entries[0].entry_id == "e-0123456789ab"
    assert entries[0].when == T0


def _signal_session(tool_output: str) -> Session:
    return sess(
        ("user", "Please migrate the cache layer to redis-py 5 (#321)."),
        ("assistant", "Reading the code."),
        Turn("tool", tool_output, "tool_result", T0, 3, 300),
        ("assistant", "Decision: drop the custom connection pool in cache/pool.py."),
        ("assistant", "Done: all 12 cache tests pass. TODO: remove the compat shim in cache/compat.py"),
    )


def test_extractive_beats_truncation_on_signal() -> None:
    noise = "\n".join(f"{i:4d}  def f_{i}(x): return x  # filler" for i in range(400))
    m = meta(bytes_in=len(noise) + 500)
    fitted = {}
    for key, output in (("noise", noise), ("quiet", "ok")):
        s = _signal_session(output)
        found = anchors.extract(s)
        fitted[key] = entry_fit.fit(ExtractiveCompressor().compress(s, found, 800).summary, m, 800)
    text = entry.render(fitted["noise"], m)
    # 400 lines of tool output take nothing from the facts: every section is what the session
    # without them gets; they rank last and may only fill the key points the facts left room for
    # (since issue 30 the headings are counted at their size, so ~100 bytes are left).
    assert fitted["noise"].model_copy(update={"key_points": []}) == fitted["quiet"]
    assert all("# filler" in p for p in fitted["noise"].key_points)
    assert len(text.encode()) <= 800
    assert "cache/pool.py" in text and "cache/compat.py" in text and "#321" in text
    assert "12 cache tests pass" in text
    assert anchors.recall(anchors.extract(_signal_session(noise)), text) == 1.0
    assert not peers_head_keeps_facts(noise, len(text.encode()))


def peers_head_keeps_facts(noise: str, budget: int) -> bool:
    """Head truncation at the same bytes: the session's first ``budget`` bytes keep the facts?"""
    said = "Please migrate the cache layer to redis-py 5 (#321).\nReading the code.\n" + noise
    head = said.encode()[:budget].decode(errors="ignore")
    return "cache/pool.py" in head or "12 cache tests pass" in head


def _entry_text(i: int, size: int = 1500) -> tuple[str, str]:
    m = entry.EntryMeta(
        entry_id=f"e-{i:012x}",
        agent="kim",
        session=f"s{i}",
        source="/x",
        kind="markdown",
        end=T0 + timedelta(days=i),
        first_line=1,
        last_line=2,
        turns=2,
        sha256="0" * 64,
        compressor="extractive",
        bytes_in=20_000,
    )
    s = Summary(
        goal=f"session {i}",
        decisions=[f"decision number {i}"],
        open_items=[f"open item {i}"],
        knowledge=["filler " * (size // 8)],
    )
    return entry.render(s, m), m.entry_id


def test_cold_append_is_idempotent_and_ordered(tmp_path: Path) -> None:
    lay = Layout(tmp_path)
    t2, id2 = _entry_text(2)
    t1, id1 = _entry_text(1)
    assert cold.append(lay, "kim", t2, id2, max_bytes=100_000, now=T0) == (True, 0)
    assert cold.append(lay, "kim", t1, id1, max_bytes=100_000, now=T0) == (True, 0)
    assert cold.append(lay, "kim", t1, id1, max_bytes=100_000, now=T0) == (False, 0)
    _, entries = entry.split_entries(lay.cold_file("kim").read_text())
    assert [e.entry_id for e in entries] == [id1, id2], "date order, no duplicate"


def test_fold_keeps_anchors_and_archives_originals(tmp_path: Path) -> None:
    lay = Layout(tmp_path)
    ids = []
    for i in range(12):
        text, eid = _entry_text(i)
        ids.append(eid)
        cold.append(lay, "kim", text, eid, max_bytes=6000, now=T0)
    path = lay.cold_file("kim")
    data = path.read_text()
    assert len(data.encode()) <= 6000
    _, entries = entry.split_entries(data)
    assert entries[0].entry_id and entries[0].entry_id.startswith("d-")
    # every id is accounted for: in the file (own id, or one level of folded= in a digest), or in an
    # archived original (the ledger has those; the cold-file check only covers the newest write)
    known = cold.known_ids(path)
    archived_text = b"".join(gzip.decompress(p.read_bytes()) for p in (lay.archive / "cold").glob("*.gz"))
    for eid in ids:
        assert eid in known or eid.encode() in archived_text, eid
    assert ids[-1] in known
    # the newest decisions/open items are kept in full; originals of the folded ones are archived
    archived = b"".join(gzip.decompress(p.read_bytes()) for p in (lay.archive / "cold").glob("kim-*.md.gz"))
    for i in range(12):
        assert f"decision number {i}".encode() in archived or f"decision number {i}" in data
    assert "decision number 11" in data


def test_ledger_migrates_and_counts(tmp_path: Path) -> None:
    db = tmp_path / "l.sqlite"
    led = Ledger(db)
    led.upsert_source(SourceRow("/a", "codex", "worf", 10, 1, "ab", 10, "done", 0, "", "now"))
    led.upsert_source(SourceRow("/b", "codex", "worf", 10, 1, "ab", 0, "failed", 1, "timeout", "now"))
    led.set_meta("last_promotion_at", "2026-11-29T03:00:00Z")
    led.close()
    led = Ledger(db)  # reopening does not re-run migrations
    assert led.counts()["done"] == 1 and led.counts()["failed"] == 1
    assert led.get_meta("last_promotion_at") == "2026-11-29T03:00:00Z"
    assert db.stat().st_mode & 0o077 == 0


def test_fold_stays_bounded_for_an_agent_with_a_thousand_sessions(tmp_path: Path) -> None:
    """Digest provenance lists one level of folded ids, so the file never outgrows its budget."""
    lay = Layout(tmp_path)
    for i in range(400):
        text, eid = _entry_text(i, size=200)
        cold.append(lay, "kim", text, eid, max_bytes=4096, now=T0)
        assert len(lay.cold_file("kim").read_bytes()) <= 4096, i
    assert "decision number 399" in lay.cold_file("kim").read_text()


def test_digest_header_counts_exactly_the_sessions_it_holds(tmp_path: Path) -> None:
    """Folding a digest into a newer one adds its sessions to the count: the header never says
    "Digest of 2 sessions" for a digest that stands for forty."""
    lay = Layout(tmp_path)
    for i in range(40):
        text, eid = _entry_text(i, size=200)
        cold.append(lay, "kim", text, eid, max_bytes=4096, now=T0)
    _, entries = entry.split_entries(lay.cold_file("kim").read_text())
    digests = [e for e in entries if (e.entry_id or "").startswith("d-")]
    assert digests and any(cold.sessions_held([d]) > 2 for d in digests)
    assert cold.sessions_held(entries) == 40
    for d in digests:
        m = re.search(r"folded=([\w,-]+)(?: · listed=(\d+) of (\d+))?", d.text)
        assert m is not None
        listed = len(m.group(1).split(","))
        assert listed == cold.sessions_held([d]) or (
            int(m.group(2)) == listed and int(m.group(3)) == cold.sessions_held([d])
        )


def test_a_decision_to_remove_what_an_earlier_one_chose_supersedes_it_in_the_session() -> None:
    t0 = datetime(2026, 12, 7, tzinfo=UTC)

    def decisions(*texts: str) -> list[tuple[str, str | None]]:
        turns = [Turn("assistant", x, "message", t0, i + 1, (i + 1) * 10) for i, x in enumerate(texts)]
        s = Session(agent="k", session_id="s", source=Path("/x.md"), kind="markdown", turns=turns)
        return [(a.text, a.superseded) for a in anchors.extract(s) if a.type == "decision"]

    assert decisions(
        "Decision: use a Postgres advisory lock so only one scheduler instance runs jobs.",
        "Decision: remove the advisory lock completely; the scheduler runs on a single node now.",
    ) == [
        (
            "remove the advisory lock completely; the scheduler runs on a single node now",
            "use a Postgres advisory lock so only one scheduler instance runs jobs",
        )
    ]
    lock = "Decision: use a Postgres advisory lock so only one scheduler instance runs jobs."
    for later in (  # a reason or a next step after what is removed (an exploratory tester's)
        "Decision: remove the advisory lock and use a Redis lease.",
        "Decision: remove the advisory lock because it deadlocks under pgbouncer.",
        "Decision: remove the advisory lock (deadlocks under pgbouncer).",
    ):
        assert decisions(lock, later)[-1][1] is not None, later
    for later in (
        "Decision: don't remove the advisory lock.",
        "Should we remove the advisory lock? Decision: not yet.",
    ):
        assert all(s is None for _, s in decisions(lock, later)), later  # it stays: reaffirmed, not reversed
    redis = "Decision: use Redis as the cache for the pricing service."
    for later in (  # a second exploratory round's: a short name, a place, another verb of taking out
        "Decision: remove Redis from pricing.",
        "Decision: stop using Redis for pricing.",
        "Decision: ditch Redis.",
    ):
        assert decisions(redis, later)[-1][1] is not None, later
    for later in (
        "Decision: Priya wants to remove Redis, but we keep it.",  # someone's wish, not the decision
        "Decision: remove Redis from the auth service.",  # another place
        "Decision: remove the Redis password from the env file.",  # another thing
    ):
        assert all(s is None for _, s in decisions(redis, later)), later
    # a removal of something else leaves the earlier decision standing (no overlap rule for removals)
    assert decisions(
        "Decision: use Redis for the session cache.", "Decision: remove stale cache keys on every deploy."
    ) == [("use Redis for the session cache", None), ("remove stale cache keys on every deploy", None)]


def test_merged_digests_that_fold_the_same_sessions_count_and_list_each_once() -> None:
    """Two clones fold before they pull: a's digest holds sessions 0 and 1, b's holds that same
    digest and session 2. The merge of the two says it holds 3 sessions from session 0's day and
    lists each id once (it said "Digest of 5 sessions", from session 1's day, ids twice)."""
    es = [entry.split_entries(_entry_text(i, size=200)[0])[1][0] for i in range(3)]
    a = cold._digest("kim", es[:2], "a.md.gz", 100_000)
    b = cold._digest("kim", [a, es[2]], "b.md.gz", 100_000)
    merged, gone = cold.merge_digests("kim", [a, b])
    assert sorted(gone) == sorted([a.entry_id, b.entry_id])
    (d,) = merged
    assert d.title.startswith(f"Digest of 3 sessions, {es[0].date[:10]} – {es[2].date[:10]}"), d.title
    m = re.search(r"folded=([\w,-]+)", d.text)
    assert m is not None
    ids = m.group(1).split(",")
    assert sorted(ids) == sorted(e.entry_id for e in es), ids
    assert cold.sessions_held(merged) == 3
