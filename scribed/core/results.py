"""What the core's operations return: typed results, each with ``to_json()`` for ``--json`` output.

The tier writers' records (a fact, a deprecation, the inbox, a review) live in
:mod:`scribed.tiers.records` and are re-exported here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from scribed import hint
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
    """One file to consider, with the agent its sessions default to and the folders its session
    must have run in (``scope``, absolute; None: any, see :meth:`scribed.config.SourceCfg.scope`)."""

    path: Path
    kind: str
    agent: str
    scope: tuple[str, ...] | None = None


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
    claimed: str = ""  # a future date the session's stamps claimed (a wrong clock), ISO; "" when none
    dated: str = ""  # with ``claimed``: the date the entry got instead (the file's time or the run's)

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


# Why a session was not compacted (``FileOutcome.skips`` / ``RunReport.skips`` keys).
SKIP_ACTIVE = "active"  # not finished: changed within [session] quiet_seconds and no end marker
SKIP_DONE = "compacted_before"  # the ledger already holds its entry (a copy, a moved file)
SKIP_EMPTY = "nothing_to_remember"  # only a tool's banner or output since the last entry
SKIP_ELSEWHERE = "other_repository"  # recorded as run outside the source's workspace (the root)
SKIP_NO_PLACE = "no_recorded_workspace"  # a scoped source's session that records no working directory


@dataclass(slots=True)
class FileOutcome:
    """What happened to one source file.

    Each session met counts once: ``sessions == len(entries) + skipped + failed``, ``skips`` says
    why each skipped one was (its values add up to ``skipped``). A failure of the file itself (it
    cannot be read, it changed while read) that concerns no session sets ``file_failed``.
    """

    status: str  # compacted | unchanged | not-finished | empty | failed | skipped
    sessions: int = 0
    entries: list[EntryReport] = field(default_factory=list)
    skipped: int = 0
    failed: int = 0
    reason: str = ""
    skips: dict[str, int] = field(default_factory=dict)
    file_failed: bool = False
    last_change: float = 0.0  # the file's modification time (epoch) when sessions were active
    reasons: list[str] = field(default_factory=list)  # one per failed session, in order
    warnings: int = 0  # the file's source warnings (each one logged as ``source_warning``)

    def fail(self, reason: str) -> None:
        """One session failed for ``reason`` (each is listed: a file's sessions fail apart)."""
        self.failed += 1
        self.reason = reason
        self.reasons.append(reason)

    def skip(self, why: str, n: int = 1, *, counted: bool = False) -> None:
        """``n`` sessions skipped for ``why`` (``counted``: already in ``sessions``)."""
        self.sessions += 0 if counted else n
        self.skipped += n
        self.skips[why] = self.skips.get(why, 0) + n


@dataclass(slots=True)
class RunReport:
    """A run's totals. ``sessions == compacted + skipped + failed``; ``files_failed`` counts files
    that failed as a whole (unreadable, changed while read), whose sessions are not known."""

    sessions: int = 0
    compacted: int = 0
    skipped: int = 0
    failed: int = 0
    files: int = 0
    files_failed: int = 0
    warnings: int = 0
    entries: list[EntryReport] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    source_warnings: list[dict[str, str]] = field(default_factory=list)  # discovery's, about a source
    inbox: dict[str, int] = field(default_factory=dict)
    skips: dict[str, int] = field(default_factory=dict)
    last_change: float = 0.0  # the newest change among files with active sessions (epoch)
    quiet_seconds: float = 0.0
    copies_retried: int = 0  # transcript copies a failed archive folder owed, made this run
    copies_owed: int = 0  # … still owed after it (retried by the next run)

    def add(self, item: SourceItem, out: FileOutcome) -> None:
        self.files += 1
        self.sessions += out.sessions
        self.compacted += len(out.entries)
        self.skipped += out.skipped
        self.failed += out.failed
        self.files_failed += out.file_failed
        self.warnings += out.warnings
        self.entries.extend(out.entries)
        for why, n in out.skips.items():
            self.skips[why] = self.skips.get(why, 0) + n
        if out.skips.get(SKIP_ACTIVE):
            self.last_change = max(self.last_change, out.last_change)
        if out.failed or out.file_failed:
            source = redacted(str(item.path))
            for reason in out.reasons or [out.reason]:
                self.failures.append({"source": source, "reason": reason})

    @property
    def ok(self) -> bool:
        """Nothing failed (the exit status: a failure stays queued for the next run)."""
        return not (self.failed or self.files_failed)

    def public(self) -> Json:
        return {
            "sessions": self.sessions,
            "compacted": self.compacted,
            "skipped": self.skipped,
            "failed": self.failed,
            "files": self.files,
            "files_failed": self.files_failed,
            "warnings": self.warnings,
            "skips": dict(sorted(self.skips.items())),
            "last_change": _iso(self.last_change) if self.last_change else None,
            "quiet_seconds": self.quiet_seconds,
            "entries": [e.public() for e in self.entries],
            "failures": self.failures,
            "source_warnings": [{k: redacted(v) for k, v in w.items()} for w in self.source_warnings],
            "inbox": self.inbox,
            "copies_retried": self.copies_retried,
            "copies_owed": self.copies_owed,
        }

    to_json = public

    def why_not(self, now: float) -> list[str]:
        """One line per reason sessions were not compacted, with what to do (``now``: epoch)."""
        lines: list[str] = []
        active = self.skips.get(SKIP_ACTIVE, 0)
        if active:
            age = ago(now - self.last_change) if self.last_change else "recently"
            lines.append(
                f"{_n(active)} still active (last change {age}; finished after "
                f"{duration(self.quiet_seconds)} quiet — `--force` to compact now)"
            )
        done = self.skips.get(SKIP_DONE, 0)
        if done:
            lines.append(f"{_n(done)} compacted before (the ledger holds their entries): nothing to do")
        empty = self.skips.get(SKIP_EMPTY, 0)
        if empty:
            lines.append(f"{_n(empty)} with nothing to remember (only tool output since the last entry)")
        elsewhere = self.skips.get(SKIP_ELSEWHERE, 0)
        if elsewhere:
            lines.append(
                f"{_n(elsewhere)} of other repositories skipped (run outside the source's workspace, "
                "by default the root: see `workspace` in docs/configuration.md)"
            )
        unplaced = self.skips.get(SKIP_NO_PLACE, 0)
        if unplaced:
            lines.append(
                f"{_n(unplaced)} with no recorded working directory skipped (which repository they "
                'belong to is unknown; `workspace = "*"` on the source takes them)'
            )
        lines += self._source_lines() + self._copy_lines()
        if self.failed or self.files_failed:
            parts = [_n(self.failed) + " failed"] if self.failed else []
            if self.files_failed:
                parts.append(f"{self.files_failed} file{'s' * (self.files_failed != 1)} could not be read")
            lines.append(
                f"{' and '.join(parts)}: retried on the next run (`{hint.cmd('status')}` shows the reasons)"
            )
            lines += [f"  {f['source']}: {f['reason']}" for f in self.failures[:FAILURES_SHOWN]]
            more = len(self.failures) - FAILURES_SHOWN
            if more > 0:
                lines.append(f"  … and {more} more (`{hint.cmd('run-once', '--json')}` lists every one)")
        return lines

    def _copy_lines(self) -> list[str]:
        """Transcript copies a failed archive folder owed: made now, or still owed."""
        lines = []
        if self.copies_retried:
            n = self.copies_retried
            lines.append(
                f"{n} transcript cop{'ies' if n != 1 else 'y'} missed by a failed archive folder made now"
            )
        if self.copies_owed:
            n = self.copies_owed
            lines.append(
                f"{n} transcript cop{'ies' if n != 1 else 'y'} still owed (the archive folder fails, or the "
                "transcript changed since): retried on the next run"
            )
        return lines

    def _source_lines(self) -> list[str]:
        """Discovery's warnings about the sources (a folder it cannot read, a source one level too
        high or matching nothing, a broken link), each as ``check-config`` and ``doctor`` say it."""
        said = self.source_warnings
        if not said:
            return []
        n = len(said)
        lines = [f"{n} source warning{'s' * (n != 1)} (`{hint.cmd('doctor')}` lists each with what to do):"]
        for w in said[:FAILURES_SHOWN]:
            shown = w["reason"] if w["source"] in w["reason"] else f"{w['source']}: {w['reason']}"
            lines.append(f"  {redacted(shown)}")
        if n > FAILURES_SHOWN:
            lines.append(
                f"  … and {n - FAILURES_SHOWN} more (`{hint.cmd('run-once', '--json')}` lists every one)"
            )
        return lines


FAILURES_SHOWN = 10  # failure (and source warning) lines in the text summary; --json has them all


def _n(sessions: int) -> str:
    return f"{sessions} session{'s' * (sessions != 1)}"


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


MINUTE, HOUR = 60, 3600


def duration(seconds: float) -> str:
    """``30 min``, ``2 h``, ``45 s``: the quiet time as a person says it."""
    if seconds >= HOUR and seconds % HOUR == 0:
        return f"{int(seconds // HOUR)} h"
    if seconds >= MINUTE:
        return f"{round(seconds / MINUTE)} min"
    return f"{seconds:g} s"


def ago(seconds: float) -> str:
    """``45 s ago``, ``2 min ago`` (under two hours), ``5 h ago``."""
    seconds = max(0.0, seconds)
    if seconds < MINUTE:
        return f"{int(seconds)} s ago"
    if seconds < 2 * HOUR:
        return f"{round(seconds / MINUTE)} min ago"
    return f"{round(seconds / HOUR)} h ago"


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
    "SKIP_ACTIVE",
    "SKIP_DONE",
    "SKIP_EMPTY",
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
    "ago",
    "duration",
]
