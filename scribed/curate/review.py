"""Review before promotion: ``[promote] mode = "review"`` turns wiki writes into proposals.

In review mode the nightly promotion and ``scribed import`` hand their facts to a
:class:`ReviewSink` instead of the wiki: each becomes a proposal in
``.squad/memory/.scribed/tiers/review/proposals.json`` (its id hashes the topic, the source id and the
normalised text, so proposing the same fact again is a no-op). ``scribed review`` lists them;
``approve`` merges them into the wiki (with an audit record each), ``reject`` marks them so that
they are never proposed again. Both are idempotent.

Approval order, for a crash at any point: the wiki files are written (atomically, one by one), then
the audit records, then the proposals file. A rerun finds facts already in the wiki ("present"),
writes the audit record that is missing for them, and marks them approved; no fact is merged twice
and no wiki file is ever half-written.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scribed.compress.entry import iso
from scribed.compress.terms import norm
from scribed.dates import Clock
from scribed.fsutil import atomic_write, read_text
from scribed.tiers import audit
from scribed.tiers.cold import Layout
from scribed.tiers.records import ProposalRow, ReviewItem, ReviewResult
from scribed.tiers.wiki import Fact, MergeResult, Source, Wiki, WikiDoc, WikiError

PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"


def store(layout: Layout) -> Path:
    return layout.state / "review" / "proposals.json"


def proposal_id(fact: Fact) -> str:
    key = f"{fact.topic}\0{fact.source.ref}\0{norm(fact.text)}"
    return "p-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def fact_dict(fact: Fact) -> dict[str, Any]:
    return asdict(fact)


def fact_of(data: dict[str, Any]) -> Fact:
    src = Source(**data["source"])
    return Fact(**{**data, "source": src})


@dataclass(slots=True)
class Proposal:
    id: str
    topic: str
    title: str
    fact: dict[str, Any]
    action: str  # promote | import | inbox: what proposed it
    created: str
    status: str = PENDING
    decided: str = ""
    reason: str = ""
    supersedes: list[str] = field(default_factory=list)


class Proposals:
    """The proposals file of a root: read on creation, written whole (atomically) by :meth:`save`."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.items: dict[str, Proposal] = {}
        self.dirty = False
        text = read_text(store(layout))
        try:
            rows = json.loads(text) if text.strip() else []
        except json.JSONDecodeError as exc:
            raise WikiError(f"{store(layout)}: not valid JSON ({exc}); fix or move it") from None
        for row in rows if isinstance(rows, list) else []:
            try:
                p = Proposal(**row)
            except TypeError:
                continue
            self.items[p.id] = p

    def save(self) -> None:
        if not self.dirty:
            return
        audit.ensure_state(self.layout)
        rows = [asdict(p) for p in sorted(self.items.values(), key=lambda p: (p.created, p.id))]
        atomic_write(
            store(self.layout), json.dumps(rows, indent=1, ensure_ascii=False) + "\n", base=self.layout.memory
        )
        self.dirty = False

    def pending(self) -> list[Proposal]:
        return [p for p in self.items.values() if p.status == PENDING]


class ReviewSink:
    """Stands in for the wiki in review mode: facts become proposals, the wiki is only read."""

    def __init__(self, wiki: Wiki, proposals: Proposals, action: str, clock: Clock) -> None:
        self.wiki = wiki
        self.proposals = proposals
        self.action = action
        self.clock = clock

    def doc(self, topic: str) -> WikiDoc:
        return self.wiki.doc(topic)

    def refs(self) -> set[str]:
        return self.wiki.refs()

    def add(self, fact: Fact, note: dict[str, str] | None = None) -> MergeResult:
        doc = self.wiki.doc(fact.topic)
        label = f"{fact.date}: {fact.title}"
        if fact.source.ref and doc.has_ref(fact.source.ref):
            return MergeResult(fact.topic, "present", label)
        pid = proposal_id(fact)
        known = self.proposals.items.get(pid)
        if known is not None:
            return MergeResult(fact.topic, "proposed" if known.status == PENDING else known.status, label)
        self.proposals.items[pid] = Proposal(
            id=pid,
            topic=fact.topic,
            title=fact.title,
            fact=fact_dict(fact),
            action=self.action,
            created=iso(self.clock()),
        )
        self.proposals.dirty = True
        return MergeResult(fact.topic, "proposed", label)

    def flush(self) -> list[str]:
        self.proposals.save()
        return []


def listing(layout: Layout, *, everything: bool = False) -> list[ProposalRow]:
    props = Proposals(layout)
    rows = props.items.values() if everything else props.pending()
    out = []
    for p in sorted(rows, key=lambda p: (p.created, p.id)):
        f = p.fact
        src = f.get("source", {})
        out.append(
            ProposalRow(
                id=p.id,
                status=p.status,
                topic=p.topic,
                title=p.title,
                text=f.get("text", ""),
                date=f.get("date", ""),
                agent=src.get("agent", ""),
                source=src.get("ref", ""),
                file=src.get("extra", {}).get("file", ""),
                action=p.action,
                created=p.created,
                decided=p.decided,
                reason=p.reason,
            )
        )
    return out


def _wiki(layout: Layout, clock: Clock) -> Wiki:
    return Wiki(layout.wiki, layout.memory, audit=audit.AuditLog(layout, "approve", clock))


def _pending(props: Proposals, ids: list[str], results: list[ReviewItem]) -> Iterator[tuple[str, Proposal]]:
    """The named proposals still pending, each once; the others are reported in ``results``."""
    for pid in dict.fromkeys(ids):
        p = props.items.get(pid)
        if p is None:
            results.append(ReviewItem(pid, "unknown"))
        elif p.status != PENDING:
            results.append(ReviewItem(pid, f"already {p.status}"))
        else:
            yield pid, p


def approve(layout: Layout, ids: list[str], clock: Clock) -> ReviewResult:
    """Merge the named proposals into the wiki (the caller holds the root lock)."""
    props = Proposals(layout)
    wiki = _wiki(layout, clock)
    results: list[ReviewItem] = []
    todo: list[tuple[Proposal, MergeResult]] = []
    for pid, p in _pending(props, ids, results):
        r = wiki.add(fact_of(p.fact), note={"proposal": pid})
        p.supersedes = list(r.superseded)
        todo.append((p, r))
    wiki.flush()  # 1. the wiki and 2. its audit records
    now = iso(clock())
    for p, r in todo:
        if r.action == "present" and not audit.has(layout, proposal=p.id):
            # applied before a crash that came before its audit record: write that record now
            audit.AuditLog(layout, "approve", clock).append(
                [
                    {
                        "change": "added",
                        "topic": p.topic,
                        "fact": r.block,
                        "proposal": p.id,
                        "source": p.fact["source"]["ref"],
                        "agent": p.fact["source"]["agent"],
                    }
                ]
            )
        p.status, p.decided = APPROVED, now
        props.dirty = True
        results.append(ReviewItem(p.id, "approved", p.topic, p.title, r.action))
    props.save()  # 3. the proposals
    return ReviewResult(tuple(results))


def reject(layout: Layout, ids: list[str], clock: Clock, reason: str = "") -> ReviewResult:
    """Mark the named proposals rejected: they never reach the wiki and are never proposed again."""
    props = Proposals(layout)
    results: list[ReviewItem] = []
    now = iso(clock())
    for pid, p in _pending(props, ids, results):
        p.status, p.decided, p.reason = REJECTED, now, reason
        props.dirty = True
        results.append(ReviewItem(pid, "rejected", p.topic, p.title))
    props.save()
    return ReviewResult(tuple(results))
