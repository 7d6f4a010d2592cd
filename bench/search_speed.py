"""Search latency on a large memory: ``python bench/search_speed.py [--entries 10000]``.

Writes N cold entries over 50 agents into a temporary root, indexes them once (timed), then times
queries (median and max over several words of different rarity). Target: ≤ 50 ms per query on
10,000 entries (issue 17).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scribed.compress import entry  # noqa: E402
from scribed.models import Summary  # noqa: E402
from scribed.recall.search import Index  # noqa: E402
from scribed.tiers.cold import Layout  # noqa: E402

WORDS = [
    "cache",
    "queue",
    "ratelimit",
    "token",
    "bucket",
    "auth",
    "login",
    "clock",
    "migration",
    "index",
    "postgres",
    "redis",
    "kafka",
]


def build(root: Path, n: int, rng: random.Random) -> None:
    lay = Layout(root)
    lay.cold.mkdir(parents=True)
    per: dict[str, list[str]] = {}
    for i in range(n):
        agent = f"agent{i % 50}"
        meta = entry.EntryMeta(
            f"e-{i:012x}",
            agent,
            f"s-{i}",
            "x.md",
            "markdown",
            datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=i),
            1,
            9,
            9,
            "0" * 64,
            "extractive",
            20_000,
        )
        facts = [
            f"{rng.choice(WORDS)} {rng.choice(WORDS)} fix in src/mod_{rng.randint(0, 999)}.py step {j}"
            for j in range(8)
        ]
        per.setdefault(agent, []).append(
            entry.render(Summary(goal=f"work item {i} on {rng.choice(WORDS)}", key_points=facts), meta)
        )
    for agent, texts in per.items():
        (lay.cold / f"{agent}.md").write_text(f"# Cold memory: {agent}\n\n" + "\n".join(texts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, args.entries, rng)
        with Index(Layout(root)) as ix:
            t0 = time.perf_counter()
            ix.refresh(rebuild=True)
            index_s = time.perf_counter() - t0
            queries = ["kafka", "token bucket", "src/mod_17.py", "work item 9999", "postgres migration index"]
            times: list[float] = []
            for _ in range(args.repeat):
                for q in queries:
                    t = time.perf_counter()
                    ix.refresh()  # every query pays the staleness check, as the CLI does
                    ix.search(q, limit=10)
                    times.append((time.perf_counter() - t) * 1000)
    print(
        f"entries={args.entries} index_build_s={index_s:.2f} queries={len(times)} "
        f"median_ms={statistics.median(times):.1f} max_ms={max(times):.1f} (target <= 50 ms)"
    )


if __name__ == "__main__":
    main()
