"""The team sync: the shared memory files and this machine's own made one, under the root lock.

:func:`sync` runs whenever the core takes the root lock and again before it lets it go. It
brings each agent's cold store and view together three ways (:mod:`scribed.core.cold_sync`, the
rules), repairs the wiki pages and hot files a merge left with conflict markers, writes back the
wiki blocks a merge lost (:mod:`scribed.core.wikisync`), and keeps what it saw in the sync state
(:mod:`scribed.core.sync_state`, a cache: without it nothing is deleted, everything is kept).

The lock is held while it runs, and it touches only the agents whose files changed since the
last sync (a stat of each folder and view): a daemon's unit of work pays a few ``stat`` calls.
A reader without the lock (a spawn's ``scribed context``) syncs through :func:`refresh`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scribed.core import git_dropped, gittree, wikisync
from scribed.core.cold_sync import AgentSync, SyncResult
from scribed.core.gitsetup import ensure_gitignore
from scribed.core.hot_reseed import after_sync
from scribed.core.sync_state import (
    GITIGNORE_SEEN,
    HAND,
    MAX_HAND,
    PARKED,
    STATE,
    agents,
    load_state,
    save_state,
    signature,
)
from scribed.dates import utcnow
from scribed.fsutil import atomic_write, read_text
from scribed.log import Silent
from scribed.tiers import cold_store, git_merge
from scribed.tiers.layout import branch_moved

if TYPE_CHECKING:
    from scribed.tiers.layout import Layout


def sync(layout: Layout, *, force: bool = False, today: str = "", reader: bool = False) -> SyncResult:
    """Bring every agent's view and store together (:mod:`scribed.core.cold_sync`). The caller
    holds the lock; ``today`` (YYYY-MM-DD, default the system clock's) dates retirements.
    ``reader`` (a spawn's ``scribed context``, :func:`refresh`): only this machine's own files are
    written (the views, the wiki index); a committed file that needs a write (a conflict's repair,
    a write-back, a removal) is left for the next run, and so is the agent's sync state, so that
    run does it all."""
    res = SyncResult()
    git = gittree.Asker(layout.memory)
    if not today:
        today = utcnow().date().isoformat()
    if not layout.memory.is_dir():
        return res
    state = load_state(layout)
    agents_state: dict[str, Any] = state.setdefault("agents", {})
    parked: dict[str, str] = state.setdefault(PARKED, {})
    fresh = HAND not in state
    hand = _hand(layout, state)
    dirty = fresh and bool(agents(layout))  # a state from before removals were kept: saved once
    for name in agents(layout):
        prev = agents_state.get(name, {})
        sig = signature(layout, name)
        if not force and prev.get("sig") == sig:
            continue
        a = AgentSync(layout, name, dict(prev.get("base", {})), today)
        a.hand = {k for k, who in hand.items() if who == name}
        try:
            a.read()
            kept = a.deduped(a.merged(a.resolve(res, git)), res)
            _edits_dropped(layout, a, res, reader=reader)
            if a.write(kept, res, store=not reader):
                res.agents.append(name)
        except OSError as exc:  # one agent's unreadable file must not stop the others (or the run)
            res.failed[name] = str(exc.strerror or exc)
            continue
        if a.held_back:
            continue  # the next run syncs this agent again, and writes what the reader left
        agents_state[name] = {
            "sig": signature(layout, name),
            "base": {k: cold_store.digest(e.text) for k, e in kept.items()},
        }
        for k in [k for k, who in parked.items() if who == name and (k in kept or k in a.retired)]:
            del parked[k]  # back in this checkout (a pull, a checkout), or retired since
        parked.update(dict.fromkeys(res.git_removed.get(name, []), name))
        _remember(hand, name, a)
        dirty = True
    if not reader:  # a page or hot file with markers: read repaired in memory until the run writes it
        dirty = _repair_marked(layout, state, res) or dirty
    res.wiki, wiki_dirty = wikisync.sync(layout, state, git, pages=not reader)
    dirty = wiki_dirty or dirty
    if dirty:
        try:
            _ensure_gitignore_unless_git_removed(layout, state, git)
            save_state(layout, state)
        except OSError as exc:  # a full disk: the next sync does it again (a cache: nothing is lost)
            res.failed[STATE] = str(exc.strerror or exc)
    res.git_failed = git.why
    return res


def _edits_dropped(layout: Layout, a: AgentSync, res: SyncResult, *, reader: bool) -> None:
    """The files of entries removed by hand that this run deletes and that hold a teammate's
    edit git could not merge with the removal (:mod:`scribed.core.git_dropped`): named once, by
    the run that deletes the file (a spawn's reader deletes nothing, and asks git nothing)."""
    if reader:
        return
    for k in sorted(a.listed_by_hand() & a.files.keys()):
        for p in a.files[k]:
            if p.is_relative_to(layout.memory):
                got = git_dropped.edit_dropped(layout.memory, p.relative_to(layout.memory).as_posix())
                if got is not None:
                    res.edits_dropped[k] = (a.name, got)


def _hand(layout: Layout, state: dict[str, Any]) -> dict[str, str]:
    """The sync state's ids removed by hand (id → agent); a state from before it was kept is given
    what every ``retired.txt`` lists now."""
    if HAND in state:
        hand: dict[str, str] = state[HAND]
        return hand
    hand = state[HAND] = {}
    for name in agents(layout):
        rows = cold_store.read_retired(read_text(layout.cold / name / cold_store.RETIRED))
        hand.update({k: name for k, why in rows.items() if cold_store.by_hand(why)})
    return hand


def _remember(hand: dict[str, str], name: str, a: AgentSync) -> None:
    """The sync state's ids removed by hand, after a sync of agent ``name``: those its
    ``retired.txt`` lists added, those a revert undid forgotten. Bounded: one id per removal by
    hand ever seen (rare: a secret, a customer's name), at most :data:`MAX_HAND` (beyond, ids are
    forgotten in key order: one forgotten is still kept out wherever ``retired.txt`` lists it)."""
    for k in [k for k, who in hand.items() if who == name and k not in a.hand]:
        del hand[k]
    for k in sorted(a.listed_by_hand() - hand.keys()):
        hand[k] = name
    for k in list(hand)[: max(0, len(hand) - MAX_HAND)]:
        del hand[k]


def _ensure_gitignore_unless_git_removed(layout: Layout, state: dict[str, Any], git: gittree.Asker) -> None:
    """:func:`ensure_gitignore`, except in a checkout git left without the file it has committed
    elsewhere (a commit from before ``scribed git setup``): written there, it would be an untracked
    file that stops the checkout back. git is asked only when a file seen before is gone, once."""
    if (layout.memory / ".gitignore").exists():
        state[GITIGNORE_SEEN] = True
    elif state.get(GITIGNORE_SEEN) == "git":
        return
    elif state.get(GITIGNORE_SEEN) and git.removed([".gitignore"]):
        state[GITIGNORE_SEEN] = "git"
        return
    ensure_gitignore(layout)


def _repair_marked(layout: Layout, state: dict[str, Any], res: SyncResult) -> bool:
    """Wiki pages and hot files a merge left with conflict markers: a page merged block by block
    (both sides kept), a hot file (this machine's own) keeps this machine's side. Only files whose
    stat changed since the last sync are read."""
    seen: dict[str, list[int]] = state.setdefault("marked", {})
    dirty = False
    files = [*(p for p in layout.wiki.glob("**/*.md")), *(p for p in layout.hot.glob("*.md"))]
    for p in files:
        try:
            st = p.stat()
        except OSError:
            continue
        rel, sig = str(p.relative_to(layout.memory)), [st.st_mtime_ns, st.st_size]
        if seen.get(rel) == sig or p.is_symlink():
            continue
        try:
            text = read_text(p)
        except OSError:
            continue  # unreadable now: the run that needs it says so, and the next sync looks again
        got = git_merge.repaired(str(p), text)
        fixed = got.text
        if fixed != text:
            atomic_write(p, fixed, base=layout.memory)
            res.repaired.append(rel)
            if got.unbased:
                res.unbased[rel] = list(got.conflicts)
            st = p.stat()
        seen[rel] = [st.st_mtime_ns, st.st_size]
        dirty = True
    return dirty


def refresh(layout: Layout, agent: str, *, timeout: float = 1.0) -> bool:
    """For a reader without the lock (a spawn's ``scribed context``): when the agent's shared
    entries changed after its view (a pull), sync under the lock first, waiting at most
    ``timeout``; busy (a long compaction), the reader goes on with the view it has. Returns
    whether it synced."""
    from scribed.core import statebranch
    from scribed.core.lock import RootBusyError, root_lock

    if layout.refused:
        return False
    moved = layout.on_branch and branch_moved(layout)
    if not moved and not cold_store.store_newer(layout.cold, agent):
        return False
    try:
        with root_lock(layout.lock, timeout=timeout):
            if moved:
                statebranch.pull(layout, statebranch.Git(layout.root))
            res = sync(layout, reader=True)
    except (RootBusyError, OSError, statebranch.StateBranchError):
        return False
    after_sync(layout, res, Silent())
    return True
