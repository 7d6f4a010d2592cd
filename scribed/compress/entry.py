"""Cold entries: rendering, the retention guard, size fitting and parsing back.

One structure for every compressor:

    ### 2026-02-11T20:10:00Z: Fix #590 flaky auth test
    - provenance: id=e-3f2a9c1b7e4d · agent=picard · session=37f4 · source=`…/events.jsonl` (copilot) · lines 1–120 · sha256=… · ratio=0.08

    #### Goal
    …

``compressor=`` (``llm:MODEL``) and ``recall=`` (under 1.00) are printed only when they are not the
defaults: the extractive compressor, and every anchor in the entry.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scribed.compress import content

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scribed.models import Anchor, Summary

# Reading a cold file (``split_entries`` and friends) is on the spawn path (``scribed context
# --include-cold``): it must not import the models (pydantic, ~60 ms) or the anchor extractor, so
# rendering and the guard import them where they are used. tests/test_spawn.py checks it.

ENTRY_HEADING = re.compile(r"^### (?P<date>\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+Z?)?)\s*:?\s*(?P<title>.*)$")
ID_RE = re.compile(r"\bid=(?P<id>[a-z]-[0-9a-f]{6,40})")
FOLDED_RE = re.compile(r"\bfolded=(?P<ids>[a-z0-9,-]+)")
LIST_CAP = 12
TITLE_CHARS = 100  # an entry's heading holds its goal up to this many characters
# Items are printed whole; this only bounds a runaway item (an LLM answer), cut between words.
MAX_ITEM_CHARS = 1200
DEFAULT_COMPRESSOR = "extractive"  # not printed in provenance; an absent compressor= reads as it


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


def _parts_of(summary: Summary, meta: EntryMeta) -> tuple[str, list[tuple[str, int]], int]:
    """The heading, the section blocks, and the entry's UTF-8 size less the provenance line."""
    title = one_line(summary.goal or "session", TITLE_CHARS) or "session"
    head = f"### {iso(meta.end)}: {title}"
    # A goal the title holds whole is not printed again under Goal (readers take the title then:
    # hot_seed.last_session): the bytes go to facts (issue 30, "no echoes").
    whole = summary.goal and not title.endswith("…") and title == " ".join(summary.goal.split())
    blocks = _blocks(summary, "goal" if whole else "")
    fixed = len(head.encode()) + sum(n for _, n in blocks) + max(0, len(blocks) - 1) + 4  # 4 newlines
    return head, blocks, fixed


def _settled(fixed: int, meta: EntryMeta) -> tuple[str, int]:
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
    head, blocks, fixed = _parts_of(summary, meta)
    prov = _settled(fixed, meta)[0]
    body = "\n".join(b for b, _ in blocks)
    return f"{head}\n{prov}\n\n{body}\n"


def size_of(summary: Summary, meta: EntryMeta) -> int:
    """``len(render(summary, meta).encode())`` without building the text."""
    return _settled(_parts_of(summary, meta)[2], meta)[1]


def _item_bytes(line: str, listed: int, blocks: int, title: str) -> int:
    """What appending ``line`` to a section holding ``listed`` printed items adds to the entry's
    size, when ``blocks`` sections are printed (an empty or blank item is not printed)."""
    alone = _block(title, (line,))  # the section holding just this item
    if alone is None:
        return 0
    if listed:
        return alone[1] - len(f"#### {title}".encode())  # the item's line and the newline before it
    return alone[1] + (1 if blocks else 0)


# Sections trimmed first when an entry is over budget (least valuable first).
# Errors go after the outcome: each pairs a fact with its fix, and a dropped one comes back from
# the guard as a bare anchor without its fix (issue 30: a two-error session lost its second).
_TRIM_ORDER = [
    "key_points",
    "knowledge",
    "key_facts",
    "commands",
    "files",
    "outcome",
    "errors",
    "progress",
    "open_items",
    "decisions",
]
# Items a list keeps however small the budget: every open item (the work the session left, which
# the next spawn's hot seed lists; LIST_CAP * 2 bounds them), the first few items of the agent's own
# progress, and the final decision. An error nothing fixed is kept as an open item is (:func:`_open`).
_KEEP = {"decisions": 1, "open_items": LIST_CAP * 2, "progress": 3}


def _open(key: str, item: str) -> bool:
    """Whether ``item`` is an error nothing fixed (``err → unresolved``, not one gone when its command
    ran again): the next spawn's hot seed lists it as a blocker, so fitting never drops it (a small
    session's fit dropped its errors from the last, the unfixed one first, and the guard restored
    the fixed ones in its room: an exploratory tester's Aider session lost its failing test)."""
    if key != "errors":
        return False
    return no_fix(item.partition(" → ")[2])


# Where a sentence ends: the one rule of content.py (a capital, a quote or code after it, not an
# abbreviation); a dot followed by a lowercase word is no end ("go build ./... passes": the outcome
# of a tiny session lost its "passes." when fitting took "./..." for a sentence's end).
_SENTENCE = content.SENTENCE_END


_NAMED = re.compile(r"`[^`]+`|\S*[/_#]\S*|\S*\d\S*|\b[a-z]+[A-Z]\w*")  # paths, names, numbers, code


_LIST_NUMBER = re.compile(r"\s(\d{1,3}[.)])$")
LIST_NUMBER_CHARS = 3  # "12." or "3)": a longer number ("200.") is a quantity
_ITEM_NUMBER = re.compile(r"^\d{1,3}[.)]\s")  # a list's number names nothing


def _sentences_of(text: str) -> list[str]:
    """``text``'s sentences; a list's number that ends one ("… rules. 8.") starts the next one. A
    number after a preposition, a verb such as "is", a capitalised name ("HTTP 500.", "Node 20."), or of
    three digits is what the sentence says: it stays (a goal's title read "200. Can you add it?")."""
    parts = _SENTENCE.split(text.strip())
    for i in range(len(parts) - 1):
        if (m := _LIST_NUMBER.search(" " + parts[i])) is not None:
            from scribed.compress.clause import FUNCTION_WORDS  # here: a spawn reads entries without it

            before = parts[i][: max(0, m.start() - 1)]
            word = before.rsplit(None, 1)[-1] if before.strip() else ""
            said = word.lower() in FUNCTION_WORDS or not word.islower() or len(m.group(1)) > LIST_NUMBER_CHARS
            if word[-1:].isalnum() and said:
                continue  # "burst of 200.", "returns HTTP 500.", "Node 20.", "… 404.": what it says
            parts[i], parts[i + 1] = before, f"{m.group(1)} {parts[i + 1]}"
    return [x for x in parts if x]


def fewer_sentences(text: str) -> str:
    """``text`` less one sentence ("" when it has only one): the one that names the fewest things
    (paths, identifiers, numbers) goes, the earlier of equals, so plain sentences go before the
    conclusion and a sentence that names what was done stays. No sentence is ever cut."""
    parts = _sentences_of(text)
    if len(parts) < 2:  # noqa: PLR2004 - something to keep and something to drop
        return ""
    drop = min(range(len(parts)), key=lambda k: (len(_NAMED.findall(_ITEM_NUMBER.sub("", parts[k]))), k))
    kept = " ".join(parts[:drop] + parts[drop + 1 :])
    return kept.removeprefix(content.THEN)  # "… Then: X" whose first part went: "X"


# Lists a compressor may make long (the budget bounds them); the others are capped.
_UNCAPPED = {"key_points", "files", "commands"}


def _copy(summary: Summary) -> Summary:
    """``model_copy(deep=True)`` for a summary of strings and lists of strings: only the lists,
    which fitting shortens, are copied (deepcopy walked every item, three times a session)."""
    s = summary.model_copy()
    fields = s.__dict__
    for key, value in fields.items():
        if isinstance(value, list):
            if not all(type(v) is str for v in value):
                return summary.model_copy(deep=True)
            fields[key] = list(value)
    return s


def fit(
    summary: Summary,
    meta: EntryMeta,
    budget: int,
    protect: frozenset[str] = frozenset(),
    *,
    strict: bool = False,
    cap: int = 0,
) -> Summary:
    """Shrink a summary until its entry fits ``budget`` bytes by dropping whole list items.

    Items are never cut (a command or a supersedes line cut short changes meaning), and open items
    are never dropped; the outcome loses whole sentences (those naming least first) once the lists
    are down to their minimum. Items in ``protect`` go last: dropping one saves little (the guard
    would restore its anchors); they stay while the entry is within ``cap`` bytes, and with
    ``strict`` they never go.
    """
    from scribed.models import SECTIONS

    s = _copy(summary)
    s.goal = one_line(s.goal, 300)
    for key, _ in SECTIONS:
        value = getattr(s, key)
        if isinstance(value, list) and key not in _UNCAPPED:
            setattr(s, key, value[: LIST_CAP * 2])
    size = size_of(s, meta)
    while size > budget:
        got = _trim_once(s, size, protect)
        if got is None and protect and not strict and size > cap:
            protect = frozenset()
            got = _trim_once(s, size, protect)
        if got is None:
            break
        size = got if got >= 0 else size_of(s, meta)
        if size <= budget:
            size = size_of(s, meta)  # the estimate ignores the ratio's digits: check for real
    return s


def _trim_once(s: Summary, size: int, protect: frozenset[str]) -> int | None:
    """Drop the least valuable item (or the outcome's first sentence) in place: the size
    estimate after it (-1: count it again), or None when nothing outside ``protect`` can go."""
    for key in _TRIM_ORDER:
        value = getattr(s, key)
        if isinstance(value, list) and len(value) > _KEEP.get(key, 0):
            at = next(
                (
                    i
                    for i in range(len(value) - 1, -1, -1)
                    if value[i] not in protect and not _open(key, value[i])
                ),
                -1,
            )
            if at < 0:
                continue
            dropped = value.pop(at)
            return size - len(dropped.encode()) - 3 if value else -1
        shorter = fewer_sentences(value) if isinstance(value, str) and key == "outcome" else ""
        if shorter:  # the outcome loses a whole sentence (the one naming least), never a part of one
            setattr(s, key, shorter)
            return -1
    return None


def fit_with_room(
    summary: Summary, anchors: list[Anchor], meta: EntryMeta, budget: int, cap: int = 0
) -> Summary:
    """Fit to ``budget`` while leaving room for the anchors the compressor dropped.

    Restored anchors are worth more than prose, so the prose shrinks to make space for them. An
    error with its fix is mostly anchors (the guard would put them back, without the pairing, at
    about its size): errors go last, and stay while the entry is within ``cap`` (the guard's).
    """
    from scribed.compress import anchors as anchors_mod

    protect = _carriers(summary, anchors)
    fitted = fit(summary, meta, budget, protect, cap=cap)
    text = render(fitted, meta)
    missing = [a for a in anchors if not anchors_mod.present(a, text)]
    if not missing:
        return fitted
    reserve = sum(len(anchors_mod.format_anchor(a).encode()) + 3 for a in missing) + 16
    reserve = min(reserve, int(budget * 0.45))
    # ``fitted`` goes on from where the first fit stopped: fitting walks one fixed sequence of
    # shrinking summaries and stops at the first whose size is within the budget, so fitting
    # ``summary`` to the smaller budget would walk the same steps again (tests/test_entry_fit.py).
    return fit(fitted, meta, budget - reserve, protect, strict=True)  # room for anchors, never by others


# Sections whose items are kept while anything else can go, when their anchors' restored lines
# would take at least CARRIER_SHARE of their bytes: errors (their fix is lost when the guard
# restores them). Files and commands were measured too (bench/quality.py, 96 sessions): weighted
# recall 0.984 against 0.987 without, as the kept items leave the guard less room.
_CARRIER_KEYS = ("errors",)
CARRIER_SHARE = 0.6


def _carriers(summary: Summary, anchors: list[Anchor]) -> frozenset[str]:
    from scribed.compress import anchors as anchors_mod

    out: set[str] = set()
    for key in _CARRIER_KEYS:
        for item in getattr(summary, key):
            held = sum(
                len(anchors_mod.format_anchor(a).encode()) + 3
                for a in anchors
                if anchors_mod.present(a, item)
            )
            if held >= CARRIER_SHARE * (len(item.encode()) + 3):
                out.add(item)
    return frozenset(out)


def guard(
    summary: Summary, anchors: list[Anchor], meta: EntryMeta, hard_cap: int, errors: Sequence[str] = ()
) -> tuple[Summary, float]:
    """Add anchors the compressor dropped under Key facts, within ``hard_cap`` bytes. ``errors``:
    the compressor's ``error → fix`` lines before the entry was fitted; an error restored from a
    line the fit dropped that named a fix is listed as ``fixed:``, not ``error:`` (which the next
    spawn's hot seed lists as a blocker).

    Returns the amended summary and the anchor recall of the final entry.
    """
    from scribed.compress import anchors as anchors_mod
    from scribed.models import SECTIONS

    s = _copy(summary)
    text = render(s, meta)
    missing = [a for a in anchors if not anchors_mod.present(a, text)]
    missing.sort(key=lambda a: anchors_mod.PRIORITY.index(a.type))
    # The size is kept as facts are added (exactly what size_of would count), not counted anew.
    _, blocks, fixed = _parts_of(s, meta)
    listed = sum(1 for v in s.key_facts if v and v.strip())
    title = dict(SECTIONS)["key_facts"]
    lost = {id(a) for a in missing}
    held = [a for a in anchors if id(a) not in lost]  # what a cut of the prose must not take
    may_cut = True  # one failed cut is the last: the prose has nothing more to give
    for a in missing:
        if s.key_facts and anchors_mod.present(a, "\n".join(s.key_facts)):
            continue  # an earlier restored line already carries it
        line = anchors_mod.format_anchor(a)
        if a.type == "error" and _fixed_in(a.text, errors):
            line = FIXED_LABEL + line.removeprefix("error:")  # as long: the budget buys no less
        added = _item_bytes(line, listed, len(blocks), title)
        s.key_facts.append(line)
        over = _settled(fixed + added, meta)[1] - hard_cap
        if over > 0:
            if may_cut and _room_from_prose(s, over, meta, hard_cap, held):
                _, blocks, fixed = _parts_of(s, meta)
                listed += 1
                continue
            may_cut = False
            s.key_facts.pop()
        elif added:
            fixed += added
            listed += 1  # from here on the count of printed sections no longer matters
    final = render(s, replace(meta, recall=0.0))
    return s, anchors_mod.recall(anchors, final)


def _room_from_prose(s: Summary, over: int, meta: EntryMeta, hard_cap: int, kept: list[Anchor]) -> bool:
    """Cut the goal and outcome so the entry (its last key fact included) fits ``hard_cap``; undone,
    and False, when it cannot or when the cut text held an anchor the entry had (found by review:
    a fact must not be traded for another)."""
    from scribed.compress import anchors as anchors_mod

    prose = (s.goal, s.outcome)
    if _shorter_prose(s, over) and size_of(s, meta) <= hard_cap:
        text = render(s, meta)
        if all(anchors_mod.present(a, text) for a in kept):
            return True
    s.goal, s.outcome = prose
    return False


def _shorter_prose(s: Summary, over: int) -> bool:
    """Shorten the outcome (its sentences that name least go), then the goal (its later sentences go), by
    whole sentences until about ``over`` bytes are freed: a sentence is never cut, and the last
    one of each stays. False when neither could give anything."""
    gave = False
    for key, drop in (("outcome", fewer_sentences), ("goal", _without_last_sentence)):
        value: str = getattr(s, key)
        while over > 0:
            cut = drop(value)
            if not cut:
                break
            over -= len(value.encode()) - len(cut.encode())
            value = cut
            gave = True
        setattr(s, key, value)
    return gave


PIVOT = " · then: "  # between a goal and the one a pivot added (sections.goal)


def _without_last_sentence(text: str) -> str:
    """``text`` without its last sentence that asks nothing (:func:`request.sentence_rank`) when one
    asks, else its last ("" when it has only one): a request keeps what it asks ("Replace it with a
    token bucket …") over its context, and its first sentence when none asks; a pivot's goal goes
    whole first (no sentence end comes before its "·")."""
    if PIVOT in text:
        return text.rsplit(PIVOT, 1)[0]
    parts = _sentences_of(text)
    if len(parts) < 2:  # noqa: PLR2004 - something to keep and something to drop
        return ""
    from scribed.compress.request import ASK, sentence_rank  # here: a spawn reads entries without it

    # an ask naming nothing ("Can you add it?") keeps nothing: its context says what "it" is
    asked = [sentence_rank(x) == ASK and content.carried(x) >= content.MIN_CARRIED for x in parts]
    drop = next((k for k in range(len(parts) - 1, -1, -1) if not asked[k] and any(asked)), len(parts) - 1)
    return " ".join(parts[:drop] + parts[drop + 1 :])


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


FIXED_LABEL = "fixed:"  # a restored error whose line (dropped to fit) named its fix: not "error:"
_NO_FIX = ("unresolved", "(unresolved")


def no_fix(fix: str) -> bool:
    """Whether an error's ``→`` part leaves it open, as the hot seed reads it: unresolved, unless it
    went away when the command that showed it ran again (``unresolved (gone when `make` ran again)``)."""
    low = fix.strip().lower()
    return low.startswith(_NO_FIX) and "(gone when" not in low


def _fixed_in(error: str, lines: Sequence[str]) -> bool:
    """Whether one of the ``error → fix`` ``lines`` holds ``error`` with a fix, or gone when its check
    ran again (a test green on re-run restored as ``error:`` was the next spawn's blocker)."""
    for line in lines:
        err, arrow, fix = line.partition(" → ")
        if arrow and _same_error(err.strip().strip("`"), error) and not no_fix(fix):
            return True
    return False


def _same_error(err: str, anchor: str) -> bool:
    """Whether a pair line's error is the anchor's: the same, its start (an anchor is cut to
    length) or its end after a mark (``*** [upload] Error 2``), not a longer name (``KeyError: x``
    is not ``Error: x``)."""
    if err == anchor or err.startswith(anchor):
        return True
    return err.endswith(anchor) and not err[-len(anchor) - 1].isalnum()


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
