"""The normalized session every adapter produces, and the summary every compressor returns.

Adapters know transcript formats; everything downstream (anchors, compressors, the cold
writer) only sees these types, so a new format is one new adapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Role = Literal["user", "assistant", "tool", "system", "summary"]
TurnKind = Literal["message", "tool_call", "tool_result", "summary", "thinking"]

# Per-turn text caps applied by adapters while streaming, so memory stays bounded on
# 50 MB transcripts. Tool output is least valuable: keep its head and tail only.
MAX_TEXT_CHARS = 32_000
MAX_TOOL_CHARS = 4_000
MAX_SUMMARY_TEXT = 1_200
MAX_GOAL_TEXT = 400


def clip(text: str, limit: int) -> str:
    """Keep the head and tail of an over-long text, marking the cut."""
    if len(text) <= limit:
        return text
    half = max(1, limit // 2 - 20)
    return f"{text[:half]}\n[… {len(text) - 2 * half} chars elided …]\n{text[-half:]}"


def clip_words(text: str, limit: int) -> str:
    """``text`` within ``limit`` chars, ended between words (a token longer than that is dropped)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    if not text[limit - 1].isspace():
        head = head.rsplit(None, 1)[0] if any(c.isspace() for c in head) else ""
    return head.rstrip() + "…"


@dataclass(slots=True)
class Turn:
    """One ordered unit of a session: a message, a tool call or a tool result (role ``tool``; role
    ``system``: the agent tool's own notice, such as its model provider's error, not a command's output)."""

    role: Role
    text: str
    kind: TurnKind = "message"
    ts: datetime | None = None  # timezone-aware UTC when known
    line: int = 0  # 1-based line number in the source (first line of the record)
    end_offset: int = 0  # byte offset in the source just past this record
    tool_name: str | None = None


@dataclass(slots=True)
class Session:
    """A normalized session from any source kind."""

    agent: str  # already validated/lowercased by the adapter (see names.py)
    session_id: str  # stable id; for sub-agents "<parent>/<agentId>"
    source: Path
    kind: str  # copilot | claude | codex | squad-repl | markdown | hot
    turns: list[Turn] = field(default_factory=list)
    start: datetime | None = None
    end: datetime | None = None
    ended: bool = False  # an explicit end marker was the last record
    malformed: int = 0  # skipped records (bad JSON, unexpected types)
    warnings: list[str] = field(default_factory=list)
    # what the tool recorded about the session's place: cwd, git_root, repository, branch, summary
    # (Copilot CLI's session.start and workspace.yaml); raw file content, not redacted yet
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def first_line(self) -> int:
        return self.turns[0].line if self.turns else 0

    @property
    def last_line(self) -> int:
        return self.turns[-1].line if self.turns else 0


@dataclass(slots=True)
class ParseResult:
    """What an adapter read from one source file."""

    sessions: list[Session]
    malformed: int = 0
    warnings: list[str] = field(default_factory=list)
    size: int = 0  # bytes of the file that were read
    ended: bool = False  # the file as a whole carries an explicit end marker


class Summary(BaseModel):
    """The structured content of a cold entry. LLM output is validated against this."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    goal: str = ""
    outcome: str = ""
    progress: list[str] = Field(default_factory=list)  # what the agent's own plan marks completed
    decisions: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    open_items: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    knowledge: list[str] = Field(default_factory=list)
    key_points: list[str] = Field(default_factory=list)
    key_facts: list[str] = Field(default_factory=list)

    @field_validator("goal", mode="after")
    @classmethod
    def _clip_goal(cls, v: str) -> str:
        """Over-long text is clipped between words, not rejected: a rejection here would fail a
        whole session, and a cut inside a token would name a different path or URL."""
        return clip_words(v, MAX_GOAL_TEXT)

    @field_validator("outcome", mode="after")
    @classmethod
    def _clip_outcome(cls, v: str) -> str:
        return clip(v, MAX_SUMMARY_TEXT)


# Rendering order of an entry's sections. ``key_points`` holds the extractive selection that spends
# the rest of the budget (whole sentences, list items, commands or code lines, in source order).
SECTIONS: list[tuple[str, str]] = [
    ("goal", "Goal"),
    ("outcome", "Outcome"),
    ("progress", "Progress"),
    ("decisions", "Decisions"),
    ("errors", "Errors → fixes"),
    ("files", "Files & artifacts"),
    ("commands", "Commands"),
    ("open_items", "Open items"),
    ("knowledge", "Reusable knowledge"),
    ("key_points", "Key points"),
    ("key_facts", "Key facts"),
]


AnchorType = Literal[
    "decision", "path", "identifier", "error", "command", "issue", "todo", "number", "directive"
]


@dataclass(slots=True, frozen=True)
class Anchor:
    """A must-keep fact extracted deterministically before compression.

    ``text`` is the exact string that must appear in the cold entry (the retention guard
    checks for it verbatim and adds it under "Key facts" when a compressor dropped it).
    """

    type: AnchorType
    text: str
    line: int = 0
    superseded: str | None = None  # for a decision: the earlier form it replaced
