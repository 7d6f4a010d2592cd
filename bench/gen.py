"""Seeded generator of realistic agent sessions with a ground-truth manifest of planted facts.

Shared by ``bench/quality.py`` (scoring), ``bench/throughput.py`` (a large backlog) and the tests.
A session is mostly noise, as real ones are (file dumps, diffs, test and install logs, git
output, chatter), with typed facts planted the way agents actually write them: decisions (some
reversed later), file paths, identifiers, exact error strings, commands, numbers, issue numbers,
open and closed TODOs, user directives, and secrets from ``tests/secrets_corpus.py`` next to
look-alikes (commit SHAs, UUIDs, digests).

Each fact records whether its phrasing is one ``scribed/compress/anchors.py`` is *meant* to recognise
(``recognised``) so the benchmark can report recall on both kinds honestly: some phrasings real
agents use ("Let's go with …", "Next step: …", "npm ERR! …") are deliberately not in its rules.

The same abstract events are written in four formats (markdown, Claude Code, Codex, Copilot CLI)
and as plain ``role: text`` lines, which is what a user would hand to a generic summarizer.
"""

from __future__ import annotations

import json
import math
import random
import string
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from secrets_corpus import LOOKALIKES, SECRETS  # noqa: E402

FORMATS = ("markdown", "claude", "codex", "copilot")
AGENTS = {"markdown": "data", "claude": "riker", "codex": "worf", "copilot": "picard"}
# Where the generated sessions say they ran (Codex's session_meta cwd, Copilot's context): a codex or
# copilot source takes only sessions of its workspace, the root by default (docs/configuration.md).
GEN_CWD = "/repo"
BASE_TIME = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
# The backlog draws from the corpus as it stood when tests/test_golden.py's hash was recorded: the
# first 109 secrets and 73 look-alikes. An entry appended to the corpus (for the redactor's tests)
# must not change the generated sessions: a longer list shifts every later draw (rng.choice,
# rng.sample), so each file's text, turns and lines would differ, which read as a parsing change once.
BACKLOG_SECRETS, BACKLOG_LOOKALIKES = SECRETS[:109], LOOKALIKES[:73]
# Multi-line PEM blocks and a 5 KB-class token are realistic, but one of each per corpus is enough.
SECRET_POOL = [
    s for s in BACKLOG_SECRETS if "PRIVATE KEY" not in s.line or s.name in ("pem_rsa", "pem_truncated")
]

# --- vocabulary ------------------------------------------------------------------------------

COMPONENTS = [
    "billing", "auth", "export", "ingest", "scheduler", "search", "notify", "payments", "reports",
    "webhooks", "cache", "sync", "audit", "gateway", "metrics", "tenants", "uploads", "invoices",
]  # fmt: skip
NOUNS = [
    "invoice", "session", "bucket", "batch", "cursor", "retry", "ledger", "queue", "worker",
    "snapshot", "index", "schema", "tenant", "quota", "digest", "token", "window", "shard",
]  # fmt: skip
VERBS = ["flush", "load", "build", "resolve", "merge", "apply", "fetch", "encode", "rotate", "reap", "split"]
TECH = [
    ("SQLite", "Postgres"), ("Redis streams", "a Postgres outbox table"), ("Celery", "RQ"),
    ("a cron job", "the APScheduler interval trigger"), ("JSON lines", "Parquet files"),
    ("polling", "LISTEN/NOTIFY"), ("a global lock", "per-tenant advisory locks"),
    ("pickle", "msgpack"), ("threads", "asyncio tasks"), ("boto3 multipart uploads", "presigned PUT URLs"),
]  # fmt: skip
LIBS = ["httpx", "pydantic", "sqlalchemy", "urllib3", "cryptography", "grpcio", "protobuf", "redis"]
TOP = ["src", "app", "services", "lib", "internal", "pkg"]
EXTS = ["py", "py", "py", "ts", "go", "sql", "yaml", "toml"]
TABLES = ["invoices", "sessions", "tenants", "api_keys", "jobs", "exports", "webhook_events"]
PROSE = [
    "the", "handler", "now", "reads", "the", "value", "once", "and", "passes", "it", "down", "instead",
    "of", "looking", "it", "up", "again", "in", "every", "branch", "which", "keeps", "the", "hot", "path",
    "simple", "and", "makes", "the", "test", "deterministic", "because", "nothing", "depends", "on",
    "wall", "clock", "time", "any", "more", "and", "the", "fixture", "can", "stay", "small", "while",
    "still", "covering", "the", "retry", "loop", "and", "the", "error", "path", "that", "used", "to",
    "swallow", "the", "exception", "silently",
]  # fmt: skip


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _uuid(rng: random.Random) -> str:
    h = _hex(rng, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _camel(*words: str) -> str:
    return "".join(w.replace("_", " ").title().replace(" ", "") for w in words)


def _core(directive: str) -> str:
    """A directive without its politeness prefix: "You must not X" → "must not X"."""
    for lead in ("You ", "Please ", "Kindly ", "I'd "):
        if directive.startswith(lead) and not directive.startswith("Please avoid"):
            return directive[len(lead) :]
    return directive.removeprefix("Please ")


# --- data model ------------------------------------------------------------------------------


@dataclass(slots=True)
class Fact:
    """One planted must-keep fact: ``text`` is the exact string a good summary keeps."""

    type: str  # decision|path|identifier|error|command|number|issue|todo|directive
    text: str
    recognised: bool  # phrased the way scribed/compress/anchors.py is meant to catch
    phrasing: str  # template name, for failure reports


@dataclass(slots=True)
class Event:
    """One abstract transcript event, written out by every format writer."""

    role: str  # user | assistant | tool
    kind: str  # message | thinking | tool_call | tool_result
    text: str = ""
    tool: str = ""  # shell | read | edit | grep
    args: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Manifest:
    """Ground truth for one session."""

    facts: list[Fact] = field(default_factory=list)
    stale: list[dict[str, Any]] = field(default_factory=list)  # {"text", "recognised", "phrasing"}
    closed_todos: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"text", "recognised", "phrasing", "close"}
    secrets: list[dict[str, Any]] = field(default_factory=list)  # {"name", "values"}
    lookalikes: list[dict[str, str]] = field(default_factory=list)  # {"kind", "value", "line"}


@dataclass(slots=True)
class GenSession:
    """A generated session: its file (relative to the transcripts folder), bytes and truth."""

    id: str
    fmt: str
    agent: str
    rel: str
    data: bytes
    plain: str
    manifest: Manifest
    start: datetime
    end: datetime

    def manifest_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "format": self.fmt,
            "agent": self.agent,
            "file": self.rel,
            "bytes": len(self.data),
            "end": self.end.isoformat(),
            **asdict(self.manifest),
        }


# --- writers: one abstract event stream, five renderings -----------------------------------------


class _Writer:
    """Collects the rendered bytes of one session; ``size`` drives the noise budget."""

    def __init__(self, sid: str, start: datetime, rng: random.Random) -> None:
        self.sid = sid
        self.t = start
        self.rng = rng
        self.parts: list[bytes] = []
        self.size = 0
        self.n = 0

    def _emit(self, s: str) -> None:
        b = s.encode()
        self.parts.append(b)
        self.size += len(b)

    def tick(self) -> str:
        self.t += timedelta(seconds=self.rng.randint(2, 75), milliseconds=self.rng.randint(0, 999))
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def add(self, ev: Event) -> None:
        raise NotImplementedError

    def close(self) -> bytes:
        return b"".join(self.parts)


def _jl(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


class ClaudeWriter(_Writer):
    TOOLS: ClassVar[dict[str, str]] = {"shell": "Bash", "read": "Read", "edit": "Edit", "grep": "Grep"}

    def __init__(self, sid: str, start: datetime, rng: random.Random) -> None:
        super().__init__(sid, start, rng)
        self.prev: str | None = None
        self.call = ""

    def _rec(self, kind: str, content: Any, **extra: Any) -> None:
        self.n += 1
        uid = f"{_hex(self.rng, 8)}-{_hex(self.rng, 4)}-4{_hex(self.rng, 3)}-8{_hex(self.rng, 3)}-{_hex(self.rng, 12)}"
        rec: dict[str, Any] = {
            "parentUuid": self.prev,
            "isSidechain": False,
            "userType": "external",
            "cwd": GEN_CWD,
            "sessionId": self.sid,
            "version": "2.0.37",
            "gitBranch": "main",
            "type": kind,
            "message": {"role": kind, "content": content},
            "uuid": uid,
            "timestamp": self.tick(),
            **extra,
        }
        if kind == "assistant":
            rec["message"] = {
                "id": "msg_01" + _hex(self.rng, 22),
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": content,
                "stop_reason": None,
                "usage": {"input_tokens": self.rng.randint(3, 9), "output_tokens": self.rng.randint(20, 900)},
            }
        self.prev = uid
        self._emit(_jl(rec))

    def add(self, ev: Event) -> None:
        if ev.kind == "message":
            if ev.role == "user":
                self._rec("user", ev.text)
            else:
                self._rec("assistant", [{"type": "text", "text": ev.text}])
        elif ev.kind == "thinking":
            self._rec(
                "assistant", [{"type": "thinking", "thinking": ev.text, "signature": _hex(self.rng, 64)}]
            )
        elif ev.kind == "tool_call":
            self.call = "toolu_01" + _hex(self.rng, 22)
            a = ev.args
            if ev.tool == "shell":
                inp: dict[str, Any] = {"command": a["command"], "description": a.get("why", "Run command")}
            elif ev.tool == "read":
                inp = {"file_path": "/repo/" + a["path"]}
            elif ev.tool == "edit":
                inp = {"file_path": "/repo/" + a["path"], "old_string": a["old"], "new_string": a["new"]}
            else:
                inp = {"pattern": a["pattern"], "path": a.get("path", "."), "output_mode": "content"}
            self._rec(
                "assistant",
                [{"type": "tool_use", "id": self.call, "name": self.TOOLS[ev.tool], "input": inp}],
            )
        else:
            self._rec("user", [{"tool_use_id": self.call, "type": "tool_result", "content": ev.text}])

    def close(self) -> bytes:
        self._emit(_jl({"type": "file-history-snapshot", "messageId": _uuid(self.rng), "snapshot": {}}))
        return super().close()


class CodexWriter(_Writer):
    def __init__(self, sid: str, start: datetime, rng: random.Random) -> None:
        super().__init__(sid, start, rng)
        self.call = ""
        meta = {"id": sid, "cwd": GEN_CWD, "originator": "codex_cli_rs", "cli_version": "0.128.0"}
        meta["git"] = {"branch": "main", "commit_hash": _hex(rng, 40)}
        self._emit(_jl({"timestamp": self.tick(), "type": "session_meta", "payload": meta}))
        ctx = {"cwd": GEN_CWD, "approval_policy": "on-request", "model": "gpt-5-codex", "effort": "medium"}
        self._emit(_jl({"timestamp": self.tick(), "type": "turn_context", "payload": ctx}))

    def _item(self, payload: dict[str, Any]) -> None:
        self._emit(_jl({"timestamp": self.tick(), "type": "response_item", "payload": payload}))

    def add(self, ev: Event) -> None:
        if ev.kind == "message":
            if ev.role == "user":
                self._item(
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ev.text}]}
                )
            else:
                self._item(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": ev.text}],
                    }
                )
                tok = {
                    "type": "token_count",
                    "info": {"total_token_usage": {"input_tokens": self.rng.randint(1000, 90000)}},
                }
                self._emit(_jl({"timestamp": self.tick(), "type": "event_msg", "payload": tok}))
        elif ev.kind == "thinking":
            blob = "".join(self.rng.choice(string.ascii_letters + string.digits) for _ in range(len(ev.text)))
            self._item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAAA" + blob})
        elif ev.kind == "tool_call":
            self.call = "call_" + "".join(
                self.rng.choice(string.ascii_letters + string.digits) for _ in range(24)
            )
            a = ev.args
            if ev.tool == "shell":
                cmd = a["command"]
            elif ev.tool == "read":
                cmd = f"sed -n '1,220p' {a['path']}"
            elif ev.tool == "grep":
                cmd = f"rg -n {json.dumps(a['pattern'])} {a.get('path', '.')}"
            else:
                patch = f"*** Begin Patch\n*** Update File: {a['path']}\n@@\n-{a['old']}\n+{a['new']}\n*** End Patch"
                args = {"command": ["apply_patch", patch], "workdir": "/repo"}
                self._item(
                    {
                        "type": "function_call",
                        "name": "shell",
                        "arguments": json.dumps(args),
                        "call_id": self.call,
                    }
                )
                return
            args = {"command": ["bash", "-lc", cmd], "workdir": "/repo", "timeout_ms": 120000}
            self._item(
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps(args),
                    "call_id": self.call,
                }
            )
        else:
            out = json.dumps(
                {
                    "output": ev.text,
                    "metadata": {"exit_code": 0, "duration_seconds": round(self.rng.random() * 4, 1)},
                }
            )
            self._item({"type": "function_call_output", "call_id": self.call, "output": out})


class CopilotWriter(_Writer):
    TOOLS: ClassVar[dict[str, str]] = {"shell": "bash", "read": "view", "edit": "edit", "grep": "grep"}

    def __init__(self, sid: str, start: datetime, rng: random.Random) -> None:
        super().__init__(sid, start, rng)
        self.prev: str | None = None
        self.call = ""
        ctx = {"cwd": GEN_CWD, "gitRoot": "/repo", "branch": "main", "repository": "acme/platform"}
        self._ev(
            "session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent", "context": ctx}
        )

    def _ev(self, kind: str, data: dict[str, Any]) -> None:
        self.n += 1
        eid = _uuid(self.rng)
        self._emit(
            _jl({"type": kind, "id": eid, "timestamp": self.tick(), "parentId": self.prev, "data": data})
        )
        self.prev = eid

    def add(self, ev: Event) -> None:
        if ev.kind == "message":
            if ev.role == "user":
                self._ev("user.message", {"content": ev.text, "attachments": []})
                self._ev("assistant.turn_start", {"turnId": str(self.n)})
            else:
                self._ev(
                    "assistant.message",
                    {"messageId": _uuid(self.rng), "content": ev.text, "toolRequests": []},
                )
        elif ev.kind == "thinking":
            return  # Copilot CLI does not persist reasoning text
        elif ev.kind == "tool_call":
            self.call = "toolu_" + _hex(self.rng, 20)
            a = ev.args
            if ev.tool == "shell":
                args: dict[str, Any] = {"command": a["command"], "description": a.get("why", "Run command")}
            elif ev.tool == "read":
                args = {"path": "/repo/" + a["path"]}
            elif ev.tool == "edit":
                args = {"path": "/repo/" + a["path"], "old_str": a["old"], "new_str": a["new"]}
            else:
                args = {"pattern": a["pattern"], "path": a.get("path", ".")}
            self._ev(
                "tool.execution_start",
                {"toolCallId": self.call, "toolName": self.TOOLS[ev.tool], "arguments": args},
            )
        else:
            res = {"content": ev.text, "detailedContent": ev.text[:200]}
            self._ev("tool.execution_complete", {"toolCallId": self.call, "success": True, "result": res})

    def close(self) -> bytes:
        self._ev("assistant.turn_end", {"turnId": str(self.n)})
        self._ev(
            "session.shutdown", {"shutdownType": "routine", "totalPremiumRequests": self.rng.randint(1, 30)}
        )
        return super().close()


class MarkdownWriter(_Writer):
    """A hand-kept or exported transcript: speaker markers, ``$ cmd`` plus fenced output."""

    def __init__(self, sid: str, start: datetime, rng: random.Random, agent: str, title: str) -> None:
        super().__init__(sid, start, rng)
        self.pending: str | None = None
        self._emit(
            f"---\ndate: {start.strftime('%Y-%m-%dT%H:%M:%SZ')}\nagent: {agent}\nsession: {sid}\n---\n\n"
            f"# Session log: {title}\n\n"
        )

    def add(self, ev: Event) -> None:
        if ev.kind == "message":
            who = "User" if ev.role == "user" else "Assistant"
            self._emit(f"**{who}:** {ev.text}\n\n")
        elif ev.kind == "thinking":
            return
        elif ev.kind == "tool_call":
            a = ev.args
            if ev.tool == "shell":
                self.pending = a["command"]
            elif ev.tool == "read":
                self.pending = f"cat {a['path']}"
            elif ev.tool == "grep":
                self.pending = f"rg -n '{a['pattern']}' {a.get('path', '.')}"
            else:
                self._emit(
                    f"**Assistant:** Editing {a['path']}:\n\n```diff\n-{a['old']}\n+{a['new']}\n```\n\n"
                )
                self.pending = None
        else:
            cmd = self.pending or "true"
            self.pending = None
            self._emit(f"$ {cmd}\n\n```\n{ev.text}\n```\n\n")

    def close(self) -> bytes:
        self._emit("<!-- session: end -->\n")
        return super().close()


class PlainWriter:
    """``role: text`` lines: the raw transcript as a user would feed a generic summarizer."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, ev: Event) -> None:
        if ev.kind == "message":
            self.lines.append(f"{ev.role}: {ev.text}")
        elif ev.kind == "tool_call":
            a = ev.args
            desc = {
                "shell": a.get("command", ""),
                "read": f"read {a.get('path', '')}",
                "grep": f"grep {a.get('pattern', '')} {a.get('path', '')}",
                "edit": f"edit {a.get('path', '')}: -{a.get('old', '')} +{a.get('new', '')}",
            }[ev.tool]
            self.lines.append(f"assistant: [{ev.tool}] {desc}")
        elif ev.kind == "tool_result":
            self.lines.append(f"tool: {ev.text}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


# --- noise -------------------------------------------------------------------------------------


class Noise:
    """Realistic filler: most of a transcript's bytes and none of its must-keep facts."""

    def __init__(self, rng: random.Random, comp: str, files: list[str], size: float = 1.0) -> None:
        self.rng = rng
        self.k = size  # < 1 for small sessions: their tool outputs are short too
        self.comp = comp
        self.files = files
        self.idents = [f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}" for _ in range(12)]

    def code(self, n: int) -> str:
        r = self.rng
        lines = []
        indent = 0
        for i in range(1, n + 1):
            pick = r.random()
            name = r.choice(self.idents)
            if pick < 0.12:
                indent = 0
                body = f"def {name}(self, {r.choice(NOUNS)}: {r.choice(['int', 'str', 'dict[str, Any]', 'bytes'])}) -> None:"
            elif pick < 0.2:
                indent = 4
                body = f'"""{r.choice(VERBS).title()} the {r.choice(NOUNS)} for one {self.comp} request."""'
            elif pick < 0.45:
                indent = 4
                body = f"{r.choice(NOUNS)}_{r.randint(0, 9)} = self.{name}({r.choice(NOUNS)}, limit={r.randint(1, 500)})"
            elif pick < 0.6:
                indent = 4
                body = f"if not {r.choice(NOUNS)}:\n{' ' * 8}return None"
            elif pick < 0.72:
                indent = 4
                body = f'log.debug("{self.comp}.{name}", count=len({r.choice(NOUNS)}s))'
            elif pick < 0.8:
                indent = 0
                body = ""
            else:
                indent = 4
                body = f"return {r.choice(NOUNS)}_{r.randint(0, 9)}"
            lines.append(f"{i:6d}\u2192{' ' * indent}{body}")
        return "\n".join(lines)

    def pytest_ok(self, n: int) -> str:
        r = self.rng
        out = [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0",
            "rootdir: /repo\nconfigfile: pyproject.toml\nplugins: anyio-4.6.0, cov-5.0.0",
            f"collected {n} items\n",
        ]
        mods = [f"tests/{self.comp}/test_{r.choice(NOUNS)}.py" for _ in range(4)]
        done = 0
        while done < n:
            k = min(n - done, r.randint(8, 40))
            done += k
            out.append(f"{r.choice(mods)} {'.' * k}{' ' * r.randint(1, 20)}[{done * 100 // n:3d}%]")
        out.append(
            f"\n============================== {n} passed in {r.uniform(0.5, 40):.2f}s =============================="
        )
        return "\n".join(out)

    def diff(self, n: int) -> str:
        r = self.rng
        f = r.choice(self.files)
        out = [
            f"diff --git a/{f} b/{f}",
            f"index {_hex(r, 7)}..{_hex(r, 7)} 100644",
            f"--- a/{f}",
            f"+++ b/{f}",
        ]
        for i in range(n):
            out.append(f"@@ -{i * 12 + 1},7 +{i * 12 + 1},8 @@ def {r.choice(self.idents)}(self):")
            out += [f"     {r.choice(NOUNS)} = self.{r.choice(self.idents)}({j})" for j in range(3)]
            out.append(f"-    return legacy_{r.choice(NOUNS)}(value)")
            out.append(f"+    return {r.choice(NOUNS)}.{r.choice(VERBS)}(value, strict=True)")
        return "\n".join(out)

    def pip_log(self) -> str:
        r = self.rng
        out = []
        for lib in r.sample(LIBS, 5):
            v = f"{r.randint(0, 3)}.{r.randint(0, 30)}.{r.randint(0, 9)}"
            out.append(f"Collecting {lib}=={v}")
            out.append(
                f"  Downloading {lib}-{v}-py3-none-any.whl ({r.randint(40, 900)} kB)\n"
                f"     ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ {r.randint(40, 900)}.0/{r.randint(40, 900)}.0 kB"
            )
        out.append("Installing collected packages: " + ", ".join(LIBS[:5]))
        out.append(
            "Successfully installed " + " ".join(f"{x}-{r.randint(1, 3)}.{r.randint(0, 9)}" for x in LIBS[:5])
        )
        return "\n".join(out)

    def git_log(self, n: int) -> str:
        r = self.rng
        out = []
        for _ in range(n):
            out.append(f"commit {_hex(r, 40)}")
            out.append("Author: Jane Doe <jane.doe@example.com>")
            out.append(
                f"Date:   Mon Nov {r.randint(1, 28)} {r.randint(8, 19)}:{r.randint(10, 59)}:07 2026 +0000\n"
            )
            out.append(f"    {r.choice(VERBS)}: tidy {self.comp} {r.choice(NOUNS)} handling\n")
        return "\n".join(out)

    def grep(self, pattern: str) -> str:
        r = self.rng
        return "\n".join(
            f"{r.choice(self.files)}:{r.randint(1, 400)}:    {pattern} = self.{r.choice(self.idents)}()"
            for _ in range(r.randint(4, 30))
        )

    def json_blob(self) -> str:
        r = self.rng
        items = [
            {"id": _uuid(r), "status": r.choice(["ok", "queued", "done"]), "count": r.randint(0, 999),
             "sha256": _hex(r, 64), "created": "2026-11-01T10:00:00Z"}
            for _ in range(r.randint(3, 15))
        ]  # fmt: skip
        return json.dumps({"items": items, "next": None}, indent=2)

    def chatter(self) -> str:
        r = self.rng
        f = r.choice(self.files)
        return r.choice(
            [
                f"Let me look at {f} first.",
                "Okay, reading the tests to understand the expected behaviour.",
                "I'll run the test suite to see where we are.",
                f"Now checking how {f} wires this up.",
                "Looks good so far. Moving on to the next part.",
                f"Reading {f} again to double-check the control flow.",
                "Running the focused tests again.",
            ]
        )

    def explanation(self) -> str:
        r = self.rng
        f = r.choice(self.files)
        n1, n2, v = r.choice(NOUNS), r.choice(NOUNS), r.choice(VERBS)
        pool = [
            f"The {self.comp} handler reads the {n1} once and passes it down instead of looking it up in every branch.",
            f"{f} builds the {n2} lazily, so the first request after a deploy pays for it.",
            f"The test only covers the happy path; the {n1} branch with an empty {n2} is never exercised.",
            f"There are two call sites for {v}_{n1}, one in the worker and one in the API layer.",
            f"The retry loop wraps the whole {n2} write, which is why a partial failure repeats earlier steps.",
            f"I checked the git history and the {n1} logic has not changed in the last few months.",
            f"The fixture sets up {r.randint(2, 40)} {n2}s, which is more than the test needs.",
            f"Nothing else imports {f}, so changing its signature is safe.",
            f"The config loader falls back to defaults when the {self.comp} section is missing.",
            f"The log output shows the {n1} being processed twice for the same tenant.",
            f"This matches what the docstring of {v}_{n2} says it should do.",
            "The type checker is happy with the change, and the public signature stays the same.",
            f"The {n2} cache is keyed by tenant and {n1}, and entries expire after a few minutes.",
        ]
        return " ".join(r.sample(pool, r.randint(2, 5)))

    def thinking(self) -> str:
        r = self.rng
        return " ".join(r.choice(PROSE) for _ in range(r.randint(40, 160)))

    def lookalike_dump(self) -> str:
        r = self.rng
        return "\n".join(text for _, text in r.sample(BACKLOG_LOOKALIKES, 3))

    def events(self) -> list[Event]:
        """One noise step: a tool call and its output, or a message (``STEPS`` gives the odds)."""
        x = self.rng.random()
        f = self.rng.choice(self.files)
        for upto, step in self.STEPS:
            if x < upto:
                return step(self, f)
        return [Event("assistant", "thinking", self.thinking())]

    def _read(self, f: str) -> list[Event]:
        return [
            Event("assistant", "tool_call", tool="read", args={"path": f}),
            Event("tool", "tool_result", self.code(max(8, int(self.rng.randint(40, 260) * self.k)))),
        ]

    def _pytest(self, f: str) -> list[Event]:
        r = self.rng
        cmd = r.choice([f"pytest tests/{self.comp} -q", "pytest -q", f"pytest tests/{self.comp} -q -x"])
        return [
            Event("assistant", "tool_call", tool="shell", args={"command": cmd}),
            Event("tool", "tool_result", self.pytest_ok(max(5, int(r.randint(20, 400) * self.k)))),
        ]

    def _edit(self, f: str) -> list[Event]:
        r = self.rng
        old = f"return legacy_{r.choice(NOUNS)}(value)"
        new = f"return {r.choice(NOUNS)}.{r.choice(VERBS)}(value)"
        return [
            Event("assistant", "tool_call", tool="edit", args={"path": f, "old": old, "new": new}),
            Event(
                "tool",
                "tool_result",
                f"The file {f} has been updated.\n" + self.diff(max(1, int(r.randint(2, 12) * self.k))),
            ),
        ]

    def _grep(self, f: str) -> list[Event]:
        p = self.rng.choice(self.idents)
        return [
            Event("assistant", "tool_call", tool="grep", args={"pattern": p, "path": "src"}),
            Event("tool", "tool_result", self.grep(p)),
        ]

    def _git_log(self, f: str) -> list[Event]:
        return [
            Event("assistant", "tool_call", tool="shell", args={"command": "git log -n 8"}),
            Event("tool", "tool_result", self.git_log(max(2, int(8 * self.k)))),
        ]

    def _git_status(self, f: str) -> list[Event]:
        return [Event("assistant", "tool_call", tool="shell", args={"command": "git status --short && git diff --stat"}),
                Event("tool", "tool_result", self.lookalike_dump())]  # fmt: skip

    def _pip(self, f: str) -> list[Event]:
        return [
            Event("assistant", "tool_call", tool="shell", args={"command": "pip install -e '.[test]'"}),
            Event("tool", "tool_result", self.pip_log()),
        ]

    def _curl(self, f: str) -> list[Event]:
        return [Event("assistant", "tool_call", tool="shell", args={"command": f"curl -s localhost:8000/api/{self.comp}/items"}),
                Event("tool", "tool_result", self.json_blob())]  # fmt: skip

    def _chat(self, f: str) -> list[Event]:
        return [Event("assistant", "message", self.chatter())]

    def _explain(self, f: str) -> list[Event]:
        return [Event("assistant", "message", self.explanation())]

    # Cumulative odds of each noise step; the rest is thinking.
    STEPS: ClassVar[list[tuple[float, Callable[[Noise, str], list[Event]]]]] = [
        (0.32, _read),
        (0.44, _pytest),
        (0.54, _edit),
        (0.6, _grep),
        (0.64, _git_log),
        (0.67, _git_status),
        (0.7, _pip),
        (0.74, _curl),
        (0.84, _chat),
        (0.93, _explain),
    ]


# --- planted facts --------------------------------------------------------------------------


class Planter:
    """Draws a session's facts and the events that state them (the story beats)."""

    def __init__(self, rng: random.Random, comp: str, unrecognised_rate: float) -> None:
        self.rng = rng
        self.comp = comp
        self.p_unrec = unrecognised_rate
        self.m = Manifest()
        self.used: set[str] = set()

    def _unrec(self) -> bool:
        return self.rng.random() < self.p_unrec

    def fact(self, type_: str, text: str, recognised: bool, phrasing: str) -> None:
        self.m.facts.append(Fact(type_, text, recognised, phrasing))

    def unique(self, make: Any) -> str:
        for _ in range(50):
            v = str(make())
            if v not in self.used:
                self.used.add(v)
                return v
        return str(make())

    # values
    def path(self) -> str:
        r = self.rng
        return self.unique(
            lambda: (
                f"{r.choice(TOP)}/{self.comp}/{r.choice(NOUNS)}_{r.choice(VERBS)}{r.choice(['', '_v2', '_utils', '_impl'])}.{r.choice(EXTS)}"
            )
        )

    def ident(self) -> str:
        r = self.rng
        return self.unique(
            lambda: r.choice(
                [
                    f"{r.choice(VERBS)}_{r.choice(NOUNS)}_{r.choice(['batch', 'once', 'all', 'v2', 'safe'])}",
                    f"{_camel(r.choice(NOUNS), r.choice(['Manager', 'Store', 'Client', 'Exporter']))}.{r.choice(VERBS)}()",
                    f"{self.comp}.{r.choice(NOUNS)}s.{r.choice(VERBS)}_{r.choice(NOUNS)}",
                ]
            )
        )

    # beats -------------------------------------------------------------------------------

    def opening(self, n_directives: int) -> list[Event]:
        """The user's request: goal, issue numbers, directives."""
        r = self.rng
        issue = r.randint(100, 4999)
        parts = []
        if self._unrec():
            key = r.choice(["GH", "PLAT", "OPS"])
            form = f"{key}-{issue}"
            parts.append(f"Please fix the {self.comp} {r.choice(NOUNS)} bug from {form}.")
            self.fact("issue", form, False, "jira-key")
        else:
            parts.append(f"Please fix the {self.comp} {r.choice(NOUNS)} bug from #{issue}.")
            self.fact("issue", f"#{issue}", True, "hash-number")
        extra = r.randint(1000, 9999)
        parts.append(f"It is related to #{extra} too.")
        self.fact("issue", f"#{extra}", True, "hash-number")
        text = " ".join(parts)
        for _ in range(n_directives):
            text += "\n" + self.directive()
        return [Event("user", "message", text)]

    def directive(self) -> str:
        r = self.rng
        table = r.choice(TABLES)
        n = r.randint(3, 9)
        pairs = [
            (
                f"log raw API keys from the {self.comp} service",
                f"logging raw API keys from the {self.comp} service",
            ),
            (
                f"change the public {self.comp} API without a deprecation note",
                f"changing the public {self.comp} API without a deprecation note",
            ),
            (f"touch the {table} table in production", f"touching the {table} table in production"),
            (
                f"push directly to main for {self.comp} changes",
                f"pushing directly to main for {self.comp} changes",
            ),
            (
                f"add a new dependency to the {self.comp} package without asking",
                f"adding a new dependency to the {self.comp} package without asking",
            ),
            (f"retry {self.comp} jobs more than {n} times", f"retrying {self.comp} jobs more than {n} times"),
        ]
        base, gerund = pairs[r.randrange(len(pairs))]
        if base in self.used:
            base, gerund = base + " again", gerund + " again"
        self.used.add(base)
        if self._unrec():
            form = r.choice(["Please avoid", "Kindly refrain from", "I'd rather you avoided"])
            text = f"{form} {gerund}"
            self.fact("directive", _core(text), False, form.lower().replace(" ", "-").replace("'", ""))
            return text + "."
        form = r.choice(["Never", "Do not", "Don't", "You must not", "Please don't"])
        text = f"{form} {base}"
        self.fact("directive", _core(text), True, form.lower().replace(" ", "-").replace("'", ""))
        return text + "."

    def decision(self, text: str) -> Event:
        r = self.rng
        if self._unrec():
            form = r.choice(["lets-go-with", "bold-outside-colon", "going-with", "the-plan"])
            line = {
                "lets-go-with": f"Let's go with this: {text}.",
                "bold-outside-colon": f"**Decision**: {text}.",
                "going-with": f"Going with the simpler option: {text}.",
                "the-plan": f"The plan is to {text}.",
            }[form]
            self.fact("decision", text, False, form)
        else:
            form = r.choice(
                [
                    "decision-colon",
                    "bold-decision",
                    "we-decided-to",
                    "we-agreed-to",
                    "i-decided-to",
                    "final-decision",
                ]
            )
            line = {
                "decision-colon": f"Decision: {text}.",
                "bold-decision": f"**Decision:** {text}.",
                "we-decided-to": f"After looking at the numbers we decided to {text}.",
                "we-agreed-to": f"We agreed to {text}.",
                "i-decided-to": f"I decided to {text}.",
                "final-decision": f"Final decision: {text}.",
            }[form]
            self.fact("decision", text, True, form)
        lead = r.choice(
            ["", "Checked the options. ", f"{r.choice(['Right', 'OK', 'Good'])}, the tests confirm it. "]
        )
        return Event("assistant", "message", lead + line)

    def plain_decision_text(self) -> str:
        r = self.rng
        n = r.randint(50, 5000)
        return self.unique(
            lambda: r.choice(
                [
                    f"cap {self.comp} batches at {n} rows per request",
                    f"store {self.comp} timestamps as UTC epoch milliseconds",
                    f"run the {r.choice(TABLES)} backfill outside the transaction block",
                    f"pin {r.choice(LIBS)} below {r.randint(1, 3)}.{r.randint(0, 40)} until upstream fixes the regression",
                    f"feature-flag the new {self.comp} path behind {self.comp.upper()}_V2_ENABLED",
                    f"drop the legacy {self.comp} endpoint in the next release",
                    f"retry {self.comp} webhooks with exponential backoff, at most {r.randint(3, 9)} attempts",
                    f"keep one {self.comp} worker per tenant to preserve ordering",
                ]
            )
        )

    def reversal(self) -> list[Event]:
        """A decision stated, then reversed later (two beats: returned separately by the caller)."""
        r = self.rng
        a, b = r.choice(TECH)
        noun = r.choice(NOUNS)
        old = f"use {a} for the {self.comp} {noun} store"
        new = f"use {b} for the {self.comp} {noun} store"
        first = Event("assistant", "message", f"Decision: {old}.")
        if self._unrec():
            form = r.choice(["change-of-plan", "scratch-that", "actually-switch"])
            line = {
                "change-of-plan": f"Change of plan: {new}; {a} cannot keep up with concurrent writers.",
                "scratch-that": f"Scratch the {a} idea. We should {new}, since {a} cannot keep up with concurrent writers.",
                "actually-switch": f"Actually, after the load test it is clear: {new}. {a} cannot keep up with concurrent writers.",
            }[form]
            rec = False
        else:
            form = r.choice(
                [
                    "decision-revised-instead",
                    "we-decided-instead",
                    "revised-rather-than",
                    "decision-reversing",
                ]
            )
            line = {
                "decision-revised-instead": f"Decision (revised): {new} instead of {a}.",
                "we-decided-instead": f"We decided to {new} instead of {a}, reversing the earlier call.",
                "revised-rather-than": f"Revised decision: {new} rather than {a}.",
                "decision-reversing": f"Decision: reversing the earlier choice, {new}.",
            }[form]
            rec = True
        self.fact("decision", new, rec, form)
        self.m.stale.append({"text": old, "recognised": rec, "phrasing": form})
        return [first, Event("assistant", "message", line)]

    def error(self) -> list[Event]:
        """A failing run whose exact error string matters, then the fix."""
        r = self.rng
        table = r.choice(TABLES)
        mod = f"{self.comp}_{r.choice(NOUNS)}"
        if self._unrec():
            form = r.choice(["npm-err", "segfault", "pytest-assert"])
            err = {
                "npm-err": f"npm ERR! ERESOLVE could not resolve peer dependency @acme/{self.comp}-ui@{r.randint(2, 9)}.{r.randint(0, 9)}.0",
                "segfault": f"Segmentation fault (core dumped) in {mod}_worker after {r.randint(2, 90)} jobs",
                "pytest-assert": f"E       assert {r.randint(2, 99)} == {r.randint(100, 999)} (len of {table} rows)",
            }[form]
            rec = False
            cmd = {
                "npm-err": "npm ci",
                "segfault": f"./bin/{self.comp}-worker --once",
                "pytest-assert": f"pytest tests/{self.comp} -q -x",
            }[form]
        else:
            form = r.choice(
                [
                    "keyerror",
                    "typeerror",
                    "pg-error",
                    "assertion",
                    "modnotfound",
                    "timeout",
                    "integrity",
                    "panic",
                ]
            )
            err = {
                "keyerror": f"KeyError: '{r.choice(NOUNS)}_id' in {_camel(self.comp, 'Handler')}.handle",
                "typeerror": f"TypeError: unsupported operand type(s) for +: 'int' and 'NoneType' in {mod}",
                "pg-error": f'ERROR: relation "{table}_{r.choice(NOUNS)}" does not exist',
                "assertion": f"AssertionError: expected {r.choice([200, 201, 204])} from /api/{self.comp}, got {r.choice([500, 502, 503])}",
                "modnotfound": f"ModuleNotFoundError: No module named '{mod}'",
                "timeout": f"TimeoutError: {self.comp} worker did not answer within {r.randint(5, 120)}s",
                "integrity": f'IntegrityError: duplicate key value violates unique constraint "{table}_pkey"',
                "panic": f"panic: runtime error: index out of range [{r.randint(3, 9)}] with length {r.randint(0, 3)}",
            }[form]
            rec = True
            cmd = f"pytest tests/{self.comp}/test_{r.choice(NOUNS)}.py -x -q"
        self.fact("error", err, rec, form)
        log = (
            Noise(r, self.comp, [f"tests/{self.comp}/test_x.py"])
            .pytest_ok(r.randint(5, 60))
            .rsplit("\n", 1)[0]
        )
        log += f"\n{'_' * 20} test_{r.choice(NOUNS)} {'_' * 20}\n\n{err}\n\nFAILED tests/{self.comp}/test_x.py - 1 failed"
        out = [
            Event("assistant", "tool_call", tool="shell", args={"command": cmd}),
            Event("tool", "tool_result", log),
        ]
        if r.random() < 0.6:
            out.append(Event("assistant", "message", f"The run fails with:\n{err}\nLooking into the cause."))
        out.append(
            Event(
                "assistant", "message",
                f"Fixed: the root cause was a missing guard in the {self.comp} {r.choice(NOUNS)} path; the tests pass now.",
            )
        )  # fmt: skip
        return out

    def command(self) -> list[Event]:
        r = self.rng
        if self._unrec():
            form = r.choice(["alembic", "script", "bundle", "psql"])
            cmd = {
                "alembic": f"alembic upgrade {_hex(r, 12)}",
                "script": f"./scripts/{self.comp}-reindex.sh --tenant {r.randint(10, 999)}",
                "bundle": f"bundle exec rspec spec/{self.comp}/{r.choice(NOUNS)}_spec.rb",
                "psql": f"psql -d {self.comp} -f db/{r.choice(TABLES)}_fix.sql",
            }[form]
            rec = False
        else:
            form = r.choice(["make", "docker", "kubectl", "git", "npm", "ruff", "go", "python-m"])
            cmd = {
                "make": f"make {self.comp}-migrate ENV=staging",
                "docker": f"docker compose up -d {self.comp}-{r.choice(NOUNS)}",
                "kubectl": f"kubectl rollout restart deploy/{self.comp}-{r.choice(NOUNS)} -n prod",
                "git": f"git cherry-pick {_hex(r, 40)}",
                "npm": f"npm run build:{self.comp}",
                "ruff": f"ruff check src/{self.comp} --fix",
                "go": f"go test ./internal/{self.comp}/... -run Test{_camel(r.choice(NOUNS))}",
                "python-m": f"python -m {self.comp}.tools.{r.choice(VERBS)}_{r.choice(NOUNS)} --dry-run",
            }[form]
            rec = True
        cmd = self.unique(lambda: cmd)
        self.fact("command", cmd, rec, form)
        if form == "git":
            self.m.lookalikes.append({"kind": "commit_sha", "value": cmd.split()[-1], "line": cmd})
        out = [
            Event("assistant", "tool_call", tool="shell", args={"command": cmd, "why": "Apply the change"})
        ]
        out.append(
            Event(
                "tool",
                "tool_result",
                r.choice(["ok", "done in 3.2s", "0 errors", "Restarted.", "Migrated 4 revisions."]),
            )
        )
        if r.random() < 0.5:
            out.append(Event("assistant", "message", f"Ran `{cmd}` and it went through."))
        return out

    def paths_and_idents(self, n_paths: int, n_ids: int) -> list[Event]:
        r = self.rng
        events = []
        for _ in range(n_paths):
            p = self.path()
            if self._unrec():
                # No extension: Dockerfile-, Makefile- and script-style files.
                p = (
                    p.rsplit(".", 1)[0].rsplit("/", 1)[0]
                    + "/"
                    + r.choice(["Dockerfile", "Makefile", "Procfile", "bootstrap"])
                )
                p = self.unique(lambda p=p: p)
                self.fact("path", p, False, "no-extension")
            else:
                self.fact("path", p, True, "relative-path")
            style = r.choice(["created", "moved", "backtick"])
            text = {
                "created": f"I created {p} to hold the new {self.comp} logic.",
                "moved": f"Moved the helpers into {p}, so the handler stays small.",
                "backtick": f"The change lives in `{p}`.",
            }[style]
            events.append(Event("assistant", "message", text))
        for _ in range(n_ids):
            ident = self.ident()
            if self._unrec():
                word = _camel(r.choice(NOUNS), r.choice(["Registry", "Policy", "Planner"]))
                word = self.unique(lambda word=word: word)
                self.fact("identifier", word, False, "bare-class-name")
                events.append(
                    Event("assistant", "message", f"The {word} class now owns the {self.comp} state.")
                )
            else:
                self.fact("identifier", ident, True, "backticked")
                events.append(
                    Event("assistant", "message", f"Renamed the helper to `{ident}` and updated the callers.")
                )
        return events

    def numbers(self, n: int) -> list[Event]:
        r = self.rng
        out = []
        for _ in range(n):
            form = r.choice(["latency", "coverage", "memory", "rows"])
            if form == "latency":
                v = f"{r.randint(101, 999)} ms"
                text = f"p95 latency for {self.comp} went from {r.randint(1000, 4000)} ms down to {v} after the change."
            elif form == "coverage":
                v = f"{r.randint(70, 98)}.{r.randint(1, 9)}%"
                text = f"Coverage for the {self.comp} package is now {v}."
            elif form == "memory":
                v = f"{r.randint(120, 900)} MB"
                text = f"Peak memory of the {self.comp} job dropped to {v}."
            else:
                v = f"{r.randint(2, 90)},{r.randint(100, 999)} rows"
                text = f"The backfill touched {v} in the {r.choice(TABLES)} table."
            v = self.unique(lambda v=v: v)
            self.fact("number", v, False, form)  # anchors.py keeps no numbers (CAPS["number"] = 0)
            out.append(Event("assistant", "message", text))
        return out

    def todos(self, n_open: int, n_closed: int) -> tuple[list[Event], list[Event]]:
        """(early events that open TODOs, late events that close some and leave others open)."""
        r = self.rng
        early: list[Event] = []
        late: list[Event] = []
        for _ in range(n_open):
            t = self.unique(
                lambda: r.choice(
                    [
                        f"add a regression test for the {self.comp} {r.choice(NOUNS)} edge case",
                        f"document the {self.comp} {r.choice(NOUNS)} limits in the runbook",
                        f"backfill {r.choice(TABLES)} on the replica before Friday",
                        f"remove the {r.choice(NOUNS)} shim once {self.comp} v2 ships",
                        f"ask ops to raise the {self.comp} queue alert threshold",
                    ]
                )
            )
            if self._unrec():
                form = r.choice(["next-step", "still-need", "remaining"])
                line = {
                    "next-step": f"Next step: {t}",
                    "still-need": f"We still need to {t}",
                    "remaining": f"Remaining work: {t}",
                }[form]
                rec = False
            else:
                form = r.choice(["todo-colon", "checkbox", "follow-up", "open-item", "fixme"])
                line = {
                    "todo-colon": f"TODO: {t}",
                    "checkbox": f"- [ ] {t}",
                    "follow-up": f"Follow-up: {t}",
                    "open-item": f"Open item: {t}",
                    "fixme": f"FIXME: {t}",
                }[form]
                rec = True
            self.fact("todo", t, rec, form)
            late.append(Event("assistant", "message", f"Summary of where this stands.\n{line}"))
        for _ in range(n_closed):
            t = self.unique(
                lambda: r.choice(
                    [
                        f"update the {self.comp} fixtures for the new schema",
                        f"rename the {r.choice(NOUNS)} column in {r.choice(TABLES)}",
                        f"bump the {self.comp} client timeout",
                        f"drop the debug logging in {self.comp} {r.choice(NOUNS)}s",
                    ]
                )
            )
            early.append(Event("assistant", "message", f"Noting this for later.\nTODO: {t}"))
            if self._unrec():
                form = r.choice(["done-capital", "done-suffix", "finished"])
                line = {
                    "done-capital": f"Done: {t}",
                    "done-suffix": f"{t[0].upper() + t[1:]} is done now.",
                    "finished": f"Finished: {t}",
                }[form]
                rec = False
            else:
                form = r.choice(["checkbox-x", "DONE"])
                line = {"checkbox-x": f"- [x] {t}", "DONE": f"DONE: {t}"}[form]
                rec = True
            self.m.closed_todos.append({"text": t, "recognised": rec, "phrasing": form, "close": line})
            late.insert(0, Event("assistant", "message", f"Progress update.\n{line}"))
        return early, late

    def secret_events(self, n: int) -> list[Event]:
        """Secrets in tool output, commands, user and assistant text, each next to a look-alike."""
        r = self.rng
        out = []
        for s in r.sample(SECRET_POOL, n):
            self.m.secrets.append({"name": s.name, "values": [s.value, *s.extra]})
            look = r.choice(BACKLOG_LOOKALIKES)[1]
            where = r.choice(["tool", "tool", "assistant", "user"])
            if where == "tool":
                out.append(
                    Event(
                        "assistant",
                        "tool_call",
                        tool="shell",
                        args={"command": "cat .env.local && git log -1"},
                    )
                )
                out.append(Event("tool", "tool_result", f"{look}\n{s.line}\nLOG_LEVEL=debug"))
            elif where == "assistant":
                out.append(
                    Event(
                        "assistant",
                        "message",
                        f"Found this in the config, it should not be committed:\n{s.line}\n(next to {look.splitlines()[0]})",
                    )
                )
            else:
                out.append(Event("user", "message", f"Here is what I have locally:\n{s.line}"))
        return out

    def lookalike_facts(self) -> list[Event]:
        """Look-alikes inside must-keep lines: a redactor that eats them loses a fact."""
        r = self.rng
        sha = _hex(r, 40)
        digest = _hex(r, 64)
        rid = _uuid(r)
        out = []
        text = f"pin the base image to python@sha256:{digest}"
        self.m.lookalikes.append({"kind": "sha256_digest", "value": digest, "line": text})
        out.append(self.decision(text))
        line = f"ERROR: upload {rid} rejected: checksum mismatch for commit {sha}"
        self.fact("error", line, True, "pg-error-with-ids")
        self.m.lookalikes.append({"kind": "uuid", "value": rid, "line": line})
        self.m.lookalikes.append({"kind": "commit_sha", "value": sha, "line": line})
        out.append(
            Event("assistant", "tool_call", tool="shell", args={"command": f"make upload-{self.comp}"})
        )
        out.append(
            Event(
                "tool", "tool_result", f"uploading {self.comp}.tar.gz ...\n{line}\nmake: *** [upload] Error 2"
            )
        )
        out.append(
            Event("assistant", "message", "Fixed: the checksum was computed before gzip; it passes now.")
        )
        return out


# --- a whole session --------------------------------------------------------------------------


def _writer(fmt: str, sid: str, start: datetime, rng: random.Random, *, agent: str, title: str) -> _Writer:
    if fmt == "claude":
        return ClaudeWriter(sid, start, rng)
    if fmt == "codex":
        return CodexWriter(sid, start, rng)
    if fmt == "copilot":
        return CopilotWriter(sid, start, rng)
    return MarkdownWriter(sid, start, rng, agent, title)


def _rel(fmt: str, sid: str, start: datetime, slug: str) -> str:
    if fmt == "claude":
        return f"claude/-repo/{sid}.jsonl"
    if fmt == "codex":
        return f"codex/{start:%Y/%m/%d}/rollout-{start:%Y-%m-%dT%H-%M-%S}-{sid}.jsonl"
    if fmt == "copilot":
        return f"copilot/{sid}/events.jsonl"
    return f"markdown/{start:%Y-%m-%d}-{slug}-{sid}.md"


def _story(
    pl: Planter, r: random.Random, comp: str, scale: float
) -> tuple[list[Event], list[list[Event]], list[Event]]:
    """The planted beats of a session (opening, middle beats in story order, closing); more for a
    bigger ``scale``."""
    opening = pl.opening(1 + int(scale > 2 and r.random() < 0.5))
    todo_early, todo_late = pl.todos(1 + int(r.random() < 0.15 * scale), r.randint(0, 1 + int(scale > 2)))
    rev = pl.reversal() if r.random() < 0.35 + 0.1 * scale else []
    middle: list[list[Event]] = [
        [pl.decision(pl.plain_decision_text())] for _ in range(1 + r.randint(0, int(scale // 2)))
    ]
    middle.append(pl.paths_and_idents(1 + r.randint(0, int(scale)), 1 + r.randint(0, int(scale // 2))))
    middle += [pl.error() for _ in range(1 + r.randint(0, int(scale // 3)))]
    middle += [pl.command() for _ in range(1 + r.randint(0, int(scale // 2)))]
    middle.append(pl.numbers(1 + int(scale > 2 and r.random() < 0.5)))
    middle.append(pl.secret_events(min(3, 1 + r.randint(0, int(scale // 2)))))
    if r.random() < 0.15 + 0.1 * scale:
        middle.append(pl.lookalike_facts())
    r.shuffle(middle)
    # Story order where it matters: TODOs opened early, a decision before its reversal.
    beats = [todo_early, *(rev[:1] and [rev[:1]]), *middle, *(rev[1:] and [rev[1:]])]
    closing = [
        *todo_late,
        Event("assistant", "message", f"Done: the {comp} change is in and all tests pass."),
    ]
    return opening, beats, closing


def make_session(
    seed: int,
    index: int,
    fmt: str,
    target_bytes: int,
    *,
    unrecognised_rate: float = 0.2,
    start: datetime | None = None,
) -> GenSession:
    """One session of about ``target_bytes`` (the planted facts are a few KB of it)."""
    rng = random.Random(f"{seed}:{index}:{fmt}")
    comp = rng.choice(COMPONENTS)
    sid = _uuid(rng) if fmt != "markdown" else f"md-{seed}-{index:04d}"
    start = start or (BASE_TIME + timedelta(hours=index * 3, minutes=rng.randint(0, 59)))
    agent = AGENTS[fmt]
    title = f"{comp} {rng.choice(NOUNS)} fix"
    files = [f"{rng.choice(TOP)}/{comp}/{rng.choice(NOUNS)}.py" for _ in range(rng.randint(5, 14))]
    files += [f"tests/{comp}/test_{rng.choice(NOUNS)}.py" for _ in range(rng.randint(1, 4))]
    noise = Noise(rng, comp, sorted(set(files)), min(1.0, max(0.15, target_bytes / 60000)))
    pl = Planter(rng, comp, unrecognised_rate)

    scale = max(1.0, math.log2(max(target_bytes, 4096) / 4096))  # 1 at 4 KB, ~5 at 120 KB
    opening, beats, closing = _story(pl, rng, comp, scale)

    def est(evs: list[Event]) -> float:
        per = {"claude": 720, "codex": 330, "copilot": 330, "markdown": 25}[fmt]
        return sum(len(ev.text) + len(json.dumps(ev.args)) for ev in evs) * 1.1 + per * len(evs)

    noise_total = max(0.0, target_bytes - est([*opening, *(e for b in beats for e in b), *closing]))
    weights = [rng.random() + 0.2 for _ in beats]
    w = _writer(fmt, sid, start, rng, agent=agent, title=title)
    plain = PlainWriter()

    def emit(evs: list[Event]) -> None:
        for ev in evs:
            w.add(ev)
            plain.add(ev)

    emit(opening)
    noise_done = 0
    acc = 0.0
    for b, wt in zip(beats, weights, strict=True):
        acc += wt / sum(weights)
        while noise_done < noise_total * acc:
            before = w.size
            emit(noise.events())
            noise_done += w.size - before
        emit(b)
    closing_est = est(closing)
    while w.size + closing_est < target_bytes:
        emit(noise.events())
    emit(closing)
    data = w.close()
    end = w.t
    man = pl.m
    return GenSession(sid, fmt, agent, _rel(fmt, sid, start, comp), data, plain.text(), man, start, end)


def sizes(rng: random.Random, n: int, min_kb: float, max_kb: float) -> list[int]:
    """Log-uniform sizes: many small sessions, a long tail of big ones (like real backlogs)."""
    lo, hi = math.log(min_kb * 1024), math.log(max_kb * 1024)
    return [int(math.exp(rng.uniform(lo, hi))) for _ in range(n)]


def iter_sessions(
    seed: int,
    n: int,
    *,
    min_kb: float = 4,
    max_kb: float = 120,
    formats: tuple[str, ...] = FORMATS,
    unrecognised_rate: float = 0.2,
) -> Iterator[GenSession]:
    """``n`` sessions cycling through ``formats`` (lazily: the throughput backlog is large)."""
    rng = random.Random(seed)
    for i, size in enumerate(sizes(rng, n, min_kb, max_kb)):
        yield make_session(seed, i, formats[i % len(formats)], size, unrecognised_rate=unrecognised_rate)


def write_session(s: GenSession, transcripts: Path) -> Path:
    """Write one session file under ``transcripts``; its mtime is the session's end."""
    p = transcripts / s.rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(s.data)
    ts = s.end.timestamp()
    import os

    os.utime(p, (ts, ts))
    return p


def sources(transcripts: Path, formats: tuple[str, ...] = FORMATS) -> list[dict[str, str]]:
    """The ``[[sources]]`` config entries for a generated transcripts folder."""
    return [
        {
            "kind": f,
            "path": str(transcripts / f),
            "agent": AGENTS[f],
            **({"workspace": GEN_CWD} if f in ("codex", "copilot") else {}),
        }
        for f in formats
    ]


def daemon_config(path: Path, root: Path, transcripts: Path, *, quiet: float, extra: str = "") -> Path:
    """A ``scribed run`` config over a generated transcripts folder (extractive, JSON logs)."""
    srcs = "".join(
        f'\n[[sources]]\nkind = "{s["kind"]}"\npath = "{s["path"]}"\nagent = "{s["agent"]}"\n'
        + (f'workspace = "{s["workspace"]}"\n' if "workspace" in s else "")
        for s in sources(transcripts)
    )
    path.write_text(
        f'root = "{root}"\n[session]\nquiet_seconds = {quiet}\n[compress]\nbackend = "extractive"\n'
        f'[log]\nformat = "json"\nlevel = "warning"\n{extra}{srcs}'
    )
    return path


def main() -> None:
    """``python bench/gen.py OUT [--seed N] [--sessions N]``: write sessions and manifest.json."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--min-kb", type=float, default=4)
    ap.add_argument("--max-kb", type=float, default=120)
    a = ap.parse_args()
    man = []
    for s in iter_sessions(a.seed, a.sessions, min_kb=a.min_kb, max_kb=a.max_kb):
        write_session(s, a.out / "transcripts")
        man.append(s.manifest_dict())
    (a.out / "manifest.json").write_text(json.dumps({"seed": a.seed, "sessions": man}, indent=1))
    print(f"wrote {len(man)} sessions to {a.out}")


if __name__ == "__main__":
    main()
