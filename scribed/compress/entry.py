"""Cold entries as text: rendering and parsing back.

One structure for every compressor:

    ### 2026-02-11T20:10:00Z: Fix #590 flaky auth test
    - provenance: id=e-3f2a9c1b7e4d · agent=picard · session=37f4 · source=`…/events.jsonl` (copilot) · lines 1–120 · sha256=… · ratio=0.08

    #### Goal
    …

``compressor=`` (``llm:MODEL``) and ``recall=`` (under 1.00) are printed only when they are not the
defaults: the extractive compressor, and every anchor in the entry. Fitting an entry to its budget
is :mod:`scribed.compress.entry_fit`, the retention guard :mod:`scribed.compress.entry_guard`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scribed.models import Summary

# Reading a cold file (``split_entries`` and friends) is on the spawn path (``scribed context
# --include-cold``): it must not import the models (pydantic, ~60 ms) or the anchor extractor, so
# rendering imports them where it uses them (as entry_fit and entry_guard do). tests/test_spawn.py
# checks it.

ENTRY_HEADING = re.compile(r"^### (?P<date>\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+Z?)?)\s*:?\s*(?P<title>.*)$")
ID_RE = re.compile(r"\bid=(?P<id>[a-z]-[0-9a-f]{6,40})")
FOLDED_RE = re.compile(r"\bfolded=(?P<ids>[a-z0-9,-]+)")
TITLE_CHARS = 100  # an entry's heading holds its goal up to this many characters
# Items are printed whole; this only bounds a runaway item (an LLM answer), cut between words.
MAX_ITEM_CHARS = 1200
DEFAULT_COMPRESSOR = "extractive"  # not printed in provenance; an absent compressor= reads as it


# An imported section with no date of its own ("Project Context", "Learnings") carries
# ``dated=file``: its date is its file's last commit, which says nothing of when it was learned.
DATED_BY, BY_FILE = "dated", "file"


@dataclass(slots=True)
class EntryMeta:
    entry_id: str
    agent: str
    session: str
    source: str
    kind: str
    end: datetime
    first_line: int
    last_line: int
    turns: int
    sha256: str
    compressor: str
    bytes_in: int
    recall: float = 1.0
    extra: dict[str, str] = field(default_factory=dict)


def iso(dt: datetime) -> str:
    return _iso_utc(dt.astimezone(UTC))


@functools.lru_cache(maxsize=64)
def _iso_utc(dt: datetime) -> str:
    """Formatted once per instant: a session's entry is rendered ~20 times while it is fitted."""
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


ONE_LINE_CACHED_CHARS = 2000  # longer texts are not kept as keys (a cache entry pins its text)


def one_line(s: str, limit: int) -> str:
    """``s`` on one line within ``limit`` chars, cut only between words and never inside a
    backtick span (a path, command or identifier cut short would read as a different one).

    Remembered for short texts: fitting an entry renders it ~20 times, each item again."""
    if len(s) <= ONE_LINE_CACHED_CHARS:
        return _one_line_cached(s, limit)
    return _one_line(s, limit)


def _one_line(s: str, limit: int) -> str:
    s = " ".join(s.split())  # the same as re.sub(r"\s+", " ", s).strip(): both use Python's whitespace
    if len(s) <= limit:
        return s
    head = s[: limit - 1]
    if s[limit - 1] != " ":
        head = head.rsplit(" ", 1)[0] if " " in head else ""  # a token longer than the limit is dropped
    if head.count("`") % 2:
        head = head[: head.rfind("`")]
    return head.rstrip() + "…"


_one_line_cached = functools.lru_cache(maxsize=8192)(_one_line)


def safe_line(s: str, limit: int) -> str:
    """One line that cannot be read back as a heading: text from a transcript or a model is data,
    and must never forge an entry (``### date: …``) or a section (``#### …``)."""
    s = one_line(s, limit)
    return "\\" + s if s.startswith("#") else s


def _provenance_parts(meta: EntryMeta) -> tuple[str, str, int]:
    """The provenance line before and after its ratio, and their UTF-8 size with ``ratio=``'s:
    the same for every render of one meta (fitting renders an entry ~20 times), so remembered,
    keyed by every field it prints."""
    return _parts((
        meta.entry_id, meta.agent, meta.session, meta.source, meta.kind, meta.first_line, meta.last_line,
        meta.sha256, meta.compressor, meta.recall, tuple(meta.extra.items()),
    ))  # fmt: skip


@functools.lru_cache(maxsize=16)
def _parts(key: tuple[Any, ...]) -> tuple[str, str, int]:
    entry_id, agent, session, source, kind, first, last, sha256, compressor, recall, extra = key
    head = [
        f"id={entry_id}",
        f"agent={agent}",
        f"session={one_line(session, 200)}",
        "source=`" + one_line(source, 400).replace("`", "'") + f"` ({kind})",
        f"lines {first}–{last}",
        f"sha256={sha256}",
    ]
    # The defaults are not printed (issue 30: the line took ~330 of a 600-byte entry): the
    # extractive compressor, and a recall of 1.00 (every anchor is in the entry); an absent field
    # reads as its default (core/ledger_rebuild.py). The turn count was for the eye only.
    if compressor != DEFAULT_COMPRESSOR:
        head.append(f"compressor={compressor}")
    tail = [f"recall={recall:.2f}"] if f"{recall:.2f}" != "1.00" else []
    tail += [f"{k}={v}" for k, v in extra]
    before, after = "- provenance: " + " · ".join(head) + " · ", "".join(f" · {x}" for x in tail)
    return before, after, len(before.encode()) + len("ratio=") + len(after.encode())


def _block(title: str, value: str | tuple[str, ...]) -> tuple[str, int] | None:
    """One ``####`` section as printed and its UTF-8 size (None: nothing to print)."""
    if isinstance(value, str):
        if not value.strip():
            return None
        text = f"#### {title}\n{safe_line(value, 1200)}"
    else:
        items = [v for v in value if v and v.strip()]
        if not items:
            return None
        text = f"#### {title}\n" + "\n".join(f"- {one_line(v, MAX_ITEM_CHARS)}" for v in items)
    return text, len(text.encode())


# Sections remembered, keyed by their items: fitting renders an entry ~20 times and changes one
# section at a time. Only short sections are kept (a key pins its items), a few entries' worth.
_block_memo: dict[tuple[str, str | tuple[str, ...]], tuple[str, int] | None] = {}
_BLOCK_MEMO_MAX = 64
BLOCK_CACHED_CHARS = 20_000


def _memo_worthy(value: str | tuple[str, ...]) -> bool:
    """Short, and all text (a summary built without validation may hold anything)."""
    if isinstance(value, str):
        return len(value) <= BLOCK_CACHED_CHARS
    return all(isinstance(v, str) for v in value) and sum(map(len, value)) <= BLOCK_CACHED_CHARS


def _blocks(summary: Summary, skip: str = "") -> list[tuple[str, int]]:
    from scribed.models import SECTIONS

    out: list[tuple[str, int]] = []
    for key, title in SECTIONS:
        if key == skip:
            continue
        value = getattr(summary, key)
        k = (title, value if isinstance(value, str) else tuple(value))
        try:
            block = _block_memo[k]
        except (KeyError, TypeError) as miss:  # TypeError: an item that cannot be a key
            block = _block(title, k[1])
            if isinstance(miss, KeyError) and _memo_worthy(k[1]):
                if len(_block_memo) >= _BLOCK_MEMO_MAX:
                    _block_memo.clear()
                _block_memo[k] = block
        if block is not None:
            out.append(block)
    return out


def parts_of(summary: Summary, meta: EntryMeta) -> tuple[str, list[tuple[str, int]], int]:
    """The heading, the section blocks, and the entry's UTF-8 size less the provenance line."""
    title = one_line(summary.goal or "session", TITLE_CHARS) or "session"
    head = f"### {iso(meta.end)}: {title}"
    # A goal the title holds whole is not printed again under Goal (readers take the title then:
    # seed_text.last_session): the bytes go to facts (issue 30, "no echoes").
    whole = summary.goal and not title.endswith("…") and title == " ".join(summary.goal.split())
    blocks = _blocks(summary, "goal" if whole else "")
    fixed = len(head.encode()) + sum(n for _, n in blocks) + max(0, len(blocks) - 1) + 4  # 4 newlines
    return head, blocks, fixed


def settled(fixed: int, meta: EntryMeta) -> tuple[str, int]:
    """The provenance line and the entry's size: ``ratio`` in provenance is of the rendered size
    itself, so the size is settled first (it is counted, not encoded)."""
    before, after, parts = _provenance_parts(meta)
    shown = ""
    size = got = 0
    for _ in range(3):  # the ratio printed depends on the size, which depends on the ratio's digits
        ratio = size / meta.bytes_in if meta.bytes_in else 0.0
        shown = f"{ratio:.3f}"  # ASCII: one byte a character
        got = fixed + parts + len(shown)
        if got == size:
            break
        size = got
    return f"{before}ratio={shown}{after}", got


def render(summary: Summary, meta: EntryMeta) -> str:
    """The entry's markdown. ``ratio`` in provenance is of the rendered size itself."""
    head, blocks, fixed = parts_of(summary, meta)
    prov = settled(fixed, meta)[0]
    body = "\n".join(b for b, _ in blocks)
    return f"{head}\n{prov}\n\n{body}\n"


def size_of(summary: Summary, meta: EntryMeta) -> int:
    """``len(render(summary, meta).encode())`` without building the text."""
    return settled(parts_of(summary, meta)[2], meta)[1]


def item_bytes(line: str, listed: int, blocks: int, title: str) -> int:
    """What appending ``line`` to a section holding ``listed`` printed items adds to the entry's
    size, when ``blocks`` sections are printed (an empty or blank item is not printed)."""
    alone = _block(title, (line,))  # the section holding just this item
    if alone is None:
        return 0
    if listed:
        return alone[1] - len(f"#### {title}".encode())  # the item's line and the newline before it
    return alone[1] + (1 if blocks else 0)


@dataclass(slots=True)
class Entry:
    """An entry parsed back from a cold file."""

    heading: str
    date: str
    title: str
    text: str  # the whole entry including heading, ending with a newline
    # Read from ``text`` once: a run's appends and folds ask every entry of a file for its ids, and
    # each ask searched the whole entry (the text is never changed: an edit makes a new Entry).
    _own: tuple[str | None, frozenset[str]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def _read_ids(self) -> tuple[str | None, frozenset[str]]:
        if self._own is None:
            m = ID_RE.search(self.text)
            own = m.group("id") if m else None
            out = {own} if own else set()
            for f in FOLDED_RE.finditer(self.text) if "folded=" in self.text else ():  # a find in C first
                out.update(i for i in f.group("ids").split(",") if i)
            self._own = (own, frozenset(out))
        return self._own

    @property
    def entry_id(self) -> str | None:
        return self._read_ids()[0]

    @property
    def ids(self) -> set[str]:
        """Its own id plus the ids of entries folded into it (a fresh set: the caller's to change)."""
        return set(self._read_ids()[1])

    @property
    def when(self) -> datetime | None:
        return parse_date(self.date)


_PROVENANCE = re.compile(r"^- provenance: (?P<p>.*)$", re.M)
_LINES = re.compile(r"^lines (\d+)\D+(\d+)$")
_FIELD_KEY = re.compile(r"[a-z_]+")


def dated_by_file(text: str) -> bool:
    """Whether an entry's date is only its file's (:data:`BY_FILE`): never the newest work."""
    got = provenance(text) if f" · {DATED_BY}={BY_FILE}" in text else None
    return got is not None and got[0].get(DATED_BY) == BY_FILE


def provenance(text: str) -> tuple[dict[str, str], tuple[int, int]] | None:
    """An entry's provenance line read back (:func:`provenance_fields`); None when it has none."""
    m = _PROVENANCE.search(text)
    return provenance_fields(m.group("p")) if m else None


def provenance_fields(line: str) -> tuple[dict[str, str], tuple[int, int]]:
    """The ``key=value`` fields of a provenance line (after ``- provenance: ``) and the line range
    it names (``lines 1–120``; (0, 0) when none). A ``retired.txt`` reason names an entry's session
    and lines in the same form (``… · session=37f4 · lines 1–120``)."""
    out: dict[str, str] = {}
    lines = (0, 0)
    for part in line.split(" · "):
        k, sep, v = part.partition("=")
        if sep and _FIELD_KEY.fullmatch(k.strip()):
            out[k.strip()] = v.strip()
        else:
            m = _LINES.match(part.strip())
            if m:
                lines = (int(m.group(1)), int(m.group(2)))
    return out, lines


def parse_date(s: str) -> datetime | None:
    s = s.strip().replace(" ", "T")
    try:
        if len(s) == len("YYYY-MM-DD"):
            return datetime.fromisoformat(s).replace(tzinfo=UTC)
        dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


_FENCE_OPEN = re.compile(r"^ {0,3}(?P<f>`{3,}(?=[^`]*$)|~{3,})")


def has_fence(text: str) -> bool:
    """Whether any line of ``text`` could open a code fence (3+ backticks or tildes in a row)."""
    return "```" in text or "~~~" in text


def fence_step(line: str, fence: str) -> str:
    """The code fence open after ``line`` given the one open before it ("" = none), by the
    CommonMark rules: an opening fence is 3+ backticks or tildes indented at most 3 spaces (a
    backtick fence's info string holds no backtick); only the same character, at least as long,
    with nothing after it, closes it. A tilde block hides a backtick fence line and vice versa,
    which a toggle on either misses."""
    m = _FENCE_OPEN.match(line)
    if not fence:
        return m.group("f") if m else ""
    if m and m.group("f")[0] == fence[0] and len(m.group("f")) >= len(fence) and not line[m.end() :].strip():
        return ""
    return fence


def split_entries(text: str) -> tuple[str, list[Entry]]:
    """Split a cold file into its preamble and its dated ``### `` entries. Headings inside code
    fences (either kind, any length) are text: a fixture in an entry never forges another."""
    pre: list[str] = []
    entries: list[Entry] = []
    cur: list[str] | None = None
    head: re.Match[str] | None = None
    fence = ""
    fenced = has_fence(text)  # else no line opens one: skip the per-line fence rule
    for line in text.splitlines(keepends=True):
        was = fence
        if fenced:
            fence = fence_step(line.rstrip("\r\n"), fence)
        m = None if (was or fence or not line.startswith("### ")) else ENTRY_HEADING.match(line.rstrip("\n"))
        if m:
            if cur is not None and head is not None:
                entries.append(_mk(head, cur))
            cur, head = [line], m
        elif cur is None:
            pre.append(line)
        else:
            cur.append(line)
    if cur is not None and head is not None:
        entries.append(_mk(head, cur))
    return "".join(pre), entries


def _mk(m: re.Match[str], lines: list[str]) -> Entry:
    text = "".join(lines)
    if not text.endswith("\n"):
        text += "\n"
    return Entry(heading=lines[0].rstrip("\n"), date=m.group("date"), title=m.group("title"), text=text)


def join_entries(preamble: str, entries: list[Entry]) -> str:
    parts = [preamble.rstrip("\n") + "\n\n"] if preamble.strip() else []
    parts += [e.text.rstrip("\n") + "\n\n" for e in entries]
    return "".join(parts).rstrip("\n") + "\n" if parts else ""
