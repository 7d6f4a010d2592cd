"""Issue 13: agent names are case-folded to one canonical name. ``Picard.md`` and ``picard.md`` are one
agent (one cold file, on any disk) and scribed warns about the collision; a non-ASCII look-alike
(the Kelvin sign folds to ``k``) is refused instead of landing silently on another agent's file."""

from __future__ import annotations

import os
from pathlib import Path

from lossy_kit import OLD, make_root, run_once, status

from scribed.names import normalize_name


def hot(root: Path, name: str, text: str) -> Path:
    p = root / ".squad/memory/hot" / name
    p.write_text(text)
    os.utime(p, (OLD, OLD))
    return p


def test_names_differing_by_case_are_one_agent(tmp_path: Path) -> None:
    root, _srcs, cfg = make_root(tmp_path)
    hot(root, "Picard.md", "Current task: fix login\n\nDecision: use Argon2 for hashing in src/auth.py.\n")
    hot(root, "picard.md", "Current task: tune the cache\n\nDecision: cap the LRU at 512 in src/cache.py.\n")
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 2, err[-2000:]
    assert {e["agent"] for e in out["entries"]} == {"picard"}
    cold = sorted(p.name for p in (root / ".squad/memory/cold").iterdir())
    assert cold == ["picard", "picard.md"]  # the shared store (one file an entry) and its view
    assert len(list((root / ".squad/memory/cold/picard").glob("*.md"))) == 2
    text = (root / ".squad/memory/cold/picard.md").read_text()
    assert "src/auth.py" in text and "src/cache.py" in text
    warnings = [line for line in err.splitlines() if "agent_name_collision" in line]
    assert warnings and "Picard.md" in warnings[0] and "picard.md" in warnings[0], err[-2000:]
    assert [a["agent"] for a in status(cfg)["tiers"]["agents"]] == ["picard"]


def test_non_ascii_lookalike_names_are_refused(tmp_path: Path) -> None:
    assert normalize_name("Picard") == normalize_name("PICARD") == "picard"
    assert normalize_name("\u212aeeper") is None  # KELVIN SIGN, which .lower() turns into "k"
    assert normalize_name("picard\u0131") is None
    root, _srcs, cfg = make_root(tmp_path)
    hot(root, "keeper.md", "Current task: keep the keys\n\nDecision: store keys in src/vault.py.\n")
    hot(root, "\u212aeeper.md", "Current task: impostor\n\nDecision: overwrite everything in src/evil.py.\n")
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    text = (root / ".squad/memory/cold/keeper.md").read_text()
    assert "src/vault.py" in text and "src/evil.py" not in text
    assert "invalid agent name" in err
