"""Daemon soak: ``scribed run`` under steady session arrivals, sampling RSS, fds and CPU over time.

Run: ``python bench/soak.py [--json] [--minutes 10] [--every 5]``. A generated session (all four
formats in turn, 4–60 KB) lands in a watched folder every ``--every`` seconds; the daemon compacts
each after ``session.quiet_seconds`` (2 s here; Copilot files end with ``session.shutdown``).
Every 10 s it records VmRSS, open fds, threads and CPU seconds of the daemon process from
``/proc``. The loop is bounded (``--minutes``), touches only local files, and stops the daemon
with SIGTERM at the end. A leak shows as ``rss_slope_mb_per_h`` or fds that keep growing.
"""

from __future__ import annotations

import argparse
import json
import signal
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

import gen  # noqa: E402
from throughput import _proc_cpu, _proc_status, daemon_command  # noqa: E402


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (t, y)."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    return sum((t - mt) * (y - my) for t, y in points) / den if den else 0.0


def _ledger_entries(path: Path) -> int | None:
    """Entries the daemon recorded (cold files fold old entries into digests, so count the ledger)."""
    import sqlite3

    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return int(con.execute("select count(*) from entries").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return None


def _arrive(s: gen.GenSession, transcripts: Path) -> int:
    """Write one session the way an agent's file appears whole (write, then rename); its size."""
    p = transcripts / s.rel
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name("." + p.name + ".part")
    tmp.write_bytes(s.data)
    tmp.rename(p)
    return len(s.data)


def _sample(pid: int) -> dict[str, Any]:
    """The daemon's memory, open files, threads and CPU time now."""
    st = _proc_status(pid)
    return {
        "rss_mb": round(st["VmRSS"], 1),
        "fds": st["fds"],
        "threads": st.get("Threads"),
        "cpu_s": round(_proc_cpu(pid), 2),
    }


def soak(minutes: float, every: float, workdir: Path, seed: int = 7) -> dict[str, Any]:
    cmd, note = daemon_command()
    if cmd is None:
        return {"error": note}
    transcripts = workdir / "transcripts"
    for f in gen.FORMATS:
        (transcripts / f).mkdir(parents=True, exist_ok=True)
    root = workdir / "squad"
    (root / ".squad").mkdir(parents=True, exist_ok=True)  # scribed refuses a root without .squad/
    cfg = gen.daemon_config(workdir / "scribed.toml", root, transcripts, quiet=2)
    log = (workdir / "daemon.log").open("w")
    proc = subprocess.Popen([*cmd, "--config", str(cfg), "run"], stdout=log, stderr=subprocess.STDOUT)
    samples: list[dict[str, Any]] = []
    arrivals = 0
    written = 0
    t0 = time.monotonic()
    end = t0 + minutes * 60
    next_arrival = t0 + 3
    next_sample = t0 + 1
    sessions = gen.iter_sessions(seed, 1_000_000, min_kb=4, max_kb=60)
    try:
        while time.monotonic() < end and proc.poll() is None:
            now = time.monotonic()
            if now >= next_arrival:
                written += _arrive(next(sessions), transcripts)
                arrivals += 1
                next_arrival += every
            if now >= next_sample:
                samples.append({"t": round(now - t0, 1), **_sample(proc.pid), "arrivals": arrivals})
                next_sample += 10
            time.sleep(0.2)
        time.sleep(8)  # let the last arrivals pass their quiet time
        alive = proc.poll() is None
        entries = _ledger_entries(root / ".squad/memory/.scribed/ledger.sqlite")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
    steady = [s for s in samples if s["t"] >= 60] or samples
    res: dict[str, Any] = {
        "minutes": minutes,
        "every_s": every,
        "arrivals": arrivals,
        "mb_written": round(written / 1e6, 1),
        "compacted": entries,
        "daemon_alive_at_end": alive,
        "exit_code": proc.returncode,
        "rss_mb": {
            "first": samples[0]["rss_mb"] if samples else None,
            "max": max((s["rss_mb"] for s in samples), default=None),
            "last": samples[-1]["rss_mb"] if samples else None,
        },
        "rss_slope_mb_per_h": round(_slope([(s["t"], s["rss_mb"]) for s in steady]) * 3600, 2),
        "fds": {
            "min": min((s["fds"] for s in samples), default=None),
            "max": max((s["fds"] for s in samples), default=None),
            "last": samples[-1]["fds"] if samples else None,
        },
        "cpu_s_total": samples[-1]["cpu_s"] if samples else None,
        "samples": samples,
    }
    if note:
        res["note"] = note
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--every", type=float, default=5, help="seconds between session arrivals")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="scribed-soak-") as tmp:
        res = soak(a.minutes, a.every, Path(tmp))
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print(json.dumps({k: v for k, v in res.items() if k != "samples"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
