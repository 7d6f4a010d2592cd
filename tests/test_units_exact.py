"""The shortcuts in ``compress.units``'s selection (issue 15) decide exactly what the plain checks
decide: a near-duplicate missed or invented, or a weight off in its last bit, would change which
key points an entry keeps."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterable

import pytest

from scribed.compress import selection
from scribed.compress import tokens as tokens_mod
from scribed.compress.tokens import Vocab
from scribed.compress.units import Unit


def _unit(pos: int, toks: Iterable[int]) -> Unit:
    return Unit("x" * 20, pos, 1, "prose", 1.0, tuple(toks), 23)


def _near_duplicate_ref(u: Unit, chosen: list[Unit]) -> bool:
    """Every chosen unit compared, Jaccard in floats as the code does."""
    for c in chosen:
        n, m = len(u.tokens), len(c.tokens)
        if 10 * min(n, m) < 7 * max(n, m):
            continue
        a, b = set(u.tokens), set(c.tokens)
        if len(a & b) / max(1, len(a | b)) >= selection.NEAR_DUPLICATE:
            return True
    return False


def test_near_duplicate_equals_comparing_every_chosen_unit() -> None:
    rng = random.Random(15)
    hits = 0
    for trial in range(300):
        vocab = list(range(rng.randint(6, 30)))
        chosen: list[Unit] = []
        by_token: dict[int, list[Unit]] = {}
        for pos in range(rng.randint(0, 25)):
            c = _unit(pos, rng.sample(vocab, rng.randint(1, min(10, len(vocab)))))
            chosen.append(c)
            for t in c.tokens:
                by_token.setdefault(t, []).append(c)
        for k in range(40):
            base = rng.choice(chosen).tokens if chosen and k % 2 else ()
            toks = set(base) | set(rng.sample(vocab, rng.randint(0, 4)))
            toks -= set(rng.sample(sorted(toks), min(len(toks), rng.randint(0, 2))))
            if not toks:
                continue
            u = _unit(1000 + k, sorted(toks, key=lambda _: rng.random()))
            want = _near_duplicate_ref(u, chosen)
            hits += want
            assert selection.near_duplicate(u, by_token) == want, (trial, k, sorted(toks))
    assert hits > 500  # both answers are exercised


def test_weights_equal_the_formula_per_token() -> None:
    rng = random.Random(3)
    words = [f"name{i}" for i in range(50)] + ["src/a.py", "#12", "42", "v2.1", "foo", "unused"]
    vocab = Vocab()
    assert vocab.of(" ".join(words)) == tuple(range(len(words)))
    pool = [_unit(i, rng.sample(range(len(words) - 1), rng.randint(1, 8))) for i in range(400)]
    camel = frozenset({"name3", "name7"})
    df = Counter(t for u in pool for t in u.tokens)
    n = len(pool)
    got = selection.weights(pool, vocab, camel)
    assert len(got) == len(words) and got[-1] == 0.0  # an id no unit holds
    for i, t in enumerate(words[:-1]):
        base = 3.0 if t in camel else tokens_mod.token_weight(t)
        assert got[i] == base * (0.35 + 0.65 * math.log(1 + n / df[i]) / math.log(1 + n)), t


@pytest.mark.parametrize("chunk", [4096, 3, 1])
def test_stale_filter_equals_searching_each_unit(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``extractive._without_stale`` searches many units at once (``chunk`` at a time); a match
    must still be one unit's, and a unit at a chunk's edge is searched like the others."""
    from scribed.compress import extractive

    monkeypatch.setattr(extractive, "STALE_CHUNK", chunk)
    rng = random.Random(5)
    words = ["we", "use", "Redis", "ΣΑΣ", "İd", "cache", "ab", "b", "a b"]
    for _ in range(400):
        pool = [_unit(i, (0,)) for i in range(rng.randint(0, 12))]
        for u in pool:
            u.text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        stale = [
            " ".join(rng.choice(words) for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(1, 2))
        ]
        stale += ["  "] if rng.random() < 0.05 else []
        low = [" ".join(x.lower().split()) for x in stale]
        want = [u for u in pool if not any(x in u.text.lower() for x in low)]
        assert extractive._without_stale(pool, stale) == want, (stale, [u.text for u in pool])
