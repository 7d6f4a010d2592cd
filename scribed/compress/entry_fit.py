"""Fitting a cold entry to its byte budget: whole list items go, least valuable first, then the
outcome's and the goal's sentences that name least; no item or sentence is ever cut, and open items
stay. Fitting shrinks a summary (:mod:`scribed.compress.entry` renders it, and the retention guard,
:mod:`scribed.compress.entry_guard`, restores dropped anchors after it), so it is its own module.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from scribed.compress import content
from scribed.compress.entry import EntryMeta, one_line, render, size_of

if TYPE_CHECKING:
    from scribed.models import Anchor, Summary

# As in entry.py, the models and the anchor extractor are imported where they are used: the hot
# seed (tiers/seed_text.py, which a spawn may load through tiers/live.py) reads fewer_sentences.

LIST_CAP = 12

# Sections trimmed first when an entry is over budget (least valuable first).
# Errors go after the outcome: each pairs a fact with its fix, and a dropped one comes back from
# the guard as a bare anchor without its fix (issue 30: a two-error session lost its second).
_TRIM_ORDER = [
    "key_points",
    "knowledge",
    "key_facts",
    "commands",
    "files",
    "outcome",
    "errors",
    "progress",
    "open_items",
    "decisions",
]
# Items a list keeps however small the budget: every open item (the work the session left, which
# the next spawn's hot seed lists; LIST_CAP * 2 bounds them), the first few items of the agent's own
# progress, and the final decision. An error nothing fixed is kept as an open item is (:func:`_open`).
_KEEP = {"decisions": 1, "open_items": LIST_CAP * 2, "progress": 3}


def _open(key: str, item: str) -> bool:
    """Whether ``item`` is an error nothing fixed (``err → unresolved``, not one gone when its command
    ran again): the next spawn's hot seed lists it as a blocker, so fitting never drops it (a small
    session's fit dropped its errors from the last, the unfixed one first, and the guard restored
    the fixed ones in its room: an exploratory tester's Aider session lost its failing test)."""
    if key != "errors":
        return False
    return no_fix(item.partition(" → ")[2])


_NO_FIX = ("unresolved", "(unresolved")


def no_fix(fix: str) -> bool:
    """Whether an error's ``→`` part leaves it open, as the hot seed reads it: unresolved, unless it
    went away when the command that showed it ran again (``unresolved (gone when `make` ran again)``)."""
    low = fix.strip().lower()
    return low.startswith(_NO_FIX) and "(gone when" not in low


# Where a sentence ends: the one rule of content.py (a capital, a quote or code after it, not an
# abbreviation); a dot followed by a lowercase word is no end ("go build ./... passes": the outcome
# of a tiny session lost its "passes." when fitting took "./..." for a sentence's end).
_SENTENCE = content.SENTENCE_END


_NAMED = re.compile(r"`[^`]+`|\S*[/_#]\S*|\S*\d\S*|\b[a-z]+[A-Z]\w*")  # paths, names, numbers, code


_LIST_NUMBER = re.compile(r"\s(\d{1,3}[.)])$")
LIST_NUMBER_CHARS = 3  # "12." or "3)": a longer number ("200.") is a quantity
_ITEM_NUMBER = re.compile(r"^\d{1,3}[.)]\s")  # a list's number names nothing


def _sentences_of(text: str) -> list[str]:
    """``text``'s sentences; a list's number that ends one ("… rules. 8.") starts the next one. A
    number after a preposition, a verb such as "is", a capitalised name ("HTTP 500.", "Node 20."), or of
    three digits is what the sentence says: it stays (a goal's title read "200. Can you add it?")."""
    parts = _SENTENCE.split(text.strip())
    for i in range(len(parts) - 1):
        if (m := _LIST_NUMBER.search(" " + parts[i])) is not None:
            from scribed.compress.clause import FUNCTION_WORDS  # here: a spawn reads entries without it

            before = parts[i][: max(0, m.start() - 1)]
            word = before.rsplit(None, 1)[-1] if before.strip() else ""
            said = word.lower() in FUNCTION_WORDS or not word.islower() or len(m.group(1)) > LIST_NUMBER_CHARS
            if word[-1:].isalnum() and said:
                continue  # "burst of 200.", "returns HTTP 500.", "Node 20.", "… 404.": what it says
            parts[i], parts[i + 1] = before, f"{m.group(1)} {parts[i + 1]}"
    return [x for x in parts if x]


def fewer_sentences(text: str) -> str:
    """``text`` less one sentence ("" when it has only one): the one that names the fewest things
    (paths, identifiers, numbers) goes, the earlier of equals, so plain sentences go before the
    conclusion and a sentence that names what was done stays. No sentence is ever cut."""
    parts = _sentences_of(text)
    if len(parts) < 2:  # noqa: PLR2004 - something to keep and something to drop
        return ""
    drop = min(range(len(parts)), key=lambda k: (len(_NAMED.findall(_ITEM_NUMBER.sub("", parts[k]))), k))
    kept = " ".join(parts[:drop] + parts[drop + 1 :])
    return kept.removeprefix(content.THEN)  # "… Then: X" whose first part went: "X"


# Lists a compressor may make long (the budget bounds them); the others are capped.
_UNCAPPED = {"key_points", "files", "commands"}


def copy_summary(summary: Summary) -> Summary:
    """``model_copy(deep=True)`` for a summary of strings and lists of strings: only the lists,
    which fitting shortens, are copied (deepcopy walked every item, three times a session)."""
    s = summary.model_copy()
    fields = s.__dict__
    for key, value in fields.items():
        if isinstance(value, list):
            if not all(type(v) is str for v in value):
                return summary.model_copy(deep=True)
            fields[key] = list(value)
    return s


def fit(
    summary: Summary,
    meta: EntryMeta,
    budget: int,
    protect: frozenset[str] = frozenset(),
    *,
    strict: bool = False,
    cap: int = 0,
) -> Summary:
    """Shrink a summary until its entry fits ``budget`` bytes by dropping whole list items.

    Items are never cut (a command or a supersedes line cut short changes meaning), and open items
    are never dropped; the outcome loses whole sentences (those naming least first) once the lists
    are down to their minimum. Items in ``protect`` go last: dropping one saves little (the guard
    would restore its anchors); they stay while the entry is within ``cap`` bytes, and with
    ``strict`` they never go.
    """
    from scribed.models import SECTIONS

    s = copy_summary(summary)
    s.goal = one_line(s.goal, 300)
    for key, _ in SECTIONS:
        value = getattr(s, key)
        if isinstance(value, list) and key not in _UNCAPPED:
            setattr(s, key, value[: LIST_CAP * 2])
    size = size_of(s, meta)
    while size > budget:
        got = _trim_once(s, size, protect)
        if got is None and protect and not strict and size > cap:
            protect = frozenset()
            got = _trim_once(s, size, protect)
        if got is None:
            break
        size = got if got >= 0 else size_of(s, meta)
        if size <= budget:
            size = size_of(s, meta)  # the estimate ignores the ratio's digits: check for real
    return s


def _trim_once(s: Summary, size: int, protect: frozenset[str]) -> int | None:
    """Drop the least valuable item (or the outcome's first sentence) in place: the size
    estimate after it (-1: count it again), or None when nothing outside ``protect`` can go."""
    for key in _TRIM_ORDER:
        value = getattr(s, key)
        if isinstance(value, list) and len(value) > _KEEP.get(key, 0):
            at = next(
                (
                    i
                    for i in range(len(value) - 1, -1, -1)
                    if value[i] not in protect and not _open(key, value[i])
                ),
                -1,
            )
            if at < 0:
                continue
            dropped = value.pop(at)
            return size - len(dropped.encode()) - 3 if value else -1
        shorter = fewer_sentences(value) if isinstance(value, str) and key == "outcome" else ""
        if shorter:  # the outcome loses a whole sentence (the one naming least), never a part of one
            setattr(s, key, shorter)
            return -1
    return None


def fit_with_room(
    summary: Summary, anchors: list[Anchor], meta: EntryMeta, budget: int, cap: int = 0
) -> Summary:
    """Fit to ``budget`` while leaving room for the anchors the compressor dropped.

    Restored anchors are worth more than prose, so the prose shrinks to make space for them. An
    error with its fix is mostly anchors (the guard would put them back, without the pairing, at
    about its size): errors go last, and stay while the entry is within ``cap`` (the guard's).
    """
    from scribed.compress import anchors as anchors_mod

    protect = _carriers(summary, anchors)
    fitted = fit(summary, meta, budget, protect, cap=cap)
    text = render(fitted, meta)
    missing = [a for a in anchors if not anchors_mod.present(a, text)]
    if not missing:
        return fitted
    reserve = sum(len(anchors_mod.format_anchor(a).encode()) + 3 for a in missing) + 16
    reserve = min(reserve, int(budget * 0.45))
    # ``fitted`` goes on from where the first fit stopped: fitting walks one fixed sequence of
    # shrinking summaries and stops at the first whose size is within the budget, so fitting
    # ``summary`` to the smaller budget would walk the same steps again (tests/test_entry_fit.py).
    return fit(fitted, meta, budget - reserve, protect, strict=True)  # room for anchors, never by others


# Sections whose items are kept while anything else can go, when their anchors' restored lines
# would take at least CARRIER_SHARE of their bytes: errors (their fix is lost when the guard
# restores them). Files and commands were measured too (bench/quality.py, 96 sessions): weighted
# recall 0.984 against 0.987 without, as the kept items leave the guard less room.
_CARRIER_KEYS = ("errors",)
CARRIER_SHARE = 0.6


def _carriers(summary: Summary, anchors: list[Anchor]) -> frozenset[str]:
    from scribed.compress import anchors as anchors_mod

    out: set[str] = set()
    for key in _CARRIER_KEYS:
        for item in getattr(summary, key):
            held = sum(
                len(anchors_mod.format_anchor(a).encode()) + 3
                for a in anchors
                if anchors_mod.present(a, item)
            )
            if held >= CARRIER_SHARE * (len(item.encode()) + 3):
                out.add(item)
    return frozenset(out)


def shorter_prose(s: Summary, over: int) -> bool:
    """Shorten the outcome (its sentences that name least go), then the goal (its later sentences go), by
    whole sentences until about ``over`` bytes are freed: a sentence is never cut, and the last
    one of each stays. False when neither could give anything."""
    gave = False
    for key, drop in (("outcome", fewer_sentences), ("goal", _without_last_sentence)):
        value: str = getattr(s, key)
        while over > 0:
            cut = drop(value)
            if not cut:
                break
            over -= len(value.encode()) - len(cut.encode())
            value = cut
            gave = True
        setattr(s, key, value)
    return gave


PIVOT = " · then: "  # between a goal and the one a pivot added (sections.goal)


def _without_last_sentence(text: str) -> str:
    """``text`` without its last sentence that asks nothing (:func:`request.sentence_rank`) when one
    asks, else its last ("" when it has only one): a request keeps what it asks ("Replace it with a
    token bucket …") over its context, and its first sentence when none asks; a pivot's goal goes
    whole first (no sentence end comes before its "·")."""
    if PIVOT in text:
        return text.rsplit(PIVOT, 1)[0]
    parts = _sentences_of(text)
    if len(parts) < 2:  # noqa: PLR2004 - something to keep and something to drop
        return ""
    from scribed.compress.request import ASK, sentence_rank  # here: a spawn reads entries without it

    # an ask naming nothing ("Can you add it?") keeps nothing: its context says what "it" is
    asked = [sentence_rank(x) == ASK and content.carried(x) >= content.MIN_CARRIED for x in parts]
    drop = next((k for k in range(len(parts) - 1, -1, -1) if not asked[k] and any(asked)), len(parts) - 1)
    return " ".join(parts[:drop] + parts[drop + 1 :])
