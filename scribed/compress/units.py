"""Units of a session and the information-ranked selection that spends an entry's budget.

A unit is a whole sentence, list item, table row, command or code line: it is kept whole or not
at all, so nothing is ever cut mid-token. Units are ranked by the information they add (paths,
identifiers, numbers, dates, names and terms rare in the session; a term already covered adds
nothing, which also drops near-duplicates), weighted by who said it (the user's requests and the
assistant's results above tool output), picked greedily per byte until the budget is spent, and
printed back in their original order (``selection.py``).

A session's tokens are interned (:class:`Vocab`): a unit holds a tuple of int ids, not a frozenset
of strings (issue 32: on a 64 MB session the pool's 159,412 frozensets took 80.5 MB).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate, chain

from scribed.compress import content
from scribed.compress.command_line import SHELL_TOOLS, unwrapped
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
# A file read with line numbers: "   296→code", or as ``cat -n`` numbers them, "    12\tcode" (stripped).
_READ_LINE_NO = re.compile(r"^\d{1,7}(?:→|\t)")
_NOISE = re.compile(r"\b(?:DEBUG|TRACE)\b")
_CAMEL_OR_CAPS = re.compile(r"\b[A-Za-z]*[a-z][A-Z]\w*|\b[A-Z]{2,}[a-z]*\d*\b")
MIN_TOKEN_CHARS = 3
WORD_CHARS = 4  # a plain word this long carries some meaning
MIN_CODE_ALNUM = 6  # a code line with fewer letters and digits is punctuation
# Plain tool-output lines that are candidates: head and tail of each output (errors and the final
# result anywhere). Down from 150/50 (issue 15): on the real-data set identifier retention on
# sessions >= 16 KB stayed within 0.005x of head truncation, for 28% fewer units on the generated backlog.
TOOL_HEAD_LINES = 50
TOOL_TAIL_LINES = 20
MAX_UNIT_CHARS = 480
MIN_UNIT_CHARS = 12


@dataclass(slots=True)
class Unit:
    """One keepable piece of a session."""

    text: str  # as it will be printed
    pos: int  # order in the session
    line: int  # source line of its turn
    kind: str  # prose | item | code | command | tool | error | result
    weight: float  # who said it and what it is
    tokens: tuple[int, ...]  # distinct ids in the session's :class:`Vocab`
    size: int  # bytes as a list item


def tokens(text: str) -> frozenset[str]:
    """Informative tokens, lowercased for coverage.

    ASCII text is lowercased once, before the scan: the token pattern treats both cases alike, so
    the tokens are the same (elsewhere ``lower()`` may change lengths). Each raw token is judged
    once per process (:data:`_ACCEPTED`), and a token repeated in the text once.
    """
    return frozenset(_ordered(text))


def _ordered(text: str) -> Iterable[str]:
    """:func:`tokens` in the order of their first occurrence, each once."""
    if text.isascii():
        found = dict.fromkeys(map(_ACCEPTED.__getitem__, _TOKEN.findall(text.lower())))
        found.pop(None, None)  # None: not a token (an accepted one is never empty)
        return found  # type: ignore[return-value]  # no None key left
    out: dict[str, None] = {}
    for t in dict.fromkeys([tok.strip(_EDGE) for tok in _TOKEN.findall(text)]):
        if len(t) < MIN_TOKEN_CHARS and not t[:1].isdigit() and not t.startswith("#"):
            continue
        low = t.lower()
        if low not in _STOP:
            out[low] = None
    return out


class Vocab:
    """A session's tokens, each given an int id the first time it is met (``words[id]`` is the
    token). Units hold tuples of ids: a small tuple instead of a hash table of strings per unit, and
    ids index flat lists (weights, document counts) in the selection."""

    __slots__ = ("ids", "named", "words")

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: list[str] = []
        # ``named[id]``: the token names something (:func:`_names_id`), judged once when it is
        # interned, so a tool line's check is ``any(map(named.__getitem__, ids))``, in C
        self.named: list[bool] = []

    def intern(self, word: str) -> int:
        """``word``'s id, given the next one the first time."""
        i = self.ids.get(word)
        if i is None:
            i = self.ids[word] = len(self.words)
            self.words.append(word)
            self.named.append(_names_id(word))
        return i

    def of(self, text: str) -> tuple[int, ...]:
        """The ids of :func:`tokens` of ``text``, in first-occurrence order: looked up in C, a new
        token given the next id."""
        found: Iterable[str]
        if text.isascii():  # :func:`_ordered`'s ASCII path inline: a call less per unit
            raw = dict.fromkeys(map(_ACCEPTED.__getitem__, _TOKEN.findall(text.lower())))
            raw.pop(None, None)  # None: not a token
            found = raw  # type: ignore[assignment]  # no None key left
        else:
            found = _ordered(text)
        got = list(map(self.ids.get, found))
        if None in got:
            ids, words, named = self.ids, self.words, self.named
            for k, (tok, i) in enumerate(zip(found, got, strict=True)):
                if i is None:  # ``found`` holds each token once
                    got[k] = ids[tok] = len(words)
                    words.append(tok)
                    named.append(_names_id(tok))
        return tuple(got)  # type: ignore[arg-type]  # every None replaced


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
    """A session's units, its tokens, and the CamelCase/ALLCAPS names seen in them (identifiers
    without punctuation)."""

    units: list[Unit]
    camel: frozenset[str]
    names: frozenset[str] = frozenset()  # people, places, products named in what was said
    vocab: Vocab = field(default_factory=Vocab)  # the ids in ``units``' tokens


class _Builder:
    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.camel: set[str] = set()
        self.names: set[str] = set()
        self.vocab = Vocab()
        self.seen: dict[str, tuple[int, ...]] = {}  # a text's tokens: tool output repeats lines
        self.raw: set[str] = set()  # texts added before, as given
        self.listed: set[str] = set()  # shapes of tool-output listings a line already stands for

    def _names(self, text: str, toks: tuple[int, ...]) -> bool:
        """:func:`_names_something` of ``text`` from its tokens, already found."""
        if "%]" in text and _PROGRESS.search(text):
            return False
        if any(map(self.vocab.named.__getitem__, toks)) or _NAMED_SHAPE.search(text):
            return True
        return bool(content.names(text))

    def _tokens(self, text: str, kind: str, *, named: bool) -> tuple[int, ...] | None:
        """``text``'s token ids, found once per text; None for a tool line seen before (a file read
        twice adds nothing a reader lacks) or, ``named``, one naming nothing (:func:`_names_something`)."""
        toks = self.seen.get(text)
        if toks is not None:
            return None if kind == "tool" else toks
        toks = self.vocab.of(text)
        if named and not self._names(text, toks):
            return None
        self.seen[text] = toks
        if toks and not text.islower():  # an ASCII capital is needed for a CamelCase/ALLCAPS name
            self.camel |= _camel_bonus(text)
        return toks

    def add(
        self, text: str, line: int, kind: str, weight: float, prefix: str = "", *, named: bool = False
    ) -> None:
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
        norm = " ".join(text.split())
        text = text if norm == text else norm  # one string object for both when already normal
        n = len(text) + len(prefix)
        if n < MIN_UNIT_CHARS or n > MAX_UNIT_CHARS:
            return
        toks = self._tokens(text, kind, named=named)
        if not toks:
            return
        if kind in _SAID:
            words = set(map(self.vocab.words.__getitem__, toks))
            if not _carries(text, words) or _label(text, words):
                return
            if not text.islower():
                self.names.update(n for n in content.names(text) if n in words)
        if _CHATTER.match(text):
            weight *= 0.3
        text = prefix + text
        size = (n if text.isascii() else len(text.encode())) + 3
        self.units.append(Unit(text, len(self.units), line, kind, weight, toks, size))


def _names_id(tok: str) -> bool:
    """Whether a token names something in a tool line (:func:`_names_something`): a path, a code
    name, a flag, a ``#123``, not a figure."""
    return not tok[:1].isdigit() and token_weight(tok) >= NAMED_TOOL_WEIGHT


_SAID = frozenset(("prose", "item"))  # units someone wrote as language (not code, commands or output)


NAMED_WEIGHT = 2.0  # token_weight of a figure, a code name or a path: what a label may still name


def _label(text: str, toks: Iterable[str]) -> bool:
    """Whether a sentence or list item only announces what follows it ("**Current State**:",
    "The main changes are:") and names nothing itself: alone, as a key point, it says nothing."""
    if not text.rstrip(" *_").endswith(":") or _camel_bonus(text):
        return False
    return all(token_weight(t) < NAMED_WEIGHT for t in toks)  # no path, code name or figure


def _carries(text: str, toks: Iterable[str]) -> bool:
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


def _line_shapes(text: str) -> dict[str, str]:
    """Each line of a message that belongs to a listing → its shape (:func:`_shape`): lines whose
    shape fewer than SHAPE_RUN lines share are left out, so most lines cost one lookup after."""
    return _listing_shapes([ln for ln in text.splitlines() if ln.strip()])


def _listing_shapes(lines: list[str]) -> dict[str, str]:
    """``lines``' listed ones (their shape shared by SHAPE_RUN of them, a repeated line counted
    each time) → their shape: each shape computed once per distinct line."""
    if len(lines) < SHAPE_RUN:
        return {}
    of = dict.fromkeys(lines, "")
    for ln in of:
        of[ln] = _shape(ln)
    counts = Counter(map(of.__getitem__, lines))
    return {ln: sh for ln, sh in of.items() if counts[sh] >= SHAPE_RUN}


def _message(b: _Builder, turn: Turn, weight: float, prefix: str) -> None:
    fence = ""
    para: list[str] = []
    shapes = _line_shapes(turn.text)  # a pasted diff's hunk headers, numbered lines: one listing
    for raw in turn.text.splitlines():
        m = _FENCE.match(raw)
        if fence:
            if m and m.group(1)[0] == fence[0] and not raw.strip(" \t`~"):
                fence = ""
                continue
            code = raw.strip()
            if code and not _MERGE_MARK.match(code) and sum(c.isalnum() for c in code) >= MIN_CODE_ALNUM:
                if _listed(b, shapes, raw):
                    continue
                wrapped = f"`{code}`" if "`" not in code else code
                b.add(wrapped, turn.line, "code", weight * 0.3)
            continue
        if m:
            _prose(b, para, turn.line, weight, prefix)
            para = []
            fence = m.group(1)
            continue
        stripped = raw.strip()
        if stripped and _listed(b, shapes, raw):
            continue
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


def _tool_result(b: _Builder, turn: Turn, calls: list[str] | None = None) -> None:
    """Tool output ranks low, but its error lines and its final result count.

    Its other lines stay candidates at a low weight (head and tail of a long output), so a session
    that is mostly tool output still spends its budget on the most informative of them. When the
    text holds nothing error-shaped, the lines between head and tail are not even looked at.
    A test runner's header (:func:`_header_end`) is none, nor the tool's own name and version
    anywhere in its output (Aider's "Aider v0.84.0" after its start-up prompts; a shell's answer to
    ``python --version`` is the work: the shell is not Python), nor are its first lines when they name
    only what the call (``calls``: the tool calls since the last message) named, the tool's
    confirmation of it ("File created successfully at: P" after ``Write {"file_path": "P"…}``).
    """
    text = turn.text
    lines = list(filter(None, map(str.strip, text.splitlines())))  # in C: outputs run long
    # Each line's noise and elision checks only when the text holds what they need (a line is
    # a piece of the text): _NOISE is case-sensitive; _ELIDED ignores case, which in ASCII text
    # is what lowercasing does.
    noisy = "DEBUG" in text or "TRACE" in text
    elidable = not text.isascii() or any(map(text.lower().__contains__, _ELIDED_WORDS))
    last = len(lines) - 1
    maybe = may_hold_error(text)  # False: no line matches either (a line is a piece of the text)
    order, used = _lines_used(text, lines, maybe=maybe)
    head = _header_end(lines) if len(lines) >= MIN_HEADED_LINES else 0  # a runner's header: not the work
    if head:  # its lines are the first ones used (head < TOOL_HEAD_LINES), none an error
        del order[:head], used[:head]
    shapes = _listing_shapes(used)
    raw, line, before_tail = b.raw, turn.line, last - TOOL_TAIL_LINES
    own = (turn.tool_name or "").lower()  # the tool's own banner ("Aider v0.84.0" in aider's output)
    for i, ln in zip(order, used, strict=True):
        err = error_in_line(ln) if maybe else None
        if err:
            b.add(err, line, "error", 1.0)
        elif i == last and _RESULT.search(ln) and not _LOG.search(ln):
            if _names_something(ln):
                b.add(ln, line, "result", 0.5)
                if i < ECHO_LINES and calls and b.units and b.units[-1].text is ln:  # the unit made of it
                    _drop_echo(b, ln, calls)
        elif (
            (i < TOOL_HEAD_LINES or i > before_tail)
            and not (noisy and _NOISE.search(ln))
            and not (elidable and _ELIDED.match(ln))
        ):
            # one line of a listing stands for the rest (a test run's PASSED lines); a line given
            # before, or too short, adds nothing (checked before the words: most lines stop here)
            # ... a section's title between rules ("___ test_x ___") neither (a tally's is the result)
            if (
                _listed(b, shapes, ln)
                or ln in raw
                or len(ln) < MIN_UNIT_CHARS
                or not _informative(ln)
                or (ln[-1] in _RULE_CHARS and ln.startswith(_BANNER) and ln.endswith(_BANNER))
                or (own and ln[: len(own)].lower() == own and _environment(ln))
            ):
                continue
            b.add(ln, line, "tool", 0.12, named=True)  # naming something (judged on its tokens)
            if i < ECHO_LINES and calls and b.units and b.units[-1].text is ln:  # the unit made of it
                _drop_echo(b, ln, calls)


def _lines_used(text: str, lines: list[str], *, maybe: bool) -> tuple[list[int], list[str]]:
    """The indexes of an output's lines that may give units (head and tail, and lines between
    that may hold an error when ``maybe``), and those lines as used (a file read's without their
    line numbers)."""
    last = len(lines) - 1
    tail = max(TOOL_HEAD_LINES, last - TOOL_TAIL_LINES + 1)
    order: Iterable[int] = chain(range(min(TOOL_HEAD_LINES, len(lines))), range(tail, len(lines)))
    if maybe and tail > TOOL_HEAD_LINES:  # a line's number (below) holds no error word: same lines
        order = sorted({*order, *_error_candidates(lines, TOOL_HEAD_LINES, tail)})
    order = list(order)
    if "→" in text or "\t" in text:  # a file read with line numbers: the lines used, without theirs
        return order, [
            _READ_LINE_NO.sub("", ln, count=1).strip() or ln for ln in map(lines.__getitem__, order)
        ]
    return order, list(map(lines.__getitem__, order))


# A tool's confirmation of its call is one of the first lines of its output.
ECHO_LINES = 2
ECHO_CALL_CHARS = 4000  # of each call: its name and arguments' start (a Write's content follows)
ECHO_CALLS = 4  # the latest calls: those made together, before their results
ECHO_CHARS = 240  # a confirmation is one short line


def _drop_echo(b: _Builder, line: str, calls: list[str]) -> None:
    """Takes back the unit just made of a tool's ``line`` (its text, as given: a line that was not
    one, with runs of spaces, is let be) when it names only what its call named
    ("File created successfully at: P", "Switched to a new branch 'feat/x'"): it confirms the call,
    whose file and command the entry lists. Judged on the unit's tokens, after the pool's checks
    (most lines never become units); each name is looked for as the line spells it in the start of
    the latest calls (found in C, nothing copied; a token is lowercased, the line's ASCII text is not)."""
    if len(line) > ECHO_CHARS:
        return  # a confirmation is short
    vocab = b.vocab
    named = [vocab.words[i] for i in b.units[-1].tokens if vocab.named[i]]
    if not named:
        return
    recent = calls[-ECHO_CALLS:]
    if line.isascii():
        low = line.lower()  # same length: a token's place in it is its place in the line
        spelled = [line[at : at + len(w)] for w in named if (at := low.find(w)) >= 0]
    else:
        spelled, recent = named, [c[:ECHO_CALL_CHARS].lower() for c in recent]

    def called(words: Iterable[str]) -> bool:
        return all(any(c.find(w, 0, ECHO_CALL_CHARS) >= 0 for c in recent) for w in words)

    if (
        len(spelled) == len(named)
        and called(spelled)
        and called(m.group(0) for m in _NAMED_SHAPE.finditer(line))
    ):
        b.units.pop()


# A test runner's header: a line naming versions (``platform linux -- Python 3.12.4, pytest-8.3.2``,
# ``> web@2.4.1 test``, ``go: downloading github.com/x/y v1.9.0``), then settings (``rootdir:
# /src/app``, ``plugins: cov-5.0.0, xdist-3.6.1``), between banners (``=== test session starts ===``).
HEADER_LINES = 12
HEADER_CHARS = 240  # a header's line is shorter
_SETTING = re.compile(r"[a-z][a-z_-]*:\s*[^\s,]+(?:,\s*[^\s,]+)*")
_BANNER = ("===", "---", "___", "***", "!!!")
_RULE_CHARS = frozenset("=-_*!")  # a banner's last character: most lines are no banner by it alone
MIN_HEADED_LINES = 4  # an output with a header: a header's line or two, then a body
_VERSIONED = re.compile(r"\d\.\d")
_HASH = re.compile(r"(?<![.\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}(?![.\w-])")


def _header_end(lines: list[str]) -> int:
    """How many of an output's first lines are its header: versions of the tool, its interpreter
    and plugins (:func:`_environment`), then the root and config it found (:data:`_SETTING`),
    banners between them. They name the environment, not the work: the same on every run. A
    header is followed by the output's body (an output of MIN_HEADED_LINES lines or more: the
    caller checks); an output that is all "header" (``python --version``'s answer) is its own
    answer, and has none."""
    end = 0
    for k, ln in enumerate(lines[:HEADER_LINES]):
        banner = ln.startswith(_BANNER) or ln.endswith(_BANNER)
        # a setting only after the versions (``cat config.yml`` starts with settings too); an
        # error ends it, as anything else does
        if not (banner or (end and _SETTING.fullmatch(ln)) or _environment(ln)) or error_in_line(ln):
            break
        end = end if banner else k + 1
    return end if end < len(lines) else 0


def _environment(line: str) -> bool:
    """Whether a line names versions and nothing else: each name it gives is a version
    (``pytest-8.3.2``, ``v1.9.0``), the name of the one following it (``github.com/x/y v1.9.0``) or
    an absolute path (the interpreter's, the root's); a commit's hash is the work. A header's line
    is short: a longer one is not read."""
    if len(line) > HEADER_CHARS or _VERSIONED.search(line) is None:
        return False
    toks = list(_ordered(line))
    named = [k for k, t in enumerate(toks) if _names_id(t)]
    low = f" {line.lower()}"  # a token's leading "/" is stripped: an absolute path is found in the line
    return (
        bool(named)
        and all(
            _VERSIONED.search(toks[k])
            or (k + 1 < len(toks) and _VERSIONED.search(toks[k + 1]))
            or any(f"{lead}{toks[k]}" in low for lead in (" /", "(/", "~/"))
            for k in named
        )
        and _HASH.search(line) is None
    )


_EDGES = "[](){}%.,:;|'\"`"
RUN_CHARS = 3  # a word of this many distinct characters or fewer is a run (`FFssFsFs`, `====`)


def _informative(line: str) -> bool:
    """Whether a tool line has a word of four characters or more that is no number and no run of
    three characters or fewer (a test runner's progress ``FFssFsFsFs..ssFF [ 45%]``, a rule of
    ``=``): one that is not, however rare its "words", tells a reader nothing."""
    for w in line.split():
        core = w.strip(_EDGES)
        if len(core) >= WORD_CHARS and not core.isdigit() and len(set(core)) > RUN_CHARS:
            return True
    return False


def _names_something(line: str) -> bool:
    """Whether a tool's line names something of the work: a path, a code name, a flag, a ``#123``
    (a token :func:`token_weight` weighs 3, not a figure: ``1.84s``), a CamelCase name or a proper name. Plain words and
    counts alone are the tool's acknowledgement ("Todos have been modified successfully. Ensure
    that you continue…") or a tally of results it does not name ("10 passed in 1.84s"): apart
    from the command that printed them they tell a reader nothing; nor does a runner's progress."""
    if _PROGRESS.search(line):  # "tests/test_a.py ....F. [ 45%]": the run's marks, its file aside
        return False
    if any(not t[:1].isdigit() and token_weight(t) >= NAMED_TOOL_WEIGHT for t in _ordered(line)):
        return True
    if _VERSION_OR_HASH.search(line) or _FAILED_TALLY.search(line):
        return (
            True  # "Python 3.11.4", "HEAD is now at 3e9a0f1 …", "3 failed, 97 passed": facts a reader needs
        )
    return _MIXED_CASE.search(line) is not None or bool(content.names(line))


NAMED_TOOL_WEIGHT = 3.0
# A version (two dots or more: "3.11.4", not a duration "1.84s") or a commit's short hash (7-12 hex
# with a digit and a letter) names a thing; a tally with a failure or an error is a result (an all-pass
# tally is the tool's acknowledgement).
_VERSION_OR_HASH = re.compile(
    r"\b\d+\.\d+\.\d+\b|(?<![.\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}(?![.\w-])"
)  # a commit's short hash: not a digest (32+ hex) nor a diff's "index f89a028..3d92976"
_FAILED_TALLY = re.compile(r"\b[1-9]\d*\s+(?:failed|errors?|failures?)\b", re.IGNORECASE)
# pytest's marks, or a test's status (``-v``: ``tests/t.py::test_x PASSED [ 12%]``), then the share
# of the run done: the run's progress (its tally and failures say what a reader needs)
_PROGRESS = re.compile(
    r"(?:^|\s)(?:[.EFsSxX]+|PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)\s+\[\s{0,2}\d{1,3}%\]$"
)
_MIXED_CASE = re.compile(r"\b[A-Za-z]*[a-z][A-Z]\w*")
# The three in one scan (the pool's check; :func:`_names_something` is the reference)
_NAMED_SHAPE = re.compile(f"{_VERSION_OR_HASH.pattern}|{_MIXED_CASE.pattern}|(?i:{_FAILED_TALLY.pattern})")


def _listed(b: _Builder, shapes: dict[str, str], line: str) -> bool:
    """Whether ``line`` belongs to a listing (its shape shared by SHAPE_RUN lines of its output or
    its message's code: ``shapes``, from :func:`_listing_shapes`) that an earlier line already
    stands for; the first line of one is noted."""
    shape = shapes.get(line)
    if shape is None:
        return False
    if shape in b.listed:
        return True
    b.listed.add(shape)
    return False


# A word holding a digit (a counter, a numbered name, a percentage) is what varies between the lines
# of one listing.
_DIGIT = re.compile(r"\d")
# Lines of one tool output with the same shape once their numbered words are masked are a listing
# (a test runner's PASSED lines, numbered code, a progress log) when this many share it.
SHAPE_RUN = 3


def _shape(line: str) -> str:
    """The line with each word holding a digit masked and its spaces collapsed (columns padded to
    a width): lines of one listing share it. Word by word (``str.split`` and the regex engine's
    ``\\s`` know the same spaces): a fifth faster than a masking regex over the line, which tried
    each word's end for a digit."""
    words = line.split()
    if _DIGIT.search(line) is None:
        return " ".join(words)
    return " ".join(["0" if _DIGIT.search(w) else w for w in words])


def _error_candidates(lines: list[str], lo: int, hi: int) -> set[int]:
    """The indexes in ``lo:hi`` of the lines an error pattern may match (:func:`may_hold_error`'s
    prefilter finds something in them): one scan of the lines joined, instead of a call per line.
    A prefilter match never spans two lines (they are stripped and non-empty, and its only
    pattern with whitespace needs two whitespace characters), so each line it holds is found."""
    starts = list(accumulate((len(ln) + 1 for ln in lines[lo:hi]), initial=0))
    found = {bisect_right(starts, pos) - 1 for pos in may_hold_error_at("\n".join(lines[lo:hi]))}
    return {lo + k for k in found}


def _data_call(first: str, tool: str | None) -> bool:
    """Whether a tool call's first line is its tool's arguments as data (``Edit {"file_path": …}``,
    ``apply_patch *** Begin Patch``), not a command a reader could run: its file is under *Files*,
    its text no key point."""
    args = first[len(tool) :].lstrip(" :") if tool and first.startswith(tool) else first
    return args.startswith(("{", "[{", '["', "[]", "***"))  # not a shell's test: "[ -f .env ] && …"


def shell_command(first: str, tool: str | None) -> str:
    """A call's first line without the name of the shell tool that ran it, nor the shell's ``bash
    -lc`` (``Bash pytest -q`` and ``shell bash -lc 'pytest -q'`` are ``pytest -q``, as the entry's
    commands show it); another tool's call keeps its name (``Grep TODO`` says what ran). '' for a
    program given data through the shell (``apply_patch *** Begin Patch``: :func:`_data_call`)."""
    if not (tool and tool.lower() in SHELL_TOOLS and first.startswith(tool)):
        return first
    cmd = unwrapped(first[len(tool) :].strip(" :"))
    if not cmd:
        return first
    return "" if _data_call(cmd, cmd.split(None, 1)[0]) else cmd


def last_said(turns: list[Turn]) -> Turn | None:
    """The session's last assistant message (its units weigh more: the answer it ended on)."""
    return next((t for t in reversed(turns) if t.role == "assistant" and t.kind == "message"), None)


def split(turns: Iterable[Turn], *, part: bool = False, last: Turn | None = None) -> Pool:
    """Every unit of the turns, in order. ``part``: the turns are a part of the session (see
    :mod:`scribed.compress.window`) whose last assistant message is ``last``; else it is found
    among them."""
    b = _Builder()
    turns = list(turns)
    final = last if part else last_said(turns)
    calls: list[str] = []  # the tool calls since the last message (parallel calls come before their results)
    for t in turns:
        if t.kind == "thinking" or not t.text.strip():
            continue
        if t.kind == "tool_result" or t.role == "tool":
            _tool_result(b, t, calls)
            continue
        if t.kind != "tool_call":
            calls = []
        if t.kind == "tool_call":
            calls.append(t.text)
            first = t.text.strip().split("\n", 1)[0]
            if not _data_call(first, t.tool_name):
                first = shell_command(first, t.tool_name)
                if first:
                    b.add(f"`{first}`" if "`" not in first else first, t.line, "command", 0.7)
        elif t.role == "user":
            _message(b, t, 1.5, "user: ")
        elif t.kind == "summary" or t.role == "summary":
            _message(b, t, 1.2, "")
        else:
            _message(b, t, 1.25 if t is final else 1.0, "")
    return Pool(b.units, frozenset(b.camel), frozenset(b.names), b.vocab)
