"""What the core's operations return: typed results, each with ``to_json()`` for ``--json`` output."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, cast

from scribed.session.door import redacted


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

    def public(self) -> dict[str, Any]:
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

    def public(self) -> dict[str, Any]:
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


Record = dict[str, Any]  # one item of a result's lists (an entry, a fact), as ``--json`` shows it


class _Result:
    """Typed fields the drivers read; ``rest`` keeps the report's other keys for ``--json``."""

    __slots__ = ()
    _OPTIONAL: tuple[str, ...] = ()  # keys left out of the JSON when empty

    @classmethod
    def _of(cls, data: Mapping[str, Any]) -> Any:
        names = [f.name for f in fields(cls) if f.name != "rest"]  # type: ignore[arg-type]
        kw = {n: data[n] for n in names if n in data}
        rest = {k: v for k, v in data.items() if k not in names}
        return cast(Any, cls)(**kw, rest=rest)

    def to_json(self) -> dict[str, Any]:
        out = {
            f.name: getattr(self, f.name)
            for f in fields(self)  # type: ignore[arg-type]
            if f.name != "rest" and (f.name not in self._OPTIONAL or getattr(self, f.name))
        }
        out.update(getattr(self, "rest", {}))
        return out


@dataclass(slots=True, frozen=True)
class FactResult(_Result):
    """A fact written to the wiki (``wiki-write``, the MCP ``wiki_write`` tool)."""

    topic: str
    agent: str
    date: str
    entry: str
    kind: str
    title: str
    action: str
    block: str
    supersedes: str = ""
    superseded: list[str] = field(default_factory=list)
    superseded_by: str = ""
    rest: Record = field(default_factory=dict)
    _OPTIONAL = ("supersedes", "superseded", "superseded_by")

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> FactResult:
        return cls._of(data)  # type: ignore[no-any-return]


@dataclass(slots=True, frozen=True)
class DeprecateResult(_Result):
    """A wiki block marked deprecated."""

    topic: str
    block: str
    status: str
    rest: Record = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> DeprecateResult:
        return cls._of(data)  # type: ignore[no-any-return]


@dataclass(slots=True, frozen=True)
class ReviewResult(_Result):
    """Proposals approved or rejected: one record per id (``result``: what happened to it)."""

    results: list[Record]
    rest: Record = field(default_factory=dict)

    @property
    def unknown(self) -> list[str]:
        return [r["id"] for r in self.results if r["result"] == "unknown"]

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> ReviewResult:
        return cls._of(data)  # type: ignore[no-any-return]


@dataclass(slots=True, frozen=True)
class InboxResult(_Result):
    """Agent-written wiki files applied from ``inbox/wiki/`` (or quarantined)."""

    applied: list[Record] = field(default_factory=list)
    quarantined: list[Record] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rest: Record = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> InboxResult:
        return cls._of(data)  # type: ignore[no-any-return]


@dataclass(slots=True, frozen=True)
class PromoteResult(_Result):
    """One promotion pass: cold entries promoted into the wiki or archived."""

    as_of: str
    cutoff: str
    dry_run: bool
    promoted: list[Record]
    archived: list[Record]
    kept: int
    topics: dict[str, int]
    inbox: Record = field(default_factory=dict)
    mode: str = ""
    warnings: list[str] = field(default_factory=list)
    rest: Record = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> PromoteResult:
        return cls._of(data)  # type: ignore[no-any-return]


@dataclass(slots=True, frozen=True)
class ImportResult(_Result):
    """A legacy Squad import: what went to cold, the wiki and the archive."""

    as_of: str
    agents: list[str]
    cold: list[Record]
    promoted: list[Record]
    archived: list[Record]
    pinned: list[Record]
    decisions: list[Record]
    not_decisions: list[Record]
    skipped: int
    dry_run: bool = False
    warnings: list[str] = field(default_factory=list)
    mode: str = ""
    rest: Record = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> ImportResult:
        return cls._of(data)  # type: ignore[no-any-return]
