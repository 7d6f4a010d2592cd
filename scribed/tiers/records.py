"""What the tier writers report: frozen records, each with ``to_json()`` for ``--json`` output.

The core re-exports them from :mod:`scribed.core.results` (it cannot be imported from here). A
record's JSON lists its fields in declaration order, so the field order is the printed key order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import ClassVar

Json = dict[str, object]  # one ``--json`` object, as ``json.dumps`` prints it


def to_json(value: object) -> object:
    """A value as JSON shows it: records become objects, lists and dicts are walked."""
    if isinstance(value, JsonRecord):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


class JsonRecord:
    """``to_json()`` by field order; a field in ``_OPTIONAL`` is left out while it is empty and a
    ``None`` always, so a record prints exactly the keys the dict it replaced had."""

    __slots__ = ()
    _OPTIONAL: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> Json:
        out: Json = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if v is not None and (v or f.name not in self._OPTIONAL):
                out[f.name] = to_json(v)
        return out


@dataclass(slots=True, frozen=True)
class FactReport(JsonRecord):
    """What a fact did to the wiki (or the review proposals)."""

    topic: str
    kind: str
    title: str
    action: str
    block: str
    supersedes: str = ""
    superseded: tuple[str, ...] = ()
    superseded_by: str = ""
    _OPTIONAL = ("supersedes", "superseded", "superseded_by")


@dataclass(slots=True, frozen=True)
class FactResult(JsonRecord):
    """A fact written to the wiki (``wiki-write``, the MCP ``wiki_write`` tool)."""

    agent: str
    date: str
    entry: str
    fact: FactReport

    @property
    def topic(self) -> str:
        return self.fact.topic

    @property
    def action(self) -> str:
        return self.fact.action

    @property
    def block(self) -> str:
        return self.fact.block

    def to_json(self) -> Json:
        return {"topic": self.fact.topic, "agent": self.agent, "date": self.date, "entry": self.entry,
                **self.fact.to_json()}  # fmt: skip


@dataclass(slots=True, frozen=True)
class DeprecateResult(JsonRecord):
    """A wiki block marked deprecated; ``changed`` False when it already was (nothing written)."""

    topic: str
    block: str
    status: str
    changed: bool = True


@dataclass(slots=True, frozen=True)
class InboxApplied(JsonRecord):
    """An inbox file applied to the wiki (or proposed for review)."""

    file: str
    agent: str
    fact: FactReport

    def to_json(self) -> Json:
        return {"file": self.file, "agent": self.agent, **self.fact.to_json()}


@dataclass(slots=True, frozen=True)
class InboxQuarantined(JsonRecord):
    """An inbox file refused, and where it went (nowhere on a dry run)."""

    file: str
    reason: str
    moved_to: str = ""
    _OPTIONAL = ("moved_to",)


@dataclass(slots=True, frozen=True)
class InboxResult(JsonRecord):
    """Agent-written wiki files applied from ``inbox/wiki/`` (or quarantined)."""

    applied: tuple[InboxApplied, ...] = ()
    quarantined: tuple[InboxQuarantined, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(slots=True, frozen=True)
class ProposalRow(JsonRecord):
    """One review proposal as ``scribed review`` lists it (``decided``/``reason`` once decided)."""

    id: str
    status: str
    topic: str
    title: str
    text: str
    date: str
    agent: str
    source: str
    file: str
    action: str
    created: str
    decided: str = ""
    reason: str = ""
    _OPTIONAL = ("decided", "reason")


@dataclass(slots=True, frozen=True)
class ReviewItem(JsonRecord):
    """What happened to one proposal id: ``result`` is approved, rejected, unknown or ``already …``."""

    id: str
    result: str
    topic: str | None = None
    title: str | None = None
    wiki: str | None = None


@dataclass(slots=True, frozen=True)
class ReviewResult(JsonRecord):
    """Proposals approved or rejected: one item per id."""

    results: tuple[ReviewItem, ...] = field(default_factory=tuple)

    @property
    def unknown(self) -> list[str]:
        return [r.id for r in self.results if r.result == "unknown"]
