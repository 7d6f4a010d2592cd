"""`scribed search`: cold, wiki (superseded marked) and archive hits with provenance; filters; rebuild."""

from __future__ import annotations

import gzip
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from scribed.cli.main import main
from scribed.compress import entry
from scribed.models import Summary
from scribed.tiers.cold import Layout
from scribed.tiers.search import Index, SearchError, fts_query


def _entry(eid: str, agent: str, session: str, day: int, goal: str, facts: list[str]) -> str:
    meta = entry.EntryMeta(
        eid, agent, session, "x.md", "markdown", datetime(2026, 11, day, 9, tzinfo=UTC), 1, 9, 9,
        "0" * 64, "extractive", 10_000,
    )
    return entry.render(Summary(goal=goal, key_points=facts), meta)


def _root(tmp: Path) -> Layout:
    lay = Layout(tmp)
    for d in (lay.cold, lay.wiki, lay.archive / "promoted" / "worf"):
        d.mkdir(parents=True)
    (lay.cold / "picard.md").write_text(
        "# Cold memory: picard\n\n"
        + _entry("e-000000000001", "picard", "s-auth", 3, "Fix the flaky login test", ["the clock skew came from freeze_time in tests/test_login.py"])
        + "\n"
        + _entry("e-000000000002", "picard", "s-docs", 5, "Review the auth docs", ["docs/auth.md now names the 15-minute timeout"])
    )
    (lay.cold / "riker.md").write_text(
        "# Cold memory: riker\n\n"
        + _entry("e-000000000003", "riker", "s-rate", 4, "Rate limit the public API", ["token bucket keyed by API key in src/app/ratelimit.py"])
    )
    (lay.wiki / "decisions.md").write_text(
        "# Wiki: decisions\n\n"
        "### 2026-11-02: use Postgres for the sync worker store\n- status: active\n"
        "- source: 2026-11-02 · entry=e-000000000009 · agent=worf · session=s-sync\n\n"
        "## Superseded\n\n"
        "### 2026-11-01: use SQLite for the sync worker store\n"
        "- replaced by: use Postgres for the sync worker store (2026-11-02)\n"
        "- source: 2026-11-01 · entry=e-000000000008 · agent=worf · session=s-sync\n"
    )
    (lay.wiki / "index.md").write_text("# Wiki index\n- decisions\n")
    old = _entry("e-000000000007", "worf", "s-migr", 1, "Split migration 0042", ["CREATE INDEX CONCURRENTLY cannot run inside a transaction block"])
    (lay.archive / "promoted" / "worf" / "2026-11-01-e-000000000007.md.gz").write_bytes(gzip.compress(old.encode()))
    return lay


def test_hits_in_every_tier_with_provenance(tmp_path: Path) -> None:
    lay = _root(tmp_path)
    with Index(lay) as ix:
        ix.refresh()
        cold = ix.search("freeze_time clock skew")
        assert cold and cold[0].tier == "cold" and cold[0].agent == "picard"
        assert cold[0].session == "s-auth" and cold[0].date == "2026-11-03"
        assert cold[0].file == ".squad/memory/cold/picard.md" and cold[0].line > 1
        assert "«freeze_time»" in cold[0].snippet or "«clock»" in cold[0].snippet

        sup = ix.search("SQLite sync worker store")
        assert sup[0].tier == "wiki" and sup[0].status == "superseded" and sup[0].topic == "decisions"
        assert any(h.status == "active" and "Postgres" in h.heading for h in ix.search("sync worker store"))

        arch = ix.search("CREATE INDEX CONCURRENTLY")
        assert arch and arch[0].tier == "archive" and arch[0].status == "archived" and arch[0].agent == "worf"


def test_filters_and_rebuild_give_the_same_results(tmp_path: Path) -> None:
    lay = _root(tmp_path)
    with Index(lay) as ix:
        ix.refresh()
        assert {h.agent for h in ix.search("the", agent="riker")} <= {"riker"}
        assert {h.tier for h in ix.search("sync worker store", tiers=("wiki",))} == {"wiki"}
        assert [h.session for h in ix.search("auth", since="2026-11-04")] == ["s-docs"]
        before = [h.public() for h in ix.search("store OR worker")]
    (lay.state / "search.sqlite").unlink()
    with Index(lay) as ix:
        ix.refresh(rebuild=True)
        assert [h.public() for h in ix.search("store OR worker")] == before


def test_the_index_follows_writes(tmp_path: Path) -> None:
    lay = _root(tmp_path)
    with Index(lay) as ix:
        ix.refresh()
        assert not ix.search("kafka")
        path = lay.cold / "riker.md"
        path.write_text(path.read_text() + "\n" + _entry("e-00000000000a", "riker", "s-q", 6, "Move events to kafka", ["kafka topic orders.v2"]))
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
        ix.refresh()
        assert [h.session for h in ix.search("kafka")] == ["s-q"]
        path.unlink()
        ix.refresh()
        assert not ix.search("kafka")


def test_any_word_is_a_fallback_and_operators_are_just_words(tmp_path: Path) -> None:
    lay = _root(tmp_path)
    with Index(lay) as ix:
        ix.refresh()
        assert ix.search("ratelimit unrelatedword")  # no entry has both: falls back to any word
        assert ix.search('"bucket" OR NEAR(x') is not None
    assert fts_query('a" OR b*') == '"a" "OR" "b"'  # every word quoted, OR too; no prefix star
    with pytest.raises(SearchError):
        fts_query("  ...  ")


def test_cli_prints_hits_and_json(tmp_path: Path) -> None:
    _root(tmp_path)
    runner = CliRunner()
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "token", "bucket", "--json"])
    assert res.exit_code == 0, res.output
    hits = json.loads(res.output)["hits"]
    assert hits[0]["agent"] == "riker" and hits[0]["file"].endswith("cold/riker.md")
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "SQLite"])
    assert res.exit_code == 0 and "[superseded]" in res.output
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "zzzqqq"])
    assert res.exit_code == 0 and "no match" in res.output
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "--since", "yesterday", "x"])
    assert res.exit_code == 2
