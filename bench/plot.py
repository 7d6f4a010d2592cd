"""Plots for docs/benchmarks.md from ``bench/quality.py --json`` output (no data of its own).

Run: ``python bench/plot.py q05.json q10.json q20.json --out docs/``. Each file is one quality
run (typically at a different ``--ratio``); every method becomes one line of weighted recall
against its mean ratio (p50 saturates: ``compress.max_bytes`` caps long sessions), so scribed and the peers are compared at the same byte budgets.
Writes ``recall_vs_ratio.png`` and ``recall_by_type.png`` (the run closest to ratio 0.10).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

LABELS = {
    "head": "head truncation",
    "headtail": "head+tail truncation",
    "lexrank": "LexRank (sumy)",
    "textrank": "TextRank (sumy)",
}
TYPES = ("decision", "path", "identifier", "error", "command", "number", "issue", "todo", "directive")


def methods(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"scribed ({run['backend']})": run, **{LABELS.get(k, k): v for k, v in run["peers"].items()}}


def recall_vs_ratio(runs: list[dict[str, Any]], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    names = list(methods(runs[0]))
    for name in names:
        pts = sorted((methods(r)[name]["ratio"]["mean"], methods(r)[name]["weighted_recall"]) for r in runs)
        xs, ys = zip(*pts, strict=True)
        style = (
            {"linewidth": 2.6, "marker": "o", "zorder": 3}
            if name.startswith("scribed")
            else {"marker": "s", "alpha": 0.85}
        )
        ax.plot(xs, ys, label=name, **style)
        if name.startswith("scribed"):
            rec = sorted(
                (methods(r)[name]["ratio"]["mean"], methods(r)[name]["weighted_recall_recognised"])
                for r in runs
            )
            rx, ry = zip(*rec, strict=True)
            ax.plot(rx, ry, linestyle="--", marker="o", color=ax.lines[-1].get_color(), alpha=0.6,
                    label=name + ", recognised phrasing only")  # fmt: skip
    ax.axhline(0.95, color="grey", linestyle=":", linewidth=1)
    ax.axvline(0.10, color="grey", linestyle=":", linewidth=1)
    ax.text(0.101, 0.02, "ratio target 0.10", color="grey", fontsize=8)
    ax.text(0.005, 0.955, "recall target 0.95", color="grey", fontsize=8)
    ax.set_xlabel("output bytes / session bytes (mean over sessions; same budget for every method)")
    ax.set_ylabel("weighted recall of planted facts")
    r0 = runs[0]
    ax.set_title(f"Recall vs size: {r0['sessions']} generated sessions, seed {r0['seed']}", fontsize=10)
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center left", framealpha=0.95)
    fig.tight_layout()
    path = out / "recall_vs_ratio.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def recall_by_type(run: dict[str, Any], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ms = methods(run)
    fig, ax = plt.subplots(figsize=(9, 4.4), dpi=120)
    width = 0.8 / len(ms)
    for i, (name, m) in enumerate(ms.items()):
        xs = [t + (i - (len(ms) - 1) / 2) * width for t in range(len(TYPES))]
        ax.bar(xs, [m["recall"][t] or 0 for t in TYPES], width, label=name)
    ax.set_xticks(range(len(TYPES)), TYPES, fontsize=9)
    ax.set_ylabel("recall")
    ax.set_ylim(0, 1.05)
    ax.set_title(
        f"Recall per planted fact type at the same budget (scribed ratio p50 {run['ratio']['p50']:.3f})",
        fontsize=10,
    )
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.09))
    fig.tight_layout()
    path = out / "recall_by_type.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="bench/quality.py --json outputs")
    ap.add_argument("--out", type=Path, default=Path("docs"))
    a = ap.parse_args(argv)
    runs = [json.loads(p.read_text()) for p in a.runs]
    a.out.mkdir(parents=True, exist_ok=True)
    print(recall_vs_ratio(runs, a.out))
    main_run = min(runs, key=lambda r: abs((r.get("config_ratio") or r["ratio"]["p50"]) - 0.10))
    print(recall_by_type(main_run, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
