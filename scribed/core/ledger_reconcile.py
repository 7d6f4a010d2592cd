"""The ledger made to agree with the memory files: the files are the truth, the ledger a cache.

An entry the ledger marks done that no file holds (a merge or a hand removed it from both the
view and the store) is forgotten, so its source is compacted again; with its source gone it is
reported lost (``status``, ``doctor``), never silently. One whose file git removed (a checkout, a
pulled ``git rm``) is git's, and left so; one whose file git's index still holds while the working
tree lacks it or it is emptied (a plain ``rm``) is written back from git.
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
from scribed.fsutil import atomic_write, ensure_dir, read_text
from scribed.names import normalize_name
from scribed.tiers import cold_store

if TYPE_CHECKING:
    from scribed.core.ledger import Ledger
    from scribed.tiers.layout import Layout


@dataclass(slots=True)
class Reconciled:
    """Entries the ledger had as done that no memory file holds: written back from git, compacted
    again, or lost."""

    again: list[str] = field(default_factory=list)  # ids whose source is still there
    lost: list[dict[str, str]] = field(default_factory=list)  # id, session, agent, source: gone for good
    restored: dict[str, tuple[str, str]] = field(default_factory=dict)  # id → its file, where git had it


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
    out = Reconciled()
    state = load_state(layout)
    parked = {eid for eid in state.get(PARKED, {}) if eid in known}
    by_git: set[str] = set()
    if missing:  # a sync state lost after git removed them: git still has them
        ids, _ = gittree.entry_ids(layout.memory, {known[eid][2] for eid in missing})
        by_git = missing & ids
    accident: set[str] = set()
    if by_git or parked:  # unless git's index still has the file: deleted behind git's back
        out.restored, accident = _behind_git(layout, {eid: known[eid][2] for eid in by_git | parked})
    unparked = accident & parked  # parked by a scribed that took such a file for git's doing
    by_git -= accident
    missing = (missing | unparked) - by_git - out.restored.keys()
    if by_git or unparked:
        for eid in unparked:
            state[PARKED].pop(eid, None)
        state.setdefault(PARKED, {}).update({eid: normalize_name(known[eid][2]) or "" for eid in by_git})
        save_state(layout, state)
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


def _behind_git(layout: Layout, ids: dict[str, str]) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """Of ``ids`` (id → agent), git's history shows their files, those whose file git's index still
    holds while the working tree lacks it or it holds no entry (:func:`cold_store.broken`): not
    git's doing (git takes a file it removes out of its index) but a plain ``rm``, a tool. Each is
    written back from the newest version git has that holds it. Returns id → (file, where git had
    it) for those written back, and every such id (the others are compacted again, or lost)."""
    folders = {f"{layout.cold.name}/{n}/" for n in map(normalize_name, ids.values()) if n}
    if not folders or not gittree.usable(layout.memory):
        return {}, set()
    found = gittree.tracked(layout.memory, folders)
    git = gittree.Asker(layout.memory)
    back: dict[str, tuple[str, str]] = {}
    accident: set[str] = set()
    for rel in sorted(found.paths):
        parts = rel.split("/")
        k = cold_store.key_of_name(parts[-1]) if len(parts) == 3 else None  # noqa: PLR2004  (cold/agent/file)
        path = layout.memory / rel
        if k not in ids or (path.is_file() and not cold_store.read_file(path, read_text(path)).broken):
            continue  # a file that holds its entry is the sync's
        accident.add(k)
        for where, text in git.versions(rel):
            if any(cold_store.key(e) == k for e in cold_store.read_file(path, text).entries):
                ensure_dir(path.parent)
                atomic_write(path, text, base=layout.memory)
                back[k] = (rel, where)
                break
    return back, accident


def lost_entries(ledger: Ledger) -> list[dict[str, str]]:
    """What :func:`reconcile` found lost for good (session ids for ``status`` and ``doctor``)."""
    try:
        rows = json.loads(ledger.get_meta("lost_entries") or "[]")
    except ValueError:
        return []
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
