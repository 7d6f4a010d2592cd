"""The retention guard: after fitting, the anchors an entry lost (paths, commands, errors the
compressor or the fit dropped) are added back under Key facts within a hard cap, prose cut by whole
sentences to make room but never a fact for another. It checks an entry against its anchors rather
than shrinking it, so it sits apart from :mod:`scribed.compress.entry_fit`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from scribed.compress.entry import EntryMeta, item_bytes, parts_of, render, settled, size_of
from scribed.compress.entry_fit import copy_summary, no_fix, shorter_prose

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scribed.models import Anchor, Summary

FIXED_LABEL = "fixed:"  # a restored error whose line (dropped to fit) named its fix: not "error:"


def guard(
    summary: Summary, anchors: list[Anchor], meta: EntryMeta, hard_cap: int, errors: Sequence[str] = ()
) -> tuple[Summary, float]:
    """Add anchors the compressor dropped under Key facts, within ``hard_cap`` bytes. ``errors``:
    the compressor's ``error → fix`` lines before the entry was fitted; an error restored from a
    line the fit dropped that named a fix is listed as ``fixed:``, not ``error:`` (which the next
    spawn's hot seed lists as a blocker).

    Returns the amended summary and the anchor recall of the final entry.
    """
    from scribed.compress import anchors as anchors_mod
    from scribed.models import SECTIONS

    s = copy_summary(summary)
    text = render(s, meta)
    missing = [a for a in anchors if not anchors_mod.present(a, text)]
    missing.sort(key=lambda a: anchors_mod.PRIORITY.index(a.type))
    # The size is kept as facts are added (exactly what size_of would count), not counted anew.
    _, blocks, fixed = parts_of(s, meta)
    listed = sum(1 for v in s.key_facts if v and v.strip())
    title = dict(SECTIONS)["key_facts"]
    lost = {id(a) for a in missing}
    held = [a for a in anchors if id(a) not in lost]  # what a cut of the prose must not take
    may_cut = True  # one failed cut is the last: the prose has nothing more to give
    for a in missing:
        if s.key_facts and anchors_mod.present(a, "\n".join(s.key_facts)):
            continue  # an earlier restored line already carries it
        line = anchors_mod.format_anchor(a)
        if a.type == "error" and _fixed_in(a.text, errors):
            line = FIXED_LABEL + line.removeprefix("error:")  # as long: the budget buys no less
        added = item_bytes(line, listed, len(blocks), title)
        s.key_facts.append(line)
        over = settled(fixed + added, meta)[1] - hard_cap
        if over > 0:
            if may_cut and _room_from_prose(s, over, meta, hard_cap, held):
                _, blocks, fixed = parts_of(s, meta)
                listed += 1
                continue
            may_cut = False
            s.key_facts.pop()
        elif added:
            fixed += added
            listed += 1  # from here on the count of printed sections no longer matters
    final = render(s, replace(meta, recall=0.0))
    return s, anchors_mod.recall(anchors, final)


def _room_from_prose(s: Summary, over: int, meta: EntryMeta, hard_cap: int, kept: list[Anchor]) -> bool:
    """Cut the goal and outcome so the entry (its last key fact included) fits ``hard_cap``; undone,
    and False, when it cannot or when the cut text held an anchor the entry had (found by review:
    a fact must not be traded for another)."""
    from scribed.compress import anchors as anchors_mod

    prose = (s.goal, s.outcome)
    if shorter_prose(s, over) and size_of(s, meta) <= hard_cap:
        text = render(s, meta)
        if all(anchors_mod.present(a, text) for a in kept):
            return True
    s.goal, s.outcome = prose
    return False


def _fixed_in(error: str, lines: Sequence[str]) -> bool:
    """Whether one of the ``error → fix`` ``lines`` holds ``error`` with a fix, or gone when its check
    ran again (a test green on re-run restored as ``error:`` was the next spawn's blocker)."""
    for line in lines:
        err, arrow, fix = line.partition(" → ")
        if arrow and _same_error(err.strip().strip("`"), error) and not no_fix(fix):
            return True
    return False


def _same_error(err: str, anchor: str) -> bool:
    """Whether a pair line's error is the anchor's: the same, its start (an anchor is cut to
    length) or its end after a mark (``*** [upload] Error 2``), not a longer name (``KeyError: x``
    is not ``Error: x``)."""
    if err == anchor or err.startswith(anchor):
        return True
    return err.endswith(anchor) and not err[-len(anchor) - 1].isalnum()
