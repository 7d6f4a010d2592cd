"""The ledger made to agree with the memory files: the files are the truth, the ledger a cache.

An entry the ledger marks done that no file holds (a merge or a hand removed it from both the
view and the store) is forgotten, so its source is compacted again; with its source gone it is
reported lost (``status``, ``doctor``), never silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scribed.compress.entry import split_entries
from scribed.core import gittree
from scribed.core.ledger_rebuild import rebuild_rows, wiki_source_ids
from scribed.core.sync_state import HAND, PARKED, agents, load_state, save_state
from scribed.fsutil import read_text
from scribed.names import normalize_name
from scribed.tiers import cold_store

if TYPE_CHECKING:
    from scribed.core.ledger import Ledger
    from scribed.tiers.layout import Layout


@dataclass(slots=True)
class Reconciled:
    """Entries the ledger had as done that no memory file holds: compacted again, or lost."""

    again: list[str] = field(default_factory=list)  # ids whose source is still there
    lost: list[dict[str, str]] = field(default_factory=list)  # id, session, agent, source: gone for good


def _held_ids(layout: Layout) -> set[str]:
    """Every id the shared files and this machine's views name: entries, what digests fold, what
    left cold on purpose (``retired.txt``), what the wiki names as its sources, and what git
    removed (its files are committed elsewhere: compacted again, they would be untracked files in
    a checkout that lacks them)."""
    state = load_state(layout)
    out: set[str] = set(state.get(PARKED, {})) | set(state.get(HAND, {}))
    for agent in agents(layout):
        for e in split_entries(read_text(layout.cold_file(agent)))[1]:
            out |= e.ids
        out |= cold_store.read_retired(read_text(layout.cold / agent / cold_store.RETIRED)).keys()
    if layout.wiki.is_dir():
        for p in layout.wiki.glob("**/*.md"):
            out.update(wiki_source_ids(read_text(p)))
    return out


def reconcile(layout: Layout, ledger: Ledger) -> Reconciled:
    """The files are the truth: an entry the ledger marks done that no file holds (a merge or a
    hand removed it from both the view and the store) is forgotten, so its source is compacted
    again; with its source gone it is reported lost (``status``, ``doctor``), never silently."""
    known = ledger.entry_ids()
    if not known:
        return Reconciled()
    missing = set(known) - _held_ids(layout)
    if missing:  # entries folded or promoted before retired.txt existed are in the archives
        missing -= {r["id"] for r in rebuild_rows(layout.memory, layout.archive)}
    if missing:  # a sync state lost after git removed them: git still has them
        ids, _ = gittree.entry_ids(layout.memory, {known[eid][2] for eid in missing})
        by_git = missing & ids
        if by_git:
            state = load_state(layout)
            state.setdefault(PARKED, {}).update({eid: normalize_name(known[eid][2]) or "" for eid in by_git})
            save_state(layout, state)
            missing -= by_git
    out = Reconciled()
    for eid in sorted(missing):
        path, session, agent = known[eid]
        if Path(path).is_file():
            out.again.append(eid)
        else:
            out.lost.append({"id": eid, "session": session, "agent": agent, "source": path})
    if out.again:
        ledger.forget(out.again)
    if out.lost:
        had = lost_entries(ledger)
        seen = {r["id"] for r in had}
        rows = had + [r for r in out.lost if r["id"] not in seen]
        ledger.set_meta("lost_entries", json.dumps(rows))
        ledger.forget([r["id"] for r in out.lost])
    return out


def lost_entries(ledger: Ledger) -> list[dict[str, str]]:
    """What :func:`reconcile` found lost for good (session ids for ``status`` and ``doctor``)."""
    try:
        rows = json.loads(ledger.get_meta("lost_entries") or "[]")
    except ValueError:
        return []
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
