"""Throughput of :func:`scribed.session.redact.redact` on ~20 MB of transcript-like text.

Run: ``python bench/redact_speed.py [--mb 20] [--repeat 5]``. The text mixes what agent
transcripts hold: real Python source (from the standard library), logs, diffs, shell output with
SHAs and hashes, JSON tool calls, prose, a little non-ASCII, and about one fake secret per 20 KB
(from ``tests/secrets_corpus.py``). It is generated deterministically from a fixed seed, so the
figure is comparable between runs on one machine. The target is ≥ 50 MB/s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from secrets_corpus import SECRETS  # noqa: E402

from scribed.session.redact import REDACTED, redact, rules  # noqa: E402

WORDS = [
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "this",
    "with",
    "as",
    "on",
    "be",
    "we",
    "can",
    "I",
    "will",
    "now",
    "let",
    "me",
    "check",
    "run",
    "test",
    "tests",
    "file",
    "function",
    "error",
    "value",
    "config",
    "token",
    "tokens",
    "password",
    "key",
    "secret",
    "auth",
    "session",
    "summary",
    "update",
    "fix",
    "change",
    "build",
    "install",
    "module",
    "import",
    "return",
    "class",
    "method",
    "path",
    "output",
    "expected",
    "actual",
    "failing",
    "passing",
    "because",
    "should",
    "would",
    "need",
    "next",
    "step",
    "first",
    "then",
    "done",
    "looks",
    "good",
    "the",
    "issue",
    "is",
    "in",
    "cache",
    "memory",
    "budget",
    "limit",
    "retry",
    "timeout",
    "daemon",
    "ledger",
]
UNICODE = ["✓", "—", "…", "→", "“quoted”", "é", "🙂", "½"]


def _stdlib_sources(rng: random.Random, limit: int = 120) -> list[str]:
    """Real code: a fixed sample of standard-library modules."""
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    rng.shuffle(files)
    out = []
    for f in files[:limit]:
        try:
            out.append(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
    return out or ["def f(x):\n    return x + 1\n"]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _prose(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(20, 120))]
    if rng.random() < 0.2:
        words.insert(rng.randrange(len(words)), rng.choice(UNICODE))
    return " ".join(words).capitalize() + ".\n\n"


def _code(rng: random.Random, sources: list[str]) -> str:
    src = rng.choice(sources)
    start = rng.randrange(max(1, len(src) - 3000))
    return "```python\n" + src[start : start + rng.randint(400, 3000)] + "\n```\n"


def _log(rng: random.Random) -> str:
    lines = [
        f"2024-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z {rng.choice(['INFO', 'DEBUG', 'WARN'])} "
        f"[worker-{rng.randint(1, 8)}] request_id={_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}-"
        f"{_hex(rng, 4)}-{_hex(rng, 12)} status={rng.choice([200, 201, 404, 500])} "
        f"latency_ms={rng.random() * 200:.1f} path=/api/v1/items/{rng.randint(1, 99999)} "
        f"max_tokens={rng.choice([256, 1024, 4096])} token_count={rng.randint(10, 9000)}"
        for _ in range(rng.randint(5, 40))
    ]
    return "\n".join(lines) + "\n"


def _diff(rng: random.Random, sources: list[str]) -> str:
    src = rng.choice(sources).splitlines()
    i = rng.randrange(max(1, len(src) - 20))
    hunk = src[i : i + rng.randint(5, 20)]
    body = "\n".join((rng.choice(" -+") + line) for line in hunk)
    return (
        f"diff --git a/pkg/mod.py b/pkg/mod.py\nindex {_hex(rng, 7)}..{_hex(rng, 7)} 100644\n"
        f"--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -{i},{len(hunk)} +{i},{len(hunk)} @@\n{body}\n"
    )


def _shell(rng: random.Random) -> str:
    return (
        f"$ git log --oneline -3\n{_hex(rng, 7)} fix: handle empty input (#{rng.randint(1, 9999)})\n"
        f"{_hex(rng, 7)} chore: bump version to 1.{rng.randint(0, 20)}.{rng.randint(0, 9)}\n"
        f"$ pip download pkg==2.1.0\nSaved ./pkg-2.1.0-py3-none-any.whl\n"
        f"sha256={_hex(rng, 64)}\n$ docker pull python@sha256:{_hex(rng, 64)}\n"
        f"$ pytest -q\n{rng.randint(10, 400)} passed, {rng.randint(0, 3)} failed in {rng.random() * 9:.2f}s\n"
    )


def _tool_json(rng: random.Random, sources: list[str]) -> str:
    event = {
        "type": "tool_use",
        "id": f"toolu_{_hex(rng, 24)}",
        "name": rng.choice(["bash", "read_file", "edit"]),
        "input": {"command": rng.choice(["pytest -q", "ls -la", "git diff --stat"]), "timeout": 120},
        "content": rng.choice(sources)[:600],
    }
    return json.dumps(event) + "\n"


def make_text(size: int, seed: int = 1234) -> str:
    """Deterministic transcript-like text of about ``size`` characters (see :func:`planted`)."""
    rng = random.Random(seed)
    sources = _stdlib_sources(rng)
    parts: list[str] = []
    total = 0
    next_secret = 20_000
    while total < size:
        r = rng.random()
        if r < 0.35:
            chunk = _code(rng, sources)
        elif r < 0.55:
            chunk = _prose(rng)
        elif r < 0.70:
            chunk = _log(rng)
        elif r < 0.80:
            chunk = _diff(rng, sources)
        elif r < 0.90:
            chunk = _tool_json(rng, sources)
        else:
            chunk = _shell(rng)
        if total >= next_secret:
            chunk += rng.choice(SECRETS).line + "\n"
            next_secret += 20_000
        parts.append(chunk)
        total += len(chunk)
    return "".join(parts)


def planted(text: str) -> list[str]:
    """The corpus secrets :func:`make_text` put into ``text`` (their values)."""
    return [s.value for s in SECRETS if s.line in text]


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best wall-clock and best CPU seconds over ``repeat`` runs.

    CPU time is the steadier figure on a shared machine: other processes stretch wall time
    but not the CPU time this process itself uses.
    """
    wall = cpu = float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def main() -> None:
    """Print MB/s for the whole text at once and for per-message (~4 KB) calls."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    text = make_text(int(args.mb * 1_000_000))
    mb = len(text.encode("utf-8")) / 1e6
    messages = [text[i : i + 4096] for i in range(0, len(text), 4096)]

    def per_message() -> None:
        for m in messages:
            redact(m)

    redacted = redact(text)
    whole_wall, whole_cpu = _best(lambda: redact(text), args.repeat)
    msg_wall, msg_cpu = _best(per_message, args.repeat)
    leaked = [v for v in planted(text) if v in redacted]
    print(
        f"text: {mb:.1f} MB ({len(text):,} chars, ascii={text.isascii()}), rules: {len(rules())}, "
        f"secrets redacted: {redacted.count(REDACTED)}, planted kinds leaked: {len(leaked)}, "
        f"load average: {os.getloadavg()[0]:.2f}"
    )
    print(f"whole text : {mb / whole_wall:7.1f} MB/s wall  {mb / whole_cpu:7.1f} MB/s cpu")
    print(
        f"4 KB chunks: {mb / msg_wall:7.1f} MB/s wall  {mb / msg_cpu:7.1f} MB/s cpu  ({len(messages):,} calls)"
    )


if __name__ == "__main__":
    main()
