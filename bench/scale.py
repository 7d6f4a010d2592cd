"""Growth curves: how promotion, wiki merges and markdown reading scale with size.

Run: ``python bench/scale.py [--json] [--cold 100,1000,5000] [--wiki 1000,10000] [--mb 8,30,64]
[--sessions 500,5000] [--plot bench-scale.png] [--only promote,wiki,transcript,sessions]``.

* ``promote``: N cold entries (four agents, seeded, all past the TTL, with decisions some of which
  reverse earlier ones, reusable knowledge and error → fix pairs) → seconds of one ``promote()``,
  timed in a child process (a fresh interpreter: no warm caches). ``growth`` is each time over the
  previous one; linear work gives about the ratio of the sizes.
* ``wiki``: a wiki of N blocks over the five standard topics → seconds to load it, merge 100 new
  facts (some duplicates, some reversals) and flush, in a child process.
* ``transcript``: one Aider ``.aider.chat.history.md`` of about N MB (sessions of ~100 KB, one per
  ``# aider chat started at`` heading) → a real ``scribed run-once`` subprocess: wall seconds and
  its peak RSS (``ru_maxrss`` of the child, from ``os.wait4``).
* ``sessions``: N small sessions (~2 KB each, the four formats of ``bench/gen.py``, one file each)
  → one ``Scribe.run_once(force=True)`` in a child process: wall and CPU seconds, ms per session
  peak RSS, and the fsyncs (Python's ``os.fsync``; SQLite's own WAL syncs are one per ledger commit)
  and ledger commits per session. ``ms_per_session`` is an upper bound on the fixed cost per session (it includes the
  small per-session parse and compress work); ``workers`` runs it with that many pool processes.
  ``--repeat N`` (odd) runs each size N times, each in a fresh root removed after it, and reports
  the median run by wall time (its CPU figure is that run's) and the range of the N wall times;
  ``create_ms`` is what creating one small file cost just before each run (median): on a shared
  machine it moved from 0.03 to about 1 ms, and every session creates files. The fixed cost is
  the line through the two sizes' median runs; the ranges say how far single runs stray from it.

Each size runs in its own temporary root, deleted afterwards. The plot needs matplotlib; without
it the curves are printed only.
"""

from __future__ import annotations

import argparse
import itertools
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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_SYL = ["ka", "lo", "mi", "ren", "tas", "vu", "zor", "pel", "dri", "nox", "qua", "sel", "tum", "bar", "fen",
        "gil", "hod", "jex", "lux", "mor", "nep", "ost", "pry", "rim", "sug", "tev", "ulm", "vak", "wen", "yor"]  # fmt: skip
VOCAB = [a + b for a in _SYL for b in _SYL]  # 900 made-up words, drawn Zipf-like as words in prose are
_TOOLS = ["redis", "postgres", "sqlite", "kafka", "nats", "celery", "rq", "grpc", "rest", "protobuf",
          "msgpack", "orjson", "httpx", "aiohttp", "uvicorn", "gunicorn"]  # fmt: skip
_RULES = ["must validate the {w}", "must not log the {w}", "only runs on the {w}", "requires a {w} lock",
          "returns a {w} cursor", "retries the {w} three times", "never blocks the {w}", "always uses {w} time"]  # fmt: skip
_ERRORS = ["KeyError: '{w}'", "TimeoutError in {w}", "IntegrityError: duplicate {w}", "OOMKilled in {w}",
           "ConnectionResetError from {w}", "ValueError: bad {w}"]  # fmt: skip


def _w(rng: random.Random) -> str:
    """A word, rank drawn log-uniformly (Zipf's law: a few common words, a long tail of rare ones)."""
    return VOCAB[int(len(VOCAB) ** rng.random()) - 1]


# --- synthetic cold entries ----------------------------------------------------------------------
def _entry(i: int, rng: random.Random, agent: str, day: int) -> str:
    mod = f"{_w(rng)}_{_w(rng)}"
    tool, other = rng.sample(_TOOLS, 2)
    num = rng.randrange(10_000)
    decisions = [
        f"use {tool} for the {_w(rng)} {_w(rng)} in `{mod}` (src/{mod}/core_{num}.py) because it scales"
    ]
    if rng.random() < 0.25:
        decisions.append(f"use {tool} instead of {other} for {mod} {_w(rng)} writes (ticket {num})")
    if rng.random() < 0.05:
        decisions.append(f"reverse the earlier decision to use {other} for `{mod}`")
    knowledge = [
        f"`{mod}` {rng.choice(_RULES).format(w=_w(rng))} (case {num})",
        f"the {_w(rng)} {_w(rng)} batch size of {mod} is {num % 500 + 10} rows",
    ]
    err = rng.choice(_ERRORS).format(w=_w(rng))
    errors = [f"`{err}` in {mod} → pin the {tool} {_w(rng)} client to {num % 9}.{num % 7}"]
    stamp = f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
    return (
        f"### {stamp}: Work on {mod} #{i}\n"
        f"- provenance: id=e-{i:012x} · agent={agent} · session=s-{i} · compressor=extractive\n\n"
        f"#### Goal\nImprove {mod} ({num})\n"
        "#### Decisions\n"
        + "".join(f"- {d}\n" for d in decisions)
        + "#### Reusable knowledge\n".join(f"- {k}\n" for k in knowledge)
        + "#### Errors → fixes\n"
        + "".join(f"- {e}\n" for e in errors)
    )


def make_cold_root(base: Path, n: int, seed: int = 7) -> Path:
    """A root with ``n`` cold entries over four agents, oldest first, all past the TTL."""
    rng = random.Random(seed)
    root = base / f"cold-{n}"
    cold = root / ".squad" / "memory" / "cold"
    cold.mkdir(parents=True)
    (root / "scribed.toml").write_text('root = "."\n\n[compress]\nbackend = "extractive"\n')
    agents = ["picard", "riker", "data", "worf"]
    texts: dict[str, list[str]] = {a: [] for a in agents}
    for i in range(n):
        agent = agents[i % 4]
        texts[agent].append(_entry(i, rng, agent, day=i * 300 // max(n, 1)))
    for a, es in texts.items():
        (cold / f"{a}.md").write_text(f"# Cold memory: {a}\n\n" + "\n".join(es))
    return root


_PROMOTE_CHILD = """
import sys, time, json
from datetime import datetime, UTC
from scribed.config import load
from scribed.core.promote import promote
cfg = load(sys.argv[1])
t0 = time.perf_counter()
r = promote(cfg, as_of=datetime(2027, 6, 1, tzinfo=UTC))
dt = time.perf_counter() - t0
print(json.dumps({"seconds": dt, "promoted": len(r.promoted), "written": list(r.written)}))
"""


def _child(code: str, *args: str, timeout: float = 3600) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if p.returncode:
        raise RuntimeError(f"child failed ({p.returncode}): {p.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return out


def bench_promote(sizes: list[int], base: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for n in sizes:
        root = make_cold_root(base, n)
        r = _child(_PROMOTE_CHILD, str(root / "scribed.toml"))
        blocks = sum(
            p.read_text().count("\n### ") for p in (root / ".squad" / "memory" / "wiki").glob("*.md")
        )
        rows.append(
            {"entries": n, "seconds": round(r["seconds"], 3), "promoted": r["promoted"], "blocks": blocks}
        )
    return _growth(rows, "entries")


# --- wiki merges ---------------------------------------------------------------------------------
_WIKI_CHILD = """
import sys, time, json, random
from pathlib import Path
from scribed.tiers.wiki import Wiki, Fact, Source, TOPIC_KIND
folder, n = Path(sys.argv[1]), int(sys.argv[2])
rng = random.Random(3)
t0 = time.perf_counter()
w = Wiki(folder, folder.parent)
for i in range(100):
    topic = ("decisions", "conventions", "constraints", "contracts", "patterns")[i % 5]
    j = rng.randrange(n)
    text = (f"Fact {j} about module m{j % 97}: keep the m{j} buffer at {j} rows" if i % 3 == 0 else
            f"use tool{i} instead of tool{j % 50} for module m{j % 97} (added {i})" if i % 3 == 1 else
            f"New fact {i}: the w{i} service answers within {i} ms on host h{i}")
    w.add(Fact(topic=topic, kind=TOPIC_KIND[topic], text=text, date="2027-01-01",
               source=Source(date="2027-01-01", ref=f"e-{i:012x}", agent="bench")))
w.flush()
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""


def make_wiki(base: Path, n: int) -> Path:
    """A wiki folder of ``n`` blocks over the five standard topics, written by scribed itself."""
    from scribed.tiers.wiki import TOPIC_KIND, Wiki

    folder = base / f"wiki-{n}" / "wiki"
    folder.mkdir(parents=True)
    w = Wiki(folder, folder.parent)
    topics = list(TOPIC_KIND)
    for i in range(n):
        topic = topics[i % len(topics)]
        w.doc(topic).blocks.append(_block(i, topic))
        w.doc(topic).touched = True
    w.flush()
    return folder


def _block(i: int, topic: str) -> Any:
    from scribed.tiers.wiki import TOPIC_KIND, Block, Source

    day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
    text = f"Fact {i} about module m{i % 97}: keep the m{i} buffer at {i} rows"
    return Block(
        date=day, title=text[:60], kind=TOPIC_KIND[topic], body=text,
        sources=[Source(date=day, ref=f"e-{i + 1_000_000:012x}", agent="seed")],
    )  # fmt: skip


def bench_wiki(sizes: list[int], base: Path) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        folder = make_wiki(base, n)
        r = _child(_WIKI_CHILD, str(folder), str(n))
        rows.append({"blocks": n, "seconds": round(r["seconds"], 3)})
    return _growth(rows, "blocks")


# --- markdown transcripts ------------------------------------------------------------------------
def make_aider(base: Path, mb: float, seed: int = 5) -> Path:
    """A root whose one Aider history file holds about ``mb`` MB in sessions of ~100 KB."""
    rng = random.Random(seed)
    root = base / f"aider-{mb:g}"
    (root / ".squad").mkdir(parents=True)
    (root / "scribed.toml").write_text(
        'root = "."\n\n[compress]\nbackend = "extractive"\n\n'
        '[[sources]]\nkind = "markdown"\npath = "chat"\nagent = "data"\n'
    )
    (root / "chat").mkdir()
    path = root / "chat" / ".aider.chat.history.md"
    target = int(mb * 1_000_000)
    size = 0
    k = 0
    with path.open("w") as f:
        while size < target:
            day, hh = 1 + k // 24 % 28, k % 24
            parts = [f"\n# aider chat started at 2026-{1 + k // 672 % 12:02d}-{day:02d} {hh:02d}:00:00\n\n"]
            parts.append(f"#### Fix module m{k} so the export job stops failing\n\n")
            while sum(map(len, parts)) < 100_000:
                n = rng.randrange(10_000)
                parts.append(
                    f"src/m{k}/file_{n}.py\n```python\n" + "".join(f"    value_{n}_{j} = compute({j})\n" for j in range(40))
                    + f"```\n\nDecision: use queue{n} for module m{k} because it retries.\n\n"
                    f"> Tokens: {n}k sent, 1.{n % 10}k received.\n\n#### ok, next step for m{k}\n\n"
                )  # fmt: skip
            text = "".join(parts)
            f.write(text)
            size += len(text)
            k += 1
    past = time.time() - 7 * 86400
    os.utime(path, (past, past))
    return root


def run_once_rss(root: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of a real ``scribed run-once`` subprocess."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    env["PYTHONPATH"] = str(ROOT)
    errs = root / "run-once.stderr"  # a file, not a pipe: a full pipe would block the child
    t0 = time.perf_counter()
    with errs.open("wb") as err_fh:
        p = subprocess.Popen(
            [sys.executable, "-m", "scribed", "run-once", "--config", str(root / "scribed.toml"), "--force"],
            env=env, stdout=subprocess.DEVNULL, stderr=err_fh, cwd=root,
        )  # fmt: skip
        _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise RuntimeError(f"run-once failed ({p.returncode}): {errs.read_text()[-2000:]}")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def bench_transcript(sizes: list[float], base: Path) -> list[dict[str, Any]]:
    rows = []
    for mb in sizes:
        root = make_aider(base, mb)
        real = (root / "chat" / ".aider.chat.history.md").stat().st_size / 1e6
        secs, rss = run_once_rss(root)
        rows.append({"mb": round(real, 1), "seconds": round(secs, 2), "peak_rss_mb": round(rss, 1)})
    return _growth(rows, "mb")


# --- many small sessions ------------------------------------------------------------------------
_SESSIONS_CHILD = """
import sys, time, json, resource
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import gen
from scribed import config, log
from scribed.core.scribe import Scribe
log.configure("json", "error")
t = Path(sys.argv[1])
w = int(sys.argv[4])
cfg = config.from_dict({"root": sys.argv[2], "session": {"quiet_seconds": 0},
    "compress": {"backend": "extractive", "workers": w},
    "log": {"format": "json", "level": "error"}, "sources": gen.sources(t)})
s = Scribe(cfg)
import os
from scribed.core import pool
worker_cpu = [0.0]  # the pool's workers are the forkserver's children: read /proc as it closes
_close = pool.Prefetch.close
def _counted(self):
    for p in list(getattr(self._ex, "_processes", {}).values()):
        try:
            f = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
            worker_cpu[0] += (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    _close(self)
pool.Prefetch.close = _counted
count = {"fsync": 0, "commit": 0}
real_fsync = os.fsync
def fsync(fd):
    count["fsync"] += 1
    real_fsync(fd)
os.fsync = fsync
s.ledger._db.set_trace_callback(lambda sql: count.__setitem__("commit", count["commit"] + (sql.strip() == "COMMIT")))
t0, c0 = time.perf_counter(), time.process_time()
rep = s.run_once(force=True)
dt, cpu = time.perf_counter() - t0, time.process_time() - c0
s.close()
print(json.dumps({"seconds": dt, "cpu_seconds": cpu + worker_cpu[0],
    "compacted": rep.compacted, "failed": rep.failed, **count,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def make_small_sessions(base: Path, n: int, kb: float = 2, seed: int = 11) -> Path:
    """``n`` sessions of about ``kb`` KB each, one file per session; returns the transcripts folder."""
    sys.path.insert(0, str(ROOT / "bench"))
    import gen

    folder = base / f"small-{n}" / "transcripts"
    for i in range(n):
        gen.write_session(gen.make_session(seed, i, gen.FORMATS[i % 4], int(kb * 1024)), folder)
    return folder


def create_ms(folder: Path, n: int = 200) -> float:
    """Milliseconds to create (and write 4 KB to) one new file in ``folder``: every session writes
    new files (its transcript copy and sidecar), and on the machines measured this cost moved from
    0.03 to about 1 ms within an hour, so each run reports it beside its times."""
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    for i in range(n):
        fd = os.open(folder / f"probe-{i}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.write(fd, b"x" * 4096)
        os.close(fd)
    dt = time.perf_counter() - t0
    for i in range(n):
        (folder / f"probe-{i}").unlink()
    folder.rmdir()
    return 1000 * dt / n


def bench_sessions(
    sizes: list[int], base: Path, workers: int = 1, kb: float = 2, repeat: int = 1
) -> list[dict[str, Any]]:
    """One row per count: the median of ``repeat`` runs (each in a fresh root), with their spread."""
    rows = []
    for n in sizes:
        transcripts = make_small_sessions(base / f"kb{kb:g}", n, kb)
        mb = sum(p.stat().st_size for p in transcripts.rglob("*") if p.is_file()) / 1e6
        runs, probes = [], []
        for k in range(repeat):
            root = base / f"kb{kb:g}" / f"small-{n}" / f"root-{k}"
            root.mkdir()
            probes.append(create_ms(root / "probe"))
            runs.append(
                _child(_SESSIONS_CHILD, str(transcripts), str(root), str(ROOT / "bench"), str(workers))
            )
            shutil.rmtree(root)  # the next run starts on the file system the first one did
        runs.sort(key=lambda x: x["seconds"])
        r = runs[len(runs) // 2]  # the median run (by wall time)
        rows.append({
            "sessions": n, "kb_per_session": round(1000 * mb / n, 2), "mb": round(mb, 1), "workers": workers,
            "runs": repeat, "seconds": round(r["seconds"], 2),
            "ms_per_session": round(1000 * r["seconds"] / n, 2),
            "ms_min": round(1000 * runs[0]["seconds"] / n, 2), "ms_max": round(1000 * runs[-1]["seconds"] / n, 2),
            "cpu_ms_per_session": round(1000 * r["cpu_seconds"] / n, 2),
            "create_ms": round(sorted(probes)[len(probes) // 2], 3),
            "fsyncs_per_session": round(r["fsync"] / n, 2), "commits_per_session": round(r["commit"] / n, 3),
            "compacted": r["compacted"], "failed": r["failed"], "peak_rss_mb": round(r["rss_mb"], 1),
            "load": round(os.getloadavg()[0], 1),
        })  # fmt: skip
    return _growth(rows, "sessions")


def fixed_cost(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-session cost at zero bytes: for each session count run at two session sizes, the
    straight line through (KB, ms) at both sizes, read at 0 KB (what a session costs beyond its bytes)."""
    out = []
    by_n: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_n.setdefault(r["sessions"], []).append(r)
    for n, rs in by_n.items():
        if len(rs) < 2:
            continue
        small, large = min(rs, key=lambda r: r["kb_per_session"]), max(rs, key=lambda r: r["kb_per_session"])
        dk = large["kb_per_session"] - small["kb_per_session"]
        if dk <= 0:
            continue
        row: dict[str, Any] = {"sessions": n, "kb": f"{small['kb_per_session']}/{large['kb_per_session']}"}
        for key in ("ms_per_session", "cpu_ms_per_session"):
            slope = (large[key] - small[key]) / dk
            row[f"fixed_{key}"] = round(small[key] - slope * small["kb_per_session"], 2)
            row[f"{key}_per_kb"] = round(slope, 3)
        if small.get("runs", 1) > 1:  # the lines through single runs at the ends of both ranges
            ends = [
                a - (b - a) / dk * small["kb_per_session"]
                for a, b in ((small["ms_min"], large["ms_max"]), (small["ms_max"], large["ms_min"]))
            ]
            row["fixed_ms_range"] = f"{ends[0]:.2f}–{ends[1]:.2f}"
        out.append(row)
    return out


# --- output --------------------------------------------------------------------------------------
def _growth(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    for prev, row in itertools.pairwise(rows):
        if prev["seconds"] > 0:
            row["growth"] = round(row["seconds"] / prev["seconds"], 2)
            row["size_ratio"] = round(row[key] / prev[key], 2)
    return rows


def table(name: str, rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    out = [f"{name}", "| " + " | ".join(cols) + " |", "|" + " ---: |" * len(cols)]
    out += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(out)


def plot(results: dict[str, list[dict[str, Any]]], path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (the tables above hold the same curves)"
    axes_of = {
        "promote": ("entries", "seconds"),
        "wiki": ("blocks", "seconds"),
        "transcript": ("mb", "peak_rss_mb"),
        "sessions": ("sessions", "seconds"),
    }
    shown = [k for k in axes_of if results.get(k)]
    fig, axes = plt.subplots(1, len(shown), figsize=(5 * len(shown), 4), squeeze=False)
    for ax, name in zip(axes[0], shown, strict=True):
        x, y = axes_of[name]
        rows = results[name]
        ax.plot([r[x] for r in rows], [r[y] for r in rows], marker="o")
        if name == "transcript":
            ax2 = ax.twinx()
            ax2.plot([r[x] for r in rows], [r["seconds"] for r in rows], marker="s", color="tab:orange")
            ax2.set_ylabel("seconds (orange)")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(name)
    fig.tight_layout()
    fig.savefig(path)
    return f"plot saved to {path}"


def _ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",") if x]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cold", default="100,1000,5000")
    ap.add_argument("--wiki", default="1000,10000")
    ap.add_argument("--mb", default="8,30,64")
    ap.add_argument("--sessions", default="500,5000")
    ap.add_argument("--workers", type=int, default=1, help="pool processes for the sessions curve")
    ap.add_argument(
        "--session-kb",
        default="2",
        help="session sizes for the sessions curve; two give the fixed cost (0 KB)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per size of the sessions curve (median)")
    ap.add_argument("--only", default="promote,wiki,transcript,sessions")
    ap.add_argument("--plot", default="bench-scale.png")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if a.repeat < 1 or a.repeat % 2 == 0:
        ap.error("--repeat must be an odd number of runs (the median is one of them)")
    only = set(a.only.split(","))
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="scribed-scale-") as tmp:
        base = Path(tmp)
        if "promote" in only:
            results["promote"] = bench_promote(_ints(a.cold), base)
        if "wiki" in only:
            results["wiki"] = bench_wiki(_ints(a.wiki), base)
        if "transcript" in only:
            results["transcript"] = bench_transcript([float(x) for x in a.mb.split(",") if x], base)
        if "sessions" in only:
            rows = [
                row
                for kb in (float(x) for x in a.session_kb.split(",") if x)
                for row in bench_sessions(_ints(a.sessions), base, a.workers, kb, a.repeat)
            ]
            results["sessions"] = rows
            if fixed := fixed_cost(rows):
                results["fixed cost per session (0 KB intercept)"] = fixed
    if a.json:
        print(json.dumps(results, indent=2))
    else:
        for name, rows in results.items():
            print(table(f"## {name}", rows) + "\n")
    print(plot(results, Path(a.plot)), file=sys.stderr)


if __name__ == "__main__":
    main()
