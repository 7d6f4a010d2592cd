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
from collections.abc import Iterable
from dataclasses import dataclass, field

from scribed.compress import content
from scribed.compress.errors import error_in_line, may_hold_error
from scribed.compress.tokens import (
    Vocab,
    token_weight,
)
from scribed.compress.tool_lines import (
    BANNER,
    ELIDED,
    ELIDED_WORDS,
    LOG,
    MIN_HEADED_LINES,
    NAMED_SHAPE,
    NOISE,
    PROGRESS,
    RESULT,
    RULE_CHARS,
    TOOL_HEAD_LINES,
    TOOL_TAIL_LINES,
    data_call,
    environment,
    header_end,
    informative,
    lines_used,
    listing_shapes,
    names_something,
    shell_command,
)
from scribed.models import Turn

_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_ITEM = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,3}[.)]\s+)(?P<t>\S.*)$")
_TABLE_SEP = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<t>.*)$")
_MERGE_MARK = re.compile(r"^(?:<{7}|={7}|>{7})(?:\s|$)")
_SENT_END = content.SENTENCE_END
_CHATTER = re.compile(
    r"^(?:ok(?:ay)?|sure|thanks?|thank you|great|perfect|excellent|awesome|alright|got it|sounds good|"
    r"let me|let's|i'll|i will|i'm going to|now i|now let me|first,? i|next,? i|i can see|i see|"
    r"looking at|here(?:'s| is) (?:the|what)|you're right|good (?:idea|question|catch))\b",
    re.I,
)
_CAMEL_OR_CAPS = re.compile(r"\b[A-Za-z]*[a-z][A-Z]\w*|\b[A-Z]{2,}[a-z]*\d*\b")
MIN_CODE_ALNUM = 6  # a code line with fewer letters and digits is punctuation
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
        """:func:`names_something` of ``text`` from its tokens, already found."""
        if "%]" in text and PROGRESS.search(text):
            return False
        if any(map(self.vocab.named.__getitem__, toks)) or NAMED_SHAPE.search(text):
            return True
        return bool(content.names(text))

    def _tokens(self, text: str, kind: str, *, named: bool) -> tuple[int, ...] | None:
        """``text``'s token ids, found once per text; None for a tool line seen before (a file read
        twice adds nothing a reader lacks) or, ``named``, one naming nothing (:func:`names_something`)."""
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
    """Each line of a message that belongs to a listing → its shape (:func:`shape`): lines whose
    shape fewer than SHAPE_RUN lines share are left out, so most lines cost one lookup after."""
    return listing_shapes([ln for ln in text.splitlines() if ln.strip()])


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
    A test runner's header (:func:`header_end`) is none, nor the tool's own name and version
    anywhere in its output (Aider's "Aider v0.84.0" after its start-up prompts; a shell's answer to
    ``python --version`` is the work: the shell is not Python), nor are its first lines when they name
    only what the call (``calls``: the tool calls since the last message) named, the tool's
    confirmation of it ("File created successfully at: P" after ``Write {"file_path": "P"…}``).
    """
    text = turn.text
    lines = list(filter(None, map(str.strip, text.splitlines())))  # in C: outputs run long
    # Each line's noise and elision checks only when the text holds what they need (a line is
    # a piece of the text): NOISE is case-sensitive; ELIDED ignores case, which in ASCII text
    # is what lowercasing does.
    noisy = "DEBUG" in text or "TRACE" in text
    elidable = not text.isascii() or any(map(text.lower().__contains__, ELIDED_WORDS))
    last = len(lines) - 1
    maybe = may_hold_error(text)  # False: no line matches either (a line is a piece of the text)
    order, used = lines_used(text, lines, maybe=maybe)
    head = header_end(lines) if len(lines) >= MIN_HEADED_LINES else 0  # a runner's header: not the work
    if head:  # its lines are the first ones used (head < TOOL_HEAD_LINES), none an error
        del order[:head], used[:head]
    shapes = listing_shapes(used)
    raw, line, before_tail = b.raw, turn.line, last - TOOL_TAIL_LINES
    own = (turn.tool_name or "").lower()  # the tool's own banner ("Aider v0.84.0" in aider's output)
    for i, ln in zip(order, used, strict=True):
        err = error_in_line(ln) if maybe else None
        if err:
            b.add(err, line, "error", 1.0)
        elif i == last and RESULT.search(ln) and not LOG.search(ln):
            if names_something(ln):
                b.add(ln, line, "result", 0.5)
                if i < ECHO_LINES and calls and b.units and b.units[-1].text is ln:  # the unit made of it
                    _drop_echo(b, ln, calls)
        elif (
            (i < TOOL_HEAD_LINES or i > before_tail)
            and not (noisy and NOISE.search(ln))
            and not (elidable and ELIDED.match(ln))
        ):
            # one line of a listing stands for the rest (a test run's PASSED lines); a line given
            # before, or too short, adds nothing (checked before the words: most lines stop here)
            # ... a section's title between rules ("___ test_x ___") neither (a tally's is the result)
            if (
                _listed(b, shapes, ln)
                or ln in raw
                or len(ln) < MIN_UNIT_CHARS
                or not informative(ln)
                or (ln[-1] in RULE_CHARS and ln.startswith(BANNER) and ln.endswith(BANNER))
                or (own and ln[: len(own)].lower() == own and environment(ln))
            ):
                continue
            b.add(ln, line, "tool", 0.12, named=True)  # naming something (judged on its tokens)
            if i < ECHO_LINES and calls and b.units and b.units[-1].text is ln:  # the unit made of it
                _drop_echo(b, ln, calls)


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
        and called(m.group(0) for m in NAMED_SHAPE.finditer(line))
    ):
        b.units.pop()


def _listed(b: _Builder, shapes: dict[str, str], line: str) -> bool:
    """Whether ``line`` belongs to a listing (its shape shared by SHAPE_RUN lines of its output or
    its message's code: ``shapes``, from :func:`listing_shapes`) that an earlier line already
    stands for; the first line of one is noted."""
    shape = shapes.get(line)
    if shape is None:
        return False
    if shape in b.listed:
        return True
    b.listed.add(shape)
    return False


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
            if not data_call(first, t.tool_name):
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
