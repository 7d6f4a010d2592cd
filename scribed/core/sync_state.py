"""The team sync's state (``.scribed/cold-sync.json``): what it remembers between two syncs.

A cache, this machine's own: per agent, the stat signature of its view and store folder (equal
to the one kept, nothing changed: the sync skips the agent) and the digests its entries had at
the last sync (the base of the three-way sync, :mod:`scribed.core.cold_sync`); the entries git
removed and those this clone saw removed by hand; what the wiki's and the conflict repair's
stats were. Without it nothing is deleted, everything is kept.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import TYPE_CHECKING, Any

from scribed.fsutil import atomic_write, read_json_object
from scribed.log import misnamed
from scribed.names import normalize_name

if TYPE_CHECKING:
    from scribed.tiers.layout import Layout

STATE = "cold-sync.json"
PARKED = "git_removed"  # in the sync state: key → agent, entries git removed (kept by git, not lost)
HAND = "removed_by_hand"  # in the sync state: key → agent, every entry this clone saw removed by hand
MAX_HAND = 10_000  # ids remembered at most (the oldest forgotten first); a removal by hand is rare
GITIGNORE_SEEN = "gitignore"  # in the sync state: .gitignore was here (True), or git removed it ("git")


def load_state(layout: Layout) -> dict[str, Any]:
    return read_json_object(layout.state / STATE)


def save_state(layout: Layout, state: dict[str, Any]) -> None:
    atomic_write(layout.state / STATE, json.dumps(state, sort_keys=True), base=layout.state)


def agents(layout: Layout) -> list[str]:
    """The agents cold memory has: a store folder or a view, under a name scribed would give."""
    names: set[str] = set()
    with contextlib.suppress(OSError):
        for p in layout.cold.iterdir():
            stem = p.name[:-3] if p.name.endswith(".md") else p.name
            if not (p.is_dir() or p.name.endswith(".md")) or p.is_symlink():
                continue
            if normalize_name(stem) == stem:
                names.add(stem)
            else:
                misnamed(p, "agent")
    return sorted(names)


def signature(layout: Layout, agent: str) -> list[object]:
    """What a stat says of the agent's view and store: equal to the stored one, nothing changed."""
    out: list[object] = []
    view = layout.cold_file(agent)
    with contextlib.suppress(OSError):
        st = view.stat()
        out.append([st.st_mtime_ns, st.st_size])
    folder = layout.cold / agent
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        rows: list[list[str | int]] = []
        for d in it:
            if d.is_file(follow_symlinks=False):
                st = d.stat(follow_symlinks=False)
                rows.append([d.name, st.st_mtime_ns, st.st_size])
        out.append(sorted(rows))
    return out


def stale(layout: Layout) -> list[str]:
    """Agents whose view or store changed since the last sync (a pull, an edit): what a reader that
    holds no lock can tell without writing."""
    agents_state = load_state(layout).get("agents", {})
    return [n for n in agents(layout) if agents_state.get(n, {}).get("sig") != signature(layout, n)]
