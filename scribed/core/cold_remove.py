"""``scribed cold-remove``: cold entries removed for the whole team.

Each named entry gets a ``retired.txt`` line saying it was removed by hand; the team sync
(:mod:`scribed.core.team_sync`) then takes it out of the view and deletes its store file, here and
on every clone that pulls the line (see :mod:`scribed.core.cold_sync`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scribed.compress.entry import provenance
from scribed.core.cold_sync import AgentSync, SyncResult
from scribed.core.sync_state import agents
from scribed.core.team_sync import sync
from scribed.fsutil import atomic_write, ensure_dir, fsync_dir
from scribed.tiers import cold_store

if TYPE_CHECKING:
    from scribed.compress.entry import Entry
    from scribed.tiers.layout import Layout


class RemoveError(ValueError):
    """Entries named for removal that cold memory does not hold (the message names the folder)."""


@dataclass(slots=True)
class Removal:
    """One entry named to ``scribed cold-remove``: what was done with it."""

    id: str
    agent: str = ""
    files: list[str] = field(default_factory=list)  # store files deleted, relative to the root
    left: str = ""  # why nothing was done: its ``retired.txt`` reason (removed already, folded, promoted)
    hot: bool = False  # the agent's hot file was seeded again without it

    def to_json(self) -> dict[str, str | bool | list[str]]:
        return {"id": self.id, "agent": self.agent, "files": self.files, "left": self.left, "hot": self.hot}


_ENTRY_KEY = re.compile(r"[a-z]-[0-9a-f]{6,40}")


def _wanted_key(arg: str) -> str | None:
    """An entry's key from what a user names it by: its id, or its store file (a path or a name)."""
    arg = arg.strip()
    if _ENTRY_KEY.fullmatch(arg):
        return arg
    return cold_store.key_of_name(Path(arg).name)


def removal_plan(layout: Layout, wanted: list[str]) -> list[Removal]:
    """What removing ``wanted`` (ids or store files) would do, read without writing; raises
    :class:`RemoveError` naming every one that no agent's cold memory has or had."""
    keys: dict[str, str] = {}
    bad: list[str] = []
    for arg in wanted:
        k = _wanted_key(arg)
        if k is None:
            bad.append(
                f"{arg}: not an entry id (e-… as in an entry's provenance line) or an entry's file name"
            )
        else:
            keys.setdefault(k, arg)
    found: dict[str, Removal] = {}
    for name in agents(layout):
        a = AgentSync(layout, name, {})
        a.read()
        for k in keys:
            if k in a.view or k in a.store:
                if a.removed_by_hand(k):
                    found.setdefault(k, Removal(k, name))  # the line is there, the sync has not run
                else:
                    found[k] = Removal(k, name)
            elif k in a.retired and k not in found:
                found[k] = Removal(k, name, left=a.retired[k])
    rel = layout.cold.relative_to(layout.root) if layout.cold.is_relative_to(layout.root) else layout.cold
    bad += [
        f"{arg}: no agent's cold memory in {rel}/ has this entry" for k, arg in keys.items() if k not in found
    ]
    if bad:
        raise RemoveError("; ".join(bad) + "; nothing was removed")
    return [found[k] for k in keys]


def _removed_line(e: Entry | None, today: str) -> str:
    """The ``retired.txt`` reason for an entry removed by hand: the date, and the session and line
    range its provenance names, which a rebuilt ledger reads (see :mod:`ledger_rebuild`)."""
    out = f"{today} {cold_store.BY_HAND}"
    prov = provenance(e.text) if e is not None else None
    if prov is None:
        return out
    f, (first, last) = prov
    session = re.sub(r"\s+", "_", f.get("session", ""))
    if session:
        out += f" · session={session}"
    if last:
        out += f" · lines {first}–{last}"
    return out


def remove(layout: Layout, wanted: list[str], today: str) -> tuple[list[Removal], SyncResult]:
    """Remove cold entries for the whole team (``scribed cold-remove``; the caller holds the lock):
    each gets a ``retired.txt`` line saying it was removed by hand, written first, then the sync
    takes it out of the view and deletes its store file, as it will on every clone that pulls the
    line. Idempotent: one removed already is reported as such."""
    plan = removal_plan(layout, wanted)
    by_agent: dict[str, list[Removal]] = {}
    for r in plan:
        if not r.left:
            by_agent.setdefault(r.agent, []).append(r)
    for name, rows in by_agent.items():
        a = AgentSync(layout, name, {}, today)
        a.read()
        for r in rows:
            e = a.view.get(r.id) or a.stored(r.id)
            if not a.removed_by_hand(r.id):
                a.retired[r.id] = _removed_line(e, today)
            r.files = [
                str(p.relative_to(layout.root))
                for p in a.files.get(r.id, [])
                if p.is_relative_to(layout.root)
            ]
        ensure_dir(a.folder)
        atomic_write(a.folder / cold_store.RETIRED, cold_store.render_retired(a.retired), base=layout.memory)
        fsync_dir(a.folder)
    return plan, sync(layout, today=today)
