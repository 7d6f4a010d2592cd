"""Cold → wiki promotion, agent-written wiki facts and the wiki inbox.

Promotion (``scribed promote`` and the daemon's nightly job) takes every cold entry older than
``cold.ttl_days``, extracts its durable facts with fixed rules (no model), merges them into
``wiki/{topic}.md`` and archives the entry. Order is what makes it crash-safe: the wiki write is
durable first, then the archive, then the entry leaves cold. A rerun after a crash in between
finds the entry id in the wiki's source lines and merges nothing twice.

Classification of an entry's sections:

* Decisions (and ``decision:`` lines the retention guard restored under Key facts) → ``decisions``,
  keeping ``(supersedes: …)`` and any ``— why:``/``because`` rationale.
* Reusable knowledge (not bare progress reports like "Done, all tests pass."), by keywords, first
  match wins: "must not"/"cannot" → ``constraints``;
  always/never/must/convention → ``conventions``; limit/only/requires → ``constraints``;
  API/endpoint/schema/contract/interface/returns → ``contracts``; anything else → ``patterns``.
* Errors → fixes that name a fix (``error → fix``) → ``patterns`` as "Known issue: …".
* The user's directives under Key facts (``user:``, ``directive:``) → ``conventions``/``constraints``
  (by the keywords; a prohibition the keywords miss is a constraint, anything else a convention).
* Goal, Outcome, Files, Open items and other Key facts are one-off, not durable.

A line ``topic: NAME`` or ``wiki: NAME`` anywhere in an entry files all its facts under that topic.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from scribed.compress.entry import Entry, iso, join_entries, one_line, parse_date, provenance, split_entries
from scribed.compress.restate import statement
from scribed.compress.reversal_wording import may_reverse, returns
from scribed.compress.terms import claim, strip_supersedes
from scribed.config import Config
from scribed.core.lock import root_lock
from scribed.core.promote_filter import (
    classify,
    cut_off,
    directive_topic,
    fix_of,
    is_chatter,
    is_fragment,
    is_heading,
    is_progress,
    names_an_error,
)
from scribed.core.results import PromotedEntry, PromoteResult, ReversedFact
from scribed.curate.agent_writes import (
    MAX_FACT_BYTES,
    FactSink,
    agent_fact,
    apply_inbox,
    deprecate,
    fact_report,
    fact_sink,
    inbox_dir,
    wiki_of,
    write_agent_fact,
)
from scribed.dates import Clock, believed, file_mtime, known_true, utcnow
from scribed.fsutil import atomic_write, ensure_dir, read_text, write_gzip_archive
from scribed.log import get as get_logger
from scribed.log import misnamed, progress
from scribed.names import normalize_name
from scribed.session.redact import redact
from scribed.squad import inbox, legacy
from scribed.tiers import audit, cold, cold_store, hot_seed
from scribed.tiers.cold import Layout
from scribed.tiers.cold_store import entry_ref
from scribed.tiers.cold_store import promoted_archive_name as archive_name
from scribed.tiers.wiki import (
    TOPIC_KIND,
    Block,
    Fact,
    MergeResult,
    Source,
    Wiki,
    reverses,
    valid_topic,
)

MIN_FACT_CHARS = 4  # shorter items are fragments, not facts

_TOPIC_LINE = re.compile(r"^\s*(?:[-*]\s+)?(?:topic|wiki)\s*:\s*(?P<t>\S+)\s*$", re.I | re.M)
_WHY = re.compile(r"\s+—\s+why:\s+(?P<w>.+)$")
_BECAUSE = re.compile(r"\bbecause\s+(?P<w>.{8,})$", re.I)
_ARROW = re.compile(r"\s+→\s+")


def parse_as_of(text: str) -> datetime:
    """``YYYY-MM-DD`` (midnight UTC) or an ISO timestamp; ValueError otherwise."""
    dt = parse_date(text.strip())
    if dt is None:
        raise ValueError(f"bad date {text!r} (want YYYY-MM-DD or an ISO timestamp)")
    return dt


# --- facts of one cold entry ---------------------------------------------------------------------
def entry_topic(entry: Entry) -> tuple[str | None, list[str]]:
    """A topic the entry names for its facts (``topic:``/``wiki:`` line), and warnings."""
    for m in _TOPIC_LINE.finditer(entry.text):
        name = valid_topic(m.group("t").strip("`*_"))
        if name:
            return name, []
        return None, [f"entry {entry_ref(entry)}: bad topic name {m.group('t')!r}; using the default topics"]
    return None, []


def _decision(text: str) -> tuple[str, str, str]:
    """(text, supersedes, rationale) of a decision bullet."""
    body, old = strip_supersedes(text)
    rationale = ""
    m = _WHY.search(body)
    if m:
        rationale = m.group("w").strip()
        body = body[: m.start()].strip()
    else:
        b = _BECAUSE.search(body)
        if b:
            rationale = b.group("w").strip().rstrip(".")
    return body, old, rationale


def extract_facts(entry: Entry, agent: str) -> tuple[list[Fact], list[str]]:
    """The durable facts of a cold entry, each carrying a source that names the entry."""
    prov, _ = provenance(entry.text) or ({}, (0, 0))
    ref = entry_ref(entry)
    date = entry.date[:10]
    extra: dict[str, str] = {}
    if prov.get("folded"):
        extra["folded"] = prov["folded"]
    src = Source(
        date=date, ref=ref, agent=prov.get("agent") or agent, session=prov.get("session", ""), extra=extra
    )
    override, warnings = entry_topic(entry)
    secs = cold.sections(entry.text)
    facts: list[Fact] = []

    def add(
        kind_topic: str, text: str, *, supersedes: str = "", rationale: str = "", title: str = ""
    ) -> None:
        text = redact(one_line(text, 2000))
        if len(text) < MIN_FACT_CHARS or _TOPIC_LINE.fullmatch(text):
            return
        if legacy.is_question(text) or legacy.is_priority(text):
            return  # an open question or a priority label is not a durable fact
        if not title and (cut_off(text) if kind_topic == "decisions" else is_fragment(text)):
            return  # a piece of a sentence states nothing (a decision's words were read as one)
        facts.append(
            Fact(
                topic=override or kind_topic,
                kind=TOPIC_KIND[kind_topic],
                text=text,
                date=date,
                source=Source(src.date, src.ref, src.agent, src.session, src.via, dict(src.extra)),
                title=redact(title),
                supersedes=redact(supersedes),
                rationale=redact(rationale),
            )
        )

    decisions, directives = _key_facts(secs)
    for topic, directive in directives:
        add(topic, directive)
    for d in decisions:
        text, old, why = _decision(d)
        add("decisions", text, supersedes=old, rationale=why)
    for k in secs.get("knowledge", []):
        if not (is_progress(k) or is_chatter(k) or is_heading(k)):
            add(classify(k), k)
    for err, line in _known_issues(secs.get("errors", [])):
        add("patterns", f"Known issue: {line}", title=one_line(f"Known issue: {err}", 100))
    first: dict[tuple[str, str], Fact] = {}
    for f in facts:
        first.setdefault((f.topic, f.text), f)
    return list(first.values()), warnings


def _key_facts(secs: dict[str, list[str]]) -> tuple[list[str], list[tuple[str, str]]]:
    """Decisions (with the ``decision:`` lines the retention guard restored under Key facts) and the
    user's directives (``user:`` lines, and the ``directive:`` lines the guard restored), as
    (topic, text): each is a convention or a constraint."""
    decisions = list(secs.get("decisions", []))
    directives = []
    for kf in secs.get("key_facts", []):
        label, sep, rest = kf.partition(": ")
        if not sep:
            continue
        if label.lower() == "decision":
            decisions.append(rest)
        elif label.lower() in ("user", "directive"):
            topic = directive_topic(rest)
            if topic:
                directives.append((topic, rest))
    return decisions, directives


def _known_issues(lines: list[str]) -> list[tuple[str, str]]:
    """(error, line) of the ``error → fix`` lines that name an error and a fix: one per error, its
    first fix (a digest holds the same error once unresolved and once with a fix)."""
    out: dict[str, str] = {}
    for line in lines:
        err, fix = _fix(line)
        if fix and names_an_error(err):
            out.setdefault(err, line)
    return list(out.items())


def _fix(error_line: str) -> tuple[str, str]:
    """(error, fix) of an ``error → fix`` line; fix is "" when it names none ("unresolved", a
    promise to fix, a progress report: :func:`scribed.core.promote_filter.fix_of`)."""
    err, *fix = _ARROW.split(error_line, maxsplit=1)
    return err.strip().strip("`"), fix_of("".join(fix))


# --- archive and cold removal ------------------------------------------------------------------
def archive_entry(layout: Layout, agent: str, entry: Entry, *, sync: bool = True) -> str:
    """gzip the entry under ``archive/promoted/`` (same bytes on a rerun). ``sync=False``: the
    caller makes a whole batch durable with one ``os.sync()`` (two fsyncs per entry made archiving
    thousands of entries take longer than promoting them)."""
    name = archive_name(agent, entry)
    write_gzip_archive(layout.archive / name, entry.text.encode(), sync=sync)
    return name


def _remove_from_cold(layout: Layout, agent: str, refs: set[str]) -> int:
    """Drop the entries with these ids from ``cold/{agent}.md``, re-reading it right before the write."""
    path = layout.cold_file(agent)
    with cold._write_lock:
        text = read_text(path)
        pre, entries = split_entries(text)
        keep = [e for e in entries if entry_ref(e) not in refs]
        if len(keep) == len(entries):
            return 0
        atomic_write(path, join_entries(pre, keep) if (keep or pre.strip()) else "", base=layout.memory)
        return len(entries) - len(keep)


# --- promotion ---------------------------------------------------------------------------------
class _HasCfg(Protocol):
    cfg: Config


@dataclass(slots=True)
class _Due:
    when: datetime
    agent: str
    entry: Entry


def _entry_bytes(d: _Due) -> int:
    return len(d.entry.text.encode())


@dataclass(slots=True)
class _TopicTally:
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, r: MergeResult) -> None:
        c = self.counts.setdefault(r.topic, {"added": 0, "merged": 0, "present": 0, "superseded": 0})
        c[r.action] = c.get(r.action, 0) + 1
        c["superseded"] += len(r.superseded)


def cold_agents(layout: Layout) -> list[str]:
    if not layout.cold.is_dir():
        return []
    out = []
    for p in sorted(layout.cold.glob("*.md")):
        if not p.is_file() or p.is_symlink():
            continue
        if normalize_name(p.stem) == p.stem:
            out.append(p.stem)
        else:
            misnamed(p, "agent")
    return out


def promote(
    cfg: Config | _HasCfg,
    *,
    as_of: datetime | None = None,
    dry_run: bool = False,
    clock: Clock | None = None,
    lock: bool | None = None,
) -> PromoteResult:
    """Promote every cold entry older than ``cold.ttl_days`` at ``as_of`` (default now).

    ``cfg`` may also be a :class:`scribed.core.scribe.Scribe` (the daemon passes one while it holds
    the root lock). ``lock`` defaults to taking the root lock for a Config and not for a Scribe,
    whose owner holds it already; a dry run never locks and never writes.
    """
    scribe: Any = None
    if not isinstance(cfg, Config):
        scribe, cfg = cfg, cfg.cfg
    if clock is None:
        clock = getattr(scribe, "clock", None) or utcnow
    if lock is None:
        lock = scribe is None
    layout = Layout(cfg.root_path)
    now = clock()
    as_of = as_of or now
    ctx = root_lock(layout.lock) if lock and not dry_run else contextlib.nullcontext()
    with ctx:
        report = _promote_locked(cfg, layout, as_of, dry_run, clock)
    if not dry_run:
        stamp = iso(now)
        if scribe is not None and getattr(scribe, "ledger", None) is not None:
            scribe.ledger.set_meta("last_promotion_at", stamp)
        else:
            from scribed.core.ledger import Ledger

            audit.ensure_state(layout)
            led = Ledger(layout.ledger)
            try:
                led.set_meta("last_promotion_at", stamp)
            finally:
                led.close()
    return report


def _promote_locked(
    cfg: Config, layout: Layout, as_of: datetime, dry_run: bool, clock: Clock
) -> PromoteResult:
    log = get_logger()
    cutoff = as_of - timedelta(days=cfg.cold.ttl_days)
    wiki = wiki_of(layout, "promote", clock)
    sink = fact_sink(layout, cfg, wiki, "promote", clock)
    warnings: list[str] = []
    inbox = apply_inbox(layout, cfg, clock, dry_run=dry_run, wiki=wiki)
    due, fresh, kept = _scan_cold(layout, cutoff, warnings, clock())
    reversals = _early_reversals(sink, wiki, fresh, warnings)

    tally = _TopicTally()
    promoted: list[PromotedEntry] = []
    archived: list[PromotedEntry] = []
    decided: list[Fact] = []  # new decisions, for Squad's inbox
    for d in progress(due, "promoting", unit="entry", size=_entry_bytes):  # a bar on a TTY only
        facts, warn = extract_facts(d.entry, d.agent)
        warnings += warn
        item = PromotedEntry(
            agent=d.agent,
            entry=entry_ref(d.entry),
            date=d.entry.date,
            title=redact(one_line(d.entry.title, 100)),
            archive=archive_name(d.agent, d.entry),
        )
        if not facts:
            archived.append(item)
            continue
        reps = []
        for f in facts:
            r = sink.add(f)
            tally.add(r)
            reps.append(fact_report(f, r))
            if r.action == "added" and f.kind == "decision":
                decided.append(f)
        promoted.append(replace(item, facts=tuple(reps), topics=tuple(sorted({f.topic for f in facts}))))

    written: list[str] = []
    if not dry_run and (due or reversals):
        written = _commit(layout, sink, due)
    if not dry_run and decided and cfg.promote.squad_inbox and cfg.promote.mode == "auto":
        for path in propose_to_squad(layout, decided):
            log.info("decision_proposed", file=str(path))
    for w in warnings:
        log.warning("promotion_warning", reason=w)
    if not dry_run and (due or inbox.applied):
        log.info(
            "promotion_done",
            promoted=len(promoted),
            archived=len(archived),
            kept=kept,
            topics=written,
            as_of=iso(as_of),
        )
    return PromoteResult(
        as_of=iso(as_of),
        cutoff=iso(cutoff),
        dry_run=dry_run,
        promoted=tuple(promoted),
        archived=tuple(archived),
        kept=kept,
        topics=tally.counts,
        inbox=inbox,
        mode=cfg.promote.mode,
        warnings=tuple(warnings),
        written=tuple(written),
        reversals=tuple(reversals),
    )


def propose_to_squad(layout: Layout, facts: list[Fact]) -> list[Path]:
    """Each new decision filed in Squad's inbox (``.squad/decisions/inbox/``) as ``squad memory
    write --class DECISION`` files one (:mod:`scribed.squad.inbox`), after the wiki is durable;
    a file already there is left as it is. Returns the files written."""
    folder = layout.squad / "decisions" / "inbox"
    out: list[Path] = []
    for f in facts:
        name = inbox.file_name(f.source.ref, f.title, f.source.agent)
        path = folder / name
        if path.exists():
            continue
        ensure_dir(folder)
        text = inbox.render(
            entry=f.source.ref,
            title=f.title,
            author=f.source.agent,
            created=f"{f.date}T00:00:00.000Z",
            text=f.text,
        )
        atomic_write(path, text, base=layout.squad)
        out.append(path)
    return out


def _scan_cold(
    layout: Layout, cutoff: datetime, warnings: list[str], now: datetime
) -> tuple[list[_Due], list[_Due], int]:
    """Cold entries due (older than ``cutoff``, oldest first) and still fresh, and how many stay.
    An entry dated past ``now`` (a wrong clock's) ages from its file's time (:func:`_written`)."""
    due: list[_Due] = []
    fresh: list[_Due] = []
    kept = 0
    for agent in cold_agents(layout):
        _, entries = split_entries(read_text(layout.cold_file(agent)))
        for e in entries:
            when = e.when
            if when is not None and believed(when, now) is None:
                when = _written(layout, agent, e, now)
                warnings.append(
                    f"cold/{agent}.md: entry {e.heading[:80]!r} is dated past this machine's clock (a wrong "
                    f"clock where it was written); it ages from {iso(when)}, its file's time"
                )
            if when is None:
                warnings.append(f"cold/{agent}.md: entry {e.heading[:80]!r} has no readable date; kept")
                kept += 1
            elif when < cutoff:
                due.append(_Due(when, agent, e))
            else:
                kept += 1
                fresh.append(_Due(when, agent, e))
    due.sort(key=lambda d: (d.when, d.agent, entry_ref(d.entry)))
    return due, fresh, kept


def _written(layout: Layout, agent: str, e: Entry, now: datetime) -> datetime:
    """When entry ``e`` was written at the latest: its store file's modification time (a checkout
    sets it later, never earlier), or ``now`` when it has none."""
    return known_true(now, file_mtime(layout.cold / agent / cold_store.file_name(e)))


def _commit(layout: Layout, sink: FactSink, due: list[_Due]) -> list[str]:
    """Write in the order that makes a crash harmless; returns the topics written."""
    written: list[str] = sink.flush()  # 1. the wiki (or the proposals) is durable …
    by_agent: dict[str, set[str]] = {}
    moved: dict[str, dict[str, tuple[Entry, Path]]] = {}
    for d in due:
        archive_entry(layout, d.agent, d.entry, sync=False)  # 2. … then the archive …
        by_agent.setdefault(d.agent, set()).add(entry_ref(d.entry))
        if d.entry.entry_id:
            where = layout.archive / archive_name(d.agent, d.entry)
            moved.setdefault(d.agent, {})[d.entry.entry_id] = (d.entry, where)
    if due:
        os.sync()  # … durable as one batch …
    for agent, entries in sorted(moved.items()):
        hot_seed.repoint(layout, agent, entries, get_logger())  # 3. … a seed points at its entry's archive …
    for agent, refs in sorted(by_agent.items()):
        _remove_from_cold(layout, agent, refs)  # 4. … and only then the entries leave cold
    return written


def _early_reversals(
    sink: FactSink, wiki: Wiki, fresh: list[_Due], warnings: list[str]
) -> list[ReversedFact]:
    """Decisions of cold entries still within the TTL that reverse an active wiki fact: promoted now,
    so the wiki never keeps a reversed decision active for a month. The entry stays in cold (its
    other facts are promoted when it is due; this one is then already present)."""
    out: list[ReversedFact] = []
    docs = [wiki.doc(t) for t in wiki.topics()]
    active = {id(b) for d in docs for b in d.blocks if b.active}  # as they were before this pass
    if not active:
        return out
    for d in sorted(fresh, key=lambda d: (d.when, d.agent, entry_ref(d.entry))):
        facts, warn = extract_facts(d.entry, d.agent)
        for f in facts:
            if f.kind != "decision" or not (
                f.supersedes or may_reverse(f.text) or returns(f.text) or statement(claim(f.text))
            ):
                continue
            probe = Block(
                date=f.date, title=f.title, body=f.text, supersedes=f.supersedes, sources=[f.source]
            )
            if any(
                id(b) in active and b.date <= f.date and reverses(probe, b)
                for d in docs
                for b in d.reversal_candidates(probe)
            ):
                warnings += warn
                r = sink.add(f)
                out.append(ReversedFact(d.agent, entry_ref(d.entry), fact_report(f, r)))
    return out


__all__ = [
    "MAX_FACT_BYTES",
    "agent_fact",
    "apply_inbox",
    "classify",
    "deprecate",
    "extract_facts",
    "fact_sink",
    "inbox_dir",
    "parse_as_of",
    "promote",
    "utcnow",
    "wiki_of",
    "write_agent_fact",
]
