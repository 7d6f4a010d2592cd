"""The wiki's blocks: one fact each, as written to ``wiki/{topic}.md`` and read back.

A block is ``### Title``, an optional ``*Status:*`` line (superseded or deprecated ones, which sit
under ``## Superseded``: the line, not the place, is the block's state, see
:mod:`scribed.tiers.wiki_mark`), the statement as written, and ONE provenance line::

    *Source:* 2026-09-15 · entry=e-3f2a9c1b7e4d · agent=picard · session=s-0915; 2026-09-20 · … | confidence: 2 sessions, 2 agents | replaces: …

Blocks of the older format (``### DATE: title`` then ``- status:``/``- kind:``/``- source:`` lines)
are read too. Parsing keeps each block's bytes, so a block scribed does not change is written back
as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from scribed.compress.entry import fence_step, one_line
from scribed.compress.restate import Statement, statement
from scribed.compress.reversal import reversal_score
from scribed.compress.reversal_wording import CHANGE, NEEDS, REMOVAL, REVERSAL, may_reverse, returns
from scribed.compress.terms import NEAR_DUP, claim, norm, same_fact
from scribed.names import normalize_name
from scribed.tiers import wiki_mark as _wiki_mark
from scribed.tiers.wiki_mark import META_RE as _META_RE
from scribed.tiers.wiki_mark import OLD_HEADING as _OLD_HEADING
from scribed.tiers.wiki_mark import STATUS_LINE as _STATUS_LINE
from scribed.tiers.wiki_mark import SUPERSEDED as SUPERSEDED

TITLE_CHARS = 100
BODY_CHARS = 4000

STANDARD_TOPICS: dict[str, str] = {
    "decisions": "Decisions with their rationale; reversed ones are kept under Superseded.",
    "conventions": "Team conventions: always / never / must rules agents follow.",
    "constraints": "Constraints and limits: what must not, cannot or only may be done.",
    "contracts": "Contracts: APIs, endpoints, schemas, interfaces and what they return.",
    "patterns": "Recurring patterns and known issue → fix pairs.",
}
TOPIC_KIND = {
    "decisions": "decision",
    "conventions": "convention",
    "constraints": "constraint",
    "contracts": "contract",
    "patterns": "pattern",
}
_SOURCE_LINE = "*Source:* "
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_HEADING = re.compile(r"^\s{0,3}#{1,3}\s")
# A line git writes around a merge conflict: 7 characters (git's marker size) of one of its marker
# characters, alone or before a label; a longer ``<`` run too (scribed's repair opens a conflict on
# one). A longer ``=`` run is a Markdown underline, and an indented line is text to both.
_CONFLICT_LINE = re.compile(r"^(?:<{7,}|={7}|>{7}|\|{7})(?: .*)?$")


# Every match of REVERSAL, REMOVAL and CHANGE holds one of their literals (reversal_wording.NEEDS),
# lowercased: an ASCII text holding none cannot match (a search costs ~8 µs a block, and a wiki of
# 10,000 blocks is indexed on every promotion); one scan for the three. Other texts go to the
# patterns themselves (IGNORECASE also folds a few non-ASCII letters).
_REVERSAL_WORDS = tuple(dict.fromkeys(w for p in (REVERSAL, REMOVAL, CHANGE) for w in NEEDS[p]))


def _may_reverse(text: str) -> bool:
    if not text.isascii():
        return True
    low = text.lower()
    for w in _REVERSAL_WORDS:  # noqa: SIM110 (a loop: twice as fast as any(genexpr), once a block)
        if w in low:
            return True
    return False


class WikiError(ValueError):
    """A user-facing wiki problem (bad topic, no such block); the CLI turns it into exit 2."""


def valid_topic(raw: object) -> str | None:
    """A topic is a file stem like an agent name; ``index`` is taken by the generated index."""
    name = normalize_name(raw)
    return None if name is None or name == "index" else name


# --- text ------------------------------------------------------------------------------------
def safe_body(text: str) -> str:
    """A block body that cannot break the file: ``#``–``###`` headings outside code fences are
    demoted to ``####`` (they would start a block or a section) and an unclosed fence is closed."""
    out = []
    fence = ""
    for line in text.splitlines():
        was = fence
        fence = fence_step(line, fence)
        if not (was or fence) and _HEADING.match(line):
            line = "####" + line.lstrip().lstrip("#")
        out.append(line.rstrip())
    if fence:
        out.append(fence)
    return "\n".join(out)


def conflict_line(text: str) -> tuple[int, str] | None:
    """The first line of ``text`` outside a code fence that git and scribed would read as a merge
    conflict's marker, as (its number from 1, the line), or None. Stored in a page, it would make
    the page a conflict to repair (its lines dropped from the fact) and ``git diff --check`` call
    it a leftover marker: an agent's fact holding one is refused (:func:`conflict_refusal`)."""
    fence = ""
    for n, line in enumerate(text.splitlines(), 1):
        bare = line.rstrip()
        was, fence = fence, fence_step(bare, fence)
        if not was and _CONFLICT_LINE.match(bare):
            return n, bare
    return None


def unmarked(text: str) -> str:
    """``text`` with each line outside a code fence that git would read as a conflict marker
    indented by one space: it reads the same in Markdown, and neither git nor the next sync's
    repair takes the page for a merge conflict. Promoted facts come from sessions that may have
    talked about a conflict; an agent's own write is refused instead (:func:`conflict_refusal`)."""
    if conflict_line(text) is None:
        return text
    out = []
    fence = ""
    for line in text.split("\n"):
        was, fence = fence, fence_step(line.rstrip(), fence)
        out.append(" " + line if not was and _CONFLICT_LINE.match(line.rstrip()) else line)
    return "\n".join(out)


def conflict_refusal(text: str) -> str:
    """Why a fact's text cannot be stored as given ("" when it can): a line that reads as a git
    conflict marker, named, with the ways to keep it."""
    got = conflict_line(text)
    if got is None:
        return ""
    n, line = got
    return (
        f"line {n} of the text reads as a git conflict marker: {line!r} — stored, git and scribed would "
        "take the page for a merge conflict; put such lines in a code fence (```), indent them, or "
        "(a Markdown underline) make the run longer or shorter than 7 characters"
    )


def mark_refusal(title: str, text: str) -> str:
    """Why a fact's statement cannot be stored under ``title`` ("" when it can): its first line,
    right under the title, reads as the block's status mark (``*Status:* …``, or the older
    format's ``- status:`` under a dated title: :mod:`scribed.tiers.wiki_mark`), so the new fact
    would read as retired, and the team sync would move it under ``## Superseded``."""
    got = _wiki_mark.status(f"### {title}\n{text}\n")
    if got == "active":
        return ""
    first = text.splitlines()[0] if text else ""
    return (
        f"the text's first line reads as the status mark of a retired fact: {first!r} — stored, the "
        f"new fact would read as {_wiki_mark.state(got)}; start the text with another line, or reword "
        "that one"
    )


# --- the model ---------------------------------------------------------------------------------
@dataclass(slots=True)
class Source:
    """Where a fact came from: the session's date, the entry id, the agent."""

    date: str
    ref: str  # cold entry id (e-/d-/h-), agent write (w-) or import (i-)
    agent: str = ""
    session: str = ""
    via: str = ""  # "" for promotion from cold; wiki-write | inbox | import
    extra: dict[str, str] = field(default_factory=dict)

    def render(self) -> str:
        who = "author" if self.via in ("wiki-write", "inbox") else "agent"
        parts = [self.date, f"entry={self.ref}"]
        if self.agent:
            parts.append(f"{who}={self.agent}")
        if self.session:
            parts.append(f"session={self.session}")
        if self.via:
            parts.append(f"via={self.via}")
        parts += [f"{k}={v}" for k, v in self.extra.items()]
        return " · ".join(parts)

    @classmethod
    def parse(cls, value: str) -> Source:
        parts = [p.strip() for p in value.split(" · ")]
        src = cls(date=parts[0][:10] if parts and _DATE_RE.match(parts[0]) else "", ref="")
        for p in parts[1:] if src.date else parts:
            k, sep, v = p.partition("=")
            if not sep:
                continue
            if k == "entry":
                src.ref = v
            elif k in ("agent", "author"):
                src.agent = v
            elif k == "session":
                src.session = v
            elif k == "via":
                src.via = v
            else:
                src.extra[k] = v
        return src


@dataclass(slots=True)
class Fact:
    """One durable fact to merge into a topic."""

    topic: str
    kind: str
    text: str
    date: str  # YYYY-MM-DD of the session it came from
    source: Source
    title: str = ""
    supersedes: str = ""
    rationale: str = ""
    exact: bool = False  # only an identical text is a duplicate (a revised Core Context supersedes)

    def __post_init__(self) -> None:
        if not self.title:
            self.title = one_line(self.text, TITLE_CHARS)


@dataclass(slots=True)
class Block:
    """A ``### title`` block of a topic doc (``date``: its first source's date)."""

    date: str
    title: str
    status: str = "active"
    kind: str = ""
    supersedes: str = ""
    rationale: str = ""
    sources: list[Source] = field(default_factory=list)
    body: str = ""
    raw: str = ""  # the block's text as read; rendered anew only when dirty
    dirty: bool = True
    _key: tuple[str, str, frozenset[str]] | None = None  # (text, norm, tokens) cache for matching
    _rev: tuple[str, bool] | None = None  # (text, has reversal wording) cache
    _st: tuple[str, Statement | None] | None = None  # (text, what it states) cache

    def key(self) -> tuple[str, frozenset[str]]:
        text = self.text
        if self._key is None or self._key[0] != text:
            n = norm(text)
            self._key = (text, n, frozenset(n.split()))
        return self._key[1], self._key[2]

    def reverses_any(self) -> bool:
        """Whether this fact could reverse another at all (names one, or has reversal wording)."""
        if self.supersedes:
            return True
        text = self.text
        if self._rev is None or self._rev[0] != text:
            # a choice again ("keep fpdf2", "go back to MkDocs") may reverse the change that left
            # it (:func:`~scribed.compress.reversal.names_returned`); returns() has its own prefilter
            self._rev = (text, (_may_reverse(text) and may_reverse(text)) or bool(returns(text)))
        return self._rev[1]

    def stated(self) -> Statement | None:
        """What this fact states (:func:`~scribed.compress.restate.statement` of its claim): a later
        fact may say it again with another figure or the opposite, and so reverse it."""
        text = self.text
        if self._st is None or self._st[0] != text:
            self._st = (text, statement(claim(text) if "**" in text else text))
        return self._st[1]

    def is_dup(self, n: str, toks: frozenset[str]) -> bool:
        """``near_dup`` against a pre-normalized text (merging hundreds of facts stays fast)."""
        bn, bt = self.key()
        if not n or not bn:
            return False
        return bn == n or len(bt & toks) / len(bt | toks) >= NEAR_DUP  # terms.jaccard, without copies

    @property
    def text(self) -> str:
        """The fact itself (body, else title) for matching."""
        return self.body or self.title

    @property
    def refs(self) -> set[str]:
        """Ids of the entries behind this block, including those folded into a digest."""
        out = {s.ref for s in self.sources if s.ref}
        for s in self.sources:
            folded = s.extra.get("folded") if s.extra else None
            if folded:
                out.update(i for i in folded.split(",") if i)
        return out

    @property
    def active(self) -> bool:
        return self.status == "active"

    @property
    def status_date(self) -> str:
        m = _DATE_RE.search(self.status)
        return m.group(0) if m else ""

    @property
    def label(self) -> str:
        return f"{self.date}: {self.title}"

    def confidence(self) -> str:
        sessions = {s.session or s.ref for s in self.sources if s.session or s.ref}
        agents = {s.agent for s in self.sources if s.agent}
        n, a = len(sessions), len(agents)
        return f"{n} session{'s' if n != 1 else ''}, {a} agent{'s' if a != 1 else ''}"

    def provenance(self) -> str:
        """The ONE provenance line: sources, confidence and what this fact replaces."""
        line = _SOURCE_LINE + "; ".join(src.render() for src in self.sources)
        line += f" | confidence: {self.confidence()}"
        if self.supersedes:
            line += f" | replaces: {one_line(self.supersedes, 300)}"
        return line

    def render(self) -> str:
        if not self.dirty and self.raw:
            return self.raw
        lines = [f"### {self.title}"]
        if not self.active:
            lines.append(_STATUS_LINE + self.status)
        if self.body and self.body != self.title:
            lines += [unmarked(self.body.rstrip()), ""]
        lines.append(self.provenance())
        return "\n".join(lines) + "\n"

    def add_source(self, src: Source) -> bool:
        if src.ref and src.ref in self.refs:
            return False
        self.sources.append(src)
        self.dirty = True
        return True


def parse_block(raw: str) -> Block:
    """A block as read (either format). Its status is what its text records
    (:func:`scribed.tiers.wiki_mark.status`), not where it sits: a text merge can leave a current
    block under ``## Superseded``, and the next write puts it back above."""
    lines = raw.splitlines()
    heading = lines[0][4:].strip() if lines else ""
    old = _OLD_HEADING.match(lines[0]) if lines else None
    if old and len(lines) > 1 and _META_RE.match(lines[1]):
        return _parse_old(old.group("d"), old.group("t"), raw)
    b = Block(date="", title=heading, raw=raw, dirty=False)
    rest = lines[1:]
    if rest and rest[0].startswith(_STATUS_LINE):
        b.status = rest.pop(0)[len(_STATUS_LINE) :].strip() or b.status
    while rest and not rest[-1].strip():
        rest.pop()
    if rest and rest[-1].startswith(_SOURCE_LINE):
        prov = rest.pop()[len(_SOURCE_LINE) :]
        srcs, _, more = prov.partition(" | confidence: ")
        b.sources = [Source.parse(x) for x in srcs.split("; ") if x.strip()]
        _, sep, replaces = more.partition(" | replaces: ")
        b.supersedes = replaces.strip() if sep else ""
    b.body = "\n".join(rest).strip("\n")
    b.date = next((src.date for src in b.sources if src.date), "")
    return b


def _parse_old(date: str, title: str, raw: str) -> Block:
    """A block of the older format: ``### DATE: title``, ``- key: value`` lines, then its body."""
    lines = raw.splitlines()[1:]
    b = Block(date=date[:10], title=title.strip(), raw=raw, dirty=False)
    i = 0
    while i < len(lines):
        m = _META_RE.match(lines[i])
        if not m:
            break
        k, v = m.group("k"), m.group("v").strip()
        if k == "status":
            b.status = v or "active"
        elif k == "kind":
            b.kind = v
        elif k == "supersedes":
            b.supersedes = v
        elif k == "rationale":
            b.rationale = v
        elif k == "source":
            b.sources.append(Source.parse(v))
        i += 1
    b.body = "\n".join(lines[i:]).strip("\n")
    return b


def split_blocks(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """A topic file's preamble and its blocks' raw text (``###`` headings outside code fences),
    each with whether it sits under ``## Superseded``."""
    if "```" not in text and "~~~" not in text:  # no fence can open: skip the per-line fence rule
        return _split_plain(text)
    return _split_fenced(text)


def _split_fenced(text: str) -> tuple[str, list[tuple[str, bool]]]:
    pre: list[str] = []
    blocks: list[tuple[list[str], bool]] = []
    fence = ""
    under = False
    for line in text.splitlines():
        code = bool(fence or fence_step(line, fence))
        fence = fence_step(line, fence)
        if not code and line.rstrip() == SUPERSEDED:
            under = True
            continue
        if not code and line.startswith("### "):
            blocks.append(([line], under))
            continue
        (blocks[-1][0] if blocks else pre).append(line)
    return "\n".join(pre), [("\n".join(ls).rstrip("\n") + "\n", sup) for ls, sup in blocks]


def _split_plain(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """:func:`split_blocks` for a text without a fence (a big wiki is read on every promotion)."""
    pre: list[str] = []
    blocks: list[tuple[list[str], bool]] = []
    under = False
    cur = pre
    for line in text.splitlines():
        if line.startswith("### "):
            cur = [line]
            blocks.append((cur, under))
        elif line.startswith(SUPERSEDED) and line.rstrip() == SUPERSEDED:
            under = True
        else:
            cur.append(line)
    return "\n".join(pre), [("\n".join(ls).rstrip("\n") + "\n", sup) for ls, sup in blocks]


def _titled(title: str, text: str) -> bool:
    """Whether a fact has a title of its own (not its text's first words)."""
    t, x = norm(title).rstrip(" …"), norm(text)
    return bool(t) and not x.startswith(t)


def _kind(topic: str) -> str:
    return TOPIC_KIND.get(topic, "context" if topic.startswith("agent-") else "note")


def default_preamble(topic: str) -> str:
    desc = STANDARD_TOPICS.get(topic, f"Durable facts filed under '{topic}'.")
    if topic not in STANDARD_TOPICS and topic.startswith("agent-"):
        desc = f"Pinned context of agent {topic[6:]} (Core Context and conventions scoped to it)."
    return (
        f"# Wiki: {topic}\n\n> {desc}\n\n"
        "<!-- Maintained by scribed: one `### Title` per durable fact, its statement as written and one\n"
        "     provenance line. Reversed and deprecated facts move under Superseded; nothing is deleted.\n"
        "     Agents: add facts with `scribed wiki-write` or the inbox. -->\n"
    )


def reverses(newer: Block, older: Block) -> bool:
    """Whether ``newer`` names ``older`` in its ``supersedes`` or reverses it by wording and overlap."""
    if older.refs & newer.refs:
        return False  # one session's own facts do not reverse each other here
    if newer.supersedes and (
        same_fact(newer.supersedes, older.text) or same_fact(newer.supersedes, older.title)
    ):
        return True
    return reversal_score(newer.text, older.text) > 0
