"""Squad's legacy memory files as people and agents really write them, read with a markdown parser.

``decisions.md`` (and ``decisions-archive*.md``, ``decisions/**/*.md`` drop-box files) mixes layouts,
often in one file: ``### Title`` / ``### DATE: Title`` / ``### Title (DATE)`` / ``### Title (Agent)``
blocks with ``**By:**``/``**What:**``/``**Why:**`` fields or free prose; ``## DATE — Title`` decisions
whose ``###`` sub-sections (Context, Rationale, …) belong to them; a date-only ``## DATE`` grouping
titled blocks; merged inbox files (``# Decision: Title`` with ``## Context``/``## Decision``/``## Why``);
``## …`` sections grouping blocks, ``---`` separators and nested ``####`` sub-sections. A decision
nested in another (``### DATE: Title``, ``Decision: Title``, a heading over ``**By:**``) is its own.
``history.md`` (and ``history-archive*.md``): ``## Core Context``, ``## Learnings`` with ``###``
entries and dated bullets, ``## DATE: Title`` sessions.

markdown-it-py finds the headings, so a fenced block (``` or ~~~) never starts or ends an entry, and
a heading inside a list or a quote is text. Every line of a file lands in exactly one block; what is
not a decision (questions, priority labels, status tables, bare sections) is kept with a reason, so
the caller can archive it rather than drop it. Nothing here writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scribed.compress.entry import one_line
from scribed.names import normalize_name
from scribed.squad import inbox
from scribed.squad.legacy_text import (
    DATE_RE,
    FrontMatter,
    Md,
    author,
    clean,
    fields_of,
    front_matters,
    is_debris,
    is_priority,
    is_question,
    key,
    md_blocks,
    not_decision,
    split_title,
    statement,
    when,
)

# Sub-section names: they belong to the decision or entry above them, never start one.
GENERIC = {
    "context", "decision", "decisions", "why", "rationale", "consequences", "alternatives",
    "alternatives considered", "implementation", "implementation details", "implementation notes",
    "changes", "team impact", "impact", "problem", "evidence", "validation", "status", "summary", "notes",
    "risks", "background", "outcome", "details", "key decisions", "locked decisions", "implementation phases",
    "next steps", "follow up", "follow ups", "action items", "scope", "approach", "options", "tradeoffs",
    "risks tradeoffs", "what", "how", "who", "by", "result", "results", "verification", "testing", "tests",
    "files", "files changed", "key implementation details", "task", "work completed", "key learnings",
    "build test", "patterns established", "blocked deferred", "coordination notes", "what was built",
}  # fmt: skip
# Markdown heading levels: "##" (a section) and "###" (an entry under it).
_H2 = 2
_H3 = 3
_RECORD = {"context", "decision", "why", "rationale", "problem", "evidence", "consequences"}
# A section that groups blocks (a file title, "Active Decisions", "Archive"), by how its title starts.
_GROUPISH = re.compile(
    r"^\W*(?:(?:active|archived?|merged|recent|older|team|squad|key|past|project)\s+)?"
    r"(?:decisions|archive[sd]?|tldr|governance|index|log|backlog|learnings)\b",
    re.I,
)
_AGENT_SUFFIX = re.compile(r"\s*\((?P<a>[A-Z][\w.-]{1,30})(?:\s*[,/&]\s*[A-Z][\w.-]{1,30})*\)\s*$")


SCRIBED_ENTRY = "scribed-entry"  # a field of a decision scribed proposed: the entry it came from


@dataclass(slots=True)
class Block:
    """A run of a legacy file's lines and what it is."""

    kind: str  # decision | entry | core | other
    title: str
    first: int  # 1-based, inclusive
    last: int
    text: str  # the lines as written (heading included)
    date: datetime | None = None
    titled: bool = True
    by: str = ""
    statement: str = ""
    reason: str = ""  # why an "other" block is not a decision: question | priority | table | empty | section
    fields: dict[str, str] = field(default_factory=dict)


# --- segmenting a file -------------------------------------------------------------------------
@dataclass(slots=True)
class _Seg:
    start: int  # 0-based line of its heading (or first line)
    role: str  # decision | entry | core | group
    head: Md | None
    date: datetime | None = None
    nested: bool = False  # a decision nested in the one before it (undated, it takes that one's date)


def _children(heads: list[Md], i: int) -> list[Md]:
    """The headings nested under ``heads[i]`` (up to the next heading of its level or higher)."""
    out = []
    for h in heads[i + 1 :]:
        if h.level <= heads[i].level:
            break
        out.append(h)
    return out


def _decision_role(heads: list[Md], i: int) -> str:
    h = heads[i]
    date, title = split_title(h.title)
    kids = _children(heads, i)
    if h.level == 1:
        # a merged inbox file (# Decision: T, # Design: T, # Plan …) owns its sections; a file title
        # ("# Team Decisions") or a heading over dated decisions groups them
        if re.match(r"\s*decision\s*:", h.title, re.I):
            return "decision"
        dated = any(k.level == _H2 and all(split_title(k.title)) for k in kids)
        return "group" if _GROUPISH.search(title) or dated else "decision"
    if h.level == _H2:
        if date is not None and not title:
            return "group"
        if _GROUPISH.search(title) or (date is None and any(k.level == _H3 for k in kids)):
            return "group"
    return "decision"


def _history_role(heads: list[Md], i: int) -> str:
    h = heads[i]
    date, title = split_title(h.title)
    if h.level == 1:
        return "group"
    if h.level == _H2:
        if key(title).startswith("core context"):
            return "core"
        if date is not None:
            return "entry" if title else "group"
        return "group"  # its ### entries, dated bullets and loose text are read by _loose
    return "entry"


_DECISION_PREFIX = re.compile(r"\s*decision\s*:", re.I)
_LEADING_DATE = re.compile(r"^\W*\d{4}-\d{2}-\d{2}")
# Lines that say nothing of their own: a rule, or a merge marker (``--- inbox-file.md ---``).
_FILLER = re.compile(r"^\s*(?:(?:[-*_]\s*){3,}|-{3,}\s.*\s-{3,})\s*$")


def _own_decision(heads: list[Md], i: int, lines: list[str]) -> bool:
    """Whether a heading nested under an open decision is a decision of its own, not a sub-section:
    ``Decision: T``, a heading that opens with its date (``### DATE: T``), or one whose first
    paragraph has a ``**By:**`` field. A ``# Decision: T`` merged in above ``##``/``###`` dated
    decisions would otherwise swallow every one of them up to the next ``#`` heading."""
    h = heads[i]
    if key(h.title) in GENERIC:
        return False
    if _DECISION_PREFIX.match(h.title):
        return True
    date, title = split_title(h.title)
    if date is not None and _LEADING_DATE.match(h.title) and title and key(title) not in GENERIC:
        return True
    end = heads[i + 1].start if i + 1 < len(heads) else len(lines)
    body = [ln for ln in lines[h.end : end]]
    while body and not body[0].strip():
        body.pop(0)
    para = body[: next((n for n, ln in enumerate(body) if not ln.strip()), len(body))]
    return "by" in fields_of(para)


def _breaks_out(heads: list[Md], i: int, lines: list[str], owner: _Seg) -> bool:
    """A decision of its own under ``owner``, which has text of its own before it (a heading with
    nothing under it but a dated decision, ``## Decision: T`` over ``### DATE: User directive``, is
    that decision's title)."""
    top = owner.head.end if owner.head is not None else owner.start
    said = any(ln.strip() and not _FILLER.match(ln) for ln in lines[top : heads[i].start])
    return said and _own_decision(heads, i, lines)


def _segments(heads: list[Md], role_of: str, lines: list[str]) -> list[_Seg]:
    segs: list[_Seg] = []
    owner = 0  # level of the open decision/entry heading; its deeper headings belong to it
    outer = 0  # level of the decision a nested decision broke out of: it still owns what follows
    group_date: datetime | None = None
    group_level = 0  # a date-only group dates the blocks under it, not those after it
    for i, h in enumerate(heads):
        if (outer or owner) and h.level > (outer or owner):
            if role_of == "decisions" and _breaks_out(heads, i, lines, segs[-1]):
                segs.append(_Seg(h.start, "decision", h, group_date, nested=True))
                outer, owner = outer or owner, h.level
                continue
            if not (outer and h.level <= owner and _GROUPISH.search(split_title(h.title)[1])):
                continue  # a sub-section of the open decision (a grouping heading closes it)
        outer = 0
        generic = key(h.title) in GENERIC
        if h.level <= group_level and not generic:
            group_date, group_level = None, 0
        if generic and segs and segs[-1].role in ("decision", "entry", "core"):
            continue  # a sub-section (Context, Why, …) of the block above
        role = _decision_role(heads, i) if role_of == "decisions" else _history_role(heads, i)
        if generic and role != "group":
            segs.append(_Seg(h.start, "decision" if role_of == "decisions" else "entry", h, group_date))
            owner = 0
            continue
        if role == "group":
            group_date, group_level = split_title(h.title)[0], h.level
            segs.append(_Seg(h.start, "group", h, group_date))
            owner = 0
        else:
            segs.append(_Seg(h.start, role, h, group_date))
            owner = h.level
    return segs


def _block(lines: list[str], kind: str, title: str, start: int, end: int, **kw: Any) -> Block:
    """Lines [start, end) as a block (trailing blank lines belong to nobody)."""
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return Block(kind, title, start + 1, end, "\n".join(lines[start:end]), **kw)


def _other(lines: list[str], start: int, end: int, title: str, reason: str) -> Block | None:
    if not any(ln.strip() for ln in lines[start:end]):
        return None
    return _block(lines, "other", title, start, end, reason=reason, titled=False)


def _date_field(fields: dict[str, str]) -> datetime | None:
    m = DATE_RE.search(fields.get("date", ""))
    return when(m.group(0)) if m else None


def _title_from(stmt: str) -> str:
    first = next((ln for ln in stmt.splitlines() if ln.strip()), "")
    return one_line(re.sub(r"^\s*(?:[-*+]\s+)?\**[A-Za-z ]{1,20}:\**\s*", "", first), 100)


def _lead_date(lines: list[str], heads: list[Md], body: int, end: int) -> datetime | None:
    """The date of a heading that opens with it and is the first thing under a title-only heading
    (``## Decision: T`` over ``### DATE: User directive``)."""
    first = next((n for n in range(body, end) if lines[n].strip()), end)
    h = next((h for h in heads if h.start == first), None)
    return split_title(h.title)[0] if h is not None and _LEADING_DATE.match(h.title) else None


def parse_decisions(text: str) -> list[Block]:
    """Every block of a decisions file, in order: decisions and (with a reason) what is not one."""
    lines = text.splitlines()
    blocks = md_blocks(text)
    governed = {fm.start: fm for fm in front_matters(lines, blocks)}
    heads = sorted(
        [
            b
            for b in blocks
            if b.kind == "heading" and not any(f.start <= b.start < f.end for f in governed.values())
        ]
        + [
            Md("heading", fm.start, fm.end, _H3, "Decision: " + fm.values.get("title", ""))
            for fm in governed.values()
        ],
        key=lambda h: h.start,
    )
    segs = _segments(heads, "decisions", lines)
    out: list[Block] = []
    outer_date: datetime | None = None
    pre = _other(lines, 0, segs[0].start if segs else len(lines), "", "section")
    if pre:
        out.append(pre)
    for n, s in enumerate(segs):
        end = segs[n + 1].start if n + 1 < len(segs) else len(lines)
        hd = s.head
        title = ""
        if hd is not None and hd.start in governed:
            b = _governed(lines, blocks, governed[hd.start], end)
            if b is not None:
                out.append(b)
            continue
        if hd is None or s.role == "group":
            body = hd.end if hd is not None else s.start
            if not fields_of(lines[body:end]).keys() & {"what", "decision"}:
                b = _other(lines, s.start, end, hd.title if hd else "", "section")
                if b:
                    out.append(b)
                continue
        elif key(hd.title) in GENERIC:
            body = s.start  # an untitled decision told by its sub-sections (# Decision, # Why)
        else:
            date, title = split_title(hd.title)
            body = hd.end
        stmt, fields = statement(lines, blocks, body, end)
        date = (
            (split_title(hd.title)[0] if hd is not None and title else None)
            or _date_field(fields)
            or (_lead_date(lines, heads, body, end) if title else None)
            or s.date
            or (outer_date if s.nested else None)
        )
        if not s.nested:
            outer_date = date
        by = author(fields.get("by") or fields.get("owner") or "")
        m = _AGENT_SUFFIX.search(title)
        if not by and m:
            by = normalize_name(m.group("a")) or ""
        title = re.sub(r"^\s*decision\s*:\s*", "", title, flags=re.I)
        titled = bool(title)
        reason = not_decision(title, stmt, lines, blocks, start=s.start, end=end)
        out.append(
            _block(
                lines,
                "other" if reason else "decision",
                title or _title_from(stmt),
                s.start,
                end,
                date=date,
                titled=titled,
                by=by,
                statement=stmt,
                reason=reason,
                fields=fields,
            )
        )
    return out


def _governed(lines: list[str], blocks: list[Md], fm: FrontMatter, end: int) -> Block | None:
    """A decision ``squad memory write --class DECISION`` wrote: its front matter (title, author,
    createdAt) and its body, which has no heading (its statement: the body's first paragraph)."""
    stmt, fields = statement(lines, blocks, fm.end, end)
    v = fm.values
    title = one_line(v.get("title", "").strip(), 100)
    who = v.get("author", "")
    by = author(who) if who.casefold() not in ("", "unknown") else ""
    date = when(v["createdat"]) if "createdat" in v else None
    cls = v.get("class", "DECISION").upper()
    if entry := inbox.entry_of(v.get("metadata", "")):
        fields = {**fields, SCRIBED_ENTRY: entry}  # scribed proposed it: the fact it already is
    reason = "" if cls == "DECISION" else "section"  # a LOCAL or POLICY memory is not a team decision
    reason = reason or not_decision(title, stmt, lines, blocks, start=fm.end, end=end)
    return _block(
        lines,
        "other" if reason else "decision",
        title or _title_from(stmt),
        fm.start,
        end,
        date=date or _date_field(fields),
        titled=bool(title),
        by=by,
        statement=stmt,
        reason=reason,
        fields=fields,
    )


# A dated bullet: "- 2026-03-10: T", "- **2026-03-10:** T", "- 2026-05-01T14:34:56.630+02:00 T" (its
# time and UTC offset are the date's: the offset is never the title's start).
_DATED_ITEM = re.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+[*_`\[]*(?P<d>"
    + DATE_RE.pattern
    + r")[*_`\]]*\s*[:—–\-)]*[*_`\]]*\s*(?P<t>.*)$"
)


def parse_history(text: str) -> list[Block]:
    """Every block of a history file, in order: ``core`` (the Core Context), ``entry`` (a ``###``
    entry, a dated ``##`` session, a dated bullet with the bullets after it, a section's loose text)
    and ``other`` (a file title with nothing under it)."""
    lines = text.splitlines()
    blocks = md_blocks(text)
    heads = [b for b in blocks if b.kind == "heading"]
    segs = _segments(heads, "history", lines)
    out: list[Block] = []
    bounds: list[tuple[int, int, _Seg | None]] = []
    if not segs or segs[0].start > 0:
        bounds.append((0, segs[0].start if segs else len(lines), None))
    for n, seg in enumerate(segs):
        bounds.append((seg.start, segs[n + 1].start if n + 1 < len(segs) else len(lines), seg))
    for start, end, s in bounds:
        hd = s.head if s else None
        if s is not None and hd is not None and s.role in ("entry", "core"):
            date, title = split_title(hd.title)
            if s.role == "core":
                out.append(
                    _block(
                        lines,
                        "core",
                        title,
                        start,
                        end,
                        date=date,
                        statement=clean("\n".join(lines[hd.end : end])),
                    )
                )
            else:
                out.append(_block(lines, "entry", title or hd.title.strip(), start, end, date=date or s.date))
            continue
        out += _loose(lines, blocks, start, end, hd=hd, date=s.date if s else None)
    return out


def _loose(
    lines: list[str], blocks: list[Md], start: int, end: int, *, hd: Md | None, date: datetime | None
) -> list[Block]:
    """A section's own text (before its first entry): one entry per dated bullet (undated bullets
    after it belong to it), the text before the first dated bullet an entry titled by the section."""
    body = hd.end if hd is not None else start
    cuts = [
        b.start
        for b in blocks
        if b.kind == "item" and body <= b.start < end and _DATED_ITEM.match(lines[b.start])
    ]
    title = split_title(hd.title)[1] if hd is not None else ""
    out: list[Block] = []
    pieces = [(start, cuts[0] if cuts else end)]
    pieces += list(zip(cuts, [*cuts[1:], end], strict=True)) if cuts else []
    for n, (a, b) in enumerate(pieces):
        if not any(ln.strip() for ln in lines[(body if n == 0 else a) : b]):
            if n == 0 and hd is not None:
                o = _other(lines, a, b, title, "section")
                if o:
                    out.append(o)
            continue
        if n == 0:
            out.append(_block(lines, "entry", title or "notes", a, b, date=date, titled=bool(title)))
            continue
        m = _DATED_ITEM.match(lines[a])
        assert m is not None
        out.append(
            _block(
                lines,
                "entry",
                one_line(re.sub(r"\*\*|__", "", m.group("t")), 80) or title,
                a,
                b,
                date=when(m.group("d")),
                titled=False,
            )
        )
    return out


__all__ = [
    "Block",
    "author",
    "clean",
    "fields_of",
    "is_debris",
    "is_priority",
    "is_question",
    "key",
    "md_blocks",
    "parse_decisions",
    "parse_history",
    "split_title",
    "statement",
    "when",
]
