"""Peak memory of compacting one big transcript, per format (issue 32).

Run: ``python bench/memory.py [--mb 64] [--line-mb 100] [--formats markdown,claude,...] [--json]``.

For each format (markdown, Claude Code, Codex, Copilot CLI, Squad REPL) one session of about
``--mb`` MB (``bench/gen.py``'s events; Squad REPL's messages are a generated session's plain
text), and two files holding one ``--line-mb`` MB line (a markdown message, a Claude tool result),
each in a root of its own, compacted by a real ``scribed run-once --force`` subprocess. Its peak
RSS is the ``peak_rss_mb`` of its ``run_complete`` log line (VmHWM: ``ru_maxrss`` would report the
parent's size, which exec keeps); the wall time too. Files are made by a child process, so the
parent stays small. Targets (issue 32): 200 MB per 64 MB transcript, 300 MB per 100 MB line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

FORMATS = ("markdown", "claude", "codex", "copilot", "squad-repl")
LINES = ("markdown-line", "claude-line")
KIND = {"markdown-line": "markdown", "claude-line": "claude"}
OLD = 1_700_000_000  # files' mtime: long quiet
# Kinds whose sessions record where they ran, scoped to the root by default: the generated ones
# ran elsewhere, so every session is taken ("*"); a skipped file would measure nothing.
SCOPED = ("claude", "codex", "copilot")


def make(fmt: str, mb: float, folder: Path) -> Path:
    """Write one transcript of ``fmt`` of about ``mb`` MB under ``folder``; returns its path."""
    import gen

    target = int(mb * 1e6)
    if fmt in gen.FORMATS:
        path = gen.write_session(gen.make_session(1, 0, fmt, target), folder)
    elif fmt == "squad-repl":
        path = _squad(gen, target, folder)
    elif fmt == "markdown-line":
        path = folder / "markdown" / "pasted.md"
        path.parent.mkdir(parents=True)
        rng = random.Random(1)
        with path.open("w") as f:
            f.write("**User:** here is the whole log\n\n**Assistant:** ")
            n = 0
            while n < target:  # one line: words and no break
                words = " ".join(rng.choice(gen.PROSE) for _ in range(20_000)) + " "
                f.write(words)
                n += len(words)
            f.write("\n\n**User:** thanks\n")
    else:
        path = _claude_line(gen, target, folder)
    os.utime(path, (OLD, OLD))
    return path


def _squad(gen: Any, target: int, folder: Path) -> Path:
    """A Squad REPL session: generated sessions' plain text, a message per turn (a run of lines
    of one role), agents' replies dealt to three agents."""
    msgs: list[dict[str, str]] = []
    size, i = 0, 0
    while size < target:
        s = gen.make_session(1, i, "markdown", 2_000_000)
        run: list[str] = []
        role, held = "", 0
        for line in [*s.plain.splitlines(), "user: "]:
            who, _, text = line.partition(": ")
            who = "user" if who == "user" else "agent"
            if run and (who != role or size + held >= target):
                n = len(msgs)
                m = {
                    "role": role,
                    "content": "\n".join(run),
                    "timestamp": f"2026-11-02T{8 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
                }
                if role == "agent":
                    m["agentName"] = ("data", "riker", "worf")[n % 3]
                msgs.append(m)
                size += len(m["content"]) + 120
                run, held = [], 0
            role = who
            run.append(text)
            held += len(text) + 1
            if size >= target:
                break
        i += 1
    path = folder / "squad-repl" / "2026-11-02T08-00-00_0a1b2c3d.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"id": "0a1b2c3d", "createdAt": "2026-11-02T08:00:00Z", "messages": msgs}, indent=2)
    )
    return path


def _claude_line(gen: Any, target: int, folder: Path) -> Path:
    """A Claude Code session whose one tool result holds ``target`` bytes (one JSONL line)."""
    s = gen.make_session(1, 0, "claude", 200_000)
    lines = s.data.decode().splitlines()
    big = "\n".join(f"step {i}: ok" for i in range(target // 12))
    for k, ln in enumerate(lines):
        rec = json.loads(ln)
        content = rec.get("message", {}).get("content")
        if isinstance(content, list) and any(c.get("type") == "tool_result" for c in content):
            for c in content:
                if c.get("type") == "tool_result":
                    c["content"] = big
            lines[k] = json.dumps(rec)
            break
    path = folder / "claude" / "-work-repo" / "4f35a1b2-7c8d-4e9f-a0b1-c2d3e4f5a6b7.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def measure(fmt: str, mb: float, base: Path) -> dict[str, Any]:
    """Make the file (in a child), compact it with ``scribed run-once``; its peak RSS and time."""
    root = base / fmt
    (root / ".squad").mkdir(parents=True)
    folder = root / "src"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--make", fmt, str(mb), str(folder)]
    path = Path(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip())
    kind = KIND.get(fmt, fmt)
    src = folder / kind
    (root / "scribed.toml").write_text(
        f'root = "."\n[compress]\nbackend = "extractive"\n[log]\nformat = "json"\nlevel = "info"\n'
        f'[[sources]]\nkind = "{kind}"\npath = "{src}"\nagent = "data"\n'
        + ('workspace = "*"\n' if kind in SCOPED else "")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    env["PYTHONPATH"] = str(ROOT)
    errs = root / "run-once.stderr"
    t0 = time.perf_counter()
    with errs.open("wb") as err:
        proc = subprocess.run(
            [sys.executable, "-m", "scribed", "run-once", "--config", str(root / "scribed.toml"), "--force"],
            env=env, stdout=subprocess.DEVNULL, stderr=err, cwd=root, check=False,
        )  # fmt: skip
    wall = time.perf_counter() - t0
    done = [json.loads(x) for x in errs.read_text().splitlines() if '"run_complete"' in x]
    if proc.returncode or not done:
        raise RuntimeError(f"run-once failed on {fmt} ({proc.returncode}): {errs.read_text()[-2000:]}")
    if not done[-1]["compacted"]:  # a skipped file measures the interpreter, not the pipeline
        raise RuntimeError(f"run-once compacted nothing on {fmt}: {errs.read_text()[-2000:]}")
    return {
        "format": fmt,
        "mb": round(path.stat().st_size / 1e6, 1),
        "peak_rss_mb": done[-1]["peak_rss_mb"],
        "seconds": round(wall, 1),
        "compacted": done[-1]["compacted"],
        "target_mb": 300 if fmt in LINES else 200,
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--make"]:
        print(make(argv[1], float(argv[2]), Path(argv[3])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=64)
    ap.add_argument("--line-mb", type=float, default=100)
    ap.add_argument("--formats", default=",".join(FORMATS + LINES))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    rows = []
    for fmt in a.formats.split(","):
        with tempfile.TemporaryDirectory(prefix="scribed-mem-") as tmp:
            rows.append(measure(fmt, a.line_mb if fmt in LINES else a.mb, Path(tmp)))
        shutil.rmtree(tmp, ignore_errors=True)
        if not a.json:
            r = rows[-1]
            ok = "yes" if r["peak_rss_mb"] <= r["target_mb"] else "NO"
            print(
                f"{r['format']:14} {r['mb']:6} MB  peak RSS {r['peak_rss_mb']:6} MB  (target {r['target_mb']}: {ok})  {r['seconds']} s"
            )
    if a.json:
        print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
