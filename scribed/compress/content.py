"""What a sentence carries: the names, figures, dates and content words a later reader asks about.

A memory entry is read by someone who will ask who, what, when, where, how many and why. A
sentence answers them through what it names: an identifier (a path, a backticked span, a
``snake_case`` or ``CamelCase`` name), a number or a date, a person's or a place's name, and the
content words around them. "That looks fine.", "Good question." and "Reading the module…" name
nothing: they say how the work went, not what it was, and never take an entry's budget from a
fact. The test is what the sentence holds, counted, not a list of phrases: content words are the
ones outside two closed classes, the function words (:mod:`stopwords`) and the words of stance
and process below (evaluation, acknowledgement, the verbs an agent narrates its own work with, and
the words a message names its own kind with: "Progress update.", "Summary of where this
stands."), so a sentence with one plain noun ("the module") carries too little, and one with two
("the cache was too slow") or a name or a figure carries a fact.
"""

from __future__ import annotations

import re

from scribed.compress.stopwords import STOP

# Words of stance and process: how something went or what the speaker is about to do, never what
# it is about. Verbs are given in their base form; their -s, -ed and -ing forms count too.
_LIGHT_VERBS = (
    "look see seem sound check read review move continue proceed start begin try take let get think "
    "know guess understand note notice appreciate thank help mean wait hold examine inspect explore "
    "verify confirm agree "
    # naming the message itself: "Progress update.", "Summary of where this stands."
    "update summarize summarise recap stand"
)
_LIGHT_IRREGULAR = "saw seen took taken got gotten thought knew known meant held began begun stood"
_LIGHT_OTHER = (
    "good great fine nice perfect awesome excellent cool right correct wonderful amazing fantastic glad "
    "sorry lovely brilliant neat super interesting helpful okay alright exactly absolutely definitely "
    "indeed true yes yeah yep nope hello hey bye goodbye thanks cheers welcome please congrats "
    "congratulations question idea point bit lot part step moment way stuff matter issue problem case "
    "sense next first again soon later well also anyway maybe perhaps probably quick quickly "
    # the message's own kind (metadiscourse): it says what follows is a summary, not what it holds
    "summary summaries overview status progress brief short current"
)


def _inflect(verb: str) -> list[str]:
    stem = verb[:-1] if verb.endswith("e") else verb
    third = verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s")
    return [verb, third, stem + "ed", stem + "ing", verb + verb[-1] + "ing", verb + verb[-1] + "ed"]


LIGHT = frozenset(
    [w for v in _LIGHT_VERBS.split() for w in _inflect(v)] + _LIGHT_IRREGULAR.split() + _LIGHT_OTHER.split()
)
# When: months (full and three-letter), weekdays, and the days named relative to now.
_DATE_WORDS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday "
    "saturday sunday yesterday tomorrow tonight weekend"
)
DATE_WORDS = frozenset(_DATE_WORDS.split())
# How many: quantities written as words (not "one": it is a pronoun as often as a number).
_NUMBER_WORDS = (
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
    "thousand million billion dozen twice thrice half"
)
NUMBER_WORDS = frozenset(_NUMBER_WORDS.split())
# Where a sentence ends: after . ! or ?, before a capital, a quote or a code span; not after a
# title or an initial ("St. Clare's", "Dr. Haddad", "J. Smith") or "e.g." / "i.e." / "vs.".
_NOT_AN_END = "".join(
    rf"(?<!\b{re.escape(a)})"
    for a in ("St.", "Dr.", "Mr.", "Ms.", "Mrs.", "Prof.", "Sr.", "Jr.", "vs.", "e.g.", "i.e.")
)
# An ellipsis between words in capitals elides code ("SELECT ... FOR UPDATE"): no sentence ends there
# (a log's "uploading x.tar.gz ... ERROR: …" does end one).
# What an outcome says came after its conclusion ("Deployed … Then: Ok, dropping the XLSX export.");
# fitting that drops the conclusion drops this word with it (entry_fit.fewer_sentences).
THEN = "Then: "
SENTENCE_END = re.compile(
    rf"(?<=[.!?]){_NOT_AN_END}(?<!\b[A-Z]\.)"
    rf"(?:(?<![A-Z]{{2}} \.\.\.)(?<![A-Z]{{2}}\.\.\.)\s+|\s+(?![A-Z]{{2,}}\b))(?=[A-Z`(\[\"'#*“‘])"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d[\d.,:/%-]*\w*")
_IDENT = re.compile(
    r"`[^`]+`|[\w.-]*[/\\][\w./\\-]+|\w+_\w+|\w+(?:\.\w+)+\(?|[a-z]+[A-Z]\w*|[A-Z]{2,}\w*|#\d+"
)
_SHORTHAND = re.compile(r"[A-Za-z]{1,3}/[A-Za-z]{1,3}")  # "N/A", "I/O", "w/o": not paths
_OPENERS = ".!?:;-*>([\"“'‘"  # a word after one of these starts a sentence, a list item or a quote
TITLE_WORDS = 3  # a text this long with 3 of 5 words capitalised is a title, not names
CONTENT_CHARS = 4  # a shorter plain word ("run", "fix", "the") carries too little on its own
MIN_CARRIED = 2.0
_WEIGHTS = {"ident": 3.0, "number": 2.0, "date": 2.0, "name": 2.0, "word": 1.0}


def names(text: str) -> list[str]:
    """Capitalised words not at a sentence's start: people, places, products ("Priya", "Lisbon",
    "Postgres"), lowercased. "I", dates and a text in Title Case (a heading) give none."""
    words = list(_WORD.finditer(text))
    caps = [m for m in words if m.group(0)[:1].isupper()]
    if len(words) >= TITLE_WORDS and len(caps) * 5 > len(words) * 3:  # mostly capitalised: a title
        return []
    out = []
    for m in caps:
        w = re.split(r"['’]", m.group(0), maxsplit=1)[0].rstrip("-")  # "Clare's" is "Clare"
        low = w.lower()
        if not w[1:].islower() or low in DATE_WORDS:  # "I", "OK", "API": no name
            continue
        before = text[max(0, m.start() - 8) : m.start()].rstrip()
        if (not before and m.start() - 8 <= 0) or (before and before[-1] in _OPENERS):
            continue
        out.append(low)
    return out


def carried(text: str) -> float:
    """How much ``text`` tells a later reader: identifiers 3, figures, dates and names 2, content
    words 1 (each counted once)."""
    found: dict[str, str] = {}
    for m in _IDENT.finditer(text):
        if not _SHORTHAND.fullmatch(m.group(0)):
            found.setdefault(m.group(0).lower(), "ident")
    body = _IDENT.sub(" ", text)
    for n in names(body):
        found.setdefault(n, "name")
    for m in _WORD.finditer(body):
        w = re.split(r"['’]", m.group(0).lower(), maxsplit=1)[0].strip("-.,:/")  # "here's" is "here"
        if not w or w in found:
            continue
        if w[0].isdigit():
            found[w] = "number"
        elif w in DATE_WORDS:
            found[w] = "date"
        elif w in NUMBER_WORDS:
            found[w] = "number"
        elif len(w) >= CONTENT_CHARS and w not in STOP and w not in LIGHT:
            found[w] = "word"
    return sum(_WEIGHTS[k] for k in found.values())


def content_free(text: str) -> bool:
    """Whether ``text`` names nothing a reader could ask about (see the module docstring)."""
    return carried(text) < MIN_CARRIED
