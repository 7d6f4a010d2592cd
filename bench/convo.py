"""Conversational benchmark: does a session's cold entry still hold the answers to questions about it?

Run: ``python bench/convo.py [--split dev|test|all] [--ratio 0.10] [--json] [--show N]``

The test set (bench/convo/, see its README) is multi-session chats between two people: names,
dates, places, events, plans and figures, amid small talk. Each session is written as a chat log
with ``**Name** (timestamp): text`` speaker lines (one markdown file per session) into a temporary
squad root, scribed's real pipeline compacts them (``Scribe.run_once(force=True)``, extractive
backend, ``compress.ratio`` as given, other settings default), and every cold entry is read back.

Score: **answer retention**, the share of questions whose answer (or an accepted variant) appears
in the output, compared case- and punctuation-insensitively. scribed's output is its entry without
the provenance line; the peers get the session as ``Name: text`` lines (what a user would paste,
without the timestamps) and a byte budget:

- ``head``: the first lines within the entry's size (provenance line included: the peer gets
  those bytes for content);
- ``head10``: the first lines within 10% of the session file's bytes;
- ``lexrank``: sumy's LexRank (bench/peers.py) at the entry's size.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import peers  # noqa: E402

DATA = ROOT / "bench" / "convo"
METHODS = ("scribed", "head", "head10", "lexrank")
TURN_SECONDS = 50  # time between two turns of a session


@dataclass
class Question:
    session: int
    text: str
    answers: list[str]


@dataclass
class Conversation:
    name: str
    split: str
    speakers: list[str]
    sessions: list[tuple[datetime, list[tuple[str, str]]]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def load(folder: Path) -> list[Conversation]:
    """Every conversation file in ``folder`` (format: bench/convo/README.md)."""
    out = []
    for path in sorted(folder.glob("*.txt")):
        conv = Conversation(path.stem, "dev", [])
        part = "head"
        for no, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("## session "):
                when = datetime.fromisoformat(line.removeprefix("## session ").replace("Z", "+00:00"))
                conv.sessions.append((when, []))
                part = "session"
            elif line == "## qa":
                part = "qa"
            elif part == "head":
                key, _, value = line.partition(":")
                if key == "speakers":
                    conv.speakers = [s.strip() for s in value.split(",")]
                elif key == "split":
                    conv.split = value.strip()
            elif part == "session":
                who, sep, text = line.partition(": ")
                if not sep or who not in conv.speakers:
                    raise SystemExit(f"{path}:{no}: a turn is 'Speaker: text' with a speaker of the file")
                conv.sessions[-1][1].append((who, text))
            else:
                k, q, a = (x.strip() for x in line.split("|"))
                conv.questions.append(Question(int(k), q, [x.strip() for x in a.split(";")]))
        _check(path, conv)
        out.append(conv)
    return out


def _check(path: Path, conv: Conversation) -> None:
    """Every answer is in its session: a question the session cannot answer measures nothing."""
    for q in conv.questions:
        if not 1 <= q.session <= len(conv.sessions):
            raise SystemExit(f"{path}: question {q.text!r} names session {q.session}")
        said = norm(" ".join(t for _, t in conv.sessions[q.session - 1][1]))
        if not any(norm(a) in said for a in q.answers):
            raise SystemExit(f"{path}: the answer to {q.text!r} is not in session {q.session}")


def norm(text: str) -> str:
    """Lowercase, letters and digits only, single spaces (quotes and punctuation never decide)."""
    return (
        " "
        + " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower().replace("’", "'").replace("'", "")).split())
        + " "
    )


def retained(q: Question, output: str) -> bool:
    out = norm(output)
    return any(norm(a) in out for a in q.answers)


def chat_log(when: datetime, turns: list[tuple[str, str]]) -> str:
    """A session as a chat log with ``**Name** (timestamp): text`` speaker lines."""
    lines = []
    for i, (who, text) in enumerate(turns):
        ts = (when + timedelta(seconds=TURN_SECONDS * i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        lines.append(f"**{who}** ({ts}): {text}\n")
    return "\n".join(lines)


def plain(turns: list[tuple[str, str]]) -> str:
    return "\n".join(f"{who}: {text}" for who, text in turns) + "\n"


def run_scribed(convs: list[Conversation], ratio: float, min_bytes: int) -> dict[tuple[str, int], str]:
    """Compact every session with the real pipeline; (conversation, session number) → entry."""
    from scribed import config as config_mod
    from scribed import log as log_mod
    from scribed.compress.entry import split_entries
    from scribed.core.scribe import Scribe

    with tempfile.TemporaryDirectory(prefix="scribed-convo-") as tmp:
        root = Path(tmp)
        (root / ".squad").mkdir()
        logs = root / "logs"
        for c in convs:
            for k, (when, turns) in enumerate(c.sessions, 1):
                f = logs / c.name / f"{when:%Y-%m-%d}-{c.name}-s{k}.md"
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(chat_log(when, turns), encoding="utf-8")
        cfg = config_mod.from_dict(
            {
                "root": str(root),
                "session": {"quiet_seconds": 0},
                "compress": {"backend": "extractive", "ratio": ratio, "min_bytes": min_bytes},
                "archive": {"transcripts": False},
                "log": {"format": "json", "level": "error"},
                "sources": [{"kind": "markdown", "path": str(logs), "agent": "chat"}],
            }
        )
        log_mod.configure("json", "error")
        scribe = Scribe(cfg)
        try:
            report = scribe.run_once(force=True)
        finally:
            scribe.close()
        if report.failed:
            raise SystemExit(f"scribed failed on {report.failed} sessions")
        out: dict[tuple[str, int], str] = {}
        for e in split_entries((root / ".squad/memory/cold/chat.md").read_text(encoding="utf-8"))[1]:
            m = re.search(r"source=`[^`]*?\d{4}-\d\d-\d\d-([^/`]+)-s(\d+)\.md`", e.text)
            if m:
                out[(m.group(1), int(m.group(2)))] = e.text
        return out


_PROVENANCE = re.compile(r"^- provenance: .*$\n?", re.MULTILINE)


def evaluate(
    convs: list[Conversation], ratio: float, min_bytes: int, methods: tuple[str, ...]
) -> dict[str, Any]:
    t0 = time.perf_counter()
    entries = run_scribed(convs, ratio, min_bytes)
    seconds = time.perf_counter() - t0
    rows = []
    for c in convs:
        for k, (when, turns) in enumerate(c.sessions, 1):
            entry = entries.get((c.name, k))
            if entry is None:
                raise SystemExit(f"no cold entry for {c.name} session {k}")
            size = len(entry.encode())
            file_bytes = len(chat_log(when, turns).encode())
            text = plain(turns)
            outputs = {
                "scribed": _PROVENANCE.sub("", entry),
                "head": peers.head(text, size),
                "head10": peers.head(text, file_bytes // 10),
                "lexrank": peers.lexrank(text, size) if "lexrank" in methods else "",
            }
            qs = [q for q in c.questions if q.session == k]
            rows.append(
                {
                    "conversation": c.name,
                    "split": c.split,
                    "session": k,
                    "bytes_in": file_bytes,
                    "entry_bytes": size,
                    "ratio": size / file_bytes,
                    "questions": len(qs),
                    "retained": {m: sum(retained(q, outputs[m]) for q in qs) for m in methods},
                    "missed": [q.text for q in qs if not retained(q, outputs["scribed"])],
                    "entry": entry,
                }
            )
    return {"rows": rows, "seconds": seconds}


def summarize(rows: list[dict[str, Any]], methods: tuple[str, ...]) -> dict[str, Any]:
    n = sum(r["questions"] for r in rows)
    ret = {m: sum(r["retained"][m] for r in rows) / n if n else 0.0 for m in methods}
    ratios = [r["ratio"] for r in rows]
    return {
        "sessions": len(rows),
        "questions": n,
        "retention": ret,
        "scribed_over_head": ret["scribed"] / ret["head"] if ret.get("head") else None,
        "scribed_over_head10": ret["scribed"] / ret["head10"] if ret.get("head10") else None,
        "ratio": {"p50": statistics.median(ratios), "mean": statistics.fmean(ratios), "max": max(ratios)},
        "bytes_in_p50": statistics.median(r["bytes_in"] for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=DATA, help="folder of conversation files")
    ap.add_argument("--split", choices=["dev", "test", "all"], default="all")
    ap.add_argument("--ratio", type=float, default=0.10, help="scribed's compress.ratio")
    ap.add_argument("--min-bytes", type=int, default=600, help="scribed's compress.min_bytes")
    ap.add_argument("--no-lexrank", action="store_true", help="skip the LexRank peer (sumy)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument(
        "--show", type=int, default=0, metavar="N", help="print N entries with their missed questions"
    )
    args = ap.parse_args(argv)
    convs = [c for c in load(args.data) if args.split in ("all", c.split)]
    if not convs:
        print(f"no conversations in {args.data} for split {args.split}", file=sys.stderr)
        return 1
    methods = tuple(m for m in METHODS if not (args.no_lexrank and m == "lexrank"))
    res = evaluate(convs, args.ratio, args.min_bytes, methods)
    rows = res["rows"]
    groups = {"all": rows} | {s: [r for r in rows if r["split"] == s] for s in ("dev", "test")}
    summary = {g: summarize(rs, methods) for g, rs in groups.items() if rs}
    if args.json:
        slim = [{k: v for k, v in r.items() if k != "entry"} for r in rows]
        print(
            json.dumps(
                {"ratio": args.ratio, "summary": summary, "rows": slim, "seconds": res["seconds"]}, indent=1
            )
        )
        return 0
    for r in rows[: args.show]:
        print(r["entry"])
        print("missed:", *r["missed"], sep="\n  - ")
        print()
    head = f"{'group':<6} {'sessions':>8} {'questions':>9} " + " ".join(f"{m:>8}" for m in methods)
    print(head + f" {'÷head':>6} {'÷head10':>8} {'ratio p50':>9}")
    for g, s in summary.items():
        cells = " ".join(f"{s['retention'][m]:>8.3f}" for m in methods)
        oh = s["scribed_over_head"]
        oh10 = s["scribed_over_head10"]
        print(
            f"{g:<6} {s['sessions']:>8} {s['questions']:>9} {cells} {oh if oh is None else f'{oh:.2f}':>6} "
            f"{oh10 if oh10 is None else f'{oh10:.2f}':>8} {s['ratio']['p50']:>9.3f}"
        )
    print(f"scribed: {res['seconds']:.1f} s for {len(rows)} sessions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
