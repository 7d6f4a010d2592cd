"""Token ids (issue 32) change how a unit's tokens are held, not what is chosen: the selection over
a session's int ids picks exactly what the selection over frozensets of strings picked (the code
before issue 32, kept here as the reference), on generated sessions with covered tokens and
excluded texts; and a unit's ids name exactly :func:`tokens_mod.tokens` of its text."""

from __future__ import annotations

import heapq
import math
import random
import sys
from collections import Counter
from itertools import filterfalse
from pathlib import Path

from scribed.compress import content, selection, units
from scribed.compress import tokens as tokens_mod
from scribed.models import Turn

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import gen  # noqa: E402

Toks = frozenset[str]


def _weights_ref(toks: list[Toks], pool: units.Pool) -> dict[str, float]:
    df = Counter(t for ts in toks for t in ts)
    n = max(1, len(toks))
    norm = math.log(1 + n)
    out = {}
    for t, d in df.items():
        if t in pool.camel:
            w = 3.0
        elif t in pool.names:
            w = selection.NAME_WEIGHT
        elif t in content.DATE_WORDS:
            w = selection.DATE_WEIGHT
        elif t in content.NUMBER_WORDS:
            w = selection.NUMBER_WORD_WEIGHT
        else:
            w = tokens_mod.token_weight(t)
        out[t] = w * (0.35 + 0.65 * math.log(1 + n / d) / norm)
    return out


def _select_ref(pool: units.Pool, budget: int, covered: Toks, exclude: list[str]) -> list[str]:
    """The selection as it was before token ids: every chosen unit compared for near-duplicates,
    every score recomputed when it comes up, tokens as frozensets of strings."""
    if budget <= 0 or not pool.units:
        return []
    words = pool.vocab.words
    toks = [frozenset(words[i] for i in u.tokens) for u in pool.units]
    weights = _weights_ref(toks, pool)
    have = set(covered)
    skip = {" ".join(x.split()) for x in exclude}
    chosen: list[Toks] = [t for t in map(tokens_mod.tokens, sorted(skip)) if t]
    picked: list[int] = []
    left, code_left = budget, int(budget * selection.CODE_SHARE)

    def gain(k: int) -> float:
        u = pool.units[k]
        return (
            u.weight * math.fsum(weights[t] for t in filterfalse(have.__contains__, toks[k])) / u.size**0.75
        )

    heap = [(-gain(k), k) for k, u in enumerate(pool.units) if u.text not in skip]
    heapq.heapify(heap)
    while heap and left > selection.MIN_ROOM:
        _, k = heapq.heappop(heap)
        u = pool.units[k]
        if u.size > left or (u.kind == "code" and u.size > code_left):
            continue
        g = gain(k)
        if g <= 0:
            continue
        if heap and g < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-g, k))
            continue
        if any(len(toks[k] & c) / max(1, len(toks[k] | c)) >= selection.NEAR_DUPLICATE for c in chosen):
            continue
        picked.append(k)
        chosen.append(toks[k])
        have.update(toks[k])
        left -= u.size
        code_left -= u.size if u.kind == "code" else 0
    return [pool.units[k].text for k in sorted(picked)]


def _turns(seed: int, kb: int) -> list[Turn]:
    """A generated session's lines as a conversation: requests, answers with code, tool output."""
    rng = random.Random(seed)
    text = gen.make_session(seed, 0, gen.FORMATS[seed % 4], kb * 1024).data
    lines = [x for x in text.decode(errors="replace").splitlines() if x.strip()]
    out: list[Turn] = []
    k = 0
    while k < len(lines):
        step = rng.randint(1, 40)
        body = "\n".join(lines[k : k + step])
        role, kind = rng.choice(
            [
                ("user", "message"),
                ("assistant", "message"),
                ("tool", "tool_result"),
                ("assistant", "tool_call"),
            ]
        )
        if role == "assistant" and rng.random() < 0.2:
            body = f"Ran it:\n```\n{body}\n```\nDone, `SHOP_KEY` set in src/app.py."
        out.append(Turn(role, body, kind=kind, line=k + 1))
        k += step
    return out


def test_selection_over_ids_picks_what_the_string_sets_picked() -> None:
    rng = random.Random(32)
    compared = chosen = 0
    for seed in range(12):
        turns = _turns(seed, rng.choice([8, 40, 160]))
        texts = [t.text for t in turns]
        for budget in (0, 300, 2_000, 12_000):
            pool = units.split(turns)
            covered = tokens_mod.tokens(rng.choice(texts)) if seed % 2 else frozenset()
            some = [u.text.removeprefix("user: ") for u in pool.units]
            exclude = [*rng.sample(some, min(len(some), 3)), "Not a unit: src/never_seen.py Δ"]
            want = _select_ref(pool, budget, covered, exclude)
            got = [u.text for u in selection.select(pool, budget, covered, exclude)]
            assert got == want, (seed, budget)
            compared += 1
            chosen += len(got)
    assert compared == 48 and chosen > 300  # 365 since a listing is one unit (was 500+)


def test_a_units_ids_are_its_texts_tokens_each_once() -> None:
    for seed in (3, 4):
        pool = units.split(_turns(seed, 60))
        assert len(pool.vocab.words) == len(pool.vocab.ids) == len(set(pool.vocab.words))
        for u in pool.units:
            assert len(set(u.tokens)) == len(u.tokens)
            text = u.text.removeprefix("user: ")
            assert frozenset(pool.vocab.words[i] for i in u.tokens) == tokens_mod.tokens(text), u.text
