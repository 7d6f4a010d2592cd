"""Reading the text of Squad's legacy files: markdown blocks, heading dates, ``**Key:**`` fields,
debris lines and the statement of a decision as written (scribed.squad.legacy segments the files)."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from scribed.compress.entry import one_line, parse_date
from scribed.names import normalize_name

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@functools.cache
def _md() -> MarkdownIt:
    """Block structure only: inline parsing is not needed (a heading's raw text is its title).
    Built on first use: every run imports promotion (which asks this module whether a fact is a
    question), but only an import of legacy files parses markdown (~40 ms of imports otherwise)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable("table").disable(["inline", "text_join"])


DATE_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}[:-]\d{2}(?:[:-]\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)
# A question ends with "?" or opens like one ("Should we …", "Open question: …"); "Do not X" is an order.
_QUESTION = re.compile(
    r"(\?[*_`\s]*$)|^(?:open questions?\b|(?:should|shall|can|could|would|will|do|does|is|are)\s+"
    r"(?:we|i|you|they|it|this|that|there|the|our|a|an|scribed)\b)",
    re.I,
)
_PRIORITY = re.compile(r"^(?:P[0-4]\b|priority\b|(?:high|medium|low)[- ]priority\b)", re.I)
_FIELD = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*(?P<k>[A-Za-z][\w /]{0,24}?)\s*:\s*\*\*|\*\*(?P<k2>[A-Za-z][\w /]{0,24}?)\*\*\s*:"
    r"|(?P<k3>What|Why|By|Decision|Date|Status|Rationale)\s*:)\s*(?P<v>.*)$"
)
_META_FIELDS = {"date", "status", "tier", "updated", "last updated", "merge", "archive", "timestamp", "agent"}
_KEEP_FIELDS = {"by", "what", "why", "decision", "rationale", "requester", "owner", "reason"}
_RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_ONLY_MARKS = re.compile(r"^\s*(?:\*\*|__|\*|_|[-*+]|>)\s*$")
_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*[^*]+\*\*|__[^_]+__)\s*:?\s*$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
STATEMENT_CHARS = 1500


@dataclass(slots=True)
class Md:
    """One top-level markdown block: its kind and 0-based line range [start, end)."""

    kind: str  # heading | paragraph | list | item | table | code | hr | quote | html
    start: int
    end: int
    level: int = 0
    title: str = ""


def md_blocks(text: str) -> list[Md]:
    """The file's top-level blocks (list items of top-level lists too). Setext headings are text."""
    out: list[Md] = []
    tokens = _md().parse(text)
    for i, t in enumerate(tokens):
        if t.map is None or t.nesting == -1:
            continue
        start, end = t.map
        if t.level == 0:
            if t.type == "heading_open":
                atx = t.markup.startswith("#")
                title = tokens[i + 1].content if i + 1 < len(tokens) else ""
                out.append(Md("heading" if atx else "paragraph", start, end, int(t.tag[1:]), title))
            elif t.type in ("paragraph_open", "table_open", "hr", "html_block", "blockquote_open"):
                kind = {"paragraph_open": "paragraph", "table_open": "table", "hr": "hr"}.get(t.type, "quote")
                out.append(Md("html" if t.type == "html_block" else kind, start, end))
            elif t.type in ("fence", "code_block"):
                out.append(Md("code", start, end))
            elif t.type in ("bullet_list_open", "ordered_list_open"):
                out.append(Md("list", start, end))
        elif t.level == 1 and t.type == "list_item_open":
            out.append(Md("item", start, end))
    return out


# --- Squad's governed memory files --------------------------------------------------------------
_YAML_KEY = re.compile(r"^(?P<k>[A-Za-z_][\w-]{0,40})\s*:(?:\s+(?P<v>.*?))?\s*$")
FRONT_MATTER_LINES = 40  # a header longer than this is not one Squad wrote


@dataclass(slots=True)
class FrontMatter:
    """A YAML header as ``squad memory write`` writes it (``---``, ``key: value`` lines, ``---``):
    where it starts (0-based), the line after its closing ``---``, and its values."""

    start: int
    end: int
    values: dict[str, str]


def _yaml_value(raw: str) -> str:
    if raw.startswith('"'):
        try:
            v = json.loads(raw)
        except ValueError:
            return raw.strip('"')
        return v if isinstance(v, str) else raw
    return raw.strip("'")


def front_matters(lines: list[str], blocks: list[Md]) -> list[FrontMatter]:
    """Every governed header of a file (outside code blocks): at its top (an inbox file) or further
    down (``squad nap`` appends inbox files to ``decisions.md`` as they are). A header names a
    ``title`` or a ``class``; anything else between two rules is text."""
    fenced = {i for b in blocks if b.kind == "code" for i in range(b.start, b.end)}
    out: list[FrontMatter] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "---" or i in fenced:
            i += 1
            continue
        values: dict[str, str] = {}
        j = i + 1
        while j < min(len(lines), i + FRONT_MATTER_LINES) and (m := _YAML_KEY.match(lines[j])):
            values[m.group("k").casefold()] = _yaml_value(m.group("v") or "")
            j += 1
        if j < len(lines) and lines[j].strip() == "---" and values.keys() & {"title", "class"}:
            out.append(FrontMatter(i, j + 1, values))
            i = j + 1
            continue
        i += 1
    return out


# --- titles, dates, fields ---------------------------------------------------------------------
def split_title(raw: str) -> tuple[datetime | None, str]:
    """A heading's date (first one found) and its title without it, as written otherwise."""
    m = DATE_RE.search(raw)
    if not m:
        return None, raw.strip()
    title = raw[: m.start()] + raw[m.end() :]
    title = re.sub(r"^[\s:—–\-|·,]+|[\s:—–\-|·,]+$", "", title)
    title = re.sub(r"\(\s*\)|\[\s*\]", "", title).strip()
    title = re.sub(r"^[\s:—–\-|·,]+|[\s:—–\-|·,]+$", "", title)
    return when(m.group(0)), title


def when(text: str) -> datetime | None:
    """A heading's date; times written with dashes (``T21-10Z``) too."""
    return parse_date(
        re.sub(r"([T ]\d{2})-(\d{2})(?:-(\d{2}))?", lambda m: ":".join(g for g in m.groups() if g), text)
    )


def key(title: str) -> str:
    """A title compared loosely (generic-name tests): no date, numbering, markdown or punctuation."""
    t = DATE_RE.sub(" ", title.casefold())
    t = re.sub(r"^\s*(?:\d+[.)]\s+)?", "", t)
    t = re.sub(r"[^\w]+", " ", t).replace("_", " ")
    return " ".join(t.split())


def is_question(text: str) -> bool:
    return bool(_QUESTION.search(text.strip().strip("*_` ")))


def is_priority(text: str) -> bool:
    return bool(_PRIORITY.match(text.strip().strip("*_` ")))


def author(value: str) -> str:
    """An agent name from a ``By:`` value ("Picard (Lead)", "Christian Helle (via Copilot)")."""
    word = re.split(r"[\s,(/|]", value.strip(" *_"), maxsplit=1)[0] if value.strip(" *_") else ""
    return normalize_name(word) or ""


def fields_of(lines: list[str]) -> dict[str, str]:
    """``**Key:** value`` fields (several per line when separated by ``|``), continuation lines joined."""
    out: dict[str, str] = {}
    last = ""
    for line in lines:
        parts = [p for p in line.split(" | ")] if "|" in line and "**" in line else [line]
        hit = False
        for part in parts:
            m = _FIELD.match(part)
            if m:
                k = (m.group("k") or m.group("k2") or m.group("k3") or "").strip().lower()
                out.setdefault(k, m.group("v").strip())
                last, hit = k, True
        if not hit:
            if (
                line.strip()
                and last in ("what", "why", "decision")
                and not line.lstrip().startswith(("#", "|"))
            ):
                out[last] = (out[last] + " " + line.strip()).strip()
            elif not line.strip():
                last = ""
    return out


def is_debris(lines: list[str], i: int) -> bool:
    """A line that carries nothing: a rule, lone marks, or a bold label with nothing after it."""
    line = lines[i]
    if _RULE.match(line) or _ONLY_MARKS.match(line):
        return True
    if _LABEL.match(line):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        return not nxt.strip() or nxt.lstrip().startswith("#") or bool(_LABEL.match(nxt))
    return False


def clean(text: str) -> str:
    """``text`` without debris lines (outside code fences) and without runs of blank lines."""
    lines = text.splitlines()
    fenced = _fenced_lines(text)
    kept = [ln for i, ln in enumerate(lines) if i in fenced or not is_debris(lines, i)]
    out = "\n".join(kept)
    while True:
        lines = out.splitlines()
        fenced = _fenced_lines(out)
        again = [ln for i, ln in enumerate(lines) if i in fenced or not is_debris(lines, i)]
        if len(again) == len(lines):
            break
        out = "\n".join(again)
    return re.sub(r"\n{3,}", "\n\n", out).strip("\n")


def _fenced_lines(text: str) -> set[int]:
    if "```" not in text and "~~~" not in text and "\n    " not in text:
        return set()  # no code block can be there: no need to parse
    return {i for b in md_blocks(text) if b.kind == "code" for i in range(b.start, b.end)}


# --- statements --------------------------------------------------------------------------------
def _paragraphs(blocks: list[Md], lines: list[str], start: int, end: int) -> list[Md]:
    return [b for b in blocks if start <= b.start < end and b.kind in ("paragraph", "list", "table", "quote")]


def _clip(text: str) -> str:
    if len(text) <= STATEMENT_CHARS:
        return text
    cut = text[:STATEMENT_CHARS]
    for sep in ("\n", ". "):
        i = cut.rfind(sep)
        if i > STATEMENT_CHARS // 2:
            kept = cut[: i + (1 if sep == ". " else 0)].rstrip().splitlines()
            while kept and (not kept[-1].strip() or is_debris([*kept, ""], len(kept) - 1)):
                kept.pop()  # a label whose text the cut left out says nothing ("**Rationale:** …")
            return "\n".join(kept).rstrip() + " …"
    return one_line(text, STATEMENT_CHARS)


def _field_lines(body: list[str]) -> str:
    """A block's By/What/Why (Decision, Rationale) field lines, as written, debris dropped."""
    keep: list[str] = []
    on = False
    for line in body:
        names = set(fields_of([line]))
        if names:
            on = bool(names & _KEEP_FIELDS)
        elif line.lstrip().startswith("#") or (not line.strip() and not (keep and _LABEL.match(keep[-1]))):
            on = False  # a blank line ends a field, unless the field is a label over a list
        if on and line.strip():
            keep.append(line.rstrip())
    return clean("\n".join(keep))


def _why(lines: list[str], blocks: list[Md], heads: list[Md], end: int) -> str:
    """The first ``Why``/``Rationale`` sub-section's first paragraph, as a bold-labelled tail to add to a
    statement ("" when the first such sub-section says nothing)."""
    for w in heads:
        if key(w.title) in ("why", "rationale"):
            why = _first_paragraph(lines, blocks, w.end, _next_head(heads, w, end))
            if not why:
                return ""
            sep = "\n" if why.lstrip().startswith(("-", "*", "+", "1.")) else " "
            return f"\n\n**{w.title.strip()}:**{sep}" + why.lstrip()
    return ""


def statement(lines: list[str], blocks: list[Md], start: int, end: int) -> tuple[str, dict[str, str]]:
    """What a decision says, as written: its By/What/Why (Decision, Rationale) field lines, else the
    first paragraph of its ``Decision`` sub-section (with the first one of ``Why``/``Rationale``), else
    its first paragraph; debris lines dropped. Also the fields found."""
    body = lines[start:end]
    fields = fields_of(body)
    heads = [b for b in blocks if start <= b.start < end and b.kind == "heading"]
    if fields.keys() & {"what", "decision"}:
        text = _field_lines(body)
        if text:
            return _clip(text), fields
    for h in heads:
        if key(h.title) != "decision":
            continue
        text = _first_paragraph(lines, blocks, h.end, _next_head(heads, h, end))
        if not text:
            break
        top = heads[0].start - start
        lead = [ln.rstrip() for ln in body[:top] if fields_of([ln]).keys() & _KEEP_FIELDS]
        text += _why(lines, blocks, heads, end)
        return _clip("\n".join([*lead, text])), fields
    return _clip(_first_paragraph(lines, blocks, start, end)), fields


def _next_head(heads: list[Md], h: Md, end: int) -> int:
    return min([b.start for b in heads if b.start > h.start] + [end])


def _first_paragraph(lines: list[str], blocks: list[Md], start: int, end: int) -> str:
    """The first paragraph or list of a range that says something, as written. A paragraph of
    fields only (By, Date, Status) leads it: its By/Why lines are kept in front, the others dropped;
    a lead-in line (a bold label, or text ending in ":") takes the block after it."""
    paras = _paragraphs(blocks, lines, start, end)
    lead: list[str] = []
    for n, p in enumerate(paras):
        if p.kind == "table":
            continue
        rows = [ln for i, ln in enumerate(lines[p.start : p.end]) if not is_debris(lines, p.start + i)]
        filled = [ln for ln in rows if ln.strip()]
        if (
            filled
            and all(fields_of([ln]) for ln in filled)
            and not fields_of(filled).keys() & {"what", "decision"}
        ):
            lead += [ln.rstrip() for ln in filled if fields_of([ln]).keys() - _META_FIELDS]
            continue  # metadata: the statement is the next paragraph
        text = clean("\n".join(rows))
        one = text.splitlines()
        if len(one) == 1 and (_LABEL.match(text) or text.rstrip().endswith(":")) and n + 1 < len(paras):
            nxt = paras[n + 1]
            text = clean("\n".join([text, *lines[nxt.start : nxt.end]]))  # a lead-in and its list
        if text:
            return clean("\n".join([*lead, text]))
    return clean("\n".join(lead))


def not_decision(title: str, stmt: str, lines: list[str], blocks: list[Md], *, start: int, end: int) -> str:
    """Why a titled block is not a decision ("" when it is one)."""
    if is_question(title) or (not title and is_question(stmt.splitlines()[0] if stmt else "")):
        return "question"
    if is_priority(title):
        return "priority"
    if not stmt:
        kinds = {b.kind for b in blocks if start <= b.start < end and b.kind != "heading"}
        return "table" if "table" in kinds else "empty"
    if all(_TABLE_ROW.match(ln) or not ln.strip() for ln in stmt.splitlines()):
        return "table"
    return ""
