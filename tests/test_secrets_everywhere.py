"""Issue 13: every rule's example secret, fed through every writer, is written nowhere.

One run per drawn layout (hypothesis shuffles which example goes where): the examples of all
``[[rule]]`` entries of ``secrets.toml`` are spread over Claude Code transcripts (user and assistant
text, a tool call's input, a tool's output) whose file NAMES also carry every example a file name
can hold, and over the agent's hot file. Then, in subprocesses as a user runs them: ``run-once``
(LLM backend on a loopback server, JSON debug logs), ``wiki-write`` (a title and a body with
secrets), ``promote --json``, ``context``, ``search`` (words and a pasted secret as the query).
No secret may appear in any file under the root (state folder included; ``.gz``/``.zst`` read
decompressed), in any command's stdout or stderr, or in any request the LLM server received.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any

import zstandard
from helpers import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llmserver import FakeLLM

from scribed.session.redact import REDACTED, redact, rules
from scribed.session.rules import MARK

RULES = rules()
EXAMPLES = [MARK.sub(r"\1", r.tests[0]) for r in RULES]  # each rule's first test, its secret unmarked
SECRETS = [MARK.findall(r.tests[0])[0] for r in RULES]
NAME_BYTES = 200  # of the examples a file name holds, below the 255-byte limit with the suffix
AGENT = "picard"


def name_safe(example: str) -> bool:
    return "/" not in example and "\n" not in example and "\0" not in example and len(example.encode()) < 120


def checked_secrets() -> list[str]:
    """Every rule's secret, except one that survives redaction of the examples together (a secret
    that is also another example's kept text would be a false alarm, not a leak)."""
    kept = redact("\n".join(EXAMPLES))
    return [secret for secret in SECRETS if secret not in kept]


def claude_record(sid: str, i: int, role: str, content: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        message |= {"id": f"m{i}", "type": "message", "model": "claude-sonnet-4-5"}
    return {
        "type": role, "sessionId": sid, "uuid": f"{sid}-{i}", "parentUuid": f"{sid}-{i - 1}",
        "timestamp": f"2026-01-05T10:{i:02d}:00Z", "cwd": "/home/dev/shop", "message": message,
    }  # fmt: skip


def session_records(sid: str, carried: list[list[str]]) -> list[dict[str, Any]]:
    """A session that quotes ``carried[0]`` in the request, [1] in a reply, [2] in a command and
    [3] in that command's output."""
    said, replied, typed, printed = ("\n".join(c) for c in carried)
    call = {
        "type": "tool_use",
        "id": f"t-{sid}",
        "name": "Bash",
        "input": {"command": f"deploy --env prod\n{typed}"},
    }
    return [
        claude_record(sid, 1, "user", f"Rotate the shop's credentials; the current ones are:\n{said}"),
        claude_record(sid, 2, "assistant", [{"type": "text", "text": f"Noted. Decided to rotate these:\n{replied}"}]),
        claude_record(sid, 3, "assistant", [call]),
        claude_record(sid, 4, "user", [{"type": "tool_result", "tool_use_id": f"t-{sid}", "content": printed}]),
        claude_record(sid, 5, "assistant", [{"type": "text", "text": "Rotated; the deploy is green."}]),
    ]  # fmt: skip


def file_names(rng: random.Random) -> list[str]:
    """Names packing every name-safe example, a few to a name."""
    safe = [e for e in EXAMPLES if name_safe(e)]
    rng.shuffle(safe)
    names: list[str] = []
    current = ""
    for ex in safe:
        if current and len((current + " " + ex).encode()) > NAME_BYTES:
            names.append(current)
            current = ""
        current = f"{current} {ex}".strip()
    return [*names, current] if current else names


def write_sources(tmp: Path, rng: random.Random, *, secret_names: bool) -> Path:
    """The transcripts (outside the root) and the root's hot file; returns the transcript folder."""
    folder = tmp / "transcripts" / "-home-dev-shop"
    folder.mkdir(parents=True)
    names = file_names(rng)
    if not secret_names:
        names = [f"session-{n}" for n in range(len(names))]
    shuffled = EXAMPLES[:]
    rng.shuffle(shuffled)
    hot, rest = shuffled[:6], shuffled[6:]
    for n, name in enumerate(names):
        mine = rest[n :: len(names)]
        carried: list[list[str]] = [[], [], [], []]
        for ex in mine:
            carried[rng.randrange(4)].append(ex)
        sid = f"5e55{n:04d}-0000-4000-8000-{n:012d}"
        path = folder / f"{name} s{n}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in session_records(sid, carried)))
    hot_file = tmp / "repo/.squad/memory/hot" / f"{AGENT}.md"
    hot_file.write_text(
        f"# Hot memory: {AGENT}\n\nCurrent task: rotate the shop credentials\n"
        + "".join(f"Last actions: tried {ex}\n" for ex in hot)
    )
    return folder


def config(root: Path, transcripts: Path, llm_url: str) -> Path:
    cfg = root / "scribed.toml"
    cfg.write_text(
        'root = "."\n[compress]\nbackend = "llm"\n'
        f'[llm]\nbase_url = "{llm_url}"\nmodel = "tiny"\ntimeout_seconds = 5\nmax_retries = 1\n'
        '[log]\nformat = "json"\nlevel = "debug"\n[cold]\nttl_days = 1\n'
        f'[[sources]]\nkind = "claude"\npath = "{transcripts}"\nagent = "{AGENT}"\n'
    )
    return cfg


def run_everything(root: Path, cfg: Path, rng: random.Random) -> list[tuple[str, bytes, bytes]]:
    """Each writer as a user runs it: (what, stdout, stderr)."""
    c = ("--config", str(cfg))
    body = "Credential rotation\n" + "\n".join(rng.sample(EXAMPLES, 12)) + "\n"
    title = next(e for e in EXAMPLES if name_safe(e))
    runs = {
        "run-once": run_cli(*c, "run-once", "--force", "--json"),
        "wiki-write": run_cli(*c, "wiki-write", "decisions", "--agent", AGENT, input=body.encode()),
        "wiki-write --title": run_cli(*c, "wiki-write", "ops", "--agent", AGENT, "--title", title, input=body.encode()),
        "promote": run_cli(*c, "promote", "--json", "--as-of", "2030-01-01"),
        "context": run_cli(*c, "context", AGENT, "--situation", "post-incident"),
        "context --query": run_cli(*c, "context", AGENT, "--query", "credentials rotate"),
        "search": run_cli(*c, "search", "--json", "--limit", "200", "rotate", "credentials"),
        "search a secret": run_cli(*c, "search", "--json", "--", rng.choice(EXAMPLES)),  # a key may start "-"
        "search --rebuild": run_cli(*c, "search", "--rebuild"),
    }  # fmt: skip
    for what, p in runs.items():
        assert p.returncode == 0, f"{what}: exit {p.returncode}\n{p.stderr.decode()[-2000:]}"
    out = json.loads(runs["run-once"].stdout)
    assert out["compacted"] >= len(list((root.parent / "transcripts").rglob("*.jsonl"))), out
    assert json.loads(runs["promote"].stdout)["promoted"], "promotion must have moved entries to the wiki"
    return [(what, p.stdout, p.stderr) for what, p in runs.items()]


def root_files(root: Path) -> list[tuple[str, bytes]]:
    """Every file under the root, archives decompressed."""
    out: list[tuple[str, bytes]] = []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        if p.suffix == ".gz":
            data = gzip.decompress(data)
        elif p.suffix == ".zst":
            data = zstandard.ZstdDecompressor().stream_reader(data).read()
        out.append((str(p.relative_to(root)), data))
    return out


def leaks_of(seed: int, *, secret_names: bool = False) -> list[str]:
    """Where a secret showed up after every writer ran on the layout ``seed`` draws."""
    rng = random.Random(seed)
    secrets = checked_secrets()
    assert len(secrets) >= len(RULES) - 3, "almost every rule's secret is checked"
    with tempfile.TemporaryDirectory() as tmp_name, FakeLLM() as llm:
        tmp = Path(tmp_name)
        root = tmp / "repo"
        for d in ("hot", "cold", "wiki"):
            (root / ".squad/memory" / d).mkdir(parents=True)
        transcripts = write_sources(tmp, rng, secret_names=secret_names)
        cfg = config(root, transcripts, llm.url)
        outputs = run_everything(root, cfg, rng)

        files = root_files(root)
        assert any(name.endswith(".zst") for name, _ in files), "the transcript archive was written"
        assert any(REDACTED.encode() in data for _, data in files)
        blobs = [(f"file {name}", data) for name, data in files]
        blobs += [(f"{what} stdout", out) for what, out, _ in outputs]
        blobs += [(f"{what} stderr", err) for what, _, err in outputs]
        assert llm.chat_requests, "the LLM backend was used"
        blobs += [
            (f"LLM request {i}", (repr(r.body) + repr(r.headers)).encode())
            for i, r in enumerate(llm.requests)
        ]
        return [f"{where}: {secret!r}" for where, data in blobs for secret in secrets if _holds(data, secret)]


def _holds(data: bytes, secret: str) -> bool:
    """Whether ``data`` holds ``secret`` (raw or JSON-escaped); a PIN (digits only) as a number of
    its own: a run's timestamp in a sidecar ("…1765128824.3") holds "8824" by chance, not a leak."""
    if secret.isdigit():
        return re.search(rb"(?<![0-9])" + secret.encode() + rb"(?![0-9])", data) is not None
    return secret.encode() in data or json.dumps(secret)[1:-1].encode() in data


@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_no_rule_example_leaks_through_any_writer(seed: int) -> None:
    leaks = leaks_of(seed)
    assert leaks == [], "\n".join(leaks[:40])


def test_secrets_in_transcript_file_names_leak_nowhere() -> None:
    leaks = leaks_of(20261201, secret_names=True)
    assert leaks == [], "\n".join(leaks[:40])
