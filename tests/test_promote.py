"""Cold → wiki promotion, agent writes and the wiki inbox, end to end and unit by unit."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from scribed.compress import entry
from scribed.compress.entry import split_entries
from scribed.config import from_dict
from scribed.core import promote
from scribed.core.ledger import Ledger
from scribed.core.lock import root_lock
from scribed.models import Summary
from scribed.tiers.cold import Layout, append
from scribed.tiers.wiki import WikiDoc

FAKE_SECRET = "ghp_R7t2Kq9LmX4vB8nC1zD5wF3hJ6pS0aY2uE8i"
LAUNCH = (
    "from scribed.cli.main import main\n"
    "if 'promote' not in main.commands:\n"
    "    from scribed.cli.wiki import register\n"
    "    register(main)\n"
    "main()\n"
)


def scribed(
    *args: str, stdin: bytes | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """The real CLI in a subprocess (``-m scribed`` once cli.py registers the wiki commands)."""
    from scribed.cli.main import main

    head = ["-m", "scribed"] if "promote" in main.commands else ["-c", LAUNCH]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    return subprocess.run(
        [sys.executable, *head, *args], env=env, capture_output=True, timeout=timeout, input=stdin
    )


def scribed_json(*args: str, stdin: bytes | None = None) -> tuple[int, dict[str, Any], str]:
    p = scribed(*args, "--json", stdin=stdin)
    err = p.stderr.decode()
    try:
        return p.returncode, json.loads(p.stdout.decode()), err
    except json.JSONDecodeError:
        raise AssertionError(f"not JSON (exit {p.returncode}): {p.stdout!r}\nstderr: {err}") from None


def memory_bytes(root: Path) -> dict[str, bytes]:
    """Every byte under .squad/memory except the ledger (it records when promotion last ran)."""
    mem = root / ".squad" / "memory"
    return {
        str(p.relative_to(mem)): p.read_bytes()
        for p in sorted(mem.rglob("*"))
        if p.is_file() and not p.name.startswith("ledger.sqlite") and p.name != "lock"
    }


# --- the acceptance scenario -------------------------------------------------------------------
def _noise(n: int, tag: str) -> str:
    rows = "\n".join(
        f"tests/test_{tag}.py::test_case_{i:03d} PASSED    [{(i + 1) * 100 // n:3d}%]" for i in range(n)
    )
    return f"```\n$ pytest tests/test_{tag}.py -q\n{rows}\n```"


SESSIONS = {
    "2026-09-01-login.md": (
        "---\ndate: 2026-09-01T10:00:00Z\nagent: picard\nsession: s-0901\n---\n\n"
        "User: The login test in tests/test_login.py is flaky again, see #590. Please fix it.\n\n"
        "Assistant: Let me look at the test first.\n\n" + _noise(40, "login") + "\n\n"
        "Assistant: The cause is the 15-minute session timeout crossing a minute boundary.\n"
        "Decision: use `freeze_time()` from freezegun in the login tests to pin the clock.\n\n"
        "Assistant: Done, all tests pass.\n"
    ),
    "2026-09-15-clock.md": (
        "---\ndate: 2026-09-15T14:00:00Z\nagent: picard\nsession: s-0915\n---\n\n"
        "User: freeze_time() breaks the async tests in tests/test_ws.py. Change the approach.\n\n"
        "Assistant: Reading the websocket tests.\n\n" + _noise(40, "ws") + "\n\n"
        "Assistant: Decision: reverse the earlier choice and use an injected clock in src/auth/session.py "
        "instead of `freeze_time()` in the login tests.\n\n"
        "Assistant: Done, all tests pass.\n"
    ),
    "2026-11-20-export.md": (
        "---\ndate: 2026-11-20T09:00:00Z\nagent: picard\nsession: s-1120\n---\n\n"
        "User: The CSV export job runs out of memory on large tenants.\n\n"
        "Assistant: Profiling the job.\n\n" + _noise(40, "export") + "\n\n"
        "Assistant: Decision: stream rows with server-side cursors in src/export/job.py.\n"
        "TODO: add a progress bar to the export UI.\n"
    ),
}


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    root = tmp_path / "squad"
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    (root / ".squad").mkdir()
    past = datetime(2026, 11, 21, tzinfo=UTC).timestamp()
    for name, text in SESSIONS.items():
        p = sessions / name
        p.write_text(text)
        os.utime(p, (past, past))
    (root / "scribed.toml").write_text(
        'root = "."\n\n[compress]\nbackend = "extractive"\n\n'
        '[[sources]]\nkind = "markdown"\npath = "sessions"\nagent = "picard"\n'
    )
    return root


def test_acceptance_promote(scenario: Path) -> None:
    root = scenario
    cfg = str(root / "scribed.toml")
    p = scribed("--config", cfg, "run-once")
    assert p.returncode == 0, p.stderr.decode()
    cold_file = root / ".squad/memory/cold/picard.md"
    _, entries = split_entries(cold_file.read_text())
    assert [e.date[:10] for e in entries] == ["2026-09-01", "2026-09-15", "2026-11-20"]
    ids = {e.date[:10]: e.entry_id or "" for e in entries}

    # the plan first: nothing written
    before = memory_bytes(root)
    code, plan, err = scribed_json("--config", cfg, "promote", "--as-of", "2026-11-29", "--dry-run")
    assert code == 0, err
    assert plan["dry_run"] and [p["entry"] for p in plan["promoted"]] == [
        ids["2026-09-01"],
        ids["2026-09-15"],
    ]
    assert memory_bytes(root) == before

    code, out, err = scribed_json("--config", cfg, "promote", "--as-of", "2026-11-29")
    assert code == 0, err
    assert "Traceback" not in err
    assert out["as_of"] == "2026-11-29T00:00:00Z" and out["kept"] == 1
    moved = [p["entry"] for p in out["promoted"]] + [a["entry"] for a in out["archived"]]
    assert sorted(moved) == sorted([ids["2026-09-01"], ids["2026-09-15"]])
    assert "decisions" in out["topics"]
    later = next(p for p in out["promoted"] if p["entry"] == ids["2026-09-15"])
    assert later["facts"][0]["superseded"], later

    # the old entries left cold (the recent one stays) and are archived
    _, left = split_entries(cold_file.read_text())
    assert [e.entry_id for e in left] == [ids["2026-11-20"]]
    for item in out["promoted"] + out["archived"]:
        arch = root / ".squad/memory/.scribed/archive" / item["archive"]
        assert gzip.decompress(arch.read_bytes()).decode().startswith(f"### {item['date']}")

    # the wiki holds the later decision with its session's provenance; the reversed one is superseded
    wiki = root / ".squad/memory/wiki"
    doc = WikiDoc.parse("decisions", (wiki / "decisions.md").read_text())
    active = [b for b in doc.blocks if b.active]
    assert len(active) == 1 and "injected clock" in active[0].text
    src = active[0].sources[0]
    assert (src.date, src.ref, src.session, src.agent) == (
        "2026-09-15",
        ids["2026-09-15"],
        "s-0915",
        "picard",
    )
    old = [b for b in doc.blocks if "freeze_time()" in b.title and "injected" not in b.text]
    assert len(old) == 1 and old[0].status.startswith("superseded by 2026-09-15: ")
    assert old[0].sources[0].ref == ids["2026-09-01"]
    assert "server-side cursors" not in (wiki / "decisions.md").read_text(), (
        "the recent session stays in cold"
    )
    index = (wiki / "index.md").read_text()
    assert "[decisions](decisions.md)" in index and len(index.splitlines()) <= 200

    led = Ledger(root / ".squad/memory/.scribed/ledger.sqlite", readonly=True)
    try:
        assert led.get_meta("last_promotion_at")
    finally:
        led.close()

    # a second promotion changes no byte
    snap = memory_bytes(root)
    code, again, err = scribed_json("--config", cfg, "promote", "--as-of", "2026-11-29")
    assert code == 0, err
    assert again["promoted"] == again["archived"] == [] and again["kept"] == 1
    assert memory_bytes(root) == snap


def test_promote_human_output_and_bad_date(scenario: Path) -> None:
    cfg = str(scenario / "scribed.toml")
    assert scribed("--config", cfg, "run-once").returncode == 0
    p = scribed("--config", cfg, "promote", "--as-of", "2026-11-29", "--dry-run")
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert "dry run" in out and "→ decisions" in out and "2 promoted, 0 archived, 1 kept" in out
    for bad in ("yesterday", "2026-13-40", "29/11/2026"):
        p = scribed("--config", cfg, "promote", "--as-of", bad)
        assert p.returncode == 2 and "--as-of" in p.stderr.decode(), bad


# --- classification ----------------------------------------------------------------------------
def cold_entry(
    layout: Layout,
    agent: str,
    when: datetime,
    ident: str,
    *,
    session: str = "",
    max_bytes: int = 100_000,
    **sections: Any,
) -> str:
    summary = Summary(**sections)
    meta = entry.EntryMeta(
        entry_id=ident,
        agent=agent,
        session=session or f"s-{ident[-4:]}",
        source="/tmp/t.md",
        kind="markdown",
        end=when,
        first_line=1,
        last_line=10,
        turns=4,
        sha256="0" * 64,
        compressor="extractive",
        bytes_in=5000,
    )
    text = entry.render(summary, meta)
    append(layout, agent, text, ident, max_bytes=max_bytes, now=when)
    return text


def test_classification_rules(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    text = cold_entry(
        layout,
        "riker",
        datetime(2026, 9, 1, 10, tzinfo=UTC),
        "e-aaaaaaaaaaa1",
        goal="Rate limiting for the public API",
        outcome="Done, merged.",
        decisions=[
            "use a token bucket in src/app/ratelimit.py because bursts from one key starved others",
            "use Redis for the counters (supersedes: use in-process counters)",
        ],
        files=["`src/app/ratelimit.py`"],
        errors=[
            "`AssertionError: 429 expected` → Fixed by resetting the bucket between tests.",
            "`KeyError: x`",
        ],
        open_items=["add metrics for rejected requests"],
        knowledge=[
            "Always log the API key id, never the key itself.",
            "The gateway must not retry POST requests.",
            "The limiter can hold only 10k keys in memory.",
            "The /v2/limits endpoint returns the remaining quota per key.",
            "Bucket refill drifts when the clock jumps; compare monotonic time.",
            "All tests pass.",
        ],
        key_facts=[
            "issues: #412",
            "command: `pytest -q`",
            "user: Never log raw API keys",
            "decision: keep limits in config/limits.toml",
        ],
    )
    e = split_entries(text)[1][0]
    facts, warnings = promote.extract_facts(e, "riker")
    assert warnings == []
    got = {(f.topic, f.text) for f in facts}
    assert got == {
        (
            "decisions",
            "use a token bucket in src/app/ratelimit.py because bursts from one key starved others",
        ),
        ("decisions", "use Redis for the counters"),
        ("decisions", "keep limits in config/limits.toml"),
        ("conventions", "Never log raw API keys"),
        ("conventions", "Always log the API key id, never the key itself."),
        ("constraints", "The gateway must not retry POST requests."),
        ("constraints", "The limiter can hold only 10k keys in memory."),
        ("contracts", "The /v2/limits endpoint returns the remaining quota per key."),
        ("patterns", "Bucket refill drifts when the clock jumps; compare monotonic time."),
        (
            "patterns",
            "Known issue: `AssertionError: 429 expected` → Fixed by resetting the bucket between tests.",
        ),
    }
    by_text = {f.text: f for f in facts}
    assert by_text["use Redis for the counters"].supersedes == "use in-process counters"
    assert by_text[next(t for t in by_text if t.startswith("use a token"))].rationale.startswith(
        "bursts from one key"
    )
    for f in facts:  # every fact traces to its cold entry
        assert (f.source.ref, f.source.agent, f.source.session, f.date) == (
            "e-aaaaaaaaaaa1",
            "riker",
            "s-aaa1",
            "2026-09-01",
        )
    assert promote.classify("Never push on Fridays") == "conventions"
    assert promote.classify("Uploads are limited to 10 MB") == "constraints"
    assert promote.classify("The schema has a tenant_id column") == "contracts"
    assert promote.classify("Retries with jitter smooth the load") == "patterns"


def test_topic_named_in_the_entry(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    when = datetime(2026, 9, 1, tzinfo=UTC)
    t1 = cold_entry(
        layout, "data", when, "e-bbbbbbbbbbb1", goal="x", decisions=["use httpx"], key_facts=["topic: auth"]
    )
    facts, _ = promote.extract_facts(split_entries(t1)[1][0], "data")
    assert [(f.topic, f.kind) for f in facts] == [("auth", "decision")]
    t2 = cold_entry(
        layout, "data", when, "e-bbbbbbbbbbb2", goal="y", decisions=["use uv"], key_facts=["wiki: ../etc"]
    )
    facts, warnings = promote.extract_facts(split_entries(t2)[1][0], "data")
    assert [f.topic for f in facts] == ["decisions"] and "bad topic name" in warnings[0]


# --- promotion in process ----------------------------------------------------------------------
def _cfg(root: Path) -> Any:
    return from_dict({"root": str(root)})


def test_nothing_durable_is_archived_not_promoted(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    text = cold_entry(
        layout,
        "troi",
        datetime(2026, 8, 1, tzinfo=UTC),
        "e-ccccccccccc1",
        goal="Read the docs",
        outcome="Read them.",
        open_items=["ask picard about the glossary"],
        key_facts=["issues: #7"],
    )
    out = promote.promote(_cfg(tmp_path), as_of=datetime(2026, 11, 29, tzinfo=UTC)).to_json()
    assert out["promoted"] == [] and [a["entry"] for a in out["archived"]] == ["e-ccccccccccc1"]
    assert not (tmp_path / ".squad/memory/wiki").exists()
    arch = layout.archive / out["archived"][0]["archive"]
    assert gzip.decompress(arch.read_bytes()).decode() == text
    assert split_entries((layout.cold / "troi.md").read_text())[1] == []


def test_crash_between_wiki_write_and_cold_removal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = Layout(tmp_path)
    for i, day in enumerate((2, 9)):
        cold_entry(
            layout,
            "worf",
            datetime(2026, 9, day, tzinfo=UTC),
            f"e-ddddddddddd{i}",
            goal="g",
            decisions=[f"decision number {i} about the {day} deploy window"],
            knowledge=["Always tag releases from main."],
        )
    cold_before = (layout.cold / "worf.md").read_bytes()

    def boom(*_: Any) -> int:
        raise OSError("disk full while rewriting cold")

    monkeypatch.setattr(promote, "_remove_from_cold", boom)
    with pytest.raises(OSError, match="disk full"):
        promote.promote(_cfg(tmp_path), as_of=datetime(2026, 11, 29, tzinfo=UTC))
    wiki_after_crash = {p.name: p.read_bytes() for p in layout.wiki.iterdir()}
    assert b"decision number 0" in wiki_after_crash["decisions.md"]
    assert (layout.cold / "worf.md").read_bytes() == cold_before, "the entries are still in cold"

    monkeypatch.undo()
    out = promote.promote(_cfg(tmp_path), as_of=datetime(2026, 11, 29, tzinfo=UTC)).to_json()
    actions = [f["action"] for p in out["promoted"] for f in p["facts"]]
    assert actions and set(actions) == {"present"}
    assert {p.name: p.read_bytes() for p in layout.wiki.iterdir()} == wiki_after_crash, "no duplicate"
    conv = WikiDoc.parse("conventions", (layout.wiki / "conventions.md").read_text())
    assert len(conv.blocks) == 1 and len(conv.blocks[0].sources) == 2  # two sessions said it, once each
    assert split_entries((layout.cold / "worf.md").read_text())[1] == []


def test_same_fact_from_two_agents_raises_confidence(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    cold_entry(
        layout,
        "picard",
        datetime(2026, 8, 1, tzinfo=UTC),
        "e-eeeeeeeeeee1",
        goal="a",
        decisions=["pin Python to 3.11 in CI"],
    )
    cold_entry(
        layout,
        "riker",
        datetime(2026, 8, 3, tzinfo=UTC),
        "e-eeeeeeeeeee2",
        goal="b",
        decisions=["Pin Python to 3.11 in CI."],
    )
    promote.promote(_cfg(tmp_path), as_of=datetime(2026, 11, 29, tzinfo=UTC))
    doc = WikiDoc.parse("decisions", (layout.wiki / "decisions.md").read_text())
    assert len(doc.blocks) == 1
    assert doc.blocks[0].confidence() == "2 sessions, 2 agents"
    assert {s.agent for s in doc.blocks[0].sources} == {"picard", "riker"}


def test_folded_digests_promote_with_their_folded_ids(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    ids = [f"e-fffffffff{i:03d}" for i in range(8)]
    for i, ident in enumerate(ids):
        cold_entry(
            layout,
            "data",
            datetime(2026, 7, 1 + i, tzinfo=UTC),
            ident,
            max_bytes=2048,
            goal=f"session {i}",
            decisions=[f"decision {i}: keep module m{i} pure"],
            key_facts=["x" * 150],
        )
    _, entries = split_entries((layout.cold / "data.md").read_text())
    assert any(e.entry_id and e.entry_id.startswith("d-") for e in entries), "the fold made a digest"
    promote.promote(_cfg(tmp_path), as_of=datetime(2026, 11, 29, tzinfo=UTC))
    doc = WikiDoc.parse("decisions", (layout.wiki / "decisions.md").read_text())
    assert doc.refs >= set(ids), "every folded session traces to the wiki"


def test_undatable_entry_is_kept(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.cold.mkdir(parents=True)
    (layout.cold / "data.md").write_text(
        "# Cold memory: data\n\n### 2026-13-45: broken date\n#### Decisions\n- x y z\n"
    )
    out = promote.promote(_cfg(tmp_path), as_of=datetime(2026, 11, 29, tzinfo=UTC)).to_json()
    assert out["kept"] == 1 and out["promoted"] == [] and "no readable date" in out["warnings"][0]


def test_root_lock_excludes_concurrent_runs(scenario: Path) -> None:
    cfg = str(scenario / "scribed.toml")
    assert scribed("--config", cfg, "run-once").returncode == 0
    layout = Layout(scenario)
    cold_before = (layout.cold / "picard.md").read_bytes()
    from scribed.cli.main import main

    head = ["-m", "scribed"] if "promote" in main.commands else ["-c", LAUNCH]
    with root_lock(layout.lock):
        proc = subprocess.Popen(
            [sys.executable, *head, "--config", cfg, "promote", "--as-of", "2026-11-29"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(2.0)
        assert proc.poll() is None, "promote waits for the lock"
        assert (layout.cold / "picard.md").read_bytes() == cold_before
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert (layout.cold / "picard.md").read_bytes() != cold_before


def test_daemon_style_call_with_a_scribe_does_not_relock(tmp_path: Path) -> None:
    from scribed.core.scribe import Scribe

    layout = Layout(tmp_path)
    cold_entry(
        layout, "data", datetime(2026, 8, 1, tzinfo=UTC), "e-abababababab", goal="g", decisions=["use uv"]
    )
    scribe = Scribe(_cfg(tmp_path), clock=lambda: datetime(2026, 11, 29, 3, 0, tzinfo=UTC))
    done: list[dict[str, object]] = []
    try:
        with root_lock(layout.lock):  # the daemon holds the root lock while it promotes
            t = threading.Thread(target=lambda: done.append(promote.promote(scribe).to_json()))
            t.start()
            t.join(20)
            assert not t.is_alive(), "promote(scribe) must not wait for the lock its caller holds"
        assert done[0]["as_of"] == "2026-11-29T03:00:00Z" and len(done[0]["promoted"]) == 1
        assert scribe.ledger.get_meta("last_promotion_at") == "2026-11-29T03:00:00Z"
    finally:
        scribe.close()


# --- agent writes ------------------------------------------------------------------------------
def test_wiki_write_from_stdin(tmp_path: Path) -> None:
    (tmp_path / ".squad").mkdir(exist_ok=True)
    (tmp_path / "scribed.toml").write_text('root = "."\n')
    cfg = str(tmp_path / "scribed.toml")
    text = f"Auth tokens expire after 15 minutes.\n\nThe refresh endpoint returns a new pair.\ntoken={FAKE_SECRET}\n"
    code, out, err = scribed_json(
        "--config", cfg, "wiki-write", "auth", "--agent", "Troi", stdin=text.encode()
    )
    assert code == 0, err
    assert out["action"] == "added" and out["agent"] == "troi"
    today = datetime.now(UTC).date().isoformat()
    wiki = (tmp_path / ".squad/memory/wiki/auth.md").read_text()
    assert "### Auth tokens expire after 15 minutes.\n" in wiki
    assert out["date"] in (today, datetime.fromtimestamp(time.time() - 60, UTC).date().isoformat())
    assert "author=troi · via=wiki-write" in wiki
    assert FAKE_SECRET not in wiki and "[REDACTED_SECRET]" in wiki
    assert "[auth](auth.md)" in (tmp_path / ".squad/memory/wiki/index.md").read_text()

    # the same text again: nothing changes; another author: merged, confidence rises
    snap = memory_bytes(tmp_path)
    code, out2, _ = scribed_json(
        "--config", cfg, "wiki-write", "auth", "--agent", "troi", stdin=text.encode()
    )
    assert code == 0 and out2["action"] == "present" and memory_bytes(tmp_path) == snap
    f = tmp_path / "note.md"
    f.write_text(text)
    code, out3, _ = scribed_json("--config", cfg, "wiki-write", "auth", "--agent", "data", "--file", str(f))
    assert code == 0 and out3["action"] == "merged"
    doc = WikiDoc.parse("auth", (tmp_path / ".squad/memory/wiki/auth.md").read_text())
    assert len(doc.blocks) == 1 and doc.blocks[0].confidence() == "2 sessions, 2 agents"

    # a title and a reversal by an agent
    code, out4, _ = scribed_json(
        "--config", cfg, "wiki-write", "auth", "--agent", "data", "--title", "Tokens live 30 minutes",
        stdin=b"Auth tokens expire after 30 minutes.\nsupersedes: Auth tokens expire after 15 minutes.\n",
    )  # fmt: skip
    assert code == 0 and out4["superseded"], out4
    text = (tmp_path / ".squad/memory/wiki/auth.md").read_text()
    doc = WikiDoc.parse("auth", text)
    new, old = doc.blocks  # the superseded one moved under "## Superseded"
    assert new.title == "Tokens live 30 minutes" and new.active
    assert old.status.startswith("superseded by ") and old.title == "Auth tokens expire after 15 minutes."
    assert text.index("## Superseded") < text.index("### Auth tokens expire after 15 minutes.")


@pytest.mark.parametrize(
    ("args", "stdin", "msg"),
    [
        (["wiki-write", "../etc", "--agent", "troi"], b"x", "bad topic name"),
        (["wiki-write", "index", "--agent", "troi"], b"x", "bad topic name"),
        (["wiki-write", "Bad Topic", "--agent", "troi"], b"x", "bad topic name"),
        (["wiki-write", "auth", "--agent", "../x"], b"x", "bad agent name"),
        (["wiki-write", "auth", "--agent", "troi"], b"  \n", "empty text"),
        (["wiki-deprecate", "../x", "t", "--agent", "troi"], None, "bad topic name"),
        (["wiki-deprecate", "auth", "t", "--agent", "troi"], None, "no wiki topic"),
    ],
)
def test_bad_names_exit_2(tmp_path: Path, args: list[str], stdin: bytes | None, msg: str) -> None:
    (tmp_path / ".squad").mkdir(exist_ok=True)
    (tmp_path / "scribed.toml").write_text('root = "."\n')
    p = scribed("--config", str(tmp_path / "scribed.toml"), *args, stdin=stdin)
    assert p.returncode == 2, p.stderr
    assert msg in p.stderr.decode() and "Traceback" not in p.stderr.decode()
    assert not (tmp_path / ".squad/memory/wiki").exists()


def test_wiki_deprecate(tmp_path: Path) -> None:
    (tmp_path / ".squad").mkdir(exist_ok=True)
    (tmp_path / "scribed.toml").write_text('root = "."\n')
    cfg = str(tmp_path / "scribed.toml")
    for t in (b"Deploy on Tuesdays only.", b"Use blue-green deploys."):
        assert scribed("--config", cfg, "wiki-write", "deploys", "--agent", "picard", stdin=t).returncode == 0
    code, out, err = scribed_json(
        "--config", cfg, "wiki-deprecate", "deploys", "Deploy on Tuesdays only.", "--agent", "worf",
        "--reason", "we deploy daily now",
    )  # fmt: skip
    assert code == 0, err
    assert out["status"].startswith("deprecated ") and out["status"].endswith("by worf: we deploy daily now")
    doc = WikiDoc.parse("deploys", (tmp_path / ".squad/memory/wiki/deploys.md").read_text())
    assert [(b.title, b.active) for b in doc.blocks] == [
        ("Use blue-green deploys.", True),
        ("Deploy on Tuesdays only.", False),
    ], "kept, marked, under Superseded"
    p = scribed("--config", cfg, "wiki-deprecate", "deploys", "nothing like it", "--agent", "worf")
    assert p.returncode == 2 and "no block titled" in p.stderr.decode()


def test_wiki_deprecate_again_says_since_when_and_writes_nothing(tmp_path: Path) -> None:
    """Finding (task B): a second deprecation said "is now deprecated" again; it now says the fact
    already was (since when, by whom) and leaves every file as it was."""
    (tmp_path / ".squad").mkdir(exist_ok=True)
    (tmp_path / "scribed.toml").write_text('root = "."\n')
    cfg = str(tmp_path / "scribed.toml")
    for t in (b"Cache sessions in Redis for an hour.", b"Keep the rate limiter in the gateway."):
        assert scribed("--config", cfg, "wiki-write", "infra", "--agent", "data", stdin=t).returncode == 0
    first = scribed(
        "--config", cfg, "wiki-deprecate", "infra", "Redis", "--agent", "riker", "--reason", "gone"
    )
    assert first.returncode == 0 and "is now deprecated" in first.stdout.decode(), first.stderr
    wiki = tmp_path / ".squad/memory"
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in wiki.rglob("*") if p.is_file()}
    again = scribed("--config", cfg, "wiki-deprecate", "infra", "Redis", "--agent", "troi", "--reason", "x")
    out = again.stdout.decode()
    assert again.returncode == 0, again.stderr
    assert "already deprecated" in out and "by riker: gone" in out and "now" not in out, out
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in wiki.rglob("*") if p.is_file()} == before
    code, data, err = scribed_json("--config", cfg, "wiki-deprecate", "infra", "Redis", "--agent", "troi")
    assert code == 0 and data["changed"] is False and "by riker" in data["status"], err


def _django_pinned_then_repinned(tmp_path: Path) -> tuple[Any, list[str], Path, Any]:
    """A wiki page where "Pin Django to 5.0" superseded "… 4.2" (both by `wiki-write`): the
    runner, the root option, the page and the 4.2 block."""
    from click.testing import CliRunner

    from scribed.cli.main import main

    (tmp_path / ".squad").mkdir()
    root = ["--root", str(tmp_path)]
    runner = CliRunner()
    for text in (
        "Pin Django to 4.2 in requirements/base.txt.",
        "Pin Django to 5.0 in requirements/base.txt.",
    ):
        res = runner.invoke(main, ["wiki-write", "deps", "--agent", "data", *root], input=text)
        assert res.exit_code == 0, res.output
    page = tmp_path / ".squad/memory/wiki/deps.md"
    (old,) = [b for b in WikiDoc.parse("deps", page.read_text()).blocks if "4.2" in b.title]
    return runner, root, page, old


def test_deprecating_a_superseded_fact_keeps_the_pointer_to_its_successor(tmp_path: Path) -> None:
    """Finding (task J): `wiki-deprecate` on a superseded fact replaced its "superseded by …" mark
    with the deprecation's: the fact no longer named the one that replaced it. Both marks are kept
    on the one ``*Status:*`` line, the supersession first, and every reader still sees it retired."""

    from scribed.cli.main import main

    runner, root, page, old = _django_pinned_then_repinned(tmp_path)
    pointer = old.status
    assert pointer.startswith("superseded by ") and "5.0" in pointer, "the setup: 4.2 was reversed"

    args = ["wiki-deprecate", "deps", old.title, "--agent", "worf", "--reason", "the service moved to Go"]
    res = runner.invoke(main, [*args, *root])
    assert res.exit_code == 0 and "still names the fact that replaced it" in res.output, res.output
    (old,) = [b for b in WikiDoc.parse("deps", page.read_text()).blocks if "4.2" in b.title]
    assert old.status.startswith(f"{pointer}; deprecated ") and old.status.endswith(
        "by worf: the service moved to Go"
    )
    assert page.read_text().count("*Status:*") == 1 and not old.active
    before = page.read_bytes()
    again = ["wiki-deprecate", "deps", old.title, "--agent", "troi", "--json", *root]
    res = runner.invoke(main, again)  # deprecated already, beside its supersession: nothing written
    assert res.exit_code == 0 and json.loads(res.output)["changed"] is False, res.output
    assert page.read_bytes() == before

    res = runner.invoke(main, ["context", "data", "--query", "Django requirements", *root])
    assert res.exit_code == 0 and "Pin Django to 5.0" in res.output and "4.2" not in res.output, res.output
    res = runner.invoke(main, ["context", "data", "--include-wiki", "deps", *root])
    retired = res.output.split("## Superseded", 1)[-1]  # the page as loaded: under Superseded, both marks
    assert "Pin Django to 4.2" in retired and f"*Status:* {old.status}" in retired, res.output
    res = runner.invoke(main, ["search", "Django", "4.2", *root])
    assert "wiki [superseded]" in res.output and "Pin Django to 4.2" in res.output, res.output


def test_a_deprecation_reason_holding_a_mark_stays_whole_beside_the_supersession(tmp_path: Path) -> None:
    """Review finding (stop 49): ``wiki-deprecate`` on a superseded fact split its reason at "; "
    and sorted the pieces, so "dropped; superseded by nothing, we removed Django" came out as a
    second supersession before the deprecation, its reason cut off. The reason is kept whole,
    after the one real pointer."""

    from scribed.cli.main import main

    runner, root, page, old = _django_pinned_then_repinned(tmp_path)
    pointer = old.status
    assert pointer.startswith("superseded by "), "the setup: 4.2 was reversed"
    reason = "dropped; superseded by nothing, we removed Django"
    res = runner.invoke(
        main, ["wiki-deprecate", "deps", old.title, "--agent", "worf", "--reason", reason, *root]
    )
    assert res.exit_code == 0, res.output
    (old,) = [b for b in WikiDoc.parse("deps", page.read_text()).blocks if "4.2" in b.title]
    assert old.status.startswith(f"{pointer}; deprecated ") and old.status.endswith(f"by worf: {reason}")
    assert old.status.count("superseded by 20") == 1, old.status


# --- the inbox ---------------------------------------------------------------------------------
def _inbox(root: Path) -> Path:
    d = root / ".squad/memory/inbox/wiki"
    d.mkdir(parents=True, exist_ok=True)
    return d


def test_apply_inbox_applies_and_quarantines(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    box = _inbox(tmp_path)
    (box / "troi-auth.md").write_text(
        "---\ntopic: auth\nagent: troi\ntitle: Session timeout\n---\n"
        f"Sessions time out after 15 minutes of inactivity.\napi_key={FAKE_SECRET}\n"
    )
    (box / "no-front-matter.md").write_text("just text\n")
    (box / "bad-topic.md").write_text("---\ntopic: ../../etc\nagent: troi\n---\nbody\n")
    (box / "bad-agent.md").write_text("---\ntopic: auth\nagent: Not An Agent\n---\nbody\n")
    (box / "empty.md").write_text("---\ntopic: auth\nagent: troi\n---\n\n   \n")
    (box / "notes.txt").write_text("ignored: not markdown\n")
    clock = lambda: datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # noqa: E731
    out = promote.apply_inbox(layout, _cfg(tmp_path), clock).to_json()
    assert [a["file"] for a in out["applied"]] == ["troi-auth.md"]
    assert sorted(q["file"] for q in out["quarantined"]) == [
        "bad-agent.md",
        "bad-topic.md",
        "empty.md",
        "no-front-matter.md",
    ]
    assert len(out["warnings"]) == 4
    assert sorted(p.name for p in box.iterdir()) == ["notes.txt"]
    wiki = (layout.wiki / "auth.md").read_text()
    assert "### Session timeout\n" in wiki and "2026-11-29 · entry=w-" in wiki
    assert "author=troi · via=inbox" in wiki
    assert FAKE_SECRET not in wiki
    reasons = {p.name: p.read_text() for p in layout.quarantine.glob("*.reason")}
    assert len(reasons) == 4
    assert "no front matter" in reasons["wiki-inbox-no-front-matter.md.reason"]
    assert "bad topic name" in reasons["wiki-inbox-bad-topic.md.reason"]
    assert "bad agent name" in reasons["wiki-inbox-bad-agent.md.reason"]
    assert "empty" in reasons["wiki-inbox-empty.md.reason"]
    assert (layout.quarantine / "wiki-inbox-bad-topic.md").read_text().startswith("---\ntopic: ../../etc")

    # the same drop again (a crash before the file was removed): nothing twice
    snap = memory_bytes(tmp_path)
    (box / "troi-auth-again.md").write_text(
        "---\ntopic: auth\nagent: troi\ntitle: Session timeout\n---\n"
        f"Sessions time out after 15 minutes of inactivity.\napi_key={FAKE_SECRET}\n"
    )
    again = promote.apply_inbox(layout, _cfg(tmp_path), clock).to_json()
    assert again["applied"][0]["action"] == "present"
    assert memory_bytes(tmp_path) == snap


def test_promote_applies_the_inbox_too(tmp_path: Path) -> None:
    (_inbox(tmp_path) / "a.md").write_text(
        "---\ntopic: conventions\nagent: data\n---\nAlways squash merge.\n"
    )
    out = promote.promote(_cfg(tmp_path), as_of=datetime(2026, 11, 29, tzinfo=UTC)).to_json()
    assert [a["file"] for a in out["inbox"]["applied"]] == ["a.md"]
    assert "Always squash merge." in (tmp_path / ".squad/memory/wiki/conventions.md").read_text()


def test_inbox_applied_by_run_once(scenario: Path) -> None:
    box = _inbox(scenario)
    (box / "riker-db.md").write_text(
        "---\ntopic: contracts\nagent: riker\n---\nThe orders table has a tenant_id column.\n"
    )
    (box / "broken.md").write_text("no front matter here\n")
    p = scribed("--config", str(scenario / "scribed.toml"), "run-once")
    assert p.returncode == 0, p.stderr
    assert not (box / "riker-db.md").exists() and not (box / "broken.md").exists()
    assert "tenant_id" in (scenario / ".squad/memory/wiki/contracts.md").read_text()
    assert (scenario / ".squad/memory/.scribed/quarantine/wiki-inbox-broken.md.reason").exists()
