"""Shared by the data-loss tests (issue 13): squad roots with Codex transcripts, the real CLI and daemon
in subprocesses, and counters of what the memory files hold (every compaction, folded or not)."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from scribed.compress.entry import split_entries

DEADLINE = 60.0
HERE = Path(__file__).parent
OLD = 1_700_000_000  # an mtime long past any quiet time

# Runs the real CLI after a hook module (this folder's lossy_hooks.py) patched what the test asks for.
HOOKED = "import lossy_hooks; lossy_hooks.install(); from scribed.cli.main import main; main()"


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("SCRIBED_", "LOSSY_", "NOTIFY_SOCKET"))}
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), out.get("PYTHONPATH", "")) if p)
    out.update(extra or {})
    return out


def scribed(*args: str, hooks: dict[str, str] | None = None, timeout: float = 300) -> tuple[int, str, str]:
    """``scribed ARGS`` in a subprocess: (exit code, stdout, stderr)."""
    p = subprocess.run(
        [sys.executable, "-c", HOOKED, *args], env=env(hooks), capture_output=True, timeout=timeout
    )
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def run_once(cfg: Path, *more: str, hooks: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    code, out, err = scribed("--config", str(cfg), "run-once", "--json", *more, hooks=hooks)
    try:
        return code, json.loads(out), err
    except json.JSONDecodeError:
        raise AssertionError(f"not JSON (exit {code}): {out!r}\nstderr: {err[-3000:]}") from None


def status(cfg: Path) -> dict[str, Any]:
    code, out, err = scribed("--config", str(cfg), "status", "--json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def codex(session: str, start: datetime, texts: list[tuple[str, str]], *, meta: bool = True) -> str:
    """Codex rollout JSONL: session_meta, then user/assistant messages 30 s apart."""
    recs: list[dict[str, Any]] = []
    t = start
    if meta:
        stamp = t.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        recs.append({"timestamp": stamp, "type": "session_meta", "payload": {"id": session, "cwd": "/r"}})
    for role, text in texts:
        t += timedelta(seconds=30)
        kind = "input_text" if role == "user" else "output_text"
        recs.append(
            {
                "timestamp": t.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "type": "response_item",
                "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
            }
        )
    return "".join(json.dumps(r) + "\n" for r in recs)


def facts(i: int, part: int = 0, n: int = 4) -> list[tuple[str, str]]:
    """A session's turns, each naming a fact unique to (session, part, turn)."""
    out = [("user", f"Session {i} part {part}: please fix the flaky job number {i}{part} in ci/job_{i}.yml.")]
    out += [
        (
            "assistant",
            f"Decision: pin worker_{i}_{part}_{j} to queue q{i}{part}{j} in src/w{i}/p{part}_{j}.py. "
            + "The rest of this reply is filler about the build so the session has some size. " * 6,
        )
        for j in range(n)
    ]
    return out


def make_root(
    tmp: Path, *, quiet: float = 1, extra: str = "", agents: int = 1, cold_max: int = 0, ttl_days: int = 3650
) -> tuple[Path, list[Path], Path]:
    """A squad root and ``agents`` Codex source folders (agents a0, a1, …). Returns (root, sources, cfg).

    Nothing is old enough to be promoted (``ttl_days``): a promotion the daemon runs at start would move
    entries into the wiki and its archive while these tests count entries. ``cold_max`` makes folds."""
    root = tmp / "root"
    (root / ".squad/memory/hot").mkdir(parents=True)
    srcs = []
    blocks = ""
    for a in range(agents):
        src = tmp / f"codex{a}"
        src.mkdir()
        srcs.append(src)
        blocks += f'[[sources]]\nkind = "codex"\npath = "{src}"\nagent = "a{a}"\nworkspace = "*"\n'
    cfg = tmp / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[session]\nquiet_seconds = {quiet}\n[compress]\nbackend = "extractive"\n'
        f'[watch]\nmode = "polling"\npoll_interval = 0.3\n[daemon]\nshutdown_grace = 5\n'
        f"[cold]\nttl_days = {ttl_days}\n{f'max_bytes = {cold_max}' if cold_max else ''}\n{extra}{blocks}"
    )
    return root, srcs, cfg


def write_session(
    path: Path, sid: str, i: int, part: int = 0, *, old: bool = True, append: bool = False
) -> None:
    start = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(hours=i, minutes=10 * part)
    text = codex(sid, start, facts(i, part), meta=not append)
    with path.open("a" if append else "w") as fh:
        fh.write(text)
    if old:
        os.utime(path, (OLD, OLD))


def memory_entries(root: Path) -> list[str]:
    """Every session entry scribed ever wrote under the root: in cold files and in the archives of
    folded or promoted entries (digests stand for entries listed there, so they are not counted)."""
    mem = root / ".squad/memory"
    texts = [p.read_text() for p in sorted((mem / "cold").glob("*.md"))]
    arch = mem / ".scribed/archive"
    for sub in ("cold", "promoted"):
        if (arch / sub).is_dir():
            texts += [gzip.decompress(p.read_bytes()).decode() for p in sorted((arch / sub).rglob("*.md.gz"))]
    return [e.text for text in texts for e in split_entries(text)[1] if "· session=" in e.text]


def session_counts(root: Path) -> Counter[str]:
    """How many entries each session has, keyed by ``session`` and line range (one per compaction)."""
    c: Counter[str] = Counter()
    for text in memory_entries(root):
        prov = text.split("\n", 2)[1]
        sid = prov.split("session=", 1)[1].split(" · ", 1)[0]
        lines = prov.split(" · lines ", 1)[1].split(" · ", 1)[0]
        c[f"{sid} lines {lines}"] += 1
    return c


def duplicates(root: Path) -> dict[str, int]:
    return {k: v for k, v in session_counts(root).items() if v > 1}


def wait_for(pred: Callable[[], Any], timeout: float = DEADLINE, what: str = "condition") -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@contextlib.contextmanager
def daemon(cfg: Path, log: Path, hooks: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """``scribed run`` in a subprocess until the block ends (SIGTERM, then kill)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOOKED, "--config", str(cfg), "run"],
        env=env(hooks),
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
    )
    try:
        hb = None
        root = Path(cfg.read_text().split('root = "', 1)[1].split('"', 1)[0])
        hb = root / ".squad/memory/.scribed/heartbeat"

        def ready() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"daemon exited {proc.returncode}: {log.read_text()[-3000:]}")
            return hb.exists()

        wait_for(ready, what="daemon heartbeat")
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def log_events(log: Path) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            ev = json.loads(line)
            if isinstance(ev, dict):
                out.append(ev)
    return out
