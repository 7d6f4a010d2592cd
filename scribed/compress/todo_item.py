"""An open item as an order, and where a sentence names what it acts on.

An open item is an order: a verb and what it acts on ("TODO: delete the Kafka consumer in
ingest/kafka.go"). Its act is named by the verb's forms (English morphology, not phrases): its past
tense and participle, its -ing form and its nouns (migrate → migration, remove → removal, clean up →
the cleanup), and those of verbs of the same act ("drop" is done as "removed"). Its object is the
words from the verb to the first preposition ("the Kafka consumer"), its place the phrase after
that preposition ("in ingest/kafka.go"). A sentence names the same thing when its noun phrase has
the same head word (or an identifier of it) and no word the item's lacks ("the Kafka producer", "the
Kafka consumer test" and "the orders table" are other things).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from scribed.compress.clause import FUNCTION_WORDS, word_set
from scribed.compress.stopwords import STOP

# The past tense and participle of common irregular verbs (English morphology, not phrases): a
# regular verb's are made by :func:`_past_forms`.
_IRREGULAR = {
    "build": ("built",), "buy": ("bought",), "bring": ("brought",), "choose": ("chose", "chosen"),
    "cut": ("cut",), "do": ("did", "done"), "draw": ("drew", "drawn"), "feed": ("fed",),
    "find": ("found",), "get": ("got", "gotten"), "give": ("gave", "given"), "hide": ("hid", "hidden"),
    "keep": ("kept",), "leave": ("left",), "let": ("let",), "make": ("made",), "put": ("put",),
    "read": ("read",), "rebuild": ("rebuilt",), "redo": ("redid", "redone"), "rerun": ("reran", "rerun"),
    "rewrite": ("rewrote", "rewritten"), "run": ("ran",), "send": ("sent",), "set": ("set",),
    "shut": ("shut",), "split": ("split",), "spin": ("spun",), "take": ("took", "taken"),
    "tell": ("told",), "throw": ("threw", "thrown"), "undo": ("undid", "undone"),
    "write": ("wrote", "written"), "bind": ("bound",), "sell": ("sold",), "hold": ("held",),
}  # fmt: skip
# Verbs one report may use for another's order (English synonymy): "drop X" done as "removed X".
_REMOVAL = frozenset(("remove", "delete", "drop", "strip", "purge", "rip", "ditch", "eliminate"))
_SAME_ACT = (
    _REMOVAL,
    frozenset(("add", "create", "introduce", "write")),
    frozenset(("update", "change", "modify", "edit", "adjust", "tweak")),
    frozenset(("fix", "repair", "resolve", "correct", "patch")),
    frozenset(("rename", "move")),
    frozenset(("bump", "upgrade", "raise")),
)
# What says the work is done when the verb comes as its -ing form: "finished migrating X".
COMPLETED = frozenset(("finished", "completed", "done"))
# A word or an identifier (ending in a letter or digit: "Done:" is "Done" and ":"), or a mark that
# ends an object phrase (a bracket, a comma, a colon, a dash between spaces).
_TOKEN = re.compile(r"[~/.]*\w(?:[\w$@#~/.:+'-]*\w)?|[(),;:\[\]\u2013\u2014]|(?<=\s)-(?=\s)")
_LEAD = re.compile(r"^(?:to\s+|we\s+(?:still\s+)?(?:need|have)\s+to\s+|please\s+)", re.I)
# Where an object phrase ends: a preposition, a conjunction or a clause's punctuation.
OBJECT_END = word_set(
    "in on at from to into onto for with without of by under inside within across via so and or but "
    "because since when after before until while as than then which who whose where "
    "( ) , ; : [ ] - \u2013 \u2014"
)
CLAUSE_START = word_set("and or but so then ( ) , ; : [ ] - \u2013 \u2014")
DETERMINERS = word_set(
    "the a an this that these those our my its their his her your all any every each both "
    "one two three four five six seven eight nine ten several few many"
)
_PARTICLES = word_set("up out off away down")
AUXILIARIES = word_set("has have had been be is are was were got gets now fully also")
PREPOSITIONS = (
    OBJECT_END
    - CLAUSE_START
    - word_set("so because since when after before until while as than then which who whose where")
)
# What an act's noun is said to be once it is over: "the migration is complete", "… has finished".
OVER = COMPLETED | word_set("complete succeeded")
HOLDS = word_set("has have holds hold contains contain includes include ships ship")
# Work that remains, said of a thing: "the invoices table still needs work", "… is left" (but
# "no longer needs", "nothing left"); "yet" is always one ("not yet", "yet to").
REMAINS = word_set(
    "need needs require requires remain remains remaining left pending outstanding todo to-do unfinished "
    "incomplete yet"
)
# Before a verb, what makes it work not done: negated, or to come or wished.
NEGATIONS = word_set("not no never cannot nothing none neither nor")
UNREAL = NEGATIONS | word_set("will shall should must would could might may going")
# Where a noun phrase read from its first word ends (besides :data:`OBJECT_END`).
NP_END = AUXILIARIES | OVER | REMAINS | UNREAL | word_set("gone still")
_OTHER = word_set("other another else")  # "no other table": not the item's
MIN_VERB_CHARS = 3
MIN_ING_CHARS = 5  # "thing", "string" are no participles
VOWELS = "aeiou"


def _past_forms(verb: str) -> tuple[str, ...]:
    """The past tense and participle spellings a regular verb may take, with the irregular ones."""
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb.endswith("e"):
        return (verb + "d",)
    if verb.endswith("y") and len(verb) > 1 and verb[-2] not in VOWELS:
        return (verb[:-1] + "ied",)
    forms = [verb + "ed"]
    if len(verb) >= MIN_VERB_CHARS and verb[-1] not in VOWELS + "wxy" and verb[-2] in VOWELS:
        forms.append(verb + verb[-1] + "ed")  # drop → dropped, commit → committed
    return tuple(forms)


def _gerunds(verb: str) -> tuple[str, ...]:
    """The -ing spellings a verb may take (migrate → migrating, drop → dropping)."""
    if verb.endswith("ie"):
        return (verb[:-2] + "ying",)
    if verb.endswith("e") and not verb.endswith("ee"):
        return (verb[:-1] + "ing",)
    return (verb + "ing", verb + verb[-1] + "ing")


# How English makes a verb's noun of the act (migrate → migration, remove → removal, deploy →
# deployment): a verb ending so, that ending's replacement. Forms no text holds are harmless.
_NOUN_ENDINGS = (
    ("te", "tion"), ("ify", "ification"), ("ize", "ization"), ("ise", "isation"), ("olve", "olution"),
    ("duce", "duction"), ("ibe", "iption"), ("ume", "umption"), ("ert", "ertion"), ("ert", "ersion"),
    ("end", "ension"), ("and", "ansion"), ("mit", "mission"), ("ct", "ction"), ("pt", "ption"),
    ("ss", "ssion"), ("ove", "oval"), ("ose", "osal"), ("ive", "ival"), ("ew", "ewal"), ("add", "addition"),
)  # fmt: skip


def _nouns(verb: str) -> tuple[str, ...]:
    """The nouns of a verb's act: the verb itself (an update, a fix), its -ing form, its -ment and
    -ation nouns and the one its ending makes (:data:`_NOUN_ENDINGS`)."""
    stem = verb[:-1] if verb.endswith("e") else verb
    made = (verb[: -len(end)] + noun for end, noun in _NOUN_ENDINGS if verb.endswith(end))
    return (verb, *_gerunds(verb), verb + "ment", stem + "ation", *made)


def identifier(term: str) -> bool:
    """A path, a code name or a figure: what names one thing (punctuation inside, a digit, a capital
    after a lowercase letter)."""
    core = term.strip(".:-")
    return bool(core) and (
        any(c in core for c in "_./:@#")
        or any(c.isdigit() for c in core)
        or re.search(r"[a-z][A-Z]", core) is not None
    )


def tokenize(text: str) -> list[str]:
    """Words and identifiers, in order, without a possessive's "'s" or closing punctuation."""
    return [t[:-2] if t.lower().endswith("'s") else t for t in _TOKEN.findall(text)]


def phrase(tokens: list[str], *, said: bool = False) -> tuple[str, ...]:
    """The object phrase at the start of ``tokens``: up to a preposition or conjunction, without
    determiners or counts, lowercased; in a report (``said``) also up to a participle after it
    ("three tests covering the webhook")."""
    out: list[str] = []
    for t in tokens:
        low = t.lower()
        if low in OBJECT_END or (said and out and low.endswith("ing") and len(low) > MIN_ING_CHARS):
            break
        if (not out and low in _PARTICLES) or (low.endswith("ly") and len(low) > MIN_ING_CHARS):
            continue  # "clean up the files", "ripped out the cache", "migrated successfully": not the thing
        if low not in DETERMINERS and not low.isdigit():
            out.append(low)
    return tuple(out)


@dataclass(frozen=True, slots=True, eq=False)  # one per statement: hashed by identity, cheaply
class Item:
    """An open item read as an order: the words of its act and of what it acts on."""

    text: str
    line: int
    forms: frozenset[str]  # the verb's done forms (and of verbs of the same act), lowercase
    gerunds: frozenset[str]  # their -ing forms, after "finished" / "completed"
    thing: tuple[str, ...]  # the object phrase, lowercase, without determiners
    place: (
        tuple[str, tuple[str, ...]] | None
    )  # its first preposition and that phrase ("from", ("server.py",))
    names: frozenset[str]  # identifiers the whole item names, lowercase
    keys: frozenset[str] = frozenset()  # what a report acting on the thing holds: its head or an identifier
    nouns: frozenset[str] = frozenset()  # the nouns of its act ("migration", "removal", "cleanup")
    acts: frozenset[str] = frozenset()  # every form of its verbs: what a pending statement names
    removal: bool = False  # a removal's thing is then gone: "the Kafka consumer is gone"
    kinds: tuple[tuple[str, frozenset[str]], ...] = ()  # its names by kind (:func:`kind_of`)


def parse(text: str, line: int) -> Item | None:
    """An open item as an order (its first word a verb, then what it acts on), or None."""
    body = _LEAD.sub("", text.strip().lstrip("-*> ").strip())
    toks = tokenize(body)
    if not toks or not body.lower().startswith(toks[0].lower()):
        return None
    verb = toks[0].lower()
    if len(verb) < MIN_VERB_CHARS or verb in STOP or verb in FUNCTION_WORDS or not verb.isalpha():
        return None  # "the flaky login test": no order
    thing = phrase(toks[1:])
    if not thing or all(w in STOP for w in thing):
        return None  # nothing it acts on ("check", "clean up")
    same = next((g for g in _SAME_ACT if verb in g), frozenset((verb,)))
    low = [t.lower() for t in toks]
    forms = frozenset(f for v in same for f in _past_forms(v))
    gerunds = frozenset(g for v in same for g in _gerunds(v))
    nouns = {n for v in same for n in _nouns(v)}
    names = frozenset(t.lower() for t in toks[1:] if identifier(t))
    kinds = {kind_of(n) for n in names}
    if len(low) > 1 and low[1] in _PARTICLES:
        nouns |= {verb + low[1], f"{verb}-{low[1]}"}  # clean up → the cleanup, set up → the setup
    return Item(
        text,
        line,
        forms,
        gerunds,
        thing,
        place_of(low[1 + span(low[1:]) :]),
        names,
        frozenset((thing[-1], *(w for w in thing if identifier(w) or "-" in w))),
        frozenset(nouns),
        forms | gerunds | same | nouns,
        same is _REMOVAL,
        tuple((k, frozenset(n for n in names if kind_of(n) == k)) for k in sorted(kinds)),
    )


def place_of(low: list[str]) -> tuple[str, tuple[str, ...]] | None:
    """The preposition that starts ``low`` and the phrase after it ("from server.py")."""
    if not low or low[0] not in PREPOSITIONS:
        return None
    return low[0], phrase(low[1:])


def same_thing(item: Item, said: tuple[str, ...]) -> bool:
    """Whether an object phrase of a report is the item's: no word the item's lacks, and its head
    word or an identifier of it ("the consumer" is "the Kafka consumer", `--legacy-auth` is "the
    --legacy-auth flag"; "the Kafka consumer test" is not), and half its words at least ("the
    test" is not "the flaky login test")."""
    if not said or not set(said) <= set(item.thing):
        return False
    if any(identifier(w) or "-" in w for w in said):
        return True
    return said[-1] == item.thing[-1] and 2 * len(set(said)) >= len(set(item.thing))


def same_place(item: Item, there: tuple[str, tuple[str, ...]] | None) -> bool:
    """Whether a report's place (its preposition and phrase) agrees with the item's: the same
    preposition with another thing after it does not ("to the download client")."""
    if item.place is None or there is None or there[0] != item.place[0]:
        return True
    return bool(there[1]) and set(there[1]) <= set(item.place[1])


def kind_of(name: str) -> str:
    """An identifier's kind, so that a report naming another of its kind contradicts the item: a
    path or file, a figure (a version, a count), another code name."""
    if "/" in name or "\\" in name or re.search(r"\.[a-z]{1,5}$", name):
        return "path"
    return "figure" if any(c.isdigit() for c in name) else "code"


def span(low: list[str]) -> int:
    """How many tokens an object phrase at the start of ``low`` takes."""
    return next((n for n, t in enumerate(low) if t in OBJECT_END), len(low))


def clause_start(low: list[str], i: int) -> int:
    """Where the clause holding token ``i`` starts."""
    while i and low[i - 1] not in CLAUSE_START:
        i -= 1
    return i


def noun_phrase(low: list[str], j: int) -> tuple[tuple[str, ...], int]:
    """The noun phrase read from token ``j`` (without determiners or counts) and where it ends: at a
    preposition, a clause's mark, a verb's auxiliary, an adverb or a participle, or what says work
    is over or remains."""
    out: list[str] = []
    e = j
    while e < len(low):
        w = low[e]
        if w in OBJECT_END or w in NP_END or w.endswith(("n't", "'ll")) or adverb(w):
            break
        if out and w.endswith("ing") and len(w) > MIN_ING_CHARS:
            break
        if w not in DETERMINERS and not w.isdigit():
            out.append(w)
        e += 1
    return tuple(out), e


def adverb(w: str) -> bool:
    """Whether a word is an adverb of manner ("successfully"), no part of a thing."""
    return w.endswith("ly") and len(w) > MIN_ING_CHARS


def back(low: list[str], i: int, words: frozenset[str] | set[str], floor: int = 0) -> int:
    """Token ``i`` moved back over the ``words`` before it (not before ``floor``)."""
    while i > floor and low[i - 1] in words:
        i -= 1
    return i


def _ends_phrase(item: Item, w: str) -> bool:
    """Whether a word before a noun phrase is none of its own (a determiner, a verb of the item's
    act or another function word), so the phrase names no other thing ("the orders table")."""
    return (
        (w in FUNCTION_WORDS and w not in _OTHER)
        or w in OBJECT_END
        or w in NP_END
        or w in item.acts
        or w in HOLDS
        or w.endswith(("n't", "'ll"))
    )


def mentions(item: Item, low: list[str], floor: int = 0) -> Iterable[tuple[int, int]]:
    """Where the sentence names the item's object (from ``floor`` on): its first token (with its
    determiners) and its end; the object may carry the act's noun ("the invoices table migration")."""
    words = set(item.thing)
    seen = -1
    for h in range(floor, len(low)):
        if low[h] not in item.keys or h <= seen:
            continue
        m = back(low, h, words, floor)
        if m > floor and not _ends_phrase(item, low[m - 1]):
            continue  # "the orders table" is no mention of "the invoices table"
        said, e = noun_phrase(low, m)
        if said and said[-1] in item.nouns:
            said = said[:-1]
        if same_thing(item, said):
            seen = e
            yield back(low, m, DETERMINERS, floor), e
