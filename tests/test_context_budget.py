"""A spawn's context is bounded by default (stop 48, finding s13): after a backlog of long sessions
``scribed context AGENT --situation resume`` printed the whole cold view (~170 KB), and so did the
MCP ``context`` tool. Without ``--max-bytes`` a block now holds the hot file whole, at most
``COLD_BUDGET`` bytes of cold and ``WIKI_BUDGET`` of wiki; the note says what was left out and how
to get it; ``--max-bytes N`` (larger too) and ``--max-bytes 0`` (no limit) still work."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli

from scribed.recall import context
from scribed.tiers.cold import Layout

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
]


N = 40  # sessions: about 150 KB of cold, 12 KB of it even as headlines


def _entry(n: int, *, errors: bool) -> str:
    """Session ``n``'s entry (~3.7 KB, n days after 2026-10-01) whose facts name it (``marker-N``)."""
    day = date(2026, 10, 1) + timedelta(days=n)
    points = "".join(
        f"- step {i} of session {n}: {WORDS[(n + i) % len(WORDS)]} changed src/mod_{n}_{i}.py "
        f"and ran pytest -k case_{i} (took {i * 7 + n} s)\n"
        for i in range(24)
    )
    decisions = "".join(f"- keep the tenants window {n}.{i} at {i + n} minutes per shard\n" for i in range(8))
    err = f"#### Errors → fixes\n- KeyError: 'tenant_{n}' in src/mod_{n}_0.py → guarded the lookup\n"
    return (
        f"### {day.isoformat()}T10:00:00Z: session {n}\n"
        f"- provenance: id=e-{n:012x} · agent=picard · compressor=extractive\n\n"
        f"#### Goal\nFix the regression {n} in the tenants window\n"
        f"#### Outcome\nDone: regression {n} fixed and tests pass.\n"
        f"#### Decisions\n{decisions}"
        + (err if errors else "")
        + f"#### Key points\n{points}#### Key facts\n- marker-{n} holds for the tenants window\n"
    )


def make_root(tmp_path: Path, *, errors_on: tuple[int, ...] = (3,)) -> Path:
    """N entries and three 4 KB wiki pages the hot file talks about."""
    root = tmp_path / "squad"
    mem = root / ".squad/memory"
    for d in ("hot", "cold", "wiki"):
        (mem / d).mkdir(parents=True)
    (mem / "hot/picard.md").write_text(
        "# Hot memory: picard\n\nCurrent task: tenants window, billing retries and deploy freeze\n"
    )
    entries = "\n".join(_entry(n, errors=n in errors_on) for n in range(1, N + 1))
    (mem / "cold/picard.md").write_text("# Cold memory: picard\n\n" + entries)
    for topic in ("tenants", "billing", "deploy"):
        body = "".join(f"- {topic} rule {i}: keep the {topic} window at {i} minutes\n" for i in range(90))
        (mem / f"wiki/{topic}.md").write_text(f"# {topic.title()}\n\n## The {topic} window\n{body}")
    return root


def sections(text: str) -> dict[str, int]:
    """Bytes of each tier's section (its title line to the next title or the end marker)."""
    out = {}
    for title in (context.COLD_TITLE, context.WIKI_TITLE):
        m = re.search(re.escape(title) + r"\n(.*?)(?=\n### (?:Wiki|Cold) \(|<!-- /scribed)", text, re.S)
        if m:
            out[title] = len(m.group(0).encode())
    return out


@pytest.mark.parametrize("situation", ["resume", "debug", "post-incident", "onboarding"])
def test_the_real_cli_bounds_every_situation_by_default(tmp_path: Path, situation: str) -> None:
    root = make_root(tmp_path)
    p = run_cli("context", "picard", "--root", str(root), "--situation", situation)
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    size = sections(out)
    assert size, out
    assert size.get(context.COLD_TITLE, 0) <= context.COLD_BUDGET
    assert size.get(context.WIKI_TITLE, 0) <= context.WIKI_BUDGET
    assert len(out.encode()) < 1000 + context.COLD_BUDGET + context.WIKI_BUDGET
    if context.SITUATIONS[situation][0]:
        assert "marker-40" in out, "the newest entry is in"
        assert "left out to fit the default 12288-byte cold budget" in out
        assert "`scribed search WORDS --agent picard --tier cold`" in out
    if context.SITUATIONS[situation][1]:
        assert "left out to fit the default 8192-byte wiki budget" in out
        assert "`--include-wiki TOPIC`" in out
    slow = run_cli("context", "picard", "--root", str(root), "--situation", situation, "--query", "")
    assert slow.stdout.decode() == out, "the click command (here: --query) prints what the fast path does"


def test_the_note_s_search_finds_an_entry_left_out(tmp_path: Path) -> None:
    """What the note tells the reader to run does find a left-out entry."""
    root = make_root(tmp_path)
    out = run_cli("context", "picard", "--root", str(root), "--situation", "resume").stdout.decode()
    assert "marker-1 " not in out, "the oldest entry is left out"
    p = run_cli("search", "marker-1", "--agent", "picard", "--tier", "cold", "--root", str(root), "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["hits"][0]["heading"].endswith(": session 1")


def test_an_explicit_max_bytes_still_lifts_or_sets_the_limit(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    base = ("context", "picard", "--root", str(root), "--situation", "resume", "--format", "json")
    default = json.loads(run_cli(*base).stdout)
    larger = json.loads(run_cli(*base, "--max-bytes", "40000").stdout)
    whole = json.loads(run_cli(*base, "--max-bytes", "0").stdout)
    assert len(default["parts"]["cold"]) < len(larger["parts"]["cold"]) < len(whole["parts"]["cold"]) == N
    assert default["bytes"] < larger["bytes"] <= 40000 < whole["bytes"]
    assert whole["left_out"] == {} and "left out" not in whole["text"]
    assert "left out to fit 40000 bytes" in larger["text"]


def test_debug_takes_the_sessions_that_met_errors_first(tmp_path: Path) -> None:
    """Within the budget ``debug`` keeps an old entry with an errors section that ``resume`` (newest
    first) leaves out; both print what they keep newest first."""
    root = make_root(tmp_path, errors_on=(2, 4))
    layout = Layout(root)
    resume = context.build(layout, "picard", situation="resume")
    debug = context.build(layout, "picard", situation="debug")
    assert "marker-2 " not in resume.text and "marker-4 " not in resume.text
    assert "marker-2 " in debug.text and "marker-4 " in debug.text and "marker-40" in debug.text
    days = [int(m) for m in re.findall(r"^### 2026-11-(\d\d)T", debug.text, re.M)]
    assert days == sorted(days, reverse=True)
    assert "cold entries left out" in debug.text and "older cold entries" not in debug.text


def test_the_mcp_context_tool_is_bounded_by_default(tmp_path: Path) -> None:
    from test_mcp import _session, _text

    root = make_root(tmp_path)
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(f'root = "{root}"\n')
    seen: dict[str, Any] = {}

    async def body(client: Any) -> None:
        seen["default"] = await client.call_tool("context", {"agent": "picard", "situation": "resume"})
        seen["whole"] = await client.call_tool(
            "context", {"agent": "picard", "situation": "resume", "max_bytes": 0}
        )

    _session(root, cfg, body)
    default, whole = _text(seen["default"]), _text(seen["whole"])
    assert not seen["default"].is_error, default
    assert sections(default)[context.COLD_TITLE] <= context.COLD_BUDGET
    assert "marker-40" in default and "(MCP: `search`)" in default
    assert len(whole.encode()) > 100000 and "marker-1 " in whole
