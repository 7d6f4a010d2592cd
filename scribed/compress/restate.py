"""When a later statement says an earlier one again with another figure, or says the opposite.

A statement's *words* are what it says, in order, casefolded, without markdown: its verbs, objects
and qualifiers, with what does not change what it says set aside (articles and other determiners,
pronouns, auxiliary and modal verbs such as "will", "should", "let's", adverbs of time or stance such
as "now", "instead", "again", and a qualifier with nothing in it: "after all", "for now"). Its
*figures* (versions, quantities, dates) stand as ``#`` in the words and are kept apart, and so is
its *polarity*: a negation ("not", "n't", "never", "no", "without", "against") makes it negative.

A later statement *restates* an earlier one when its words are the earlier one's words, or those
up to a qualifier (a preposition, a conjunction, or a break ``,;:(`` or a dash: "Target Python 3.13"
covers "Target Python 3.11 for the API"), and

* it has other figures and the same polarity: "Target Python 3.13" after "Target Python 3.11",
  "Pin Django to 5.0" after "Pin Django to 4.2";
* or it has the other polarity and the same figures: "Don't use Redis for sessions" after "Use
  Redis for sessions", "Use Redis after all" after "Don't use Redis". Only a negative one may be
  broader than what it contradicts ("Don't use Redis" covers "Use Redis for sessions"); an
  exception to a rule ("Use Redis for the queue" after "Don't use Redis") leaves the rule standing.

A number that labels a thing (``ticket 12``, ``step 3 of the plan``, ``core_12.py``, ``#12``) is a
word, not a figure: a bare number after a lowercase word that is no function word, with no word
after it. A question restates nothing; a wish, a proposal, a hedge or someone else's view has words
of its own ("Priya wants to …", "we could …", "Rejected: …") and so is another statement.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

FIGURE = "#"  # a figure's place in a statement's words
MIN_WORDS = 2  # content words (not qualifiers, not figures) a statement needs: a verb and its object
MAX_CUTS = 4  # qualifiers a statement may be covered up to (bounded work and postings)
MAX_CHARS = 600  # what is read of a statement (a fact's claim; hostile input stays bounded)

_TOKEN = re.compile(
    r"[#@$]?\w[\w+/#@-]*(?:[.,]\w[\w+/#@-]*)*|[,;:\u2013\u2014]|(?<!\S)\((?=\S)|(?<!\S)-(?=\s)"
)
_BREAK = {",", ";", ":", "(", "-", "\u2013", "\u2014"}
_FIGURE = re.compile(r"v?\d+(?:[.,]\d+)*(?:\.x)?(?:[a-z]{1,3}|%)?|\d{4}-\d{2}-\d{2}")
_BARE = re.compile(r"v?\d+")  # a number that may be a label (no dot, no unit)
_FIGURE_START = frozenset("0123456789v")
_NEGATION = frozenset({
    "not", "never", "no", "t", "cannot", "nor", "without", "against", "none", "nobody", "nothing", "neither",
    "dont", "wont", "cant",
})  # fmt: skip
_QUALIFIER = frozenset({
    "for", "in", "on", "at", "to", "with", "from", "of", "by", "via", "after", "before", "into", "onto", "over",
    "under", "within", "across", "as", "per", "about", "through", "during", "inside", "until", "since",
    "because", "when", "if", "unless", "while", "so", "but", "and", "or", "than",
})  # fmt: skip
_FUNCTION = frozenset({
    # determiners and pronouns
    "a", "an", "the", "this", "that", "these", "those", "all", "any", "some", "each", "every", "our", "my",
    "your", "its", "their", "his", "her", "we", "i", "you", "us", "it", "they", "me", "them", "he", "she",
    # auxiliary and modal verbs, and what is left of a contraction ("don't", "we'll", "let's")
    "will", "shall", "should", "must", "do", "does", "did", "don", "doesn", "didn", "won", "shouldn",
    "mustn", "can", "is", "are", "was", "were", "be", "been", "am", "isn", "aren", "wasn", "weren", "have",
    "has", "had", "haven", "hasn", "ll", "s", "re", "ve", "d", "m", "let", "lets", "please", "going", "gonna",
    # adverbs of time or stance
    "now", "then", "again", "instead", "anymore", "too", "either", "still", "already", "anyway", "anyways",
    "also", "just", "really", "actually", "though", "yet", "ever", "more", "longer", "here", "there",
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class Statement:
    words: tuple[str, ...]  # content words and qualifiers in order, FIGURE for each figure
    figures: tuple[str, ...]  # the figures, in order
    negated: bool
    cuts: tuple[int, ...]  # where a qualifier starts (words[:cut] has MIN_WORDS content words)
    shape: str  # its words as one string: what an index keys it by
    shapes: tuple[str, ...]  # the shapes of a statement covering it: its own, and its words up to each cut


_KIND = {
    **dict.fromkeys(_FUNCTION, "-"),
    **dict.fromkeys(_QUALIFIER, "q"),
    **dict.fromkeys(_NEGATION, "n"),
    **dict.fromkeys(_BREAK, "|"),
}


@functools.lru_cache(maxsize=8192)
def statement(text: str) -> Statement | None:
    """What ``text`` states (None: a question, or fewer than two content words). One pass: a
    qualifier waits for a word after it (one with none before a break or the end, "after all",
    is none), a leading "to" ("to use Redis") is none, function words are left out."""
    text = text.split("(supersedes:", 1)[0][:MAX_CHARS]
    if "?" in text:
        return None
    toks = _TOKEN.findall(text.lower())
    words: list[str] = []
    figures: list[str] = []
    cuts: list[int] = []
    pending: list[str] = []  # qualifiers since the last word
    broke = False  # a break since the last word
    content = negations = 0
    kind_of = _KIND.get
    for i, tok in enumerate(toks):
        kind = kind_of(tok)
        if kind is None:  # a word or a figure
            if (pending or broke) and content >= MIN_WORDS and len(cuts) < MAX_CUTS:
                cuts.append(len(words))
            if pending:
                words += pending
                pending.clear()
            broke = False
            if tok[0] in _FIGURE_START and _FIGURE.fullmatch(tok) and not _label(text, toks, i):
                words.append(FIGURE)
                figures.append(tok)
            else:
                words.append(tok)
                content += 1
        elif kind == "q":
            if content or tok != "to":
                pending.append(tok)
        elif kind == "|":
            pending.clear()
            broke = True
        elif kind == "n":  # "No, use Postgres": an answer, not a negation
            negations += not (tok == "no" and i + 1 < len(toks) and toks[i + 1] in _BREAK)
    if content < MIN_WORDS:
        return None
    shape = " ".join(words)
    shapes = (shape, *(" ".join(words[:c]) for c in cuts))
    return Statement(tuple(words), tuple(figures), negations % 2 == 1, tuple(cuts), shape, shapes)


def _label(text: str, toks: list[str], i: int) -> bool:
    """Whether the number ``toks[i]`` (of ``text`` lowercased) labels the word before it ("ticket
    12", "step 3 of"): bare, after a word written lowercase that is no function word, with no word
    after it."""
    if i == 0 or not _BARE.fullmatch(toks[i]):
        return False
    before = toks[i - 1]
    after = toks[i + 1] if i + 1 < len(toks) else ""
    if before in _DETERMINERS and after and after not in _KIND:
        return True  # "the v2 endpoint", "our 3 replicas": which one, not how much
    if before in _KIND or _FIGURE.fullmatch(before):
        return False  # "to 22": a value
    written = _TOKEN.findall(text)
    if len(written) != len(toks) or not written[i - 1][:1].islower():
        return False  # "Node 22", "Python 3": a version of a name
    return not after or (after in _KIND and after not in _NEGATION)


_DETERMINERS = frozenset({"the", "this", "that", "these", "those", "our", "my", "your", "its", "their"})


def restates(new: str, old: str) -> bool:
    """Whether ``new`` restates ``old`` (see the module docstring): it covers it, with other
    figures, or with the other polarity (a broader one only when it is the negative one)."""
    a, b = statement(new), statement(old)
    if a is None or b is None:
        return False
    n = len(a.words)
    if a.words != b.words[:n] or (n < len(b.words) and n not in b.cuts):
        return False
    mine = b.figures[: a.words.count(FIGURE)]
    same_figures = a.figures == mine
    if a.negated == b.negated:  # one figure changed: two changed say another thing ("retry 5 times
        return sum(x != y for x, y in zip(a.figures, mine, strict=True)) == 1  # on 429" after "… 3 … on 503")
    return same_figures and (a.negated or n == len(b.words))


def differs(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one statement saying another thing (another figure, the other
    polarity): however alike their words, they are not the same fact."""
    x, y = statement(a), statement(b)
    if x is None or y is None or x.words != y.words:
        return False
    return (x.figures, x.negated) != (y.figures, y.negated)
