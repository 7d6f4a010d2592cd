"""The wiki tier: durable facts in ``wiki/{topic}.md``, one block per fact, written to be read.

A topic file::

    # Wiki: decisions

    > Decisions with their rationale; reversed ones are kept under Superseded.

    ### Use Redis streams for the job queue
    **By:** Riker
    **What:** Use Redis streams for the job queue in src/jobs/queue.py instead of advisory locks
    **Why:** Advisory locks starved the web workers under load.

    *Source:* 2026-10-02 · entry=i-0a1b2c3d4e5f · agent=riker · via=import · file=.squad/decisions.md · lines=40-44 | confidence: 1 session, 1 agent

    ## Superseded

    ### Use PostgreSQL advisory locks for the job queue
    *Status:* superseded by 2026-10-02: Use Redis streams for the job queue
    …

Each fact is its ``### Title``, the statement as written and ONE provenance line: the sources
(``;``-separated: date, entry id, agent, session, file), the confidence and what it replaces. Facts
are never deleted: a reversed one moves under ``## Superseded`` with a line naming what replaced it
and when; a deprecated one too. Every source names the cold entry, import unit or agent write it came
from, which is how a rerun after a crash recognises facts already merged. Nothing here reads the
clock: dates come from sessions, so rewriting the same facts gives the same bytes. Blocks scribed did
not change keep their bytes (people edit these files); blocks of the older format (``### DATE:
title`` with ``- status:``/``- source:`` lines) are read, and rewritten in this one when changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from scribed.compress.entry import one_line
from scribed.compress.restate import differs
from scribed.compress.reversal import OVERLAP, reversal_score
from scribed.compress.terms import norm, same_fact
from scribed.fsutil import atomic_write, read_text
from scribed.log import misnamed
from scribed.tiers.wiki_block import (
    STANDARD_TOPICS,
    SUPERSEDED,
    TITLE_CHARS,
    TOPIC_KIND,
    Block,
    Fact,
    Source,
    WikiError,
    _kind,
    _titled,
    conflict_refusal,
    default_preamble,
    mark_refusal,
    parse_block,
    reverses,
    safe_body,
    split_blocks,
    valid_topic,
)
from scribed.tiers.wiki_index import BlockIndex
from scribed.tiers.wiki_mark import deprecated, joined, state

INDEX = "index.md"
INDEX_MAX_LINES = 200
STRONG = 1.7  # a reversal across topics must name what it reverses (reversal_score above this)


@dataclass(slots=True)
class MergeResult:
    topic: str
    action: str  # added | merged | present (proposed | rejected in review mode)
    block: str  # the block's label "date: title"
    superseded: list[str] = field(default_factory=list)
    superseded_by: str = ""
    blk: Block | None = field(default=None, repr=False, compare=False)


class AuditSink(Protocol):
    """Where a flush reports the changes it made (scribed.tiers.audit.AuditLog)."""

    def append(self, records: list[dict[str, Any]]) -> None: ...


@dataclass(slots=True)
class WikiDoc:
    """One topic file."""

    topic: str
    preamble: str
    blocks: list[Block]
    original: str = ""
    touched: bool = False  # only docs scribed changed are rewritten (never just reformatted)
    _ix: BlockIndex = field(default_factory=BlockIndex, repr=False, compare=False)

    @classmethod
    def parse(cls, topic: str, text: str) -> WikiDoc:
        pre, raws = split_blocks(text)
        blocks = [parse_block(raw) for raw, _ in raws]  # placed by their marks when rendered
        for b in blocks:
            b.kind = b.kind or _kind(topic)
        return cls(
            topic=topic,
            preamble=pre if pre.strip() or blocks else default_preamble(topic),
            blocks=blocks,
            original=text,
        )

    def render(self) -> str:
        parts = [self.preamble.rstrip("\n") + "\n"] if self.preamble.strip() else []
        parts += [b.render().rstrip("\n") + "\n" for b in self.blocks if b.active]
        old = [b.render().rstrip("\n") + "\n" for b in self.blocks if not b.active]
        if old:
            parts += [SUPERSEDED + "\n", *old]
        return "\n".join(parts)

    @property
    def changed(self) -> bool:
        return self.touched and self.render() != self.original

    def index(self) -> BlockIndex:
        """The lookup index over the blocks, caught up with any appended since."""
        return self._ix.sync(self.blocks)

    @property
    def refs(self) -> set[str]:
        return set(self.index().refs)

    def has_ref(self, ref: str) -> bool:
        """Whether a block already names this entry id (a rerun merges nothing twice)."""
        return ref in self.index().refs

    def description(self) -> str:
        for line in self.preamble.splitlines():
            if line.startswith("> ") and line[2:].strip():
                return one_line(line[2:], 120)
        if self.topic in STANDARD_TOPICS:
            return STANDARD_TOPICS[self.topic]
        latest = next((b for b in reversed(self.blocks) if b.active), None)
        return f"Facts filed under '{self.topic}'" + (
            f" (latest: {one_line(latest.title, 60)})" if latest else ""
        )

    def counts(self) -> dict[str, int]:
        out = {"active": 0, "superseded": 0, "deprecated": 0}
        for b in self.blocks:
            out[state(b.status)] += 1
        return out

    # --- merging -------------------------------------------------------------------------------
    def add(self, fact: Fact) -> MergeResult:
        """Merge a fact: a duplicate adds a source, a new fact gets a block, reversals supersede."""
        dups = self._dups(fact)
        # An agent writing now (`wiki-write`, MCP) reads the page its retirement is on: what it
        # says again is said after it, that same day too, and becomes current again. A promoted
        # or imported fact of the retirement's day (or a re-applied inbox file) is not.
        live = fact.source.via == "wiki-write"
        if live:
            _said_again(fact, dups)
        for b in dups:
            if fact.source.ref and fact.source.ref in b.refs:
                return MergeResult(self.topic, "present", b.label)
        self.touched = True
        for b in dups:
            said_before = fact.date < b.status_date or (fact.date == b.status_date and not live)
            if b.active or (b.status_date and said_before):
                return self._merge(b, fact)
        block = _new_block(fact)
        result = MergeResult(self.topic, "added", block.label, blk=block)
        # A later fact that reverses this one is already here (facts promoted out of order).
        for b in self.index().reversing_since(fact.date, block):
            if b.active and reverses(b, block):
                block.status = f"superseded by {b.label}"
                result.superseded_by = b.label
                break
        if block.active:
            for old in self._reversed_by(block):
                old.status = f"superseded by {block.label}"
                old.dirty = True
                result.superseded.append(old.label)
        self.blocks.append(block)
        return result

    def _dups(self, fact: Fact) -> list[Block]:
        """The blocks that hold this fact already (same text; near-duplicate unless ``exact``)."""
        n = norm(fact.text)
        toks = frozenset(n.split())
        ix = self.index()
        if fact.exact:
            dups = ix.ordered(ix.exact.get(n, ()))
        else:
            # alike words, but not one statement with another figure or the other polarity
            dups = [b for b in ix.dups(n, toks) if b.is_dup(n, toks) and not differs(fact.text, b.text)]
        if _titled(fact.title, fact.text):
            # two decisions with their own, different titles are two decisions, however alike
            dups = [b for b in dups if not _titled(b.title, b.text) or norm(b.title) == norm(fact.title)]
        return dups

    def _merge(self, b: Block, fact: Fact) -> MergeResult:
        """Add a duplicate's source (and missing rationale or supersedes) to the block holding it."""
        ix = self.index()
        if b.add_source(fact.source):
            ix.note_refs(Block(date="", title="", sources=[fact.source]).refs)
        if fact.rationale and not b.rationale:
            b.rationale = fact.rationale
        if fact.supersedes and not b.supersedes:
            b.supersedes = fact.supersedes
            ix.note_reversing(b)
        merged = MergeResult(self.topic, "merged", b.label, blk=b)
        if b.active:
            for old in self._reversed_by(b):
                old.status = f"superseded by {b.label}"
                old.dirty = True
                merged.superseded.append(old.label)
        return merged

    def reversal_candidates(self, new: Block) -> list[Block]:
        """The blocks ``new`` may reverse (what its ``supersedes`` names, what its wording names),
        found through the index: a superset for :func:`reverses` to decide on, in block order."""
        ix = self.index()
        named = ix.named(new.supersedes) if new.supersedes else []
        return ix.ordered([*named, *ix.reversed_by(new.text)])

    def _reversed_by(self, new: Block, min_score: float = 0.0) -> list[Block]:
        """Earlier active blocks ``new`` reverses: the one its ``supersedes`` names, else the best
        score (a restatement of one, or its wording naming it)."""
        if not new.reverses_any() and new.stated() is None:
            return []
        ix = self.index()

        def earlier(b: Block) -> bool:
            return b is not new and b.active and b.date <= new.date and not (b.refs & new.refs)

        if new.supersedes:
            named = [
                b
                for b in ix.named(new.supersedes)
                if earlier(b) and (same_fact(new.supersedes, b.text) or same_fact(new.supersedes, b.title))
            ]
            if named:
                return named[-1:]
        best: tuple[float, Block] | None = None
        found = ix.reversed_by(new.text) if new.reverses_any() else ix.restating(new.text)
        for b in found:
            if not earlier(b):
                continue
            score = reversal_score(new.text, b.text)
            if score > min_score and (best is None or score >= best[0]):
                best = (score, b)
        return [best[1]] if best else []

    def deprecate(self, title: str, agent: str, date: str, reason: str = "") -> Block:
        """Mark the block titled ``title`` deprecated (kept, not deleted). A superseded one keeps
        its mark beside the new one: it names the fact that replaced it."""
        want = norm(title)
        exact = [b for b in self.blocks if norm(b.title) == want or norm(b.label) == want]
        found = exact or [b for b in self.blocks if want and (want in norm(b.title) or want in norm(b.text))]
        if not found:
            raise WikiError(f"no block titled {title!r} in wiki/{self.topic}.md")
        if len(found) > 1:
            active = [b for b in found if b.active]
            if len(active) != 1:
                names = "; ".join(b.label for b in found[:5])
                raise WikiError(f"{len(found)} blocks match {title!r} in wiki/{self.topic}.md: {names}")
            found = active
        b = found[0]
        if deprecated(b.status):
            return b
        self.touched = True
        mark = f"deprecated {date} by {agent}" + (f": {one_line(reason, 200)}" if reason.strip() else "")
        b.status = mark if b.active else joined(b.status, mark)
        b.dirty = True
        return b


def _said_again(fact: Fact, dups: list[Block]) -> None:
    """An agent's write whose id a retired block holds (the one who wrote it writes it again) and
    no current one: it is said after the retirement, so it gets an id of its own, made from that
    retirement. Its id, made from the text, would make the new current block a stale copy of the
    retired one to the merge driver; writing it again still finds it (``present``)."""
    ref = fact.source.ref
    retired = [b for b in dups if not b.active and ref in b.refs]
    if ref and retired and not any(b.active and ref in b.refs for b in dups):
        again = f"{ref}\0again\0{retired[0].status}".encode()
        fact.source.ref = "w-" + hashlib.sha256(again).hexdigest()[:12]


def _new_block(fact: Fact) -> Block:
    """The block a new fact gets (its rationale as a ``**Why:**`` line when the text lacks it)."""
    block = Block(
        date=fact.date,
        title=one_line(fact.title, TITLE_CHARS),
        kind=fact.kind,
        supersedes=fact.supersedes,
        rationale=fact.rationale,
        sources=[fact.source],
    )
    body = fact.text.strip()
    if fact.rationale and norm(fact.rationale) not in norm(body):
        body += f"\n**Why:** {fact.rationale.strip()}"
    block.body = "" if body == block.title else body
    return block


# --- the folder ----------------------------------------------------------------------------------
class Wiki:
    """The wiki folder: loads topic docs lazily, writes changed ones atomically, then the index.

    Every change (a fact added or merged, one superseded or deprecated) is noted as an event; with
    an ``audit`` sink, :meth:`flush` hands the events of the topics it wrote to it, after the files
    are durable (scribed.tiers.audit appends them to the audit log).
    """

    def __init__(self, folder: Path, base: Path, audit: AuditSink | None = None) -> None:
        self.folder = folder
        self.base = base
        self.docs: dict[str, WikiDoc] = {}
        self.audit = audit
        self.events: list[dict[str, Any]] = []

    def topics(self) -> list[str]:
        """Topic files on disk plus any loaded in memory, sorted."""
        names = set(self.docs)
        if self.folder.is_dir():
            for p in self.folder.glob("*.md"):
                if not p.is_file() or p.is_symlink() or p.name == INDEX:
                    continue
                if valid_topic(p.stem) == p.stem:
                    names.add(p.stem)
                else:
                    misnamed(p, "topic")
        return sorted(names)

    def doc(self, topic: str) -> WikiDoc:
        name = valid_topic(topic)
        if name is None or name != topic:
            raise WikiError(f"bad topic name {topic!r} (lowercase letters, digits, '-' and '_'; not 'index')")
        if topic not in self.docs:
            self.docs[topic] = WikiDoc.parse(topic, read_text(self.folder / f"{topic}.md"))
        return self.docs[topic]

    def add(self, fact: Fact, note: dict[str, str] | None = None) -> MergeResult:
        """Merge a fact into its topic; a reversal also supersedes what it reverses in other topics."""
        r = self.doc(fact.topic).add(fact)
        if r.action == "present":
            return r
        src = fact.source
        base = {"source": src.ref, "agent": src.agent, "date": fact.date, **(note or {})}
        if src.extra.get("file"):
            base["file"] = src.extra["file"]
        self.events.append({"change": r.action, "topic": fact.topic, "fact": r.block, **base})
        self.events += [
            {"change": "superseded", "topic": fact.topic, "fact": old, "by": r.block, **base}
            for old in r.superseded
        ]
        new = r.blk
        if new is not None and new.active and (new.reverses_any() or new.stated() is not None):
            for topic in self.topics():
                if topic == fact.topic:
                    continue
                doc = self.doc(topic)
                for old_b in doc._reversed_by(new, STRONG):
                    old_b.status = f"superseded by {new.label}"
                    old_b.dirty = True
                    doc.touched = True
                    r.superseded.append(old_b.label)
                    self.events.append(
                        {"change": "superseded", "topic": topic, "fact": old_b.label, "by": new.label, **base}
                    )
        return r

    def deprecate(
        self, topic: str, title: str, agent: str, date: str, reason: str = ""
    ) -> tuple[Block, bool]:
        """The block marked deprecated, and whether this call marked it (False: it already was)."""
        doc = self.doc(topic)
        before = {id(b): b.status for b in doc.blocks}
        b = doc.deprecate(title, agent, date, reason)
        changed = before.get(id(b)) != b.status
        if changed:
            self.events.append(
                {
                    "change": "deprecated",
                    "topic": topic,
                    "fact": b.label,
                    "agent": agent,
                    "date": date,
                    "reason": reason,
                    "source": "",
                }
            )
        return b, changed

    def refs(self) -> set[str]:
        out: set[str] = set()
        for t in self.topics():
            out |= self.doc(t).refs
        return out

    def changed(self) -> list[str]:
        return [t for t, d in sorted(self.docs.items()) if d.changed and d.blocks]

    def flush(self) -> list[str]:
        """Write every changed topic (atomic, durable), then regenerate the index. Returns topics written."""
        written = []
        for topic, doc in sorted(self.docs.items()):
            if not (doc.touched and doc.blocks):
                continue
            text = doc.render()  # once: ``changed`` renders too, and a big topic takes a while
            if text == doc.original:
                continue
            atomic_write(self.folder / f"{topic}.md", text, base=self.base)
            doc.original = text
            written.append(topic)
        self.write_index()
        events = [e for e in self.events if e["topic"] in written]
        self.events = []
        if self.audit is not None and events:
            self.audit.append(events)  # after the files: a record never names a change not made
        return written

    def index_text(self) -> str:
        return render_index(self.doc(t) for t in self.topics())

    def write_index(self) -> bool:
        """Regenerate ``index.md`` when it differs (and there is a wiki at all)."""
        topics = self.topics()
        if not topics:
            return False
        text = self.index_text()
        path = self.folder / INDEX
        if read_text(path) == text:
            return False
        atomic_write(path, text, base=self.base)
        return True


def render_index(docs: Iterable[WikiDoc]) -> str:
    """``index.md``: one line per topic with its description and counts, at most 200 lines."""
    head = [
        "# Wiki index",
        "",
        "<!-- Generated by scribed on every wiki write; edit the topic files, not this one. -->",
        "",
    ]
    lines = []
    for d in docs:
        if not d.blocks:
            continue
        c = d.counts()
        extra = ", ".join(f"{n} {k}" for k, n in c.items() if n and k != "active")
        counts = f"{c['active']} active" + (f", {extra}" if extra else "")
        lines.append(f"- [{d.topic}]({d.topic}.md): {d.description()} ({counts})")
    room = INDEX_MAX_LINES - len(head) - 1
    if len(lines) > room:
        more = len(lines) - (room - 1)
        lines = [*lines[: room - 1], f"- … and {more} more topics (see the wiki folder)"]
    return "\n".join(head + lines) + "\n"


__all__ = [
    "INDEX",
    "INDEX_MAX_LINES",
    "OVERLAP",
    "STANDARD_TOPICS",
    "SUPERSEDED",
    "TITLE_CHARS",
    "TOPIC_KIND",
    "Block",
    "Fact",
    "MergeResult",
    "Source",
    "Wiki",
    "WikiDoc",
    "WikiError",
    "conflict_refusal",
    "default_preamble",
    "mark_refusal",
    "parse_block",
    "render_index",
    "reversal_score",
    "reverses",
    "safe_body",
    "split_blocks",
    "valid_topic",
]
