"""The quality benchmark's scoring on a tiny generated set: its keys, and scribed's hard guarantees.

Recall and ratio are benchmark figures (docs/benchmarks.md), not asserted here; what is asserted
holds for every session: no planted secret in any cold entry, and every entry carries provenance.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import gen  # noqa: E402
import quality  # noqa: E402

pytest.importorskip("sumy", reason="the bench extra is not installed: pip install -e '.[bench]'")


@pytest.fixture(scope="module")
def result() -> dict:
    return quality.evaluate(seed=1, sessions=6, max_kb=24)


def test_json_keys(result: dict) -> None:
    for key in (*quality.KEYS, "peers", "by_format", "corpus", "failures"):
        assert key in result, key
    assert set(result["peers"]) == set(quality.PEERS)
    for peer in result["peers"].values():
        for key in quality.KEYS:
            assert key in peer, key
    assert set(result["recall"]) == set(quality.TYPES)
    assert set(result["ratio"]) >= {"p50", "max"}
    assert result["sessions"] == 6


def test_hard_guarantees(result: dict) -> None:
    assert result["secret_leaks"] == 0, result["failures"].get("secret_leak")
    assert result["secret_leaks_anywhere"] == 0
    assert result["provenance_coverage"] == 1.0, result["failures"].get("provenance")
    assert result["run"]["failed"] == 0


def test_generator_is_deterministic_and_plants_every_type() -> None:
    a = [s.data for s in gen.iter_sessions(3, 4, max_kb=16)]
    b = [s.data for s in gen.iter_sessions(3, 4, max_kb=16)]
    assert a == b
    sessions = list(gen.iter_sessions(3, 8, max_kb=60))
    types = {f.type for s in sessions for f in s.manifest.facts}
    assert types == set(quality.TYPES)
    assert {s.fmt for s in sessions} == set(gen.FORMATS)
    for s in sessions:
        for sec in s.manifest.secrets:
            assert sec["values"][0] in s.data.decode() or sec["values"][0] in s.plain


def test_scoring_rules() -> None:
    out = "#### Decisions\n- use B instead of A (supersedes: use A (v1) for x)\n#### Open items\n- thing\n"
    assert "use A (v1) for x" not in quality.strip_supersedes(out)
    assert quality.sections(out)["Open items"] == "- thing\n"
    n, bad, _ = quality.invented("path `src/a/b.py` and `made_up.fn()`", "src/a/b.py")
    assert (n, bad) == (2, 1)
    assert quality.head_tail("x" * 100, 20).startswith("x")
    assert len(quality.head("é" * 50, 11).encode()) <= 11


def test_scale_promote_and_sessions_curves_run(tmp_path: Path) -> None:
    """The growth curves run against the current API (a typed PromoteResult broke the promote
    child once, unnoticed until the bench was run by hand)."""
    import scale

    (row,) = scale.bench_promote([30], tmp_path / "p")
    assert row["entries"] == 30 and row["promoted"] > 0 and row["seconds"] > 0
