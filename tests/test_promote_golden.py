"""Promotion of a generated corpus gives byte-for-byte the wiki it gave before the speed-ups.

The digest below was recorded from the code before promotion was made linear (the index, the
batched writes); any change to a promotion decision (a duplicate merged or not, a reversal found or
not, a topic chosen) changes a wiki file, the cold files left or the report, and so the digest.
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime
from pathlib import Path

from scribed.config import from_dict
from scribed.core import promote

_SYL = ["ka", "lo", "mi", "ren", "tas", "vu", "zor", "pel", "dri", "nox", "qua", "sel"]
VOCAB = [a + b for a in _SYL for b in _SYL]  # 144 made-up words: enough repeats for near-duplicates
TOOLS = ["redis", "postgres", "sqlite", "kafka", "nats", "celery", "grpc", "rest"]
RULES = ["must validate the {w}", "must not log the {w}", "only runs on the {w}", "requires a {w} lock",
         "returns a {w} cursor", "retries the {w} three times", "never blocks the {w}", "always uses {w} time",
         "Done, all tests pass for the {w}", "the {w} is slow because the cache is cold"]  # fmt: skip
ERRORS = ["KeyError: '{w}'", "TimeoutError in {w}", "IntegrityError: duplicate {w}"]
AGENTS = ["picard", "riker", "data", "worf"]
# Re-recorded when a fact said again with another figure began to supersede the earlier one: three
# "the X batch size of M is N rows" facts (16 -> 15, 12 -> 14, 15 -> 16 rows) and one "Known issue: …
# → pin the postgres client to 2.2" (-> 5.6) move under Superseded; a later "the kalo batch size of
# kaka_kalo is 16 rows", which merged into the now superseded "selren … 16 rows" block, merges into
# the other block its words are near ("the kalo batch size of kaka_kaqua is 16 rows").
# Re-recorded when a reversal's scope joined the comparison (stop 44): 78 "use X instead of Y for
# <module> <word> writes (ticket N)" facts no longer supersede a fact on Y that lacks what they are
# for (77 name another module, sharing one made-up word with it: "… for loren_katas katas writes"
# had superseded "use rest for `kadri_loren` reads"; one is narrower than the fact it had superseded);
# nine of the facts so left active are then superseded by a later fact's "(supersedes: …)" reference
# that names them closely enough (same_fact, unchanged).
EXPECTED = "177539306dba1290921f8ec84b603a12afcb86b69c3fec53b28684501bf0aca3"


def _w(rng: random.Random) -> str:
    return VOCAB[int(len(VOCAB) ** rng.random()) - 1]


def _decisions(rng: random.Random, mod: str, tool: str, other: str, num: int) -> list[str]:
    out = [f"use {tool} for the {_w(rng)} {_w(rng)} in `{mod}` (src/{mod}/core_{num}.py) because it scales"]
    r = rng.random()
    if r < 0.2:
        out.append(f"use {tool} instead of {other} for {mod} {_w(rng)} writes (ticket {num})")
    elif r < 0.3:
        out.append(f"reverse the earlier decision to use {other} for `{mod}`")
    elif r < 0.4:
        out.append(f"use {tool} for {mod} writes (supersedes: use {other} for {mod} writes)")
    elif r < 0.5:
        out.append(f"use {other} for {mod} writes — why: the {_w(rng)} team asked")
    return out


def _entry(i: int, rng: random.Random, agent: str, stamp: str) -> str:
    """One cold entry: decisions (some reversing, some superseding), knowledge, errors, directives."""
    mod = f"{_w(rng)}_{_w(rng)}"
    tool, other = rng.sample(TOOLS, 2)
    num = rng.randrange(50)  # small: the same facts come back from other entries and agents
    knowledge = [
        f"`{mod}` {rng.choice(RULES).format(w=_w(rng))}",
        f"the {_w(rng)} batch size of {mod} is {num % 7 + 10} rows",
    ]
    err = rng.choice(ERRORS).format(w=_w(rng))
    key = [f"user: always run the {_w(rng)} checks before {mod}"] if rng.random() < 0.2 else []
    if rng.random() < 0.1:
        key.append(f"decision: use {tool} for `{mod}` reads")
    topic = [f"topic: {_w(rng)}"] if rng.random() < 0.05 else []
    return (
        f"### {stamp}: Work on {mod} #{i}\n"
        f"- provenance: id=e-{i:012x} · agent={agent} · session=s-{i} · compressor=extractive\n\n"
        f"#### Goal\nImprove {mod} ({num})\n"
        + "".join(f"{t}\n" for t in topic)
        + "#### Decisions\n"
        + "".join(f"- {d}\n" for d in _decisions(rng, mod, tool, other, num))
        + "#### Reusable knowledge\n"
        + "".join(f"- {k}\n" for k in knowledge)
        + "#### Errors → fixes\n"
        + f"- `{err}` in {mod} → pin the {tool} client to {num % 9}.{num % 7}\n"
        + ("#### Key facts\n" + "".join(f"- {k}\n" for k in key) if key else "")
    )


def make_corpus(root: Path, n: int, seed: int = 11) -> None:
    """``n`` cold entries over four agents; the last tenth still within the TTL (early reversals)."""
    rng = random.Random(seed)
    cold = root / ".squad" / "memory" / "cold"
    cold.mkdir(parents=True)
    texts: dict[str, list[str]] = {a: [] for a in AGENTS}
    for i in range(n):
        agent = AGENTS[i % 4]
        if i < n * 9 // 10:
            day = i * 300 // n
            stamp = f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
        else:
            stamp = f"2027-05-{10 + i % 18:02d}T{i % 24:02d}:{i % 60:02d}:00Z"
        texts[agent].append(_entry(i, rng, agent, stamp))
    for a, es in texts.items():
        (cold / f"{a}.md").write_text(f"# Cold memory: {a}\n\n" + "\n".join(es))


def digest(root: Path, report: dict[str, object]) -> str:
    """The wiki files, the cold files left and the report's decisions, as one hash."""
    h = hashlib.sha256()
    mem = root / ".squad" / "memory"
    for p in sorted([*mem.glob("wiki/*.md"), *mem.glob("cold/*.md")]):
        h.update(p.relative_to(mem).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(json.dumps(report, sort_keys=True).encode())
    return h.hexdigest()


def run(root: Path, n: int) -> str:
    make_corpus(root, n)
    cfg = from_dict({"root": str(root), "compress": {"backend": "extractive"}})
    clock = lambda: datetime(2027, 6, 1, tzinfo=UTC)  # noqa: E731
    first = promote.promote(cfg, as_of=datetime(2027, 3, 1, tzinfo=UTC), clock=clock)
    second = promote.promote(cfg, as_of=datetime(2027, 6, 1, tzinfo=UTC), clock=clock)
    return digest(root, {"first": first.to_json(), "second": second.to_json()})


def test_promotion_of_a_generated_corpus_is_unchanged(tmp_path: Path) -> None:
    assert run(tmp_path, 600) == EXPECTED
