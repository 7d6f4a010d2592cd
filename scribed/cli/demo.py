"""A demo squad root with realistic transcripts, so the offline default can be tried in one command.

``scribed demo DIR`` writes ``DIR/.squad/memory/hot/riker.md``, a Claude Code, a Codex and a
Copilot CLI transcript (with a sub-agent and one malformed line) under ``DIR/transcripts/``, and
``DIR/scribed.toml`` pointing at them. The sessions are mostly noise (tool dumps, test logs,
diffs), like real ones, with planted facts: decisions (one reversed), paths, error strings,
issue numbers, open TODOs, commands — and secrets that must never reach cold memory.
The manifest returned by :func:`build` is what the tests check against.
"""

from __future__ import annotations

import copy
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


class _Log:
    """Records of one session, each a few random seconds after the last, as a live agent writes them."""

    def __init__(self, rng: random.Random, start: datetime, step: tuple[int, int]) -> None:
        self.rng, self.t, self.step = rng, start, step
        self.lines: list[str] = []

    def tick(self) -> str:
        self.t += timedelta(seconds=self.rng.randint(*self.step))
        return _iso(self.t)

    def write(self, path: Path) -> None:
        """The session file, one JSON record a line."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in self.lines))


# --- Claude Code session: agent riker ---------------------------------------------------------------

CLAUDE_SID = "4f35c1aa-9d0e-4c55-8a41-6b2f2d9e1c01"
CLAUDE_DECISION = (
    "Decision: use a token bucket in src/app/ratelimit.py keyed by API key, 100 requests per minute."
)
CLAUDE_ERROR = "\nE   KeyError: 'X-Api-Key' header missing in RateLimiter.check\nFAILED tests/test_ratelimit.py::test_burst"
CLAUDE_FIX = (
    "The failure `KeyError: 'X-Api-Key' header missing in RateLimiter.check` was fixed by falling back to the "
    "client IP when the header is absent. The config also had OPENAI_API_KEY="
    + FAKE_SECRETS[0]
    + " in .env.example, which I replaced with a placeholder."
)
CLAUDE_DONE = (
    "Done: all 41 tests pass. TODO: add Redis-backed storage for the bucket so limits hold across workers."
)


class _ClaudeLog(_Log):
    def add(self, kind: str, content: Any, **extra: Any) -> None:
        n = len(self.lines)
        rec = {
            "type": kind,
            "uuid": f"u{n}",
            "parentUuid": f"u{n - 1}" if n else None,
            "sessionId": CLAUDE_SID,
            "timestamp": self.tick(),
            "cwd": "/repo",
            "gitBranch": "main",
            "message": {"role": kind, "content": content},
            **extra,
        }
        self.lines.append(json.dumps(rec))

    def say(self, text: str) -> None:
        self.add("assistant", [{"type": "text", "text": text}])


def _claude(rng: random.Random, base: datetime, path: Path) -> datetime:
    """riker adds rate limiting: file reads, one failing test run and its fix, a leaked key. Its end."""
    log = _ClaudeLog(rng, base, (5, 90))
    log.add("user", "Add rate limiting to the public API, see issue #412. Never log raw API keys.")
    log.add("user", "<command-name>/clear</command-name>", isMeta=True)
    for i in range(6):
        read = {"file_path": f"/repo/{_NOISE_FILES[i % len(_NOISE_FILES)]}"}
        text = {"type": "text", "text": _chatter(rng)}
        log.add("assistant", [text, {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": read}])
        dump = _file_dump(rng, 120)
        log.add("user", [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": dump}])
    log.say(CLAUDE_DECISION)
    bash = {"command": "pytest tests/test_ratelimit.py -x"}
    log.add("assistant", [{"type": "tool_use", "id": "toolu_t", "name": "Bash", "input": bash}])
    result = _pytest_log(rng, 40) + CLAUDE_ERROR
    log.add("user", [{"type": "tool_result", "tool_use_id": "toolu_t", "content": result}])
    log.say(CLAUDE_FIX)
    log.say(_diff(rng, 30))
    log.say(CLAUDE_DONE)
    log.lines.append(json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}))
    log.write(path)
    return log.t


# --- Codex session: agent worf ------------------------------------------------------------------------

CODEX_ID = "0197a2b4-5c6d-7e8f-9012-3456789abcde"
CODEX_META = {
    "id": CODEX_ID,
    "cwd": "/repo",
    "originator": "codex_cli",
    "cli_version": "0.128.0",
    "git": {"branch": "fix/migrations"},
}
CODEX_ASK = (
    "The migration in db/migrations/0042_add_index.sql fails on Postgres 16 (issue #977). Please fix it."
)
CODEX_ERROR = (
    "psql: ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block\n"
    "make: *** [migrate-test] Error 1"
)
CODEX_DECISION = (
    "Decision: split 0042 into a non-transactional migration using `run_outside_transaction()`. "
    "Connection string was postgres://app:S3cretPassw0rd@db.internal:5432/app — redacted from the notes."
)
CODEX_DONE = (
    "Fixed: `make migrate-test` passes now. Open item: backfill the index on the replica before Friday."
)


class _CodexLog(_Log):
    def add(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append(json.dumps({"timestamp": self.tick(), "type": kind, "payload": payload}))

    def say(self, text: str) -> None:
        content = [{"type": "output_text", "text": text}]
        self.add("response_item", {"type": "message", "role": "assistant", "content": content})

    def shell(self, call_id: str, command: str, output: str) -> None:
        args = json.dumps({"command": ["bash", "-lc", command]})
        self.add(
            "response_item", {"type": "function_call", "name": "shell", "call_id": call_id, "arguments": args}
        )
        self.add("response_item", {"type": "function_call_output", "call_id": call_id, "output": output})


def _codex(rng: random.Random, base: datetime, path: Path) -> datetime:
    """worf fixes a failing migration: file reads, the error, the decision (with a password). Its end."""
    log = _CodexLog(rng, base + timedelta(hours=2), (5, 60))
    log.add("session_meta", CODEX_META)
    ask = [{"type": "input_text", "text": CODEX_ASK}]
    log.add("response_item", {"type": "message", "role": "user", "content": ask})
    for i in range(8):
        log.say(_chatter(rng))
        # the call is dated before its output is drawn (the draw order fixes the demo's bytes)
        args = json.dumps({"command": ["bash", "-lc", f"cat src/db/file_{i}.py"]})
        call = {"type": "function_call", "name": "shell", "call_id": f"call_{i}", "arguments": args}
        log.add("response_item", call)
        output = _file_dump(rng, 150)
        log.add("response_item", {"type": "function_call_output", "call_id": f"call_{i}", "output": output})
    log.shell("call_m", "make migrate-test", CODEX_ERROR)
    log.say(CODEX_DECISION)
    log.say(_pytest_log(rng, 60))
    log.say(CODEX_DONE)
    log.write(path)
    return log.t


# --- Copilot CLI session: agent picard with sub-agent troi -------------------------------------------

COPILOT_ID = "37f4e2d1-aaaa-bbbb-cccc-0123456789ab"
TROI_DECISION = (
    "Decision: document the 15-minute session timeout in docs/auth.md. "
    "TODO: add a sequence diagram for the refresh flow."
)
STALE_DECISION = "Decision: retry the login test with a fixed clock via `freeze_time()` instead of sleeping."
LOGIN_ERROR = "\nAssertionError: expected session to expire after 900s, got 899.7s"
FINAL_DECISION = (
    "Decision (reversed): use an injected clock in src/auth/session.py instead of "
    "freeze_time(), so the production code path is tested."
)
PICARD_DONE = (
    "Fixed the flaky test; token ghp_R7t2Kq9LmX4vB8nC1zD5wF3hJ6pS0aY2uE8i was "
    "revoked. All login tests pass. TODO: remove the sleep-based retry helper "
    "in tests/helpers/retry.py."
)
MALFORMED = '{"type": "assistant.message", "id": "broken", "data": {"content": "unterminated'


class _CopilotLog(_Log):
    n = 0  # events numbered so far (the malformed line has no number)

    def add(self, kind: str, data: dict[str, Any], agent_id: str | None = None) -> None:
        stamp = self.tick()
        self.n += 1
        rec: dict[str, Any] = {
            "type": kind,
            "id": f"e{self.n}",
            "timestamp": stamp,
            "parentId": f"e{self.n - 1}",
            "data": data,
        }
        if agent_id:
            rec["agentId"] = agent_id
        self.lines.append(json.dumps(rec))


def _copilot(rng: random.Random, base: datetime, path: Path) -> datetime:
    """picard fixes a flaky test, reversing one decision; troi reviews docs as a sub-agent. Its end."""
    log = _CopilotLog(rng, base + timedelta(hours=4), (3, 40))
    context = {"cwd": "/repo", "gitRoot": "/repo", "branch": "main"}
    log.add("session.start", {"sessionId": COPILOT_ID, "context": context})
    ask = "Fix the flaky login test from #590 and ask troi to review the auth docs."
    log.add("user.message", {"content": ask})
    for i in range(6):
        log.add("assistant.message", {"content": _chatter(rng)})
        log.add(
            "tool.execution_start", {"toolName": "bash", "arguments": {"command": f"cat src/auth/mod_{i}.py"}}
        )
        output = _file_dump(rng, 130)
        log.add("tool.execution_complete", {"toolName": "bash", "result": {"content": output}})
    troi = {"agentName": "troi", "agentDisplayName": "Troi", "agentId": "sa-1", "toolCallId": "tc-1"}
    log.add("subagent.started", troi)
    review = "Reviewing docs/auth.md for accuracy against src/auth/session.py."
    log.add("assistant.message", {"content": review}, "sa-1")
    output = _file_dump(rng, 150)
    log.add("tool.execution_complete", {"toolName": "view", "result": {"content": output}}, "sa-1")
    log.add("assistant.message", {"content": TROI_DECISION}, "sa-1")
    log.add("assistant.message", {"content": _diff(rng, 14)}, "sa-1")
    log.add("subagent.completed", {"agentName": "troi", "agentId": "sa-1"}, "sa-1")
    log.lines.append(MALFORMED)
    log.add("assistant.message", {"content": STALE_DECISION})
    command = "pytest tests/test_login.py -k flaky"
    log.add("tool.execution_start", {"toolName": "bash", "arguments": {"command": command}})
    output = _pytest_log(rng, 50) + LOGIN_ERROR
    log.add("tool.execution_complete", {"toolName": "bash", "result": {"content": output}})
    log.add("assistant.message", {"content": FINAL_DECISION})
    log.add("assistant.message", {"content": PICARD_DONE})
    log.add("session.shutdown", {"shutdownType": "routine"})
    log.write(path)
    return log.t


# --- a hot file written by agent riker itself (its current session) ----------------------------------

HOT_HEAD = [
    "# Hot memory: data",
    "",
    "Current task: profile the nightly export job (#1201)",
    "",
    "Active decisions:",
    "- Decision: stream rows with server-side cursors in src/export/job.py",
    "",
    "Last actions:",
]
HOT_TAIL = [
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


def _hot(rng: random.Random, base: datetime, path: Path) -> None:
    """riker's own hot file: 60 profiling runs, a blocker, a TODO and a password."""
    actions = [
        f"- {(base + timedelta(minutes=i)).strftime('%H:%M')} ran `python -m export.profile --chunk "
        f"{1000 + i * 10}` → {rng.randint(200, 900)} ms per chunk, memory {rng.randint(300, 900)} MB"
        for i in range(60)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*HOT_HEAD, *actions, *HOT_TAIL]) + "\n")


# --- what the tests check against ----------------------------------------------------------------------

MANIFEST_AGENTS: dict[str, dict[str, list[str]]] = {
    "riker": {
        "decisions": [
            "use a token bucket in src/app/ratelimit.py keyed by API key, 100 requests per minute",
            "stream rows with server-side cursors in src/export/job.py",  # from the hot file
        ],
        "paths": ["src/app/ratelimit.py", "tests/test_ratelimit.py", "src/export/job.py"],
        "errors": [
            "KeyError: 'X-Api-Key' header missing in RateLimiter.check",
            "MemoryError: Unable to allocate 2.1 GiB for the export buffer",
        ],
        "issues": ["#412", "#1201"],
        "todos": [
            "add Redis-backed storage for the bucket so limits hold across workers",
            "cap the buffer at 256 MB",
        ],
        "commands": ["pytest tests/test_ratelimit.py -x"],
    },
    "worf": {
        "decisions": ["split 0042 into a non-transactional migration using `run_outside_transaction()`"],
        "paths": ["db/migrations/0042_add_index.sql"],
        "errors": ["ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block"],
        "issues": ["#977"],
        "todos": ["backfill the index on the replica before Friday"],
        "commands": ["make migrate-test"],
    },
    "picard": {
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
    },
    "troi": {
        "decisions": ["document the 15-minute session timeout in docs/auth.md"],
        "paths": ["docs/auth.md"],
        "todos": ["add a sequence diagram for the refresh flow"],
    },
}
EXTRA_SECRETS = ["S3cretPassw0rd", "Tr0ub4dor&3horse"]

CONFIG = (
    "# Demo config written by `scribed demo`. Paths are relative to this file.\n"
    'root = "."\n\n'
    '[compress]\nbackend = "extractive"\n\n'
    '[[sources]]\nkind = "claude"\npath = "transcripts/claude"\nagent = "riker"\n\n'
    "# The demo's sessions record that they ran in /repo: a codex or copilot source takes only the\n"
    "# sessions of its workspace (by default the root), so the demo names theirs.\n"
    '[[sources]]\nkind = "codex"\npath = "transcripts/codex"\nagent = "worf"\nworkspace = "/repo"\n\n'
    '[[sources]]\nkind = "copilot"\npath = "transcripts/copilot"\nagent = "picard"\nworkspace = "/repo"\n'
)


def build(root: Path, *, seed: int = 7, base: datetime | None = None) -> dict[str, Any]:
    """Write the demo squad root. Returns the manifest of planted facts per agent.

    One random generator drives every session in turn, so a seed always writes the same bytes.
    """
    rng = random.Random(seed)
    base = base or datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    tdir = root / "transcripts"
    for d in (root / ".squad/memory/hot", tdir / "claude/-repo", tdir / "codex/2026/11/20", tdir / "copilot"):
        d.mkdir(parents=True, exist_ok=True)
    claude_path = tdir / "claude/-repo" / f"{CLAUDE_SID}.jsonl"
    codex_path = tdir / "codex/2026/11/20" / f"rollout-2026-11-20T11-00-00-{CODEX_ID}.jsonl"
    copilot_path = tdir / "copilot" / COPILOT_ID / "events.jsonl"
    hot = root / ".squad/memory/hot/riker.md"
    ends = [
        (claude_path, _claude(rng, base, claude_path)),
        (codex_path, _codex(rng, base, codex_path)),
        (copilot_path, _copilot(rng, base, copilot_path)),
    ]
    _hot(rng, base, hot)
    # Sessions ended in the past: make the files quiet.
    for p, end in [*ends, (hot, base + timedelta(hours=5))]:
        os.utime(p, (end.timestamp(), end.timestamp()))
    (root / "scribed.toml").write_text(CONFIG)
    return {
        "secrets": FAKE_SECRETS,
        "agents": copy.deepcopy(MANIFEST_AGENTS),
        "extra_secrets": list(EXTRA_SECRETS),
    }
