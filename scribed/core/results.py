"""What the core's operations return: typed results, each with ``to_json()`` for ``--json`` output.

The tier writers' records (a fact, a deprecation, the inbox, a review) live in
:mod:`scribed.tiers.records` and are re-exported here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from scribed.session.door import redacted
from scribed.tiers.records import (
    DeprecateResult,
    FactReport,
    FactResult,
    InboxApplied,
    InboxQuarantined,
    InboxResult,
    Json,
    JsonRecord,
    ProposalRow,
    ReviewItem,
    ReviewResult,
)


@dataclass(slots=True, frozen=True)
class SourceItem:
    """One file to consider, with the agent its sessions default to."""

    path: Path
    kind: str
    agent: str


@dataclass(slots=True)
class EntryReport:
    agent: str
    session: str
    source: str
    bytes_in: int
    bytes_out: int
    ratio: float
    recall: float
    compressor: str
    entry_id: str = ""
    llm_error: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    ms: int = 0

    def public(self) -> Json:
        return {
            "agent": self.agent,
            "session": self.session,
            "source": self.source,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "ratio": round(self.ratio, 4),
            "recall": round(self.recall, 4),
            "compressor": self.compressor,
        }


@dataclass(slots=True)
class FileOutcome:
    """What happened to one source file."""

    status: str  # compacted | unchanged | not-finished | empty | failed | skipped
    sessions: int = 0
    entries: list[EntryReport] = field(default_factory=list)
    skipped: int = 0
    failed: int = 0
    reason: str = ""


@dataclass(slots=True)
class RunReport:
    sessions: int = 0
    compacted: int = 0
    skipped: int = 0
    failed: int = 0
    files: int = 0
    warnings: int = 0
    entries: list[EntryReport] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    inbox: dict[str, int] = field(default_factory=dict)

    def add(self, item: SourceItem, out: FileOutcome) -> None:
        self.files += 1
        self.sessions += out.sessions
        self.compacted += len(out.entries)
        self.skipped += out.skipped
        self.failed += out.failed
        self.entries.extend(out.entries)
        if out.failed:
            self.failures.append({"source": redacted(str(item.path)), "reason": out.reason})

    def public(self) -> Json:
        return {
            "sessions": self.sessions,
            "compacted": self.compacted,
            "skipped": self.skipped,
            "failed": self.failed,
            "files": self.files,
            "warnings": self.warnings,
            "entries": [e.public() for e in self.entries],
            "failures": self.failures,
            "inbox": self.inbox,
        }

    to_json = public


# --- promotion ------------------------------------------------------------------------------------
@dataclass(slots=True, frozen=True)
class PromotedEntry(JsonRecord):
    """A cold entry that left cold: its facts went to the wiki (``promoted``) or it had none
    (``archived``, no ``facts``/``topics`` keys)."""

    agent: str
    entry: str
    date: str
    title: str
    archive: str
    facts: tuple[FactReport, ...] = ()
    topics: tuple[str, ...] = ()
    _OPTIONAL = ("facts", "topics")


@dataclass(slots=True, frozen=True)
class ReversedFact(JsonRecord):
    """A decision of a fresh cold entry promoted early because it reverses an active wiki fact."""

    agent: str
    entry: str
    fact: FactReport

    def to_json(self) -> Json:
        return {"agent": self.agent, "entry": self.entry, **self.fact.to_json()}


@dataclass(slots=True, frozen=True)
class PromoteResult(JsonRecord):
    """One promotion pass: cold entries promoted into the wiki or archived."""

    as_of: str
    cutoff: str
    dry_run: bool
    promoted: tuple[PromotedEntry, ...]
    archived: tuple[PromotedEntry, ...]
    kept: int
    topics: dict[str, dict[str, int]]  # topic → {"added", "merged", "present", "superseded"} counts
    inbox: InboxResult
    mode: str
    warnings: tuple[str, ...]
    written: tuple[str, ...]
    reversals: tuple[ReversedFact, ...]


# --- legacy import ---------------------------------------------------------------------------------
@dataclass(slots=True, frozen=True)
class ImportedEntry(JsonRecord):
    """A history entry imported to cold (no ``topics``/``facts``/``archive``), or, when old,
    promoted (its facts' topics) or archived, in the run's ``archive``."""

    agent: str
    entry: str
    date: str
    title: str
    source: str
    lines: str
    topics: tuple[str, ...] = ()
    facts: int = 0
    archive: str = ""
    _OPTIONAL = ("topics", "facts", "archive")


@dataclass(slots=True, frozen=True)
class ImportedDecision(JsonRecord):
    """A decisions.md entry written to the wiki (or proposed)."""

    agent: str
    entry: str
    date: str
    title: str
    source: str
    lines: str
    topic: str
    action: str
    titled: bool


@dataclass(slots=True, frozen=True)
class PinnedFact(JsonRecord):
    """An agent's Core Context (``by`` absent) or a team update (``by``: its author) pinned to the wiki."""

    agent: str
    topic: str
    title: str
    action: str
    by: str | None = None


@dataclass(slots=True, frozen=True)
class NotDecision(JsonRecord):
    """A decisions.md section not taken as a decision, and why."""

    source: str
    lines: str
    title: str
    reason: str


@dataclass(slots=True, frozen=True)
class ImportResult(JsonRecord):
    """A legacy Squad import: what went to cold, the wiki and the archive."""

    as_of: str
    agents: tuple[str, ...]
    cold: tuple[ImportedEntry, ...]
    promoted: tuple[ImportedEntry, ...]
    archived: tuple[ImportedEntry, ...]
    pinned: tuple[PinnedFact, ...]
    decisions: tuple[ImportedDecision, ...]
    not_decisions: tuple[NotDecision, ...]
    skipped: int
    dry_run: bool
    warnings: tuple[str, ...]
    mode: str
    root: str
    cutoff: str
    legacy_archived: tuple[str, ...]
    topics: dict[str, dict[str, int]]  # topic → {"added", "merged", "present", "superseded"} counts


__all__ = [
    "DeprecateResult",
    "EntryReport",
    "FactReport",
    "FactResult",
    "FileOutcome",
    "ImportResult",
    "ImportedDecision",
    "ImportedEntry",
    "InboxApplied",
    "InboxQuarantined",
    "InboxResult",
    "Json",
    "NotDecision",
    "PinnedFact",
    "PromoteResult",
    "PromotedEntry",
    "ProposalRow",
    "ReversedFact",
    "ReviewItem",
    "ReviewResult",
    "RunReport",
    "SourceItem",
]
