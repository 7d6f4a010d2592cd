"""Real-data benchmark: scribed's cold entries against three peers at the same byte budget.

Run: ``python bench/realdata.py PATH… [--kind KIND] [--json] [--plot FILE.png] [--workdir DIR]``

Each PATH is a folder (or file) of real transcripts, e.g. the dev set in ../shared/realdata/DEV.md.
Its transcripts are copied into a temporary squad root (the input is only read), scribed's real
pipeline runs once on them (``Scribe.run_once(force=True)``, default compressor settings), and
each cold entry is read back and matched, through its provenance (source and ``lines A–B``), to
the text it summarises. That text (a markdown session runs up to the next session's first line;
JSONL records give their string fields) is also what the peers get, each with the entry's size
in bytes as its budget: head truncation, an evenly spaced line sample and sumy's LexRank
(bench/peers.py).

Score: identifier retention, the share of the session's distinct identifiers (paths, backticked
spans, ``#123`` references, error names, code names; :func:`peers.identifiers`) found verbatim in the
output, scribed's entry without its provenance line. Also counted: identifiers scribed cut
mid-token. No data (CI) prints where the dev set is described and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import peers  # noqa: E402
from peers import identifiers, mid_token_cuts, retention  # noqa: E402

DEV_MD = "../shared/realdata/DEV.md"
BIG = 16 * 1024
METHODS = ("scribed", "head", "sample", "lexrank")
KINDS = ("markdown", "claude", "codex", "copilot")
SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".squad", ".aider.tags.cache.v3"}
# Groups of detected files: (scribed source kind, glob naming the files).
GROUPS = {
    "aider": ("markdown", "**/.aider.chat.history.md"),
    "specstory": ("markdown", "**/.specstory/**/*.md"),
    "md": ("markdown", "**/*.md"),
    "codex": ("codex", "**/rollout-*.jsonl"),
    "copilot": ("copilot", "**/events.jsonl"),
    "claude": ("claude", "**/*.jsonl"),
}
_JSONL_SKIP = {"id", "uuid", "parentUuid", "sessionId", "session_id", "timestamp", "requestId", "type"}
_JSONL_SKIP |= {"signature", "encrypted_content", "role", "cwd", "version", "gitBranch", "userType"}

# --- data in --------------------------------------------------------------------------------


def group_of(rel: Path, forced: str | None) -> str | None:
    """The group (hence kind and glob) of a file, by its name; None = not a transcript."""
    name = rel.name
    if forced:
        exts = (".md", ".markdown", ".txt") if forced == "markdown" else (".jsonl",)
        return forced if name.endswith(exts) else None
    if name == ".aider.chat.history.md":
        return "aider"
    if name.endswith(".md"):
        return "specstory" if ".specstory" in rel.parts[:-1] else "md"
    if name.endswith(".jsonl"):
        return "codex" if name.startswith("rollout-") else "copilot" if name == "events.jsonl" else "claude"
    return None


def detect(path: Path, forced: str | None) -> list[tuple[Path, Path, str]]:
    """(source file, path to copy it to inside its group folder, group) for every transcript."""
    if path.is_file():
        parts = path.absolute().parts
        keep = len(parts) - parts[::-1].index(".specstory") - 1 if ".specstory" in parts else len(parts) - 1
        rel = Path(*parts[keep:])
        g = group_of(rel, forced)
        return [(path, rel, g)] if g else []
    found = []
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            rel = Path(folder, name).relative_to(path)
            g = group_of(rel, forced)
            if g and not Path(folder, name).is_symlink():
                found.append((Path(folder, name), rel, g))
    return found


def _toml(v: Any) -> str:
    return json.dumps(v) if isinstance(v, str) else str(v)


def write_config(root: Path, groups: set[str], forced: str | None) -> Path:
    """scribed.toml for the temp root: one source per group, quiet time 0, no cold folding."""
    lines = [
        f"root = {_toml(str(root))}",
        "[session]\nquiet_seconds = 0",
        "[cold]\nmax_bytes = 1000000000",  # no folding: one entry per session to score
        '[log]\nformat = "json"\nlevel = "warning"',
    ]
    for g in sorted(groups):
        kind, glob = (forced, "**/*") if forced else GROUPS[g]
        lines.append(
            f"[[sources]]\nkind = {_toml(kind)}\npath = {_toml(str(root / 'data' / g))}\n"
            f"agent = {_toml(g)}\nglob = {_toml(glob)}"
        )
    path = root / "scribed.toml"
    path.write_text("\n\n".join(lines) + "\n")
    return path


def _strings(obj: Any, key: str = "") -> Iterator[str]:
    if isinstance(obj, str):
        if key not in _JSONL_SKIP and obj.strip():
            yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, str(k))
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v, key)


def jsonl_text(raw: list[bytes]) -> str:
    """What a JSONL session says: its records' string fields (not ids, stamps or signatures)."""
    out: list[str] = []
    for line in raw:
        try:
            out.extend(_strings(json.loads(line)))
        except ValueError:
            out.append(line.decode("utf-8", "replace").rstrip("\n"))
    return "\n".join(out)


# --- scribed --------------------------------------------------------------------------------

_PROV = re.compile(r"^- provenance: .*$", re.M)
_SRC = re.compile(r"source=`(?P<src>[^`]*)` \((?P<kind>[\w-]+)\)")
_LINES = re.compile(r"\blines (\d+)[–-](\d+)")
_SESSION = re.compile(r"\bsession=(.*?) · ")


@dataclass
class Cold:
    """One cold entry read back, with the source file and line range it claims."""

    text: str
    source: Path
    kind: str
    session: str
    first: int
    last: int


def run_scribed(root: Path, cfg_path: Path, log_path: Path) -> tuple[Any, list[Cold], list[str]]:
    """Run the pipeline once in-process; (run report, entries read back, problems)."""
    from scribed import config as config_mod
    from scribed import log as log_mod
    from scribed.compress.entry import split_entries
    from scribed.core.scribe import Scribe

    with log_path.open("w") as fh:
        log_mod.configure("json", "warning", stream=fh)
        cfg = config_mod.load(str(cfg_path))
        scribe = Scribe(cfg)
        try:
            report = scribe.run_once(force=True)
        finally:
            scribe.close()
            log_mod.configure("json", "error", stream=sys.stderr)
    entries: list[Cold] = []
    problems: list[str] = []
    for f in sorted((root / ".squad/memory/cold").glob("*.md")):
        for e in split_entries(f.read_text(encoding="utf-8", errors="replace"))[1]:
            src, lines, sess = _SRC.search(e.text), _LINES.search(e.text), _SESSION.search(e.text)
            if "folded=" in e.text or not (src and lines):
                problems.append(f"{f.name}: entry without source and lines: {e.heading[:80]}")
                continue
            p = Path(src["src"])
            entries.append(
                Cold(e.text, p if p.is_absolute() else root / p, src["kind"], sess[1] if sess else "?",
                     int(lines[1]), int(lines[2]))
            )  # fmt: skip
    return report, entries, problems


def session_starts(src: Path) -> list[int]:
    """The first line of every session scribed reads in a markdown file, those it writes no entry
    for included (an Aider run that printed only its banner): a session's text ends before the next
    session starts, not at the next entry (which counted entry-less runs into the session before:
    a 14.6 KB session measured as 41 KB, ratio 0.03 for an entry at 0.09 of its own bytes)."""
    from scribed.sources import parse_file

    try:
        parsed = parse_file("markdown", src, "realdata")
    except Exception:  # a file scribed cannot parse: the entries' own lines decide, as before
        return []
    return sorted({s.turns[0].line for s in parsed.sessions if s.turns})


def session_texts(entries: list[Cold]) -> Iterator[tuple[Cold, str]]:
    """Each entry with the text it summarises, one source file in memory at a time."""
    by_src: dict[Path, list[Cold]] = {}
    for c in entries:
        by_src.setdefault(c.source, []).append(c)
    for src, group in sorted(by_src.items()):
        try:
            raw = src.read_bytes().splitlines(keepends=True)
        except OSError:
            continue
        group.sort(key=lambda c: (c.first, c.last))
        starts = session_starts(src) if group[0].kind == "markdown" else []
        for i, c in enumerate(group):
            last = c.last
            if c.kind not in ("claude", "codex", "copilot"):  # a markdown turn spans lines after B
                nxt = next((d.first for d in group[i + 1 :] if d.first > c.last), len(raw) + 1)
                nxt = min([nxt, *(n for n in starts if n > c.last)])  # a session with no entry too
                last = max(c.last, nxt - 1)
            chunk = raw[c.first - 1 : last]
            text = "".join(x.decode("utf-8", "replace") for x in chunk)
            yield c, (text if c.kind == "markdown" else jsonl_text(chunk))
        del raw


# --- scoring --------------------------------------------------------------------------------


def score(c: Cold, text: str) -> dict[str, Any]:
    """One session: sizes, identifier retention of scribed and of each peer at its budget, cuts."""
    budget = len(c.text.encode())
    body = _PROV.sub("", c.text, count=1)
    idents = identifiers(text)
    bytes_in = len(text.encode())
    outputs = {"scribed": body}
    errors: dict[str, str] = {}
    for name, fn in peers.PEERS.items():
        try:
            outputs[name] = fn(text, budget)
        except Exception as exc:  # a peer failing on one session is reported, not fatal
            errors[name] = f"{type(exc).__name__}: {exc}"[:200]
    cuts = mid_token_cuts(body, text, idents)
    return {
        "session": c.session[:80],
        "lines": f"{c.first}–{c.last}",
        "bytes_in": bytes_in,
        "entry_bytes": budget,
        "ratio": budget / bytes_in if bytes_in else 0.0,
        "identifiers": len(idents),
        "kinds": dict(Counter(idents.values())),
        "retention": {m: retention(idents, outputs[m]) if m in outputs else None for m in METHODS},
        "out_bytes": {m: len(outputs[m].encode()) for m in outputs},
        "errors": errors,
        "cuts": len(cuts),
        "cut_examples": cuts[:3],
    }


def _log_summary(log_path: Path) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    try:
        with log_path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("level") in ("warning", "error"):
                    counts[f"{rec['level']} {rec.get('event')}: {str(rec.get('reason', ''))[:80]}"] += 1
    except OSError:
        pass
    return {"count": sum(counts.values()), "top": counts.most_common(3)}


def run_path(
    arg: str, forced: str | None, work: Path, emit: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Copy one PATH's transcripts, run scribed on them, score every entry; the path's summary."""
    path = Path(arg)
    res: dict[str, Any] = {"path": arg, "status": "ok", "sessions": []}
    if not path.exists():
        res["status"] = "not found"
        return res
    found = detect(path, forced)
    if not found:
        res["status"] = "no transcript files"
        return res
    root = work / "root"
    for src, rel, g in found:
        dest = root / "data" / g / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    res["files"] = len(found)
    res["bytes"] = sum((root / "data" / g / rel).stat().st_size for _, rel, g in found)
    _progress(f"{arg}: {len(found)} files, {res['bytes'] / 1024:.0f} KB copied; running scribed")
    cfg = write_config(root, {g for *_, g in found}, forced)
    t0 = time.monotonic()
    try:
        report, entries, problems = run_scribed(root, cfg, work / "scribed.log")
    except Exception as exc:  # scribed refusing the input is a result to report, not a crash
        res["status"] = f"scribed failed: {type(exc).__name__}: {exc}"
        return res
    res.update(
        scribed_seconds=round(time.monotonic() - t0, 1),
        entries=len(entries),
        failed=report.failed,
        problems=problems[:5],
        warnings=_log_summary(work / "scribed.log"),
    )
    _progress(f"{arg}: {len(entries)} entries in {res['scribed_seconds']} s; scoring")
    data = root / "data"
    for n, (c, text) in enumerate(session_texts(entries), start=1):
        row = score(c, text)
        rel = c.source.relative_to(data) if c.source.is_relative_to(data) else c.source
        row.update(path=arg, file=str(Path(*rel.parts[1:])) if len(rel.parts) > 1 else str(rel))
        res["sessions"].append(row)
        emit(row)
        if n % 10 == 0:
            _progress(f"{arg}: scored {n}/{len(entries)}")
    with_entry = {c.source for c in entries}
    res["files_without_entry"] = sum(1 for _, rel, g in found if root / "data" / g / rel not in with_entry)
    res["bytes_in_sessions"] = sum(r["bytes_in"] for r in res["sessions"])
    return res


# --- totals and output ----------------------------------------------------------------------


def pct(values: list[float], q: float) -> float | None:
    """The q-th percentile (0–100), linear between closest ranks."""
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * q / 100
    lo = int(k)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (k - lo)


def _retention_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over sessions with identifiers that every method scored (a peer failure drops the
    session for all four, so each mean is over the same sessions)."""
    ok = [r for r in rows if r["identifiers"] and all(r["retention"][m] is not None for m in METHODS)]
    out: dict[str, Any] = {"sessions": len(ok)}
    for m in METHODS:
        kept = sum(r["retention"][m] * r["identifiers"] for r in ok)
        total = sum(r["identifiers"] for r in ok)
        out[m] = {
            "mean": sum(r["retention"][m] for r in ok) / len(ok) if ok else None,
            "weighted": kept / total if total else None,
        }
    for key in ("mean", "weighted"):
        s, h = out["scribed"][key], out["head"][key]
        out.setdefault("scribed_over_head", {})[key] = s / h if s is not None and h else None
    return out


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    big = [r for r in rows if r["bytes_in"] >= BIG]
    return {
        "sessions": len(rows),
        "sessions_16k": len(big),
        "bytes_in": sum(r["bytes_in"] for r in rows),
        "entry_bytes": sum(r["entry_bytes"] for r in rows),
        "ratio": {
            scope: {f"p{q}": pct([r["ratio"] for r in rs], q) for q in (10, 50, 90)}
            for scope, rs in (("all", rows), ("16k", big))
        },
        "retention": {"all": _retention_totals(rows), "16k": _retention_totals(big)},
        "peer_failures": dict(Counter(m for r in rows for m in r["errors"])),
        "cuts": sum(r["cuts"] for r in rows),
        "sessions_with_cuts": sum(1 for r in rows if r["cuts"]),
    }


def _f(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


HEADER = (
    f"{'file':<30} {'session':<16} {'lines':>11} {'KB in':>7} {'entry B':>7} {'ratio':>6} {'ids':>5} "
    + " ".join(f"{m:>7}" for m in METHODS)
    + f" {'cuts':>4}"
)


def fmt_row(r: dict[str, Any]) -> str:
    ret = " ".join(f"{'fail' if m in r['errors'] else _f(r['retention'][m], 2):>7}" for m in METHODS)
    return (
        f"{r['file'][-30:]:<30} {r['session'][-16:]:<16} {r['lines']:>11} {r['bytes_in'] / 1024:>7.1f} "
        f"{r['entry_bytes']:>7} {r['ratio']:>6.3f} {r['identifiers']:>5} {ret} {r['cuts']:>4}"
    )


def fmt_path(p: dict[str, Any]) -> str:
    if p["status"] != "ok":
        return f"skipped: {p['path']} {p['status']}"
    w = p["warnings"]
    top = "; ".join(f"{k} ×{n}" for k, n in w["top"])
    return (
        f"== {p['path']}: {p['files']} files, {p['bytes'] / 1024:.0f} KB; {p['entries']} entries "
        f"({p['failed']} failed) in {p['scribed_seconds']} s; sessions cover "
        f"{p['bytes_in_sessions'] / 1024:.0f} KB; files without an entry: {p['files_without_entry']}; "
        f"scribed warnings: {w['count']}" + (f" ({top})" if top else "")
    )


def fmt_totals(t: dict[str, Any]) -> str:
    lines = [
        f"totals: {t['sessions']} sessions ({t['sessions_16k']} ≥ 16 KB), "
        f"{t['bytes_in'] / 1024:.0f} KB in, {t['entry_bytes'] / 1024:.0f} KB of entries",
        f"{'ratio':<16}{'p10':>8}{'p50':>8}{'p90':>8}",
    ]
    for scope, label in (("all", "  all"), ("16k", "  ≥ 16 KB")):
        r = t["ratio"][scope]
        lines.append(f"{label:<16}" + "".join(f"{_f(r[k]):>8}" for k in ("p10", "p50", "p90")))
    ra, rb = t["retention"]["all"], t["retention"]["16k"]
    lines.append(
        f"{'retention':<16}{'mean':>8}{'weighted':>10}{'mean≥16K':>10}{'wtd≥16K':>10}"
        f"   (over {ra['sessions']} / {rb['sessions']} sessions)"
    )
    for m in (*METHODS, "scribed_over_head"):
        label = "  scribed/head" if m == "scribed_over_head" else f"  {m}"
        a, b = ra[m], rb[m]
        lines.append(
            f"{label:<16}{_f(a['mean']):>8}{_f(a['weighted']):>10}{_f(b['mean']):>10}{_f(b['weighted']):>10}"
        )
    fails = ", ".join(f"{k} {v}" for k, v in t["peer_failures"].items()) or "none"
    lines.append(f"peer failures: {fails}")
    lines.append(f"mid-token cuts in scribed's entries: {t['cuts']} (in {t['sessions_with_cuts']} sessions)")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    """Retention per method against session size: points, and the mean per size band (×2 bands)."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for m, color in zip(METHODS, ("C3", "C0", "C2", "C1"), strict=True):
        pts = [(r["bytes_in"] / 1024, r["retention"][m]) for r in rows if r["retention"][m] is not None]
        if not pts:
            continue
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, alpha=0.35, color=color)
        bands: dict[int, list[float]] = {}
        for kb, v in pts:
            bands.setdefault(math.floor(math.log2(max(kb, 0.5))), []).append(v)
        xs = sorted(bands)
        ax.plot([2 ** (b + 0.5) for b in xs], [sum(bands[b]) / len(bands[b]) for b in xs], "-o",
                color=color, label=m, markersize=4)  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("session size (KB, log)")
    ax.set_ylabel("identifier retention")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Identifier retention at scribed's entry size ({len(rows)} real sessions)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def _progress(msg: str) -> None:
    print(f"realdata: {msg}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("paths", nargs="*", metavar="PATH", help="folders or files of real transcripts")
    ap.add_argument("--kind", choices=KINDS, help="treat every transcript as this kind (default: by name)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    ap.add_argument("--plot", metavar="FILE.png", help="draw retention per method against session size")
    ap.add_argument("--workdir", metavar="DIR", help="keep the temp roots here (default: removed)")
    args = ap.parse_args(argv)
    out = sys.stderr if args.json else sys.stdout
    existing = []
    for p in args.paths:
        if Path(p).exists():
            existing.append(p)
        else:
            print(f"skipped: {p} not found", file=out)
    if not existing:
        msg = f"no real-data path found; the dev set is described in {DEV_MD} (nothing measured)"
        print(json.dumps({"message": msg, "paths": []}) if args.json else msg)
        return 0
    base = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="scribed-realdata-"))
    results: list[dict[str, Any]] = []
    try:
        for i, p in enumerate(existing, start=1):
            _progress(f"[{i}/{len(existing)}] {p}")
            work = base / f"path{i}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            if not args.json:
                print(HEADER)
            emit = (lambda _r: None) if args.json else (lambda r: print(fmt_row(r), flush=True))
            res = run_path(p, args.kind, work, emit)
            results.append(res)
            print(fmt_path(res), file=out, flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(base, ignore_errors=True)
    rows = [r for res in results for r in res["sessions"]]
    tot = totals(rows)
    if args.plot:
        plot(rows, Path(args.plot))
    if args.json:
        print(json.dumps({"paths": results, "totals": tot, "methods": list(METHODS)}, indent=1))
    else:
        print("\n" + fmt_totals(tot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
