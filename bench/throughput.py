"""Throughput benchmark: the pipeline without an LLM on a generated backlog, against the physical floor.

Run: ``python bench/throughput.py [--json] [--sessions 500] [--mb 200] [--workers N]``.

* ``mb_per_s`` / ``sessions_per_s``: one ``Scribe.run_once(force=True)`` with the extractive
  backend over the whole backlog (four formats, ``bench/gen.py``), in a child process so its
  ``peak_rss_mb`` (``ru_maxrss``, also ``VmHWM``) is the pipeline's alone. ``[compress] workers = 1``:
  one process, one core.
* ``plain``: the same runs on the plain path (``SCRIBED_JSON=stdlib``: the stdlib's ``json.loads``
  for every transcript line instead of msgspec), pooled too with ``--workers``, in the same
  invocation: its MB/s and ratio to the floor beside the new path's, and its entries' bytes (the
  same: the two decoders give the same values).
* ``pooled`` (``--workers N``, N > 1): the same run with ``[compress] workers = N`` (a process pool
  renders the entries; see ``scribed/core/pool.py``), its MB/s and its ratio to the floor, measured
  in the same invocation as the serial figures. CPU seconds include the workers' (read from /proc as
  the pool closes: they are the forkserver's children, so ``RUSAGE_CHILDREN`` misses them).
* ``stages``: a second run with the stage functions wrapped by timers (parse, redact = each
  session through the door and each rendered entry (before stop 37 only the latter: a session's
  redaction fell in ``other``), anchors,
  compress = extractive + fit + guard + render, hash, write = cold file + ledger + hot seed,
  copy = the redacted zstd transcript copy, its own redaction included, whether made before the
  lock or under it (before stop 37 only the latter: the former fell in ``other``). Only the outermost
  wrapped call is timed, so nested calls are not counted twice; the overhead of the wrappers is
  why this run is a separate one. ``other`` is the rest of the run's wall time (the batch's
  sync and the copies' sidecars among it).
* ``floor``: reading the same bytes and JSON-decoding every line (markdown: UTF-8 decoding):
  the least any transcript reader must do. ``floor_ratio`` = pipeline MB/s ÷ floor MB/s.
* ``floor_ratio_cpu``: the same ratio in CPU seconds (steadier on a shared machine).
* ``hot_file``: one run over a root holding only a ``--hot-mb`` MB agent-written hot file (issue 13).
* ``spawn``: the median wall and CPU time of ``scribed context AGENT`` over ``--spawn-runs`` fresh
  processes (3 KB hot file; bytecode written as in an installed package).
* ``idle``: a running ``scribed run`` daemon after catch-up: CPU seconds per idle minute and
  RSS, per watch mode (inotify and polling). Measured from ``/proc/<pid>``.

The backlog is cached under ``--backlog`` (default: the temp dir) keyed by seed, count and size.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import gen  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


# --- backlog -----------------------------------------------------------------------------------


def backlog(seed: int, sessions: int, mb: float, base: Path) -> Path:
    """Generate (once) ``sessions`` sessions totalling about ``mb`` MB; returns the transcripts folder."""
    folder = base / f"scribed-backlog-s{seed}-n{sessions}-{mb:g}mb"
    done = folder / ".complete"
    if done.exists():
        return folder / "transcripts"
    shutil.rmtree(folder, ignore_errors=True)
    import random

    rng = random.Random(seed)
    mean = mb * 1e6 / sessions
    lo = mean / 3.91  # log-uniform on [lo, 10·lo] has mean ≈ 3.91·lo
    sizes = gen.sizes(rng, sessions, lo / 1024, 10 * lo / 1024)
    scale = mb * 1e6 / sum(sizes)
    total = 0
    for i, size in enumerate(sizes):
        s = gen.make_session(seed, i, gen.FORMATS[i % 4], int(size * scale))
        gen.write_session(s, folder / "transcripts")
        total += len(s.data)
    done.write_text(json.dumps({"sessions": sessions, "bytes": total}))
    return folder / "transcripts"


def backlog_info(transcripts: Path) -> dict[str, Any]:
    return json.loads((transcripts.parent / ".complete").read_text())


# --- child processes -----------------------------------------------------------------------------


def _rss() -> dict[str, float]:
    """Peak RSS of this process: ru_maxrss (KiB on Linux) and VmHWM."""
    out = {"ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                out["vmhwm_mb"] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


def child_floor(transcripts: str) -> dict[str, Any]:
    """Read every file and decode every JSON line: the physical floor for a transcript reader."""
    files = sorted(p for p in Path(transcripts).rglob("*") if p.is_file())
    t0 = time.perf_counter()
    c0 = time.process_time()
    n = 0
    records = 0
    for p in files:
        data = p.read_bytes()
        n += len(data)
        if p.suffix == ".jsonl":
            for line in data.splitlines():
                if line.strip():
                    json.loads(line)
                    records += 1
        else:
            data.decode("utf-8")
    return {
        "bytes": n,
        "records": records,
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
    }


def _config(transcripts: str, root: str, workers: int = 1) -> Any:
    from scribed import config as config_mod
    from scribed import log as log_mod

    log_mod.configure("json", "error")
    return config_mod.from_dict(
        {
            "root": root,
            "session": {"quiet_seconds": 0},
            "compress": {"backend": "extractive", "workers": workers},
            "log": {"format": "json", "level": "error"},
            "sources": gen.sources(Path(transcripts)),
        }
    )


def _instrument() -> dict[str, float]:
    """Wrap the stage functions the pipeline calls with timers; only the outermost call is timed."""
    from scribed import sources
    from scribed.compress import anchors, entry, entry_fit, entry_guard
    from scribed.compress.extractive import ExtractiveCompressor
    from scribed.core import compact_resume, compact_session
    from scribed.core.ledger import Ledger
    from scribed.tiers import cold, live

    totals: dict[str, float] = defaultdict(float)
    depth = [0]

    def timed(stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if depth[0]:
                return fn(*args, **kwargs)
            depth[0] += 1
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                totals[stage] += time.perf_counter() - t
                depth[0] -= 1

        return wrapper

    sources.parse_file = timed("parse", sources.parse_file)
    sources.read_file = timed("parse", sources.read_file)  # a streamed file's later passes fall in "other"
    from scribed.session import door
    from scribed.tiers import hot_seed, transcripts

    transcripts.archive = timed("copy", transcripts.archive)  # its redaction and zstd included
    transcripts.produce = timed("copy", transcripts.produce)  # the copy made before the lock
    hot_seed.reseed = timed("write", hot_seed.reseed)

    door.redact = timed("redact", door.redact)  # one text through the door (a rendered entry, a path)
    # a session through the door: the name compact_session imported (patching door's would miss it)
    compact_session.redact_session = timed("redact", compact_session.redact_session)
    anchors.extract = timed("anchors", anchors.extract)
    ExtractiveCompressor.compress = timed("compress", ExtractiveCompressor.compress)  # type: ignore[method-assign]
    entry_fit.fit_with_room = timed("compress", entry_fit.fit_with_room)
    entry_guard.guard = timed("compress", entry_guard.guard)
    entry.render = timed("compress", entry.render)
    compact_resume.sha256_prefix = timed("hash", compact_resume.sha256_prefix)
    compact_session.sha256_prefix = timed("hash", compact_session.sha256_prefix)
    cold.append = timed("write", cold.append)
    live.clear = timed("write", live.clear)
    live.refresh = timed("write", live.refresh)
    Ledger.add_entry = timed("write", Ledger.add_entry)  # type: ignore[method-assign]
    Ledger.upsert_source = timed("write", Ledger.upsert_source)  # type: ignore[method-assign]

    real_fsync = os.fsync

    def fsync(fd: Any) -> None:  # inclusive: how much of "write" is waiting for the disk
        t = time.perf_counter()
        try:
            real_fsync(fd)
        finally:
            totals["fsync (inside write)"] += time.perf_counter() - t

    os.fsync = fsync
    return totals


def child_pipeline(transcripts: str, root: str, stages: bool, workers: int = 1) -> dict[str, Any]:
    """One run_once over the backlog in this fresh process."""
    totals = _instrument() if stages else {}
    from scribed.core.scribe import Scribe

    worker_cpu = _count_worker_cpu() if workers > 1 else [0.0]

    Path(root).mkdir(parents=True, exist_ok=True)
    cfg = _config(transcripts, root, workers)
    scribe = Scribe(cfg)
    t0 = time.perf_counter()
    c0 = time.process_time()
    rep = scribe.run_once(force=True)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0 + worker_cpu[0]
    from_pool = scribe.compactor.sessions.from_pool
    scribe.close()
    out = {
        "seconds": wall,
        "cpu_seconds": cpu,
        "sessions": rep.sessions,
        "compacted": rep.compacted,
        "failed": rep.failed,
        "bytes_in": sum(e.bytes_in for e in rep.entries),
        "bytes_out": sum(e.bytes_out for e in rep.entries),
        "from_pool": from_pool,
        **_rss(),
    }
    if stages:
        out["stages"] = dict(totals)
    return out


def hot_text(mb: float) -> str:
    """An agent-written hot file of about ``mb`` MB: generated sessions' plain text, as notes."""
    parts: list[str] = []
    n = 0
    for s in gen.iter_sessions(11, 100_000, min_kb=20, max_kb=120, formats=("markdown",)):
        parts.append(s.plain)
        n += len(s.plain)
        if n > mb * 1e6:
            break
    return "# Current work\n\n" + "\n\n".join(parts)


def child_hot(mb: str, root: str) -> dict[str, Any]:
    """One run_once over a root holding only one big agent-written hot file (issue 13)."""
    from scribed.core.scribe import Scribe

    hot = Path(root) / ".squad/memory/hot/data.md"
    hot.parent.mkdir(parents=True, exist_ok=True)
    hot.write_text(hot_text(float(mb)), encoding="utf-8")
    size = hot.stat().st_size
    from scribed import config as config_mod

    cfg = config_mod.from_dict(
        {"root": root, "session": {"quiet_seconds": 0}, "compress": {"backend": "extractive"}, "sources": []}
    )
    scribe = Scribe(cfg)
    t0, c0 = time.perf_counter(), time.process_time()
    rep = scribe.run_once(force=True)
    out = {"bytes": size, "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
    scribe.close()
    return {**out, "compacted": rep.compacted}


def measure_spawn(runs: int, workdir: Path) -> dict[str, Any]:
    """Wall and CPU time of ``scribed context AGENT`` (a fresh interpreter, as at an agent's spawn)
    over a 3 KB hot file, the size the design gives hot memory. Bytecode writing is allowed, as in
    an installed package (``PYTHONDONTWRITEBYTECODE`` in this shell would otherwise make every run
    recompile every module)."""
    hot = workdir / ".squad/memory/hot/data.md"
    hot.parent.mkdir(parents=True, exist_ok=True)
    actions = "".join(
        f"- step {i}: edited `src/export/mod{i}.py` to retry with backoff and jitter\n" for i in range(40)
    )
    hot.write_text(
        f"# Hot memory: data\n\n## Current task\nFix the export retry loop in `src/export/run.py`.\n\n{actions}"
    )
    cmd = [sys.executable, "-m", "scribed", "context", "data", "--root", str(workdir)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(cmd, capture_output=True, check=True, env=env)  # warm: byte-compiled files, page cache
    times, cpus = [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return {
        "runs": runs,
        "median_ms": round(1000 * statistics.median(times), 1),
        "min_ms": round(1000 * min(times), 1),
        "cpu_median_ms": round(1000 * statistics.median(cpus), 1),
        "load": round(os.getloadavg()[0], 2),
    }


def _child(kind: str, *args: str, plain: bool = False) -> dict[str, Any]:
    """A child process; ``plain``: the stdlib's JSON decoder instead of msgspec (``SCRIBED_JSON``)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, *args]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("SCRIBED_JSON", None)
    if plain:
        env["SCRIBED_JSON"] = "stdlib"
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child {kind} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- idle daemon -----------------------------------------------------------------------------------


def _count_worker_cpu() -> list[float]:
    """The pool's workers' CPU seconds, read from /proc as the pool closes: they are the
    forkserver's children, not this process's, so ``RUSAGE_CHILDREN`` never holds them."""
    from scribed.core import pool

    total = [0.0]
    close = pool.Prefetch.close

    def counted(self: Any) -> None:
        for proc in list(getattr(self._ex, "_processes", {}).values()):
            with contextlib.suppress(OSError, IndexError, ValueError):
                total[0] += _proc_cpu(proc.pid)
        close(self)

    pool.Prefetch.close = counted  # type: ignore[method-assign]
    return total


def _proc_cpu(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _proc_status(pid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, val = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(val.split()[0]) / 1024
        elif key == "Threads":
            out[key] = int(val)
    out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return out


SHIM = (
    "import sys; from scribed.cli.main import main; from scribed.cli.daemon import run_cmd; "
    "main.add_command(run_cmd); sys.argv[0] = 'scribed'; main()"
)


def daemon_command() -> tuple[list[str] | None, str]:
    """How to start ``scribed run``: the real command, a shim around the unregistered one, or nothing."""
    real = [sys.executable, "-m", "scribed"]
    probe = subprocess.run([*real, "run", "--help"], capture_output=True, text=True, check=False)
    if probe.returncode == 0:
        return real, ""
    shim = [sys.executable, "-c", SHIM]
    probe = subprocess.run([*shim, "run", "--help"], capture_output=True, text=True, check=False)
    if probe.returncode == 0:
        return shim, (
            "`python -m scribed run` is not registered in scribed/cli/main.py yet; measured through a shim that "
            "adds scribed.cli.daemon.run_cmd to the click group (same code path)"
        )
    return None, f"`scribed run` unavailable: {probe.stderr.strip().splitlines()[-1:]}"


def measure_idle(seconds: float, mode: str, workdir: Path) -> dict[str, Any]:
    """Start the daemon on a small root, let it catch up, then measure its idle cost."""
    cmd, note = daemon_command()
    if cmd is None:
        return {"cpu_s_per_min": None, "rss_mb": None, "note": note}
    transcripts = workdir / "transcripts"
    for s in gen.iter_sessions(5, 8, max_kb=40):
        gen.write_session(s, transcripts)
    root = workdir / "squad"
    (root / ".squad").mkdir(parents=True, exist_ok=True)  # scribed refuses a root without .squad/
    cfg = gen.daemon_config(
        workdir / "scribed.toml",
        root,
        transcripts,
        quiet=60,
        extra=f'[watch]\nmode = "{mode}"\npoll_interval = 5.0\n',
    )
    log = (workdir / f"daemon-{mode}.log").open("w")
    proc = subprocess.Popen([*cmd, "--config", str(cfg), "run"], stdout=log, stderr=subprocess.STDOUT)
    try:
        cold = root / ".squad/memory/cold"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if cold.exists() and len(list(cold.glob("*.md"))) >= 4:
                break
            time.sleep(0.5)
        if proc.poll() is not None:
            return {
                "cpu_s_per_min": None,
                "rss_mb": None,
                "note": f"daemon exited with {proc.returncode}",
                **({"via": note} if note else {}),
            }
        caught_up = cold.exists() and len(list(cold.glob("*.md"))) >= 4
        time.sleep(5)  # let catch-up work and the first heartbeat settle
        before = _proc_status(proc.pid)
        c0 = _proc_cpu(proc.pid)
        t0 = time.monotonic()
        samples = []
        while time.monotonic() - t0 < seconds:
            time.sleep(min(10.0, seconds))
            samples.append(_proc_status(proc.pid)["VmRSS"])
        c1 = _proc_cpu(proc.pid)
        elapsed = time.monotonic() - t0
        after = _proc_status(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        res = {
            "mode": mode,
            "seconds": round(elapsed, 1),
            "cpu_s_per_min": round((c1 - c0) / elapsed * 60, 4),
            "rss_mb": round(after["VmRSS"], 1),
            "rss_mb_start": round(before["VmRSS"], 1),
            "rss_mb_max_sampled": round(max(samples), 1) if samples else None,
            "threads": after.get("Threads"),
            "fds": after.get("fds"),
            "caught_up": caught_up,
            "exit_code_on_sigterm": code,
        }
        if note:
            res["note"] = note
        return res
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


# --- main ------------------------------------------------------------------------------------------


def run(
    sessions: int,
    mb: float,
    seed: int,
    base: Path,
    *,
    idle_seconds: float,
    idle_modes: list[str],
    repeat: int = 3,
    extra: tuple[float, int, int] = (0, 0, 1),
) -> dict[str, Any]:
    """The figures; ``extra`` = (hot-file MB, spawn runs, pool workers), 0 (workers: 1) skipping each."""
    hot_mb, spawn_runs, workers = extra
    transcripts = backlog(seed, sessions, mb, base)
    info = backlog_info(transcripts)
    total_mb = info["bytes"] / 1e6
    floor = _child("floor", str(transcripts))
    runs = []
    for i in range(repeat):  # fresh root each time; the median run is reported
        with tempfile.TemporaryDirectory(prefix="scribed-tp-") as tmp:
            runs.append(_child("pipeline", str(transcripts), str(Path(tmp) / f"r{i}"), "0"))
    runs.sort(key=lambda r: r["seconds"])
    plain = runs[len(runs) // 2]
    with tempfile.TemporaryDirectory(prefix="scribed-tp-") as tmp:
        staged = _child("pipeline", str(transcripts), str(Path(tmp) / "b"), "1")
    floor_mbps = total_mb / floor["seconds"]
    mbps = total_mb / plain["seconds"]
    inner = {k: v for k, v in staged["stages"].items() if "inside" in k}
    outer = {k: v for k, v in staged["stages"].items() if "inside" not in k}
    stages = {k: round(v, 3) for k, v in sorted(outer.items(), key=lambda kv: -kv[1])}
    stages["other"] = round(staged["seconds"] - sum(outer.values()), 3)
    stages.update({k: round(v, 3) for k, v in inner.items()})
    res: dict[str, Any] = {
        "backlog": {"sessions": sessions, "mb": round(total_mb, 1), "seed": seed, "path": str(transcripts)},
        "mb_per_s": round(mbps, 2),
        "mb_per_cpu_s": round(total_mb / plain["cpu_seconds"], 2),
        "sessions_per_s": round(plain["sessions"] / plain["seconds"], 2),
        "seconds": round(plain["seconds"], 2),
        "cpu_seconds": round(plain["cpu_seconds"], 2),
        "compacted": plain["compacted"],
        "bytes_out": plain["bytes_out"],
        "failed": plain["failed"],
        "peak_rss_mb": round(max(max(r["ru_maxrss_mb"], r.get("vmhwm_mb", 0)) for r in runs), 1),
        "runs_mb_per_s": [round(total_mb / r["seconds"], 2) for r in runs],
        "runs_mb_per_cpu_s": [round(total_mb / r["cpu_seconds"], 2) for r in runs],
        "stages_seconds": stages,
        "stages_share": {k: round(v / staged["seconds"], 3) for k, v in stages.items()},
        "stages_run_seconds": round(staged["seconds"], 2),
        "floor": {
            "mb_per_s": round(floor_mbps, 2),
            "seconds": round(floor["seconds"], 2),
            "what": "read every file + json.loads every line",
        },
        "floor_ratio": round(mbps / floor_mbps, 3),
        # CPU seconds: steadier than wall time on a shared machine (others stretch wall time only)
        "floor_ratio_cpu": round(floor["cpu_seconds"] / plain["cpu_seconds"], 3),
    }
    res["plain"] = _plain(transcripts, repeat, total_mb, floor, workers)
    if workers > 1:
        res["pooled"] = _pooled(transcripts, workers, repeat, total_mb, floor)
    if hot_mb:
        with tempfile.TemporaryDirectory(prefix="scribed-hot-") as tmp:
            res["hot_file"] = _child("hot", str(hot_mb), str(Path(tmp) / "root"))
    if spawn_runs:
        with tempfile.TemporaryDirectory(prefix="scribed-spawn-") as tmp:
            res["spawn"] = measure_spawn(spawn_runs, Path(tmp))
    res["idle"] = {}
    for mode in idle_modes:
        with tempfile.TemporaryDirectory(prefix="scribed-idle-") as tmp:
            res["idle"][mode] = measure_idle(idle_seconds, mode, Path(tmp))
    return res


def _plain(
    transcripts: Path, repeat: int, total_mb: float, floor: dict[str, Any], workers: int
) -> dict[str, Any]:
    """The same runs on the plain path (the stdlib's JSON decoder), in the same invocation."""
    runs = []
    for i in range(repeat):
        with tempfile.TemporaryDirectory(prefix="scribed-tp-") as tmp:
            runs.append(_child("pipeline", str(transcripts), str(Path(tmp) / f"s{i}"), "0", plain=True))
    runs.sort(key=lambda r: r["seconds"])
    mid = runs[len(runs) // 2]
    mbps = total_mb / mid["seconds"]
    out: dict[str, Any] = {
        "what": "SCRIBED_JSON=stdlib: json.loads for every transcript line",
        "mb_per_s": round(mbps, 2),
        "seconds": round(mid["seconds"], 2),
        "cpu_seconds": round(mid["cpu_seconds"], 2),
        "compacted": mid["compacted"],
        "bytes_out": mid["bytes_out"],
        "floor_ratio": round(mbps / (total_mb / floor["seconds"]), 3),
    }
    if workers > 1:
        out["pooled"] = _pooled(transcripts, workers, repeat, total_mb, floor, plain=True)
    return out


def _pooled(
    transcripts: Path,
    workers: int,
    repeat: int,
    total_mb: float,
    floor: dict[str, Any],
    *,
    plain: bool = False,
) -> dict[str, Any]:
    """The pipeline with a pool of ``workers`` processes: the median of ``repeat`` runs."""
    runs = []
    for i in range(repeat):
        with tempfile.TemporaryDirectory(prefix="scribed-tp-") as tmp:
            runs.append(
                _child("pipeline", str(transcripts), str(Path(tmp) / f"p{i}"), "0", str(workers), plain=plain)
            )
    runs.sort(key=lambda r: r["seconds"])
    mid = runs[len(runs) // 2]
    mbps = total_mb / mid["seconds"]
    return {
        "workers": workers,
        "mb_per_s": round(mbps, 2),
        "seconds": round(mid["seconds"], 2),
        "cpu_seconds": round(mid["cpu_seconds"], 2),
        "compacted": mid["compacted"],
        "from_pool": mid["from_pool"],
        "floor_ratio": round(mbps / (total_mb / floor["seconds"]), 3),
        "runs_mb_per_s": [round(total_mb / r["seconds"], 2) for r in runs],
        "peak_rss_mb_parent": round(max(r["ru_maxrss_mb"] for r in runs), 1),
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        kind, *rest = argv[1:]
        if kind == "hot":
            out = child_hot(rest[0], rest[1])
        else:
            out = (
                child_floor(rest[0])
                if kind == "floor"
                else child_pipeline(rest[0], rest[1], rest[2] == "1", int(rest[3]) if len(rest) > 3 else 1)
            )
        print(json.dumps(out))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--backlog", type=Path, default=Path(tempfile.gettempdir()), help="where to cache the backlog"
    )
    ap.add_argument("--idle-seconds", type=float, default=60)
    ap.add_argument("--repeat", type=int, default=3, help="pipeline runs; the median is reported")
    ap.add_argument(
        "--idle-modes", default="auto,polling", help="watch modes to measure idle cost in; '' skips"
    )
    ap.add_argument("--hot-mb", type=float, default=5, help="size of the agent-written hot file run; 0 skips")
    ap.add_argument("--spawn-runs", type=int, default=10, help="`scribed context` runs (median); 0 skips")
    ap.add_argument("--workers", type=int, default=1, help="also run with a pool of N processes (N > 1)")
    a = ap.parse_args(argv)
    modes = [m for m in a.idle_modes.split(",") if m]
    res = run(
        a.sessions,
        a.mb,
        a.seed,
        a.backlog,
        idle_seconds=a.idle_seconds,
        idle_modes=modes,
        repeat=max(1, a.repeat),
        extra=(a.hot_mb, a.spawn_runs, a.workers),
    )
    if a.json:
        print(json.dumps(res, indent=1))
        return 0
    print(
        f"backlog: {res['backlog']['sessions']} sessions, {res['backlog']['mb']} MB\n"
        f"pipeline: {res['mb_per_s']} MB/s ({res['sessions_per_s']} sessions/s), peak RSS {res['peak_rss_mb']} MB, "
        f"{res['compacted']} entries, {res['failed']} failed\n"
        f"floor (read + JSON decode): {res['floor']['mb_per_s']} MB/s; pipeline/floor = {res['floor_ratio']} "
        f"(in CPU seconds: {res['mb_per_cpu_s']} MB/s; {res['floor_ratio_cpu']}; load {os.getloadavg()[0]:.1f})\n"
        f"stages (s): {res['stages_seconds']}"
    )
    pl = res["plain"]
    print(
        f"plain path (stdlib JSON): {pl['mb_per_s']} MB/s, pipeline/floor = {pl['floor_ratio']} "
        f"(new path {res['floor_ratio']}); {pl['compacted']} entries, {pl['bytes_out']} B out "
        f"(new path {res['compacted']}, {res['bytes_out']} B)"
        + (
            f"; pooled {pl['pooled']['mb_per_s']} MB/s, {pl['pooled']['floor_ratio']}"
            if "pooled" in pl
            else ""
        )
    )
    if "pooled" in res:
        p = res["pooled"]
        print(
            f"pooled ({p['workers']} workers): {p['mb_per_s']} MB/s, pipeline/floor = {p['floor_ratio']} "
            f"(serial {res['floor_ratio']}), {p['from_pool']} of {p['compacted']} entries from the pool; "
            f"{p['cpu_seconds']} CPU s with the workers' (serial {res['cpu_seconds']})"
        )
    if "hot_file" in res:
        h = res["hot_file"]
        print(f"hot file {h['bytes'] / 1e6:.1f} MB: {h['seconds']:.2f} s wall, {h['cpu_seconds']:.2f} s CPU")
    if "spawn" in res:
        sp = res["spawn"]
        print(
            f"scribed context: median {sp['median_ms']} ms wall, {sp['cpu_median_ms']} ms CPU "
            f"of {sp['runs']} runs (min {sp['min_ms']} ms; load {sp['load']})"
        )
    for mode, idle in res["idle"].items():
        print(f"idle daemon ({mode}): {idle}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
