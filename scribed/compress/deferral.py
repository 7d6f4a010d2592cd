"""Work a user message puts off: an order not to do it now ("leave the deploy for now", "don't
touch the migration yet"), a wait ("the deploy can wait until Piotr is back"), a plan for later
("we'll deal with it next week"), or the user's own plan with nothing asked of the agent now. A
failure it answers stays open (:mod:`scribed.compress.error_fixes`) and a clause that puts work off
is no request (:mod:`scribed.compress.request`). Putting off is read before, within and after what
else a clause does, so :func:`clause_kind` is decided here, over :mod:`scribed.compress.clause`.
"""

from __future__ import annotations

import re

from scribed.compress.clause import (
    ASKS,
    DEFERS,
    FINITE,
    FUNCTION_WORDS,
    HAVE_TO,
    MIN_PAST,
    MUST,
    OFFERS,
    OWN,
    SUBJECTS,
    TELLS,
    adds,
    asks,
    base_form,
    clause_spans,
    lead,
    offers,
    orders,
    own,
    request_text,
    word_set,
    words_of,
)
from scribed.sources.injected import harness


def clause_kind(clause: str, *, question: bool = False) -> str:
    """What a clause does: :data:`ASKS`, :data:`OWN` (the user's own plan), :data:`DEFERS` (an order
    not to do it now, a plan for later: :func:`_puts_off`), :data:`OFFERS` or :data:`TELLS`
    (anything else: a statement, an acknowledgement)."""
    low, raw = words_of(clause)
    if not question and _WAITS.search(clause):
        return DEFERS  # "the deploy can wait until Piotr is back", "it will have to wait", "not now"
    if asks(clause, question=question):
        order = not question and low and orders(low, raw, lead(low))
        return DEFERS if order and _puts_off(low, clause) else ASKS
    if not low:
        return TELLS
    i = lead(low)
    if own(low, i):
        return OWN
    if low[i] == "we" and low[i + 1 : i + 2] and low[i + 1] in _WE_PLAN and _LATER.search(clause):
        return DEFERS  # "we'll deal with it next week", "we can revisit it next sprint"
    return OFFERS if offers(low, i) else TELLS


# When a clause puts its order off: not now ("leave the deploy for now", "skip it for the moment",
# "park it until then", "don't touch it yet"); a plan for later also at a time ("we'll deal with it
# next week"), where an order at a time is work asked ("run the migration tomorrow"). The words of
# time are a closed class; "until the job finishes" says how long, not when.
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_NOT_NOW = re.compile(
    r"\b(?:for (?:now|the moment|the time being|later)|(?:until|till|til) (?:then|later|further notice))\b"
    r"|\b(?:do not|don't|dont|not|never)\b.*\byet\b",
    re.I,
)
_LATER = re.compile(
    rf"{_NOT_NOW.pattern}|\b(?:later|tomorrow|tonight|this (?:afternoon|evening)|on {_WEEKDAY}"
    rf"|next (?:week|sprint|month|time|release|{_WEEKDAY})|after (?:lunch|the weekend)|another time)\b",
    re.I,
)
_WE_PLAN = word_set("will ll shall can could")


def later(text: str) -> bool:
    """Whether ``text`` puts something off to later: not now ("for now", "for the moment", "until
    then", "not … yet") or at a later time ("later", "next week", "after lunch")."""
    return _LATER.search(text) is not None


# A statement that the work waits: "the deploy can wait until Piotr is back", "it'll have to wait",
# "not now" (a review's: these showed the agent's "waiting" sentence as the failure's fix).
_WAITS = re.compile(r"\b(?:can|could|will|ll|has to|have to|must|should|may)\s+wait\b|^\W*not now\b", re.I)
# An order "for now" puts its work off when its verb is one of leaving it ("leave the deploy for
# now", "skip it for the moment", "park it until then"); with a verb of doing it asks for a stopgap
# now ("mock the cache client for now so the tests run", "pin numpy to 1.26 for now").
_PUT_ASIDE = word_set(
    "leave skip park hold wait ignore forget pause postpone defer shelve punt table stop drop let"
)
_NOT_YET = re.compile(r"\b(?:do not|don't|dont|not|never)\b.*\byet\b", re.I)


def _puts_off(low: list[str], clause: str) -> bool:
    """Whether an order puts its work off (:data:`_NOT_NOW`): not yet, or for now with a verb of
    leaving it (:data:`_PUT_ASIDE`)."""
    if _NOT_YET.search(clause):
        return True
    return bool(_NOT_NOW.search(clause)) and low[lead(low)] in _PUT_ASIDE


def clause_kinds(body: str, clauses: list[tuple[int, int, bool]]) -> list[str]:
    """:func:`clause_kind` of each clause, a clause of one word after it read with it ("park it
    until" + "then": a split before "then")."""
    out = []
    for k, (s, e, q) in enumerate(clauses):
        nxt = clauses[k + 1] if k + 1 < len(clauses) else None
        if nxt is not None and body[nxt[0] : nxt[1]].strip().isalpha():  # one plain word
            e, q = nxt[1], nxt[2]
        out.append(clause_kind(body[s:e], question=q))
    return out


def _asks_agent(clause: str, kind: str) -> bool:
    """Whether a clause of :func:`clause_kind` ``kind`` asks the agent for something now: it asks,
    and not what someone named must do ("Piotr has to grant our role", "Ops needs to open the port":
    a third party's part, said to explain a wait); or it is shaped as an order, a verb's base form
    first and no verb of its own after it ("Add retries to the client"; not "Piotr granted it")."""
    low, raw = words_of(clause)
    if not low or kind not in (ASKS, TELLS):
        return False
    i = lead(low)
    nxt = low[i + 1] if i + 1 < len(low) else ""
    if kind == TELLS:
        past = nxt.endswith("ed") and len(nxt) > MIN_PAST  # (an -s after it is a plural as often)
        return base_form(low[i]) and nxt not in FINITE and not past and adds(clause)
    named = raw[i][:1].isupper() and low[i] not in SUBJECTS and low[i] not in FUNCTION_WORDS
    return not (named and (nxt in MUST or nxt in HAVE_TO) and not clause.rstrip().endswith("?"))


def defers(text: str) -> bool:
    """Whether a user message puts work off: an order not to do it now ("leave the deploy for now",
    "don't touch the migration yet"), a plan for later ("we'll deal with it next week"), or the
    user's own plan ("I'll ask Piotr for the grant") with nothing asked of the agent now. A failure
    it answers stays open: the next agent's blocker."""
    if harness(text):
        return False
    body = request_text(text)
    clauses = clause_spans(body)
    found = clause_kinds(body, clauses)
    return DEFERS in found or (OWN in found and not asks_now(body, clauses, found))


def asks_now(body: str, clauses: list[tuple[int, int, bool]], found: list[str]) -> bool:
    """Whether a clause asks the agent for something now (:func:`_asks_agent`)."""
    return any(_asks_agent(body[s:e], k) for k, (s, e, _) in zip(found, clauses, strict=True))
