"""``scribed import``: seeding cold and wiki from a legacy Squad repo (histories and decisions.md).

The fixture writes a real-looking ``.squad/``: four agents with 20–60 KB histories (Core Context,
dated entries in three heading styles, undated entries, team updates copied across agents, code
fences and tables) and a long ``decisions.md``. Ages are judged ``--as-of 2026-11-29``.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from scribed.compress.entry import split_entries
from scribed.config import from_dict
from scribed.core.importer import import_squad, parse_decisions, parse_history
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import WikiDoc

AS_OF = "2026-11-29"
SECRET = "ghp_R7t2Kq9LmX4vB8nC1zD5wF3hJ6pS0aY2uE8i"
GIT_DATE = "2026-08-15T12:00:00+00:00"
AGENTS = {"picard": 18, "riker": 28, "troi": 36, "data": 46}  # entries each: 20–60 KB histories
LAUNCH = (
    "from scribed.cli.main import main\n"
    "if 'import' not in main.commands:\n"
    "    from scribed.cli.wiki import register\n"
    "    register(main)\n"
    "main()\n"
)


def scribed(
    *args: str, cwd: Path | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The real CLI in a subprocess (``-m scribed`` once cli.py registers the wiki commands)."""
    from scribed.cli.main import main

    head = ["-m", "scribed"] if "import" in main.commands else ["-c", LAUNCH]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    return subprocess.run(
        [sys.executable, *head, *args], cwd=cwd, env=env, capture_output=True, timeout=120, input=stdin
    )


def scribed_json(*args: str, cwd: Path | None = None) -> tuple[int, dict[str, Any], str]:
    p = scribed(*args, "--json", cwd=cwd)
    err = p.stderr.decode()
    try:
        return p.returncode, json.loads(p.stdout.decode()), err
    except json.JSONDecodeError:
        raise AssertionError(f"not JSON (exit {p.returncode}): {p.stdout!r}\nstderr: {err}") from None


# --- the legacy repo ---------------------------------------------------------------------------
TOOLS = [
    "ruff",
    "mypy",
    "pytest-xdist",
    "alembic",
    "httpx",
    "structlog",
    "pydantic",
    "uvicorn",
    "celery",
    "redis",
]
AREAS = ["billing", "orders", "auth", "search", "export", "webhooks", "inventory", "reports", "admin", "sync"]
SERVICES = ["ledger", "gateway", "notifier", "indexer", "scheduler", "importer", "mailer", "cache"]
NARRATIVE = [
    "Spent the morning reading through the module with the team and noting questions for the next sync.",
    "Walked through the call graph on the whiteboard and sketched where the boundaries sit today.",
    "Paired with another agent to trace how requests flow between the gateway and the workers.",
    "Reviewed the open pull requests in the area and left comments on naming and structure.",
    "Read the incident notes from last quarter to understand the history of this component.",
    "Collected timings from the staging dashboards so the next session starts from real numbers.",
]


def _log_block(rng: random.Random, n: int) -> str:
    lines = ["```"]
    lines.extend(
        f"2026-0{rng.randint(5, 9)}-{rng.randint(10, 28)}T{rng.randint(10, 23)}:{rng.randint(10, 59)}:00Z "
        f"INFO worker-{rng.randint(1, 9)} job={rng.randint(1000, 9999)} took {rng.randint(3, 900)}ms step={i}"
        for i in range(n)
    )
    lines.append("```")
    return "\n".join(lines)


def _table(rng: random.Random) -> str:
    rows = ["| endpoint | p50 ms | p99 ms |", "| --- | --- | --- |"]
    rows += [f"| /v2/{a} | {rng.randint(5, 90)} | {rng.randint(100, 900)} |" for a in rng.sample(AREAS, 4)]
    return "\n".join(rows)


def _entry(rng: random.Random, agent: str, i: int, when: datetime, style: int) -> tuple[str, dict[str, Any]]:
    """One ``###`` learnings entry; returns its markdown and what it plants."""
    area = AREAS[i % len(AREAS)]
    tool = TOOLS[(i * 3 + len(agent)) % len(TOOLS)]
    svc = SERVICES[(i + len(agent)) % len(SERVICES)]
    title = f"{area.title()} work item {i} for {agent}"
    facts: dict[str, Any] = {"title": title, "date": when, "durable": True}
    if style == 3:
        heading = f"### {title}"  # undated
        facts["date"] = None
    elif style == 1:
        heading = f"### {when.date().isoformat()} — {title}"
    elif style == 2:
        heading = f"### {title} ({when.date().isoformat()})"
    else:
        heading = f"### {when.date().isoformat()}: {title}"
    parts = [heading, "", rng.choice(NARRATIVE) + " " + rng.choice(NARRATIVE)]
    kind = i % 5
    if kind == 4:
        # nothing durable: narrative and a log dump only
        facts["durable"] = False
        parts += ["", rng.choice(NARRATIVE), "", _log_block(rng, 8)]
        return "\n".join(parts) + "\n", facts
    decision = f"use {tool} for the {area} {svc} pipeline in src/{area}/{svc}.py (entry {agent}-{i})"
    parts += ["", f"Decision: {decision}."]
    facts["decision"] = decision
    parts += [
        "",
        f"- Always run `make check-{area}` before pushing changes to the {area} module ({agent}-{i}).",
        f"- The {svc} service cannot hold more than {10 + i} open connections per worker ({agent}-{i}).",
        f"- The `/v2/{area}/{i}` endpoint returns a paginated list with a `next` cursor ({agent}-{i}).",
    ]
    facts["convention"] = f"make check-{area}"
    if i % 3 == 0:
        parts += ["", _table(rng)]
    parts += ["", _log_block(rng, rng.randint(6, 14)), "", rng.choice(NARRATIVE)]
    if agent == "troi" and i == 5:
        parts += ["", f"The staging deploy token was {SECRET} until it was rotated."]
    return "\n".join(parts) + "\n", facts


TEAM_UPDATES = [
    ("2026-07-01T09:00:00Z", "All services emit structured JSON logs with a request_id field", "Picard"),
    (
        "2026-11-24T16:30:00Z",
        "Feature flags live in config/flags.toml, not in environment variables",
        "Riker",
    ),
]


def build_legacy(root: Path, *, seed: int = 11) -> dict[str, Any]:
    """Write ``.squad/agents/*/history.md``, ``.squad/decisions.md`` and ``.squad/team.md``."""
    rng = random.Random(seed)
    manifest: dict[str, Any] = {"agents": {}, "decisions": []}
    start = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    for agent, n in AGENTS.items():
        folder = root / ".squad" / "agents" / agent
        folder.mkdir(parents=True)
        core = (
            f"# {agent.title()} — History\n\n## Core Context\n\n"
            f"- Role: {agent} owns the {AREAS[len(agent)]} area of acme-api (Python 3.11, FastAPI, PostgreSQL 16).\n"
            f"- Always read docs/{agent}-runbook.md before touching production settings.\n"
            "- Reviews go to picard; deploys go through the release checklist.\n\n## Learnings\n\n"
        )
        chunks = [core]
        entries = []
        span = (datetime(2026, 11, 27, tzinfo=UTC) - start).total_seconds()
        for i in range(n):
            when = start + timedelta(seconds=span * i / max(1, n - 1))
            style = 3 if i % 7 == 6 else i % 3
            text, facts = _entry(rng, agent, i, when, style)
            chunks.append(text + "\n")
            entries.append(facts)
            if i == n // 3:
                ts, what, by = TEAM_UPDATES[0]
                chunks.append(f"📌 Team update ({ts}): {what} — decided by {by}\n\n")
        ts, what, by = TEAM_UPDATES[1]
        chunks.append(f"📌 Team update ({ts}): {what} — decided by {by}\n")
        data = "".join(chunks)
        (folder / "history.md").write_text(data)
        (folder / "charter.md").write_text(f"# {agent}\n\nCharter.\n")
        manifest["agents"][agent] = {"entries": entries, "bytes": len(data.encode())}

    blocks = ["# Decisions\n\n> Team decisions, append only. Newest last.\n"]
    for i in range(60):
        when = start + timedelta(days=3 * i + 28)
        area = AREAS[i % len(AREAS)]
        by = ["Picard (Lead)", "Riker", "Troi", "Data"][i % 4]
        what = f"Adopt {TOOLS[i % len(TOOLS)]} for {area} module number {i} across all services"
        why = f"It removed a class of {area} bugs in the spike and the team knows it ({i})."
        heading = f"### {when.date().isoformat()}: {area.title()} decision {i}"
        extra = ""
        if i == 7:
            heading = f"### {area.title()} decision {i}"
            extra = f"**Date:** {when.date().isoformat()}\n"
        blocks.append(f"{heading}\n**By:** {by}\n{extra}**What:** {what}\n**Why:** {why}\n")
        manifest["decisions"].append(
            {
                "title": f"{area.title()} decision {i}",
                "what": what,
                "why": why,
                "date": when,
                "by": by.split()[0].lower(),
            }
        )
    # a reversal inside decisions.md
    blocks.append(
        "### 2026-09-20: Job queue backend\n**By:** Riker\n"
        "**What:** Use PostgreSQL advisory locks for the job queue in src/jobs/queue.py\n"
        "**Why:** One less moving part.\n"
    )
    blocks.append(
        "### 2026-10-02: Job queue backend, revisited\n**By:** Riker\n"
        "**What:** Use Redis streams for the job queue in src/jobs/queue.py instead of PostgreSQL advisory locks\n"
        "**Why:** Advisory locks starved the web workers under load.\n"
    )
    (root / ".squad" / "decisions.md").write_text("\n".join(blocks))
    (root / ".squad" / "team.md").write_text("# Team\n\n| name | role |\n| --- | --- |\n| picard | lead |\n")
    (root / "scribed.toml").write_text('root = "."\n')
    return manifest


def git_commit(root: Path) -> bool:
    if shutil.which("git") is None:
        return False
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": GIT_DATE,
        "GIT_COMMITTER_DATE": GIT_DATE,
    }
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "legacy squad"]):
        subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True)
    return True


def legacy_bytes(root: Path) -> dict[str, bytes]:
    squad = root / ".squad"
    out = {}
    for p in sorted(squad.rglob("*")):
        if p.is_file() and "memory" not in p.relative_to(squad).parts:
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def memory_bytes(root: Path) -> dict[str, bytes]:
    mem = root / ".squad" / "memory"
    return {
        str(p.relative_to(mem)): p.read_bytes()
        for p in sorted(mem.rglob("*"))
        if p.is_file() and not p.name.startswith("ledger.sqlite") and p.name != "lock"
    }


@pytest.fixture
def legacy(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "repo"
    root.mkdir()
    manifest = build_legacy(root)
    manifest["git"] = git_commit(root)
    return root, manifest


def cfg_for(root: Path) -> Any:
    return from_dict({"root": str(root)})


# --- tests -------------------------------------------------------------------------------------
def test_fixture_is_realistic(legacy: tuple[Path, dict[str, Any]]) -> None:
    _, m = legacy
    sizes = [a["bytes"] for a in m["agents"].values()]
    assert all(20_000 <= s <= 60_000 for s in sizes), sizes
    assert len(m["decisions"]) == 60


def _check_import_cold(layout: Layout, m: dict[str, Any], cutoff: datetime) -> None:
    """Each agent's cold file holds its recent history entries, within the cold budget, with provenance."""
    for agent, info in m["agents"].items():
        text = (layout.cold / f"{agent}.md").read_text()
        _, entries = split_entries(text)
        ids = set().union(*(e.ids for e in entries))
        recent = [f for f in info["entries"] if f["date"] is not None and f["date"] >= cutoff]
        assert recent, agent
        assert len(text.encode()) <= 12288 + 2048, "cold budget (the fold) applies to imported entries too"
        for f in recent:
            if f["date"] >= datetime(2026, 11, 10, tzinfo=UTC):  # the newest are still whole entries
                assert f["title"] in text, (agent, f["title"])
        assert all(i.startswith(("i-", "d-")) for i in ids)
        assert (
            "- provenance: id=" in text and "sha256=" in text and "ratio=" in text
        )  # extractive: not printed


def _check_import_decisions(layout: Layout, m: dict[str, Any], cutoff: datetime) -> WikiDoc:
    """decisions.md holds every decision as a wiki fact with provenance; the reversal supersedes."""
    decisions = (layout.wiki / "decisions.md").read_text()
    # an old history decision, with its provenance naming the history file's entry
    old = next(
        f for f in m["agents"]["riker"]["entries"] if f.get("decision") and f["date"] and f["date"] < cutoff
    )
    doc = WikiDoc.parse("decisions", decisions)
    block = next(b for b in doc.blocks if old["decision"] in b.text)
    assert block.active and block.date == old["date"].date().isoformat()
    src = block.sources[0]
    assert src.ref.startswith("i-") and src.via == "import" and src.agent == "riker"
    # decisions.md: every decision (recent ones too: a decision is durable) is a wiki fact under its
    # own title, with its statement as written and one provenance line naming file and lines
    by_title = {b.title: b for b in doc.blocks}
    for d in m["decisions"]:
        blk = by_title[d["title"]]
        assert f"**What:** {d['what']}" in blk.body and f"**Why:** {d['why']}" in blk.body
        assert blk.sources[0].extra["file"] == ".squad/decisions.md" and blk.sources[0].agent == d["by"]
        assert blk.date == d["date"].date().isoformat()
    assert decisions.count("*Source:*") == len(doc.blocks)
    assert not any(d["what"] in (layout.cold / f"{d['by']}.md").read_text() for d in m["decisions"])
    # the reversal supersedes the earlier one, which moves under Superseded
    adv = by_title["Job queue backend"]
    redis = by_title["Job queue backend, revisited"]
    assert adv.status.startswith("superseded by 2026-10-02"), adv.status
    assert redis.active
    assert decisions.index("## Superseded") < decisions.index("### Job queue backend\n")
    return doc


def test_import_all_seeds_cold_and_wiki(legacy: tuple[Path, dict[str, Any]]) -> None:
    root, m = legacy
    before = legacy_bytes(root)
    cfg = str(root / "scribed.toml")
    code, out, err = scribed_json("--config", cfg, "import", "--all", "--as-of", AS_OF)
    assert code == 0, err
    assert "Traceback" not in err
    assert out["agents"] == sorted(AGENTS)
    assert out["cold"] and out["promoted"] and out["archived"], {
        k: len(v) for k, v in out.items() if isinstance(v, list)
    }
    # the legacy files are untouched
    assert legacy_bytes(root) == before

    layout = Layout(root)
    cutoff = datetime(2026, 10, 30, tzinfo=UTC)
    _check_import_cold(layout, m, cutoff)
    doc = _check_import_decisions(layout, m, cutoff)
    wiki = layout.wiki
    # knowledge classified into topics
    assert "make check-" in (wiki / "conventions.md").read_text()
    assert "open connections per worker" in (wiki / "constraints.md").read_text()
    assert "endpoint returns a paginated list" in (wiki / "contracts.md").read_text()
    # pinned context: Core Context per agent, team updates once (decided by their author)
    core = (wiki / "agent-picard.md").read_text()
    assert "Core context of picard" in core and "docs/picard-runbook.md" in core
    team = [b for b in doc.blocks if "structured JSON logs" in b.text]
    assert len(team) == 1 and "agent=picard" in team[0].render()
    index = (wiki / "index.md").read_text()
    assert len(index.splitlines()) <= 200
    for topic in ("decisions", "conventions", "constraints", "contracts", "agent-troi"):
        assert f"[{topic}]({topic}.md)" in index
    # nothing durable → archived, not promoted
    assert out["archived"]
    arch = layout.archive / out["archived"][0]["archive"]
    assert gzip.decompress(arch.read_bytes()).startswith(b"### ")
    # no secret in the tiers
    for rel, data in memory_bytes(root).items():
        assert SECRET.encode() not in data, rel

    # idempotent: a second import adds nothing and changes no byte
    snap = memory_bytes(root)
    code, again, err = scribed_json("--config", cfg, "import", "--all", "--as-of", AS_OF)
    assert code == 0, err
    assert again["cold"] == again["promoted"] == again["archived"] == again["decisions"] == []
    assert again["skipped"] == sum(len(out[k]) for k in ("cold", "promoted", "archived", "decisions"))
    assert out["pinned"] and [p["action"] for p in again["pinned"]] == ["present"] * len(out["pinned"])
    assert "nothing to import" not in err, "a rerun that finds everything imported is not an empty root"
    assert memory_bytes(root) == snap
    assert legacy_bytes(root) == before


def test_undated_entries_take_the_git_date(legacy: tuple[Path, dict[str, Any]]) -> None:
    root, m = legacy
    if not m["git"]:
        pytest.skip("git not installed")
    cfg = str(root / "scribed.toml")
    code, out, err = scribed_json("--config", cfg, "import", "picard", "--as-of", AS_OF)
    assert code == 0, err
    undated = [f for f in m["agents"]["picard"]["entries"] if f["date"] is None]
    assert undated
    assert "undated entry" in err and "git commit" in err
    assert any("undated" in w and "2026-08-15" in w for w in out["warnings"])
    # 2026-08-15 is older than the TTL at 2026-11-29: wiki or archive, never cold
    cold_titles = {c["title"] for c in out["cold"]}
    for f in undated:
        assert f["title"] not in cold_titles
        hit = [p for p in out["promoted"] + out["archived"] if p["title"] == f["title"]]
        assert hit and hit[0]["date"].startswith("2026-08-15")


def test_undated_entries_without_git_take_the_mtime(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    m = build_legacy(root)
    hist = root / ".squad/agents/data/history.md"
    stamp = datetime(2026, 11, 25, 8, 0, tzinfo=UTC).timestamp()
    os.utime(hist, (stamp, stamp))
    out = import_squad(cfg_for(root), ["data"], as_of=datetime(2026, 11, 29, tzinfo=UTC)).to_json()
    undated = [f["title"] for f in m["agents"]["data"]["entries"] if f["date"] is None]
    assert any("mtime" in w for w in out["warnings"])
    cold = {c["title"]: c["date"] for c in out["cold"]}
    for t in undated:  # dated 2026-11-25 from the mtime: within the TTL, so in cold
        assert cold[t].startswith("2026-11-25")
    text = (root / ".squad/memory/cold/data.md").read_text()
    assert "### 2026-11-25T08:00:00Z: " in text


@pytest.mark.parametrize("backend", ["orphan", "two-layer"])
def test_state_branch_backends_import_to_the_branch(
    legacy: tuple[Path, dict[str, Any]], backend: str
) -> None:
    """With Squad's state on ``squad-state``, import writes its tiers there (through the clone's
    ``.git/scribed/memory``), never into the working tree, and leaves Squad's files as they were;
    a second import adds nothing."""
    root, _ = legacy
    (root / ".squad/config.json").write_text(json.dumps({"version": 1, "stateBackend": backend}))
    before = legacy_bytes(root)
    code, out, err = scribed_json("--config", str(root / "scribed.toml"), "import", "--all", "--as-of", AS_OF)
    assert code == 0, err
    assert out["cold"] and out["decisions"]
    assert not (root / ".squad/memory").exists()
    assert legacy_bytes(root) == before
    files = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "squad-state"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert any(f.startswith("memory/cold/") for f in files) and "memory/wiki/decisions.md" in files
    code, again, err = scribed_json(
        "--config", str(root / "scribed.toml"), "import", "--all", "--as-of", AS_OF
    )
    assert code == 0 and again["cold"] == [] and again["decisions"] == [], err


def test_worktree_backend_and_bad_config_json(legacy: tuple[Path, dict[str, Any]]) -> None:
    root, _ = legacy
    cfgp = str(root / "scribed.toml")
    (root / ".squad/config.json").write_text("{not json")
    p = scribed("--config", cfgp, "import", "--all", "--dry-run")
    assert p.returncode == 2 and "config.json" in p.stderr.decode()
    (root / ".squad/config.json").write_text(json.dumps({"stateBackend": "worktree"}))
    code, out, err = scribed_json("--config", cfgp, "import", "troi", "--dry-run", "--as-of", AS_OF)
    assert code == 0, err
    assert out["dry_run"] and out["cold"] and out["promoted"]
    assert not (root / ".squad/memory").exists(), "a dry run writes nothing"


def test_agent_arguments(legacy: tuple[Path, dict[str, Any]]) -> None:
    root, _ = legacy
    cfgp = str(root / "scribed.toml")
    for args in ([], ["--all", "picard"], ["../etc"], ["Bad Name"], ["worf"]):
        p = scribed("--config", cfgp, "import", *args)
        assert p.returncode == 2, (args, p.stderr)
        assert "Traceback" not in p.stderr.decode()
    assert not (root / ".squad/memory").exists()
    code, out, err = scribed_json("--config", cfgp, "import", "picard", "--as-of", AS_OF)
    assert code == 0, err
    assert out["agents"] == ["picard"]
    cold = root / ".squad/memory/cold"
    assert sorted(p.name for p in cold.glob("*.md")) == ["picard.md"]  # decisions by others are not imported


def test_parsers_on_edge_cases(tmp_path: Path) -> None:
    hist = tmp_path / "history.md"
    hist.write_text(
        "# X\n\n## Core Context\n- pinned fact one\n📌 Team update (2026-07-01): Ship on Tuesdays — decided by Troi\n\n"
        "## Learnings\n\n### 2026-09-01: First\nbody one\n```\n### not a heading inside a fence\n```\n\n"
        "### Second (2026-09-02T10:00:00Z)\nbody two\n\n### Third\nbody three\n\n"
        "## Project Notes\nloose notes under another section\n"
    )
    h = parse_history("x", hist, "history.md")
    assert h.core.strip() == "- pinned fact one"
    assert [(t.what, t.by) for t in h.team] == [("Ship on Tuesdays", "troi")]
    assert [u.title for u in h.units] == ["First", "Second", "Third", "Project Notes"]
    assert "### not a heading" in h.units[0].text
    assert [u.dated for u in h.units] == [True, True, False, False]
    assert h.units[1].date == datetime(2026, 9, 2, 10, 0, tzinfo=UTC)

    dec = tmp_path / "decisions.md"
    dec.write_text(
        "# Decisions\n\n### 2026-08-01: Use uv\n**By:** Data (Tests)\n**What:** Use uv for installs\n"
        "in CI and locally\n**Why:** Faster.\n\n### No date here\n**By:** ???\nJust prose.\n"
    )
    units, skipped = parse_decisions(dec, "decisions.md")
    assert units[0].agent == "data" and units[0].title == "Use uv"
    assert (
        units[0].statement
        == "**By:** Data (Tests)\n**What:** Use uv for installs\nin CI and locally\n**Why:** Faster."
    )
    assert (
        units[1].agent == "squad" and not units[1].dated and units[1].statement == "**By:** ???\nJust prose."
    )
    assert skipped == []


def test_import_then_promote_then_import_adds_nothing(legacy: tuple[Path, dict[str, Any]]) -> None:
    root, _ = legacy
    cfg = cfg_for(root)
    first = import_squad(cfg, None, as_of=datetime(2026, 11, 29, tzinfo=UTC)).to_json()
    assert first["cold"]
    from scribed.core.promote import promote

    rep = promote(cfg, as_of=datetime(2027, 6, 1, tzinfo=UTC)).to_json()  # everything is old now
    assert rep["promoted"] and rep["kept"] == 0
    snap = memory_bytes(root)
    again = import_squad(cfg, None, as_of=datetime(2026, 11, 29, tzinfo=UTC)).to_json()
    assert again["cold"] == [] and again["promoted"] == [] and again["archived"] == []
    assert memory_bytes(root) == snap


def test_changed_core_context_supersedes_the_old_block(legacy: tuple[Path, dict[str, Any]]) -> None:
    root, _ = legacy
    cfg = cfg_for(root)
    as_of = datetime(2026, 11, 29, tzinfo=UTC)
    import_squad(cfg, ["riker"], as_of=as_of)
    hist = root / ".squad/agents/riker/history.md"
    hist.write_text(hist.read_text().replace("Reviews go to picard", "Reviews go to data"))
    out = import_squad(cfg, ["riker"], as_of=as_of).to_json()
    assert [p["action"] for p in out["pinned"] if p["topic"] == "agent-riker"] == ["added"]
    doc = WikiDoc.parse("agent-riker", (root / ".squad/memory/wiki/agent-riker.md").read_text())
    assert [b.active for b in doc.blocks] == [True, False]  # the old one under Superseded
    assert "Reviews go to data" in doc.blocks[0].text and "Reviews go to picard" in doc.blocks[1].text


# --- real shapes: mixed decision layouts, drop-box files, archives, Squad's governed memory -----
GOVERNED = {
    "memory/local/n1.json": '{"note": "squad local"}\n',
    "memory/policy-inbox/p1.md": "policy\n",
    "memory/semantic-inbox/s1.md": "semantic\n",
    "memory/tombstones/t1.json": '{"id": "t1"}\n',
    "memory/config.json": '{"version": 1}\n',
    "memory/index.json": "[]\n",
    "memory/audit.jsonl": '{"op": "squad"}\n',
}


def build_mixed(root: Path) -> None:
    """A Squad tree in the shapes real teams write (fixtures of tests/test_legacy.py)."""
    from test_legacy import DECISIONS, HISTORY

    squad = root / ".squad"
    (squad / "agents" / "vela").mkdir(parents=True)
    (squad / "agents" / "vela" / "history.md").write_text(HISTORY)
    (squad / "agents" / "vela" / "charter.md").write_text("# Vela\n\nBackend.\n")
    (squad / "agents" / "vela" / "history-archive.md").write_text(
        "# Vela — archived history\n\n## Learnings\n\n### 2026-01-10: Bucket naming\n"
        "Bucket names carry the environment suffix (`uploads-prod`, `uploads-stg`).\n"
    )
    (squad / "decisions.md").write_text(DECISIONS)
    (squad / "decisions-archive.md").write_text(
        "# Decisions Archive\n\n## 2026-01-20\n\n### Use `scheduler-p1` for nightly jobs\n"
        "**By:** Orion\n**What:** Nightly jobs run on `scheduler-p1`.\n"
    )
    (squad / "decisions" / "inbox").mkdir(parents=True)
    (squad / "decisions" / "inbox" / "orion-cron.md").write_text(
        "# Decision: Nightly jobs move to cron\n\n## Context\nscheduler_p1 kept missing runs.\n\n"
        "## Decision\nWe reversed the earlier decision to use scheduler p1 for nightly jobs; "
        "they run from cron instead.\n"
    )
    for rel, text in GOVERNED.items():
        (squad / rel).parent.mkdir(parents=True, exist_ok=True)
        (squad / rel).write_text(text)
    (root / "scribed.toml").write_text('root = "."\n')


def test_mixed_layouts_reach_the_wiki_by_title_and_nothing_is_lost(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import realsquad  # the benchmark's own measures, on this tree

    root = tmp_path / "repo"
    root.mkdir()
    build_mixed(root)
    before = legacy_bytes(root)
    governed = {rel: (root / ".squad" / rel).read_bytes() for rel in GOVERNED}
    out = import_squad(cfg_for(root), None, as_of=datetime(2026, 5, 1, tzinfo=UTC)).to_json()
    layout = Layout(root)
    wiki = layout.wiki
    doc = WikiDoc.parse("decisions", (wiki / "decisions.md").read_text())
    titles = {b.title: b for b in doc.blocks}
    want = realsquad.titled_decisions((root / ".squad/decisions.md").read_text())
    have = {realsquad.norm_title(x) for x in titles}
    assert len(want) == 8 and [t for t in want if realsquad.norm_title(t) not in have] == ["Release status"]
    assert "Nightly jobs move to cron" in titles, "an inbox drop-box file is a decision source"
    # what is not a decision never becomes a fact
    assert {n["reason"] for n in out["not_decisions"]} == {"question", "priority", "table"}
    text = "".join(p.read_text() for p in wiki.glob("*.md"))
    assert "drop Python 3.10" not in text and "polish the settings page" not in text
    assert not any(realsquad.is_junk(t) for t in realsquad.wiki_titles(wiki)[1])
    # no debris, one provenance line per fact, an index within bounds
    for p in wiki.glob("*.md"):
        assert realsquad.debris_lines(p.read_text()) == [], p.name
    assert len((wiki / "index.md").read_text().splitlines()) <= 200
    assert "**Focus:**" not in (wiki / "agent-vela.md").read_text()
    # the reversal in the inbox file supersedes the archived decision, identifiers normalised
    old = titles["Use `scheduler-p1` for nightly jobs"]
    assert old.status.startswith("superseded by ") and "Nightly jobs move to cron" in old.status
    # every legacy file is archived whole: every byte is in the archive
    for rel in before:
        if rel.startswith(".squad/memory"):
            continue
        arch = [a for a in out["legacy_archived"] if a.startswith("legacy/" + rel.removeprefix(".squad/"))]
        assert len(arch) == (1 if "agents/" not in rel or "history" in rel else 0), rel
        if arch:
            assert gzip.decompress((layout.archive / arch[0]).read_bytes()) == before[rel]
    # legacy and Squad's governed files are byte-identical; nothing new in Squad's folders
    assert legacy_bytes(root) == before
    for rel, data in governed.items():
        assert (root / ".squad" / rel).read_bytes() == data
    for d in ("local", "policy-inbox", "semantic-inbox", "tombstones"):
        assert len(list((root / ".squad/memory" / d).iterdir())) == 1
    # scribed's state folder ignores itself; its audit log is its own, not Squad's
    assert (layout.state / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (layout.state / "audit.jsonl").is_file()
    assert (root / ".squad/memory/audit.jsonl").read_text() == GOVERNED["memory/audit.jsonl"]
    # the default spawn is not empty: the agent's hot file is seeded from its newest entry
    assert "scribed-live: seed:import:" in (layout.hot / "vela.md").read_text()
    # a second import adds nothing
    snap = memory_bytes(root)
    again = import_squad(cfg_for(root), None, as_of=datetime(2026, 5, 1, tzinfo=UTC)).to_json()
    assert again["decisions"] == [] and again["cold"] == [] and memory_bytes(root) == snap


# Undated sections (Project Context, Learnings, Archive) and an undated ### entry take the file's
# date, newer than every dated session; a template placeholder sits under Learnings.
SEED_HISTORY = """# Kestrel — history

## Project Context

Kestrel owns the payment webhooks. The team lead is Sam.

## Learnings

{agents append here}

### Retry budget for the webhook worker
The worker retries five times with a doubling pause; more only fills the dead-letter queue.

## 2026-05-10: Shard the job queue

Split `jobs` into four shards keyed by merchant id; the hot merchant no longer starves the rest.

## 2026-06-02: Rotate the signing keys

Rotated the webhook signing keys; the old key stays valid for 48 hours (`keys/rotate.py`).

## Archive

Older notes live in the git history of this file.

- **2026-06-02:** Key rotation recap: both keys served during the overlap window.
"""


@pytest.mark.parametrize(("mtime", "as_of"), [("2026-11-25", "2026-11-29"), ("2026-06-20", "2026-06-21")])
def test_hot_seed_comes_from_the_newest_dated_entry(tmp_path: Path, mtime: str, as_of: str) -> None:
    root = tmp_path / "repo"
    hist = root / ".squad/agents/kestrel/history.md"
    neo = root / ".squad/agents/neo/history.md"
    for p, text in (
        (hist, SEED_HISTORY),
        (
            neo,
            "# Neo\n\n## Project Context\n\nNeo writes the docs.\n\n## Learnings\n\n{agents append here}\n",
        ),
    ):
        p.parent.mkdir(parents=True)
        p.write_text(text)
        stamp = datetime.fromisoformat(mtime).replace(tzinfo=UTC).timestamp()
        os.utime(p, (stamp, stamp))
    # as of 2026-11-29 the undated sections (dated 2026-11-25 by the mtime) are in cold, the dated
    # sessions older than the TTL; as of 2026-06-21 the dated sessions are in cold too
    import_squad(cfg_for(root), None, as_of=datetime.fromisoformat(as_of).replace(tzinfo=UTC))
    hot = (root / ".squad/memory/hot/kestrel.md").read_text()
    ended = [ln for ln in hot.splitlines() if "session ended:" in ln]
    assert ended == ["- 2026-06-02T00:00:00Z session ended: Rotate the signing keys"], hot
    assert "48 hours" in hot
    # no dated entry at all: the last undated one, never the template's placeholder
    text = (root / ".squad/memory/hot/neo.md").read_text()
    assert "session ended: Project Context" in text and "append here" not in text
    assert not any("append here" in p.read_text() for p in (root / ".squad/memory").rglob("*.md"))


@pytest.mark.parametrize(
    ("fmt", "level"), [("console", "info"), ("json", "info"), ("console", "error"), ("json", "error")]
)
def test_each_import_warning_is_printed_once(tmp_path: Path, fmt: str, level: str) -> None:
    """A warning goes to stderr once (the log line), not a second time as a CLI line; the summary
    counts it and the exit code stays 0, as before."""
    root = tmp_path / "repo"
    hist = root / ".squad/agents/data/history.md"
    hist.parent.mkdir(parents=True)
    hist.write_text(
        "# Data history\n\n### Fixed the warp core calibration script\n"
        "Decision: use tools/calibrate.py with --strict from now on.\n\n"
        "### 2026-11-01: Reviewed the sensor docs\nThe sensor docs live in docs/sensors.md.\n"
    )
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'root = "{root}"\n[log]\nformat = "{fmt}"\nlevel = "{level}"\n')  # error: no log line
    code, data, err = scribed_json("--config", str(cfg), "import", "--all", "--as-of", AS_OF, "--dry-run")
    assert code == 0 and len(data["warnings"]) == 1 and err.count("undated entry") == 1, err
    p = scribed("--config", str(cfg), "import", "--all", "--as-of", AS_OF)
    err, out = p.stderr.decode(), p.stdout.decode()
    assert p.returncode == 0, err
    assert err.count("undated entry 'Fixed the warp core calibration script'") == 1, err
    assert out.splitlines()[-1].endswith(", 1 warning"), out


def test_import_all_with_nothing_to_read_says_so(tmp_path: Path) -> None:
    """A root with no Squad history and no decision: the zero counts come with a line saying
    what was looked for (they read like a successful import), exit 0."""
    (tmp_path / ".squad").mkdir()
    (tmp_path / "scribed.toml").write_text('root = "."\n')
    code, out, err = scribed_json("--config", str(tmp_path / "scribed.toml"), "import", "--all")
    assert code == 0, err
    assert out["agents"] == [] and out["cold"] == []
    assert "nothing to import under" in err and ".squad/agents/*/history.md" in err, err


def test_import_all_names_an_agent_folder_it_cannot_take(tmp_path: Path) -> None:
    """Finding s17: `import --all` skipped an agent folder whose name is no agent name ("Data
    Officer") without a word; it is now an import warning naming the folder and a name to rename
    it to, the other agents imported as before."""
    root = tmp_path / "repo"
    root.mkdir()
    build_legacy(root)
    shutil.copytree(root / ".squad/agents/data", root / ".squad/agents/Data Officer")
    p = subprocess.run(
        [sys.executable, "-m", "scribed", "import", "--all", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")},
    )
    assert p.returncode == 0, p.stderr
    said = [ln for ln in p.stderr.splitlines() if "Data Officer" in ln]
    assert len(said) == 1 and ".squad/agents/Data Officer/history.md" in said[0], p.stderr
    assert "not imported" in said[0] and "'data-officer'" in said[0], said
    assert "data" in p.stdout.splitlines()[0] and "Data Officer" not in p.stdout, p.stdout


def test_an_agent_folder_with_capitals_is_imported_under_its_folded_name(tmp_path: Path) -> None:
    """Finding m01: ``squad init`` makes ``.squad/agents/Rai/``; import wrote ``cold/Rai.md`` and
    ``hot/Rai.md``, which every reader refuses (a ``file_name_invalid`` warning, an empty
    ``context``), no committed entry file, and ``import rai`` was refused. The tiers now hold it
    as ``rai``, which ``context`` serves and ``import Rai`` or ``import rai`` names."""
    root = tmp_path / "repo"
    hist = root / ".squad/agents/Rai/history.md"
    hist.parent.mkdir(parents=True)
    hist.write_text(
        "# Project Context\n\n## Learnings\n\n### 2026-11-02: Reviewed the consent flow\n"
        "The consent banner in `web/consent.tsx` now blocks analytics until accepted (issue #77).\n"
    )
    (root / "scribed.toml").write_text('root = "."\n')
    cfg = str(root / "scribed.toml")
    code, data, err = scribed_json("--config", cfg, "import", "--all", "--as-of", AS_OF)
    assert code == 0, err
    assert "file_name_invalid" not in err, err
    memory = root / ".squad/memory"
    assert [p.name for p in (memory / "cold/rai").glob("*.md")], "an entry file the team commits"
    assert not (memory / "cold/Rai.md").exists() and not (memory / "hot/Rai.md").exists()
    p = scribed("--config", cfg, "context", "rai", "--situation", "resume")
    assert p.returncode == 0 and "web/consent.tsx" in p.stdout.decode(), p.stderr.decode()
    for name in ("rai", "Rai"):
        code, data, err = scribed_json("--config", cfg, "import", name, "--as-of", AS_OF, "--dry-run")
        assert code == 0 and data["agents"] == ["rai"], (name, err)


def test_bold_labels_of_bullets_stay_whole_in_imported_entries(tmp_path: Path) -> None:
    """Finding m03: a section of ``- **Owner:** alice`` bullets (Squad's Project Context) became
    ``Owner:** alice Project:** billing service``, each line stripped of every ``-`` and ``*`` it
    began with, the bold cut in half, in the cold entry and the hot seed every spawn loads; key
    facts lost theirs the same way. A list marker goes, the emphasis stays whole."""
    root = tmp_path / "repo"
    hist = root / ".squad/agents/kai/history.md"
    hist.parent.mkdir(parents=True)
    hist.write_text(
        "# Project Context\n\n- **Owner:** alice\n- **Stack:** TypeScript, Node 22, Postgres\n\n"
        "## Learnings\n\n### 2026-11-20: Billing conventions\n"
        "- **Money:** amounts must be integer cents in `src/billing/money.ts`.\n"
        "* **Retries:** webhook deliveries stop after 5 attempts in `src/webhooks/retry.ts`.\n"
    )
    (root / "scribed.toml").write_text('root = "."\n')
    code, _, err = scribed_json("--config", str(root / "scribed.toml"), "import", "--all", "--as-of", AS_OF)
    assert code == 0, err
    memory = root / ".squad/memory"
    text = (memory / "cold/kai.md").read_text() + (memory / "hot/kai.md").read_text()
    assert "**Owner:** alice" in text and "**Money:** amounts must be integer cents" in text, text
    halves = [ln for ln in text.splitlines() if ln.count("**") % 2]
    assert not halves, halves


def test_a_second_import_says_nothing_of_undated_entries_it_took_before(tmp_path: Path) -> None:
    """Finding m02: every ``import --all`` repeated one "undated entry …; dated from its last git
    commit" warning per undated section, though it imported none of them again (11 on a fresh
    ``squad init`` team, every time: nothing to act on). A warning is now said for what this import
    takes; a section added since is still said, once."""
    root = tmp_path / "repo"
    hist = root / ".squad/agents/data/history.md"
    hist.parent.mkdir(parents=True)
    hist.write_text("# Data\n\n## Learnings\n\nThe sensor grid is calibrated by `tools/grid.py`.\n")
    dec = root / ".squad/decisions.md"
    dec.write_text("# Decisions\n\n### Use tools/calibrate.py\n**By:** data\n**What:** calibrate with it.\n")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'root = "{root}"\n')
    args = ("--config", str(cfg), "import", "--all", "--as-of", AS_OF)
    code, data, err = scribed_json(*args)
    assert code == 0 and len(data["warnings"]) == 2 and err.count("undated ") == 2, (data, err)
    code, data, err = scribed_json(*args)
    assert code == 0 and data["skipped"] == 2 and data["warnings"] == [] and "undated" not in err, err
    hist.write_text(hist.read_text() + "\n## Gotchas\n\nThe grid API returns millimetres, never inches.\n")
    code, data, err = scribed_json(*args)
    assert code == 0 and len(data["cold"]) == 1, data
    assert [w for w in data["warnings"] if "undated" in w] == [
        f"{hist.relative_to(root)}: undated entry 'Gotchas'"
        f"; dated {data['cold'][0]['date'][:10]} from the file's mtime (no git date)"
    ], data["warnings"]


def test_a_clone_seeds_and_lists_from_dated_work_not_a_section_dated_by_its_file(tmp_path: Path) -> None:
    """Finding m05: an imported section with no date ("Project Context") takes its file's last
    commit date, so on a teammate's clone, which did not import it, it was the newest entry: the
    hot file every spawn loads said "session ended: Project Context" and ``resume`` listed it
    first. It now carries ``dated=file``: the seed and ``resume`` take the dated work first, as
    on the clone that imported it; the MCP ``recent_sessions`` too."""
    from scribed.cli.mcp_server import tool_recent_sessions

    a, b = tmp_path / "a", tmp_path / "b"
    hist = a / ".squad/agents/kai/history.md"
    hist.parent.mkdir(parents=True)
    hist.write_text(
        "# Project Context\n\n- **Owner:** alice\n- **Stack:** TypeScript, Postgres\n\n## Learnings\n\n"
        "### 2026-11-20: Invoice rounding\nInvoice totals are integer cents in `src/billing/money.ts`.\n\n"
        "### 2026-11-24: Webhook retries\nWebhooks retry 5 times in `src/webhooks/retry.ts` (issue #212).\n"
    )

    def git(cwd: Path, *args: str) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)

    git(a, "init", "-q")
    git(a, "config", "user.email", "t@example.com")
    git(a, "config", "user.name", "t")
    git(a, "add", "-A")
    git(a, "commit", "-qm", "squad")
    code, data, err = scribed_json("import", "--all", "--root", str(a), "--as-of", AS_OF)
    assert code == 0 and len(data["cold"]) == 3, (data, err)
    git(a, "add", "-A")
    git(a, "commit", "-qm", "memory")
    git(tmp_path, "clone", "-q", str(a), str(b))
    for root in (a, b):
        hot = scribed("context", "kai", "--root", str(root)).stdout.decode()
        assert "session ended: Webhook retries" in hot and "Project Context" not in hot, (root, hot)
        block = scribed("context", "kai", "--root", str(root), "--situation", "resume").stdout.decode()
        titles = [ln.split(": ", 1)[1] for ln in block.splitlines() if ln.startswith("### 20")]
        assert titles == ["Webhook retries", "Invoice rounding", "Project Context"], (root, titles)
        rows = tool_recent_sessions(Layout(root), "kai")["sessions"]  # the MCP tool, in the same order
        assert [r["title"] for r in rows] == titles, rows


def test_an_open_bullet_of_a_history_entry_is_an_open_item_of_its_entry_and_seed(tmp_path: Path) -> None:
    """Finding m07: an ``Open:`` bullet of a Squad history entry was lost when another line became
    the entry's Outcome (only its issue number survived, as a key fact), or was the Outcome itself
    while the hot seed said the last session left no open items (m11). The label makes the line an
    open item of the entry, listed by the seed; a fact that merely says "open" is none."""
    root = tmp_path / "repo"
    hist = root / ".squad/agents/juno/history.md"
    hist.parent.mkdir(parents=True)
    hist.write_text(
        "# Juno\n\n## Learnings\n\n### 2026-11-22: Search indexing\n"
        "- **Open:** the reindex job `reindex_all` times out on tenants over 2M rows (see #431).\n"
        "- The search index is rebuilt nightly by `jobs/reindex.py` at 02:00 UTC.\n"
        "- Port 9200 stays open: only the VPC can reach it.\n"
    )
    (root / "scribed.toml").write_text('root = "."\n')
    code, data, err = scribed_json(
        "--config", str(root / "scribed.toml"), "import", "--all", "--as-of", AS_OF
    )
    assert code == 0 and len(data["cold"]) == 1, (data, err)
    memory = root / ".squad/memory"
    cold = (memory / "cold/juno.md").read_text()
    opened = cold.split("#### Open items\n", 1)[-1].split("\n#", 1)[0] if "#### Open items" in cold else ""
    assert "`reindex_all` times out on tenants over 2M rows" in opened, cold
    assert "VPC" not in opened, cold
    hot = (memory / "hot/juno.md").read_text()
    assert "left no open items" not in hot and "open items from the last session" in hot, hot
    assert "`reindex_all` times out" in hot.split("Active decisions:", 1)[0], hot
