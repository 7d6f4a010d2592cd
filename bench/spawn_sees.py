"""What the spawn sees: per session, what the default ``scribed context AGENT`` holds, next to Squad.

Run: ``python bench/spawn_sees.py [--sessions N] [--seed S] [--squad DIR] [--json]``

For each generated session (bench/gen.py, the four transcript formats; the Claude Code ones get
the agent's own plan, a TodoWrite list with a completed, an in-progress and a pending item, right
after the user's request), scribed's real pipeline runs twice in fresh roots:

* **live** (the session still running: ``session.quiet_seconds`` of a day): the default context is
  the live hot file; it should hold the **current task** (the user's request: its first
  sentence) and the plan's in-progress item;
* **after** (the session finished and compacted: the hot file seeded from its cold entry): the
  default context should hold the session's **outcome** (its closing "Done: …" sentence, whole),
  **each open item** (the planted TODOs left open, whole) and the **plan's pending items**.

Printed per session: the default context's bytes, and whether it holds each of these (``k/n``).
Side by side, what Squad loads at a spawn today: the agent's whole ``history.md`` plus
``decisions.md``. The generated sessions have no Squad files, so with ``--squad DIR`` (a real
team's ``.squad/``, e.g. one of ../shared/realdata/DEV.md's Squad repositories) session *i* is
given that team's *i*-th agent (cycling) and its files' bytes are printed with what they hold of
the same facts; without it those columns are empty.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import gen  # noqa: E402

_DONE = re.compile(r"^assistant: (Done: .*)$", re.MULTILINE)
_REQUEST = re.compile(r"^user: (.*)$", re.MULTILINE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass
class Truth:
    """What a spawn after (or during) this session should be told."""

    outcome: str
    open_items: list[str]
    task: str
    plan_open: list[str] = field(default_factory=list)  # pending and in progress
    plan_now: str = ""  # in progress


def _plan(sid: str) -> list[dict[str, str]]:
    word = sid.split("-")[0][:6]
    return [
        {"content": f"Write the {word} migration script", "status": "completed", "activeForm": "Writing"},
        {"content": f"Backfill the {word} rows for old tenants", "status": "in_progress", "activeForm": "Backfilling"},
        {"content": f"Announce the {word} change in the release notes", "status": "pending", "activeForm": "Announcing"},
    ]  # fmt: skip


def with_plan(data: bytes, sid: str) -> bytes:
    """A Claude Code transcript with a TodoWrite call (and its result) after the first user message."""
    lines = data.decode().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if '"type": "user"' in ln or '"type":"user"' in ln)
    first = json.loads(lines[at])
    call = dict(first, type="assistant", uuid=first["uuid"][:-4] + "a001", parentUuid=first["uuid"])
    call["message"] = {
        "id": "msg_01plan",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "tool_use", "id": "toolu_01plan", "name": "TodoWrite", "input": {"todos": _plan(sid)}}
        ],
    }
    done = dict(first, uuid=first["uuid"][:-4] + "a002", parentUuid=call["uuid"])
    done["message"] = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01plan", "content": "Todos have been modified."}
        ],
    }
    extra = [json.dumps(call) + "\n", json.dumps(done) + "\n"]
    return "".join([*lines[: at + 1], *extra, *lines[at + 1 :]]).encode()


def truth(s: gen.GenSession, planned: bool) -> Truth:
    done = _DONE.findall(s.plain)
    request = _REQUEST.search(s.plain)
    task = _SENTENCE.split(request.group(1).strip())[0] if request else ""
    t = Truth(
        outcome=done[-1] if done else "",
        open_items=[f.text for f in s.manifest.facts if f.type == "todo"],
        task=task,
    )
    if planned:
        items = _plan(s.id)
        t.plan_open = [i["content"] for i in items if i["status"] != "completed"]
        t.plan_now = items[1]["content"]
    return t


def run(root: Path, transcripts: Path, quiet: int) -> None:
    from scribed import config as config_mod
    from scribed import log as log_mod
    from scribed.core.scribe import Scribe

    cfg = config_mod.from_dict(
        {
            "root": str(root),
            "session": {"quiet_seconds": quiet},
            "compress": {"backend": "extractive"},
            "archive": {"transcripts": False},
            "log": {"format": "json", "level": "error"},
            "sources": gen.sources(transcripts),
        }
    )
    log_mod.configure("json", "error")
    scribe = Scribe(cfg)
    try:
        scribe.run_once()
    finally:
        scribe.close()


def spawn_text(root: Path, agent: str) -> str:
    from scribed.recall import context
    from scribed.tiers.cold import Layout

    return context.build(Layout(root), agent).text


def _holds(text: str, items: list[str]) -> tuple[int, int]:
    flat = " ".join(text.split())
    return sum(" ".join(i.split()) in flat for i in items), len(items)


def squad_agents(squad: Path) -> list[tuple[str, str]]:
    """(agent, what Squad loads at its spawn: history.md + decisions.md) for a team's agents."""
    decisions = (
        (squad / "decisions.md").read_text(errors="replace") if (squad / "decisions.md").is_file() else ""
    )
    return [
        (h.parent.name, h.read_text(errors="replace") + decisions)
        for h in sorted((squad / "agents").glob("*/history.md"))
    ]


def measure(s: gen.GenSession, planned: bool, squad: tuple[str, str] | None) -> dict[str, Any]:
    t = truth(s, planned)
    row: dict[str, Any] = {
        "session": s.id,
        "format": s.fmt,
        "kb": round(len(s.data) / 1024, 1),
        "planned": planned,
    }
    data = with_plan(s.data, s.id) if planned else s.data
    for phase, quiet in (("live", 86_400), ("after", 0)):
        with tempfile.TemporaryDirectory(prefix="scribed-spawn-") as tmp:
            root = Path(tmp)
            (root / ".squad/memory").mkdir(parents=True)
            transcripts = root / "transcripts"
            path = transcripts / s.rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            run(root, transcripts, quiet)
            text = spawn_text(root, s.agent)
        row[phase] = _score(text, t, phase)
    if squad is not None:
        name, loaded = squad
        row["squad"] = {"agent": name, **_score(loaded, t, "both")}
    return row


def _score(text: str, t: Truth, phase: str) -> dict[str, Any]:
    out: dict[str, Any] = {"bytes": len(text.encode())}
    if phase in ("live", "both"):
        out["task"] = _holds(text, [t.task] if t.task else [])
        out["plan_now"] = _holds(text, [t.plan_now] if t.plan_now else [])
    if phase in ("after", "both"):
        out["outcome"] = _holds(text, [t.outcome] if t.outcome else [])
        out["open_items"] = _holds(text, t.open_items)
        out["plan_open"] = _holds(text, t.plan_open)
    return out


def _kn(v: tuple[int, int] | list[int] | None) -> str:
    return "–" if not v or not v[1] else f"{v[0]}/{v[1]}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-kb", type=float, default=4)
    ap.add_argument("--max-kb", type=float, default=60)
    ap.add_argument("--squad", type=Path, help="a real team's .squad/ folder, for Squad's side")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    team = squad_agents(args.squad) if args.squad else []
    if args.squad and not team:
        print(f"no agents/*/history.md under {args.squad}", file=sys.stderr)
        return 2
    rows = []
    for i, s in enumerate(
        gen.iter_sessions(args.seed, args.sessions, min_kb=args.min_kb, max_kb=args.max_kb)
    ):
        rows.append(measure(s, s.fmt == "claude", team[i % len(team)] if team else None))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(
        f"{'session':<14} {'fmt':<8} {'KB':>6} | {'after B':>7} {'outcome':>7} {'open':>5} {'plan':>5} | "
        f"{'live B':>6} {'task':>4} {'now':>4} | {'squad B':>8} {'outc':>4} {'open':>5} {'plan':>5} {'task':>4}"
    )
    for r in rows:
        a, lv, sq = r["after"], r["live"], r.get("squad", {})
        print(
            f"{r['session'][:14]:<14} {r['format']:<8} {r['kb']:>6} | {a['bytes']:>7} {_kn(a['outcome']):>7} "
            f"{_kn(a['open_items']):>5} {_kn(a['plan_open']):>5} | {lv['bytes']:>6} {_kn(lv['task']):>4} "
            f"{_kn(lv['plan_now']):>4} | {sq.get('bytes', '–'):>8} {_kn(sq.get('outcome')):>4} "
            f"{_kn(sq.get('open_items')):>5} {_kn(sq.get('plan_open')):>5} {_kn(sq.get('task')):>4}"
        )
    tot = {
        k: [sum(r[p][k][i] for r in rows) for i in (0, 1)]
        for p, k in (("after", "outcome"), ("after", "open_items"), ("after", "plan_open"), ("live", "task"), ("live", "plan_now"))
    }  # fmt: skip
    med = sorted(r["after"]["bytes"] for r in rows)[len(rows) // 2]
    print(
        f"held: outcome {_kn(tot['outcome'])}, open items {_kn(tot['open_items'])}, plan pending "
        f"{_kn(tot['plan_open'])}, current task {_kn(tot['task'])}, plan in progress {_kn(tot['plan_now'])}; "
        f"median context {med} B"
        + (
            f"; Squad loads {sorted(r['squad']['bytes'] for r in rows)[len(rows) // 2]} B (median)"
            if team
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
