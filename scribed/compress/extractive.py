"""The offline extractive compressor: no model, no network, deterministic.

It is the embedded default and the fallback when an LLM endpoint fails. It writes the fixed
sections (goal, outcome, decisions with their reversals, errors paired with their own fixes, files,
commands with counts, open items, reusable knowledge) and then spends the rest of the entry's
budget on key points: whole units ranked by the information they add (see ``units.py``), so an
entry uses its ~10% for facts instead of leaving it unused, and tool dumps and chatter rank last.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

from scribed.compress import anchors as anchors_mod
from scribed.compress import error_fixes, sections, selection, units, window
from scribed.compress import plan as plan_mod
from scribed.compress import tokens as tokens_mod
from scribed.compress.base import CompressResult
from scribed.compress.content import MIN_CARRIED, SENTENCE_END, carried, content_free
from scribed.compress.entry import TITLE_CHARS
from scribed.compress.entry_fit import fewer_sentences
from scribed.compress.request import ASK, REPORT, sentence_rank
from scribed.models import Anchor, Session, Summary, Turn

_FIX = re.compile(
    r"\b(?:fix(?:ed|es)?|resolv(?:ed|es)|root cause|the cause|caused by|solution|workaround|patched)\b", re.I
)
_OUTCOME = re.compile(
    r"\b(?:done|finished|completed|all tests pass|tests? pass(?:es|ed)?|merged|shipped|opened (?:a )?pr|"
    r"landed|works now|is fixed|green|released|deployed|outcome)\b",
    re.I,
)
_KNOWLEDGE = re.compile(
    r"\b(?:learned|lesson|turns out|gotcha|note that|remember|root cause|because|the trick|caveat|"
    r"convention|pattern|always|never|prefer|avoid|requires?|must)\b",
    re.I,
)
_CHATTER = re.compile(
    r"^(?:ok(?:ay)?|sure|thanks?|thank you|great|sounds good|let me|i'll|i will|now i|alright|got it|perfect)\b",
    re.I,
)
# A plan is no lesson: what the agent means to do ("I'm planning to hand-write the JSON", "I'll add a
# lock") may yet be overruled, as a tester's was, and was then promoted as a wiki pattern.
_PLAN = re.compile(
    r"\b(?:i(?:'|\u2019)?m\s+(?:planning|going|about)\s+to|i\s+am\s+(?:planning|going|about)\s+to|"
    r"i\s+(?:plan|intend|want|would\s+like)\s+to|i(?:'|\u2019)ll|i\s+will|my\s+plan\s+is|let\s+me)\b",
    re.I,
)
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`#(])")


_CODEISH = re.compile(
    r"^(?:diff --git|index [0-9a-f]|@@|\+\+\+|---|[+-]\s|\d+\s{2}|def |class |import |from \S+ import|"
    r"[{}\[\]]|</?\w+>|\$ )"
)
_MARKERS = re.compile(r"\b(?:decision|decided|todo|fixme|open item)\b\s*(?:\([^)]*\))?\s*:", re.I)


def _prose(line: str) -> bool:
    """Whether a line reads as prose rather than code, a diff or a log dump."""
    if _CODEISH.match(line):
        return False
    return _letters(line) >= PROSE_LETTERS * len(line)


PROSE_LETTERS = 0.6  # share of letters and spaces that makes a line prose
MIN_SENTENCE_CHARS = 4
MAX_SENTENCE_CHARS = 300  # longer is a paragraph or a dump, not one statement
# A lesson's word (1) and something it is about: a path or code (0.5), a figure (0.5), a fix (2).
MIN_KNOWLEDGE_SCORE = 1.5
# ASCII bytes that are neither a letter nor a space: deleted, the length left is the count.
_NOT_LETTER = bytes(b for b in range(128) if not (chr(b).isalpha() or b == ord(" ")))
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _letters(line: str) -> int:
    """How many characters of ``line`` are letters (``str.isalpha``) or spaces, counted in C."""
    ascii_part = line.encode("ascii", "ignore")
    n = len(ascii_part.translate(None, _NOT_LETTER))
    if len(ascii_part) != len(line):
        n += sum(c.isalpha() for c in _NON_ASCII.findall(line))
    return n


_ASSIGN = re.compile(r"^[\w.\[\]'\"]+\s*[:+*/-]?=\s*\S")


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    fence = diff = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fence = not fence
            continue
        if line.startswith("diff --git"):
            diff = True
        elif diff and not line:
            diff = False
        if fence or diff or raw.startswith(("    ", "\t")) or _ASSIGN.match(line):
            continue
        if len(line) < MIN_SENTENCE_CHARS or line.startswith("|") or not _prose(line):
            continue
        line = line.lstrip("#>*- ").strip()
        out.extend(s.strip() for s in _SENT_SPLIT.split(line) if len(s.strip()) >= MIN_SENTENCE_CHARS)
    return out


_FIGURE = re.compile(r"#\d+|\d+(?:\.\d+)?\s?(?:ms|s|%|MB|KB|x)\b")


# The word patterns without re.IGNORECASE, for ASCII text lowercased first: the same matches (the
# patterns are lowercase ASCII), twice as fast (a case-insensitive scan folds every character).
_FOLDED = (_OUTCOME, _FIX, _KNOWLEDGE, _CHATTER)
_CASED = tuple(re.compile(p.pattern, p.flags & ~re.IGNORECASE) for p in _FOLDED)


def score(sentence: str) -> float:
    """Signal score of one sentence (higher = keep)."""
    ascii_ = sentence.isascii()
    text = sentence.lower() if ascii_ else sentence
    outcome, fix, knowledge, chatter = _CASED if ascii_ else _FOLDED
    s = 0.0
    if outcome.search(text):
        s += 2
    if fix.search(text):
        s += 2
    if knowledge.search(text):
        s += 1
    if "`" in sentence or "/" in sentence:
        s += 0.5
    if _FIGURE.search(sentence):
        s += 0.5
    if chatter.match(text):
        s -= 2
    if len(sentence) > MAX_SENTENCE_CHARS:
        s -= 1
    return s


def _lesson(sentence: str) -> bool:
    """Whether a sentence holds a lesson's words (:data:`_KNOWLEDGE`)."""
    if sentence.isascii():
        return _CASED[2].search(sentence.lower()) is not None
    return _KNOWLEDGE.search(sentence) is not None


# Bytes an entry spends outside its sections: heading, provenance line, blank lines.
ENTRY_OVERHEAD = 415  # a provenance line of ~280 bytes and a heading with a 100-character title


def _overhead(goal: str) -> int:
    """ENTRY_OVERHEAD with the heading's title as long as the goal makes it (a short goal left a
    small entry's last ~70 bytes unspent)."""
    return ENTRY_OVERHEAD - TITLE_CHARS + min(TITLE_CHARS, len(" ".join(goal.split()).encode()))


def _knowledge(turns: list[Turn], used: set[str], errors: str = "") -> list[str]:
    """Up to four reusable lessons (promotion reads these): strong, short assistant sentences that
    say why or what holds in general (a lesson's words: "because", "always", "must", "turns out").
    A report of work done ("Fixed the flaky test.") scores as strongly but is no lesson, and one
    already paired with its error under Errors → fixes is not said twice."""
    found: list[tuple[float, int, str]] = []
    for t in turns:
        if t.kind != "message" or t.role != "assistant":
            continue
        for sent in _sentences(t.text):
            if not _lesson(sent):  # one regex, where most sentences stop (score runs five)
                continue
            sc = score(sent)
            if (
                sc >= MIN_KNOWLEDGE_SCORE
                and sent not in used
                and sent not in errors
                and len(sent) <= MAX_SENTENCE_CHARS
                and not _MARKERS.search(sent)
                and not _PLAN.search(sent)
                and not content_free(sent)  # "Not done in this session." is no lesson
            ):
                found.append((sc, t.line, sent))
    found.sort(key=lambda k: (-k[0], k[1]))
    return [k[2] for k in sorted(found[:4], key=lambda k: k[1])]


def _bytes(items: list[str]) -> int:
    return sum(len(i.encode()) + 3 for i in items) + (16 if items else 0)


class ExtractiveCompressor:
    """Fixed sections, then information-ranked key points until the budget is spent."""

    name = "extractive"

    def compress(self, session: Session, anchors: list[Anchor], budget: int) -> CompressResult:
        turns = session.turns
        by_type: dict[str, list[Anchor]] = {}
        for a in anchors:
            by_type.setdefault(a.type, []).append(a)

        summary = Summary(goal=sections.goal(turns), outcome=sections.outcome(turns))
        summary.decisions = [
            a.text + (f" (supersedes: {a.superseded})" if a.superseded else "")
            for a in by_type.get("decision", [])
        ]
        summary.errors = error_fixes.pair(turns)
        summary.files = sections.files(by_type.get("path", []))
        summary.commands = sections.commands(by_type.get("command", []), turns)
        summary.open_items = [a.text for a in by_type.get("todo", [])]
        plan = plan_mod.final(turns)
        summary.progress = plan.done() if plan is not None else []
        used = {summary.goal, *_sentences(summary.outcome)}
        summary.knowledge = _knowledge(turns, used, "\n".join(summary.errors))
        self._fill(summary, turns, anchors, budget)
        return CompressResult(summary=summary, compressor=self.name)

    def _fill(self, summary: Summary, turns: list[Turn], anchors: list[Anchor], budget: int) -> None:
        """Spend what the fixed sections left of ``budget`` on key points, then name what is missing."""
        fixed = _fixed(summary)
        text = "\n".join(fixed)
        missing = [a for a in anchors if not anchors_mod.present(a, text)]
        reserve = _bytes([anchors_mod.format_anchor(a) for a in missing])
        if _tighten(summary, budget - ENTRY_OVERHEAD - _headers(summary) - KEY_POINTS_HEADER - reserve):
            fixed = _fixed(summary)
            text = "\n".join(fixed)
        spent = (
            _overhead(summary.goal) + _goal_bytes(summary.goal) + sum(len(x.encode()) + 3 for x in fixed[1:])
        )
        spent += _headers(summary) + KEY_POINTS_HEADER
        stale = [a.superseded for a in anchors if a.type == "decision" and a.superseded]
        # A key point repeating a decision is an echo of it, whatever the decision superseded.
        echoes = [x.split(" (supersedes: ", 1)[0] for x in fixed]
        summary.key_points = _key_points(turns, budget - spent - reserve, text, echoes, stale)
        text += "\n" + "\n".join(summary.key_points)
        facts: list[str] = []
        issues = [a.text for a in anchors if a.type == "issue" and not anchors_mod.present(a, text)]
        if issues:
            facts.append("issues: " + ", ".join(issues))
        facts += [
            f"user: {a.text}" for a in anchors if a.type == "directive" and not anchors_mod.present(a, text)
        ]
        summary.key_facts = facts

    def top_up(self, summary: Summary, session: Session, budget: int, compressor: str = "") -> bool:
        """Fill an LLM summary that came back far under budget with extractive key points.

        The model's own sections stay as they are; only the room they left is spent. Returns
        whether anything was added. ``compressor`` (``llm:MODEL``) is named in the entry's
        provenance, with its recall (ENTRY_OVERHEAD counts neither: the extractive defaults).
        """
        fixed = [*_fixed(summary), *summary.key_points, *summary.key_facts]
        named = len(f" · compressor={compressor} · recall=0.00".encode()) if compressor else 0
        spent = ENTRY_OVERHEAD + named + sum(len(x.encode()) + 3 for x in fixed) + 20 * 10
        extra = _key_points(session.turns, budget - spent, "\n".join(fixed), fixed)
        summary.key_points = [*summary.key_points, *extra]
        return bool(extra)


KEY_POINTS_HEADER = len("#### Key points\n")
# When the goal and outcome would leave the key points less than KEY_POINTS_SHARE of an entry's
# content room (a small session: a 600-byte entry has ~140 bytes after its heading and provenance),
# they keep the whole sentences that carry the most (content.carried) within these shares.
KEY_POINTS_SHARE = 0.4
OUTCOME_SHARE = 0.25
_THEN = " · then: "


def _tighten(summary: Summary, room: int) -> bool:
    """Shorten a goal and outcome that crowd out the key points, by whole sentences: the goal keeps
    its most informative ones within the entry's title (which then holds it whole, so it is printed
    once), the outcome its last ones (its conclusion); at least one sentence each. Whether
    anything changed."""
    room -= sum(len(x.encode()) + 3 for x in _fixed(summary)[2:])
    prose = _goal_bytes(summary.goal) + len(summary.outcome.encode()) + 3
    if room <= 0 or prose <= room * (1 - KEY_POINTS_SHARE):
        return False
    goal = _informative(summary.goal, TITLE_CHARS)
    outcome = summary.outcome
    while len(outcome.encode()) > room * OUTCOME_SHARE:
        shorter = fewer_sentences(outcome)
        if not shorter:
            break
        outcome = shorter
    changed = (goal, outcome) != (summary.goal, summary.outcome)
    summary.goal, summary.outcome = goal, outcome
    return changed


def _goal_bytes(goal: str) -> int:
    """What a goal adds to an entry besides its title: nothing when the title holds it whole."""
    flat = " ".join(goal.split())
    return 0 if len(flat) <= TITLE_CHARS else len(goal.encode()) + 3 + len("#### Goal\n")


def _informative(goal: str, limit: int) -> str:
    """The goal's whole sentences within ``limit`` bytes (the first one even when it is longer), in
    their order: those of the session's request that ask (:func:`request.sentence_rank`: "Replace it
    with a token bucket …" before the problem it follows), then the others, each by how much they
    carry; a sentence that reports what happened only when nothing else is kept; a later goal ("·
    then: …") keeps its own place."""
    parts = [SENTENCE_END.split(p.strip()) for p in goal.split(_THEN)]
    sents = [
        (sentence_rank(x), carried(x), -len(x), i, j)
        for i, part in enumerate(parts)
        for j, x in enumerate(part)
        if x.strip()
    ]
    if len(sents) <= 1:
        return goal
    keep: set[tuple[int, int]] = set()
    size = 0
    for rank, score, neg, i, j in sorted(sents, key=_title_order):
        if keep and (size - neg + 1 > limit or score < MIN_CARRIED or rank == REPORT):
            continue
        keep.add((i, j))
        size += -neg + 1
    out = [" ".join(x for j, x in enumerate(part) if (i, j) in keep) for i, part in enumerate(parts)]
    return _THEN.join(p for p in out if p)


def _title_order(sent: tuple[int, float, int, int, int]) -> tuple[bool, float, int, int]:
    """The order :func:`_informative` keeps a goal's sentences in: what the session's request asks
    (when it names something: not "Guess where I am writing from."), then the rest; each, those
    that carry the most first."""
    rank, score, _, i, j = sent
    return (rank != ASK or i > 0 or score < MIN_CARRIED, -score, i, j)


def _headers(summary: Summary) -> int:
    """The bytes of the section headings the fixed sections will print (was a flat 160, which left
    a small session's key points no room at all: issue 30)."""
    from scribed.models import SECTIONS

    skip = {"key_points", "goal"}  # the goal's own bytes and heading: _goal_bytes
    return sum(len(f"#### {title}\n") for key, title in SECTIONS if key not in skip and getattr(summary, key))


def _fixed(summary: Summary) -> list[str]:
    return [
        summary.goal,
        summary.outcome,
        *summary.progress,
        *summary.decisions,
        *summary.errors,
        *summary.files,
        *summary.commands,
        *summary.open_items,
        *summary.knowledge,
    ]


def _key_points(
    turns: list[Turn], room: int, covered_text: str, exclude: list[str], stale: Sequence[str] = ()
) -> list[str]:
    """The best units for ``room`` bytes; a unit stating a decision reversed later is never one
    (the entry shows the final form under Decisions, not the old one as a current fact)."""
    if room <= 0:
        return []
    covered = tokens_mod.tokens(covered_text)

    def prune(found: list[units.Unit]) -> list[units.Unit]:
        return _without_stale(found, stale) if stale else found

    pool = window.pool(turns, room, covered, exclude, prune)
    chosen = selection.select(pool, room, covered, exclude=exclude)
    return [u.text for u in chosen]


def _without_stale(pool: list[units.Unit], stale: Sequence[str]) -> list[units.Unit]:
    """The units whose lowercased text holds none of the ``stale`` texts (whitespace normalised).

    Searched in the units' lowercased texts joined by newlines (a stale text holds none, so a
    match lies inside one unit), not unit by unit: a pool has thousands of units and the stale
    texts are in a few of them. Joined :data:`STALE_CHUNK` units at a time: the whole pool joined
    was a copy of all its text, twice (29 MB on a 64 MB session, issue 32)."""
    low = [" ".join(x.lower().split()) for x in stale]
    if "" in low:
        return []  # the empty text is in every unit
    drop: set[int] = set()
    for first in range(0, len(pool), STALE_CHUNK):
        texts = [u.text.lower() for u in pool[first : first + STALE_CHUNK]]
        starts = list(accumulate((len(t) + 1 for t in texts), initial=0))
        joined = "\n".join(texts)
        for x in low:
            i = joined.find(x)
            while i != -1:
                drop.add(first + bisect_right(starts, i) - 1)
                i = joined.find(x, i + 1)
    return [u for k, u in enumerate(pool) if k not in drop] if drop else pool


STALE_CHUNK = 4096  # units joined for one search: ~0.5 MB of text
