"""Units of a session and the information-ranked selection that spends an entry's budget.

A unit is a whole sentence, list item, table row, command or code line: it is kept whole or not
at all, so nothing is ever cut mid-token. Units are ranked by the information they add (paths,
identifiers, numbers, dates, names and terms rare in the session; a term already covered adds
nothing, which also drops near-duplicates), weighted by who said it (the user's requests and the
assistant's results above tool output), picked greedily per byte until the budget is spent, and
printed back in their original order.
"""

from __future__ import annotations

import heapq
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate, chain, filterfalse

from scribed.compress import content
from scribed.compress.errors import error_in_line, may_hold_error, may_hold_error_at
from scribed.compress.stopwords import STOP as _STOP
from scribed.models import Turn

_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_ITEM = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,3}[.)]\s+)(?P<t>\S.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<t>.*)$")
_MERGE_MARK = re.compile(r"^(?:<{7}|={7}|>{7})(?:\s|$)")
_SENT_END = content.SENTENCE_END
_TOKEN = re.compile(
    r"#\d+|--?[A-Za-z][\w-]*|[A-Za-z_$~.][\w$]*(?:(?:[./:\\@-]|::)[\w$]+)*(?:\(\))?|\d[\d.,:/-]*[A-Za-z%]*"
)
_CHATTER = re.compile(
    r"^(?:ok(?:ay)?|sure|thanks?|thank you|great|perfect|excellent|awesome|alright|got it|sounds good|"
    r"let me|let's|i'll|i will|i'm going to|now i|now let me|first,? i|next,? i|i can see|i see|"
    r"looking at|here(?:'s| is) (?:the|what)|you're right|good (?:idea|question|catch))\b",
    re.I,
)
_RESULT = re.compile(
    r"\b(?:passed|failed|succeeded|success(?:ful(?:ly)?)?|built|compiled|wrote|written|created|deployed|"
    r"installed|finished|completed?|BUILD|exit(?:ed)?|total|merged|pushed|committed|applied)\b",
    re.I,
)
_LOG = re.compile(r"\b(?:DEBUG|TRACE|INFO)\b")
# A tool's note that it cut its output ("[8033 lines truncated] ...", "... 12 more lines"): not content.
_ELIDED = re.compile(
    r"^\W{0,6}(?:\d[\d,]*\s+(?:more\s+)?(?:lines?|bytes|chars|characters|rows|items)\s+"
    r"(?:truncated|omitted|elided|hidden|not shown)|(?:(?:output|content|text)\s+)?(?:truncated|omitted|elided)\b.{0,40}$|"
    r"\.{3}\s*\(?\d[\d,]*\s+more\b)",
    re.I,
)
# Every match of _ELIDED holds one of these (lowercased): its prefilter on ASCII text.
_ELIDED_WORDS = ("truncated", "omitted", "elided", "hidden", "not shown", "more")
_READ_LINE_NO = re.compile(r"^\d{1,7}→")  # a file read with line numbers: "   296→code" (stripped)
_NOISE = re.compile(r"\b(?:DEBUG|TRACE)\b")
_CAMEL_OR_CAPS = re.compile(r"\b[A-Za-z]*[a-z][A-Z]\w*|\b[A-Z]{2,}[a-z]*\d*\b")
MIN_TOKEN_CHARS = 3
WORD_CHARS = 4  # a plain word this long carries some meaning
MIN_CODE_ALNUM = 6  # a code line with fewer letters and digits is punctuation
MIN_ROOM = 24  # bytes left under which no unit fits usefully
NEAR_DUPLICATE = 0.7  # Jaccard overlap of tokens that makes a unit a repeat of a chosen one
# Plain tool-output lines that are candidates: head and tail of each output (errors and the final
# result anywhere). Down from 150/50 (issue 15): on the real-data set identifier retention on
# sessions >= 16 KB stayed within 0.005x of head truncation, for 28% fewer units on the generated backlog.
TOOL_HEAD_LINES = 50
TOOL_TAIL_LINES = 20
MAX_UNIT_CHARS = 480
MIN_UNIT_CHARS = 12
# Code lines are dense in identifiers but are not what a reader of the memory needs most: they
# may take at most this share of the key points.
CODE_SHARE = 0.25


@dataclass(slots=True)
class Unit:
    """One keepable piece of a session."""

    text: str  # as it will be printed
    pos: int  # order in the session
    line: int  # source line of its turn
    kind: str  # prose | item | code | command | tool | error | result
    weight: float  # who said it and what it is
    tokens: frozenset[str]
    size: int  # bytes as a list item


def tokens(text: str) -> frozenset[str]:
    """Informative tokens, lowercased for coverage.

    ASCII text is lowercased once, before the scan: the token pattern treats both cases alike, so
    the tokens are the same (elsewhere ``lower()`` may change lengths). Each raw token is judged
    once per process (:data:`_ACCEPTED`), and a token repeated in the text once.
    """
    if text.isascii():
        found = dict.fromkeys(map(_ACCEPTED.__getitem__, _TOKEN.findall(text.lower())))
        return frozenset(filter(None, found))  # None: not a token (an accepted one is never empty)
    out = set()
    for t in dict.fromkeys([tok.strip(_EDGE) for tok in _TOKEN.findall(text)]):
        if len(t) < MIN_TOKEN_CHARS and not t[:1].isdigit() and not t.startswith("#"):
            continue
        low = t.lower()
        if low not in _STOP:
            out.add(low)
    return frozenset(out)


class _Accepted(dict[str, str | None]):
    """A raw ASCII token, lowercased, → the token it counts as (its ends stripped), or None when
    it is too short or a stop word: looked up in C, judged in Python only the first time. Bounded:
    emptied when full (a daemon meets new names for ever)."""

    def __missing__(self, raw: str) -> str | None:
        t = raw.strip(_EDGE)
        keep = (len(t) >= MIN_TOKEN_CHARS or t[:1].isdigit() or t[:1] == "#") and t not in _STOP
        got = t if keep else None
        if len(raw) <= ACCEPTED_CHARS:  # a long one (a pasted blob) is judged anew, not kept
            if len(self) >= ACCEPTED_MAX:
                self.clear()
            self[raw] = got
        return got


ACCEPTED_MAX = 1 << 15
ACCEPTED_CHARS = 64  # full of 64-char tokens the cache holds 8.3 MB (review: 64 MB of blobs before)
_ACCEPTED = _Accepted()


_EDGE = ".:-/\\"  # stripped from a token's ends


_IDENT_CHARS = frozenset("_./:\\@()$")
_ASCII_DIGITS = frozenset("0123456789")


def token_weight(tok: str) -> float:
    """How much a term is worth on its own: identifiers and figures above plain words.

    The character checks are set operations in C; an ASCII token has no digits but 0-9 (other
    text keeps the per-character ``isdigit``, which knows every script's digits)."""
    if tok.startswith(("#", "-")) or not _IDENT_CHARS.isdisjoint(tok):
        return 3.0
    if tok[:1].isdigit():
        return 1.5
    if not _ASCII_DIGITS.isdisjoint(tok) if tok.isascii() else any(c.isdigit() for c in tok):
        return 2.0
    return 0.6 if len(tok) >= WORD_CHARS else 0.2


def _camel_bonus(text: str) -> set[str]:
    """CamelCase and ALLCAPS names count as identifiers even without punctuation."""
    return {m.lower() for m in _CAMEL_OR_CAPS.findall(text)}


@dataclass(slots=True)
class Pool:
    """A session's units and the CamelCase/ALLCAPS names seen in them (identifiers without punctuation)."""

    units: list[Unit]
    camel: frozenset[str]
    names: frozenset[str] = frozenset()  # people, places, products named in what was said


class _Builder:
    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.camel: set[str] = set()
        self.names: set[str] = set()
        self.seen: dict[str, frozenset[str]] = {}  # a text's tokens: tool output repeats lines
        self.raw: set[str] = set()  # texts added before, as given
        self.listed: set[str] = set()  # shapes of tool-output listings a line already stands for

    def add(self, text: str, line: int, kind: str, weight: float, prefix: str = "") -> None:
        """Checks first what costs least: a raw line already too short stays so once normalised,
        and a tool line given before adds nothing (below: too short or long then, or seen).

        ``prefix`` (who said it: "user: ") is printed, but is not the unit's content: its tokens
        come from ``text`` alone, so two people saying the same thing are near-duplicates. A
        sentence or list item that names nothing (:func:`content.content_free`: "That looks
        fine.", "Reading the module…") is no unit at all."""
        if len(text) + len(prefix) < MIN_UNIT_CHARS or weight <= 0:
            return
        if kind == "tool" and text in self.raw:
            return
        self.raw.add(text)
        text = " ".join(text.split())
        n = len(text) + len(prefix)
        if n < MIN_UNIT_CHARS or n > MAX_UNIT_CHARS:
            return
        toks = self.seen.get(text)
        if toks is None:
            toks = self.seen[text] = tokens(text)
            if toks and not text.islower():  # an ASCII capital is needed for a CamelCase/ALLCAPS name
                self.camel |= _camel_bonus(text)
        elif kind == "tool":
            return  # a repeated tool-output line (a file read twice) adds nothing a reader lacks
        if not toks or (kind in _SAID and (not _carries(text, toks) or _label(text, toks))):
            return
        if kind in _SAID and not text.islower():
            self.names.update(n for n in content.names(text) if n in toks)
        if _CHATTER.match(text):
            weight *= 0.3
        text = prefix + text
        size = (n if text.isascii() else len(text.encode())) + 3
        self.units.append(Unit(text, len(self.units), line, kind, weight, toks, size))


_SAID = frozenset(("prose", "item"))  # units someone wrote as language (not code, commands or output)


NAMED_WEIGHT = 2.0  # token_weight of a figure, a code name or a path: what a label may still name


def _label(text: str, toks: frozenset[str]) -> bool:
    """Whether a sentence or list item only announces what follows it ("**Current State**:",
    "The main changes are:") and names nothing itself: alone, as a key point, it says nothing."""
    if not text.rstrip(" *_").endswith(":") or _camel_bonus(text):
        return False
    return all(token_weight(t) < NAMED_WEIGHT for t in toks)  # no path, code name or figure


def _carries(text: str, toks: frozenset[str]) -> bool:
    """Whether a sentence names something (:func:`content.content_free`, skipped when two of its
    tokens are already long content words: most sentences, decided without the full count)."""
    plain = 0
    for t in toks:
        if len(t) >= content.CONTENT_CHARS and t not in content.LIGHT:
            plain += 1
            if plain >= content.MIN_CARRIED:
                return True
    return not content.content_free(text)


def _prose(b: _Builder, para: list[str], line: int, weight: float, prefix: str) -> None:
    text = " ".join(s.strip() for s in para)
    for sent in _SENT_END.split(text):
        b.add(sent.strip(), line, "prose", weight, prefix)


def _message(b: _Builder, turn: Turn, weight: float, prefix: str) -> None:
    fence = ""
    para: list[str] = []
    for raw in turn.text.splitlines():
        m = _FENCE.match(raw)
        if fence:
            if m and m.group(1)[0] == fence[0] and not raw.strip(" \t`~"):
                fence = ""
                continue
            code = raw.strip()
            if code and not _MERGE_MARK.match(code) and sum(c.isalnum() for c in code) >= MIN_CODE_ALNUM:
                wrapped = f"`{code}`" if "`" not in code else code
                b.add(wrapped, turn.line, "code", weight * 0.3)
            continue
        if m:
            _prose(b, para, turn.line, weight, prefix)
            para = []
            fence = m.group(1)
            continue
        stripped = raw.strip()
        item = _ITEM.match(raw)
        if (
            not stripped
            or item
            or stripped.startswith("|")
            or _HEADING.match(raw)
            or _MERGE_MARK.match(stripped)
        ):
            _prose(b, para, turn.line, weight, prefix)
            para = []
            if item:
                b.add(item.group("t"), turn.line, "item", weight, prefix)
            elif stripped.startswith("|") and not _TABLE_SEP.match(stripped):
                cells = [c.strip() for c in stripped.strip("|").split("|")]
                b.add(" | ".join(c for c in cells if c), turn.line, "item", weight * 0.8, prefix)
            continue
        if stripped.startswith("$ "):
            _prose(b, para, turn.line, weight, prefix)
            para = []
            b.add(f"`{stripped[2:]}`", turn.line, "command", weight)
            continue
        para.append(stripped)
    _prose(b, para, turn.line, weight, prefix)


def _tool_result(b: _Builder, turn: Turn) -> None:
    """Tool output ranks low, but its error lines and its final result count.

    Its other lines stay candidates at a low weight (head and tail of a long output), so a session
    that is mostly tool output still spends its budget on the most informative of them. When the
    text holds nothing error-shaped, the lines between head and tail are not even looked at.
    """
    text = turn.text
    lines = list(filter(None, map(str.strip, text.splitlines())))  # in C: outputs run long
    # Each line's noise and elision checks only when the text holds what they need (a line is
    # a piece of the text): _NOISE is case-sensitive; _ELIDED ignores case, which in ASCII text
    # is what lowercasing does.
    noisy = "DEBUG" in text or "TRACE" in text
    elidable = not text.isascii() or any(map(text.lower().__contains__, _ELIDED_WORDS))
    if "→" in text:
        lines = [_READ_LINE_NO.sub("", ln, count=1).strip() or ln for ln in lines]
    last = len(lines) - 1
    maybe = may_hold_error(text)  # False: no line matches either (a line is a piece of the text)
    tail = max(TOOL_HEAD_LINES, last - TOOL_TAIL_LINES + 1)
    order: Iterable[int] = chain(range(min(TOOL_HEAD_LINES, len(lines))), range(tail, len(lines)))
    if maybe and tail > TOOL_HEAD_LINES:
        order = sorted({*order, *_error_candidates(lines, TOOL_HEAD_LINES, tail)})
    order = list(order)
    shapes = Counter(_shape(lines[i]) for i in order)
    for i in order:
        ln = lines[i]
        err = error_in_line(ln) if maybe else None
        if err:
            b.add(err, turn.line, "error", 1.0)
        elif i == last and _RESULT.search(ln) and not _LOG.search(ln):
            b.add(ln, turn.line, "result", 0.5)
        elif (
            (i < TOOL_HEAD_LINES or i > last - TOOL_TAIL_LINES)
            and not (noisy and _NOISE.search(ln))
            and not (elidable and _ELIDED.match(ln))
        ):
            shape = _shape(ln)
            if shapes[shape] >= SHAPE_RUN:
                if shape in b.listed:
                    continue  # one line of a listing stands for the rest (a test run's PASSED lines)
                b.listed.add(shape)
            b.add(ln, turn.line, "tool", 0.12)


# A word holding a digit (a counter, a numbered name, a percentage): what varies between the lines
# of one listing.
_NUMBERED = re.compile(r"(?<!\S)\S*\d\S*")  # from a word's start only: linear on a long word
# Lines of one tool output with the same shape once their numbered words are masked are a listing
# (a test runner's PASSED lines, numbered code, a progress log) when this many share it.
SHAPE_RUN = 3


def _shape(line: str) -> str:
    """The line with each word holding a digit masked and its spaces collapsed (columns padded to
    a width): lines of one listing share it."""
    return " ".join(_NUMBERED.sub("0", line).split())


def _error_candidates(lines: list[str], lo: int, hi: int) -> set[int]:
    """The indexes in ``lo:hi`` of the lines an error pattern may match (:func:`may_hold_error`'s
    prefilter finds something in them): one scan of the lines joined, instead of a call per line.
    A prefilter match never spans two lines (they are stripped and non-empty, and its only
    pattern with whitespace needs two whitespace characters), so each line it holds is found."""
    starts = list(accumulate((len(ln) + 1 for ln in lines[lo:hi]), initial=0))
    found = {bisect_right(starts, pos) - 1 for pos in may_hold_error_at("\n".join(lines[lo:hi]))}
    return {lo + k for k in found}


def split(turns: Iterable[Turn]) -> Pool:
    """Every unit of the turns, in order."""
    b = _Builder()
    turns = list(turns)
    last_assistant = max(
        (i for i, t in enumerate(turns) if t.role == "assistant" and t.kind == "message"), default=-1
    )
    for i, t in enumerate(turns):
        if t.kind == "thinking" or not t.text.strip():
            continue
        if t.kind == "tool_result" or t.role == "tool":
            _tool_result(b, t)
        elif t.kind == "tool_call":
            first = t.text.strip().split("\n", 1)[0]
            b.add(f"`{first}`" if "`" not in first else first, t.line, "command", 0.7)
        elif t.role == "user":
            _message(b, t, 1.5, "user: ")
        elif t.kind == "summary" or t.role == "summary":
            _message(b, t, 1.2, "")
        else:
            _message(b, t, 1.25 if i == last_assistant else 1.0, "")
    return Pool(b.units, frozenset(b.camel), frozenset(b.names))


# Who, when, how many: a person's or a place's name, a date word and a quantity in words count like
# figures and identifiers do in code (issue 30: conversations keep their facts).
NAME_WEIGHT = 2.0
DATE_WEIGHT = 1.5
NUMBER_WORD_WEIGHT = 1.5


def _weights(
    units: list[Unit], camel: frozenset[str], names: frozenset[str] = frozenset()
) -> dict[str, float]:
    df = Counter(chain.from_iterable(u.tokens for u in units))  # counted in C
    n = max(1, len(units))
    norm = math.log(1 + n)
    rarity = {d: 0.35 + 0.65 * math.log(1 + n / d) / norm for d in set(df.values())}  # few distinct counts
    out: dict[str, float] = {}
    for t, d in df.items():
        if t in camel:
            w = 3.0
        elif t in names:
            w = NAME_WEIGHT
        elif t in content.DATE_WORDS:
            w = DATE_WEIGHT
        elif t in content.NUMBER_WORDS:
            w = NUMBER_WORD_WEIGHT
        else:
            w = token_weight(t)
        out[t] = w * rarity[d]
    return out


def _near_duplicate(u: Unit, chosen_by_token: dict[str, list[Unit]]) -> bool:
    """Whether a chosen unit shares at least 70% of the two units' tokens (Jaccard) with ``u``.

    Exact, but only a few candidates are compared: such a unit shares at least ``k`` = ⌈0.7·n⌉ of
    u's ``n`` tokens, so it holds one of any ``n - k + 1`` of them (the ones fewest chosen units
    hold are read); and sizes under 7:10 can never reach 0.7 (checked in integers).
    """
    n = len(u.tokens)
    need = (7 * n + 9) // 10
    held = list(filter(None, map(chosen_by_token.get, u.tokens)))  # tokens some chosen unit holds
    if len(held) < need:
        return False  # a repeat would share ``need`` tokens, each held by a chosen unit
    held.sort(key=len)
    postings = held[: len(held) - need + 1]  # with the n - len(held) empty ones: n - need + 1
    seen: set[int] = set()
    for chosen in postings:
        for c in chosen:
            m = len(c.tokens)
            if 10 * min(n, m) < 7 * max(n, m) or c.pos in seen:
                continue
            seen.add(c.pos)
            inter = len(u.tokens & c.tokens)
            if inter / max(1, len(u.tokens | c.tokens)) >= NEAR_DUPLICATE:
                return True
    return False


def select(pool: Pool, budget: int, covered: Iterable[str] = (), exclude: Iterable[str] = ()) -> list[Unit]:
    """Greedy max-coverage selection within ``budget`` bytes, returned in source order.

    One pass over every unit: tool-output lines compete at their low weight. (A second pass for
    them only after everything said was measured worse on the real-data set: identifier retention
    on sessions ≥ 16 KB fell from 1.51× to 1.43× head truncation, since read files and command
    output hold most of a session's names.)
    """
    units = pool.units
    if budget <= 0 or not units:
        return []
    sel = _Selection(units, _weights(units, pool.camel, pool.names), set(covered), budget)
    skip = {" ".join(x.split()) for x in exclude}
    for k, text in enumerate(
        sorted(skip)
    ):  # what the entry's other sections hold: a unit repeating it is an echo
        toks = tokens(text)
        if toks:
            held = Unit(text, -1 - k, 0, "item", 0.0, toks, 0)
            for tok in toks:
                sel.by_token.setdefault(tok, []).append(held)
    sel.run([u for u in units if u.text not in skip])
    sel.chosen.sort(key=lambda x: x.pos)
    return sel.chosen


class _Selection:
    """The state of one greedy pass: what is covered, what is chosen, what is left."""

    def __init__(self, units: list[Unit], weights: dict[str, float], have: set[str], budget: int) -> None:
        self.units = units
        self.weights = weights
        self.have = have
        self.left = budget
        self.code_left = int(budget * CODE_SHARE)
        self.chosen: list[Unit] = []
        self.by_token: dict[str, list[Unit]] = {}
        self.scale: list[float] = [u.size**0.75 for u in units]  # by pos
        self.weight_of = weights.__getitem__  # bound once: ``gain`` runs in C over a unit's tokens
        self.covered = have.__contains__  # ``have`` grows in place, so this stays its test

    def gain(self, u: Unit) -> float:
        """Weight of u's uncovered tokens per byte^0.75. Summed exactly (``math.fsum``): a plain sum
        follows the set's iteration order, which follows the interpreter's hash seed, so the last
        bits of a score, a tie, and so the entry would differ between runs and between a pool's
        workers. A unit sharing no token with what is covered (a quarter of the calls) is summed
        in C; every token of a unit has a weight (``_weights`` counts them all)."""
        toks = u.tokens
        if toks.isdisjoint(self.have):
            g = math.fsum(map(self.weight_of, toks))
        else:
            g = math.fsum(map(self.weight_of, filterfalse(self.covered, toks)))
        return u.weight * g / self.scale[u.pos]

    def run(self, candidates: list[Unit]) -> None:
        """Lazy greedy: a unit's score is recomputed when it comes up, unless nothing was taken
        since it was computed (a gain changes only when ``have`` grows)."""
        gain, units, heappop, chosen = self.gain, self.units, heapq.heappop, self.chosen
        heap = [(-gain(u), u.pos, 0) for u in candidates]  # (-score, pos, units chosen then)
        heapq.heapify(heap)
        while heap and self.left > MIN_ROOM:
            neg, pos, taken = heappop(heap)
            u = units[pos]
            if u.size > self.left or (u.kind == "code" and u.size > self.code_left):
                continue
            g = -neg if taken == len(chosen) else gain(u)
            if g <= 0:
                continue
            if heap and g < -heap[0][0] - 1e-12:
                heapq.heappush(heap, (-g, pos, len(chosen)))  # stale score: re-queue with the current gain
                continue
            if _near_duplicate(u, self.by_token):
                continue
            self.take(u)

    def take(self, u: Unit) -> None:
        self.chosen.append(u)
        self.left -= u.size
        if u.kind == "code":
            self.code_left -= u.size
        self.have.update(u.tokens)
        for t in u.tokens:
            self.by_token.setdefault(t, []).append(u)
