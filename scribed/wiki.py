"""The wiki tier: durable facts in ``wiki/{topic}.md``, one dated block per fact.

A block looks like::

    ### 2026-09-15: Use an injected clock in src/auth/session.py instead of freeze_time()
    - status: active
    - kind: decision
    - confidence: 2 sessions, 2 agents
    - supersedes: use freeze_time() in the login tests
    - source: 2026-09-15 · entry=e-3f2a9c1b7e4d · agent=picard · session=s-0915
    - source: 2026-09-20 · entry=e-91aa03c2d4e5 · agent=riker · session=s-0920

    (the full fact text when it is longer than the title)

Blocks are never deleted: a reversed fact is marked ``superseded by <date>: <title>`` and an
agent can mark one ``deprecated``. Every source line names the cold entry (or agent write) it came
from, which is also how a rerun after a crash recognises facts it already merged. Nothing here
reads the clock: dates come from sessions, so rewriting the same facts gives the same bytes.
Blocks scribed did not change are written back byte for byte (agents and people edit these files).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scribed.entry import ENTRY_HEADING, one_line, split_entries
from scribed.fsutil import atomic_write, read_text
from scribed.names import normalize_name

INDEX = "index.md"
INDEX_MAX_LINES = 200
TITLE_CHARS = 100
BODY_CHARS = 4000
NEAR_DUP = 0.9  # token-set Jaccard at or above which two facts are the same fact
OVERLAP = 0.5  # share of an earlier fact's content words a reversal must repeat

STANDARD_TOPICS: dict[str, str] = {
    "decisions": "Decisions with their rationale; reversed ones are kept and marked superseded.",
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
_META_KEYS = ("status", "kind", "confidence", "supersedes", "rationale", "source")
_META_RE = re.compile(r"^- (?P<k>status|kind|confidence|supersedes|rationale|source): ?(?P<v>.*)$")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_SUPERSEDES_SUFFIX = re.compile(r"\s*\(supersedes: (?P<s>.+?)\)?\s*$")
_MD = re.compile(r"[`*_>#\[\]()~|]")
_NON_WORD = re.compile(r"[^\w]+")
_REVERSAL = re.compile(
    r"\b(?:revers(?:e|es|ed|ing)|revert(?:s|ed|ing)?|supersed(?:e|es|ed|ing)|instead of|no longer|"
    r"scrap(?:s|ped)?|rather than|replac(?:e|es|ed|ing))\b",
    re.IGNORECASE,
)
_INSTEAD_OF = re.compile(
    r"\b(?:instead of|rather than|replac(?:e|es|ed|ing)|no longer use)\s+`?(?P<x>[^`,.;:)]{2,80})", re.I
)
_STOP = {
    "the", "and", "for", "use", "uses", "using", "with", "this", "that", "from", "instead", "decision",
    "decided", "will", "are", "our", "not", "now", "reverse", "reverses", "reversed", "reversing", "revert",
    "earlier", "previous", "rather", "than", "into", "when", "all", "any", "its", "was", "were", "has",
    "have", "been", "longer", "replace", "replaces", "replacing", "supersedes", "should", "then", "them",
    "they", "but", "via",
}  # fmt: skip


class WikiError(ValueError):
    """A user-facing wiki problem (bad topic, no such block); the CLI turns it into exit 2."""


def valid_topic(raw: object) -> str | None:
    """A topic is a file stem like an agent name; ``index`` is taken by the generated index."""
    name = normalize_name(raw)
    return None if name is None or name == "index" else name


# --- text normalization ------------------------------------------------------------------------
def strip_supersedes(text: str) -> tuple[str, str]:
    """Split a trailing ``(supersedes: OLD)`` off a decision: (text, OLD)."""
    m = _SUPERSEDES_SUFFIX.search(text)
    if not m or "(supersedes:" not in text:
        return text.strip(), ""
    return text[: m.start()].strip(), m.group("s").strip().rstrip(")")


def norm(text: str) -> str:
    """Casefolded, markdown and punctuation stripped, whitespace collapsed: the dedup key."""
    text = strip_supersedes(text)[0].casefold()
    text = _MD.sub(" ", text)
    text = _NON_WORD.sub(" ", text).replace("_", " ")
    return " ".join(text.split())


def tokens(text: str) -> set[str]:
    return set(norm(text).split())


def words(text: str) -> set[str]:
    """Content words for overlap tests (short and stop words dropped)."""
    return {w for w in norm(text).split() if len(w) >= 3 and w not in _STOP}


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def near_dup(a: str, b: str) -> bool:
    na, nb = norm(a), norm(b)
    if not na or not nb:
        return False
    return na == nb or jaccard(set(na.split()), set(nb.split())) >= NEAR_DUP


def same_fact(ref: str, text: str) -> bool:
    """Whether a ``supersedes`` reference names ``text`` (equal, contained or mostly the same words)."""
    a, b = norm(ref), norm(text)
    if not a or not b:
        return False
    if a == b or (len(a) >= 12 and a in b) or (len(b) >= 12 and b in a):
        return True
    return jaccard(set(a.split()), set(b.split())) >= 0.6


def safe_body(text: str) -> str:
    """A block body that cannot break the file: dated ``###`` headings outside code fences are
    demoted to ``####`` (they would start a new block) and an unclosed fence is closed."""
    out = []
    fence = ""
    for line in text.splitlines():
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(" `~"):
                fence = ""
        elif m:
            fence = m.group(1)
        elif ENTRY_HEADING.match(line):
            line = "#" + line
        out.append(line.rstrip())
    if fence:
        out.append(fence)
    return "\n".join(out)


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
    """A ``### YYYY-MM-DD: title`` block of a topic doc."""

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

    def key(self) -> tuple[str, frozenset[str]]:
        text = self.text
        if self._key is None or self._key[0] != text:
            n = norm(text)
            self._key = (text, n, frozenset(n.split()))
        return self._key[1], self._key[2]

    def is_dup(self, n: str, toks: frozenset[str]) -> bool:
        """``near_dup`` against a pre-normalized text (merging hundreds of facts stays fast)."""
        bn, bt = self.key()
        if not n or not bn:
            return False
        return bn == n or jaccard(set(bt), set(toks)) >= NEAR_DUP

    @property
    def text(self) -> str:
        """The fact itself (body, else title) for matching."""
        return self.body or self.title

    @property
    def refs(self) -> set[str]:
        """Ids of the entries behind this block, including those folded into a digest."""
        out = {s.ref for s in self.sources if s.ref}
        for s in self.sources:
            out.update(i for i in s.extra.get("folded", "").split(",") if i)
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

    def render(self) -> str:
        if not self.dirty and self.raw:
            return self.raw
        lines = [f"### {self.date}: {self.title}", f"- status: {self.status}"]
        if self.kind:
            lines.append(f"- kind: {self.kind}")
        lines.append(f"- confidence: {self.confidence()}")
        if self.supersedes:
            lines.append(f"- supersedes: {one_line(self.supersedes, 300)}")
        if self.rationale:
            lines.append(f"- rationale: {one_line(self.rationale, 600)}")
        lines += [f"- source: {s.render()}" for s in self.sources]
        text = "\n".join(lines) + "\n"
        if self.body and self.body != self.title:
            text += "\n" + self.body.rstrip() + "\n"
        return text

    def add_source(self, src: Source) -> bool:
        if src.ref and src.ref in self.refs:
            return False
        self.sources.append(src)
        self.dirty = True
        return True


def parse_block(date: str, title: str, raw: str) -> Block:
    """Parse a block's meta lines (right after its heading) and body."""
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
    if not b.body.strip():
        b.body = ""
    return b


def default_preamble(topic: str) -> str:
    desc = STANDARD_TOPICS.get(topic, f"Durable facts filed under '{topic}'.")
    if topic not in STANDARD_TOPICS and topic.startswith("agent-"):
        desc = f"Pinned context of agent {topic[6:]} (Core Context and conventions scoped to it)."
    return (
        f"# Wiki: {topic}\n\n> {desc}\n\n"
        "<!-- Maintained by scribed: one `### YYYY-MM-DD: title` block per durable fact, with its sources\n"
        "     (cold entry ids), confidence and status. Reversed and deprecated facts are kept and marked;\n"
        "     nothing is deleted. Agents: add facts with `scribed wiki-write` or the inbox. -->\n"
    )


@dataclass(slots=True)
class MergeResult:
    topic: str
    action: str  # added | merged | present
    block: str  # the block's label "date: title"
    superseded: list[str] = field(default_factory=list)
    superseded_by: str = ""


@dataclass(slots=True)
class WikiDoc:
    """One topic file."""

    topic: str
    preamble: str
    blocks: list[Block]
    original: str = ""
    touched: bool = False  # only docs scribed changed are rewritten (never just reformatted)

    @classmethod
    def parse(cls, topic: str, text: str) -> WikiDoc:
        pre, entries = split_entries(text)
        blocks = [parse_block(e.date, e.title, e.text) for e in entries]
        return cls(
            topic=topic,
            preamble=pre if pre.strip() or blocks else default_preamble(topic),
            blocks=blocks,
            original=text,
        )

    def render(self) -> str:
        parts = [self.preamble.rstrip("\n") + "\n"] if self.preamble.strip() else []
        parts += [b.render().rstrip("\n") + "\n" for b in self.blocks]
        return "\n".join(parts)

    @property
    def changed(self) -> bool:
        return self.touched and self.render() != self.original

    @property
    def refs(self) -> set[str]:
        out: set[str] = set()
        for b in self.blocks:
            out |= b.refs
        return out

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
            key = (
                "active"
                if b.active
                else ("superseded" if b.status.startswith("superseded") else "deprecated")
            )
            out[key] += 1
        return out

    # --- merging -------------------------------------------------------------------------------
    def add(self, fact: Fact) -> MergeResult:
        """Merge a fact: a duplicate adds a source, a new fact gets a block, reversals supersede."""
        n = norm(fact.text)
        toks = frozenset(n.split())
        if fact.exact:
            dups = [b for b in self.blocks if b.key()[0] == n]
        else:
            dups = [b for b in self.blocks if b.is_dup(n, toks)]
        for b in dups:
            if fact.source.ref and fact.source.ref in b.refs:
                return MergeResult(self.topic, "present", b.label)
        self.touched = True
        for b in dups:
            if b.active or (b.status_date and fact.date <= b.status_date):
                b.add_source(fact.source)
                if fact.rationale and not b.rationale:
                    b.rationale = fact.rationale
                if fact.supersedes and not b.supersedes:
                    b.supersedes = fact.supersedes
                merged = MergeResult(self.topic, "merged", b.label)
                if b.active:
                    for old in self._reversed_by(b):
                        old.status = f"superseded by {b.label}"
                        old.dirty = True
                        merged.superseded.append(old.label)
                return merged
        block = Block(
            date=fact.date,
            title=one_line(fact.title, TITLE_CHARS),
            kind=fact.kind,
            supersedes=fact.supersedes,
            rationale=fact.rationale,
            sources=[fact.source],
        )
        body = fact.text.strip()
        block.body = "" if body == block.title else body
        result = MergeResult(self.topic, "added", block.label)
        # A later fact that reverses this one is already here (facts promoted out of order).
        for b in self.blocks:
            if b.active and b.date >= fact.date and reverses(b, block):
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

    def _reversed_by(self, new: Block) -> list[Block]:
        """Earlier active blocks ``new`` reverses: the one its ``supersedes`` names, else the best overlap."""
        earlier = [
            b
            for b in self.blocks
            if b is not new and b.active and b.date <= new.date and not (b.refs & new.refs)
        ]
        if new.supersedes:
            named = [
                b for b in earlier if same_fact(new.supersedes, b.text) or same_fact(new.supersedes, b.title)
            ]
            if named:
                return named[-1:]
        best: tuple[float, Block] | None = None
        for b in earlier:
            score = reversal_score(new.text, b.text)
            if score > 0 and (best is None or score >= best[0]):
                best = (score, b)
        return [best[1]] if best else []

    def deprecate(self, title: str, agent: str, date: str, reason: str = "") -> Block:
        """Mark the block titled ``title`` deprecated (kept, not deleted)."""
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
        if b.status.startswith("deprecated"):
            return b
        self.touched = True
        b.status = f"deprecated {date} by {agent}" + (f": {one_line(reason, 200)}" if reason.strip() else "")
        b.dirty = True
        return b


def reversal_score(new_text: str, old_text: str) -> float:
    """How strongly ``new_text`` reverses ``old_text`` (0 = it does not).

    Needs reversal wording ("instead of", "reverses", "no longer", ...). When it names what it
    replaces ("instead of X"), X must appear in the old text; otherwise at least half of the old
    text's content words (three or more) must be repeated.
    """
    if not _REVERSAL.search(new_text) or near_dup(new_text, old_text):
        return 0.0
    old_norm = norm(old_text)
    named = [norm(m.group("x")) for m in _INSTEAD_OF.finditer(new_text)]
    named = [x for x in named if len(x) >= 3]
    if named:  # "instead of X": X must be what the old fact says, overlap alone is not enough
        return 2.0 if any(f" {x} " in f" {old_norm} " for x in named) else 0.0
    ow = words(old_text)
    if len(ow) < 3:
        return 0.0
    share = len(words(new_text) & ow) / len(ow)
    return share if share >= OVERLAP else 0.0


def reverses(newer: Block, older: Block) -> bool:
    """Whether ``newer`` names ``older`` in its ``supersedes`` or reverses it by wording and overlap."""
    if older.refs & newer.refs:
        return False  # one session's own facts do not reverse each other here
    if newer.supersedes and (
        same_fact(newer.supersedes, older.text) or same_fact(newer.supersedes, older.title)
    ):
        return True
    return reversal_score(newer.text, older.text) > 0


# --- the folder ----------------------------------------------------------------------------------
class Wiki:
    """The wiki folder: loads topic docs lazily, writes changed ones atomically, then the index."""

    def __init__(self, folder: Path, base: Path) -> None:
        self.folder = folder
        self.base = base
        self.docs: dict[str, WikiDoc] = {}

    def topics(self) -> list[str]:
        """Topic files on disk plus any loaded in memory, sorted."""
        names = set(self.docs)
        if self.folder.is_dir():
            for p in self.folder.glob("*.md"):
                if p.is_file() and not p.is_symlink() and valid_topic(p.stem) == p.stem:
                    names.add(p.stem)
        return sorted(names)

    def doc(self, topic: str) -> WikiDoc:
        name = valid_topic(topic)
        if name is None or name != topic:
            raise WikiError(f"bad topic name {topic!r} (lowercase letters, digits, '-' and '_'; not 'index')")
        if topic not in self.docs:
            self.docs[topic] = WikiDoc.parse(topic, read_text(self.folder / f"{topic}.md"))
        return self.docs[topic]

    def add(self, fact: Fact) -> MergeResult:
        return self.doc(fact.topic).add(fact)

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
        for topic in self.changed():
            doc = self.docs[topic]
            text = doc.render()
            atomic_write(self.folder / f"{topic}.md", text, base=self.base)
            doc.original = text
            written.append(topic)
        self.write_index()
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
