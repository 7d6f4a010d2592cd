"""A giant session's key-point candidates, a window of its turns at a time (issue 32).

The unit pool holds every sentence, item and kept tool line of a session with its token ids:
about 1.3 times the session's text, so a 76 MB Squad REPL session of prose peaked at 280 MB. Over
:data:`WINDOW_CHARS` twice, the turns are split a window at a time; each window's pool keeps its
best units for :data:`KEEP` times the room (the same greedy selection, scored among the window's
units), and the key points are chosen among those survivors. Memory follows a window and the
survivors, not the session. A session under the threshold, every session the real-data and
synthetic sets hold, is split whole as before: the same entry byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from scribed.compress import selection, units
from scribed.models import Turn

WINDOW_CHARS = 8 << 20  # a window's text; a session over twice this is read in windows
KEEP = 4  # a window keeps its best units for this many times the key points' room


def pool(
    turns: list[Turn],
    room: int,
    covered: frozenset[str],
    exclude: Sequence[str],
    prune: Callable[[list[units.Unit]], list[units.Unit]],
) -> units.Pool:
    """The units the key points are chosen from: every unit of ``turns`` (``prune`` applied: the
    stale ones out), or for a giant session each window's best. ``covered`` tokens and
    ``exclude`` texts count as in :func:`selection.select`."""
    if sum(len(t.text) for t in turns) <= 2 * WINDOW_CHARS:
        return _pruned(units.split(turns), prune)
    last = units.last_said(turns)
    out = units.Pool([], frozenset(), frozenset())
    camel: set[str] = set()
    names: set[str] = set()
    seen: set[str] = set()
    for part in _windows(turns):
        p = _pruned(units.split(part, part=True, last=last), prune)
        camel |= p.camel
        names |= p.names
        for u in selection.select(p, room * KEEP, covered, exclude=exclude):
            if u.text in seen:  # said in two windows: once
                continue
            seen.add(u.text)
            toks = tuple(out.vocab.intern(p.vocab.words[i]) for i in u.tokens)
            out.units.append(units.Unit(u.text, len(out.units), u.line, u.kind, u.weight, toks, u.size))
    out.camel, out.names = frozenset(camel), frozenset(names)
    return out


def _pruned(p: units.Pool, prune: Callable[[list[units.Unit]], list[units.Unit]]) -> units.Pool:
    kept = prune(p.units)
    if kept is not p.units:
        for i, u in enumerate(kept):
            u.pos = i
        p.units = kept
    return p


def _windows(turns: list[Turn]) -> Iterator[list[Turn]]:
    """``turns`` in runs of about WINDOW_CHARS of text (a turn is never cut)."""
    part: list[Turn] = []
    size = 0
    for t in turns:
        part.append(t)
        size += len(t.text)
        if size >= WINDOW_CHARS:
            yield part
            part, size = [], 0
    if part:
        yield part
