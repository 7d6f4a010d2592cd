"""`scribed mcp`: the SDK's own client against a real `scribed mcp` subprocess on a small root.

Lists the tools, finds a cold entry with `search`, writes a fact with `wiki_write` (the same bytes
as `scribed wiki-write` on a twin root), gets the context block and the recent sessions, reads the
tier files as resources, and is refused for every argument naming something outside the root.
Under load: fresh servers' first calls, malformed JSON-RPC written raw, a 10 MB request and 1,000
rapid calls each get an answer or an error, with the server's memory measured.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from helpers import tree_bytes
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.exceptions import MCPError

from scribed.cli.main import main
from scribed.compress import entry
from scribed.models import Summary
from scribed.sources.injected import MARK_OPEN

TOOLS = {"context", "search", "wiki_write", "recent_sessions"}
FACT = (
    "Use an injected clock in src/auth/session.py instead of freeze_time()\nfreeze_time leaked across tests."
)
# A hot file as scribed writes it for a running session (its live view): reading one takes the
# front-matter parser, the import the reported race broke.
LIVE = (
    "---\nscribed-live: 8b1f7c2e-3d4a-4b5c-9e6f-7a8b9c0d1e2f\ngenerated: 2026-10-09T14:00:00Z\n---\n"
    "<!-- Written by scribed from a running session; replaced on each change, cleared when it ends. -->\n"
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
    (mem / "hot" / "data.md").write_text(
        LIVE + "# Hot memory: data\n\nCurrent task: tidy the release notes\n"
    )
    (mem / "hot" / "geordi.md").write_text(LIVE + "# Hot memory: geordi\n\nCurrent task: warp core sync\n")
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
        seen["authored"] = await client.call_tool(
            "search", {"query": "injected clock", "tier": "wiki", "agent": "data"}
        )  # the fact data wrote is data's (its provenance says author=data)
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
    assert [h["agent"] for h in seen["authored"].structured_content["hits"]] == ["data"], _text(
        seen["authored"]
    )

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


def _first_calls_ok(root: Path, cfg: Path, delay: float) -> list[str]:
    """A fresh server's first calls, all at once or nearly (what an agent's first memory use
    does): a search, then ``delay`` seconds later context, recent_sessions, another search and
    wiki_write together. The error texts of those that failed."""
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
            await anyio.sleep(delay)
            tg.start_soon(call, "context", {"agent": "data", "situation": "debug"})
            tg.start_soon(call, "recent_sessions", {"limit": 2})
            tg.start_soon(call, "search", {"query": "release notes", "tier": "cold"})
            tg.start_soon(call, "context", {"agent": "geordi", "situation": "post-incident"})
            tg.start_soon(
                call, "wiki_write", {"topic": "decisions", "agent": "data", "text": "Use UTC in logs."}
            )

    _session(root, cfg, body)
    return errors


@pytest.mark.slow  # a real-client tier: `python -m pytest -m slow`, run by CI
def test_twenty_fresh_servers_answer_their_first_concurrent_calls(tmp_path: Path) -> None:
    """Lazy imports raced in the server's worker threads ("partially initialized module"): the
    server imports what its tools need before it answers ``initialize``. The race needs a search
    (which loads the transcript parsers) while a context call reads a live hot file (the
    front-matter parser) a few ms to ~150 ms later: the calls are spread over that window. On the
    code before the warm-up (d7a2633^), 4 and 3 of the 20 servers failed in two runs here, and 1
    and 2 on this code with the warm-up taken out (the test as first written, with a hot file
    without front matter and the calls at once, never took that import and could not fail)."""
    failed: list[str] = []
    for i in range(20):
        root, _ = _root(tmp_path / f"s{i}")
        failed += _first_calls_ok(root, _config(tmp_path / f"s{i}", root), (i * 10 % 160) / 1000)
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


# --- the wire under abuse ------------------------------------------------------------------------
def _sigint_default() -> None:
    """In the server's child: Ctrl-C as a terminal gives it. A suite run as a shell's background
    job has SIGINT ignored, which children inherit and Python rightly keeps."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _raw_server(root: Path, cfg: Path) -> subprocess.Popen[bytes]:
    """A ``scribed mcp`` subprocess, initialized, for raw writes."""
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    p = subprocess.Popen(
        [sys.executable, "-m", "scribed", "--config", str(cfg), "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root, env=env,
        preexec_fn=_sigint_default,
    )  # fmt: skip
    init = {
        "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }  # fmt: skip
    assert _ask(p, json.dumps(init).encode())["id"] == "init"
    _put(p, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    return p


def _put(p: subprocess.Popen[bytes], line: bytes) -> None:
    assert p.stdin is not None
    p.stdin.write(line + b"\n")
    p.stdin.flush()


def _ask(p: subprocess.Popen[bytes], line: bytes, timeout: float = 60) -> dict[str, Any]:
    """Write one line, read one answer; an answer not there by ``timeout`` is a hang."""
    _put(p, line)
    assert p.stdout is not None
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    assert ready, f"no answer in {timeout} s to {line[:120]!r}"
    out = p.stdout.readline()
    assert out, f"the server closed its output after {line[:120]!r} (exit {p.poll()})"
    answer: dict[str, Any] = json.loads(out)
    return answer


def _call(rid: object, name: str, args: object) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": args}}
    ).encode()


MALFORMED: list[tuple[str, bytes, object, int | None]] = [
    # (case, the line, the id the answer must carry, its error code: None for a tool's error result)
    ("not json", b"this is not json", None, -32700),
    ("bytes", b"\xff\xfe\x00 garbage", None, -32700),
    ("cut off", b'{"jsonrpc": "2.0", "id": 7, "method": "tools/li', None, -32700),
    ("no method", b'{"jsonrpc": "2.0", "id": 2}', 2, -32600),
    ("wrong version", b'{"jsonrpc": "1.0", "id": 3, "method": "tools/list"}', 3, -32600),
    ("params a string", b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": "x"}', 4, -32600),
    ("id an object", b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}', None, -32600),
    ("a batch", b'[{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}]', None, -32600),
    ("a number", b"42", None, -32600),
    ("unknown method", b'{"jsonrpc": "2.0", "id": "m", "method": "no/such/method"}', "m", -32601),
    ("call without params", b'{"jsonrpc": "2.0", "id": 6, "method": "tools/call"}', 6, -32602),
    ("unknown tool", _call(8, "no_such_tool", {}), 8, None),
    ("query a number", _call(9, "search", {"query": 5}), 9, None),
    ("limit a word", _call(10, "search", {"query": "x", "limit": "ten"}), 10, None),
    ("arguments a list", _call(11, "context", ["data"]), 11, -32602),
    ("agent missing", _call(12, "context", {}), 12, None),
    ("query too long", _call(13, "search", {"query": "word " * 2000}), 13, None),
    (
        "fact too large",
        _call(14, "wiki_write", {"topic": "t", "agent": "data", "text": "y" * 1_200_000}),
        14,
        None,
    ),
]


def test_malformed_json_rpc_gets_an_error_each_and_the_server_goes_on(tmp_path: Path) -> None:
    """Written raw on the server's stdin: every line that is a request, or could be one, gets an
    answer carrying its id (null when none can be read); the server never exits or stops."""
    root, _ = _root(tmp_path)
    p = _raw_server(root, _config(tmp_path, root))
    try:
        for case, line, rid, code in MALFORMED:
            got = _ask(p, line)
            assert got.get("id") == rid, (case, got)
            if code is None:
                assert got["result"]["isError"] is True, (case, got)
            else:
                assert got["error"]["code"] == code, (case, got)
        # a broken notification gets no answer (nobody waits on one): the next answer is the next request's
        _put(p, b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}')
        _put(p, b"")
        assert _ask(p, b'{"jsonrpc": "2.0", "id": "ping", "method": "ping"}')["id"] == "ping"
        listed = _ask(p, b'{"jsonrpc": "2.0", "id": "last", "method": "tools/list"}')
        assert {t["name"] for t in listed["result"]["tools"]} == TOOLS
    finally:
        assert p.stdin is not None and p.stderr is not None
        p.stdin.close()
        code = p.wait(60)
        err = p.stderr.read().decode()
    assert code == 0 and "Traceback" not in err, err[-3000:]


def test_requests_written_before_the_input_ends_are_all_answered(tmp_path: Path) -> None:
    """A scripted client writes its requests and closes its pipe (``printf … | scribed mcp``):
    each request read gets its answer before the server ends. The SDK ended at the end of the
    input and dropped the calls still running (4 of 5 tries answered only ``initialize``)."""
    root, _ = _root(tmp_path)
    cfg = _config(tmp_path, root)
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "1"}},
    }  # fmt: skip
    lines = [
        json.dumps(init).encode(),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        _call(2, "context", {"agent": "data"}),
        _call(3, "search", {"query": "login"}),
        _call(4, "search", {"query": "cache"}),
    ]
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-m", "scribed", "--config", str(cfg), "mcp"],
            input=b"\n".join(lines) + b"\n", capture_output=True, cwd=root, timeout=120,
        )  # fmt: skip
        ids = sorted(json.loads(x)["id"] for x in done.stdout.splitlines() if x.strip())
        assert ids == [1, 2, 3, 4], (ids, done.stderr.decode()[-2000:])
        assert done.returncode == 0


def _server_pid() -> int:
    """The ``scribed mcp`` child of this process (the SDK client starts it)."""
    me = os.getpid()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me and b"mcp" in cmd:
            return int(d.name)
    raise AssertionError("no scribed mcp child found")


def _memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MB."""
    fields = dict(
        ln.split(":", 1) for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in ln
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


RAPID = [
    ("search", {"query": "frozen clock"}),
    ("recent_sessions", {"limit": 3}),
    ("context", {"agent": "data", "situation": "resume"}),
    ("search", {"query": 5}),  # a tool's error
    ("context", {"agent": "../x"}),  # refused
]
HOLD_MB = (
    40  # what the server may grow by, in its high-water mark, over the 1,000 calls and the 10 MB request
)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's memory from /proc")
def test_a_thousand_rapid_calls_and_a_10_mb_request_are_answered_in_bounded_memory(tmp_path: Path) -> None:
    """The SDK's client sends 1,000 calls at once, then a request of 10 MB: each gets its answer or
    its error in time, the server stays up, and its memory's high-water mark grows by less than
    HOLD_MB (see the report printed; the SDK's own transport parsed the 10 MB request whole: +30 MB
    for it alone)."""
    root, _ = _root(tmp_path)
    seen: dict[str, Any] = {}

    async def body(client: Client) -> None:
        pid = _server_pid()
        await client.call_tool("search", {"query": "warm"})  # the first search builds the index
        seen["start"] = _memory_mb(pid)
        outcome: list[str] = []

        async def one(i: int) -> None:
            name, args = RAPID[i % len(RAPID)]
            try:
                res = await client.call_tool(name, args)
            except MCPError as exc:  # a JSON-RPC error: an answer
                outcome.append(f"error {exc}")
                return
            outcome.append("tool error" if res.is_error else "answer")

        t0 = time.monotonic()
        with anyio.fail_after(600):
            async with anyio.create_task_group() as tg:
                for i in range(1000):
                    tg.start_soon(one, i)
        seen["calls"], seen["calls_s"], seen["after_calls"] = outcome, time.monotonic() - t0, _memory_mb(pid)
        try:
            big = await client.call_tool("search", {"query": "x " * (5 << 20)})
            seen["big"] = f"tool error {_text(big)}" if big.is_error else "answer"
        except MCPError as exc:
            seen["big"] = f"error {exc}"
        seen["after_big"] = _memory_mb(pid)
        seen["alive"] = await client.call_tool("recent_sessions", {"limit": 1})

    _session(root, _config(tmp_path, root), body)
    calls = seen["calls"]
    assert len(calls) == 1000
    assert calls.count("answer") == 600 and calls.count("tool error") == 400, sorted(set(calls))
    assert "longer than" in seen["big"], seen["big"]
    assert not seen["alive"].is_error
    grown = seen["after_big"][1] - seen["start"][1]
    print(f"1,000 calls in {seen['calls_s']:.1f} s; RSS/HWM MB at start {seen['start']}, after the calls "
          f"{seen['after_calls']}, after the 10 MB request {seen['after_big']}")  # fmt: skip
    assert grown < HOLD_MB, (seen["start"], seen["after_calls"], seen["after_big"])


def test_the_id_of_a_line_too_long_to_read_is_the_outer_objects() -> None:
    """Only the outer object's ``id`` answers for a refused line, never one inside its params; a
    head cut off before the id gives none (the answer then says null)."""
    from scribed.cli.mcp_stdio import top_level_id

    assert top_level_id(
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {"text": "xx'
    ) == (True, 7)
    inner = '{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"id":"inner"}},"id":"outer"}'
    assert top_level_id(inner) == (True, "outer")
    assert top_level_id(inner[:60]) == (False, None)  # cut inside params: the outer id is not there yet
    assert top_level_id('{"id": {"a": 1}, "method": "x"}') == (False, None)
    assert top_level_id('{"id": true}') == (False, None)
    assert top_level_id("[1, 2]") == (False, None) and top_level_id("garbage") == (False, None)


def test_ctrl_c_ends_a_server_whose_client_keeps_stdin_open(tmp_path: Path) -> None:
    """The line being read waits in a daemon thread: an interrupt ends the server at once (the
    SDK's transport, reading in a worker thread of the event loop, waited for stdin to close)."""
    import signal

    root, _ = _root(tmp_path)
    p = _raw_server(root, _config(tmp_path, root))
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    try:
        code = p.wait(20)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("scribed mcp did not exit within 20 s of SIGINT") from None
    assert code == 130
