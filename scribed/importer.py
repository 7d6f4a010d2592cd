"""``scribed import``: seed the tiers from a legacy Squad repo, reading and never changing it.

Sources: ``.squad/agents/{agent}/history.md`` (``## Core Context``, ``###`` entries, ``📌 Team
update`` lines) and ``.squad/decisions.md`` (``###`` blocks with ``**By:**``/``**What:**``/
``**Why:**``). Each history entry or decision becomes a cold entry through the same extractive
summary, :func:`scribed.entry.fit` and :func:`scribed.cold.append` as live sessions, so the format
and the fold are the same. Entries older than ``cold.ttl_days`` go straight through promotion's
rules: their durable facts land in the wiki and the entry is archived; the rest is archived.

Pinned context goes to the wiki, never into a cold file's budget: the Core Context becomes one
block in ``wiki/agent-{agent}.md`` (a changed Core Context supersedes the previous block), and
team updates become ``decisions`` blocks decided by their author (a team update copied into many
histories is one block). Undated entries take the history file's last git commit date, else its
mtime, with a warning. Every unit's id hashes its file and text, and is recorded in the ledger, so
a second import adds nothing. With ``stateBackend`` ``orphan`` or ``two-layer`` in
``.squad/config.json``, mutable state lives on the ``squad-state`` branch: import refuses to write.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from scribed import anchors as anchors_mod
from scribed import cold, entry
from scribed.cold import Layout
from scribed.compress.extractive import ExtractiveCompressor
from scribed.config import Config
from scribed.entry import iso, one_line, parse_date, split_entries
from scribed.fsutil import ensure_dir, root_lock, write_gzip_archive
from scribed.ledger import Ledger
from scribed.log import get as get_logger
from scribed.log import progress
from scribed.models import Anchor, Session, Summary, Turn
from scribed.names import normalize_name, slug
from scribed.promote import extract_facts, wiki_of
from scribed.redact import redact
from scribed.wiki import Fact, Source, Wiki, safe_body, valid_topic

Clock = Callable[[], datetime]
STATE_BRANCH_BACKENDS = ("orphan", "two-layer")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_H2 = re.compile(r"^## (?P<t>.+?)\s*#*\s*$")
_H3 = re.compile(r"^### (?P<t>.+?)\s*#*\s*$")
_DATE_IN = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")
_TEAM = re.compile(
    r"📌\s*\**\s*Team update\s*\**\s*\((?P<ts>[^)]*)\)\s*\**\s*:?\s*\**\s*(?P<what>.+?)"
    r"(?:\s+[—–-]{1,2}\s+decided by\s+(?P<by>[^.\n]+?))?\s*\.?\s*$",
    re.I,
)
_FIELD = re.compile(r"^\s*(?:[-*]\s+)?\*\*(?P<k>[A-Za-z][A-Za-z ]{0,20}?)\s*:\s*\*\*\s*(?P<v>.*)$")
_DURABLE = re.compile(
    r"\b(?:always|never|must|convention|cannot|can't|only|limit|requires?|api|endpoint|schema|contract|"
    r"interface|returns?|learned|lesson|gotcha|turns out|pattern|prefer|avoid|note that|root cause)\b",
    re.I,
)


class ImportRefused(ValueError):
    """The repo cannot be imported as asked (state on another branch, bad agent name); exit 2."""


def utcnow() -> datetime:
    return datetime.now(UTC)


# --- reading the legacy files ------------------------------------------------------------------
@dataclass(slots=True)
class Unit:
    """One history entry or decision: what becomes one cold entry."""

    agent: str
    kind: str  # squad-history | squad-decisions
    source: str  # path relative to the root
    title: str
    date: datetime
    dated: bool
    text: str  # the entry's own text (without its heading)
    first_line: int
    last_line: int
    decision: tuple[str, str] | None = None  # (what, why) for decisions.md blocks

    @property
    def ref(self) -> str:
        ident = f"{self.source}\0{self.title}\0{self.text.strip()}"
        return "i-" + hashlib.sha256(ident.encode()).hexdigest()[:12]


@dataclass(slots=True)
class TeamUpdate:
    when: datetime | None
    what: str
    by: str


@dataclass(slots=True)
class History:
    agent: str
    path: Path
    core: str = ""
    team: list[TeamUpdate] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)


def state_backend(squad: Path) -> str:
    """``stateBackend`` from ``.squad/config.json`` ("" when unset or no file)."""
    path = squad / "config.json"
    if not path.exists():
        return ""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportRefused(f"{path}: cannot read it ({exc}); not importing") from None
    value = data.get("stateBackend", "") if isinstance(data, dict) else ""
    return str(value or "")


def file_date(path: Path, root: Path) -> tuple[datetime, str]:
    """The file's last git commit date (``git log -1 --format=%cI``), else its mtime; and which."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        p = subprocess.run(
            ["git", "log", "-1", "--format=%cI", "--", str(path.relative_to(root))],
            cwd=root,
            capture_output=True,
            timeout=15,
            check=False,
        )
        if p.returncode == 0:
            dt = parse_date(p.stdout.decode().strip())
            if dt is not None:
                return dt.astimezone(UTC), "git"
    return datetime.fromtimestamp(path.stat().st_mtime, UTC), "mtime"


def _heading_date(text: str) -> tuple[datetime | None, str]:
    """A date in a heading and the heading's title without it."""
    m = _DATE_IN.search(text)
    if not m:
        return None, text.strip()
    dt = parse_date(m.group(0))
    title = (text[: m.start()] + text[m.end() :]).strip()
    title = re.sub(r"^[\s:—–\-|·]+|[\s:—–\-|·]+$", "", title)
    title = re.sub(r"\(\s*\)|\[\s*\]", "", title).strip()
    return dt, title


def _lines_outside_fences(text: str) -> list[tuple[int, str, bool]]:
    """(1-based line number, line, inside a fence)."""
    out = []
    fence = ""
    for no, line in enumerate(text.splitlines(), start=1):
        m = _FENCE.match(line)
        if fence:
            out.append((no, line, True))
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(" `~"):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            out.append((no, line, True))
            continue
        out.append((no, line, False))
    return out


def _team_update(line: str, agent: str) -> TeamUpdate | None:
    m = _TEAM.search(line)
    if not m:
        return None
    by = m.group("by") or ""
    who = normalize_name(re.split(r"[\s,(/]", by.strip(" *_"), maxsplit=1)[0]) if by.strip() else None
    return TeamUpdate(parse_date(m.group("ts")), m.group("what").strip(" *_"), who or agent)


def parse_history(agent: str, path: Path, rel: str) -> History:
    """Split a ``history.md`` into Core Context, team updates and ``###`` entries (dates resolved later)."""
    text = path.read_bytes().decode("utf-8", "replace")
    h = History(agent=agent, path=path)
    core: list[str] = []
    section = ""
    cur: dict[str, Any] | None = None
    loose: dict[str, Any] | None = None
    units_raw: list[dict[str, Any]] = []

    def close() -> None:
        nonlocal cur, loose
        for block in (cur, loose):
            if block is not None and "".join(block["lines"]).strip():
                units_raw.append(block)
        cur = loose = None

    for no, line, fenced in _lines_outside_fences(text):
        if not fenced:
            tu = _team_update(line, agent)
            if tu is not None:
                h.team.append(tu)
                continue
            m2 = _H2.match(line)
            if m2:
                close()
                section = m2.group("t").strip()
                continue
            m3 = _H3.match(line)
            if m3 and not section.casefold().startswith("core context"):
                close()
                cur = {"title": m3.group("t"), "lines": [], "first": no, "last": no}
                continue
        if section.casefold().startswith("core context"):
            core.append(line)
        elif cur is not None:
            cur["lines"].append(line + "\n")
            cur["last"] = no
        elif section and line.strip():
            if loose is None:
                loose = {"title": section, "lines": [], "first": no, "last": no}
            loose["lines"].append(line + "\n")
            loose["last"] = no
    close()
    h.core = "\n".join(core).strip("\n")
    for raw in units_raw:
        when, title = _heading_date(raw["title"])
        body = "".join(raw["lines"]).strip("\n")
        title = title or one_line(body, 80)
        h.units.append(
            Unit(
                agent=agent,
                kind="squad-history",
                source=rel,
                title=title,
                date=when or datetime.min.replace(tzinfo=UTC),
                dated=when is not None,
                text=body,
                first_line=raw["first"],
                last_line=raw["last"],
            )
        )
    return h


def parse_decisions(path: Path, rel: str) -> list[Unit]:
    """``### `` blocks of ``decisions.md`` with their By/What/Why (and optional Date) fields."""
    text = path.read_bytes().decode("utf-8", "replace")
    units: list[Unit] = []
    cur: dict[str, Any] | None = None

    def close() -> None:
        if cur is None:
            return
        fields: dict[str, str] = cur["fields"]
        loose = " ".join(cur["loose"]).strip()
        when, title = _heading_date(cur["title"])
        if when is None and fields.get("date"):
            when = parse_date(fields["date"])
        what = fields.get("what") or loose or title
        why = fields.get("why", "")
        by = fields.get("by", "")
        who = normalize_name(re.split(r"[\s,(/]", by.strip(" *_"), maxsplit=1)[0]) if by.strip() else None
        body = "\n".join(cur["lines"]).strip("\n")
        units.append(
            Unit(
                agent=who or "squad",
                kind="squad-decisions",
                source=rel,
                title=title or one_line(what, 80),
                date=when or datetime.min.replace(tzinfo=UTC),
                dated=when is not None,
                text=body,
                first_line=cur["first"],
                last_line=cur["last"],
                decision=(what, why),
            )
        )

    for no, line, fenced in _lines_outside_fences(text):
        m3 = None if fenced else _H3.match(line)
        if m3:
            close()
            cur = {
                "title": m3.group("t"),
                "fields": {},
                "loose": [],
                "lines": [],
                "first": no,
                "last": no,
                "key": "",
            }
            continue
        if cur is None:
            continue
        if not fenced and _H2.match(line):
            close()
            cur = None
            continue
        cur["lines"].append(line)
        cur["last"] = no
        f = None if fenced else _FIELD.match(line)
        if f:
            cur["key"] = f.group("k").strip().lower()
            cur["fields"][cur["key"]] = f.group("v").strip()
        elif line.strip() and cur["key"] in ("what", "why"):
            cur["fields"][cur["key"]] = (cur["fields"][cur["key"]] + " " + line.strip()).strip()
        elif line.strip():
            cur["loose"].append(line.strip())
    close()
    return units


# --- turning a unit into a cold entry ------------------------------------------------------------
def _summary(unit: Unit, budget: int) -> tuple[Summary, list[Anchor], Session]:
    """The extractive summary of one unit (the same compressor as live sessions)."""
    turns: list[Turn] = []
    line_no = unit.first_line + 1
    offset = 0
    for para in re.split(r"\n\s*\n", redact(unit.text)):
        offset += len(para.encode()) + 2
        if para.strip():
            turns.append(Turn("assistant", para.strip(), "message", None, line_no, offset))
        line_no += para.count("\n") + 2
    sess = Session(
        agent=unit.agent,
        session_id=unit.ref,
        source=Path(unit.source),
        kind=unit.kind,
        turns=turns,
        start=unit.date,
        end=unit.date,
        ended=True,
    )
    found = anchors_mod.extract(sess)
    s = ExtractiveCompressor().compress(sess, found, budget).summary
    s.goal = redact(one_line(unit.title, 160))
    if unit.decision is not None:
        what, why = (redact(x) for x in unit.decision)
        s.decisions = [one_line(what, 400) + (f" — why: {one_line(why, 400)}" if why.strip() else "")]
        s.knowledge = []
        s.outcome = ""
    else:
        have = {*s.decisions, *s.knowledge}
        for t in turns:
            for line in t.text.splitlines():
                item = line.strip().lstrip("-*+>").strip()
                if len(item) < 12 or item in have or item.startswith(("#", "```", "|")):
                    continue
                if anchors_mod._DECISION.search(item) or anchors_mod._DECISION_VERB.search(item):
                    continue
                if _DURABLE.search(item) and len(s.knowledge) < 12:
                    s.knowledge.append(item)
                    have.add(item)
    return s, found, sess


def render_unit(unit: Unit, cfg: Config, *, fit: bool) -> str:
    """The unit as a cold entry (fitted to the compress budget when it goes to the cold tier)."""
    bytes_in = len(unit.text.encode()) or 1
    ccfg = cfg.compress
    budget = int(min(ccfg.max_bytes, max(ccfg.min_bytes, bytes_in * ccfg.ratio)))
    summary, found, sess = _summary(unit, budget)
    meta = entry.EntryMeta(
        entry_id=unit.ref,
        agent=unit.agent,
        session=f"{'decisions' if unit.decision else 'history'}-{slug(unit.title, 40)}",
        source=unit.source,
        kind=unit.kind,
        end=unit.date,
        first_line=unit.first_line,
        last_line=unit.last_line,
        turns=len(sess.turns),
        sha256=hashlib.sha256(unit.text.encode()).hexdigest(),
        compressor="extractive",
        bytes_in=bytes_in,
    )
    if fit:
        summary = entry.fit(summary, meta, budget)
        summary, meta.recall = entry.guard(summary, found, meta, int(budget * 1.15))
    return redact(entry.render(summary, meta))


# --- the import ----------------------------------------------------------------------------------
def _archived_refs(layout: Layout) -> set[str]:
    folder = layout.archive / "promoted"
    out: set[str] = set()
    if folder.is_dir():
        for p in folder.rglob("*.md.gz"):
            m = re.search(r"-([a-z]-[0-9a-f]{6,40})\.md\.gz$", p.name)
            if m:
                out.add(m.group(1))
    return out


def discover_agents(squad: Path) -> list[str]:
    out = []
    folder = squad / "agents"
    if folder.is_dir():
        for p in sorted(folder.iterdir()):
            if (p / "history.md").is_file() and normalize_name(p.name) is not None:
                out.append(p.name)
    return out


def import_squad(
    cfg: Config,
    agents: list[str] | None = None,
    *,
    dry_run: bool = False,
    as_of: datetime | None = None,
    clock: Clock = utcnow,
    lock: bool = True,
) -> dict[str, Any]:
    """Import the named agents' histories (all, and decisions.md, when ``agents`` is None)."""
    layout = Layout(cfg.root_path)
    squad = layout.squad
    if not squad.is_dir():
        raise ImportRefused(f"{squad}: no .squad folder here; point --root at a Squad repo")
    backend = state_backend(squad)
    if backend in STATE_BRANCH_BACKENDS:
        raise ImportRefused(
            f".squad/config.json sets stateBackend={backend!r}: Squad keeps mutable state (memory, histories) "
            "on the 'squad-state' branch, not in this working tree, and a pre-commit hook refuses it here. "
            "scribed import writes to the working tree only, so it stops: nothing was written."
        )
    available = discover_agents(squad)
    if agents is None:
        names = available
    else:
        names = []
        for raw in agents:
            name = normalize_name(raw)
            if name is None:
                raise ImportRefused(f"bad agent name {raw!r} (lowercase letters, digits, '-' and '_')")
            if name not in available:
                raise ImportRefused(f"no history for agent {name!r} (.squad/agents/{name}/history.md)")
            names.append(name)
    ctx = root_lock(layout.lock) if lock and not dry_run else contextlib.nullcontext()
    with ctx:
        return _import(cfg, layout, names, agents is None, dry_run, as_of or clock(), clock)


def _import(
    cfg: Config,
    layout: Layout,
    names: list[str],
    everything: bool,
    dry_run: bool,
    as_of: datetime,
    clock: Clock,
) -> dict[str, Any]:
    log = get_logger()
    root = layout.root
    cutoff = as_of - timedelta(days=cfg.cold.ttl_days)
    warnings: list[str] = []
    dates: dict[Path, tuple[datetime, str]] = {}

    def undated(path: Path, what: str) -> datetime:
        if path not in dates:
            dates[path] = file_date(path, root)
        when, how = dates[path]
        rel = path.relative_to(root)
        how_text = "its last git commit" if how == "git" else "the file's mtime (no git date)"
        warnings.append(f"{rel}: undated {what}; dated {when.date().isoformat()} from {how_text}")
        return when

    units: list[Unit] = []
    histories: list[History] = []
    for name in names:
        path = layout.squad / "agents" / name / "history.md"
        h = parse_history(name, path, str(path.relative_to(root)))
        for u in h.units:
            if not u.dated:
                u.date = undated(path, f"entry {u.title!r}")
        histories.append(h)
        units += h.units
    dec_path = layout.squad / "decisions.md"
    if dec_path.is_file():
        for u in parse_decisions(dec_path, str(dec_path.relative_to(root))):
            if not everything and u.agent not in names:
                continue
            if not u.dated:
                u.date = undated(dec_path, f"decision {u.title!r}")
            units.append(u)
    units.sort(key=lambda u: (u.date, u.source, u.first_line))

    if dry_run:
        ledger = Ledger(layout.ledger, readonly=True) if layout.ledger.exists() else Ledger(None)
    else:
        ensure_dir(layout.state)
        ledger = Ledger(layout.ledger)
    try:
        return _apply(cfg, layout, ledger, histories, units, cutoff, as_of, dry_run, clock, warnings, log)
    finally:
        ledger.close()


def _apply(
    cfg: Config,
    layout: Layout,
    ledger: Ledger,
    histories: list[History],
    units: list[Unit],
    cutoff: datetime,
    as_of: datetime,
    dry_run: bool,
    clock: Clock,
    warnings: list[str],
    log: Any,
) -> dict[str, Any]:
    wiki = wiki_of(layout)
    known = wiki.refs() | _archived_refs(layout)
    cold_ids: dict[str, set[str]] = {}
    out_cold: list[dict[str, Any]] = []
    promoted: list[dict[str, Any]] = []
    archived: list[dict[str, Any]] = []
    pinned: list[dict[str, Any]] = []
    topics: dict[str, dict[str, int]] = {}
    to_archive: list[tuple[dict[str, Any], entry.Entry, Unit]] = []
    skipped = 0

    def count(topic: str, action: str) -> None:
        c = topics.setdefault(topic, {"added": 0, "merged": 0, "present": 0, "superseded": 0})
        c[action] = c.get(action, 0) + 1

    rows: list[dict[str, Any]] = []

    def record(u: Unit, text: str) -> None:
        rows.append(
            {
                "id": u.ref,
                "path": str(layout.root / u.source),
                "session": f"import:{u.kind}",
                "agent": u.agent,
                "session_end": iso(u.date),
                "start_offset": u.first_line,
                "end_offset": u.last_line,
                "bytes_in": len(u.text.encode()),
                "bytes_out": len(text.encode()),
                "ratio": len(text.encode()) / max(1, len(u.text.encode())),
                "recall": 1.0,
                "compressor": "extractive",
                "created_at": iso(clock()),
            }
        )

    for u in progress(units, "importing", unit="entry"):  # a bar on a TTY only
        if u.agent not in cold_ids:
            cold_ids[u.agent] = cold.known_ids(layout.cold_file(u.agent))
        if ledger.has_entry(u.ref) or u.ref in known or u.ref in cold_ids[u.agent]:
            skipped += 1
            continue
        item: dict[str, Any] = {
            "agent": u.agent,
            "entry": u.ref,
            "date": iso(u.date),
            "title": redact(one_line(u.title, 100)),
            "source": u.source,
        }
        if u.date >= cutoff:
            text = render_unit(u, cfg, fit=True)
            if not dry_run:
                cold.append(layout, u.agent, text, u.ref, cfg.cold.max_bytes, clock())
            record(u, text)
            cold_ids[u.agent].add(u.ref)
            out_cold.append(item)
            continue
        text = render_unit(u, cfg, fit=False)
        e = split_entries(text)[1][0]
        facts, warn = extract_facts(e, u.agent)
        warnings += warn
        for f in facts:
            f.source.via = "import"
            r = wiki.add(f)
            count(r.topic, r.action)
            topics[r.topic]["superseded"] += len(r.superseded)
        if facts:
            item["topics"] = sorted({f.topic for f in facts})
            item["facts"] = len(facts)
            promoted.append(item)
        else:
            archived.append(item)
        to_archive.append((item, e, u))
        known.add(u.ref)

    for h in histories:
        pinned += _pin(wiki, h, layout, count)

    if to_archive:
        # one gzip for the run's old entries, named by what it holds (a rerun writes the same bytes)
        blob = "".join(e.text.rstrip("\n") + "\n\n" for _, e, _ in to_archive).encode()
        name = f"promoted/import-{hashlib.sha256(blob).hexdigest()[:12]}.md.gz"
        for item, e, u in to_archive:
            item["archive"] = name
            record(u, e.text)
    if not dry_run:
        wiki.flush()  # the wiki first, then the archive and the ledger
        if to_archive:
            write_gzip_archive(layout.archive / name, blob)
        _record_all(ledger, rows)
        log.info(
            "imported",
            cold=len(out_cold),
            promoted=len(promoted),
            archived=len(archived),
            pinned=len(pinned),
            skipped=skipped,
        )
    for w in warnings:
        log.warning("import_warning", reason=w)
    return {
        "root": str(layout.root),
        "as_of": iso(as_of),
        "cutoff": iso(cutoff),
        "dry_run": dry_run,
        "agents": [h.agent for h in histories],
        "cold": out_cold,
        "promoted": promoted,
        "archived": archived,
        "pinned": pinned,
        "skipped": skipped,
        "topics": topics,
        "warnings": warnings,
    }


def _record_all(ledger: Ledger, rows: list[dict[str, Any]]) -> None:
    """Record imported units in the ledger's entries table, one transaction for the run."""
    if not rows:
        return
    cols = ", ".join(rows[0])
    marks = ", ".join(f":{k}" for k in rows[0])
    with ledger.tx() as db:
        db.executemany(f"INSERT OR IGNORE INTO entries({cols}) VALUES({marks})", rows)


def _pin(wiki: Wiki, h: History, layout: Layout, count: Callable[[str, str], None]) -> list[dict[str, Any]]:
    """Core Context → ``wiki/agent-{agent}.md``; team updates → ``decisions``."""
    out: list[dict[str, Any]] = []
    rel = str(h.path.relative_to(layout.root))
    fdate: datetime | None = None
    if h.core.strip():
        fdate = file_date(h.path, layout.root)[0]
        topic = valid_topic(f"agent-{h.agent}"[:64].rstrip("-_")) or "conventions"
        body = safe_body(redact(h.core.strip()))
        title = f"Core context of {h.agent}"
        doc = wiki.doc(topic)
        earlier = any(b.title == title and b.active for b in doc.blocks)
        date = fdate.date().isoformat()
        ref = "i-" + hashlib.sha256(f"core\0{h.agent}\0{body}".encode()).hexdigest()[:12]
        fact = Fact(
            topic=topic,
            kind="context",
            text=body,
            date=date,
            source=Source(
                date=date, ref=ref, agent=h.agent, session="core-context", via="import", extra={"file": rel}
            ),
            title=title,
            supersedes=title if earlier else "",
            exact=True,
        )
        r = wiki.add(fact)
        count(r.topic, r.action)
        out.append({"agent": h.agent, "topic": topic, "title": title, "action": r.action})
    for tu in h.team:
        when = tu.when
        if when is None:
            fdate = fdate or file_date(h.path, layout.root)[0]
            when = fdate
        date = when.date().isoformat()
        what = redact(tu.what)
        ref = "i-" + hashlib.sha256(f"team\0{iso(when)}\0{norm_space(what)}".encode()).hexdigest()[:12]
        fact = Fact(
            topic="decisions",
            kind="decision",
            text=what,
            date=date,
            source=Source(date=date, ref=ref, agent=tu.by, session="team-update", via="import"),
        )
        r = wiki.add(fact)
        count(r.topic, r.action)
        out.append(
            {"agent": h.agent, "topic": "decisions", "title": fact.title, "action": r.action, "by": tu.by}
        )
    return out


def norm_space(s: str) -> str:
    return " ".join(s.split())


__all__ = ["ImportRefused", "import_squad", "parse_decisions", "parse_history", "state_backend"]
