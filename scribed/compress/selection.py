"""The information-ranked selection that spends an entry's budget on a session's units.

Units (``units.py``) are ranked by the information they add (paths, identifiers, numbers, dates,
names and terms rare in the session; a term already covered adds nothing, which also drops
near-duplicates), weighted by who said it, picked greedily per byte until the budget is spent, and
returned in their original order. Tokens are the session's int ids (:class:`tokens.Vocab`): weights
and document counts are flat lists indexed by id.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import Counter
from collections.abc import Iterable
from itertools import chain, filterfalse

from scribed.compress import content
from scribed.compress.tokens import Vocab, token_weight
from scribed.compress.units import Pool, Unit

MIN_ROOM = 24  # bytes left under which no unit fits usefully
NEAR_DUPLICATE = 0.7  # Jaccard overlap of tokens that makes a unit a repeat of a chosen one
# Code lines are dense in identifiers but are not what a reader of the memory needs most: they
# may take at most this share of the key points.
CODE_SHARE = 0.25
# Who, when, how many: a person's or a place's name, a date word and a quantity in words count like
# figures and identifiers do in code (issue 30: conversations keep their facts).
NAME_WEIGHT = 2.0
DATE_WEIGHT = 1.5
NUMBER_WORD_WEIGHT = 1.5


def weights(
    units: list[Unit], vocab: Vocab, camel: frozenset[str] = frozenset(), names: frozenset[str] = frozenset()
) -> list[float]:
    """Each token id's weight: what the term is worth times how rare it is among ``units`` (0.0 for
    an id no unit holds: never looked up)."""
    df = Counter(chain.from_iterable(u.tokens for u in units))  # counted in C
    n = max(1, len(units))
    norm = math.log(1 + n)
    rarity = {d: 0.35 + 0.65 * math.log(1 + n / d) / norm for d in set(df.values())}  # few distinct counts
    words = vocab.words
    out = [0.0] * len(words)
    for i, d in df.items():
        t = words[i]
        if t in camel:
            w = 3.0
        elif t in names:
            w = NAME_WEIGHT
        elif t in content.DATE_WORDS:
            w = DATE_WEIGHT
        elif t in content.NUMBER_WORDS:
            w = NUMBER_WORD_WEIGHT
        else:
            w = token_weight(t)
        out[i] = w * rarity[d]
    return out


def near_duplicate(u: Unit, chosen_by_token: dict[int, list[Unit]]) -> bool:
    """Whether a chosen unit shares at least 70% of the two units' tokens (Jaccard) with ``u``.

    Exact, but only a few candidates are compared: such a unit shares at least ``k`` = ⌈0.7·n⌉ of
    u's ``n`` tokens, so it holds one of any ``n - k + 1`` of them (the ones fewest chosen units
    hold are read); and sizes under 7:10 can never reach 0.7 (checked in integers). A unit's ids
    are distinct, so the union is ``n + m - shared``.
    """
    n = len(u.tokens)
    need = (7 * n + 9) // 10
    held = list(filter(None, map(chosen_by_token.get, u.tokens)))  # tokens some chosen unit holds
    if len(held) < need:
        return False  # a repeat would share ``need`` tokens, each held by a chosen unit
    held.sort(key=len)
    postings = held[: len(held) - need + 1]  # with the n - len(held) empty ones: n - need + 1
    seen: set[int] = set()
    mine: set[int] | None = None
    for chosen in postings:
        for c in chosen:
            m = len(c.tokens)
            if 10 * min(n, m) < 7 * max(n, m) or c.pos in seen:
                continue
            seen.add(c.pos)
            if mine is None:
                mine = set(u.tokens)
            inter = len(mine.intersection(c.tokens))
            if inter / max(1, n + m - inter) >= NEAR_DUPLICATE:
                return True
    return False


def select(pool: Pool, budget: int, covered: Iterable[str] = (), exclude: Iterable[str] = ()) -> list[Unit]:
    """Greedy max-coverage selection within ``budget`` bytes, returned in source order.

    One pass over every unit: tool-output lines compete at their low weight. (A second pass for
    them only after everything said was measured worse on the real-data set: identifier retention
    on sessions ≥ 16 KB fell from 1.51× to 1.43× head truncation, since read files and command
    output hold most of a session's names.) ``covered`` tokens (strings) add nothing; a unit
    repeating one of the ``exclude`` texts (what the entry's other sections hold) is an echo.
    """
    units = pool.units
    if budget <= 0 or not units:
        return []
    vocab = pool.vocab
    have = {i for i in map(vocab.ids.get, covered) if i is not None}  # a token no unit holds changes nothing
    sel = Selection(units, weights(units, vocab, pool.camel, pool.names), have, budget)
    skip = {" ".join(x.split()) for x in exclude}
    for k, text in enumerate(sorted(skip)):
        toks = vocab.of(text)  # new ids for its other tokens: they count in the Jaccard union
        if toks:
            held = Unit(text, -1 - k, 0, "item", 0.0, toks, 0)
            for tok in toks:
                sel.by_token.setdefault(tok, []).append(held)
    sel.run([u for u in units if u.text not in skip])
    sel.chosen.sort(key=lambda x: x.pos)
    return sel.chosen


class Selection:
    """The state of one greedy pass: what is covered, what is chosen, what is left."""

    def __init__(self, units: list[Unit], weights: list[float], have: set[int], budget: int) -> None:
        self.units = units
        self.weights = weights
        self.have = have
        self.left = budget
        self.code_left = int(budget * CODE_SHARE)
        self.chosen: list[Unit] = []
        self.by_token: dict[int, list[Unit]] = {}
        self.scale: array[float] = array(
            "d", (u.size**0.75 for u in units)
        )  # by pos: 8 bytes a unit, not a float object
        self.weight_of = weights.__getitem__  # bound once: ``gain`` runs in C over a unit's tokens
        self.covered = have.__contains__  # ``have`` grows in place, so this stays its test

    def gain(self, u: Unit) -> float:
        """Weight of u's uncovered tokens per byte^0.75. Summed exactly (``math.fsum``): a plain sum
        follows the tokens' order, so the last bits of a score, a tie, and so the entry would
        depend on it. A unit sharing no token with what is covered (a quarter of the calls) is
        summed in C; every token of a unit has a weight (:func:`weights` counts them all)."""
        toks = u.tokens
        if self.have.isdisjoint(toks):
            g = math.fsum(map(self.weight_of, toks))
        else:
            g = math.fsum(map(self.weight_of, filterfalse(self.covered, toks)))
        return u.weight * g / self.scale[u.pos]

    def run(self, candidates: list[Unit]) -> None:
        """Lazy greedy: a unit's score is recomputed when it comes up, unless nothing was taken
        since it was computed (a gain changes only when ``have`` grows).

        Units come up in the order of ``(-score, pos, units chosen then)``, as from one heap of
        them all; but the candidates are sorted once by their first score (a stable sort of a
        list in ``pos`` order breaks ties by ``pos``, as the tuples do) and read from the front,
        and only re-scored units go to a heap: a heap of a tuple per unit held 14 MB on a 64 MB
        session's 159,412 units, and popped each through 17 levels (issue 32)."""
        gain, units, heappop, chosen = self.gain, self.units, heapq.heappop, self.chosen
        negs = array("d", bytes(8 * len(units)))  # first -score by pos

        def first(u: Unit) -> float:
            negs[u.pos] = neg = -gain(u)
            return neg

        candidates.sort(key=first)
        end, k = len(candidates), 0
        heap: list[tuple[float, int, int]] = []  # (-score, pos, units chosen then), re-scored
        while self.left > MIN_ROOM:
            if k < end and not (heap and heap[0] < (negs[candidates[k].pos], candidates[k].pos, 0)):
                u, taken = candidates[k], 0
                neg = negs[u.pos]
                k += 1
            elif heap:
                neg, pos, taken = heappop(heap)
                u = units[pos]
            else:
                break
            if u.size > self.left or (u.kind == "code" and u.size > self.code_left):
                continue
            g = -neg if taken == len(chosen) else gain(u)
            if g <= 0:
                continue
            best = negs[candidates[k].pos] if k < end else None  # the least -score still queued
            if heap and (best is None or heap[0][0] < best):
                best = heap[0][0]
            if best is not None and g < -best - 1e-12:
                heapq.heappush(heap, (-g, u.pos, len(chosen)))  # stale score: re-queue with the current gain
                continue
            if near_duplicate(u, self.by_token):
                continue
            self.take(u)

    def take(self, u: Unit) -> None:
        self.chosen.append(u)
        self.left -= u.size
        if u.kind == "code":
            self.code_left -= u.size
        self.have.update(u.tokens)
        for t in u.tokens:
            self.by_token.setdefault(t, []).append(u)
