"""What ``scribed doctor`` says of team memory, read without the lock and writing nothing.

Tier files a merge left with conflict markers or two front matters, cold entry files that hold no
entry (emptied, cut short), cold views older than their store (the next sync's work), sessions told
twice (entries of one session whose lines overlap, :mod:`scribed.tiers.cold_overlap`), entries lost
for good, and a clone whose ``.gitattributes`` asks for the merge driver it lacks.
"""

from __future__ import annotations

import contextlib
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scribed import hint
from scribed.core.cold_sync import DAMAGED_FIX
from scribed.core.ledger_reconcile import lost_entries
from scribed.core.sync_state import stale
from scribed.fsutil import NOT_UTF8, read_text, shown, utf8_name
from scribed.names import not_a_name
from scribed.tiers import cold_overlap, cold_store, git_merge

if TYPE_CHECKING:
    from pathlib import Path

    from scribed.tiers.layout import Layout


@dataclass(slots=True)
class TeamReport:
    """``doctor``'s team-memory lines (see :func:`report`)."""

    conflicted: list[str]
    front_matter_twice: list[str]
    stale_views: list[str]
    lost: list[dict[str, str]]
    driver_missing: str = ""  # .gitattributes asks for merge=scribed, this clone has no driver
    told_twice: list[dict[str, object]] = field(default_factory=list)  # see :func:`told_twice`
    damaged: list[dict[str, str]] = field(default_factory=list)  # file, why, fix: an entry file holding none
    misnamed: list[dict[str, str]] = field(default_factory=list)  # file, why: left out of every listing


def report(layout: Layout) -> TeamReport:
    """What ``doctor`` says of team memory, read without the lock and writing nothing: tier files a
    merge left with conflict markers or two front matters, views older than their store, and
    entries lost for good (their session ids)."""
    marked: list[str] = []
    doubled: list[str] = []
    damaged: list[dict[str, str]] = []
    folders = [layout.cold, layout.wiki, layout.hot]
    for folder in folders:
        for p in sorted(folder.glob("**/*")) if folder.is_dir() else []:
            if not p.is_file() or p.is_symlink() or p.suffix not in (".md", ".txt"):
                continue
            text = read_text(p)
            store = p.parent.parent == layout.cold and p.suffix == ".md"
            why = cold_store.read_file(p, text).broken if store else ""
            if why:
                damaged.append({"file": str(p), "why": why, "fix": damaged_fix(_shown(layout, p))})
            if cold_store.sides(text) is not None:
                marked.append(str(p))
            elif p.parent == layout.hot and git_merge.readable(str(p), text) != text:
                doubled.append(str(p))
    lost: list[dict[str, str]] = []
    if layout.ledger.is_file():
        from scribed.core.ledger import Ledger

        with contextlib.suppress(Exception):  # a ledger being rebuilt: nothing to say of it now
            ledger = Ledger(layout.ledger, readonly=True)
            try:
                lost = lost_entries(ledger)
            finally:
                ledger.close()
    from scribed.core.gittree import driver_missing

    return TeamReport(
        marked,
        doubled,
        stale(layout),
        lost,
        driver_missing(layout),
        told_twice(layout),
        damaged,
        misnamed(layout),
    )


def misnamed(layout: Layout) -> list[dict[str, str]]:
    """Hot and cold files, cold folders and wiki pages whose name is not UTF-8 or no agent or topic
    name: every listing leaves them out with one warning (:func:`scribed.log.misnamed`), which
    scrolls by; ``doctor`` is where a user looks. Each: the file, and why with how to rename it."""
    out: list[dict[str, str]] = []
    for folder, kind in ((layout.hot, "agent"), (layout.cold, "agent"), (layout.wiki, "topic")):
        try:
            found = sorted(folder.iterdir()) if folder.is_dir() else []
        except OSError:
            continue
        for p in found:
            listed = p.suffix == ".md" or (folder == layout.cold and p.is_dir())
            if not listed or p.name.startswith(".") or p.is_symlink():
                continue
            why = NOT_UTF8 if not utf8_name(str(p)) else not_a_name(p, kind)
            if why:
                out.append({"file": shown(_shown(layout, p)), "why": why})
    return out


def told_twice(layout: Layout) -> list[dict[str, object]]:
    """Sessions told twice in an agent's cold memory (its view and its store, less what
    ``retired.txt`` lists): entries of one session whose lines overlap, which the next sync makes
    one (:mod:`scribed.tiers.cold_overlap`). Each: agent, session, the entries with their lines,
    and what the sync keeps (the finer cut, or one entry merged from them all)."""
    from scribed.core.cold_sync import AgentSync
    from scribed.core.sync_state import agents

    out: list[dict[str, object]] = []
    for name in agents(layout):
        a = AgentSync(layout, name, {})
        try:
            a.read()
        except OSError:
            continue  # unreadable now: the run that needs it says so
        held = {k: e for k, e in a.view.items() if k not in a.retired}
        for k in a.store.keys() - held.keys() - a.retired.keys():
            held[k] = a.stored(k) or a.store[k][0]
        out += [
            {
                "agent": name,
                "session": o.session,
                "entries": [{"id": k, "lines": f"{first}–{last}"} for k, first, last in o.spans],
                "kept": list(o.kept),
                "merged": o.merged,
            }
            for o in cold_overlap.plan(name, held.values()).overlaps
        ]
    return out


def _shown(layout: Layout, p: Path) -> str:
    """``p`` as a git command run at the root names it."""
    try:
        return str(p.relative_to(layout.root))
    except ValueError:
        return str(p)


def damaged_fix(path: str) -> str:
    """What to do about an entry file that holds no entry (:func:`cold_store.broken`)."""
    return (
        f"run `{hint.cmd('run-once')}`: it writes the entry back from this machine's view or from git's "
        f"history (then `git add` and commit it); if it cannot, {DAMAGED_FIX.replace('FILE', shlex.quote(path))}"
    )
