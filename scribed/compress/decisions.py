"""The decisions a session states, in order, and the reversals that replace them.

A decision is stated ("Decision: …", "we decided to …", "let's go with …", "scratch that, …"), all
of it to the sentence's end ("use Postgres; keep SQLite for tests" keeps its second clause) but a
", since …" reason; a later one that reverses an earlier ("instead of X", or most of its words with
reversal wording, :data:`scribed.compress.reversal_wording.REVERSAL`), takes out what it names (a
removal), changes it "from X to Z", or says it again with another figure or the opposite
(:mod:`scribed.compress.restate`), keeps or goes back to what it changed "from", or is a user's
"keep X elsewhere" with a refusal of what the earlier decision chose for X ("no Redis please …
keep the window in memory") replaces it and names it as superseded, so a reversed decision is
never shown as current. Fed a turn's lines at a time (those :data:`WORDS` names), in time linear
in the session.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from scribed.compress import lines
from scribed.compress.anchor_text import clean
from scribed.compress.choice import _CHOICE as _CHOICE  # re-exported: tests read the patterns here
from scribed.compress.choice import _DETERMINER, _SPEAKER, Known, _first, _phrase, _unmarked
from scribed.compress.choice import _IMPERATIVE as _IMPERATIVE
from scribed.compress.choice import _choice as _choice
from scribed.compress.choice import _imperative as _imperative
from scribed.compress.restate import Statement, restates, statement
from scribed.compress.reversal import names_changed, names_returned, names_taken_out
from scribed.compress.reversal_wording import (
    CHANGE,
    REMOVAL,
    REVERSAL,
    keeps_out,
    matches,
    removal_heads,
    returns,
)
from scribed.compress.scope import in_scope, scope
from scribed.compress.terms import norm, term_set
from scribed.models import Anchor, Turn

_DECISION = re.compile(
    r"(?:^|[\s*_>-])(?:decisions?|decided|final decision|revised decision)\**\s*(?:\([^)]{0,40}\)\s*)?\**\s*[:：]"
    r"\s*(?P<d>.+)",
    re.IGNORECASE,
)
_DECISION_VERB = re.compile(
    r"\b(?:we|i|team)(?:\s+have\s+|['\u2019]ve\s+|\s+|(?=['\u2019]))(?:decided|agreed|chose|(?:will|'ll|\u2019ll) go with|(?:are|'re|\u2019re) going with)\s+(?:to\s+|on\s+)?(?P<d>.+)",
    re.IGNORECASE,
)
# Other ways agents state a decision, and reversals that name only the new choice.
_DECISION_MORE = re.compile(
    r"(?:\blet(?:'|’)?s go with\b(?:[^:,.]{0,40}[:,](?=\s))?|\bgoing with\b[^:]{0,40}:|\bthe plan is to\b|"
    r"\bchange of plan\s*[:,]|\bactually,[^:]{0,60}:|\bscratch (?:that|the [^.]{1,40}idea)[.;,!]\s*"
    r"(?:we should|let(?:'|’)?s|we(?:'|’)ll)?|"
    # a reversal naming what it reverses: "reversing the earlier call: …", "overriding my decision —"
    r"(?P<rev>\b(?:revers|revert|overrid)\w*\s+(?:(?:the|our|my|that)\s+)?(?:(?:earlier|previous|last|original)\s+)?"
    r"(?:call|decision|choice|plan|approach)\s*[:—–-]+))\s*(?P<d>.+)",
    re.IGNORECASE,
)
# "LISTEN/NOTIFY is out, polling is in": the new choice, naming what it replaces.
_OUT_IN = re.compile(
    r"(?:^|(?<=[.;:!?(]\s)|(?<=^\W))(?P<d>(?P<x>[^\s.;:!?,][^.;:!?,]{0,60}?)\s+(?:is|are)\s+out\b\s*[,;:\u2013\u2014-]?\s*"
    r"[^.;:!?,]{2,60}?\s+(?:is|are)\s+in\b)(?=\s*(?:[.;:!?,)\u2013\u2014-]|$))",  # "is in charge": no
    re.IGNORECASE,
)
_INSTEAD_OF = re.compile(
    r"\b(?:instead of|rather than|replac(?:e|es|ing))\s+`?(?P<x>[^`,.;]{2,60})", re.IGNORECASE
)
# Each pattern above and the literals a line needs for it to match, lowercase (:func:`lines.lowered`),
# in the order they are tried: "actually, …:" and "going with …:" need the colon.
_LABELS = (
    (_DECISION, ("decision", "decided")),
    (_DECISION_VERB, ("decided", "agreed", "chose", "go with", "going with")),
    (
        _DECISION_MORE,
        ("go with", "plan is to", "change of plan", "scratch", "revers", "revert", "overrid", ":"),
    ),
    (_OUT_IN, ("out",)),
)
# A choice's subject (:data:`_CHOICE`); its typographic apostrophe dropped: "we’ll" -> "well".
_CHOICE_NEEDS = ("let", "we'll", "well", "we will", "we're", "were", "we are")
# Each pattern above needs one of these literals, whatever its case (a line without them is skipped).
WORDS = lines.prefilter(
    "decision", "decided", "agreed", "chose", "go with", "going with", "plan is to", "change of plan", "actually,",
    "scratch", "revers", "revert", "overrid", " is out", " are out",
    # a choice's subject; with a typographic apostrophe, as the whole text holds it and as a line's
    # check reads it once non-ASCII is dropped ("let’s" -> "lets", "we’ll" -> "well")
    "let's", "lets", "let\u2019s", "let us", "we'll", "we\u2019ll", "well", "we will", "we're", "we\u2019re", "were",
    "we are",
)  # fmt: skip
# A user's line needs these too (an imperative's verbs, :data:`_IMPERATIVE`): a user's turns are few and short.
USER_WORDS = lines.prefilter(
    *WORDS.literals, "pin", "stick", "standardi", "settle", "revert", "roll", "go ", "adopt", "vendor", "migrate",
    "scrap", "ditch", "abandon", "use", "do", "switch", "replac", "swap", "upgrade", "downgrade", "bump", "move",
    "keep", "drop", "avoid", "make", "key", "partition", "shard", "take", "pick",
)  # fmt: skip


def prefilter_for(t: Turn) -> lines.Words:
    """The literals a line of ``t`` needs to state a decision (:data:`USER_WORDS` in a user's turn)."""
    return USER_WORDS if t.role == "user" else WORDS


MIN_REVERSAL_OVERLAP = 0.25  # share of a decision's words a reversal must repeat to name it
MIN_DECISION_CHARS = 4


def stated(line: str) -> bool:
    """Whether ``line`` states a decision in so many words ("Decision: …", "we decided to …")."""
    return _DECISION.search(line) is not None or _DECISION_VERB.search(line) is not None


def _first_sentence(text: str) -> str:
    return _SENTENCE_BREAK.split(text.strip(), maxsplit=1)[0]


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


_WORD = re.compile(r"[a-z0-9_]{3,}")


def _words(s: str) -> set[str]:
    return set(_WORD.findall(s.lower())) - _STOP


_STOP = {
    "the", "and", "for", "use", "with", "this", "that", "from", "instead", "decision", "decided", "will", "are",
    "our", "not", "now", "reverse", "reversing", "revert", "earlier", "previous", "rather",
}  # fmt: skip


class Decisions:
    """Decisions, fed a turn's lines at a time.

    Linear in the session: decisions are kept by text (unique, in order of their last statement)
    and a reversal looks back at the REVERSAL_WINDOW most recent ones, whose words are computed once
    (when one is first compared by them: a reversal naming its target by "instead of X" needs none);
    a restatement looks up the few earlier decisions with its words (:attr:`stated`).
    """

    def __init__(self, known: Known | None = None) -> None:
        self.known = known  # the bare words the session uses as names (:mod:`scribed.compress.used_names`)
        self.found: dict[str, Anchor] = {}  # by _decision_key
        self.keys: dict[str, str] = {}  # _decision_key -> lowercased text
        self.words: dict[str, set[str]] = {}  # _decision_key -> its words (:meth:`_words_of`)
        self.removals = [MAX_REMOVALS]  # removal and change look-ups left (bounded work on a flood)
        # a statement's shape (its words, up to each cut too) -> the keys of the newest decisions with it
        self.stated: dict[str, list[str]] = {}
        # a decision's first clause (to ";") -> the key of the newest decision saying it: "store sessions in
        # SQLite via src/store.py; implement the schema", then "… via `src/store.py`", is one decision
        self.heads: dict[str, str] = {}
        self.statements = MAX_STATED  # decisions whose statement is still read (bounded work on a flood)

    def feed(self, t: Turn, ls: list[str]) -> None:
        """``t``'s lines that mention a decision word (:func:`lines.mentioning` with :data:`WORDS`)."""
        for line in ls:
            self._line(t, line)

    def result(self) -> list[Anchor]:
        return list(self.found.values())

    def _line(self, t: Turn, line: str) -> None:
        """Record the decision one line states (a reversal replaces the decision it reverses)."""
        m = self._said(t, line)
        refused: Anchor | None = None
        if not m and t.role == "user" and self.found and _REFUSED.search(line) and _spend(self.removals):
            m, refused = self._refused(line) or (None, None)
        if not m:
            return
        said = m.group("d") if m.re is _IMPERATIVE else _first_sentence(m.group("d"))  # one sentence already
        text = clean(said.split(", since ")[0])
        label = line[m.start() : m.start("d")]
        if len(text) < MIN_DECISION_CHARS or (m.re is _DECISION and _listing(label, text)):
            return
        if m.re is _DECISION and _ASKED.search(line, 0, m.start() + 1):
            return  # "needs an MSRV decision: bump to 1.82 or allow the lint": a decision still to make
        found, keys = self.found, self.keys
        self.statements -= 1
        st = statement(text) if self.statements >= 0 else None
        target = refused or (self._target(m, line, text, st) if found else None)
        superseded: str | None = None
        if target is not None:
            superseded = target.text
            del found[_decision_key(target.text)]
        key = _decision_key(text)  # the user's src/store.py and the assistant's `src/store.py`: one decision
        head = _decision_key(text.split(";", 1)[0]) if ";" in text else key
        if (said := self.heads.get(head, key)) != key and said in found and superseded is None:
            if said.startswith(key):  # said again in fewer clauses: what it said besides stays
                key, text = said, found[said].text
            elif key.startswith(said):  # said again with more: the fuller one stands for both
                del found[said]
        found.pop(key, None)
        found[key] = Anchor("decision", text, t.line, superseded)
        self.heads[head] = key
        if key not in keys:
            keys[key] = text.lower()
        for shape in st.shapes if st is not None else ():  # filed for a later restatement
            newest = self.stated.setdefault(shape, [])
            newest.append(key)
            del newest[:-RESTATED_CANDIDATES]

    def _said(self, t: Turn, line: str) -> re.Match[str] | None:
        """The first of the patterns (:data:`_LABELS`, then a choice or a user's imperative) that
        matches ``line``; one is searched only when the line holds a literal it needs."""
        low = lines.lowered(line)  # None: a character folds to ASCII, search each
        for pattern, needs in _LABELS:
            if (low is None or any(map(low.__contains__, needs))) and (m := pattern.search(line)):
                return m
        return _first(
            _choice(line, self.known) if lines.may_match(low, _CHOICE_NEEDS) else None,
            _imperative(line, self.known) if t.role == "user" else None,
        )

    def _target(self, m: re.Match[str], line: str, text: str, st: Statement | None) -> Anchor | None:
        """The earlier decision the one ``m`` found in ``line`` (stating ``text``, ``st``) replaces."""
        found = self.found
        if m.re is _OUT_IN:  # "X is out, Y is in": the newest decision naming X
            x = _decision_key(m.group("x"))
            recent = itertools.islice(reversed(found.items()), REVERSAL_WINDOW)
            return next((a for k, a in recent if x in self.keys[k].replace("`", "")), None)
        named = "rev" in m.re.groupindex and m.group("rev")  # "reversing the earlier call: …"
        if st is not None and (target := self._restated(text, st)) is not None:
            return target
        rev = matches(REVERSAL, line)
        if not named and not rev and matches(REMOVAL, text) and _spend(self.removals):
            # "Decision: remove the advisory lock": it reverses only the decision it names (in what
            # the decision says, not a question before it: "Should we remove X? Decision: not yet.")
            return self._taken_out(text)
        if named or rev:
            target = _reversal_target(line, text, found, self.keys, self._words_of)
            if target is None and named:
                target = next(reversed(found.values()))  # the call it names is the last one made
            if target is None and m.re is _IMPERATIVE and _spend(self.removals):
                target = self._taken_out(text)  # "Actually, drop Avro.": the decision on Avro
            return target or self._returned(text)
        if self.removals[0] > 0 and matches(CHANGE, text) and _spend(self.removals):  # "switch … from X to Z"
            latest = itertools.islice(reversed(found.values()), REVERSAL_WINDOW)
            bare = _SPEAKER.sub("", text, count=1)  # "Let's switch from yarn …": "let" is not what changes
            return next((a for a in latest if names_changed(bare, a.text)), None)
        return self._returned(text)

    def _returned(self, text: str) -> Anchor | None:
        """The newest earlier decision that changed away from what ``text`` keeps or goes back to
        ("keep Celery for the task queue" after "move the task queue from Celery to RQ")."""
        if not (self.removals[0] > 0 and returns(text) and _spend(self.removals)):
            return None
        latest = itertools.islice(reversed(self.found.values()), REVERSAL_WINDOW)
        return next((a for a in latest if names_returned(text, a.text)), None)

    def _refused(self, line: str) -> tuple[re.Match[str], Anchor] | None:
        """A user's keep or use (:func:`_unmarked`) in a line that refuses what an earlier decision
        chose for the same thing ("no Redis please … Keep the window in memory" after "the window lives
        in Redis"), with that decision: the refused name and the kept thing are both in it, and the
        refusal and the keep are about what it is about (their qualifiers are there, but where the
        thing now goes: "in memory")."""
        recent = list(itertools.islice(reversed(self.found.values()), REVERSAL_WINDOW))
        for r in _REFUSED.finditer(line):
            end = _CLAUSE_END.search(line, r.end())
            refusal = line[r.start() : end.start() if end else len(line)]  # "no Redis for the tests"
            x = term_set(r.group("x"))
            for m in _unmarked(line):
                kept = [w for w in _phrase(m.group("obj").split()) if w.lower() not in _DETERMINER]
                thing = term_set(" ".join(kept))
                purpose = [t for p, t in scope(m.group("d")) if p.lower() not in _PLACEMENT]
                for a in recent:
                    have = term_set(a.text)
                    if (
                        x
                        and thing
                        and x <= have
                        and thing <= have
                        and all(t <= have for t in purpose)
                        and in_scope(refusal, a.text)
                    ):
                        return m, a
        return None

    def _taken_out(self, text: str) -> Anchor | None:
        """The newest earlier decision naming what ``text`` takes out (removes, drops, scraps)."""
        text = _SPEAKER.sub("", text, count=1)
        recent = itertools.islice(reversed(self.found.items()), REVERSAL_WINDOW)
        heads = removal_heads(text)  # a set test per earlier decision before the full one
        candidates = [a for k, a in recent if not heads.isdisjoint(self._words_of(k))][:REMOVAL_CANDIDATES]
        return next((a for a in candidates if names_taken_out(text, a.text)), None)

    def _words_of(self, key: str) -> set[str]:
        """The words of the decision filed under ``key``, computed once."""
        if (w := self.words.get(key)) is None:
            w = self.words[key] = _words(self.keys[key])  # lowercased: the same words
        return w

    def _restated(self, text: str, st: Statement) -> Anchor | None:
        """The newest earlier decision ``text`` (stating ``st``) says again with another figure or the
        opposite ("Target Python 3.13" after "Target Python 3.11", "Don't use Redis" after "Use Redis")."""
        for k in reversed(self.stated.get(st.shape, ())):
            a = self.found.get(k)
            if a is not None and restates(text, a.text):
                return a
        return None


# A named thing refused: "no Redis", "not SQS", "without `celery`" (a name: capitalised, a figure,
# an identifier or code), to the clause's end for its qualifiers ("no Redis for the test suite").
_REFUSED = re.compile(
    r"(?:^|(?<=[\s,(]))(?i:no|not|without)\s+"
    r"(?P<x>`[^`\n]+`|[A-Z][\w.+-]*|[\w.+-]*\d[\w.+-]*|\w+[._/]\w[\w./-]*)"
)
_CLAUSE_END = re.compile(r"[,;:!?]|\.(?!\w)")
_PLACEMENT = frozenset({"in", "on", "inside"})  # a kept thing's new place, not a scope ("keep X in memory")

# A decision asked for, not made: "needs an MSRV decision:", "pending decision:", "open decision:".
_ASKED = re.compile(
    r"\b(?:needs?|needed|needing|requires?|pending|awaiting|waiting\s+(?:on|for)|open|undecided|asks?\s+for)"
    r"(?:\s+(?!decisions?\b)[\w/'\u2019-]+(?:\.\w+)*){0,3}\s*$",  # words of the same sentence ("1.82" is one)
    re.IGNORECASE,
)


def _listing(label: str, text: str) -> bool:
    """Whether a decision label heads a file ("Decision: `.squad/decisions/inbox/x.md`") or, plural,
    a count or a fragment ("Merged decisions: 5 Wave 3 entries") rather than a decision."""
    if text.lstrip("`").startswith(("/", "~", ".")) and " " not in text.strip():
        return True
    plural = "decisions" in label.lower()
    return plural and (text[:1].isdigit() or len(text.split()) < MIN_LISTED_WORDS)


MIN_LISTED_WORDS = 3  # a decision under a plural label says at least a verb, its object and more


def _spend(left: list[int] | None) -> bool:
    """Take one removal or change look-up from ``left`` (None: unbounded); False when none is left."""
    if left is None:
        return True
    left[0] -= 1
    return left[0] >= 0


def _decision_key(text: str) -> str:
    return " ".join(text.replace("`", "").lower().split())


# How many of the most recent decisions a reversal is matched against (bounds the work per line).
REVERSAL_WINDOW = 64
MAX_REMOVALS = 500  # removal and change decisions of one session looked back for (a real one states a few)
REMOVAL_CANDIDATES = 2  # of those holding a removal's head term, the newest judged in full (5 MB of removals)
RESTATED_CANDIDATES = 4  # the newest decisions kept per statement shape (a restatement judges these)
MAX_STATED = 2_000  # decisions of one session whose statements are read (a real one states a few dozen)


def _reversal_target(
    line: str,
    text: str,
    earlier: dict[str, Anchor],
    keys: dict[str, str],
    words_of: Callable[[str], set[str]],
) -> Anchor | None:
    """The earlier decision a reversal line (stating ``text``) refers to: named via 'instead of X',
    else most overlap; one about what ``text`` says it is about (:func:`in_scope`: "use SQLite for the
    tests rather than Postgres" leaves "use Postgres for the job queue"), and not one keeping X out
    itself (:func:`keeps_out`: "use date-fns instead of moment.js" says "don't use moment.js" again).

    Newest first, among the last REVERSAL_WINDOW decisions (``earlier`` holds each by its key,
    ``keys`` its lowercased text, ``words_of`` its words).
    """
    x = inst.group("x").strip().lower() if (inst := _INSTEAD_OF.search(line)) else ""
    recent = [
        (k, a)
        for k, a in itertools.islice(reversed(earlier.items()), REVERSAL_WINDOW)
        if not (x and x in keys[k] and keeps_out(norm(x), a.text))  # the cheap test first
    ]
    for k, a in recent if x else ():
        if x in keys[k] and in_scope(text, a.text):
            return a
    words = _words(line)
    best: tuple[float, Anchor] | None = None
    for k, a in recent:
        w = words_of(k)
        if not w:
            continue
        score = len(words & w) / len(w)
        if score > MIN_REVERSAL_OVERLAP and (best is None or score > best[0]) and in_scope(text, a.text):
            best = (score, a)
    return best[1] if best else None
