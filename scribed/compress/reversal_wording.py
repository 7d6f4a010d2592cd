"""What a reversal says, read from its text alone: its wording (:data:`REVERSAL`, :data:`REMOVAL`,
:data:`CHANGE`, :func:`may_reverse`) and what it names: the X of "instead of X"
(:func:`instead_of`), of "change … from X to Z" (:func:`changes`), of "reversed / dropped / removed
X" (:func:`targets`) and of "keep / revert to X" (:func:`returns`). Whether it reverses a given
earlier fact is :mod:`scribed.compress.reversal`'s; what it is about, :mod:`scribed.compress.scope`'s.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from scribed.compress.lines import lowered, may_match
from scribed.compress.terms import STOP_TERMS, norm, term_seq, term_set

ADVERB_CHARS = 6  # a word ending in "ly" this long is an adverb ("completely"), not a thing named

# The one reversal-phrase rule: anchors (a decision line that reverses an earlier one), the wiki
# (this fact reverses that one) and promotion all gate on it. It was two overlapping patterns
# until the anchors' spoken forms (scratch, change of plan, on second thought, "actually,") joined.
REVERSAL = re.compile(
    r"\b(?:revers(?:e|es|ed|ing)|revert(?:s|ed|ing)?|supersed(?:e|es|ed|ing)|instead\b|no longer|"
    r"scrap(?:s|ped)?|rather than|replac(?:e|es|ed|ing)|drop(?:s|ped|ping)?|abandon(?:s|ed)?|undo(?:es|ne)?|"
    r"retir(?:e|es|ed)|scratch|change of plan|changed? (?:my|our) mind|on second thought)\b|\bactually,",
    re.IGNORECASE,
)
# Taking a thing out ("remove the advisory lock", "stop using Redis") reverses an earlier fact only
# when it names that fact (:func:`targets`, three quarters of its terms): removing is also everyday
# work ("removed the unused import"), so its word alone, with some overlap, reverses nothing.
REMOVAL = re.compile(
    r"\b(?:remov(?:e|es|ed|ing)|delet(?:e|es|ed|ing)|rip(?:s|ped|ping)?\s+out|(?:get|gets|got|getting)\s+rid\s+of|"
    r"ditch(?:es|ed|ing)?|eliminat(?:e|es|ed|ing)|phas(?:e|es|ed|ing)\s+out|"
    r"stop(?:s|ped|ping)?\s+using)\b",
    re.IGNORECASE,
)
# Changing a thing from one value to another names the one it leaves ("switch the cache from Memcached
# to Redis", "upgrade Python from 3.11 over to 3.13", "the migration from Jest to Vitest", "move the
# store off Redis onto Valkey"): a verb or noun of change, then "from/off X to/onto/into Z". Without the change ("copy the files from S3 to GCS", "export
# from Postgres to BigQuery") the earlier place stays in use: nothing is named as left.
CHANGE = re.compile(
    r"\b(?P<verb>switch\w*|mov(?:e|es|ed|ing)|migrat\w*|chang(?:e|es|ed|ing)|convert\w*|"
    r"transition\w*|shift\w*|swap\w*|upgrad\w*|downgrad\w*|bump\w*|updat(?:e|es|ed|ing)|go(?:es|ing)?|went)\b"
    r"(?:[^.;!?\n]|\.(?=\w)){0,60}?\b(?:from|off)\s+(?P<x>`[^`\n]{1,80}`|[^\s,;:!?]+(?:\s+[^\s,;:!?]+){0,5}?)"
    r"\s+(?:over\s+)?(?:on|in)?to\s+(?P<y>`[^`\n]{1,80}`|(?:[^.,;:!?\n]|\.(?=\w)){1,80})",
    re.IGNORECASE,
)
# A removal's target ends before its reason or what comes next ("remove the lock because it
# deadlocks", "remove the lock and use a Redis lease", "remove the lock (it deadlocks)").
REASON_OR_NEXT = re.compile(
    r"\s(?:and|but|because|since|as|so|while|until|when|unless|then)\s|\s*[(,\u2013\u2014]|\s-\s", re.I
)
# A removal (or a change) said not to happen: "don't remove", "do not delete", "never rip out", "no need
# to remove", or wished, proposed or asked for ("Priya wants to switch …").
_NEGATED_BEFORE = re.compile(
    r"(?:\b(?:not|never|no need to|shouldn't|won't|can't|cannot|against|nobody|no one|wants?|wanted|"
    r"would like|suggest\w*|propos\w*|asks?|asked|consider\w*|debat\w*)|n't)"
    r"(?:[\s,]+\w+){0,5}[\s,]+$",  # "we must not, under any circumstances, remove"
    re.I,
)
# Or only said possible, in its own clause ("we might switch …", "maybe move …"; not "Redis could
# not keep up, so switch …": a reason before it, past a comma).
_HEDGED_BEFORE = re.compile(r"\b(?:might|could|may|maybe|perhaps|possibly)(?:\s+\w+){0,3}\s+$", re.I)
# Or named as a thing, not done: its verb's -ing taken by a preposition that speaks of the act
# ("the impact of changing …", "a plan for switching …", "before migrating …", "without moving …",
# "instead of switching …"). One that tells of it done ("after switching …", "by moving …", "since
# migrating …") or chosen ("decided on moving …", "committed to switching …") is not here: a
# finite or imperative verb ("switched", "switch …", "we moved") makes the change.
_GERUND = re.compile(r"\w+ing\b", re.I)
_SPOKEN_OF = re.compile(
    r"\b(?:of|for|about|before|without|into|over|regarding|concerning|towards?)(?:\s+\w+ly)?\s+$", re.I
)
# Where a removal's thing ends and its place begins ("Redis | from the pricing service").
PLACE = re.compile(r"\s(?:from|in|for|on|at|of|across|within|inside)\s", re.I)
_INSTEAD_OF = re.compile(
    r"\b(?:instead of|rather than)\s+(?:`(?P<code>[^`\n]{1,80})`|(?P<x>[^,.;:!?\n]{2,80}))", re.I
)
# "revert to X" goes back to X (:data:`_RETURN`): it names no target it reverts
_VERB_TARGET = re.compile(
    r"\b(?:revers(?:e|es|ed|ing)|revert(?:s|ed|ing)?(?!\s+(?:back\s+)?to\b)|drop(?:s|ped|ping)?|scrap(?:s|ped)?|abandon(?:s|ed)?|"
    r"undo(?:es|ne)?|retir(?:e|es|ed)|replac(?:e|es|ed|ing)|supersed(?:e|es|ed|ing)|no longer|"
    r"remov(?:e|es|ed|ing)|delet(?:e|es|ed|ing)|rip(?:s|ped|ping)?\s+out|(?:get|gets|got|getting)\s+rid\s+of|"
    r"ditch(?:es|ed|ing)?|eliminat(?:e|es|ed|ing)|phas(?:e|es|ed|ing)\s+out|"
    r"stop(?:s|ped|ping)?\s+using)\s+"
    r"(?:(?:the|our|my|this|that|an?)\s+)?(?:(?:earlier|previous|prior|old|original|initial)\s+)?"
    r"(?:(?:decision|choice|plan|approach|idea|call|rule|convention)\s+)?(?:(?:to|of|on|about|that|for)\s+|:\s*)?"
    r"(?P<x>[^.;!?\n]{3,160})",
    re.I,
)
_PASSIVE = re.compile(
    r"\s(?:is|are|was|were|has been|have been)\s+(?:now\s+)?"
    r"(?:no longer used|replaced|superseded|dropped|reverted|deprecated|retired|abandoned)\b",
    re.I,
)
_CLAUSE_START = re.compile(r"[.;!?\n]")
SENTENCE_STOP = re.compile(r"[.!?](?=\s|$)|[;\n]")  # not the dot of "go.mod"
_LEAD_END = re.compile(r"\s(?:for|in|on|at|to|with|when|because|since|so|as|from|by|and|or)\s", re.I)
_TAIL = re.compile(r"\s(?:with|by|in favou?r of|and (?:use|go|switch|move))\s.*$", re.I)

# Choosing a thing again ("keep fpdf2", "revert to Jest", "go back to MkDocs", "stay on Debian 11"):
# what follows the verb, to the clause's end; its lead (:func:`_lead`) is the thing chosen.
_RETURN = re.compile(
    r"\b(?:keep(?:s|ing)?|revert(?:s|ed|ing)?\s+to|back\s+to|stick(?:s|ing)?\s+(?:with|to)|"
    r"stay(?:s|ed|ing)?\s+(?:on|with)|return(?:s|ed|ing)?\s+to)\s+(?P<x>`[^`\n]{1,80}`|[^,;:!?\n()]{1,80})",
    re.I,
)
RETURN_TERMS = 3  # a thing chosen again is named in a few terms ("fpdf2", "Debian 11"), not a clause

# The literals every match of a pattern holds, lowercase: a text holding none of a pattern's is not
# searched with it (:func:`matches`; a search tries each character, a literal's test is one scan in C).
NEEDS: dict[re.Pattern[str], tuple[str, ...]] = {
    REVERSAL: (
        "revers", "revert", "supersed", "instead", "no longer", "scrap", "rather than", "replac", "drop", "abandon",
        "undo", "retir", "scratch", "change of plan", "mind", "on second thought", "actually,",
    ),
    REMOVAL: ("remov", "delet", "rip", "rid", "ditch", "eliminat", "phas", "stop"),
    CHANGE: ("from", "off"),
    _PASSIVE: ("no longer used", "replaced", "superseded", "dropped", "reverted", "deprecated", "retired", "abandoned"),
    _RETURN: ("keep", "revert", "back", "stick", "stay", "return"),
}  # fmt: skip


def matches(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``pattern`` (one of :data:`NEEDS`) matches ``text``."""
    return may_match(lowered(text), NEEDS[pattern]) and pattern.search(text) is not None


def _lead(x: str) -> str:
    """What "instead of X" names: X up to its first preposition ("pip" of "pip for installs")."""
    m = _LEAD_END.search(f" {x} ")
    lead = norm(f" {x} "[: m.start()] if m else x).split()
    while lead and lead[0] in STOP_TERMS:
        lead.pop(0)
    return " ".join(lead)


def instead_of(new_text: str) -> list[str]:
    """What "instead of X" / "rather than X" name, normalised (X's lead)."""
    leads = (
        norm(m.group("code")) if m.group("code") else _lead(m.group("x"))
        for m in _INSTEAD_OF.finditer(new_text)
    )
    return [x for x in leads if x]


# A fact keeps X out in its own words when X follows "instead of" / "rather than" or a negation in
# its clause ("don't use X", "never store secrets in X", "no X", "avoid X"): "instead of X" then
# says it again, and reverses it only where X is to be done. A clause ends at a stop, a break or a
# conjunction ("we don't need a queue because Redis …" keeps Redis in).
_KEPT_OUT = frozenset({"not", "never", "no", "t", "cannot", "nor", "without", "against", "avoid", "avoids"})


def keeps_out(x: str, text: str) -> bool:
    """Whether ``text`` names X (normalised) only to keep it out (:data:`_KEPT_OUT`), each time
    it names it; False when it does not name it."""
    said, free = _said_free(text)
    return f" {x} " in said and f" {x} " not in free


@functools.lru_cache(maxsize=4096)  # a reversal line tests the few decisions before it: the same texts
def _said_free(text: str) -> tuple[str, str]:
    """``text``'s clauses, normalised, and each one's words before its first mark keeping out what
    follows (:data:`_KEPT_OUT`, "instead of", "rather than"), each clause between " | "."""
    said, free = [], []
    for clause in (c for s in SENTENCE_STOP.split(text) for c in REASON_OR_NEXT.split(s)):
        words = norm(clause).split()
        cut = next(
            (i for i, w in enumerate(words) if w in _KEPT_OUT or words[i : i + 2] in _PAIRS), len(words)
        )
        said.append(" ".join(words))
        free.append(" ".join(words[:cut]))
    return f" {' | '.join(said)} ", f" {' | '.join(free)} "


_PAIRS = (["instead", "of"], ["rather", "than"])


@functools.lru_cache(maxsize=4096)
def changes(new_text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """What "change … from X to Z" names: X's lead, normalised, and what the change is about (the
    terms of its sentence but X's, Z's lead's and the verb's: "the cache" of "switch the cache from
    Memcached to Redis"; none: X changes everywhere)."""
    out = []
    for m in CHANGE.finditer(new_text):
        if _unsaid(new_text, m):
            continue  # "don't switch …", "Priya wants to switch …", "should we switch …?"
        x, y = m.group("x"), m.group("y")
        lead = norm(x) if x.startswith("`") else _lead(x)
        to = norm(y) if y.startswith("`") else _lead(y)
        if lead:
            lo = max((c.end() for c in SENTENCE_STOP.finditer(new_text, 0, m.start())), default=0)
            end = SENTENCE_STOP.search(new_text, m.end())
            said = new_text[lo : end.start() if end else len(new_text)]
            about = term_set(said) - term_set(x) - term_set(to) - term_set(m.group("verb"))
            out.append((lead, frozenset(about)))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def returns(new_text: str) -> tuple[str, ...]:
    """What ``new_text`` chooses again ("keep fpdf2 for the labels": fpdf2), normalised: the lead
    of what a verb of keeping or going back takes, in a few terms, not said not to happen."""
    out: list[str] = []
    if not may_match(lowered(new_text), NEEDS[_RETURN]):
        return ()
    for m in _RETURN.finditer(new_text):
        x = m.group("x")
        lead = norm(x) if x.startswith("`") else _lead(re.split(r"\.(?!\w)", x, maxsplit=1)[0])
        if lead and len(term_seq(lead)) <= RETURN_TERMS and not _unsaid(new_text, m):
            out.append(lead)
    return tuple(out)


def bare_return(new_text: str) -> bool:
    """Whether the choice again is said bare: nothing before its verb in its clause but a lead-in
    ("On second thought, keep Jest.", "hmm, RQ lacks retries. keep Celery."): it says nothing of
    another subject, so the thing it names is the change's (a review's: "stick with Jest" left
    "switch the test runner from Jest to Vitest" current, for want of a second shared term)."""
    m = _RETURN.search(new_text)
    if m is None:
        return False
    clause = re.split(r"[,;:.!?]", new_text[: m.start()])[-1]
    return not term_seq(clause)


@functools.lru_cache(maxsize=4096)
def targets(text: str) -> tuple[str, ...]:
    """What a reversal names with a verb ("reversed the earlier decision to X", "X is dropped"). A
    "replace X" names X only with what replaces it ("with Y", "by Y"): "sets/replaces the config"
    describes an operation, not a change of mind."""
    out = []
    for m in _VERB_TARGET.finditer(text):
        x = m.group("x")
        if REMOVAL.match(m.group(0)):  # what is taken out ends where a reason or a next step starts
            if _unsaid(text, m):
                continue  # "don't remove the lock", "should we remove the lock?" keep it
            x = REASON_OR_NEXT.split(x, maxsplit=1)[0]
        elif m.group(0)[:5].lower().startswith("repla"):
            cut = _TAIL.sub("", x)
            if cut == x or text[m.start() - 1 : m.start()] == "/":
                continue
            x = cut
        out.append(x)
    for m in _PASSIVE.finditer(text) if may_match(lowered(text), NEEDS[_PASSIVE]) else ():
        starts = [c.end() for c in _CLAUSE_START.finditer(text, 0, m.start())]
        out.append(text[(starts[-1] if starts else 0) : m.start()][-120:])
    return tuple(t for t in out if term_seq(t))


def _unsaid(text: str, m: re.Match[str]) -> bool:
    """Whether the act ``m`` found is said not to happen, wished or asked: negated or wished before
    it in its sentence (:data:`_NEGATED_BEFORE`), only said possible (:data:`_HEDGED_BEFORE`),
    only spoken of (:data:`_SPOKEN_OF`: "assessed the impact of changing X from A to B" reports an
    analysis, and retired the fact about A), or in a question."""
    lo = max(0, m.start() - 80, *(c.end() for c in SENTENCE_STOP.finditer(text, 0, m.start())))
    return (
        _NEGATED_BEFORE.search(text, lo, m.start()) is not None
        or _HEDGED_BEFORE.search(text, lo, m.start()) is not None
        or (_GERUND.match(text, m.start()) is not None and _gerund_spoken_of(text, lo, m))
        or _asked(text, m.end())
    )


def _gerund_spoken_of(text: str, lo: int, m: re.Match[str]) -> bool:
    """Whether an act said in its -ing form is only named, not done: taken by a preposition that
    speaks of it (:data:`_SPOKEN_OF`), by another verb ("evaluating moving …", "investigate switching
    …"), or the subject of a clause saying what it would do ("Switching … would cut latency"). Done
    or under way: after a form of "be" ("we are switching …") or a preposition telling it done or
    chosen ("after switching", "by moving", "decided on moving", "committed to switching")."""
    if _SPOKEN_OF.search(text, lo, m.start()) is not None:
        return True
    before = _LAST_WORD.search(text, lo, m.start())
    if before is None:  # it begins its sentence: a subject, unless it is a heading of work done
        end = SENTENCE_STOP.search(text, m.start())
        return _MODAL.search(text, m.start(), end.start() if end else len(text)) is not None
    word = before.group(1).lower()
    return not (word in _BE_OR_DONE or word.endswith(("'re", "'s", "’re", "’s")))


# The word before an -ing act in its sentence; the forms of "be" and the prepositions that make it
# one done, under way or chosen; the modal verbs that make a subject's act a supposition.
_LAST_WORD = re.compile(r"([\w'’]+)[\s,]*$")
_BE_OR_DONE = frozenset(
    ("am", "is", "are", "was", "were", "be", "been", "being", "after", "by", "since", "upon", "on", "to")
)
_MODAL = re.compile(r"\b(?:would|could|should|might|may|will|can)\b", re.I)


def _asked(text: str, pos: int) -> bool:
    """Whether the sentence going on at ``pos`` is a question."""
    end = SENTENCE_STOP.search(text, pos)
    return end is not None and end.group() == "?"


def may_reverse(text: str) -> bool:
    """Whether ``text`` has any wording a reversal needs (:data:`REVERSAL`, :data:`REMOVAL` or
    :data:`CHANGE`); a restatement (:func:`~scribed.compress.reversal.restated`) needs none."""
    return any(matches(p, text) for p in (REVERSAL, REMOVAL, CHANGE))


def removal_heads(new_text: str) -> frozenset[str]:
    """The head terms of what a removal names (the last term of each target's thing): an earlier
    fact without one of them cannot be the one removed (a cheap test before
    :func:`~scribed.compress.reversal.names_removed`)."""
    out = set()
    for t in targets(new_text):
        what = PLACE.split(t, maxsplit=1)[0]
        if core := core_terms(what):
            out.add(core[-1])
    return frozenset(out)


def core_terms(target: str, have: Iterable[str] = ()) -> list[str]:
    """A target's terms without the adverbs that end it ("remove the lock completely": how, not
    what), unless the earlier fact holds them too ("hourly" inside "the hourly backup" stays)."""
    want, held = list(term_seq(target)), set(have)
    while want and _adverb(want[-1]) and want[-1] not in held:
        want.pop()
    return want


def _adverb(word: str) -> bool:
    """A word ending in "ly" this long is an adverb ("completely"): it says how, not what."""
    return word.endswith("ly") and len(word) >= ADVERB_CHARS
