"""The wiki's block index finds every block a scan would: duplicates, what a ``supersedes``
names and what reversal wording reverses (the index only narrows; the exact tests decide)."""

from __future__ import annotations

import random

from scribed.compress.reversal import reversal_score
from scribed.compress.terms import near_dup, norm, same_fact
from scribed.tiers.wiki_block import Block, Source
from scribed.tiers.wiki_index import BlockIndex, holding

_WORDS = ["redis", "queue", "jobs", "locks", "auth", "session", "clock", "tests", "export", "cursor"]
_TEMPLATES = [
    "use {a} for the {b} {c}",
    "use {a} instead of {b} for {c}",
    "use {a} {b} rather than `{c}` in the {d} tests",
    "reverse the earlier decision to use {a} for {b}",
    "we no longer use {a} {b} for {c} {d}",
    "{a} {b} is replaced by {c} {d}",
    "drop the {a} {b} {c}",
    "**What:** use {a} {b}\n**Why:** {c} {d} starved",
    "{a} {b}",
    "{a}{b} {c}{d}",
    "the {a} {b} {c} {d} must not block the {a} loop p{n}",
    "{a}-{b} `{c}_{d}` returns a cursor of {n} rows",
    "keep the {a} {b} for {n} days",
    "don't use {a} for the {b} {c}",
    "do not use {a} {b}",
    "switch the {a} from {b} to {c}",
    "move from {a} to {b} {c}",
]


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b, c, d = (rng.choice(_WORDS) for _ in range(4))
        out.append(rng.choice(_TEMPLATES).format(a=a, b=b, c=c, d=d, n=rng.randrange(4)))
    return out


def _blocks(texts: list[str]) -> list[Block]:
    out = []
    for i, t in enumerate(texts):
        title = t.split("\n")[0][:24] if i % 3 else ""
        out.append(
            Block(date="2026-01-01", title=title or t[:40], body=t, sources=[Source("2026-01-01", f"e-{i}")])
        )
    return out


def test_index_finds_what_a_scan_finds() -> None:
    olds = _blocks(_texts(400, 1))
    ix = BlockIndex().sync(olds)
    checked = 0
    for new in _texts(300, 2):
        n = norm(new)
        toks = frozenset(n.split())
        dups = {id(b) for b in ix.dups(n, toks)}
        named = {id(b) for b in ix.named(new)}
        rev = {id(b) for b in ix.reversed_by(new)}
        for b in olds:
            if b.is_dup(n, toks) or near_dup(new, b.text):
                assert id(b) in dups, (new, b.text)
            if same_fact(new, b.text) or same_fact(new, b.title):
                assert id(b) in named, (new, b.text, b.title)
            if reversal_score(new, b.text) > 0:
                assert id(b) in rev, (new, b.text)
                checked += 1
    assert checked > 50  # the corpus does exercise reversals


def test_index_narrows() -> None:
    olds = _blocks([f"the w{i} service answers within {i} ms on host h{i}" for i in range(2000)])
    ix = BlockIndex().sync(olds)
    new = "the w77 service answers within 77 ms on host h77"
    n = norm(new)
    assert [b.body for b in ix.dups(n, frozenset(n.split()))] == [new]
    assert len(ix.reversed_by("use the w5 service instead of the w77 service for host h5")) < 10


def test_holding_counts_extra_postings() -> None:
    a, b, c = (Block(date="", title=t) for t in ("a", "b", "c"))
    postings = {"x": [a, b], "y": [a, c], "z": [a, b, c], "w": [b]}
    # holding 3 of x, y, z, w: a holds x, y, z; b holds x, z, w; c only y, z
    assert {blk.title for blk in holding(postings, ["x", "y", "z", "w"], 3)} == {"a", "b"}


def test_index_follows_appends_and_a_new_list() -> None:
    blocks = _blocks(["use redis for the queue"])
    ix = BlockIndex().sync(blocks)
    blocks += _blocks(["use kafka for the export"])
    assert len(ix.sync(blocks).blocks) == 2
    other = _blocks(["drop the export cursor"])
    assert [b.body for b in ix.sync(other).blocks] == ["drop the export cursor"]


def test_named_by_containment() -> None:
    long = "use redis queue jobs for the export cursor in session clock tests"
    olds = _blocks(
        [long, "redisqueue jobs", "redisqueue jobs runner", *(f"fact number {i} here" for i in range(50))]
    )
    ix = BlockIndex().sync(olds)
    assert same_fact("redis queue jobs", long)
    assert long in [b.body for b in ix.named("redis queue jobs")]  # a ref inside a block
    assert same_fact("we moved redisqueue jobs to kafka", "redisqueue jobs")
    assert "redisqueue jobs" in [
        b.body for b in ix.named("we moved redisqueue jobs to kafka")
    ]  # a block inside a ref
    ref = "we moved the redisqueue jobs runner to kafka today at noon"
    assert same_fact(ref, "redisqueue jobs runner")
    assert "redisqueue jobs runner" in [b.body for b in ix.named(ref)]
    assert same_fact("edisqueue job", "redisqueue jobs runner")
    assert "redisqueue jobs runner" in [b.body for b in ix.named("edisqueue job")]  # a short ref inside words


def test_near_duplicates_around_the_one_token_apart_size() -> None:
    """Texts of 14 to 22 tokens, each a base sentence with tokens added, dropped or swapped: the
    index (signatures up to ONE_APART tokens, postings above) finds every near-duplicate a scan finds."""
    from scribed.tiers.wiki_index import ONE_APART

    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(40)]
    bases = [rng.sample(vocab, k) for k in range(ONE_APART - 3, ONE_APART + 6)]

    def variant(base: list[str]) -> str:
        toks = list(base)
        for _ in range(rng.randrange(3)):
            op = rng.randrange(3)
            if op == 0 and len(toks) > 1:
                toks.pop(rng.randrange(len(toks)))
            elif op == 1:
                toks.append(rng.choice(vocab))
            else:
                toks[rng.randrange(len(toks))] = rng.choice(vocab)
        return " ".join(toks)

    olds = _blocks([variant(rng.choice(bases)) for _ in range(600)])
    ix = BlockIndex().sync(olds)
    hits = 0
    for _ in range(300):
        new = variant(rng.choice(bases))
        n = norm(new)
        toks = frozenset(n.split())
        found = {id(b) for b in ix.dups(n, toks)}
        for b in olds:
            if b.is_dup(n, toks):
                assert id(b) in found, (new, b.text)
                hits += len(b.key()[1]) != len(toks)
    assert hits > 100  # near-duplicates of other sizes, not only equal sets
