"""The decisions a session states, in order, and the reversals that replace them.

A decision is stated ("Decision: …", "we decided to …", "let's go with …", "scratch that, …"); a
later one that reverses an earlier ("instead of X", or most of its words with reversal wording,
:data:`scribed.compress.reversal.REVERSAL`) replaces it and names it as superseded, so a reversed
decision is never shown as current. Fed a turn's lines at a time (those :data:`WORDS` names), in
time linear in the session.
"""

from __future__ import annotations

import itertools
import re

from scribed.compress import lines
from scribed.compress.anchor_text import clean
from scribed.compress.reversal import REMOVAL, REVERSAL, names_removed, removal_heads
from scribed.models import Anchor, Turn

_DECISION = re.compile(
    r"(?:^|[\s*_>-])(?:decision|decided|final decision|revised decision)\**\s*(?:\([^)]{0,40}\)\s*)?\**\s*[:：]"
    r"\s*(?P<d>.+)",
    re.IGNORECASE,
)
_DECISION_VERB = re.compile(
    r"\b(?:we|i|team)\s+(?:have\s+)?(?:decided|agreed|chose|will go with|are going with)\s+(?:to\s+|on\s+)?(?P<d>.+)",
    re.IGNORECASE,
)
# Other ways agents state a decision, and reversals that name only the new choice.
_DECISION_MORE = re.compile(
    r"(?:\blet(?:'|’)?s go with\b[^:]{0,40}[:,]?|\bgoing with\b[^:]{0,40}:|\bthe plan is to\b|"
    r"\bchange of plan\s*[:,]|\bactually,[^:]{0,60}:|\bscratch (?:that|the [^.]{1,40}idea)[.;,!]\s*"
    r"(?:we should|let(?:'|’)?s|we(?:'|’)ll)?|"
    # a reversal naming what it reverses: "reversing the earlier call: …", "overriding my decision —"
    r"(?P<rev>\b(?:revers|revert|overrid)\w*\s+(?:(?:the|our|my|that)\s+)?(?:(?:earlier|previous|last|original)\s+)?"
    r"(?:call|decision|choice|plan|approach)\s*[:—–-]+))\s*(?P<d>[^;]+)",
    re.IGNORECASE,
)
_INSTEAD_OF = re.compile(
    r"\b(?:instead of|rather than|replac(?:e|es|ing))\s+`?(?P<x>[^`,.;]{2,60})", re.IGNORECASE
)
# Each pattern above needs one of these literals, whatever its case (a line without them is skipped).
WORDS = lines.prefilter(
    "decision", "decided", "agreed", "chose", "go with", "going with", "plan is to", "change of plan", "actually,",
    "scratch", "revers", "revert", "overrid",
)  # fmt: skip
MIN_REVERSAL_OVERLAP = 0.25  # share of a decision's words a reversal must repeat to name it
MIN_DECISION_CHARS = 4


def stated(line: str) -> bool:
    """Whether ``line`` states a decision in so many words ("Decision: …", "we decided to …")."""
    return _DECISION.search(line) is not None or _DECISION_VERB.search(line) is not None


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip(), maxsplit=1)[0]


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
    and a reversal looks back at the REVERSAL_WINDOW most recent ones, whose words are computed once.
    """

    def __init__(self) -> None:
        self.found: dict[str, Anchor] = {}  # by _decision_key
        self.keys: dict[str, tuple[str, set[str]]] = {}  # _decision_key -> (lowercased text, words)
        self.removals = [MAX_REMOVALS]  # removal look-ups left (bounded work on a flood of them)

    def feed(self, t: Turn, ls: list[str]) -> None:
        """``t``'s lines that mention a decision word (:func:`lines.mentioning` with :data:`WORDS`)."""
        for line in ls:
            _decision_line(t, line, self.found, self.keys, self.removals)

    def result(self) -> list[Anchor]:
        return list(self.found.values())


def _decision_line(
    t: Turn,
    line: str,
    found: dict[str, Anchor],
    keys: dict[str, tuple[str, set[str]]],
    removals: list[int] | None = None,
) -> None:
    """Record the decision one line states (a reversal replaces the decision it reverses)."""
    m = _DECISION.search(line) or _DECISION_VERB.search(line) or _DECISION_MORE.search(line)
    if not m:
        return
    text = clean(_first_sentence(m.group("d")).split(";")[0].split(", since ")[0])
    if len(text) < MIN_DECISION_CHARS:
        return
    superseded: str | None = None
    named = "rev" in m.re.groupindex and m.group("rev")  # "reversing the earlier call: …"
    if found and not named and not REVERSAL.search(line) and REMOVAL.search(text) and _spend(removals):
        # "Decision: remove the advisory lock": it reverses only the decision it names (in what
        # the decision says, not a question before it: "Should we remove X? Decision: not yet.")
        recent = itertools.islice(reversed(found.items()), REVERSAL_WINDOW)
        heads = removal_heads(text)  # a set test per earlier decision before the full one
        candidates = [a for k, a in recent if not heads.isdisjoint(keys[k][1])][:REMOVAL_CANDIDATES]
        if (target := next((a for a in candidates if names_removed(text, a.text)), None)) is not None:
            superseded = target.text
            del found[_decision_key(target.text)]
    elif found and (named or REVERSAL.search(line)):
        target = _reversal_target(line, found, keys)
        if target is None and named:
            target = next(reversed(found.values()))  # the call it names is the last one made
        if target is not None:
            superseded = target.text
            del found[_decision_key(target.text)]
    key = _decision_key(text)  # the user's src/store.py and the assistant's `src/store.py`: one decision
    found.pop(key, None)
    found[key] = Anchor("decision", text, t.line, superseded)
    if key not in keys:
        keys[key] = (text.lower(), _words(text))


def _spend(left: list[int] | None) -> bool:
    """Take one removal look-up from ``left`` (None: unbounded); False when none is left."""
    if left is None:
        return True
    left[0] -= 1
    return left[0] >= 0


def _decision_key(text: str) -> str:
    return " ".join(text.replace("`", "").lower().split())


# How many of the most recent decisions a reversal is matched against (bounds the work per line).
REVERSAL_WINDOW = 64
MAX_REMOVALS = 500  # removal decisions of one session looked back for (a real one states a few)
REMOVAL_CANDIDATES = 2  # of those holding a removal's head term, the newest judged in full (5 MB of removals)


def _reversal_target(
    line: str, earlier: dict[str, Anchor], keys: dict[str, tuple[str, set[str]]]
) -> Anchor | None:
    """The earlier decision a reversal line refers to: named via 'instead of X', else most overlap.

    Newest first, among the last REVERSAL_WINDOW decisions.
    """
    recent = list(itertools.islice(reversed(earlier.values()), REVERSAL_WINDOW))
    inst = _INSTEAD_OF.search(line)
    if inst:
        x = inst.group("x").strip().lower()
        for a in recent:
            if x and x in keys[_decision_key(a.text)][0]:
                return a
    words = _words(line)
    best: tuple[float, Anchor] | None = None
    for a in recent:
        w = keys[_decision_key(a.text)][1]
        if not w:
            continue
        score = len(words & w) / len(w)
        if score > MIN_REVERSAL_OVERLAP and (best is None or score > best[0]):
            best = (score, a)
    return best[1] if best else None
