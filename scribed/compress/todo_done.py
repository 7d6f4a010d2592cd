"""Open items the agent later reports done in its own words.

An open item is an order: a verb and what it acts on ("TODO: delete the Kafka consumer in
ingest/kafka.go"). The agent rarely ticks it off in the same words; it says what it did: "Deleted
the Kafka consumer (ingest/kafka.go) and its tests.", "The retry loop has been removed.",
"Finished migrating the users table." Such a sentence closes the item when it holds the item's verb
done (its past tense or participle, one of a verb of the same act, or "finished"/"completed" and its
-ing form) acting on the item's object: the words from the verb to the first preposition ("the
Kafka consumer"), the same thing with the same head word, none added ("the Kafka producer", "the
Kafka consumer test" and "most of the retry loop" are other things). Whatever else the sentence
names must not contradict the item: an identifier it names beside the object (a path, a version)
is one the item names. A report that is negated, hedged, planned, partial ("partially", "half")
or taken back in the same sentence ("…, then reverted it") closes nothing, nor does one by
someone else ("the user deleted …"), in another place, in code or quoted; a later sentence that
takes it back ("Restored the Kafka consumer", "Reverted it.") opens the item again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from scribed.compress import lines as lines_mod
from scribed.compress.request import FUNCTION_WORDS, word_set
from scribed.compress.stopwords import STOP
from scribed.models import Turn

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
_SAME_ACT = (
    frozenset(("remove", "delete", "drop", "strip", "purge", "rip", "ditch", "eliminate")),
    frozenset(("add", "create", "introduce", "write")),
    frozenset(("update", "change", "modify", "edit", "adjust", "tweak")),
    frozenset(("fix", "repair", "resolve", "correct", "patch")),
    frozenset(("rename", "move")),
    frozenset(("bump", "upgrade", "raise")),
)
# What says the work is done when the verb comes as its -ing form: "finished migrating X".
_COMPLETED = frozenset(("finished", "completed", "done"))
# Every match of _REVERTS holds one of these (the message prefilter's words).
_REVERT_WORDS = ("revert", "restor", "roll", "undid", "undo", "undone", "backed", "back", "reinstat")
# What a revert of the last closed work names instead of the thing: "Reverted it.", "Rolled back."
_PRONOUNS = frozenset(("it", "them", "that", "this", "those", "these", "everything", "all"))
# A later sentence taking the work back: "Rolled it back", "Then I restored them", "git revert HEAD".
_REVERTS = re.compile(
    r"\b(?:revert\w*|restor\w*|roll(?:ed|ing|s)?\s+(?:\w+\s+){0,2}?back|undid|undone|undo|backed\s+out|"
    r"put\s+(?:\w+\s+){0,3}?back|brought\s+(?:\w+\s+){0,3}?back|reinstat\w*)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# A word or an identifier (ending in a letter or digit: "Done:" is "Done" and ":"), or a mark that
# ends an object phrase (a bracket, a comma, a colon, a dash between spaces).
_TOKEN = re.compile(r"[~/.]*\w(?:[\w$@#~/.:+'-]*\w)?|[(),;:\[\]\u2013\u2014]|(?<=\s)-(?=\s)")
# Not a report that the work is done: negated, hedged, planned, partial or asked.
_NOT_DONE = re.compile(
    r"\b(?:not|no|never|nothing|neither|nor|should|will|would|could|might|may|can|once|if|until|unless|"
    r"need|needs|needed|todo|fixme|still|yet|next|plan|planned|going|want|wants|try|trying|later|tomorrow|"
    r"think|guess|probably|maybe|perhaps|believe|seems?|partially|partly|half|mostly|some|most|"
    r"dry|draft|example|when)\b"
    r"|\blet(?:'s| me| us)\b|n't\b|'ll\b|\?",
    re.I,
)
# Taken back later in the same sentence: "Removed X, then reverted it", "Deleted X — wait, no".
_TAKEN_BACK = re.compile(
    r"\b(?:revert\w*|restor\w*|roll(?:ed|ing)?\s+(?:\w+\s+){0,2}?back|put\s+(?:\w+\s+){0,3}?back|undo|undid|"
    r"undone|brought\s+(?:\w+\s+){0,3}?back|wait|actually|not|only|locally|except|excluding|although|though|"
    r"pending|staging|dry[- ]?run)\b",  # "(only in my local branch, not pushed)", "except the invoices table"
    re.I,
)
_SENT_END = re.compile(r"(?<=[.!?;])\s+")
_LEAD = re.compile(r"^(?:to\s+|we\s+(?:still\s+)?(?:need|have)\s+to\s+|please\s+)", re.I)


# Where an object phrase ends: a preposition, a conjunction or a clause's punctuation.
_OBJECT_END = word_set(
    "in on at from to into onto for with without of by under inside within across via so and or but "
    "because since when after before until while as than then which who whose where "
    "( ) , ; : [ ] - \u2013 \u2014"
)
_CLAUSE_START = word_set("and or but so then ( ) , ; : [ ] - \u2013 \u2014")
_DETERMINERS = word_set(
    "the a an this that these those our my its their his her your all any every each both "
    "one two three four five six seven eight nine ten several few many"
)
_PARTICLES = word_set("up out off away down")
_AUXILIARIES = word_set("has have had been be is are was were got gets now fully also")
# Who may stand before the done verb of an active report: the agent ("I", "we"), or nobody.
_BY_AGENT = word_set(
    "i we i've we've ive weve have has had also now just then finally already and so ok okay"
)
_PREPOSITIONS = (
    _OBJECT_END
    - _CLAUSE_START
    - word_set("so because since when after before until while as than then which who whose where")
)
MIN_VERB_CHARS = 3
MIN_ING_CHARS = 5  # "thing", "string" are no participles
MAX_SENTENCE_CHARS = 400
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


def _identifier(term: str) -> bool:
    """A path, a code name or a figure: what names one thing (punctuation inside, a digit, a capital
    after a lowercase letter)."""
    core = term.strip(".:-")
    return bool(core) and (
        any(c in core for c in "_./:@#")
        or any(c.isdigit() for c in core)
        or re.search(r"[a-z][A-Z]", core) is not None
    )


def _tokens(text: str) -> list[str]:
    """Words and identifiers, in order, without a possessive's "'s" or closing punctuation."""
    return [t[:-2] if t.lower().endswith("'s") else t for t in _TOKEN.findall(text)]


def _phrase(tokens: list[str], *, said: bool = False) -> tuple[str, ...]:
    """The object phrase at the start of ``tokens``: up to a preposition or conjunction, without
    determiners or counts, lowercased; in a report (``said``) also up to a participle after it
    ("three tests covering the webhook")."""
    out: list[str] = []
    for t in tokens:
        low = t.lower()
        if low in _OBJECT_END or (said and out and low.endswith("ing") and len(low) > MIN_ING_CHARS):
            break
        if (not out and low in _PARTICLES) or (low.endswith("ly") and len(low) > MIN_ING_CHARS):
            continue  # "clean up the files", "ripped out the cache", "migrated successfully": not the thing
        if low not in _DETERMINERS and not low.isdigit():
            out.append(low)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class _Item:
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


def _item(text: str, line: int) -> _Item | None:
    """An open item as an order (its first word a verb, then what it acts on), or None."""
    body = _LEAD.sub("", text.strip().lstrip("-*> ").strip())
    toks = _tokens(body)
    if not toks or not body.lower().startswith(toks[0].lower()):
        return None
    verb = toks[0].lower()
    if len(verb) < MIN_VERB_CHARS or verb in STOP or verb in FUNCTION_WORDS or not verb.isalpha():
        return None  # "the flaky login test": no order
    thing = _phrase(toks[1:])
    if not thing or all(w in STOP for w in thing):
        return None  # nothing it acts on ("check", "clean up")
    same = next((g for g in _SAME_ACT if verb in g), frozenset((verb,)))
    low = [t.lower() for t in toks]
    return _Item(
        text,
        line,
        frozenset(f for v in same for f in _past_forms(v)),
        frozenset(g for v in same for g in _gerunds(v)),
        thing,
        _place(low[1 + _span(low[1:]) :]),
        frozenset(t.lower() for t in toks[1:] if _identifier(t)),
        frozenset((thing[-1], *(w for w in thing if _identifier(w) or "-" in w))),
    )


def _place(low: list[str]) -> tuple[str, tuple[str, ...]] | None:
    """The preposition that starts ``low`` and the phrase after it ("from server.py")."""
    if not low or low[0] not in _PREPOSITIONS:
        return None
    return low[0], _phrase(low[1:])


def _same_thing(item: _Item, said: tuple[str, ...]) -> bool:
    """Whether an object phrase of a report is the item's: no word the item's lacks, and its head
    word or an identifier of it ("the consumer" is "the Kafka consumer", `--legacy-auth` is "the
    --legacy-auth flag"; "the Kafka consumer test" is not), and half its words at least ("the
    test" is not "the flaky login test")."""
    if not said or not set(said) <= set(item.thing):
        return False
    if any(_identifier(w) or "-" in w for w in said):
        return True
    return said[-1] == item.thing[-1] and 2 * len(set(said)) >= len(set(item.thing))


def _kind(name: str) -> str:
    """An identifier's kind, so that a report naming another of its kind contradicts the item: a
    path or file, a figure (a version, a count), another code name."""
    if "/" in name or "\\" in name or re.search(r"\.[a-z]{1,5}$", name):
        return "path"
    return "figure" if any(c.isdigit() for c in name) else "code"


def _acts(item: _Item, low: list[str]) -> tuple[int, int, int] | None:
    """Where the clause of the report's done verb starts (-1: passive), where the verb is and where
    what it acted on ends, when it acts on the item's object: actively ("removed the retry loop")
    or passively ("the retry loop has been removed", "retry loop removed")."""
    for i, w in enumerate(low):
        if not (w in item.forms or (w in item.gerunds and i and low[i - 1] in _COMPLETED)):
            continue
        after = i + 1
        said = _phrase(low[after:], said=True)
        k = i  # the clause's start: "The Kafka consumer in x.go has been deleted"
        while k and low[k - 1] not in _CLAUSE_START:
            k -= 1
        if _same_thing(item, said):
            return k, i, after + _span(low[after:])
        before = [x for x in low[k:i] if x not in _AUXILIARIES]
        if not said and _same_thing(item, _phrase(before)):
            return -1, i, i + 1  # passive: the thing is its subject
    return None


def _span(low: list[str]) -> int:
    """How many tokens an object phrase at the start of ``low`` takes."""
    return next((n for n, t in enumerate(low) if t in _OBJECT_END), len(low))


def _closes(item: _Item, sentence: str) -> bool:
    """Whether ``sentence`` reports ``item`` done (see the module docstring)."""
    return _judge(item, [w.lower() for w in _tokens(sentence)], sentence)


def _judge(item: _Item, low: list[str], sentence: str) -> bool:
    """:func:`_closes` on the sentence's tokens, lowercased (``low``), made once per sentence."""
    where = _acts(item, low)
    if where is None:
        return False
    start, verb, end = where
    if any(f in span.lower() for span in _CODE_SPAN.findall(sentence) for f in item.forms):
        return False  # the report is code: "Commit message draft: `Migrated …`"
    if "?" in sentence or _NOT_DONE.search(" ".join(low[:end])) or _TAKEN_BACK.search(" ".join(low[end:])):
        return False
    if start >= 0 and not all(w in _BY_AGENT or w in _COMPLETED or w.endswith("ly") for w in low[start:verb]):
        return False  # someone else did it ("the user deleted", "someone already deleted")
    if not _same_place(item, _place(low[end:])):
        return False  # "from the test helpers" where the item said "from server.py"
    named = {t for t in low if _identifier(t)} - set(item.thing)
    for kind in {_kind(n) for n in named}:  # "to 1.21" where the item said "to 1.22"
        mine = {n for n in item.names if _kind(n) == kind}
        if mine and not mine & named:
            return False
    return True


def _same_place(item: _Item, there: tuple[str, tuple[str, ...]] | None) -> bool:
    """Whether a report's place (its preposition and phrase) agrees with the item's: the same
    preposition with another thing after it does not ("to the download client")."""
    if item.place is None or there is None or there[0] != item.place[0]:
        return True
    return bool(there[1]) and set(there[1]) <= set(item.place[1])


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s")
_CODE_SPAN = re.compile(r"`[^`]*`")


def _prose_lines(text: str, picked: Iterable[int]) -> Iterable[str]:
    """The picked lines of a message that are its prose: not inside a code fence, not quoted."""
    lines = text.splitlines()
    fenced: set[int] = set()
    if "```" in text or "~~~" in text:
        inside = False
        for n, ln in enumerate(lines):
            if ln.lstrip().startswith(("```", "~~~")):
                inside = not inside
                fenced.add(n)
            elif inside:
                fenced.add(n)
    for n in picked:
        line = lines[n]
        code = line.startswith(("    ", "\t")) and not _LIST_ITEM.match(line)  # an indented code block
        if n not in fenced and not code and not line.lstrip().startswith(">"):
            yield line


def _sentences(text: str, words: tuple[str, ...]) -> Iterable[str]:
    """The sentences of a message's prose lines holding one of ``words`` (found in one scan), not
    too long, not quoting someone's words ("The PR says \"Deleted X\"")."""
    picked = lines_mod.holding(text, words)
    every = range(len(text.splitlines()))
    for line in _prose_lines(text, sorted({i for p in picked for i in p}) if picked is not None else every):
        for sent in _SENT_END.split(line.strip()):
            if len(sent) <= MAX_SENTENCE_CHARS and sent.count('"') < 2 and "\u201c" not in sent:  # noqa: PLR2004
                yield sent


MAX_ITEMS = 64  # the open items of a session looked at (the latest stated): bounded work per sentence


def _objectless(m: re.Match[str], sentence: str) -> bool:
    """Whether a revert names nothing but the last work: "Reverted it.", "Rolled it back: …",
    "Rolled back." (what follows it is a pronoun, a mark or nothing)."""
    rest = sentence[m.end() :].lstrip()
    return (
        not rest
        or rest[0] in ".:;,!(\u2013\u2014-"
        or rest.split()[0].lower().strip(".,:;!") in _PRONOUNS
        or any(w in _PRONOUNS for w in m.group().lower().split())
    )


def done_in_prose(open_items: dict[str, int], turns: Iterable[Turn]) -> set[str]:
    """The open items (text → the line it was last stated at) an assistant message after them
    reports done, and nothing later restores. Each sentence is read once; only the items whose
    verb form it holds are judged."""
    latest = sorted(open_items.items(), key=lambda kv: kv[1])[-MAX_ITEMS:]
    items = [it for text, line in latest if (it := _item(text, line)) is not None]
    if not items:
        return set()
    by_word: dict[str, list[_Item]] = {}
    for it in items:
        for w in (*it.forms, *it.gerunds):
            by_word.setdefault(w, []).append(it)
    words = tuple(sorted(by_word))
    with_reverts = tuple(sorted({*by_word, *_REVERT_WORDS}))  # looked for once something is closed
    first = min(it.line for it in items)
    done: set[str] = set()
    keys = {it.text: it.keys for it in items}
    last: list[str] = []  # the items the latest closing sentence closed: what "Reverted it." takes back
    for t in turns:
        if t.role != "assistant" or t.kind != "message" or t.line <= first:
            continue
        for sent in _sentences(t.text, with_reverts if done else words):
            low = [w.lower() for w in _tokens(sent)]
            held = set(low)
            if done and (rv := _REVERTS.search(sent)) is not None and not _NOT_DONE.search(sent):
                named = [x for x in done if not held.isdisjoint(keys[x])]
                for x in named or (last if _objectless(rv, sent) else []):
                    done.discard(x)  # "Rolled it back: the smoke test failed", "Reverted the migration"
                continue
            closed = [
                it.text
                for it in dict.fromkeys(x for w in low for x in by_word.get(w, ()))
                if it.line < t.line
                and it.text not in done
                and not held.isdisjoint(keys[it.text])
                and _judge(it, low, sent)
            ]
            done.update(closed)
            last = closed or last
    return done
