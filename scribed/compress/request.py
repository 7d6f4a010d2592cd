"""What a user message asks for: the request it adds, or nothing when it only acknowledges.

A go-ahead ("sounds good, go ahead", "lgtm", "ok, do it") must never become the live hot file's
Current task or an entry's Goal, however it is phrased. No list of phrases can keep up with how
people say it, so the message is judged by what it adds. It is cut into clauses (at punctuation
and at "and", "then", "but"), and the request starts at the first clause that adds something: an
identifier or content words (:func:`scribed.compress.clause.adds` says which). So "carry on",
"merge it" and a single word add nothing, while "ok, and then rename the flag" yields "rename the
flag".

A clause that adds something may still ask for nothing: what it does is read from its structure
(:func:`scribed.compress.deferral.clause_kind`). An offer or an FYI ("here's the deploy hook if you
need it: https://…", "for context, …", "btw …") in a message that asks nothing, what the user will
do himself ("I'll ask Priya for the grant") and work put off are no request; "here's the
traceback, can you fix it?" is one. The same reading ranks a long request's sentences for the goal
(:func:`sentence_rank`).
"""

from __future__ import annotations

import re

from scribed.compress.clause import (
    ARTICLES,
    ASKS,
    DEFERS,
    FUNCTION_WORDS,
    OFFERS,
    OWN,
    adds,
    asks,
    clause_spans,
    has_content,
    lead,
    request_text,
    verb_form,
    word_set,
    words_of,
)
from scribed.compress.deferral import asks_now, clause_kind, clause_kinds
from scribed.sources.injected import harness

_CONNECTIVES = word_set("and then also so now next plus but after afterwards additionally finally")


def kinds(text: str) -> list[str]:
    """What each clause of a user message does (:func:`clause_kind`)."""
    body = request_text(text)
    return [clause_kind(body[s:e], question=q) for s, e, q in clause_spans(body)]


def offered(text: str) -> bool:
    """Whether a user message only hands something over: an offer or an FYI and nothing asked."""
    found = kinds(text)
    return OFFERS in found and ASKS not in found


def _first_added(body: str, clauses: list[tuple[int, int, bool]]) -> int | None:
    """The first clause that adds something and is no plan of the user's own nor put off; None when
    none does, when the message offers something and asks nothing, or when it puts the work off and
    asks the agent nothing now (:func:`scribed.compress.deferral.defers`)."""
    found = clause_kinds(body, clauses)
    if OFFERS in found and ASKS not in found:
        return None
    if (OWN in found or DEFERS in found) and not asks_now(body, clauses, found):
        return None
    return next(
        (
            k
            for k, (s, e, q) in enumerate(clauses)
            if found[k] not in (OWN, DEFERS) and adds(body[s:e], question=q)
        ),
        None,
    )


def _reports(sentence: str) -> bool:
    """Whether a sentence reports what happened: its first verb is a past ("Priya looked at the
    migration", "Marcus approved the change", "Talked to Olu: …"), not a present passive ("is fixed")."""
    spans = clause_spans(sentence)
    if not spans:
        return False
    low, _ = words_of(sentence[spans[0][0] : spans[0][1]])
    i = lead(low)
    for w in low[i : i + _SUBJECT_WORDS + 1]:
        if verb_form(w):
            return w.endswith("ed") or w in _PAST_AUX
        if w in FUNCTION_WORDS and w not in ARTICLES:
            return False  # a preposition or a conjunction first: no subject ("For update skip locked")
    return False


_SUBJECT_WORDS = 3
# A sentence's clauses for :func:`sentence_rank`: at punctuation only, so "Commit and push after each
# file compiles" is one order (:data:`scribed.compress.clause._CLAUSE` also splits before "and").
_PUNCTUATION = re.compile(r"[,;:!?…]+(?=\s|$)|\.+(?=\s|$)|\s[-–—]+\s")
_QUESTION = re.compile(r"\?(?=[\s\"'”’)]|$)")
_PAST_AUX = word_set("was were had did")
ASK, STATE, REPORT = 0, 1, 2


def sentence_rank(sentence: str) -> int:
    """:data:`ASK` when a clause of the sentence asks, :data:`REPORT` when it reports what happened,
    else :data:`STATE` (it says how things are: the problem, the context)."""
    if _QUESTION.search(sentence) or any(asks(part) for part in _PUNCTUATION.split(sentence) if part.strip()):
        return ASK
    return REPORT if _reports(sentence) else STATE


def request(text: str) -> str:
    """The request a user message adds: from its first clause that adds something (and is no plan of
    the user's own) to its last clause holding a content word or a question ("FYI the nightly job
    failed again; can you look into why?" keeps its question), after an acknowledgement without the
    connectives that joined them ("and then", "also"), a closing "thanks!" dropped; "" when it adds
    nothing (an acknowledgement, a go-ahead, a greeting, a bare slash command, an offer or an FYI that
    asks nothing, what the user will do himself: :func:`clause_kind`) or is harness text."""
    if harness(text):
        return ""
    body = request_text(text)
    clauses = clause_spans(body)
    first = _first_added(body, clauses)
    if first is None:
        return ""
    last = max(
        k
        for k, (s, e, q) in enumerate(clauses)
        if k == first or (k > first and (q or has_content(body[s:e])))
    )
    start, end = clauses[first][0], clauses[last][1]
    end = _sentence_end(body, end)
    out = body[start:end].strip()
    if start == 0:
        return out  # the message is the request from its first word: as the user wrote it
    words = out.split()
    while len(words) > 1 and words[0].lower().strip(",;:") in _CONNECTIVES:
        words.pop(0)  # "ok, and then rename the flag" -> "rename the flag"
    out = " ".join(words)
    return out[:1].upper() + out[1:]


def _sentence_end(text: str, end: int) -> int:
    """``end`` moved past the punctuation that closes its clause (a question keeps its "?")."""
    while end < len(text) and text[end] in ".!?)\"'”’":
        end += 1
    return end


def substantive(text: str) -> bool:
    """Whether a user message states a task (see :func:`request`)."""
    return bool(request(text))
