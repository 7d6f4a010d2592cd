"""Open items the agent later reports done in its own words.

An open item is an order: a verb and what it acts on ("TODO: delete the Kafka consumer in
ingest/kafka.go"). The agent rarely ticks it off in the same words; it says what it did: "Deleted
the Kafka consumer (ingest/kafka.go) and its tests." Such a sentence closes the item when it holds
the item's verb in the past tense (or its participle) and what the item acts on: every identifier
the item names (a path, a code name, a figure) and one of its other content words, or (an item
naming no identifier) two of them or all. A
sentence that negates or hedges ("did not delete", "will delete once…") closes nothing. Without
this, the item stayed open in the entry and the hot seed: done work shown as work to do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from scribed.compress import lines as lines_mod
from scribed.compress.request import _FUNCTION as FUNCTION_WORDS
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
    frozenset(("remove", "delete", "drop", "strip", "purge")),
    frozenset(("add", "create", "introduce", "write")),
    frozenset(("update", "change", "modify", "edit", "adjust", "tweak")),
    frozenset(("fix", "repair", "resolve", "correct", "patch")),
    frozenset(("rename", "move")),
    frozenset(("bump", "upgrade", "raise")),
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_TERM = re.compile(r"[\w./:@#-]+")
# Not a report that the work is done: negated, hedged, still to come, or asked.
_NOT_DONE = re.compile(
    r"\b(?:not|no|never|nothing|neither|nor|should|will|would|could|might|may|can|once|if|until|unless|"
    r"need|needs|needed|todo|fixme|still|yet|next|plan|planned|going|want|wants|try|trying|later|tomorrow)\b"
    r"|\blet(?:'s| me| us)\b|n't\b|'ll\b|\?",
    re.I,
)
_SENT_END = re.compile(r"(?<=[.!?;])\s+")
_LEAD = re.compile(r"^(?:to\s+|we\s+(?:still\s+)?(?:need|have)\s+to\s+|please\s+)", re.I)
MIN_VERB_CHARS = 3
MIN_PLAIN_CHARS = 4
PLAIN_NEEDED = 2  # content words of the item a report must hold (all of them when it has fewer)
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


def _identifier(term: str) -> bool:
    """A path, a code name or a figure: what names one thing (punctuation inside, a digit, a capital
    after a lowercase letter)."""
    core = term.strip(".:-")
    return bool(core) and (
        any(c in core for c in "_./:@#")
        or any(c.isdigit() for c in core)
        or re.search(r"[a-z][A-Z]", core) is not None
    )


@dataclass(frozen=True, slots=True)
class _Item:
    text: str
    line: int
    forms: tuple[str, ...]  # the verb's past forms, lowercase
    names: frozenset[str]  # identifiers, lowercase: every one must be named
    plain: frozenset[str]  # other content words, lowercase


def _item(text: str, line: int) -> _Item | None:
    """An open item as an order (its first word a verb, something after it), or None."""
    body = _LEAD.sub("", text.strip().lstrip("-*> ").strip())
    words = _WORD.findall(body[:40])
    if not words or not body.lower().startswith(words[0].lower()):
        return None
    verb = words[0].lower()
    if len(verb) < MIN_VERB_CHARS or verb in STOP or verb in FUNCTION_WORDS:
        return None  # "the flaky login test": no order
    rest = body[len(words[0]) :]
    terms = [t.strip(".,:;()[]{}'\"`") for t in _TERM.findall(rest)]
    names = frozenset(t.lower().strip(".:-") for t in terms if t and _identifier(t))
    plain = frozenset(
        t.lower()
        for t in terms
        if t and not _identifier(t) and len(t) >= MIN_PLAIN_CHARS and t.lower() not in STOP
    )
    if not names and not plain:
        return None
    same = next((g for g in _SAME_ACT if verb in g), frozenset((verb,)))
    forms = tuple(sorted({f for v in same for f in _past_forms(v)}))
    return _Item(text, line, forms, names, plain)


# Where a sentence's clauses part: "Removed X; the help no longer lists it" negates only the second.
_CLAUSE = re.compile(r"[;:]\s|\s[-\u2013\u2014]\s|,\s+(?:but|though|although|so|and then)\s", re.I)


def _closes(item: _Item, sentence: str) -> bool:
    """Whether ``sentence`` reports ``item`` done: a clause with the verb's past form, neither
    negated nor hedged, and the sentence naming what the item acts on."""
    low = sentence.lower()
    if not any(
        any(f in set(_WORD.findall(clause)) for f in item.forms) and not _NOT_DONE.search(clause)
        for clause in _CLAUSE.split(low)
    ):
        return False
    terms = {t.strip(".,:;()[]{}'\"`").strip(".:-") for t in _TERM.findall(low)}
    if any(n not in terms and n not in low for n in item.names):
        return False
    held = sum(p in terms for p in item.plain)
    return held >= min(1 if item.names else PLAIN_NEEDED, len(item.plain))


def done_in_prose(open_items: dict[str, int], turns: Iterable[Turn]) -> set[str]:
    """The open items (text → line) an assistant message after them reports done."""
    items = [it for text, line in open_items.items() if (it := _item(text, line)) is not None]
    if not items:
        return set()
    forms = tuple(sorted({f for it in items for f in it.forms}))
    first = min(it.line for it in items)
    done: set[str] = set()
    for t in turns:
        if t.role != "assistant" or t.kind != "message" or t.line <= first:
            continue
        picked = lines_mod.holding(t.text, forms)
        lines = t.text.splitlines()
        for idx in sorted({i for p in picked for i in p}) if picked is not None else range(len(lines)):
            for sent in _SENT_END.split(lines[idx].strip()):
                if len(sent) > MAX_SENTENCE_CHARS:
                    continue
                for it in items:
                    if it.text not in done and it.line < t.line and _closes(it, sent):
                        done.add(it.text)
        if len(done) == len(items):
            break
    return done
