"""`scribed mcp`: the SDK's own client against a real `scribed mcp` subprocess on a small root.

Lists the tools, finds a cold entry with `search`, writes a fact with `wiki_write` (the same bytes
as `scribed wiki-write` on a twin root), gets the context block and the recent sessions, reads the
tier files as resources, and is refused for every argument naming something outside the root.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from click.testing import CliRunner
from helpers import tree_bytes
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment

from scribed.cli.main import main
from scribed.compress import entry
from scribed.models import Summary
from scribed.sources.injected import MARK_OPEN

TOOLS = {"context", "search", "wiki_write", "recent_sessions"}
FACT = (
    "Use an injected clock in src/auth/session.py instead of freeze_time()\nfreeze_time leaked across tests."
)


def _entry(eid: str, agent: str, session: str, day: int, goal: str, points: list[str]) -> str:
    meta = entry.EntryMeta(
        eid,
        agent,
        session,
        "notes.md",
        "markdown",
        datetime(2026, 10, day, 14, tzinfo=UTC),
        1,
        40,
        12,
        "f" * 64,
        "extractive",
        8_000,
    )
    return entry.render(Summary(goal=goal, key_points=points), meta)


def _root(base: Path) -> tuple[Path, Path]:
    """(squad root, a folder outside it holding a secret); the root's cold tier has a symlink out."""
    root, outside = base / "repo", base / "outside"
    mem = root / ".squad" / "memory"
    for d in (mem / "hot", mem / "cold", mem / "wiki", outside):
        d.mkdir(parents=True)
    (outside / "secret.md").write_text("### 2026-10-01: outside\nthe launch codes\n")
    (mem / "hot" / "data.md").write_text("# Hot memory: data\n\nCurrent task: tidy the release notes\n")
    (mem / "cold" / "data.md").write_text(
        "# Cold memory: data\n\n"
        + _entry(
            "e-00000000a001",
            "data",
            "s-login",
            3,
            "Chase the flaky login test",
            ["the skew came from a frozen clock in tests/test_login.py", "ruled out the CI runner"],
        )
        + "\n"
        + _entry(
            "e-00000000a002", "data", "s-notes", 9, "Draft the 2.4 release notes", ["grouped fixes by module"]
        )
    )
    (mem / "cold" / "geordi.md").write_text(
        "# Cold memory: geordi\n\n"
        + _entry(
            "e-00000000b001",
            "geordi",
            "s-warp",
            6,
            "Profile the warp core sync job",
            ["batching cut it to 40 s"],
        )
    )
    (mem / "wiki" / "decisions.md").write_text(
        "# Wiki: decisions\n\n### 2026-10-02: keep the sync job on a single worker\n- status: active\n"
    )
    os.symlink(outside / "secret.md", mem / "cold" / "lore.md")
    return root, outside


def _session(root: Path, cfg: Path, body: Callable[[Client], Awaitable[None]]) -> None:
    """Run ``body`` with a client connected to a real ``scribed --config CFG mcp`` subprocess."""
    script = Path(sys.executable).with_name("scribed")
    cmd, args = (str(script), []) if script.exists() else (sys.executable, ["-m", "scribed"])
    # the server imports the scribed under test (PYTHONPATH), not whichever one the script was installed from
    env = {**get_default_environment(), **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}}
    params = StdioServerParameters(
        command=cmd, args=[*args, "--config", str(cfg), "mcp"], cwd=str(root), env=env
    )

    async def run() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await body(client)

    anyio.run(run)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _config(base: Path, root: Path) -> Path:
    cfg = base / "scribed.toml"
    cfg.write_text(f'root = "{root}"\n')
    return cfg


def test_client_lists_tools_searches_writes_and_reads(tmp_path: Path) -> None:
    root, _ = _root(tmp_path / "a")
    twin, _ = _root(tmp_path / "b")
    seen: dict[str, Any] = {}

    async def body(client: Client) -> None:
        seen["tools"] = {t.name for t in (await client.list_tools()).tools}
        seen["search"] = await client.call_tool("search", {"query": "frozen clock login"})
        seen["write"] = await client.call_tool(
            "wiki_write", {"topic": "decisions", "agent": "data", "text": FACT}
        )
        seen["found"] = await client.call_tool("search", {"query": "injected clock", "tier": "wiki"})
        seen["context"] = await client.call_tool(
            "context", {"agent": "data", "situation": "debug", "query": "flaky login", "max_bytes": 3000}
        )
        seen["recent"] = await client.call_tool("recent_sessions", {"limit": 2})
        seen["resources"] = {str(r.uri) for r in (await client.list_resources()).resources}
        seen["cold"] = await client.read_resource("scribed://memory/cold/geordi")

    _session(root, _config(tmp_path / "a", root), body)

    assert seen["tools"] == TOOLS

    hits = seen["search"].structured_content["hits"]
    assert not seen["search"].is_error and hits, _text(seen["search"])
    assert (hits[0]["tier"], hits[0]["agent"], hits[0]["session"]) == ("cold", "data", "s-login")
    assert hits[0]["file"] == ".squad/memory/cold/data.md" and hits[0]["line"] > 1
    assert "«frozen»" in hits[0]["snippet"] or "«clock»" in hits[0]["snippet"]

    assert not seen["write"].is_error, _text(seen["write"])
    # The CLI's wiki-write on an identical root leaves the same memory (wiki, inbox, review queue).
    cli = CliRunner().invoke(
        main, ["wiki-write", "decisions", "--agent", "data", "--root", str(twin)], input=FACT
    )
    assert cli.exit_code == 0, cli.output
    mem = Path(".squad") / "memory"
    assert tree_bytes(root / mem, skip=(".scribed",)) == tree_bytes(twin / mem, skip=(".scribed",))
    assert "injected clock" in (root / mem / "wiki" / "decisions.md").read_text()
    found = seen["found"].structured_content["hits"]
    assert found and found[0]["topic"] == "decisions" and "injected clock" in found[0]["heading"]

    block = _text(seen["context"])
    assert (
        block.startswith(f"{MARK_OPEN}\n## Memory Context")
        and "Current task: tidy the release notes" in block
    )
    assert "Chase the flaky login test" in block and len(block.encode()) <= 3000

    recent = seen["recent"].structured_content["sessions"]
    assert [(r["agent"], r["session"], r["entry"]) for r in recent] == [
        ("data", "s-notes", "e-00000000a002"),
        ("geordi", "s-warp", "e-00000000b001"),
    ]
    assert recent[0]["date"].startswith("2026-10-09") and recent[0]["title"] == "Draft the 2.4 release notes"

    assert (
        "scribed://memory/hot/data" in seen["resources"]
        and "scribed://memory/wiki/decisions" in seen["resources"]
    )
    assert not any("lore" in u for u in seen["resources"])  # the symlink out is not offered
    assert "Profile the warp core sync job" in seen["cold"].contents[0].text


def test_arguments_naming_anything_outside_the_root_are_refused(tmp_path: Path) -> None:
    root, outside = _root(tmp_path)
    (root / "note.md").write_text("Deploys need a second reviewer\n")
    before = tree_bytes(outside)
    wiki_before = (root / ".squad/memory/wiki/decisions.md").read_bytes()
    calls = {
        "topic ../": ("wiki_write", {"topic": "../../outside/x", "agent": "data", "text": "x"}),
        "file ../": ("wiki_write", {"topic": "ops", "agent": "data", "file": "../outside/secret.md"}),
        "file absolute": (
            "wiki_write",
            {"topic": "ops", "agent": "data", "file": str(outside / "secret.md")},
        ),
        "agent path": ("context", {"agent": "/etc/passwd"}),
        "symlink out": ("context", {"agent": "lore", "situation": "resume"}),
        "recent symlink": ("recent_sessions", {"agent": "lore"}),
        "wiki topic path": ("context", {"agent": "data", "wiki_topics": ["../../outside/secret"]}),
    }
    out: dict[str, Any] = {}

    async def body(client: Client) -> None:
        for key, (tool, args) in calls.items():
            out[key] = await client.call_tool(tool, args)
        out["inside"] = await client.call_tool(
            "wiki_write", {"topic": "ops", "agent": "data", "file": "note.md"}
        )
        try:
            out["resource"] = await client.read_resource("scribed://memory/cold/lore")
        except Exception as exc:  # the SDK raises the server's error
            out["resource"] = exc

    _session(root, _config(tmp_path, root), body)

    for key in calls:
        assert out[key].is_error, f"{key}: not refused: {_text(out[key])}"
        msg = _text(out[key])
        assert "refused" in msg and ("outside the root" in msg or "is a path" in msg), f"{key}: {msg}"
        assert "launch codes" not in msg
    assert "launch codes" not in str(out["resource"]) and "outside the root" in str(out["resource"])
    assert tree_bytes(outside) == before
    assert (root / ".squad/memory/wiki/decisions.md").read_bytes() == wiki_before
    # A file inside the root is fine.
    assert not out["inside"].is_error, _text(out["inside"])
    assert "second reviewer" in (root / ".squad/memory/wiki/ops.md").read_text()


def test_a_root_without_squad_is_refused_before_serving(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["mcp", "--root", str(tmp_path)])
    assert out.exit_code == 2 and "no .squad/" in out.output


def _first_calls_ok(root: Path, cfg: Path) -> list[str]:
    """A fresh server's first four calls, all at once (what an agent's first memory use does):
    the error texts of those that failed."""
    errors: list[str] = []

    async def body(client: Client) -> None:
        async def call(name: str, args: dict[str, Any]) -> None:
            try:
                res = await client.call_tool(name, args)
            except Exception as exc:
                errors.append(f"{name}: {exc}")
                return
            if res.is_error:
                errors.append(f"{name}: {_text(res)[:300]}")

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "search", {"query": "frozen clock login"})
            tg.start_soon(call, "context", {"agent": "data", "situation": "debug"})
            tg.start_soon(call, "search", {"query": "release notes", "tier": "cold"})
            tg.start_soon(call, "context", {"agent": "geordi", "situation": "post-incident"})
            tg.start_soon(call, "recent_sessions", {"limit": 2})
            tg.start_soon(
                call, "wiki_write", {"topic": "decisions", "agent": "data", "text": "Use UTC in logs."}
            )

    _session(root, cfg, body)
    return errors


def test_twenty_fresh_servers_answer_their_first_concurrent_calls(tmp_path: Path) -> None:
    """Lazy imports raced in the server's worker threads ("partially initialized module"): the
    server imports what its tools need before it answers ``initialize``."""
    failed: list[str] = []
    for i in range(20):
        root, _ = _root(tmp_path / f"s{i}")
        failed += _first_calls_ok(root, _config(tmp_path / f"s{i}", root))
    assert failed == [], failed


def test_the_server_imports_every_module_its_tools_need_before_serving() -> None:
    """No lazy import is left for a worker thread: after the warm-up each scribed module is loaded."""
    import subprocess

    code = (
        "import sys; from scribed.cli.mcp_server import warm_imports; names = warm_imports(); "
        "import pkgutil, scribed; "
        "left = [m.name for m in pkgutil.walk_packages(scribed.__path__, 'scribed.') "
        "if m.name != 'scribed.__main__' and m.name not in sys.modules]; print(len(names), left)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    count, _, left = out.stdout.strip().partition(" ")
    assert int(count) > 100 and left == "[]", out.stdout + out.stderr
