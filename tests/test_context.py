"""``scribed context``: situations, wiki choice, fitting --max-bytes, empty agents, errors, and the
issue's end-to-end scenario (run-once with a live Copilot session, then context and report)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import run_cli

from scribed.cli.context import register
from scribed.cli.main import Main, main
from scribed.recall import context
from scribed.sources.injected import MARK_CLOSE, MARK_OPEN
from scribed.tiers.cold import Layout

SECRET = "ghp_R7t2Kq9LmX4vB8nC1zD5wF3hJ6pS0aY2uE8i"
WIRED = "context" in main.commands  # cli.py registers the commands itself once wired


def cli(*args: str) -> tuple[int, str, str]:
    """The real CLI in a subprocess once cli.py registers the commands; a local group before."""
    if WIRED:
        p = run_cli(*args)
        return p.returncode, p.stdout.decode(), p.stderr.decode()
    group = Main(
        name="scribed", params=list(main.params), callback=main.callback, commands=dict(main.commands)
    )
    register(group)
    res = CliRunner().invoke(group, list(args), env={"SCRIBED_CONFIG": ""})
    return res.exit_code, res.stdout, res.stderr


def cold_entry(day: int, title: str, fact: str) -> str:
    return (
        f"### 2026-11-{day:02d}T10:00:00Z: {title}\n"
        f"- provenance: id=e-{day:012x} · agent=picard · compressor=extractive\n\n"
        f"#### Goal\n{title}\n#### Key facts\n- {fact}\n"
    )


def make_root(tmp_path: Path, *, task: str = "Migrate the billing webhooks to the v2 API") -> Path:
    root = tmp_path / "squad"
    mem = root / ".squad/memory"
    for d in ("hot", "cold", "wiki"):
        (mem / d).mkdir(parents=True)
    (mem / "hot/picard.md").write_text(
        "---\nscribed-live: copilot:live-1\nsource: /x/events.jsonl\nupdated: 2026-11-29T10:00:00Z\n---\n"
        "# Hot memory: picard\n\n"
        "<!-- Written by scribed from a running session; replaced on each change, cleared when it ends. -->\n\n"
        f"Current task: {task}\nActive decisions: (none)\nLast actions: (none)\nBlockers: (none)\n"
        "Talking to: user\n"
    )
    (mem / "cold/picard.md").write_text(
        "# Cold memory: picard\n\n"
        + "\n".join(cold_entry(d, f"session of day {d}", f"fact-{d}") for d in (10, 11, 12))
    )
    (mem / "wiki/index.md").write_text("# Wiki index\n\n- billing-webhooks\n- decisions\n- onboarding\n")
    (mem / "wiki/decisions.md").write_text("# Decisions\n\n- HMAC-sign every webhook.\n")
    (mem / "wiki/billing-webhooks.md").write_text("# Billing webhooks\n\nv2 lives at /hooks/v2.\n")
    (mem / "wiki/onboarding.md").write_text("# Onboarding\n\nRun make dev.\n")
    (root / "scribed.toml").write_text('root = "."\n')
    return root


def build(root: Path, agent: str = "picard", **kw: Any) -> context.Context:
    return context.build(Layout(root), agent, **kw)


def titles(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("### ") and "(" in ln and not ln[4].isdigit()]


HOT, COLD, WIKI = context.HOT_TITLE, context.COLD_TITLE, context.WIKI_TITLE


@pytest.mark.parametrize(
    ("situation", "expected"),
    [
        ("new-task", [HOT]),
        ("resume", [HOT, COLD]),
        ("debug", [HOT, COLD]),
        ("spec", [HOT, WIKI]),
        ("onboarding", [HOT, WIKI]),
        ("post-incident", [HOT, COLD, WIKI]),
    ],
)
def test_situations(tmp_path: Path, situation: str, expected: list[str]) -> None:
    ctx = build(make_root(tmp_path), situation=situation)
    assert ctx.text.startswith(f"{MARK_OPEN}\n## Memory Context\n\n### Hot (current session)\n")
    assert ctx.text.endswith(f"\n{MARK_CLOSE}\n") and ctx.text.count(MARK_OPEN) == 1
    assert titles(ctx.text) == expected
    assert ("fact-12" in ctx.text) == (COLD in expected)


def test_default_is_hot_only_without_live_front_matter(tmp_path: Path) -> None:
    ctx = build(make_root(tmp_path))
    assert titles(ctx.text) == [HOT]
    assert "scribed-live" not in ctx.text and "updated:" not in ctx.text
    body = ctx.text.removeprefix(MARK_OPEN + "\n").removesuffix(MARK_CLOSE + "\n")
    assert "<!--" not in body  # only scribed's own marker pair is a comment
    assert "Current task: Migrate the billing webhooks" in ctx.text
    assert ctx.situation is None


def test_agent_front_matter_is_kept(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (root / ".squad/memory/hot/riker.md").write_text("---\nowner: riker\n---\nCurrent task: x\n")
    assert "owner: riker" in build(root, "riker").hot


def test_cold_newest_first(tmp_path: Path) -> None:
    ctx = build(make_root(tmp_path), include_cold=True)
    assert [c.split(":", 1)[0] for c in ctx.cold] == [
        "### 2026-11-12T10",
        "### 2026-11-11T10",
        "### 2026-11-10T10",
    ]
    assert ctx.text.index("fact-12") < ctx.text.index("fact-11") < ctx.text.index("fact-10")
    assert "# Cold memory" not in ctx.text, "the cold file's preamble is not context"


def test_named_wiki_topics_and_fallback_location(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (root / ".squad/wiki").mkdir()
    (root / ".squad/wiki/api.md").write_text("# API\n\nREST only.\n")
    (root / ".squad/wiki/decisions.md").write_text("# stale copy\n")
    ctx = build(root, wiki_topics=["decisions", "api.md", "missing"])
    assert list(ctx.wiki) == ["decisions", "api"]
    assert "HMAC-sign" in ctx.text and "stale copy" not in ctx.text, ".squad/memory/wiki wins"
    assert "REST only." in ctx.text
    assert "_(no wiki page named 'missing')_" in ctx.text
    assert titles(ctx.text) == [HOT, WIKI]


def test_wiki_without_topics_is_index_plus_relevant(tmp_path: Path) -> None:
    ctx = build(make_root(tmp_path), include_wiki=True)
    assert list(ctx.wiki) == ["index", "billing-webhooks"]
    ctx = build(make_root(tmp_path / "b", task="Polish the login page CSS"), include_wiki=True)
    assert list(ctx.wiki) == ["index"], "nothing relevant: the index only"


def _seeded_root(tmp_path: Path) -> Path:
    """A finished session: its hot file seeded from its cold entry (no current task), the decision
    it made in both, and a wiki whose decisions page holds that decision among others."""
    root = make_root(tmp_path)
    mem = root / ".squad/memory"
    decision = "run the nightly export under a Postgres advisory lock instead of a Redis lock"
    (mem / "hot/picard.md").write_text(
        "# Hot memory: picard\n\n"
        "Current task: (no session running; the last session left no open items)\n"
        f"Active decisions:\n- {decision}\n"
        "Last actions:\n- 2026-11-28T10:00:00Z session ended: make the export safe on two nodes\n"
        "Blockers: (none)\nTalking to: (none)\n"
    )
    (mem / "cold/picard.md").write_text(
        "# Cold memory: picard\n\n"
        "### 2026-11-28T10:00:00Z: make the export safe on two nodes\n"
        "- provenance: id=e-00000000001c · agent=picard · compressor=extractive\n\n"
        f"#### Goal\nmake the export safe on two nodes\n#### Decisions\n- {decision}\n"
    )
    (mem / "wiki/decisions.md").write_text(
        "# Decisions\n\n### HMAC-sign every webhook\nHMAC-sign every webhook.\n"
        "*Source:* 2026-10-01 · entry=e-1 · agent=worf\n\n"
        "### Run the nightly export under a Postgres advisory lock\n"
        f"{decision}\n*Source:* 2026-11-28 · entry=e-00000000001c · agent=picard\n"
    )
    (mem / "hot/worf.md").write_text(
        "# Hot memory: worf\n\nCurrent task: Polish the login page CSS\nActive decisions: (none)\n"
        "Last actions: (none)\nBlockers: (none)\nTalking to: (none)\n"
    )
    return root


def test_post_incident_loads_the_topic_holding_the_sessions_decision(tmp_path: Path) -> None:
    """Issue 30: the relevance came from the current task alone, so a seeded hot file (no task)
    loaded the index only, never the page holding the decision its hot and cold entries name."""
    root = _seeded_root(tmp_path)
    ctx = build(root, situation="post-incident")
    assert list(ctx.wiki) == ["index", "decisions"], list(ctx.wiki)
    assert "Postgres advisory lock" in ctx.wiki["decisions"]
    assert list(build(root, include_wiki=True).wiki) == ["index", "decisions"]  # the newest cold entry
    # Worf's memory names nothing in the wiki: its hot file's labels ("Active decisions:") are
    # not its content, so the decisions page is not loaded for every agent.
    assert list(build(root, "worf", situation="post-incident").wiki) == ["index"]


def test_generated_index_when_wiki_has_none(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (root / ".squad/memory/wiki/index.md").unlink()
    ctx = build(root, situation="spec")
    assert ctx.wiki["index"].startswith("Topics: ")
    assert "decisions" in ctx.wiki["index"]


def test_max_bytes_cuts_cold_at_entry_boundaries(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    full = build(root, include_cold=True)
    one = build(root)
    limit = one.bytes + len(full.cold[0].encode()) + 250  # room for the note, not for a second entry
    ctx = build(root, include_cold=True, max_bytes=limit)
    assert ctx.bytes <= limit
    assert ctx.cold == full.cold[:1], "newest entry kept whole, older ones left out whole"
    assert ctx.left_out == {"cold": 2}
    assert f"_(2 older cold entries left out to fit {limit} bytes; find them with `scribed search" in ctx.text
    assert "fact-12" in ctx.text and "fact-11" not in ctx.text


def test_max_bytes_keeps_hot_always_and_drops_wiki_whole(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    tiny = build(root, situation="post-incident", max_bytes=50)
    assert "Current task: Migrate" in tiny.text, "hot is always kept"
    assert tiny.cold == [] and tiny.wiki == {}
    assert tiny.left_out == {"cold": 3, "wiki": 2}
    assert "_(3 older cold entries left out" in tiny.text and "_(2 wiki pages left out" in tiny.text
    page = "# Billing webhooks\n\nv2 lives at /hooks/v2.\n" + "Retries back off 2^n seconds.\n" * 20
    (root / ".squad/memory/wiki/billing-webhooks.md").write_text(page)  # bigger than the note
    hot_only = build(root, include_wiki=True, max_bytes=0)
    index_only = hot_only.bytes - len(f"#### billing-webhooks\n{page}\n")
    ctx = build(root, include_wiki=True, max_bytes=index_only + 250)
    assert list(ctx.wiki) == ["index"] and ctx.left_out == {"wiki": 1}
    assert ctx.bytes <= index_only + 250


def test_empty_agent_gets_a_valid_block(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    ctx = build(root, "nobody", situation="resume")
    assert ctx.text == (
        f"{MARK_OPEN}\n## Memory Context\n\n### Hot (current session)\n_(empty)_\n\n"
        f"### Cold (summarized history)\n_(no cold entries yet)_\n{MARK_CLOSE}\n"
    )
    bare = tmp_path / "bare"
    bare.mkdir()
    assert build(bare, "nobody", situation="post-incident").text.endswith(
        f"_(no wiki pages yet)_\n{MARK_CLOSE}\n"
    )


def test_secrets_never_appear(tmp_path: Path) -> None:
    root = make_root(tmp_path, task=f"rotate the token {SECRET}")
    (root / ".squad/memory/wiki/decisions.md").write_text(f"# Decisions\n\napi_key = {SECRET}\n")
    with (root / ".squad/memory/cold/picard.md").open("a") as fh:
        fh.write("\n" + cold_entry(13, "leak", f"password={SECRET}"))
    ctx = build(root, situation="post-incident", wiki_topics=["decisions"])
    assert SECRET not in json.dumps(ctx.public())
    assert "[REDACTED_SECRET]" in ctx.hot and "[REDACTED_SECRET]" in ctx.cold[0]
    assert "[REDACTED_SECRET]" in ctx.wiki["decisions"]


def test_symlink_out_of_root_is_not_read(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("# Private\n\nnot for agents\n")
    (root / ".squad/memory/wiki/private.md").symlink_to(outside)
    ctx = build(root, wiki_topics=["private"])
    assert "not for agents" not in ctx.text


def test_errors_are_context_errors() -> None:
    with pytest.raises(context.ContextError, match="invalid agent name"):
        context.build(Layout(Path("/nonexistent")), "../etc")
    with pytest.raises(context.ContextError, match="unknown situation 'panic'"):
        context.build(Layout(Path("/nonexistent")), "picard", situation="panic")
    with pytest.raises(context.ContextError, match="invalid wiki topic"):
        context.build(Layout(Path("/nonexistent")), "picard", wiki_topics=["a/b"])


# --- the command --------------------------------------------------------------------------------
def test_cli_markdown_json_and_errors(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    base = ("--config", str(root / "scribed.toml"), "context")
    code, out, err = cli(*base, "picard")
    assert code == 0, err
    assert out == build(root).text
    code, out, err = cli(*base, "picard", "--include-cold", "--include-wiki", "decisions", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data) >= {"agent", "situation", "parts", "bytes", "text"}
    assert set(data["parts"]) == {"hot", "cold", "wiki"}
    assert len(data["parts"]["cold"]) == 3 and list(data["parts"]["wiki"]) == ["decisions"]
    assert data["bytes"] == len(data["text"].encode())
    code, out, _ = cli(*base, "picard", "--include-wiki", "--include-wiki", "onboarding,decisions")
    assert code == 0 and "Run make dev." in out and "HMAC-sign" in out
    code, out, _ = cli(*base, "picard", "--include-wiki")
    assert code == 0 and "#### index" in out and "#### billing-webhooks" in out
    code, out, _ = cli(*base, "nobody", "--situation", "post-incident")
    assert code == 0 and "_(empty)_" in out
    code, out, _ = cli(*base, "picard", "--include-cold", "--max-bytes", "600")
    assert code == 0 and "left out to fit 600 bytes" in out
    for args, msg in [
        (("Bad/Name",), "invalid agent name"),
        (("picard", "--situation", "panic"), "unknown situation 'panic'"),
        (("picard", "--include-wiki", "../x"), "invalid wiki topic"),
    ]:
        code, out, err = cli(*base, *args)
        assert code == 2 and out == ""
        assert err.startswith("scribed: error: ") and msg in err and err.count("\n") == 1, err


# --- the scenario, end to end ----------------------------------------------------------
def _copilot(path: Path, sid: str, steps: list[tuple[str, dict[str, Any]]], start: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    ev = [{"type": "session.start", "id": "e0", "timestamp": start.isoformat(), "data": {"sessionId": sid}}]
    for i, (kind, data) in enumerate(steps, start=1):
        ev.append(
            {
                "type": kind,
                "id": f"e{i}",
                "timestamp": (start + timedelta(minutes=i)).isoformat(),
                "data": data,
            }
        )
    path.write_text("".join(json.dumps(e) + "\n" for e in ev))


def _legacy_history(n: int) -> str:
    out = ["# picard history\n\n## Core Context\n\nCaptain of the squad.\n\n## Learnings\n"]
    day = datetime(2026, 6, 1, tzinfo=UTC)
    out.extend(
        f"\n### {(day + timedelta(days=i)).date()}: learning {i}\n"
        "Looked at the export pipeline again, re-ran the profiler, noted chunk sizes and memory; "
        "nothing conclusive, see the logs of that day for the numbers and the graphs we made.\n"
        for i in range(n)
    )
    return "".join(out)


def _acceptance_root(tmp_path: Path) -> tuple[Path, Path, str]:
    """A squad with a 24 KB legacy history, one ended and one live Copilot session: (root, live file, history)."""
    root = tmp_path / "squad"
    squad = root / ".squad"
    (squad / "memory/wiki").mkdir(parents=True)
    (squad / "agents/picard").mkdir(parents=True)
    (squad / "memory/wiki/decisions.md").write_text("# Decisions\n\n- Webhooks are HMAC-signed (2026-10).\n")
    history = _legacy_history(120)
    (squad / "agents/picard/history.md").write_text(history)
    assert len(history.encode()) >= 24_000
    (squad / "agents/picard/charter.md").write_text("# Picard\n\nLead. Owns billing.\n")
    (squad / "decisions.md").write_text("# Decisions\n\n### 2026-06-02: Use Postgres\n**By:** Picard\n")
    tr = root / "transcripts"
    old = tr / "old-1/events.jsonl"
    old_start = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
    _copilot(
        old,
        "old-1",
        [
            ("user.message", {"content": "Fix the flaky login test (#590)"}),
            ("assistant.message", {"content": "Decision: use an injected clock in src/auth/session.py."}),
            ("session.shutdown", {"shutdownType": "routine"}),
        ],
        old_start,
    )
    os.utime(old, (old_start.timestamp() + 600, old_start.timestamp() + 600))
    live_file = tr / "live-1/events.jsonl"
    _copilot(
        live_file,
        "live-1",
        [
            ("user.message", {"content": f"Migrate the billing webhooks to the v2 API, token {SECRET}"}),
            ("assistant.message", {"content": "Decision: keep v1 behind a flag until March."}),
            (
                "tool.execution_start",
                {"toolName": "bash", "toolCallId": "c1", "arguments": {"command": "pytest"}},
            ),
        ],
        datetime.now(UTC) - timedelta(minutes=10),
    )
    cfg = root / "scribed.toml"
    cfg.write_text(
        'root = "."\n[compress]\nbackend = "extractive"\n'
        '[[sources]]\nkind = "copilot"\npath = "transcripts"\nagent = "picard"\nworkspace = "*"\n'
    )
    return root, live_file, history


def _check_report(cfg: Path, history: str, default_block: str) -> None:
    """`scribed report` measures the legacy baseline and exactly what `context` printed."""
    code, out, err = cli("--config", str(cfg), "report", "--json")
    assert code == 0, err
    rows = {r["agent"]: r for r in json.loads(out)["agents"]}
    row = rows["picard"]
    for key in (
        "baseline_bytes", "baseline_tokens", "old_noise_pct", "hot_only_bytes",
        "spawn_bytes", "savings_pct", "cold_bytes", "wiki_bytes",
    ):  # fmt: skip
        assert key in row
    assert row["baseline_bytes"] >= len(history.encode())
    assert row["hot_only_bytes"] == len(default_block.encode()), "report measures what context prints"
    assert row["spawn_empty"] is False
    assert row["old_noise_pct"] == 100.0, "the legacy history predates the live session's window"
    assert row["savings_pct"] > 80


def test_acceptance_live_session_context_and_report(tmp_path: Path) -> None:
    root, live_file, history = _acceptance_root(tmp_path)
    squad = root / ".squad"
    cfg = root / "scribed.toml"
    p = run_cli("--config", str(cfg), "run-once", "--json")
    assert p.returncode == 0, p.stderr.decode()
    ran = json.loads(p.stdout)
    assert [e["session"] for e in ran["entries"]] == ["old-1"], "the live session is not compacted"
    hot = squad / "memory/hot/picard.md"
    hot_text = hot.read_text()
    assert len(hot_text.encode()) <= 4096
    assert "Migrate the billing webhooks to the v2 API" in hot_text and SECRET not in hot_text

    c = ("--config", str(cfg), "context", "picard")
    code, out, err = cli(*c)
    assert code == 0, err
    assert titles(out) == [HOT] and "Migrate the billing webhooks" in out and "scribed-live" not in out
    code, out, _ = cli(*c, "--include-cold")
    assert titles(out) == [HOT, COLD] and "injected clock in src/auth/session.py" in out
    code, out, _ = cli(*c, "--include-wiki", "decisions")
    assert titles(out) == [HOT, WIKI] and "HMAC-signed" in out
    code, out, _ = cli(*c, "--situation", "post-incident")
    assert titles(out) == [HOT, COLD, WIKI] and "injected clock" in out
    code, out, _ = cli(*c, "--situation", "new-task")
    assert titles(out) == [HOT]
    code, default_block, _ = cli(*c)
    _check_report(cfg, history, default_block)

    # the session ends: the next run-once compacts it and re-seeds hot for the next spawn
    with live_file.open("a") as fh:
        fh.write(
            json.dumps({"type": "session.shutdown", "id": "z", "data": {"shutdownType": "routine"}}) + "\n"
        )
    p = run_cli("--config", str(cfg), "run-once", "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert [e["session"] for e in json.loads(p.stdout)["entries"]] == ["live-1"]
    seed = hot.read_text()
    assert "scribed-live: seed:copilot:live-1" in seed and SECRET not in seed
    code, out, _ = cli(*c)
    assert code == 0 and len(out.encode()) <= 4096 and "scribed-live" not in out
    assert "session ended: Migrate the billing webhooks to the v2 API" in out
    assert "keep v1 behind a flag until March" in out.split("Active decisions:")[1]
    code, out, _ = cli(*c, "--include-cold")
    assert "keep v1 behind a flag until March" in out and SECRET not in out


def test_spawn_path_imports_no_llm_scheduler_or_watcher(tmp_path: Path) -> None:
    """``scribed context`` runs at every agent spawn: it loads no LLM client, scheduler or watcher,
    and compiles only the secret rules the text it prints meets (issue 15)."""
    import subprocess
    import sys

    hot = tmp_path / ".squad/memory/hot/data.md"
    hot.parent.mkdir(parents=True)
    hot.write_text("# Hot memory: data\n\nCurrent task: fix the export retry loop in `src/export/run.py`.\n")
    code = (
        "import sys\n"
        "from scribed.cli.main import main\n"
        f"try: main(['context', 'data', '--root', {str(tmp_path)!r}])\n"
        "except SystemExit: pass\n"
        "from scribed.session import rules as v\n"
        "heavy = ('openai', 'httpx', 'apscheduler', 'watchdog', 'scribed.compress.llm', 'scribed.daemon', 'scribed.core.ledger', 'scribed.cli.mcp_server')\n"
        "print('LOADED', sorted(m for m in sys.modules if m.startswith(heavy)))\n"
        "print('COMPILED', v.compiled_bytes.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "fix the export retry loop" in out
    assert "LOADED []" in out
    compiled = int(out.split("COMPILED ")[1].split()[0])
    assert compiled < 20, f"{compiled} secret rules compiled for a short hot file"


def test_a_big_entry_shows_without_its_key_points_and_older_ones_still_come(tmp_path: Path) -> None:
    """A long session's entry may be larger than the whole budget: it is shown without its key
    points (its facts stay), and the older entries after it are still tried (seen on real data:
    one 15 KB entry left out two entries of 0.9 and 2.3 KB)."""
    root = make_root(tmp_path)
    cold = root / ".squad/memory/cold/picard.md"
    big = (
        "### 2026-11-20T10:00:00Z: Port the exporter\n- provenance: id=e-00000000beef · agent=picard\n\n"
        "#### Goal\nPort the exporter\n#### Key points\n"
        + "".join(f"- excerpt {i} of a long session about the exporter port\n" for i in range(200))
        + "#### Key facts\n- fact-big\n"
    )
    cold.write_text(cold.read_text() + "\n" + big)
    small = build(root, include_cold=True)
    limit = build(root).bytes + sum(len(e.encode()) for e in small.cold[1:]) + 600
    ctx = build(root, include_cold=True, max_bytes=limit)
    assert ctx.bytes <= limit
    assert "fact-big" in ctx.text and "excerpt 0 " not in ctx.text and "key points left out" in ctx.text
    assert all(f"fact-{d}" in ctx.text for d in (10, 11, 12)), ctx.text
    assert not ctx.left_out


def test_an_entry_too_big_even_without_key_points_shows_its_outcome_decisions_and_open_items(
    tmp_path: Path,
) -> None:
    """With little room (a newcomer's `--max-bytes 2000` beside a 1 KB hot file) an entry that
    does not fit even without its key points still gives its heading, outcome, decisions and open
    items, not only "1 older cold entry left out"."""
    root = make_root(tmp_path)
    cold = root / ".squad/memory/cold/picard.md"
    big = (
        "### 2026-11-20T10:00:00Z: Port the exporter\n- provenance: id=e-00000000beef · agent=picard\n\n"
        "#### Outcome\nThe exporter writes parquet now (`exports/2026-11.parquet`).\n"
        "#### Decisions\n- keep the CSV writer until #318 lands\n"
        "#### Files & artifacts\n"
        + "".join(f"- `src/exporter/part_{i}.py`\n" for i in range(60))
        + "#### Open items\n- `--since` ignores the tenant's timezone (#318)\n"
        "#### Key points\n" + "".join(f"- excerpt {i} of the port\n" for i in range(40))
    )
    cold.write_text(cold.read_text() + "\n" + big)
    limit = build(root).bytes + 600
    ctx = build(root, include_cold=True, max_bytes=limit)
    assert ctx.bytes <= limit
    text = ctx.text
    assert "Port the exporter" in text and "exports/2026-11.parquet" in text, text
    assert "keep the CSV writer until #318 lands" in text and "timezone (#318)" in text, text
    assert "part_0.py" not in text and "excerpt 0 " not in text, text
