"""Why cold entries are one file each: how often git's union merge corrupts appended entries.

Two sides each append 1-2 markdown entries (lines drawn from a small vocabulary, as cold entries
share ``#### Goal``, blank lines and common commands) to the same base file; ``git merge-file
--union`` merges them, and a merge counts as corrupt when any entry's lines are no longer
contiguous in the result. ``--end-line`` adds a line unique to each entry at its end.

    python bench/union_merge.py --merges 300 --seed 1
    python bench/union_merge.py --merges 300 --seed 1 --end-line
"""

from __future__ import annotations

import argparse
import random
import subprocess
import tempfile
from pathlib import Path

VOCAB = ["#### Goal", "#### Outcome", "#### Key points", "- common line", "- other line", "", "- `pytest -q`",
         "#### Open items", "- fix it"]  # fmt: skip


def entry(name: str, rnd: random.Random, end_line: bool) -> str:
    lines = [f"### 2026-01-01T00:00:0{rnd.randint(0, 9)}Z: {name}", f"- provenance: id={name}"]
    lines += [rnd.choice(VOCAB) for _ in range(rnd.randint(1, 12))]
    if end_line:
        lines.append(f"<!-- end {name} -->")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--merges", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--end-line", action="store_true")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        for i in range(a.merges):
            base_entries = [entry(f"e-b{j}", rnd, a.end_line) for j in range(rnd.randint(0, 3))]
            base = "# Cold\n\n" + "\n".join(base_entries)
            ours = [entry(f"e-o{i}{k}", rnd, a.end_line) for k in range(rnd.randint(1, 2))]
            theirs = [entry(f"e-t{i}{k}", rnd, a.end_line) for k in range(rnd.randint(1, 2))]
            for name, text in (
                ("b", base),
                ("o", base + "\n" + "\n".join(ours)),
                ("t", base + "\n" + "\n".join(theirs)),
            ):
                (folder / name).write_text(text)
            out = subprocess.run(
                ["git", "merge-file", "--union", "-p", str(folder / "o"), str(folder / "b"), str(folder / "t")],
                capture_output=True, text=True, check=False,
            ).stdout  # fmt: skip
            bad += any(e not in out for e in base_entries + ours + theirs)
    print(f"corrupt merges: {bad} of {a.merges} (seed {a.seed}, end line {'yes' if a.end_line else 'no'})")


if __name__ == "__main__":
    main()
