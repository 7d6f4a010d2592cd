"""The speed paths of ``compress.units`` (issue 15) give the same results, bit for bit, as the plain
code they replaced: a character class that differs, or a float summed in an order that follows the
hash seed, would move ties between key points and change entries."""

from __future__ import annotations

import math
import random

from scribed.compress import units
from scribed.compress.units import Unit

_CHARS = "ab#-_./:\\@()$019²٣xéZ"


def _token_weight_ref(tok: str) -> float:
    """``units.token_weight`` as it was: one Python-level check per character."""
    if tok.startswith(("#", "-")) or any(c in tok for c in "_./:\\@()$"):
        return 3.0
    if tok[:1].isdigit():
        return 1.5
    if any(c.isdigit() for c in tok):
        return 2.0
    return 0.6 if len(tok) >= units.WORD_CHARS else 0.2


def test_token_weight_equals_the_per_character_checks() -> None:
    rng = random.Random(15)
    for _ in range(20000):
        tok = "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 7)))
        assert units.token_weight(tok) == _token_weight_ref(tok), tok


def _gain_ref(sel: units._Selection, u: Unit, order: list[str] | None = None) -> float:
    """``_Selection.gain`` written plainly: the exact sum of the uncovered tokens' weights (in
    ``order`` when given, else the set's), then the power."""
    toks = order if order is not None else list(u.tokens)
    g = math.fsum([sel.weights.get(t, 0.0) for t in toks if t not in sel.have])
    return float(u.weight * g / (u.size**0.75))


def test_gain_is_the_exact_sum_in_any_token_order() -> None:
    """The score must not depend on the set's iteration order (the hash seed): a plain ``sum``
    in another order gives other last bits, so other ties and other entries between runs."""
    rng = random.Random(7)
    vocab = [f"tok{i}" for i in range(60)]
    pool = [
        Unit("x" * 20, i, 1, "prose", rng.choice([0.12, 0.3, 1.0, 1.25, 1.5]),
             frozenset(rng.sample(vocab, rng.randint(1, 12))), rng.randint(15, 480))
        for i in range(300)
    ]  # fmt: skip
    weights = units._weights(pool, frozenset())
    sel = units._Selection(pool, weights, set(), 10_000)
    for step in range(40):
        for u in pool:
            shuffled = sorted(u.tokens, key=lambda _: rng.random())
            assert sel.gain(u) == _gain_ref(sel, u) == _gain_ref(sel, u, shuffled)  # exact in any order
        sel.have.update(rng.sample(vocab, 2 if step % 3 else 0))
