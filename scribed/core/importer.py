"""``scribed import``: seed the tiers from a legacy Squad repo, reading and never changing it.

Sources (read with :mod:`scribed.squad.legacy`, a markdown parser): ``.squad/agents/{agent}/history.md``
and ``history-archive*.md`` (``## Core Context``, ``###`` entries, dated bullets, ``📌 Team update``
lines), and the decision files: ``.squad/decisions.md``, ``decisions-archive*.md`` and
``.squad/decisions/**/*.md`` (inbox drop-box files), in every layout teams write them.

* Each decision becomes one wiki fact in ``decisions``, under its own title, with its statement as
  written and one provenance line (file, lines, author, date). What is not a decision (questions,
  priority labels, status tables, bare sections) never becomes a fact.
* Each history entry becomes a cold entry (the same extractive summary,
  :func:`scribed.compress.entry_fit.fit` and :func:`scribed.tiers.cold.append` as live sessions)
  when it is within ``cold.ttl_days``; older ones go through promotion's rules (durable facts to
  the wiki, the entry to the archive).
* The Core Context becomes one block of ``wiki/agent-{agent}.md`` (debris lines dropped; a changed one
  supersedes the previous block); team updates become ``decisions`` facts by their author.
* Every legacy file read is archived whole (gzip, named by its content hash) under
  ``.scribed/archive/legacy/``: every byte ends up in a wiki fact or the archive, never nowhere.
* An agent with no hot file (or a blank one) gets a hot seed from its newest entry.

With ``[promote] mode = "review"`` facts become proposals (``scribed review``), not wiki blocks.
Every wiki change is recorded in the audit log. Undated entries take the file's last git commit
date, else its mtime, with a warning. Every unit's id hashes what it says (kind,
title, its own date, normalised text), not its file or line, and is recorded in the ledger, so a
second import adds nothing, and neither does one after ``squad nap`` moved material to an archive or
merged the inbox (ids of earlier versions, which hashed the file, are recognised too). With
``stateBackend`` ``orphan`` or ``two-layer`` in ``.squad/config.json``, Squad's histories and
decision logs live on the ``squad-state`` branch: import reads them there (a copy in the state
folder, :func:`scribed.core.statebranch.squad_snapshot`) beside the working tree's ``.squad/`` (the
inbox), and the tiers it writes go where the backend keeps them (:mod:`scribed.core.statebranch`).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed.compress.entry import Entry, iso, one_line, split_entries
from scribed.config import Config
from scribed.core.import_read import (
    History,
    Skipped,
    decision_files,
    file_date,
    history_files,
    parse_decisions,
    parse_history,
)
from scribed.core.import_units import (
    Unit,
    decision_fact,
    imported_texts,
    in_wiki,
    render_unit,
    seed_hot,
    seed_source,
)
from scribed.core.ledger import Ledger
from scribed.core.lock import root_lock
from scribed.core.promote import extract_facts, fact_sink, wiki_of
from scribed.core.results import ImportedDecision, ImportedEntry, ImportResult, NotDecision, PinnedFact
from scribed.curate.agent_writes import FactSink
from scribed.dates import Clock, utcnow
from scribed.fsutil import NOT_UTF8, shown, utf8_name, utf8_only, write_gzip_archive
from scribed.log import get as get_logger
from scribed.log import progress
from scribed.names import normalize_name, rename_hint
from scribed.session.redact import redact
from scribed.tiers import audit, cold
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import Fact, MergeResult, Source, safe_body, valid_topic

if TYPE_CHECKING:
    from scribed.log import Logger


class ImportRefusedError(ValueError):
    """The repo cannot be imported as asked (state on another branch, bad agent name); exit 2."""


# --- reading the legacy files ------------------------------------------------------------------
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
    """Agents with a history, by their folded name: ``squad init`` itself makes ``agents/Rai/``, and
    the tiers are written and read under ``rai`` (a raw ``Rai`` wrote files every reader refuses)."""
    folder = squad / "agents"
    if not folder.is_dir():
        return []
    names = (normalize_name(p.name) for p in folder.iterdir() if (p / "history.md").is_file())
    return sorted({n for n in names if n is not None})


def unnamed_agents(squad: Path) -> list[str]:
    """Agent folders with a history whose name is no agent name ("Data Officer"): ``import --all``
    cannot take them, and says so rather than skip them without a word."""
    folder = squad / "agents"
    try:
        subs = sorted(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        return []
    return [p.name for p in subs if (p / "history.md").is_file() and normalize_name(p.name) is None]


def import_squad(
    cfg: Config,
    agents: list[str] | None = None,
    *,
    dry_run: bool = False,
    as_of: datetime | None = None,
    clock: Clock = utcnow,
    lock: bool = True,
) -> ImportResult:
    """Import the named agents' histories (all, and the decision files, when ``agents`` is None)."""
    names = plan(cfg, agents)
    layout = Layout(cfg.root_path)
    ctx = root_lock(layout.lock) if lock and not dry_run else contextlib.nullcontext()
    with ctx:
        return run_import(
            cfg, names, everything=agents is None, dry_run=dry_run, as_of=as_of or clock(), clock=clock
        )


def run_import(
    cfg: Config,
    names: list[str],
    *,
    everything: bool,
    dry_run: bool,
    as_of: datetime,
    clock: Clock,
    ledger: Ledger | None = None,
) -> ImportResult:
    """The import itself, for agents :func:`plan` accepted. The caller holds the root lock; a
    :class:`scribed.core.scribe.Scribe` passes its ledger (else one is opened for the call)."""
    layout = Layout(cfg.root_path)
    return _import(
        cfg, layout, names, everything=everything, dry_run=dry_run, as_of=as_of, clock=clock, ledger=ledger
    )


def plan(cfg: Config, agents: list[str] | None) -> list[str]:
    """The agents to import, or :class:`ImportRefusedError` before anything is written (the lock
    folder included)."""
    layout = Layout(cfg.root_path)
    squad = layout.squad
    if not squad.is_dir():
        raise ImportRefusedError(f"{squad}: no .squad folder here; point --root at a Squad repo")
    if layout.refused:
        raise ImportRefusedError(layout.refused)
    available = discover_agents(squad)
    if layout.on_branch:
        from scribed.core import statebranch

        try:
            available = sorted({*available, *statebranch.squad_agents(layout, statebranch.Git(layout.root))})
        except statebranch.StateBranchError as exc:
            raise ImportRefusedError(f"{layout.root}: {statebranch.BRANCH}: {exc}") from None
    if agents is None:
        names = available
    else:
        names = []
        for raw in agents:
            name = normalize_name(raw)
            if name is None:
                raise ImportRefusedError(f"bad agent name {raw!r} (lowercase letters, digits, '-' and '_')")
            if name not in available:
                raise ImportRefusedError(
                    f"no history for agent {name!r} (.squad/agents/{name}/history.md"
                    + (", or agents/{name}/history.md on squad-state)" if layout.on_branch else ")")
                )
            names.append(name)
    return names


@dataclass(slots=True)
class _Run:
    """What one import read and what it will write."""

    histories: list[History] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    decisions: list[Unit] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    undated: list[tuple[Unit, str]] = field(default_factory=list)  # said only when the unit is taken


def squad_trees(layout: Layout) -> list[Path]:
    """Where Squad's files are read: ``.squad/``, and on a state-branch backend the branch's copy
    (the caller holds the lock: the copy is refreshed in the state folder)."""
    trees = [layout.squad]
    if layout.on_branch:
        from scribed.core import statebranch

        snap = statebranch.squad_snapshot(layout, statebranch.Git(layout.root))
        if snap is not None:
            trees.append(snap)
    return trees


def source_name(layout: Layout, path: Path) -> str:
    """A Squad file as provenance names it: ``.squad/…``, or ``squad-state:…`` for the branch's."""
    snap = layout.state / "squad-state-tree"
    if snap in path.parents:
        return f"squad-state:{path.relative_to(snap).as_posix()}"
    return str(path.relative_to(layout.root))


def _unnamed(layout: Layout, tree: Path, bad: str) -> str:
    if not utf8_name(bad):
        return f"{shown(tree / 'agents' / bad)}: {NOT_UTF8}"
    hint = rename_hint(bad)
    return (
        f"{source_name(layout, tree / 'agents' / bad / 'history.md')}: not imported: {bad!r} is not an "
        f"agent name (lowercase letters, digits, '-' and '_'); rename the folder (say to {hint!r}) and "
        "import again"
    )


def _utf8(paths: list[Path], run: _Run) -> list[Path]:
    """``paths`` whose names are UTF-8; each other one a warning: its name could be neither a
    provenance line nor printed, and it stopped the whole import."""
    return utf8_only(paths, lambda name: run.warnings.append(f"{name}: {NOT_UTF8}"))


def _read_all(layout: Layout, names: list[str], everything: bool) -> _Run:
    root = layout.root
    run = _Run()
    dates: dict[Path, tuple[datetime, str]] = {}
    trees = squad_trees(layout)

    def undated(u: Unit, path: Path, what: str) -> datetime:
        if path not in dates:
            dates[path] = file_date(path, root)
        when, how = dates[path]
        how_text = "its last git commit" if how == "git" else "the file's mtime (no git date)"
        run.undated.append(
            (
                u,
                f"{source_name(layout, path)}: undated {what}; dated {when.date().isoformat()} from {how_text}",
            )
        )
        return when

    run.warnings += (
        [_unnamed(layout, t, bad) for t in trees for bad in unnamed_agents(t)] if everything else []
    )
    for name in names:
        paths = _utf8([p for tree in trees for p in history_files(tree, name)], run)
        for n, path in enumerate(paths):
            h = parse_history(name, path, source_name(layout, path), pinned=n == 0)
            for u in h.units:
                if not u.dated:
                    u.date = undated(u, path, f"entry {u.title!r}")
            run.files.append(path)
            if n == 0:
                run.histories.append(h)
            else:
                run.histories[-1].team += h.team
            run.units += h.units
    for path in _utf8([p for tree in trees for p in decision_files(tree)], run):
        units, skipped = parse_decisions(path, source_name(layout, path))
        units = [u for u in units if everything or u.agent in names]
        for u in units:
            if not u.dated:
                u.date = undated(u, path, f"decision {u.title!r}")
        run.decisions += units
        run.skipped += skipped if everything else []
        if units or everything:
            run.files.append(path)
    run.units.sort(key=lambda u: (u.date, u.source, u.first_line))
    run.decisions.sort(key=lambda u: (u.date, u.source, u.first_line))
    return run


def _import(
    cfg: Config,
    layout: Layout,
    names: list[str],
    *,
    everything: bool,
    dry_run: bool,
    as_of: datetime,
    clock: Clock,
    ledger: Ledger | None,
) -> ImportResult:
    run = _read_all(layout, names, everything)
    if not dry_run:
        audit.ensure_state(layout)
    own = ledger is None
    if ledger is None:
        ledger = (
            (Ledger(layout.ledger, readonly=True) if layout.ledger.exists() else Ledger(None))
            if dry_run
            else Ledger(layout.ledger)
        )
    try:
        cutoff = as_of - timedelta(days=cfg.cold.ttl_days)
        return _apply(cfg, layout, ledger, run, cutoff=cutoff, as_of=as_of, dry_run=dry_run, clock=clock)
    finally:
        if own:
            ledger.close()


class _Apply:
    """One import's writes: history units to cold or the wiki, decisions and pins to the wiki (or
    proposals), then the archives, the ledger and the hot seeds."""

    def __init__(self, cfg: Config, layout: Layout, ledger: Ledger, run: _Run, clock: Clock) -> None:
        self.cfg, self.layout, self.ledger, self.run, self.clock = cfg, layout, ledger, run, clock
        self.wiki = wiki_of(layout, action="import", clock=clock)
        self.sink: FactSink = fact_sink(layout, cfg, self.wiki, "import", clock)
        self.known = self.wiki.refs() | _archived_refs(layout)
        self.cold_ids: dict[str, set[str]] = {}
        self.shas: dict[str, set[str]] | None = None  # per agent: texts imported (cold and archive)
        self.cold: list[ImportedEntry] = []
        self.promoted: list[ImportedEntry] = []
        self.archived: list[ImportedEntry] = []
        self.pinned: list[PinnedFact] = []
        self.decisions: list[ImportedDecision] = []
        self.topics: dict[str, dict[str, int]] = {}
        self.to_archive: list[tuple[Entry, Unit]] = []
        self.rows: list[dict[str, Any]] = []
        self.skipped = 0
        self.passed: set[int] = set()  # ids of the units imported before: nothing to say of them
        self.blob, self.name = b"", ""

    def count(self, r: MergeResult) -> None:
        c = self.topics.setdefault(r.topic, {"added": 0, "merged": 0, "present": 0, "superseded": 0})
        c[r.action] = c.get(r.action, 0) + 1
        c["superseded"] += len(r.superseded)

    def history(self, u: Unit, cutoff: datetime, dry_run: bool) -> None:
        layout, cfg = self.layout, self.cfg
        if u.agent not in self.cold_ids:
            self.cold_ids[u.agent] = cold.known_ids(layout.cold_file(u.agent))
        if self.seen(u) or u.ref in self.cold_ids[u.agent] or u.legacy_ref in self.cold_ids[u.agent]:
            self.skip(u)
            return
        if self.shas is None:
            self.shas = imported_texts(layout)
        if u.text_sha in self.shas.get(u.agent, ()):
            self.skip(u)  # imported by an earlier version under a path-based id, then moved
            return
        self.shas.setdefault(u.agent, set()).add(u.text_sha)
        item = u.report()
        if u.date >= cutoff:
            text = render_unit(u, cfg, fit=True)
            if not dry_run:
                cold.append(layout, u.agent, text, u.ref, max_bytes=cfg.cold.max_bytes, now=self.clock())
            self.rows.append(u.ledger_row(layout, text, iso(self.clock())))
            self.cold_ids[u.agent].add(u.ref)
            self.cold.append(item)
            return
        e = split_entries(render_unit(u, cfg, fit=False))[1][0]
        facts, warn = extract_facts(e, u.agent)
        self.run.warnings += warn
        for f in facts:
            f.source.via, f.source.session = "import", ""  # the file and entry id say where
            f.source.extra["file"] = u.source
            self.count(self.sink.add(f))
        if facts:
            self.promoted.append(
                replace(item, topics=tuple(sorted({f.topic for f in facts})), facts=len(facts))
            )
        else:
            self.archived.append(item)
        self.to_archive.append((e, u))
        self.known.add(u.ref)

    def skip(self, u: Unit) -> None:
        self.skipped += 1
        self.passed.add(id(u))

    def seen(self, u: Unit) -> bool:
        """Whether this unit was imported before, under its id or the path-based one of old."""
        return any(self.ledger.has_entry(r) or r in self.known for r in (u.ref, u.legacy_ref))

    def decision(self, u: Unit) -> None:
        fact = decision_fact(u)
        if self.seen(u) or in_wiki(self.wiki, fact):
            self.skip(u)
            return
        r = self.sink.add(fact)
        self.count(r)
        i = u.report()
        self.decisions.append(
            ImportedDecision(
                i.agent, i.entry, i.date, i.title, i.source, i.lines, r.topic, r.action, u.titled
            )
        )
        self.rows.append(u.ledger_row(self.layout, u.statement, iso(self.clock())))
        self.known.add(u.ref)

    def write(self, originals: list[str], log: Logger) -> None:
        """Wiki (and its audit records) or proposals first, then the archives, the ledger, hot."""
        layout = self.layout
        self.sink.flush()
        if self.blob:
            write_gzip_archive(layout.archive / self.name, self.blob)
        for path, arch in zip(self.run.files, originals, strict=True):
            if not (layout.archive / arch).exists():
                write_gzip_archive(layout.archive / arch, path.read_bytes())
        _record_all(self.ledger, self.rows)
        fresh = {i.agent for i in (*self.cold, *self.promoted, *self.archived)}
        for h in self.run.histories:
            if h.agent in fresh or not layout.hot_file(h.agent).exists():
                newest, skip = seed_source([u for u in self.run.units if u.agent == h.agent])
                seed_hot(layout, h.agent, newest, self.cfg, log, skip=skip)

    def archive_rows(self) -> None:
        """One gzip for the run's old entries, named by what it holds (a rerun writes the same bytes)."""
        if not self.to_archive:
            return
        self.blob = "".join(e.text.rstrip("\n") + "\n\n" for e, _ in self.to_archive).encode()
        self.name = f"promoted/import-{hashlib.sha256(self.blob).hexdigest()[:12]}.md.gz"
        self.promoted = [replace(i, archive=self.name) for i in self.promoted]
        self.archived = [replace(i, archive=self.name) for i in self.archived]
        for e, u in self.to_archive:
            self.rows.append(u.ledger_row(self.layout, e.text, iso(self.clock())))


def _apply(
    cfg: Config,
    layout: Layout,
    ledger: Ledger,
    run: _Run,
    *,
    cutoff: datetime,
    as_of: datetime,
    dry_run: bool,
    clock: Clock,
) -> ImportResult:
    log = get_logger()
    ap = _Apply(cfg, layout, ledger, run, clock)
    for u in progress(run.units, "importing", unit="entry", size=_text_bytes):  # a bar on a TTY only
        ap.history(u, cutoff, dry_run)
    for u in run.decisions:
        ap.decision(u)
    for h in run.histories:
        ap.pinned += _pin(ap.sink, h, layout, ap.count)
    ap.archive_rows()
    run.warnings += [said for u, said in run.undated if id(u) not in ap.passed]  # a rerun: silent
    originals = [_legacy_name(layout, p) for p in run.files]
    if not dry_run:
        ap.write(originals, log)
        log.info(
            "imported", cold=len(ap.cold), promoted=len(ap.promoted), archived=len(ap.archived),
            pinned=len(ap.pinned), decisions=len(ap.decisions), skipped=ap.skipped,
        )  # fmt: skip
    for w in run.warnings:
        log.warning("import_warning", reason=w)
    not_decisions = tuple(
        NotDecision(s.source, f"{s.first_line}-{s.last_line}", redact(one_line(s.title, 100)), s.reason)
        for s in run.skipped
    )
    return ImportResult(
        as_of=iso(as_of),
        agents=tuple(h.agent for h in run.histories),
        cold=tuple(ap.cold),
        promoted=tuple(ap.promoted),
        archived=tuple(ap.archived),
        pinned=tuple(ap.pinned),
        decisions=tuple(ap.decisions),
        not_decisions=not_decisions,
        skipped=ap.skipped,
        dry_run=dry_run,
        warnings=tuple(run.warnings),
        mode=cfg.promote.mode,
        root=str(layout.root),
        cutoff=iso(cutoff),
        legacy_archived=tuple(originals),
        topics=ap.topics,
    )


def _legacy_name(layout: Layout, path: Path) -> str:
    """Where a legacy file's original bytes are archived: by its path and content hash."""
    rel = source_name(layout, path).removeprefix(".squad/").replace("squad-state:", "squad-state/")
    return f"legacy/{rel}.{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}.gz"


def _record_all(ledger: Ledger, rows: list[dict[str, Any]]) -> None:
    """Record imported units in the ledger's entries table, one transaction for the run."""
    ledger.add_entries(rows)


def _pin(
    sink: FactSink, h: History, layout: Layout, count: Callable[[MergeResult], None]
) -> list[PinnedFact]:
    """Core Context → ``wiki/agent-{agent}.md``; team updates → ``decisions``."""
    out: list[PinnedFact] = []
    rel = str(h.path.relative_to(layout.root))
    fdate: datetime | None = None
    if h.core.strip():
        fdate = file_date(h.path, layout.root)[0]
        topic = valid_topic(f"agent-{h.agent}"[:64].rstrip("-_")) or "conventions"
        body = safe_body(redact(h.core.strip()))
        title = f"Core context of {h.agent}"
        earlier = any(b.title == title and b.active for b in sink.doc(topic).blocks)
        date = fdate.date().isoformat()
        ref = "i-" + hashlib.sha256(f"core\0{h.agent}\0{body}".encode()).hexdigest()[:12]
        src = Source(
            date=date, ref=ref, agent=h.agent, session="core-context", via="import", extra={"file": rel}
        )
        fact = Fact(
            topic, "context", body, date, src, title=title, supersedes=title if earlier else "", exact=True
        )
        r = sink.add(fact)
        count(r)
        out.append(PinnedFact(h.agent, topic, title, r.action))
    for tu in h.team:
        when = tu.when
        if when is None:
            fdate = fdate or file_date(h.path, layout.root)[0]
            when = fdate
        date = when.date().isoformat()
        what = redact(tu.what)
        stamp = iso(tu.when) if tu.when is not None else ""  # a file's date changes when it does
        ref = "i-" + hashlib.sha256(f"team\0{stamp}\0{' '.join(what.split())}".encode()).hexdigest()[:12]
        src = Source(date=date, ref=ref, agent=tu.by, session="team-update", via="import")
        fact = Fact(topic="decisions", kind="decision", text=what, date=date, source=src)
        r = sink.add(fact)
        count(r)
        out.append(PinnedFact(h.agent, "decisions", fact.title, r.action, by=tu.by))
    return out


__all__ = [
    "ImportRefusedError",
    "import_squad",
    "parse_decisions",
    "parse_history",
    "plan",
    "run_import",
]


def _text_bytes(u: Unit) -> int:
    return len(u.text.encode())
