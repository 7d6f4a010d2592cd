"""A demo squad root with realistic transcripts, so the offline default can be tried in one command.

``scribed demo DIR`` writes ``DIR/.squad/memory/hot/riker.md``, a Claude Code, a Codex and a
Copilot CLI transcript (with a sub-agent and one malformed line) under ``DIR/transcripts/``, and
``DIR/scribed.toml`` pointing at them. The sessions are mostly noise (tool dumps, test logs,
diffs), like real ones, with planted facts: decisions (one reversed), paths, error strings,
issue numbers, open TODOs, commands — and secrets that must never reach cold memory.
The manifest returned by :func:`build` is what the tests check against.
"""

from __future__ import annotations

import json
import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

FAKE_SECRETS = [
    "sk-proj-Zq8vW2nR5tY7uI9oP1aS3dF6gH8jK0lL2zX4cV6bN8mQ1wE3rT5y",
    "ghp_R7t2Kq9LmX4vB8nC1zD5wF3hJ6pS0aY2uE8i",
    "AKIAQ3EXAMPLE7HJ2K4M",
]

_NOISE_FILES = [
    "src/app/server.py",
    "src/app/routes/users.py",
    "tests/test_server.py",
    "README.md",
    "pyproject.toml",
]


def _pytest_log(rng: random.Random, n: int) -> str:
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
        f"collected {n} items",
        "",
    ]
    for i in range(n):
        mod = rng.choice(["test_server", "test_users", "test_auth", "test_models"])
        lines.append(
            f"tests/{mod}.py::test_case_{i:03d} PASSED{' ' * rng.randint(1, 30)}[{(i + 1) * 100 // n:3d}%]"
        )
    lines.append(
        f"============================== {n} passed in {rng.uniform(1, 9):.2f}s ==============================="
    )
    return "\n".join(lines)


def _diff(rng: random.Random, n: int) -> str:
    out = [
        "diff --git a/src/app/server.py b/src/app/server.py",
        "index 3f2a9c1..b7e4d10 100644",
        "--- a/src/app/server.py",
        "+++ b/src/app/server.py",
    ]
    for i in range(n):
        out.append(f"@@ -{i * 10 + 1},7 +{i * 10 + 1},8 @@ def handler_{i}(request):")
        out += [f"     value_{j} = compute(request, {j})" for j in range(3)]
        out.append(f"-    return legacy_response(value_{i})")
        out.append(f"+    return Response(value_{i}, status=200)")
    return "\n".join(out)


def _file_dump(rng: random.Random, n: int) -> str:
    return "\n".join(
        f"{i:4d}  def function_{i}(arg_{i % 7}: int) -> int:  # {rng.choice(['noop', 'helper', 'compat'])}"
        for i in range(n)
    )


def _chatter(rng: random.Random) -> str:
    return rng.choice(
        [
            "Let me look at the server module first.",
            "Okay, reading the tests to understand the expected behaviour.",
            "I'll run the test suite to see where we are.",
            "Sure, checking the routes next.",
            "Now I'll look at how the handlers are registered.",
        ]
    )


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def build(root: Path, *, seed: int = 7, base: datetime | None = None) -> dict[str, Any]:
    """Write the demo squad root. Returns the manifest of planted facts per agent."""
    rng = random.Random(seed)
    base = base or datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    tdir = root / "transcripts"
    for d in (root / ".squad/memory/hot", tdir / "claude/-repo", tdir / "codex/2026/11/20", tdir / "copilot"):
        d.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"secrets": FAKE_SECRETS, "agents": {}}

    # --- Claude Code session: agent riker -------------------------------------------------------
    t = base
    recs: list[dict[str, Any]] = []
    sid = "4f35c1aa-9d0e-4c55-8a41-6b2f2d9e1c01"

    def claude(kind: str, content: Any, **extra: Any) -> None:
        nonlocal t
        t += timedelta(seconds=rng.randint(5, 90))
        recs.append(
            {
                "type": kind,
                "uuid": f"u{len(recs)}",
                "parentUuid": f"u{len(recs) - 1}" if recs else None,
                "sessionId": sid,
                "timestamp": _iso(t),
                "cwd": "/repo",
                "gitBranch": "main",
                "message": {"role": kind, "content": content},
                **extra,
            }
        )

    claude("user", "Add rate limiting to the public API, see issue #412. Never log raw API keys.")
    claude("user", "<command-name>/clear</command-name>", isMeta=True)
    for i in range(6):
        claude(
            "assistant",
            [
                {"type": "text", "text": _chatter(rng)},
                {
                    "type": "tool_use",
                    "id": f"toolu_{i}",
                    "name": "Read",
                    "input": {"file_path": f"/repo/{_NOISE_FILES[i % len(_NOISE_FILES)]}"},
                },
            ],
        )
        claude(
            "user", [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": _file_dump(rng, 120)}]
        )
    claude(
        "assistant",
        [
            {
                "type": "text",
                "text": "Decision: use a token bucket in src/app/ratelimit.py keyed by API key, 100 requests per minute.",
            }
        ],
    )
    claude(
        "assistant",
        [
            {
                "type": "tool_use",
                "id": "toolu_t",
                "name": "Bash",
                "input": {"command": "pytest tests/test_ratelimit.py -x"},
            }
        ],
    )
    claude(
        "user",
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_t",
                "content": _pytest_log(rng, 40)
                + "\nE   KeyError: 'X-Api-Key' header missing in RateLimiter.check\nFAILED tests/test_ratelimit.py::test_burst",
            }
        ],
    )
    claude(
        "assistant",
        [
            {
                "type": "text",
                "text": "The failure `KeyError: 'X-Api-Key' header missing in RateLimiter.check` was fixed by falling back to the "
                "client IP when the header is absent. The config also had OPENAI_API_KEY="
                + FAKE_SECRETS[0]
                + " in .env.example, which I replaced with a placeholder.",
            }
        ],
    )
    claude("assistant", [{"type": "text", "text": _diff(rng, 30)}])
    claude(
        "assistant",
        [
            {
                "type": "text",
                "text": "Done: all 41 tests pass. TODO: add Redis-backed storage for the bucket so limits hold across workers.",
            }
        ],
    )
    with (tdir / "claude/-repo" / f"{sid}.jsonl").open("w") as fh:
        for r in recs:
            fh.write(json.dumps(r) + "\n")
        fh.write(json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}) + "\n")
    claude_end = t
    manifest["agents"]["riker"] = {
        "decisions": ["use a token bucket in src/app/ratelimit.py keyed by API key, 100 requests per minute"],
        "paths": ["src/app/ratelimit.py", "tests/test_ratelimit.py"],
        "errors": ["KeyError: 'X-Api-Key' header missing in RateLimiter.check"],
        "issues": ["#412"],
        "todos": ["add Redis-backed storage for the bucket so limits hold across workers"],
        "commands": ["pytest tests/test_ratelimit.py -x"],
    }

    # --- Codex session: agent worf ---------------------------------------------------------------
    t = base + timedelta(hours=2)
    lines: list[dict[str, Any]] = []

    def codex(kind: str, payload: dict[str, Any]) -> None:
        nonlocal t
        t += timedelta(seconds=rng.randint(5, 60))
        lines.append({"timestamp": _iso(t), "type": kind, "payload": payload})

    codex(
        "session_meta",
        {
            "id": "0197a2b4-5c6d-7e8f-9012-3456789abcde",
            "cwd": "/repo",
            "originator": "codex_cli",
            "cli_version": "0.128.0",
            "git": {"branch": "fix/migrations"},
        },
    )
    codex(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "The migration in db/migrations/0042_add_index.sql fails on Postgres 16 (issue #977). Please fix it.",
                }
            ],
        },
    )
    for i in range(8):
        codex(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": _chatter(rng)}],
            },
        )
        codex(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": f"call_{i}",
                "arguments": json.dumps({"command": ["bash", "-lc", f"cat src/db/file_{i}.py"]}),
            },
        )
        codex(
            "response_item",
            {"type": "function_call_output", "call_id": f"call_{i}", "output": _file_dump(rng, 150)},
        )
    codex(
        "response_item",
        {
            "type": "function_call",
            "name": "shell",
            "call_id": "call_m",
            "arguments": json.dumps({"command": ["bash", "-lc", "make migrate-test"]}),
        },
    )
    codex(
        "response_item",
        {
            "type": "function_call_output",
            "call_id": "call_m",
            "output": "psql: ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block\nmake: *** [migrate-test] Error 1",
        },
    )
    codex(
        "response_item",
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "Decision: split 0042 into a non-transactional migration using `run_outside_transaction()`. "
                    "Connection string was postgres://app:S3cretPassw0rd@db.internal:5432/app — redacted from the notes.",
                }
            ],
        },
    )
    codex(
        "response_item",
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": _pytest_log(rng, 60)}],
        },
    )
    codex(
        "response_item",
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "Fixed: `make migrate-test` passes now. Open item: backfill the index on the replica before Friday.",
                }
            ],
        },
    )
    codex_path = (
        tdir / "codex/2026/11/20" / "rollout-2026-11-20T11-00-00-0197a2b4-5c6d-7e8f-9012-3456789abcde.jsonl"
    )
    with codex_path.open("w") as fh:
        for rec in lines:
            fh.write(json.dumps(rec) + "\n")
    codex_end = t
    manifest["agents"]["worf"] = {
        "decisions": ["split 0042 into a non-transactional migration using `run_outside_transaction()`"],
        "paths": ["db/migrations/0042_add_index.sql"],
        "errors": ["ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block"],
        "issues": ["#977"],
        "todos": ["backfill the index on the replica before Friday"],
        "commands": ["make migrate-test"],
    }

    # --- Copilot CLI session: agent picard with sub-agent troi -----------------------------------
    t = base + timedelta(hours=4)
    ev: list[str] = []
    n = 0

    def cp(kind: str, data: dict[str, Any], agent_id: str | None = None) -> None:
        nonlocal t, n
        t += timedelta(seconds=rng.randint(3, 40))
        n += 1
        rec: dict[str, Any] = {
            "type": kind,
            "id": f"e{n}",
            "timestamp": _iso(t),
            "parentId": f"e{n - 1}",
            "data": data,
        }
        if agent_id:
            rec["agentId"] = agent_id
        ev.append(json.dumps(rec))

    cp(
        "session.start",
        {
            "sessionId": "37f4e2d1-aaaa-bbbb-cccc-0123456789ab",
            "context": {"cwd": "/repo", "gitRoot": "/repo", "branch": "main"},
        },
    )
    cp(
        "user.message",
        {"content": "Fix the flaky login test from #590 and ask troi to review the auth docs."},
    )
    for i in range(6):
        cp("assistant.message", {"content": _chatter(rng)})
        cp("tool.execution_start", {"toolName": "bash", "arguments": {"command": f"cat src/auth/mod_{i}.py"}})
        cp("tool.execution_complete", {"toolName": "bash", "result": {"content": _file_dump(rng, 130)}})
    cp(
        "subagent.started",
        {"agentName": "troi", "agentDisplayName": "Troi", "agentId": "sa-1", "toolCallId": "tc-1"},
    )
    cp(
        "assistant.message",
        {"content": "Reviewing docs/auth.md for accuracy against src/auth/session.py."},
        "sa-1",
    )
    cp("tool.execution_complete", {"toolName": "view", "result": {"content": _file_dump(rng, 150)}}, "sa-1")
    cp(
        "assistant.message",
        {
            "content": "Decision: document the 15-minute session timeout in docs/auth.md. "
            "TODO: add a sequence diagram for the refresh flow."
        },
        "sa-1",
    )
    cp("assistant.message", {"content": _diff(rng, 14)}, "sa-1")
    cp("subagent.completed", {"agentName": "troi", "agentId": "sa-1"}, "sa-1")
    ev.append('{"type": "assistant.message", "id": "broken", "data": {"content": "unterminated')
    cp(
        "assistant.message",
        {
            "content": "Decision: retry the login test with a fixed clock via `freeze_time()` "
            "instead of sleeping."
        },
    )
    cp(
        "tool.execution_start",
        {"toolName": "bash", "arguments": {"command": "pytest tests/test_login.py -k flaky"}},
    )
    cp(
        "tool.execution_complete",
        {
            "toolName": "bash",
            "result": {
                "content": _pytest_log(rng, 50)
                + "\nAssertionError: expected session to expire after 900s, got 899.7s"
            },
        },
    )
    cp(
        "assistant.message",
        {
            "content": "Decision (reversed): use an injected clock in src/auth/session.py instead of "
            "freeze_time(), so the production code path is tested."
        },
    )
    cp(
        "assistant.message",
        {
            "content": "Fixed the flaky test; token ghp_R7t2Kq9LmX4vB8nC1zD5wF3hJ6pS0aY2uE8i was "
            "revoked. All login tests pass. TODO: remove the sleep-based retry helper "
            "in tests/helpers/retry.py."
        },
    )
    cp("session.shutdown", {"shutdownType": "routine"})
    cdir = tdir / "copilot" / "37f4e2d1-aaaa-bbbb-cccc-0123456789ab"
    cdir.mkdir(parents=True, exist_ok=True)
    (cdir / "events.jsonl").write_text("\n".join(ev) + "\n")
    copilot_end = t
    manifest["agents"]["picard"] = {
        "decisions": [
            "use an injected clock in src/auth/session.py instead of freeze_time(), so the production "
            "code path is tested"
        ],
        "paths": ["src/auth/session.py", "tests/helpers/retry.py"],
        "errors": ["AssertionError: expected session to expire after 900s, got 899.7s"],
        "issues": ["#590"],
        "todos": ["remove the sleep-based retry helper in tests/helpers/retry.py"],
        "commands": ["pytest tests/test_login.py -k flaky"],
        "stale": ["retry the login test with a fixed clock via `freeze_time()` instead of sleeping"],
    }
    manifest["agents"]["troi"] = {
        "decisions": ["document the 15-minute session timeout in docs/auth.md"],
        "paths": ["docs/auth.md"],
        "todos": ["add a sequence diagram for the refresh flow"],
    }

    # --- a hot file written by agent riker itself (its current session) --------------------------------------------------------
    hot = root / ".squad/memory/hot/riker.md"
    body = [
        "# Hot memory: data",
        "",
        "Current task: profile the nightly export job (#1201)",
        "",
        "Active decisions:",
        "- Decision: stream rows with server-side cursors in src/export/job.py",
        "",
        "Last actions:",
    ]
    for i in range(60):
        body.append(
            f"- {(base + timedelta(minutes=i)).strftime('%H:%M')} ran `python -m export.profile --chunk "
            f"{1000 + i * 10}` → {rng.randint(200, 900)} ms per chunk, memory {rng.randint(300, 900)} MB"
        )
    body += [
        "",
        "Blockers:",
        "- MemoryError: Unable to allocate 2.1 GiB for the export buffer",
        "",
        "TODO: cap the buffer at 256 MB",
        "",
        "Talking to: worf",
        "",
        "Note: staging password=Tr0ub4dor&3horse must rotate.",
    ]
    hot.write_text("\n".join(body) + "\n")
    riker = manifest["agents"]["riker"]
    riker["decisions"].append("stream rows with server-side cursors in src/export/job.py")
    riker["paths"].append("src/export/job.py")
    riker["errors"].append("MemoryError: Unable to allocate 2.1 GiB for the export buffer")
    riker["issues"].append("#1201")
    riker["todos"].append("cap the buffer at 256 MB")
    manifest["extra_secrets"] = ["S3cretPassw0rd", "Tr0ub4dor&3horse"]

    # Sessions ended in the past: make the files quiet.
    for p, end in [
        ((tdir / "claude/-repo" / f"{sid}.jsonl"), claude_end),
        (codex_path, codex_end),
        (cdir / "events.jsonl", copilot_end),
        (hot, base + timedelta(hours=5)),
    ]:
        os.utime(p, (end.timestamp(), end.timestamp()))

    (root / "scribed.toml").write_text(
        "# Demo config written by `scribed demo`. Paths are relative to this file.\n"
        'root = "."\n\n'
        '[compress]\nbackend = "extractive"\n\n'
        '[[sources]]\nkind = "claude"\npath = "transcripts/claude"\nagent = "riker"\n\n'
        '[[sources]]\nkind = "codex"\npath = "transcripts/codex"\nagent = "worf"\n\n'
        '[[sources]]\nkind = "copilot"\npath = "transcripts/copilot"\nagent = "picard"\n'
    )
    return manifest
