"""What ``scribed import`` makes of one legacy unit: a cold entry, wiki facts, a hot seed.

A history entry becomes a cold entry through the same extractive summary,
:func:`scribed.compress.entry_fit.fit` and :func:`scribed.tiers.cold.append` as a live session. A
decision becomes one wiki fact: its title, its statement as written (By/What/Why, or its first
paragraph) and its provenance (file and lines). After an import, an agent without a hot file (or
with a blank one) gets a seed from its newest entry, so its default spawn carries its last known
state and a pointer to where the rest went.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import re
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed.compress import anchors as anchors_mod
from scribed.compress import decisions, entry, entry_fit, entry_guard
from scribed.compress.entry import Entry, one_line, split_entries
from scribed.compress.extractive import ExtractiveCompressor
from scribed.compress.terms import norm
from scribed.config import CompressCfg, Config
from scribed.core.budget import entry_budget
from scribed.core.results import ImportedEntry
from scribed.models import Anchor, Session, Summary, Turn
from scribed.names import slug
from scribed.session.door import redacted
from scribed.session.redact import redact
from scribed.squad import legacy
from scribed.tiers import live, seed_text
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import Fact, Source, Wiki, safe_body

if TYPE_CHECKING:
    from scribed.log import Logger

_DURABLE = re.compile(
    r"\b(?:always|never|must|convention|cannot|can't|only|limit|requires?|api|endpoint|schema|contract|"
    r"interface|returns?|learned|lesson|gotcha|turns out|pattern|prefer|avoid|note that|root cause)\b",
    re.I,
)
IMPORT_SEED = "import"


@dataclass(slots=True)
class Unit:
    """One history entry or decision: what becomes one cold entry or one wiki fact."""

    agent: str
    kind: str  # squad-history | squad-decisions
    source: str  # path relative to the root
    title: str
    date: datetime
    dated: bool
    text: str  # the entry's lines as written
    first_line: int
    last_line: int
    statement: str = ""  # a decision's statement as written
    titled: bool = True
    scribed_entry: str = ""  # a decision scribed proposed to Squad's inbox: the entry it came from
    _ref: str = ""

    @property
    def ref(self) -> str:
        """The unit's id, from what it says (kind, title, its own date, normalised text), never from
        its file or line: ``squad nap`` moves history sections to ``history-archive.md`` and inbox
        files into ``decisions.md`` (then ``decisions-archive.md``), and moved material keeps its id.
        A date only a file or a grouping heading gave (undated, or a decision's) is not part of it;
        a history entry's agent is (Squad writes the same first entry into every agent's history)."""
        if not self._ref:
            own = self.kind == "squad-history"
            day = self.date.date().isoformat() if self.dated and own else ""
            who = self.agent if own else ""
            ident = f"{self.kind}\0{who}\0{legacy.key(self.title)}\0{day}\0{content_key(self.text)}"
            self._ref = "i-" + hashlib.sha256(ident.encode()).hexdigest()[:12]
        return self._ref

    @property
    def legacy_ref(self) -> str:
        """The id earlier versions gave this unit (its file, title and text): a root imported by
        one of them is recognised, not imported twice."""
        ident = f"{self.source}\0{self.title}\0{self.text.strip()}"
        return "i-" + hashlib.sha256(ident.encode()).hexdigest()[:12]

    @property
    def text_sha(self) -> str:
        """sha256 of the text as written, the ``sha256=`` of its cold entry's provenance line."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    def report(self) -> ImportedEntry:
        """What ``scribed import`` reports of this unit."""
        return ImportedEntry(
            agent=self.agent,
            entry=self.ref,
            date=entry.iso(self.date),
            title=redact(one_line(self.title, 100)),
            source=self.source,
            lines=f"{self.first_line}-{self.last_line}",
        )

    def ledger_row(self, layout: Layout, text: str, created_at: str) -> dict[str, Any]:
        """The ledger row of this unit imported as ``text`` (so a second import skips it)."""
        size_in, size_out = len(self.text.encode()), len(text.encode())
        return {
            "id": self.ref,
            "path": str(layout.root / self.source),
            "session": f"import:{self.kind}",
            "agent": self.agent,
            "session_end": entry.iso(self.date),
            "start_offset": self.first_line,
            "end_offset": self.last_line,
            "bytes_in": size_in,
            "bytes_out": size_out,
            "ratio": size_out / max(1, size_in),
            "recall": 1.0,
            "compressor": "extractive",
            "created_at": created_at,
        }


def content_key(text: str) -> str:
    """A unit's text compared loosely: debris lines (rules, lone marks, empty labels) and blank lines
    dropped, whitespace collapsed, casefolded; how a move re-spaces or re-separates a block does not
    change it."""
    lines = [ln.strip() for ln in legacy.clean(text).splitlines() if ln.strip()]
    return " ".join(" ".join(lines).casefold().split())


_PROVENANCE = re.compile(r"agent=(?P<agent>[^\s·]+).*?sha256=(?P<sha>[0-9a-f]{64})")


def imported_texts(layout: Layout) -> dict[str, set[str]]:
    """Per agent, the sha256 of every history text in cold or in an import archive (their entries'
    provenance lines): material an earlier version imported under a path-based id and ``squad nap``
    moved since is recognised by its content."""
    out: dict[str, set[str]] = {}
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(layout.cold.glob("*.md"))]
    folder = layout.archive / "promoted"
    for p in sorted(folder.glob("import-*.md.gz")) if folder.is_dir() else []:
        with contextlib.suppress(OSError, EOFError):
            texts.append(gzip.decompress(p.read_bytes()).decode("utf-8", "replace"))
    for text in texts:
        for m in _PROVENANCE.finditer(text):
            out.setdefault(m.group("agent"), set()).add(m.group("sha"))
    return out


def in_wiki(wiki: Wiki, fact: Fact) -> bool:
    """Whether an import already put this decision in the wiki: same title, same text (one imported
    by an earlier version under a path-based id, then moved by ``squad nap``)."""
    n = norm(fact.text)
    return any(
        b.title == fact.title and b.key()[0] == n and any(s.via == "import" for s in b.sources)
        for b in wiki.doc(fact.topic).blocks
    )


MIN_ITEM_CHARS = 12  # shorter lines of a legacy entry are labels, not knowledge
MAX_KNOWLEDGE = 12  # key facts kept per imported unit


def decision_fact(u: Unit) -> Fact:
    """A decision as a wiki fact: title, statement as written, provenance naming file and lines."""
    date = u.date.date().isoformat()
    extra = {"file": u.source, "lines": f"{u.first_line}-{u.last_line}"}
    return Fact(
        topic="decisions",
        kind="decision",
        text=safe_body(redact(u.statement or u.title)).strip(),
        date=date,
        source=Source(date=date, ref=u.scribed_entry or u.ref, agent=u.agent, via="import", extra=extra),
        title=redact(one_line(u.title, 100)),
    )


def _summary(unit: Unit, ccfg: CompressCfg) -> tuple[Summary, list[Anchor], Session, int]:
    """The extractive summary of one unit (the same compressor and budget rule as live sessions)
    and its budget."""
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
    budget = entry_budget(ccfg, len(unit.text.encode()) or 1, found)
    s = ExtractiveCompressor().compress(sess, found, budget).summary
    s.goal = redact(one_line(unit.title, 160))
    have = {*s.decisions, *s.knowledge}
    for t in turns:
        for line in t.text.splitlines():
            item = line.strip().lstrip("-*+>").strip()
            if len(item) < MIN_ITEM_CHARS or item in have or item.startswith(("#", "```", "|")):
                continue
            if decisions.stated(item):
                continue
            if _DURABLE.search(item) and len(s.knowledge) < MAX_KNOWLEDGE:
                s.knowledge.append(item)
                have.add(item)
    return s, found, sess, budget


def render_unit(unit: Unit, cfg: Config, *, fit: bool) -> str:
    """The unit as a cold entry (fitted to the compress budget when it goes to the cold tier)."""
    bytes_in = len(unit.text.encode()) or 1
    summary, found, sess, budget = _summary(unit, cfg.compress)
    meta = entry.EntryMeta(
        entry_id=unit.ref,
        agent=unit.agent,
        session=f"history-{slug(unit.title, 40)}",
        source=unit.source,
        kind=unit.kind,
        end=unit.date,
        first_line=unit.first_line,
        last_line=unit.last_line,
        turns=len(sess.turns),
        sha256=unit.text_sha,
        compressor="extractive",
        bytes_in=bytes_in,
        extra={} if unit.dated else {entry.DATED_BY: entry.BY_FILE},  # no seed of a teammate's clone
    )
    if fit:
        errors = list(summary.errors)
        summary = entry_fit.fit(summary, meta, budget)
        summary, meta.recall = entry_guard.guard(summary, found, meta, int(budget * 1.15), errors)
    return redact(entry.render(summary, meta))


def seed_source(units: list[Unit]) -> tuple[Unit | None, frozenset[str]]:
    """The history unit an agent's import seed comes from (``units`` sorted oldest first): its newest
    dated entry (of one date, a heading's session before a dated bullet recapping it, the later one
    in the file first), else its last undated one; and the ids of its undated entries, which must not
    outrank a dated one (their date is only the file's: "Learnings", "Archive", "Project Context")."""
    dated = [u for u in units if u.dated]
    if not dated:
        return (units[-1] if units else None), frozenset()
    newest = max(reversed(dated), key=lambda u: (u.date, u.titled))
    return newest, frozenset(u.ref for u in units if not u.dated)


def seed_hot(
    layout: Layout,
    agent: str,
    newest: Unit | None,
    cfg: Config,
    log: Logger,
    *,
    skip: frozenset[str] = frozenset(),
) -> bool:
    """Seed ``hot/{agent}.md`` after an import when it is missing, blank or an older import seed:
    from the newer of the agent's newest cold entry (not one of ``skip``, the undated history
    entries) and ``newest``, its newest history entry. Never touches a hot file an agent wrote or a
    running session's live view."""
    path = layout.hot_file(agent)
    if path.is_symlink():
        return False
    before = live.current_bytes(path)
    if before is not None:
        value = live.live_fields(before).get(live.MARKER, "")
        ours = value.startswith(live.SEED_PREFIX + IMPORT_SEED + ":") and live.owned(before)
        if not ours and (value or not live.is_blank(path, agent)):
            return False
    e: Entry | None = seed_text.newest_entry(layout, agent, skip, newest.ref if newest else "")
    where = ""
    if newest is not None and (e is None or entry.iso(newest.date) > e.date):
        e = split_entries(render_unit(newest, cfg, fit=True))[1][0]  # archived or promoted: not in cold
        where = newest.source
    if e is None:
        return False
    last = seed_text.last_session(layout, agent, e)
    if where:
        last = replace(last, cold=where)
    text = seed_text.render(agent, seed_text.marker(IMPORT_SEED, redacted(e.entry_id or "import")), last)
    if before == text.encode() or not live.swap(path, before, text.encode(), base=layout.memory):
        return False
    log.info("hot_seeded", agent=agent, entry=e.entry_id, via="import")
    return True
