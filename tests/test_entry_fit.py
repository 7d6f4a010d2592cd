"""Fitting an entry walks one fixed sequence of shrinking summaries and stops at the first that
fits: so fitting a fitted summary to a smaller budget gives what fitting the original to that
budget gives (``fit_with_room`` relies on it to fit once, not twice, issue 15)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from scribed.compress import entry, entry_fit
from scribed.compress.entry import EntryMeta
from scribed.models import Summary

_WORDS = ["fix", "the", "`src/app.py`", "parser", "état", "retry", "#412", "  ", "x" * 90, "🙂", "\n"]


def _text(rng: random.Random, most: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, most)))


def _summary(rng: random.Random) -> Summary:
    lists = ["decisions", "files", "errors", "open_items", "commands", "knowledge", "key_points", "key_facts"]
    return Summary(
        goal=_text(rng, 80),
        outcome=_text(rng, 120),
        **{k: [_text(rng, 40) for _ in range(rng.randint(0, 30))] for k in lists},
    )


def _meta(rng: random.Random) -> EntryMeta:
    return EntryMeta(
        entry_id="e-0123456789ab", agent="data", session="s-1", source="x.jsonl", kind="codex",
        end=datetime(2026, 11, 20, 9, 0, tzinfo=UTC), first_line=1, last_line=90, turns=12,
        sha256="ab" * 32, compressor="extractive", bytes_in=rng.choice([40, 900, 60_000]),
    )  # fmt: skip


def test_fitting_a_fitted_summary_to_less_is_fitting_the_original_to_less() -> None:
    rng = random.Random(15)
    for n in range(400):
        s, meta = _summary(rng), _meta(rng)
        full = entry.size_of(s, meta)
        b1 = rng.randint(200, max(201, full + 200))
        b2 = rng.randint(100, b1)
        once = entry_fit.fit(s, meta, b2)
        twice = entry_fit.fit(entry_fit.fit(s, meta, b1), meta, b2)
        assert twice.model_dump() == once.model_dump(), n
        assert entry.render(twice, meta) == entry.render(once, meta), n
