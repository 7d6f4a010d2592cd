"""Daemon at rest: time to READY and CPU seconds per idle minute with N watched files (issue 15).

Run: ``python bench/daemon_idle.py [--files 5000] [--mode polling|auto|inotify] [--idle 60] [--json]``.
Creates N small Codex transcripts (about 100 per day folder) in a temp root, compacts them once
with ``scribed run-once`` (so the daemon starts on a root with nothing to do; ``--no-warm`` leaves
the backlog to the daemon's catch-up), starts ``scribed run`` as a real subprocess with a
``NOTIFY_SOCKET`` made here, and measures the seconds from spawn to ``READY=1``, then — once the
catch-up walk is logged and the queue is empty — the process's utime+stime (``/proc/PID/stat``)
over ``--idle`` seconds of no file activity. Acceptance: READY <= 1 s, <= 0.5 CPU-s per idle minute
with the polling observer. Everything stays under a temp folder; the daemon gets SIGTERM at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")
PER_FOLDER = 100


def proc_cpu(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def transcript(i: int, start: datetime) -> str:
    t = start + timedelta(minutes=i)
    stamp = t.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    recs: list[dict[str, Any]] = [
        {"timestamp": stamp, "type": "session_meta", "payload": {"id": f"s{i}", "cwd": "/r"}},
        {
            "timestamp": stamp,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"task {i}"}],
            },
        },
        {
            "timestamp": stamp,
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": f"Decision: use lib_{i} in src/m{i}.py."}],
            },
        },
    ]
    return "".join(json.dumps(r) + "\n" for r in recs)


def make_root(base: Path, files: int, mode: str, interval: float) -> Path:
    root, src = base / "root", base / "sessions"
    (root / ".squad").mkdir(parents=True)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    old = time.time() - 30 * 86400
    for i in range(files):
        day = start + timedelta(days=i // PER_FOLDER)
        folder = src / day.strftime("%Y/%m/%d")
        folder.mkdir(parents=True, exist_ok=True)
        p = folder / f"rollout-{day:%Y-%m-%d}-{i:05d}.jsonl"
        p.write_text(transcript(i, day))
        os.utime(p, (old, old))
    cfg = base / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[session]\nquiet_seconds = 2\n[compress]\nbackend = "extractive"\n'
        f'[log]\nformat = "json"\n[watch]\nmode = "{mode}"\npoll_interval = {interval}\n'
        f'[[sources]]\nkind = "codex"\npath = "{src}"\nagent = "worf"\n'
    )
    return cfg


def events(log: Path) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def wait_idle(proc: subprocess.Popen[bytes], log: Path, heartbeat: Path, timeout: float) -> float:
    """Seconds until the catch-up walk is logged and the heartbeat shows no queued or running work."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise SystemExit(f"daemon exited {proc.returncode}: {log.read_text()[-2000:]}")
        if any(e.get("event") == "caught_up" for e in events(log)) or any(
            e.get("event") == "ready" and "catch_up" in e for e in events(log)
        ):
            try:
                hb = json.loads(heartbeat.read_text())
            except (OSError, ValueError):
                hb = {}
            if hb.get("queue", 1) == 0 and hb.get("in_flight", 0) == 0 and hb.get("timers", 0) == 0:
                return time.monotonic() - t0
        time.sleep(0.5)
    raise SystemExit(f"daemon not idle after {timeout} s")


def _start_ms(log: Path) -> dict[str, Any]:
    """Milliseconds the daemon itself logged: from ``started`` to READY, and the catch-up walk."""
    out: dict[str, Any] = {}
    for e in events(log):
        if e.get("event") == "ready":
            out["start_to_ready_ms"] = e.get("ms")
        elif e.get("event") == "caught_up":
            out["walk_ms"] = e.get("ms")
    return out


ENV = {k: v for k, v in os.environ.items() if not k.startswith(("SCRIBED_", "NOTIFY_SOCKET", "WATCHDOG_"))}
# The code measured is the one on PYTHONPATH (default: this checkout); the processes run in the temp
# folder, so `python -m` does not pick up whatever tree the bench was started from.
ENV.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))


def prepare(args: argparse.Namespace, base: Path) -> tuple[Path, dict[str, Any]]:
    """The root with its files (and, unless --no-warm, compacted once by run-once)."""
    t = time.monotonic()
    cfg = make_root(base, args.files, "polling", args.interval)
    info: dict[str, Any] = {"files": args.files, "create_s": round(time.monotonic() - t, 1)}
    if args.warm and not args.ready_only:
        t = time.monotonic()
        cmd = [sys.executable, "-m", "scribed", "--config", str(cfg), "run-once"]
        subprocess.run(cmd, env=ENV, cwd=base, check=True, capture_output=True)
        info["warm_run_once_s"] = round(time.monotonic() - t, 1)
    return cfg, info


def measure(args: argparse.Namespace, base: Path, cfg: Path, mode: str) -> dict[str, Any]:
    """One daemon run in ``mode``: READY, then the idle window."""
    text = cfg.read_text()
    cfg.write_text(text[: text.index("mode = ")] + f'mode = "{mode}"' + text[text.index("\npoll_interval") :])
    env = ENV
    scribed = [sys.executable, "-m", "scribed", "--config", str(cfg)]
    for stale in (base / "n.sock", base / "daemon.log"):
        stale.unlink(missing_ok=True)
    sock_path = base / "n.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.settimeout(0.05)
    log = base / "daemon.log"
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [*scribed, "run"],
        env={**env, "NOTIFY_SOCKET": str(sock_path)},
        cwd=base,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    try:
        ready = None
        while ready is None and time.monotonic() - t0 < 60:
            try:
                if b"READY=1" in sock.recv(4096).split(b"\n"):
                    ready = time.monotonic() - t0
                    ready_cpu = proc_cpu(proc.pid)  # less noisy than wall time on a loaded machine
            except TimeoutError:
                if proc.poll() is not None:
                    raise SystemExit(f"daemon exited {proc.returncode}: {log.read_text()[-2000:]}") from None
        if ready is None:
            raise SystemExit("no READY=1 within 60 s")
        if args.ready_only:
            time.sleep(0.5)  # the "ready" log line follows READY=1
            return {
                "mode": mode,
                "ready_s": round(ready, 3),
                "ready_cpu_s": round(ready_cpu, 3),
                **_start_ms(log),
            }
        heartbeat = Path(str(cfg.parent / "root/.squad/memory/.scribed/heartbeat"))
        settle = wait_idle(proc, log, heartbeat, 1800)
        time.sleep(args.interval * 2)  # the first polls after the walk
        c0, w0 = proc_cpu(proc.pid), time.monotonic()
        time.sleep(args.idle)
        cpu, wall = proc_cpu(proc.pid) - c0, time.monotonic() - w0
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        sock.close()
    watch = next((e.get("watch") for e in events(log) if e.get("event") == "caught_up"), None)
    return {
        "mode": mode,
        "watch": watch,
        "poll_interval_s": args.interval,
        "ready_s": round(ready, 3),
        "ready_cpu_s": round(ready_cpu, 3),
        "idle_after_ready_s": round(settle, 1),
        "idle_window_s": round(wall, 1),
        "cpu_s": round(cpu, 3),
        "cpu_s_per_idle_min": round(cpu * 60 / wall, 3),
        "exit_code": proc.returncode,
        **_start_ms(log),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--mode", default="polling", help="watch.mode, or several: polling,auto")
    ap.add_argument("--interval", type=float, default=5.0, help="watch.poll_interval (the default is 5 s)")
    ap.add_argument("--idle", type=float, default=60.0, help="seconds of idle CPU sampling")
    ap.add_argument("--no-warm", dest="warm", action="store_false", help="leave the backlog to the daemon")
    ap.add_argument("--ready-only", action="store_true", help="stop at READY (no warm-up, no idle window)")
    ap.add_argument("--repeat", type=int, default=1, help="daemon runs per mode")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="scribed-idle-", dir="/tmp"))  # AF_UNIX paths must stay short
    try:
        cfg, info = prepare(args, base)
        runs = [measure(args, base, cfg, mode) for mode in args.mode.split(",") for _ in range(args.repeat)]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps({**info, "runs": runs}))
        return
    for k, v in info.items():
        print(f"{k:>22}: {v}")
    for run in runs:
        print("  " + ", ".join(f"{k}={v}" for k, v in run.items()))


if __name__ == "__main__":
    main()
