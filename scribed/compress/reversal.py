"""When one fact reverses another: text normalisation and the reversal rules of the wiki.

Identifiers are compared normalised: case, ``-``/``_``/space and backticks do not matter, so
``scheduler-p1``, ``scheduler_p1``, ``\\`Scheduler_P1\\``` and "scheduler p1" are one thing.

A later fact reverses an earlier one when it has reversal wording and names what it reverses:

* "instead of X" / "rather than X": X's lead (up to a preposition) appears in the earlier fact;
* "reversed / reverted / dropped / replaced / scrapped (the earlier decision to) X", "no longer X",
  "X is replaced / dropped / no longer used": most of X's words (and identifiers) are in it;
* "change / switch / move / migrate / upgrade … (the Y) from X to Z": X's lead appears in the earlier
  fact, as for "instead of X", or the change names nothing besides X, Z and its verb (it is X's
  change everywhere);
* "keep / revert to / go back to / stick with / stay on X" where the earlier fact changed "from X to
  Z" and shares one of the change's other terms: X chosen again ("keep fpdf2 for the labels" after
  "switch kelpie/labels.py from fpdf2 to reportlab"), whatever the wording;
* otherwise reversal wording alone and at least half of the earlier fact's content words repeated.

A fact that says an earlier one again with another figure, or the opposite of it, reverses it too
(:mod:`scribed.compress.restate`), whatever its wording.

A reversal by "instead of X", a named target or overlap is about what it says it is about
(:func:`in_scope`): its qualifiers ("for the tests", "in CI"; not those of a reason after a colon,
"because" or "X says") must be in the earlier fact, and a thing it drops must be the earlier fact's
thing, not a part of it ("drop the v1 endpoint tests" leaves "keep the v1 endpoint"); an unqualified
one ("use SQLite instead of Postgres") is about X wherever.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable

from scribed.compress.restate import differs, restates

NEAR_DUP = 0.9  # token-set Jaccard at or above which two facts are the same fact
OVERLAP = 0.5  # share of an earlier fact's content words a reversal must repeat
TARGET_SHARE = 0.75  # share of a named target's words the earlier fact must hold
SAME_FACT_SHARE = 0.6  # token-set Jaccard at or above which a reference names a fact
CONTAINED_CHARS = 12  # a reference this long inside a fact (or a fact inside it) names it
MIN_WORD = 3  # shorter words are not content words (unless they hold a digit)
SHORT_FACT_TERMS = 6  # a fact this short is about any one term "instead of" names
MIN_OVERLAP_WORDS = 3  # an earlier fact needs this many content words for an overlap reversal
ADVERB_CHARS = 6  # a word ending in "ly" this long is an adverb ("completely"), not a thing named
NAMED = 2.0  # the score of a reversal naming the earlier fact ("instead of X", "from X to Z")
RESTATED = 2.0  # the score of a restatement (another figure, the other polarity): it names it whole

_SUPERSEDES_SUFFIX = re.compile(r"\s*\(supersedes: (?P<s>.+?)\)?\s*$")
_MD = re.compile(r"[`*_>#\[\]()~|]")
_NON_WORD = re.compile(r"[^\w]+")
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
# to Redis", "upgrade Python from 3.11 over to 3.13", "the migration from Jest to Vitest"): a verb or
# noun of change, then "from X to Z". Without the change ("copy the files from S3 to GCS", "export
# from Postgres to BigQuery") the earlier place stays in use: nothing is named as left.
CHANGE = re.compile(
    r"\b(?P<verb>switch\w*|mov(?:e|es|ed|ing)|migrat\w*|chang(?:e|es|ed|ing)|convert\w*|"
    r"transition\w*|shift\w*|swap\w*|upgrad\w*|downgrad\w*|bump\w*|updat(?:e|es|ed|ing)|go(?:es|ing)?|went)\b"
    r"(?:[^.;!?\n]|\.(?=\w)){0,60}?\bfrom\s+(?P<x>`[^`\n]{1,80}`|[^\s,;:!?]+(?:\s+[^\s,;:!?]+){0,5}?)"
    r"\s+(?:over\s+)?to\s+(?P<y>`[^`\n]{1,80}`|(?:[^.,;:!?\n]|\.(?=\w)){1,80})",
    re.IGNORECASE,
)
# A removal's target ends before its reason or what comes next ("remove the lock because it
# deadlocks", "remove the lock and use a Redis lease", "remove the lock (it deadlocks)").
_REASON_OR_NEXT = re.compile(
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
# Where a removal's thing ends and its place begins ("Redis | from the pricing service").
_PLACE = re.compile(r"\s(?:from|in|for|on|at|of|across|within|inside)\s", re.I)
_INSTEAD_OF = re.compile(
    r"\b(?:instead of|rather than)\s+(?:`(?P<code>[^`\n]{1,80})`|(?P<x>[^,.;:!?\n]{2,80}))", re.I
)
# "revert to X" goes back to X (:data:`_RETURN`): it names no target it reverts
_VERB_TARGET = re.compile(
    r"\b(?:revers(?:e|es|ed|ing)|revert(?:s|ed|ing)?(?!\s+to\b)|drop(?:s|ped|ping)?|scrap(?:s|ped)?|abandon(?:s|ed)?|"
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
_SENTENCE_STOP = re.compile(r"[.!?](?=\s|$)|[;\n]")  # not the dot of "go.mod"
_LEAD_END = re.compile(r"\s(?:for|in|on|at|to|with|when|because|since|so|as|from|by|and|or)\s", re.I)
_TAIL = re.compile(r"\s(?:with|by|in favou?r of|and (?:use|go|switch|move))\s.*$", re.I)
_STOP = {
    "the", "and", "for", "use", "uses", "using", "with", "this", "that", "from", "instead", "decision",
    "decided", "will", "are", "our", "not", "now", "reverse", "reverses", "reversed", "reversing", "revert",
    "earlier", "previous", "rather", "than", "into", "when", "all", "any", "its", "was", "were", "has",
    "have", "been", "longer", "replace", "replaces", "replacing", "supersedes", "should", "then", "them",
    "they", "but", "via", "we", "to", "of", "in", "on", "at", "is", "it", "an", "be", "by", "or", "as",
    "no", "so", "do", "go", "up",
}  # fmt: skip


def strip_supersedes(text: str) -> tuple[str, str]:
    """Split a trailing ``(supersedes: OLD)`` off a decision: (text, OLD)."""
    if "(supersedes:" not in text:  # first: the search tries every position of the text
        return text.strip(), ""
    m = _SUPERSEDES_SUFFIX.search(text)
    if not m:
        return text.strip(), ""
    return text[: m.start()].strip(), m.group("s").strip().rstrip(")")


@functools.lru_cache(maxsize=8192)
def norm(text: str) -> str:
    """Casefolded, markdown and punctuation stripped, ``-``/``_`` as spaces, whitespace collapsed."""
    text = strip_supersedes(text)[0].casefold()
    text = _MD.sub(" ", text)
    text = _NON_WORD.sub(" ", text).replace("_", " ")
    return " ".join(text.split())


def words(text: str) -> set[str]:
    """Content words for overlap tests (short and stop words dropped)."""
    return {w for w in norm(text).split() if len(w) >= MIN_WORD and w not in _STOP}


def terms(text: str) -> set[str]:
    """What a named target is made of: content words and short identifiers such as ``p1``."""
    return set(_seq(text))


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def near_dup(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one fact: the same words, or nearly, and not one statement with
    another figure or the other polarity ("keep logs for 30 days" is not "… for 90 days")."""
    na, nb = norm(a), norm(b)
    if not na or not nb:
        return False
    return (na == nb or jaccard(set(na.split()), set(nb.split())) >= NEAR_DUP) and not differs(a, b)


def same_fact(ref: str, text: str) -> bool:
    """Whether a ``supersedes`` reference names ``text`` (equal, contained or mostly the same words)."""
    a, b = norm(ref), norm(text)
    if not a or not b:
        return False
    if a == b or (len(a) >= CONTAINED_CHARS and a in b) or (len(b) >= CONTAINED_CHARS and b in a):
        return True
    return jaccard(set(a.split()), set(b.split())) >= SAME_FACT_SHARE


def _lead(x: str) -> str:
    """What "instead of X" names: X up to its first preposition ("pip" of "pip for installs")."""
    m = _LEAD_END.search(f" {x} ")
    lead = norm(f" {x} "[: m.start()] if m else x).split()
    while lead and lead[0] in _STOP:
        lead.pop(0)
    return " ".join(lead)


def _named(new_text: str) -> list[str]:
    """What "instead of X" / "rather than X" name, normalised (X's lead)."""
    leads = (
        norm(m.group("code")) if m.group("code") else _lead(m.group("x"))
        for m in _INSTEAD_OF.finditer(new_text)
    )
    return [x for x in leads if x]


@functools.lru_cache(maxsize=4096)
def _changes(new_text: str) -> tuple[tuple[str, frozenset[str]], ...]:
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
            lo = max((c.end() for c in _SENTENCE_STOP.finditer(new_text, 0, m.start())), default=0)
            end = _SENTENCE_STOP.search(new_text, m.end())
            said = new_text[lo : end.start() if end else len(new_text)]
            about = set(_seq(said)) - set(_seq(x)) - set(_seq(to)) - set(_seq(m.group("verb")))
            out.append((lead, frozenset(about)))
    return tuple(out)


def _about(x: str, old_text: str, old_seq: set[str]) -> bool:
    """Whether the earlier fact is about what a reversal names (normalised ``x``): it is there, a
    quarter of its terms at least, and more than one term, or the fact is short, or an identifier."""
    xs = set(_seq(x))
    return (
        f" {x} " in f" {norm(old_text)} "
        and len(xs & old_seq) >= max(1, len(old_seq) / 4)
        and (len(xs) > 1 or len(old_seq) <= SHORT_FACT_TERMS or _codeish(old_text, x))
    )


def names_changed(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` changes what ``old_text`` is about from one thing to another ("switch the
    cache from Memcached to Redis" and "use Memcached for the cache"): the earlier fact is about X,
    and shares one of the change's other terms, or the change has none."""
    old_text = claim(old_text)
    old_seq = set(_seq(old_text))
    return any(
        _about(x, old_text, old_seq) and (not about or bool(about & old_seq))
        for x, about in _changes(new_text)
    )


# Choosing a thing again ("keep fpdf2", "revert to Jest", "go back to MkDocs", "stay on Debian 11"):
# what follows the verb, to the clause's end; its lead (:func:`_lead`) is the thing chosen.
_RETURN = re.compile(
    r"\b(?:keep(?:s|ing)?|revert(?:s|ed|ing)?\s+to|back\s+to|stick(?:s|ing)?\s+(?:with|to)|"
    r"stay(?:s|ed|ing)?\s+(?:on|with)|return(?:s|ed|ing)?\s+to)\s+(?P<x>`[^`\n]{1,80}`|[^,;:!?\n()]{1,80})",
    re.I,
)
RETURN_TERMS = 3  # a thing chosen again is named in a few terms ("fpdf2", "Debian 11"), not a clause


@functools.lru_cache(maxsize=4096)
def returns(new_text: str) -> tuple[str, ...]:
    """What ``new_text`` chooses again ("keep fpdf2 for the labels": fpdf2), normalised: the lead
    of what a verb of keeping or going back takes, in a few terms, not said not to happen."""
    out = []
    for m in _RETURN.finditer(new_text):
        x = m.group("x")
        lead = norm(x) if x.startswith("`") else _lead(re.split(r"\.(?!\w)", x, maxsplit=1)[0])
        if lead and len(_seq(lead)) <= RETURN_TERMS and not _unsaid(new_text, m):
            out.append(lead)
    return tuple(out)


def names_returned(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` chooses again what ``old_text`` changed away from, on its subject ("keep
    fpdf2 for the labels" after "switch kelpie/labels.py from fpdf2 to reportlab"): the thing it keeps
    or goes back to is the change's X, and it shares one of the change's other terms, and it is about
    what the change is about (:func:`in_scope`)."""
    back = returns(new_text)
    if not back:
        return False
    old_text = claim(old_text)
    mine = set(_seq(new_text))
    bare = _bare_return(new_text)
    return any(
        x in back and (not about or bool(about & mine) or bare) and in_scope(new_text, old_text)
        for x, about in _changes(old_text)
    )


def _bare_return(new_text: str) -> bool:
    """Whether the choice again is said bare: nothing before its verb in its clause but a lead-in
    ("On second thought, keep Jest.", "hmm, RQ lacks retries. keep Celery."): it says nothing of
    another subject, so the thing it names is the change's (a review's: "stick with Jest" left
    "switch the test runner from Jest to Vitest" current, for want of a second shared term)."""
    m = _RETURN.search(new_text)
    if m is None:
        return False
    clause = re.split(r"[,;:.!?]", new_text[: m.start()])[-1]
    return not _seq(clause)


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
    parts = [p for p in _SENTENCE_STOP.split(text) if may_reverse(p)]
    return " . ".join(parts) if parts else text


def _scope_terms(text: str) -> set[str]:
    """The terms of a qualifier: its words but stop words, times, reasons and figures; short ones
    too ("in CI", "for the UI")."""
    return {
        w for w in norm(text).split() if w not in _STOP and w not in _NOT_SCOPE and not _FIGURE.fullmatch(w)
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
    tgts = [_PLACE.split(_REASON_OR_NEXT.split(t, maxsplit=1)[0], maxsplit=1) for t in targets(new_text)]
    replaced = {
        t for x in (*_named(new_text), *_REPLACES.findall(new_text), *(w[0] for w in tgts)) for t in _seq(x)
    }
    for prep, terms in scope(new_text):
        if terms - replaced <= have:
            continue
        if not any(re.search(rf"\b{prep}\s+(?:\w+\s+){{0,2}}?{re.escape(x)}\b", old) for x in replaced):
            return False
    for what, *where in tgts:
        core = _core(what, have)
        if core and not have.isdisjoint(core):
            place = " ".join(where)
            if core[-1] not in have or not (_PATH.search(place) or _scope_terms(place) <= have):
                return False
    return True


_REPLACES = re.compile(r"\breplac(?:e|es|ed|ing)\s+`?([\w.@/-]+)", re.I)  # "(replaces SQLite)"


def _codeish(raw: str, term: str) -> bool:
    """Whether ``term`` is written like an identifier in ``raw``: with a digit, in backticks, or
    inside a token joined by ``-``/``_``/``.``/``/``."""
    if any(c.isdigit() for c in term):
        return True
    for tok in raw.split():
        tok = tok.strip(".,;:!?()[]\"'")
        if re.search(r"[`_./-]", tok) and term in norm(tok).split():
            return True
    return False


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
            x = _REASON_OR_NEXT.split(x, maxsplit=1)[0]
        elif m.group(0)[:5].lower().startswith("repla"):
            cut = _TAIL.sub("", x)
            if cut == x or text[m.start() - 1 : m.start()] == "/":
                continue
            x = cut
        out.append(x)
    for m in _PASSIVE.finditer(text):
        starts = [c.end() for c in _CLAUSE_START.finditer(text, 0, m.start())]
        out.append(text[(starts[-1] if starts else 0) : m.start()][-120:])
    return tuple(t for t in out if terms(t))


def _unsaid(text: str, m: re.Match[str]) -> bool:
    """Whether the act ``m`` found is said not to happen, wished or asked: negated or hedged before
    it in its sentence (:data:`_NEGATED_BEFORE`), or in a question."""
    lo = max(0, m.start() - 80, *(c.end() for c in _SENTENCE_STOP.finditer(text, 0, m.start())))
    return _NEGATED_BEFORE.search(text, lo, m.start()) is not None or _asked(text, m.end())


def _asked(text: str, pos: int) -> bool:
    """Whether the sentence going on at ``pos`` is a question."""
    end = _SENTENCE_STOP.search(text, pos)
    return end is not None and end.group() == "?"


@functools.lru_cache(maxsize=8192)  # a removal line tests the few decisions before it: the same texts
def _seq(text: str) -> tuple[str, ...]:
    return tuple(
        w
        for w in norm(text).split()
        if w not in _STOP and (len(w) >= MIN_WORD or any(c.isdigit() for c in w))
    )


def _names(target: str, old_text: str) -> float:
    """How well a named target matches an earlier fact: most of its terms (three quarters) are
    there and at least two of them side by side (or one identifier); 0 otherwise."""
    have = _seq(old_text)
    want = _core(target, have)
    if not want:
        return 0.0
    hit = set(want) & set(have)
    share = len(hit) / len(set(want))
    pairs = set(itertools.pairwise(want)) & set(itertools.pairwise(have))
    ident = any(_codeish(target, w) and _codeish(old_text, w) for w in hit)
    if len(set(want)) == 1:
        ident = _one_term_names(target, old_text, want[0], len(set(have)))
    if share >= TARGET_SHARE and (pairs or ident):
        return 1.0 + share
    return 0.0


def _tokens(text: str, *, fold: bool = True) -> set[str]:
    """The text's whitespace tokens without markdown and surrounding punctuation (a backticked ``@Data`` →
    ``@Data``; ``test-data-builder-pattern`` stays one token), casefolded unless ``fold`` is False."""
    toks = (tok.strip("`*_.,;:!?()[]{}\"'") for tok in text.split())
    return {t.casefold() if fold else t for t in toks if t}


def _one_term_names(target: str, old_text: str, term: str, old_terms: int) -> bool:
    """Whether a one-term target ("replace `@Data` with …", "Redis is dropped") names an earlier
    fact: that fact is short (it is about the term), or the term is written there as here, whole:
    an identifier (``@Data`` is not the word "data", nor the "data" of ``test-data-builder``) or a
    capitalised name ("Redis"); a lowercase common word in a long fact names nothing."""
    if old_terms <= SHORT_FACT_TERMS:
        return True
    codeish = _codeish(target, term)
    mine = {t for t in _tokens(target, fold=codeish) if term in norm(t).split()}
    if not codeish:
        mine = {t for t in mine if t[:1].isupper()}
    return bool(mine & _tokens(old_text, fold=codeish))


_CLAIM = re.compile(r"^\s*(?:[-*+]\s+)?\*\*(?:What|Decision)\s*:\*\*\s*(?P<c>.+)$", re.I | re.M)


def claim(text: str) -> str:
    """What a fact states: its ``**What:**``/``**Decision:**`` field when it has one (By and Why
    lines say who and why, not what), else all of it."""
    m = _CLAIM.search(text)
    return m.group("c") if m else text


def may_reverse(text: str) -> bool:
    """Whether ``text`` has any wording a reversal needs (:data:`REVERSAL`, :data:`REMOVAL` or
    :data:`CHANGE`); a restatement (:func:`restated`) needs none."""
    return any(p.search(text) is not None for p in (REVERSAL, REMOVAL, CHANGE))


def restated(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` says ``old_text`` again with another figure or the other polarity
    (:func:`scribed.compress.restate.restates`, on what each states: its :func:`claim`)."""
    return restates(claim(new_text), claim(old_text))


def names_removed(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` takes out what ``old_text`` is about ("remove the advisory lock" and
    "use a Postgres advisory lock …"): one of its named targets matches the earlier text."""
    return REMOVAL.search(new_text) is not None and _removal_score(new_text, old_text) > 0


def names_taken_out(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` takes out what ``old_text`` is about with a removal's verb or another
    that names its target ("drop Avro", "scrap the advisory lock"; :func:`targets`)."""
    return _removal_score(new_text, old_text) > 0


def removal_heads(new_text: str) -> frozenset[str]:
    """The head terms of what a removal names (the last term of each target's thing): an earlier
    fact without one of them cannot be the one removed (a cheap test before :func:`names_removed`)."""
    out = set()
    for t in targets(new_text):
        what = _PLACE.split(t, maxsplit=1)[0]
        if core := _core(what):
            out.add(core[-1])
    return frozenset(out)


def _removal_score(new_text: str, old_text: str) -> float:
    """A removal's :func:`_names` score, for a target whose head (its last term) the earlier fact
    holds: "remove the Redis session cache warmup" takes out a warmup, not the cache."""
    old = claim(old_text)
    have = _seq(old)
    best = 0.0
    for t in targets(new_text):
        what, *where = _PLACE.split(t, maxsplit=1)  # "remove Redis from pricing": Redis, where pricing is
        if (core := _core(what, have)) and core[-1] in have and set(_seq(" ".join(where))) <= set(have):
            best = max(best, _names(what, old))
    return best


def reversal_score(new_text: str, old_text: str) -> float:
    """How strongly ``new_text`` reverses ``old_text`` (0 = it does not); see the module docstring.
    2 or more: it names the earlier fact ("instead of X" with X there, or most of a named target)."""
    if restated(new_text, old_text):
        return RESTATED
    if near_dup(new_text, old_text):
        return 0.0
    if names_changed(new_text, old_text) or names_returned(new_text, old_text):
        return NAMED
    if not REVERSAL.search(new_text):  # a removal: only by naming what it removes
        return _removal_score(new_text, old_text) if REMOVAL.search(new_text) else 0.0
    old_text = claim(old_text)
    named = _named(new_text)
    old_seq = set(_seq(old_text))
    for x in named:
        # X is there, and is what the earlier fact is about (:func:`_about`), and one more term in
        # common besides X
        if (
            _about(x, old_text, old_seq)
            and (old_seq - set(_seq(x))) & set(_seq(new_text))
            and in_scope(new_text, old_text)
        ):
            return NAMED
    best = max((_names(t, old_text) for t in targets(new_text)), default=0.0)
    if best and not in_scope(new_text, old_text):
        best = 0.0  # "drop the legacy CSV export docs" names docs, not "keep the legacy CSV export"
    if best or named or targets(new_text) or _changes(new_text):
        return best  # it names what it reverses, and that is not this fact
    ow, nw = words(old_text), words(new_text)
    if len(ow) < MIN_OVERLAP_WORDS or not nw:
        return 0.0
    hit = len(nw & ow)
    near = hit / len(ow) >= OVERLAP and hit / len(nw) >= OVERLAP / 2 and in_scope(new_text, old_text)
    return hit / len(ow) if near else 0.0


def probes(new_text: str) -> list[tuple[frozenset[str], int, int]]:
    """What an earlier fact must hold for :func:`reversal_score` to be above 0: for one probe
    ``(terms, need, most)`` at least, ``need`` of ``terms`` among the earlier fact's
    :func:`seq_terms` (of its :func:`claim`), and at most ``most`` such terms in all (0: any
    number). No probe: nothing can be reversed by wording (a restatement, :func:`restated`, is
    found by its words: ``BlockIndex.restating``). Lets an index look at the few facts holding a
    rare term instead of scoring every fact (the bounds are loose, never tight)."""
    rev = REVERSAL.search(new_text)
    named = [*(_named(new_text) if rev else ()), *(x for x, _ in _changes(new_text))]
    out = []
    for x in named:  # "instead of X", "from X to Z": all of X's terms, a quarter of the earlier fact's
        xs = frozenset(_seq(x))
        if xs:
            out.append((xs, len(xs), 4 * len(xs)))
    back = (frozenset(_seq(x)) for x in returns(new_text))  # "keep X" after "from X to Z": all of X's terms
    out.extend((xs, len(xs), 0) for xs in back if xs)
    if not rev:  # a removal reverses by a named target alone
        return (
            out + [p for t in targets(new_text) if (p := _target_probe(t))]
            if REMOVAL.search(new_text)
            else out
        )
    tgts = targets(new_text)
    if not (named or tgts):  # overlap alone: a quarter of the new fact's content words repeated
        nw = words(new_text)
        return [(frozenset(nw), least(len(nw), OVERLAP / 2), 0)] if nw else []
    return out + [p for t in tgts if (p := _target_probe(t))]


def _core(target: str, have: Iterable[str] = ()) -> list[str]:
    """A target's terms without the adverbs that end it ("remove the lock completely": how, not
    what), unless the earlier fact holds them too ("hourly" inside "the hourly backup" stays)."""
    want, held = list(_seq(target)), set(have)
    while want and _adverb(want[-1]) and want[-1] not in held:
        want.pop()
    return want


def _target_probe(target: str) -> tuple[frozenset[str], int, int] | None:
    """A named target's probe: three quarters of its terms but a last adverb (:func:`_names`
    counts that one only when the earlier fact holds it too)."""
    terms = frozenset(_seq(target))
    core = set(_core(target))
    return (terms, least(len(core), TARGET_SHARE) if core else 1, 0) if terms else None


def _adverb(word: str) -> bool:
    """A word ending in "ly" this long is an adverb ("completely"): it says how, not what."""
    return word.endswith("ly") and len(word) >= ADVERB_CHARS


def least(n: int, share: float) -> int:
    """The fewest of ``n`` items that make ``share`` (``hits / n >= share`` as the rules compute it)."""
    return next((h for h in range(1, n + 1) if h / n >= share), n)


def seq_terms(text: str) -> set[str]:
    """The terms :func:`probes` speaks of (content words and short identifiers)."""
    return set(_seq(text))
