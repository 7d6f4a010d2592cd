"""Squad's state backends: where a team keeps ``.squad/`` state decides whether scribed may write.

Squad's ``stateBackend`` (``.squad/config.json``): ``local`` (or unset) keeps state in the working
tree, where scribed writes its tiers; ``orphan`` and ``two-layer`` keep it on the ``squad-state``
branch (and git notes), and Squad's pre-commit hook refuses state files in the working tree. Until
scribed writes its tiers to that branch, every command that writes tiers refuses there, before it
writes anything, with the same one line ``import`` gives (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path

STATE_BRANCH_BACKENDS = ("orphan", "two-layer")


def state_backend(squad: Path) -> str:
    """``stateBackend`` from ``.squad/config.json`` ("" when unset, unreadable or no file)."""
    try:
        data = json.loads((squad / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    value = data.get("stateBackend", "") if isinstance(data, dict) else ""
    return str(value or "")


def refusal(squad: Path) -> str | None:
    """The one-line refusal on a state-branch backend, or None where writing is safe."""
    backend = state_backend(squad)
    if backend not in STATE_BRANCH_BACKENDS:
        return None
    return (
        f"{squad / 'config.json'} sets stateBackend={backend!r}: Squad keeps mutable state (memory, "
        "histories) on the 'squad-state' branch, not in this working tree, and a pre-commit hook refuses "
        "it here. scribed writes its tier files to the working tree only, so it stops: nothing was written."
    )
