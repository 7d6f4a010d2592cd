"""When one fact reverses another: the reversal rules of the wiki.

A later fact reverses an earlier one when it has reversal wording and names what it reverses:

* "instead of X" / "rather than X": X's lead (up to a preposition) appears in the earlier fact, which
  says to do X (one saying "don't X" or "instead of X" itself is said again);
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

A reversal by "instead of X", a named target or overlap must be about what the earlier fact is about
(:func:`scribed.compress.scope.in_scope`). What a reversal names is read from its text alone
(:mod:`scribed.compress.reversal_wording`); the terms compared are :mod:`scribed.compress.terms`'.
"""

from __future__ import annotations

import itertools
import re

from scribed.compress.restate import restates
from scribed.compress.reversal_wording import (
    PLACE,
    REMOVAL,
    REVERSAL,
    bare_return,
    changes,
    core_terms,
    instead_of,
    keeps_out,
    returns,
    targets,
)
from scribed.compress.scope import in_scope
from scribed.compress.terms import claim, near_dup, norm, singular, term_seq, term_set, words

OVERLAP = 0.5  # share of an earlier fact's content words a reversal must repeat
TARGET_SHARE = 0.75  # share of a named target's words the earlier fact must hold
SHORT_FACT_TERMS = 6  # a fact this short is about any one term "instead of" names
MIN_OVERLAP_WORDS = 3  # an earlier fact needs this many content words for an overlap reversal
NAMED = 2.0  # the score of a reversal naming the earlier fact ("instead of X", "from X to Z")
RESTATED = 2.0  # the score of a restatement (another figure, the other polarity): it names it whole


def _about(
    x: str, old_text: str, old_seq: set[str], shared: set[str] | None = None, *, subject: bool = False
) -> bool:
    """Whether the earlier fact is about what a reversal names (normalised ``x``): it is there and,
    with the other terms of it the reversal says (``shared``), a quarter of its terms at least; and X
    is more than one term, or a change's ``subject`` is shared too, or the fact is short, or X an
    identifier. X's terms alone were counted: "Use Redis for the session cache in src/app/cache.py" is
    one Redis in five terms, so "switch the session cache from Redis to Memcached in src/app/cache.py",
    which names all five, left it current."""
    xs = term_set(x)
    return (
        f" {x} " in f" {norm(old_text)} "
        and len((xs | (shared or set())) & old_seq) >= max(1, len(old_seq) / 4)
        and (len(xs) > 1 or subject or len(old_seq) <= SHORT_FACT_TERMS or _codeish(old_text, x))
    )


def names_changed(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` changes what ``old_text`` is about from one thing to another ("switch the
    cache from Memcached to Redis" and "use Memcached for the cache"): the earlier fact is about X,
    and shares one of the change's other terms, in the change's scope (:func:`in_scope`: "switch the
    broker for the cron jobs …" leaves "… the broker for background jobs"), or the change has none."""
    old_text = claim(old_text)
    old_seq = term_set(old_text)
    for x, about in changes(new_text):
        if not about:  # X changes everywhere
            if _about(x, old_text, old_seq):
                return True
        elif (
            (shared := _shared(about, old_seq))
            and _about(x, old_text, old_seq, shared, subject=True)
            and in_scope(new_text, old_text)
        ):
            return True
    return False


def _shared(about: frozenset[str], old_seq: set[str]) -> set[str]:
    """The earlier fact's terms a change's subject names, a plural as its singular ("move sessions
    from Redis …" and "… the session cache")."""
    said = {singular(t) for t in about}
    return {t for t in old_seq if singular(t) in said}


def names_returned(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` chooses again what ``old_text`` changed away from, on its subject ("keep
    fpdf2 for the labels" after "switch kelpie/labels.py from fpdf2 to reportlab"): the thing it keeps
    or goes back to is the change's X, and it shares one of the change's other terms, and it is about
    what the change is about (:func:`in_scope`)."""
    back = returns(new_text)
    if not back:
        return False
    old_text = claim(old_text)
    mine = term_set(new_text)
    bare = bare_return(new_text)
    return any(
        x in back and (not about or bool(about & mine) or bare) and in_scope(new_text, old_text)
        for x, about in changes(old_text)
    )


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


def _names(target: str, old_text: str) -> float:
    """How well a named target matches an earlier fact: most of its terms (three quarters) are
    there and at least two of them side by side (or one identifier); 0 otherwise."""
    have = term_seq(old_text)
    want = core_terms(target, have)
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


def _removal_score(new_text: str, old_text: str) -> float:
    """A removal's :func:`_names` score, for a target whose head (its last term) the earlier fact
    holds: "remove the Redis session cache warmup" takes out a warmup, not the cache."""
    old = claim(old_text)
    have = term_seq(old)
    best = 0.0
    for t in targets(new_text):
        what, *where = PLACE.split(t, maxsplit=1)  # "remove Redis from pricing": Redis, where pricing is
        if (core := core_terms(what, have)) and core[-1] in have and term_set(" ".join(where)) <= set(have):
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
    named = instead_of(new_text)
    old_seq = term_set(old_text)
    for x in named:
        # X is there, and is what the earlier fact is about (:func:`_about`), and one more term in
        # common besides X; and the earlier fact says to do X: one saying "instead of X" or "don't X"
        # itself (:func:`keeps_out`) is said again, not reversed
        if (
            (shared := (old_seq - term_set(x)) & term_set(new_text))
            and _about(x, old_text, old_seq, shared)
            and in_scope(new_text, old_text)
            and not keeps_out(x, old_text)
        ):
            return NAMED
    best = max((_names(t, old_text) for t in targets(new_text)), default=0.0)
    if best and not in_scope(new_text, old_text):
        best = 0.0  # "drop the legacy CSV export docs" names docs, not "keep the legacy CSV export"
    if best or named or targets(new_text) or changes(new_text):
        return best  # it names what it reverses, and that is not this fact
    ow, nw = words(old_text), words(new_text)
    if len(ow) < MIN_OVERLAP_WORDS or not nw:
        return 0.0
    hit = len(nw & ow)
    near = hit / len(ow) >= OVERLAP and hit / len(nw) >= OVERLAP / 2 and in_scope(new_text, old_text)
    return hit / len(ow) if near else 0.0


def probes(new_text: str) -> list[tuple[frozenset[str], int, int]]:
    """What an earlier fact must hold for :func:`reversal_score` to be above 0: for one probe
    ``(terms, need, most)`` at least, ``need`` of ``terms`` among the earlier fact's terms
    (:func:`~scribed.compress.terms.term_set` of its :func:`claim`), and at most ``most`` such terms
    in all (0: any number). No probe: nothing can be reversed by wording (a restatement,
    :func:`restated`, is found by its words: ``BlockIndex.restating``). Lets an index look at the
    few facts holding a rare term instead of scoring every fact (the bounds are loose, never tight)."""
    rev = REVERSAL.search(new_text)
    named = [*(instead_of(new_text) if rev else ()), *(x for x, _ in changes(new_text))]
    out = []
    # "instead of X", "from X to Z": all of X's terms and, with the other terms the reversal shares
    # with it (a plural may match two: "session", "sessions"), a quarter of the earlier fact's
    others = len(term_set(new_text))
    for x in named:
        xs = frozenset(term_seq(x))
        if xs:
            out.append((xs, len(xs), 4 * (len(xs) + 2 * others)))
    back = (frozenset(term_seq(x)) for x in returns(new_text))  # "keep X" after "from X to Z": all X's terms
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


def _target_probe(target: str) -> tuple[frozenset[str], int, int] | None:
    """A named target's probe: three quarters of its terms but a last adverb (:func:`_names`
    counts that one only when the earlier fact holds it too)."""
    every = frozenset(term_seq(target))
    core = set(core_terms(target))
    return (every, least(len(core), TARGET_SHARE) if core else 1, 0) if every else None


def least(n: int, share: float) -> int:
    """The fewest of ``n`` items that make ``share`` (``hits / n >= share`` as the rules compute it)."""
    return next((h for h in range(1, n + 1) if h / n >= share), n)
