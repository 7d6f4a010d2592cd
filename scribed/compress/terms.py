"""A fact's text as the wiki and the reversal rules compare it: what it states (:func:`claim`,
:func:`strip_supersedes`), normalised (:func:`norm`), its terms (:func:`term_seq`,
:func:`term_set`, :func:`words`) and when two texts are one fact (:func:`near_dup`,
:func:`same_fact`).

Identifiers are compared normalised: case, ``-``/``_``/space and backticks do not matter, so
``scheduler-p1``, ``scheduler_p1``, ``\\`Scheduler_P1\\``` and "scheduler p1" are one thing. A term
is a word of the normal form with :data:`MIN_WORD` characters, or fewer with a digit (``p1``,
``v2``), that is not one of :data:`STOP_TERMS`: function words and a reversal's own wording
("instead", "replace"), which says that a fact changes, not what it is about. :func:`term_seq`
keeps the terms in order, repeats too: two terms side by side name a target.

A text's words are read two more ways, each for its own comparison; the differences are the point:

* the key-point pool's tokens (:mod:`scribed.compress.tokens`) keep an identifier whole
  (``src/auth.py``, ``--force``, ``#123``: it weighs more than a word and names a tool line), drop
  the pool's list of common words (:mod:`scribed.compress.stopwords`) and are a set;
* a user's question's words (:mod:`scribed.compress.questions`) are prose words of four letters or
  more, stemmed ("squash" and "squashing" are one): a reply takes a question up by its subject,
  said in another inflection.
"""

from __future__ import annotations

import functools
import re

from scribed.compress.restate import differs

NEAR_DUP = 0.9  # token-set Jaccard at or above which two facts are the same fact
SAME_FACT_SHARE = 0.6  # token-set Jaccard at or above which a reference names a fact
CONTAINED_CHARS = 12  # a reference this long inside a fact (or a fact inside it) names it
MIN_WORD = 3  # shorter words are not content words (unless they hold a digit)

_SUPERSEDES_SUFFIX = re.compile(r"\s*\(supersedes: (?P<s>.+?)\)?\s*$")
_NON_WORD = re.compile(r"[^\w]+")  # markdown's marks too (`*>#[]()~|), and "_" is replaced after it
STOP_TERMS = {
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
    text = strip_supersedes(text)[0]
    if text.isascii():  # its non-word characters in one C pass (a regex's is twice as slow)
        return " ".join(text.lower().translate(_ASCII_NON_WORD).split())
    return " ".join(_NON_WORD.sub(" ", text.casefold()).replace("_", " ").split())


# Each ASCII character but a letter or a digit ("_" too) as a space: :func:`norm`'s regex pass on ASCII
_ASCII_NON_WORD = str.maketrans({chr(i): " " for i in range(128) if not chr(i).isalnum()})


def singular(term: str) -> str:
    """A term without a plural's "s", for comparing what two facts are about ("sessions" and "the
    session cache"; "class", "os" and "gas" stay)."""
    return term[:-1] if len(term) > PLURAL_MIN and term.endswith("s") and not term.endswith("ss") else term


PLURAL_MIN = 3  # a term this short ending in "s" is no plural ("gas", "os")


@functools.lru_cache(maxsize=8192)  # a removal line tests the few decisions before it: the same texts
def term_seq(text: str) -> tuple[str, ...]:
    """The terms of ``text`` in order, repeats kept (module docstring)."""
    return tuple(
        [
            w
            for w in norm(text).split()
            if w not in STOP_TERMS and (len(w) >= MIN_WORD or any(map(str.isdigit, w)))
        ]
    )


def term_set(text: str) -> set[str]:
    """The terms of ``text`` as a set: what a named target is made of, what an index posts a fact
    under (:func:`scribed.compress.reversal.probes`)."""
    return set(term_seq(text))


def words(text: str) -> set[str]:
    """Content words for overlap tests: :func:`term_set` but the short identifiers (``p1``), which a
    reversal's overlap with a fact does not count."""
    return {w for w in term_seq(text) if len(w) >= MIN_WORD}


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


_CLAIM = re.compile(r"^\s*(?:[-*+]\s+)?\*\*(?:What|Decision)\s*:\*\*\s*(?P<c>.+)$", re.I | re.M)


def claim(text: str) -> str:
    """What a fact states: its ``**What:**``/``**Decision:**`` field when it has one (By and Why
    lines say who and why, not what), else all of it."""
    m = _CLAIM.search(text)
    return m.group("c") if m else text
