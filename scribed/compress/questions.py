"""A user's questions the session left unanswered: open items for the next spawn.

A question the user asked ("do we need to reprint the labels printed last week?", "should the
backfill keep the legacy lot numbers?") that no reply of the agent took up is work the session
left: it goes under *Open items* as ``unanswered: …``, so the next spawn (whose hot file lists the
open items) sees it. A question asking the agent to act ("can you run the deploy again?") is the
session's request, not an open question. A reply takes a question up when it shares one of its
distinctive words or one of its names (a path, an identifier, a figure), starts with a yes or a no,
or, in its first sentence, decides on what was asked about by referring back to it: a verb of
keeping, taking out or choosing, the sentence's main verb, with "it", "them", "those" … as its
object ("Should we keep the legacy lot numbers?" — "We can drop those."); not in a question, a
gerund's phrase or a deferral ("I'll keep that in mind", "leave that for now").
Only the replies before the user speaks again count: a later message answers a later question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from scribed.compress.content import content_free
from scribed.compress.deferral import later
from scribed.compress.stopwords import STOP
from scribed.models import Turn

UNANSWERED = "unanswered: "  # an open item's prefix
MAX_QUESTIONS = 3  # a session's unanswered questions listed (the first)
MIN_WORDS = 4  # "right?", "ok?", "any questions?": no question to answer
MIN_SHARED = 1  # distinctive words a reply shares with a question to take it up (an answer says its subject)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PREAMBLE = re.compile(
    r"^(?:\W*(?:quick|one|a|another|side|last)\s+question\s*[:,-]\s*|\W*also[,:]?\s+|\W*and\s+)", re.I
)
# Asking the agent to act: the session's request, not a question to answer.
_REQUEST = re.compile(
    r"\b(?:(?:can|could|would|will)\s+(?:you|u)\b|(?:please|pls)\b|(?:mind|care)\s+to\b|why not\b)", re.I
)
_WORD = re.compile(r"[a-z][a-z'-]{3,}")
_NAME = re.compile(r"[\w.-]*[/_.:][\w./:-]*\w|\b\w*\d\w*\b|\b[a-z]+[A-Z]\w*")
_YES_NO = re.compile(
    r"^\W*(?:yes|yeah|yep|no|nope|not (?:really|quite|needed|necessary)|correct|right|exactly|"
    r"(?:it|they|that|this) (?:does|do|did|is|are|was|will|would|should)(?:n't| not)?)\b",
    re.I,
)


def questions(text: str) -> list[str]:
    """The questions of a user's message: its sentences ending in '?', without a preamble
    ("Quick question:"), not asking the agent to act, naming something."""
    out = []
    for raw in _SENTENCE.split(text):
        q = _PREAMBLE.sub("", raw.strip(" *_>`\t")).strip()
        if (
            not q.endswith("?")
            or len(q.split()) < MIN_WORDS
            or not _ASKING.match(q)  # a pasted line of code or log ending in "?", a statement said as one
            or _REQUEST.search(q)
            or content_free(q)
        ):
            continue
        out.append(q)
    return out


def _words(text: str) -> set[str]:
    """Distinctive words, each cut to its stem ("squash", "squashing"; "delete", "deleting"): a reply
    names a question's subject in its own inflection. Not :mod:`scribed.compress.terms`' terms
    (unstemmed, with short identifiers) nor the pool's tokens (whole identifiers): names are
    :func:`_names`' to match."""
    found = _WORD.findall(text.lower())
    found += [part for w in found if "-" in w for part in w.split("-")]  # "customer-facing": customer
    return {_stem(w) for w in found if len(w) >= MIN_STEM and w not in STOP}


def _stem(word: str) -> str:
    for end in ("ing", "ed", "es", "s", "e"):
        if word.endswith(end) and len(word) - len(end) >= MIN_STEM:
            return word[: -len(end)]
    return word


MIN_STEM = 4


def _names(text: str) -> set[str]:
    return {n.lower() for n in _NAME.findall(text)}


# A reply deciding on what was asked about, referring back to it: a verb of keeping, taking out or
# choosing (the kind :mod:`scribed.compress.choice` and :mod:`scribed.compress.reversal_wording`
# read, with skip, leave and ignore) whose object is a pronoun or a demonstrative ("we can drop
# those", "better to discard them", "I'd leave those alone"), in a reply's first sentence (a long
# reply's later "keep it" is about its own work); "check it", "look into that", "moved it to the
# backlog" decide nothing.
_REFERS_BACK = re.compile(
    r"\b(?:keep(?:s|ing)?|kept|retain\w*|preserv(?:e|es|ed|ing)|drop(?:s|ped|ping)?|remov(?:e|es|ed|ing)|"
    r"delet(?:e|es|ed|ing)|discard\w*|ditch\w*|scrap(?:s|ped|ping)?|skip(?:s|ped|ping)?|leav(?:e|es|ing)|left|"
    r"ignor(?:e|es|ed|ing)|retir(?:e|es|ed|ing)|deprecat(?:e|es|ed|ing)|exclud(?:e|es|ed|ing)|"
    r"us(?:e|es|ed|ing)|adopt\w*|replac(?:e|es|ed|ing))\s+"
    r"(?:(?:all|both|each|any|none)\s+of\s+)?(?:it|them|those|these|that|this|both)\b(?!['\u2019]s)",
    re.I,
)
# What a main verb follows at a sentence's start: words of assent, then a subject with its modal
# ("we can", "I'd", "let's", "better to"); none before an imperative's verb ("Drop those.").
_MAIN_LEAD = re.compile(
    r"\W*(?:(?:ok(?:ay)?|yes|yeah|sure|so|then|honestly|right|fine)[,.!]?\s+){0,2}"
    r"(?P<subject>(?:i|we|you|they|let['\u2019]?s|let\s+us)(?:['\u2019](?:d|ll|m|re))?\s+)?"
    r"(?P<modal>(?:can|could|should|would|will|shall|must|might|may|just|probably|simply|also|rather|better|"
    r"best|to|am|are|is|do|did)\s+){0,3}",
    re.I,
)
_IN_MIND = re.compile(r"\s+in\s+mind\b", re.I)  # "keep that in mind": noted, not decided


def _decides_referring_back(sentence: str) -> bool:
    """Whether a reply's first ``sentence`` decides on what was asked about by referring back to it
    (:data:`_REFERS_BACK`) with its main verb: an imperative first ("Drop those."), or a verb after
    its subject and modal ("We can drop those", "Better to discard them"); not a question ("Do you
    want me to keep them?"), a gerund's phrase ("Using this stack trace I found …", a verb's base
    form only opens an imperative) or a deferral ("Let's leave that for now", "I'll keep that in
    mind": :func:`scribed.compress.deferral.later`)."""
    if sentence.rstrip().endswith("?") or later(sentence):
        return False
    lead = _MAIN_LEAD.match(sentence)  # (it always matches: every part is optional)
    at = lead.end() if lead else 0
    m = _REFERS_BACK.match(sentence, at)
    if m is None or _IN_MIND.match(sentence, m.end()):
        return False
    led = lead is not None and bool(lead.group("subject") or lead.group("modal"))
    return led or not m.group().split()[0].lower().endswith("ing")


def taken_up(question: str, replies: Sequence[str]) -> bool:
    """Whether one of ``replies`` takes ``question`` up (module docstring)."""
    words, names = _words(question), _names(question)
    for r in replies:
        low = r.lower()
        if (
            _YES_NO.match(r)
            or any(n in low for n in names)
            or _decides_referring_back(_SENTENCE.split(r, 1)[0])
        ):
            return True
        if len(words & _words(r)) >= MIN_SHARED:
            return True
    return False


# A question for the team's decision ("should the backfill keep …?", "do we need to reprint
# them?", "what about the labels already printed?"): a reply that goes on with other work leaves it
# open. Other questions are mostly the agent's to act on ("why are these errors happening?", "is
# there a gradle task for this?", "can we show partial lines?"): its work answers them, and they
# are open only when no reply came at all (the session ended, the model's API failed).
_DECIDE = re.compile(
    r"^\W*(?:should\b|shall we\b|do (?:we|i) (?:need|want|have) to\b|does (?:it|this|that) matter\b|"
    r"what about\b|is it (?:ok|okay|fine|safe|worth)\b|are we (?:ok|okay|fine|good)\b)",
    re.I,
)
_ASKING = re.compile(
    r"^\W*(?:what|why|how|when|where|which|who|whom|whose|is|are|was|were|do|does|did|should|shall|"
    r"can|could|may|might|must|would|will|have|has|had|any)\b",
    re.I,
)


def _window_end(turns: Sequence[Turn], users: list[int], k: int) -> int:
    """Where the replies to user message ``users[k]`` end: at the next user message after a reply
    (two messages in a row, one reply answering both: the second does not cut the first off)."""
    for nxt in users[k + 1 :]:
        if any(t.role == "assistant" or t.kind == "tool_call" for t in turns[users[k] + 1 : nxt]):
            return nxt
    return len(turns)


def unanswered(turns: Sequence[Turn]) -> list[tuple[str, int]]:
    """The user's questions no reply took up before the user spoke again: (question, its line),
    the first :data:`MAX_QUESTIONS`."""
    out: list[tuple[str, int]] = []
    users = [i for i, t in enumerate(turns) if t.role == "user" and t.kind == "message"]
    said = [
        " ".join(turns[i].text.split()) for i in users
    ]  # each once: a question asked again is found in them
    for k, i in enumerate(users):
        asked = questions(turns[i].text)
        if not asked:
            continue
        end = _window_end(turns, users, k)
        replies = [t.text for t in turns[i + 1 : end] if t.role == "assistant" and t.kind == "message"]
        worked = any(t.kind == "tool_call" for t in turns[i + 1 : end])
        later = said[k + 1 :]
        out += [
            (q, turns[i].line)
            for q in asked
            if (not (replies or worked) or (_DECIDE.match(q) and not taken_up(q, replies)))
            and not any(q in x for x in later)  # asked again (a message resent, extended): judged there
        ]
        if len(out) >= MAX_QUESTIONS:
            break
    return out[:MAX_QUESTIONS]
