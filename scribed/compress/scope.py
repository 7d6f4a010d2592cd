"""Where or for what a fact holds (:func:`scope`: "for the tests", "in CI"), and whether a reversal
is about what an earlier fact is about (:func:`in_scope`).

A reversal by "instead of X", a named target or overlap is about what it says it is about: its
qualifiers (not those of a reason after a colon, "because" or "X says") must be in the earlier fact,
and a thing it drops must be the earlier fact's thing, not a part of it ("drop the v1 endpoint
tests" leaves "keep the v1 endpoint"); an unqualified one ("use SQLite instead of Postgres") is
about X wherever.
"""

from __future__ import annotations

import functools
import re

from scribed.compress.reversal_wording import (
    PLACE,
    REASON_OR_NEXT,
    SENTENCE_STOP,
    core_terms,
    instead_of,
    may_reverse,
    targets,
)
from scribed.compress.terms import STOP_TERMS, claim, norm, singular, term_seq

# A qualifier saying where or for what a decision holds ("for the tests", "in CI", "on mobile
# clients"), up to the next qualifier, a conjunction or a break: a later decision so qualified is
# about that, and reverses an earlier one only when it says it too (:func:`in_scope`).
_SCOPE = re.compile(
    r"\b(?P<p>for|in|on|within|across|inside|during)\s+(?!second\s+thought)(?=(?P<s>[^.,;:!?()\n]{1,80}))",
    re.I,
)
_SCOPE_END = re.compile(
    r"\s(?:instead|rather|than|and|but|or|so|because|since|as|with|from|to|over|for|in|on|at|of|when|if|"
    r"until|unless|while|via|by|within|across|inside|during)\b",
    re.I,
)
# A qualifier that is a name is where a thing goes, what is chosen ("store sessions in Postgres")
_NAME = re.compile(r"(?:`[^`]+`|[A-Z][a-z][\w.-]*)(?:\s+(?:`[^`]+`|[A-Z][a-z][\w.-]*))*")
_PATH = re.compile(r"\w/\w|\w\.[a-z]{1,5}\b")
_FIGURE = re.compile(r"v?\d+[a-z%]{0,3}")  # a figure's term ("30" of "for 30 days", "v2")
# What such a qualifier says that is no subject: a time, a reason, a manner ("for now", "for good",
# "in general", "for simplicity", "in favour of", "for the time being")
_NOT_SCOPE = frozenset({
    "now", "good", "later", "time", "being", "while", "simplicity", "performance", "consistency", "safety",
    "clarity", "reason", "reasons", "convenience", "example", "instance", "case", "general", "short", "sure",
    "fact", "particular", "favour", "favor", "place", "mind", "future", "moment", "today", "practice",
})  # fmt: skip


@functools.lru_cache(maxsize=4096)
def scope(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The qualifiers saying where or for what ``text`` holds, in its sentences that reverse
    (:func:`_reversing`), each as its preposition and terms ("use SQLite for the tests rather than
    Postgres": for, tests), but a time, a reason or a figure (:data:`_NOT_SCOPE`; "for now", "for 90
    days": days), no file or path (where the code goes: "in src/auth/session.py") and no name (what
    is chosen: "store sessions in Postgres"), nor one in a reason the sentence gives after the choice
    ("keep fpdf2 for the labels: legal says it is a problem for the print shop": the labels)."""
    out = []
    for m in _SCOPE.finditer(_REASON_TAIL.sub("", _reversing(text))):
        said = _SCOPE_END.split(m.group("s"), maxsplit=1)[0]
        if not _PATH.search(said) and not _NAME.fullmatch(said.strip()) and (terms := _scope_terms(said)):
            out.append((m.group("p").lower(), frozenset(terms)))
    return tuple(out)


# Where a sentence goes on to its reason: a colon, a dash, "because", "since", "so", "X says"
_REASON_TAIL = re.compile(
    r"(?::\s|\s[\u2013\u2014]\s|\s-\s|\s(?:because|since|so)\s|\s\w+\s+says?\s)[^.;!?\n]*", re.I
)


def _reversing(text: str) -> str:
    """The sentences of ``text`` that reverse, remove or change something (all of it when none
    does): a long fact's other sentences say where other things hold."""
    parts = SENTENCE_STOP.split(text)
    if len(parts) == 1:  # one sentence: all of it either way
        return text
    parts = [p for p in parts if may_reverse(p)]
    return " . ".join(parts) if parts else text


def _scope_terms(text: str) -> set[str]:
    """The terms of a qualifier: its words but stop words, times, reasons and figures; short ones
    too ("in CI", "for the UI")."""
    return {
        w
        for w in norm(text).split()
        if w not in STOP_TERMS and w not in _NOT_SCOPE and not _FIGURE.fullmatch(w)
    }


def in_scope(new_text: str, old_text: str) -> bool:
    """Whether ``old_text`` is about what ``new_text`` says it is about: the terms of its qualifiers
    (:func:`scope`; "use SQLite for the tests rather than Postgres" is about the tests, not "use
    Postgres for the job queue") are there, but a qualifier in the place of what it replaces ("store
    sessions in Postgres instead of Redis" after "store sessions in Redis": what changes); and, for
    each thing it takes out or drops that ``old_text`` shares a term with, that thing's head and place
    ("drop the v1 endpoint tests" drops tests, not "keep the v1 endpoint"; "drop Kafka from the
    integration tests")."""
    old = norm(claim(old_text))
    have = set(old.split())
    held = {singular(w) for w in have}  # "for sessions" is about "the session cache"
    tgts = [PLACE.split(REASON_OR_NEXT.split(t, maxsplit=1)[0], maxsplit=1) for t in targets(new_text)]
    replaced: set[str] | None = None  # read when a qualifier is not all in the old fact
    for prep, terms in scope(new_text):
        if {singular(t) for t in terms} <= held:
            continue
        if replaced is None:
            replaced = {
                t
                for x in (*instead_of(new_text), *_REPLACES.findall(new_text), *(w[0] for w in tgts))
                for t in term_seq(x)
            }
        if terms - replaced <= have:
            continue
        if not any(_placed(prep, x).search(old) for x in replaced):
            return False
    for what, *where in tgts:
        core = core_terms(what, have)
        if core and not have.isdisjoint(core):
            place = " ".join(where)
            if core[-1] not in have or not (_PATH.search(place) or _scope_terms(place) <= have):
                return False
    return True


_REPLACES = re.compile(r"\breplac(?:e|es|ed|ing)\s+`?([\w.@/-]+)", re.I)  # "(replaces SQLite)"


@functools.lru_cache(maxsize=1024)
def _placed(prep: str, term: str) -> re.Pattern[str]:
    """``term`` as the place ``prep`` names in a normal form, a word or two after it ("in the job
    queue": queue); compiled once a pair (a pattern per call missed re's cache on a long session)."""
    return re.compile(rf"\b{prep}\s+(?:\w+\s+){{0,2}}?{re.escape(term)}\b")
