"""`scribed search`: cold, wiki (superseded marked) and archive hits with provenance; filters; rebuild."""

from __future__ import annotations

import gzip
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scribed.cli.main import main
from scribed.compress import entry
from scribed.models import Summary
from scribed.recall.search import Index, SearchError, fts_query
from scribed.tiers.cold import Layout


def _entry(eid: str, agent: str, session: str, day: int, goal: str, facts: list[str]) -> str:
    meta = entry.EntryMeta(
        eid,
        agent,
        session,
        "x.md",
        "markdown",
        datetime(2026, 11, day, 9, tzinfo=UTC),
        1,
        9,
        9,
        "0" * 64,
        "extractive",
        10_000,
    )
    return entry.render(Summary(goal=goal, key_points=facts), meta)


def _root(tmp: Path) -> Layout:
    lay = Layout(tmp)
    for d in (lay.cold, lay.wiki, lay.archive / "promoted" / "worf"):
        d.mkdir(parents=True)
    (lay.cold / "picard.md").write_text(
        "# Cold memory: picard\n\n"
        + _entry(
            "e-000000000001",
            "picard",
            "s-auth",
            3,
            "Fix the flaky login test",
            ["the clock skew came from freeze_time in tests/test_login.py"],
        )
        + "\n"
        + _entry(
            "e-000000000002",
            "picard",
            "s-docs",
            5,
            "Review the auth docs",
            ["docs/auth.md now names the 15-minute timeout"],
        )
    )
    (lay.cold / "riker.md").write_text(
        "# Cold memory: riker\n\n"
        + _entry(
            "e-000000000003",
            "riker",
            "s-rate",
            4,
            "Rate limit the public API",
            ["token bucket keyed by API key in src/app/ratelimit.py"],
        )
    )
    (lay.wiki / "decisions.md").write_text(
        "# Wiki: decisions\n\n"
        "### 2026-11-02: use Postgres for the sync worker store\n- status: active\n"
        "- source: 2026-11-02 · entry=e-000000000009 · agent=worf · session=s-sync\n\n"
        "## Superseded\n\n"
        "### 2026-11-01: use SQLite for the sync worker store\n"
        "- status: superseded by 2026-11-02: use Postgres for the sync worker store\n"
        "- source: 2026-11-01 · entry=e-000000000008 · agent=worf · session=s-sync\n"
    )
    (lay.wiki / "index.md").write_text("# Wiki index\n- decisions\n")
    old = _entry(
        "e-000000000007",
        "worf",
        "s-migr",
        1,
        "Split migration 0042",
        ["CREATE INDEX CONCURRENTLY cannot run inside a transaction block"],
    )
    (lay.archive / "promoted" / "worf" / "2026-11-01-e-000000000007.md.gz").write_bytes(
        gzip.compress(old.encode())
    )
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
        path.write_text(
            path.read_text()
            + "\n"
            + _entry("e-00000000000a", "riker", "s-q", 6, "Move events to kafka", ["kafka topic orders.v2"])
        )
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


def test_search_for_an_agent_with_nothing_indexed_says_so(tmp_path: Path) -> None:
    """Finding s21: `--agent nobody` said "no match", as for a word no entry holds."""
    _root(tmp_path)
    runner = CliRunner()
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "token", "--agent", "nobody"])
    assert res.exit_code == 2 and "no agent named 'nobody' has anything searchable" in res.stderr
    assert "agents that do: " in res.stderr and "riker" in res.stderr, res.stderr
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "zzzqqq", "--agent", "riker"])
    assert res.exit_code == 0 and "no match" in res.output, res.output  # a known agent: no match
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "token", "--agent", "riker"])
    assert res.exit_code == 0 and "riker" in res.output


def _wiki_authors(tmp: Path) -> CliRunner:
    """The test root plus a fact alice wrote (her only memory: no cold entry, no hot file) and a
    fact promoted from two agents' sessions, whose statement names a third."""
    lay = _root(tmp)
    runner = CliRunner()
    res = runner.invoke(
        main,
        ["wiki-write", "conventions", "--agent", "Alice", "--root", str(tmp)],
        input="Vendor the protobuf stubs under third_party/proto; never regenerate them in CI.",
    )
    assert res.exit_code == 0, res.output
    with (lay.wiki / "decisions.md").open("a") as f:
        f.write(
            "\n### Shard the audit table by tenant_id\nAgreed with troi after the 3 a.m. page.\n\n"
            "*Source:* 2026-11-06 · entry=e-00000000000b · agent=worf · session=s-shard; 2026-11-08 · "
            "entry=e-00000000000c · agent=riker · session=s-audit | confidence: 2 sessions, 2 agents\n"
        )
    return runner


def test_agent_filter_finds_the_wiki_facts_an_agent_wrote(tmp_path: Path) -> None:
    """Finding (task J): `search --agent alice` found nothing of the facts alice wrote, and said no
    agent alice had memory: wiki-write's provenance says `author=`, the index read only `agent=`
    (and only the first source's)."""
    from scribed.cli.mcp_server import tool_search

    runner = _wiki_authors(tmp_path)

    def hits(*args: str) -> list[dict[str, Any]]:
        res = runner.invoke(main, ["search", "--root", str(tmp_path), "--json", *args])
        assert res.exit_code == 0, res.output
        found: list[dict[str, Any]] = json.loads(res.output)["hits"]
        return found

    (mine,) = hits("protobuf", "stubs", "--agent", "alice")
    assert mine["tier"] == "wiki" and mine["topic"] == "conventions" and mine["agent"] == "alice"
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "CI", "--agent", "alice"])
    assert res.exit_code == 0 and "third_party/proto" in res.output, res.output
    assert hits("protobuf", "--agent", "riker") == []  # riker has memory, not this fact
    for who in ("worf", "riker"):  # each agent whose session a promoted fact came from
        (shard,) = hits("audit", "tenant_id", "--agent", who, "--tier", "wiki")
        assert shard["agent"] == "worf riker", shard
    res = runner.invoke(main, ["search", "--root", str(tmp_path), "audit", "--agent", "troi"])
    assert res.exit_code == 2 and "no agent named 'troi'" in res.stderr  # named in a statement only
    assert "alice" in res.stderr, res.stderr  # listed among the agents that have memory

    out = tool_search(Layout(tmp_path), "protobuf stubs", agent="alice")  # the MCP tool, the same
    assert [(h["tier"], h["agent"]) for h in out["hits"]] == [("wiki", "alice")]


def test_an_index_of_the_previous_version_is_rebuilt(tmp_path: Path) -> None:
    """The index is a cache: one built by the previous version (wiki facts by their author under
    no agent) is rebuilt on open, not kept until the page changes."""
    import sqlite3

    _wiki_authors(tmp_path)
    lay = Layout(tmp_path)
    with Index(lay) as ix:
        ix.refresh()
        assert ix.search("protobuf", agent="alice")
    db = sqlite3.connect(lay.state / "search.sqlite")
    with db:  # what version 3 indexed: no agent for a fact an agent wrote
        db.execute("UPDATE docs SET agent = '' WHERE tier = 'wiki' AND text LIKE '%author=%'")
        db.execute("PRAGMA user_version = 3")
    db.close()
    with Index(lay) as ix:
        ix.refresh()
        assert [h.topic for h in ix.search("protobuf", agent="alice")] == ["conventions"]


# --------------------------------------------------------------------------- transcript archive

SID = "7e57a1c0-5e4c-4b1d-9f00-5ea5c4ed0001"
ONLY_IN_TRANSCRIPT = "quokka ledger drift 7731"


def _claude_transcript(folder: Path) -> Path:
    """A session whose tool output, deep in a long listing, holds a phrase no summary keeps."""
    listing = "\n".join(f"worker-{i:03d} ok, heap {200 + i} MB" for i in range(120))
    listing = listing.replace("worker-061 ok", f"worker-061 {ONLY_IN_TRANSCRIPT} ok")

    def rec(i: int, role: str, content: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            message |= {"id": f"m{i}", "type": "message", "model": "claude-sonnet-4-5"}
        return {"type": role, "uuid": f"u{i}", "parentUuid": f"u{i - 1}", "sessionId": SID,
                "timestamp": f"2026-11-07T10:0{i}:00Z", "cwd": "/home/dev/ops", "message": message}  # fmt: skip

    records = [
        rec(1, "user", "Find out why the nightly worker pool restarts."),
        rec(2, "assistant", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "poolctl status"}}]),
        rec(3, "user", [{"type": "tool_result", "tool_use_id": "t1", "content": listing}]),
        rec(4, "assistant", [{"type": "text", "text": "The pool restarts because the OOM killer hits workers above 300 MB."}]),
    ]  # fmt: skip
    folder.mkdir(parents=True)
    path = folder / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_deleted_transcript_is_found_in_the_archive(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".squad/memory/cold").mkdir(parents=True)
    src = _claude_transcript(tmp_path / "claude" / "-home-dev-ops")
    (root / "scribed.toml").write_text(
        f'root = "."\n[[sources]]\nkind = "claude"\npath = "{src.parent}"\nagent = "geordi"\n'
    )
    runner = CliRunner()

    def search(*args: str) -> list[dict[str, Any]]:
        res = runner.invoke(main, ["--config", str(root / "scribed.toml"), "search", "--json", *args])
        assert res.exit_code == 0, res.output
        hits: list[dict[str, Any]] = json.loads(res.output)["hits"]
        return hits

    assert search(ONLY_IN_TRANSCRIPT) == []  # the index exists before the session is archived
    res = runner.invoke(main, ["--config", str(root / "scribed.toml"), "run-once", "--force"])
    assert res.exit_code == 0, res.output
    cold = (root / ".squad/memory/cold/geordi.md").read_text()
    assert "OOM killer" in cold and "7731" not in cold, "the phrase must exist only in the transcript"
    src.unlink()

    (hit,) = search(ONLY_IN_TRANSCRIPT)  # found without a rebuild: the refresh saw the new archive
    assert hit["tier"] == "transcript" and hit["session"] == SID and hit["agent"] == "geordi"
    assert (
        hit["date"] == "2026-11-07" and hit["source"].endswith(f"{SID}.jsonl") and hit["line"] == 1
    )  # its chunk starts there
    assert hit["file"].startswith(".squad/memory/.scribed/transcripts/claude-") and "«7731»" in hit["snippet"]
    assert search("--tier", "transcript", "OOM", "killer")[0]["session"] == SID
    assert search("--tier", "cold", ONLY_IN_TRANSCRIPT) == []
    assert search("--agent", "geordi", "--tier", "transcript", "7731")[0]["session"] == SID
    res = runner.invoke(main, ["--config", str(root / "scribed.toml"), "search", "--agent", "worf", "7731"])
    assert res.exit_code == 2 and "agents that do: geordi" in res.stderr  # geordi's hit is not worf's

    (root / ".squad/memory/.scribed/search.sqlite").unlink()
    res = runner.invoke(main, ["--config", str(root / "scribed.toml"), "search", "--rebuild"])
    assert res.exit_code == 0 and "index rebuilt" in res.output
    assert search(ONLY_IN_TRANSCRIPT) == [hit]
    res = runner.invoke(main, ["--config", str(root / "scribed.toml"), "search", ONLY_IN_TRANSCRIPT])
    assert f"transcript [archived] {hit['file']}:1" in res.output and SID in res.output


def test_an_old_index_is_rebuilt_in_the_new_shape(tmp_path: Path) -> None:
    lay = _root(tmp_path)
    lay.state.mkdir(parents=True, exist_ok=True)
    import sqlite3

    old = sqlite3.connect(lay.state / "search.sqlite")
    old.executescript(
        "CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER);"
        "CREATE VIRTUAL TABLE docs USING fts5(text, heading, tier UNINDEXED);"
    )
    old.close()
    with Index(lay) as ix:
        ix.refresh()
        assert ix.search("token bucket")[0].agent == "riker"


def test_mcp_search_never_echoes_a_pasted_secret(tmp_path: Path) -> None:
    """The MCP `search` tool answers with the query it ran, redacted like the CLI's."""
    from scribed.cli.mcp_server import tool_search

    token = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA1"
    (tmp_path / ".squad/memory/cold").mkdir(parents=True)
    out = tool_search(Layout(tmp_path), f"deploy {token}", transcripts_at=tmp_path / "elsewhere")
    assert token not in json.dumps(out) and out["hits"] == []


def test_a_markdown_transcripts_chunks_carry_their_sessions_dates() -> None:
    """Aider and SpecStory archives were dated the day they were archived (an exploratory tester's
    `search` showed 2026-12-07 for sessions of November): a chunk takes the date of its heading or
    speaker line, else the last one before it, else its first session's start; a date said in a
    message is no chunk's date."""
    from scribed.recall.search import _CHUNK_LINES, _transcript_docs
    from scribed.tiers.transcripts import Archived

    filler = [f"reprinted label batch {i} for the herbarium" for i in range(_CHUNK_LINES)]
    lines = [
        "# aider chat started at 2026-11-22 15:40:12",
        "#### switch the labels to reportlab, the deadline is 2027-01-15 09:00",  # a message
        *filler,  # a chunk of its own, with no date: the last one before it
        "# aider chat started at 2026-11-26 09:12:55",
        "On second thought, keep fpdf2.",
    ]
    rec = Archived(
        Path("/x.zst"), ".aider.chat.history.md", "markdown",
        sessions=["aider.chat.history@2026-11-22T15:40:12Z", "aider.chat.history@2026-11-26T09:12:55Z"],
        agents=["aider"], archived_at="2026-12-07T09:00:00Z",
    )  # fmt: skip
    dates = [d.date for d in _transcript_docs(lines, rec)]
    assert dates == ["2026-11-22", "2026-11-22", "2026-11-26"], dates
    undated = Archived(Path("/y.zst"), "notes.md", "markdown", sessions=["notes@2026-10-02T08:00:00Z"])
    assert [d.date for d in _transcript_docs(["just text", "more text"], undated)] == ["2026-10-02"]
