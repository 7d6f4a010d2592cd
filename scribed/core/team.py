"""Team memory on git: the shared cold store and this machine's views of it kept as one.

``cold/{agent}/`` (one file per entry, committed, see :mod:`scribed.tiers.cold_store`) is what
clones share; ``cold/{agent}.md`` is this machine's view, what every reader and writer of the
cold tier uses. :func:`sync` runs whenever the core takes the root lock and again before it lets
it go, and brings the two together three ways, against what they held at the last sync
(``.scribed/cold-sync.json``, a cache: without it nothing is deleted, everything is kept):

- an entry new in the view (a compaction, an agent's edit) is written to the store;
- an entry new in the store (a pull) is added to the view, in the order every clone uses;
- an entry gone from the view because it was folded into a digest the view holds, or promoted
  (its archive exists), leaves the store and is listed in ``retired.txt``; one gone from the view
  with no such reason (the view deleted or edited by hand, or deleted by git on a pull) is kept
  and written back to the view;
- an entry gone from the store that ``retired.txt`` lists leaves the view too; one it does not
  list is asked about (:mod:`scribed.core.gittree`): when git has its file committed on some ref,
  git removed it (a branch switch or checkout, a pulled ``git rm`` or ``git revert``), and it
  leaves the view without a ``retired.txt`` line (checking out a commit that has it brings it
  back, as a pulled entry); when not, a merge that kept one side, ``git clean`` or a crash lost
  it, and it is written back from the view (so is every such entry when git cannot answer);
- an entry ``retired.txt`` lists as removed by hand (``scribed cold-remove``) is kept out of the
  view and the store, whichever side still holds it; this clone remembers it (the sync state's
  ``removed_by_hand``), so a checkout of a branch made before the removal, whose ``retired.txt``
  lacks the line, keeps it out of the view too (its committed file left as the branch has it),
  unless HEAD's history has the line (the removal was undone: ``git revert``);
- a store file with conflict markers, two versions of its entry or a second entry is rewritten
  whole (both sides' entries kept; of two versions of one entry, the one every clone picks).

The lock is held while it runs, and it touches only the agents whose files changed since the
last sync (a stat of each folder and view): a daemon's unit of work pays a few ``stat`` calls.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed.compress.entry import Entry, join_entries, split_entries
from scribed.core import gittree, wikisync
from scribed.core.wikisync import WikiSync
from scribed.fsutil import atomic_write, ensure_dir, fsync_dir, read_json_object, read_text
from scribed.names import normalize_name
from scribed.session.door import redacted
from scribed.tiers import cold, cold_store, git_merge, hot_seed, live
from scribed.tiers.cold import preamble
from scribed.tiers.layout import Layout, branch_moved

if TYPE_CHECKING:
    from scribed.core.ledger import Ledger
    from scribed.log import Logger

STATE = "cold-sync.json"
PARKED = "git_removed"  # in the sync state: key → agent, entries git removed (kept by git, not lost)
HAND = "removed_by_hand"  # in the sync state: key → agent, every entry this clone saw removed by hand
MAX_HAND = 10_000  # ids remembered at most (the oldest forgotten first); a removal by hand is rare
GITIGNORE_SEEN = "gitignore"  # in the sync state: .gitignore was here (True), or git removed it ("git")
_ARCHIVE_RE = re.compile(r" · archive=`([^`]+)`")
MAX_CHAIN = 256  # fold archives followed from one digest, per sync


@dataclass(slots=True)
class SyncResult:
    """What one sync changed, per kind, as agent names or entry keys."""

    agents: list[str] = field(default_factory=list)  # agents whose view or store changed
    pulled: dict[str, list[str]] = field(default_factory=dict)  # agent → keys new from the store
    stored: int = 0  # entries written to the store
    retired: int = 0  # entries that left the store on purpose
    restored: list[str] = field(default_factory=list)  # keys a merge had lost, written back
    repaired: list[str] = field(default_factory=list)  # store files rewritten whole
    # repaired files whose markers had no base (no merge driver): file → the entries or blocks
    # whose lines both sides changed, both versions kept
    unbased: dict[str, list[str]] = field(default_factory=dict)
    dropped: int = 0  # entries a teammate retired, taken out of this view
    hand_removed: dict[str, list[str]] = field(default_factory=dict)  # agent → keys removed by hand
    git_removed: dict[str, list[str]] = field(default_factory=dict)  # agent → keys git removed
    git_failed: str = ""  # why git could not tell what it removed (those entries were written back)
    unexplained: list[str] = field(default_factory=list)  # gone from the view, kept: nothing retired them
    wiki: WikiSync = field(default_factory=WikiSync)  # wiki blocks a merge lost, written back
    failed: dict[str, str] = field(default_factory=dict)  # agent → why its files could not be synced

    @property
    def changed(self) -> bool:
        return bool(self.agents)


def _agents(layout: Layout) -> list[str]:
    names: set[str] = set()
    with contextlib.suppress(OSError):
        for p in layout.cold.iterdir():
            stem = p.name[:-3] if p.name.endswith(".md") else p.name
            if (p.is_dir() or p.name.endswith(".md")) and not p.is_symlink() and normalize_name(stem) == stem:
                names.add(stem)
    return sorted(names)


def _signature(layout: Layout, agent: str) -> list[Any]:
    """What a stat says of the agent's view and store: equal to the stored one, nothing changed."""
    out: list[Any] = []
    view = layout.cold_file(agent)
    with contextlib.suppress(OSError):
        st = view.stat()
        out.append([st.st_mtime_ns, st.st_size])
    folder = layout.cold / agent
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        rows = []
        for d in it:
            if d.is_file(follow_symlinks=False):
                st = d.stat(follow_symlinks=False)
                rows.append([d.name, st.st_mtime_ns, st.st_size])
        out.append(sorted(rows))
    return out


def _load_state(layout: Layout) -> dict[str, Any]:
    return read_json_object(layout.state / STATE)


@dataclass(slots=True)
class _Agent:
    """One agent's three sides: the view's entries, the store's files, the last sync's keys."""

    layout: Layout
    name: str
    base: dict[str, str]  # key → digest of its text at the last sync
    today: str = ""  # YYYY-MM-DD: when a retirement is recorded, and what prunes old ones
    pre: str = ""
    view: dict[str, Entry] = field(default_factory=dict)
    store: dict[str, list[Entry]] = field(default_factory=dict)
    files: dict[str, list[Path]] = field(default_factory=dict)
    damaged: set[str] = field(default_factory=set)
    unbased: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key → conflicts, no base
    held_back: bool = False  # a reader's sync left a committed file the run must write
    retired: dict[str, str] = field(default_factory=dict)
    hand: set[str] = field(default_factory=set)  # this clone saw them removed by hand (sync state)
    kept_out: set[str] = field(default_factory=set)  # remembered removals this checkout's retired.txt lacks
    archives: dict[str, bytes] = field(default_factory=dict)  # fold archives read this sync
    chains: dict[str, list[bytes]] = field(default_factory=dict)  # digest id → its archives' texts

    @property
    def folder(self) -> Path:
        return self.layout.cold / self.name

    def read(self) -> None:
        self.pre, entries = split_entries(read_text(self.layout.cold_file(self.name)))
        for e in map(cold_store.canonical, entries):  # as the store holds it, wherever it sat
            k = cold_store.key(e)
            self.view[k] = cold_store.pick([self.view[k], e]) if k in self.view else e
        self.retired = cold_store.read_retired(read_text(self.folder / cold_store.RETIRED))
        if not self.folder.is_dir() or self.folder.is_symlink():
            return
        for p in sorted(self.folder.glob("*.md")):
            if p.is_symlink() or not p.is_file():
                continue
            got = cold_store.read_file(p, read_text(p))
            for e in got.entries:
                k = cold_store.key(e)
                self.store.setdefault(k, []).append(e)
                self.files.setdefault(k, []).append(p)
                if got.damaged:
                    self.damaged.add(k)
                if got.unbased:
                    self.unbased[k] = got.conflicts

    def resolve(self, res: SyncResult, git: gittree.Asker) -> dict[str, Entry]:
        """The entries the agent has after this sync (module docstring)."""
        out: dict[str, Entry] = {}
        lost: dict[str, Entry] = {}  # only in the view, neither new nor retired: who removed it?
        self._remembered(git)
        for k in sorted(self.view.keys() | self.store.keys()):
            v = self.view.get(k)
            s = cold_store.pick(self.store[k]) if k in self.store else None
            was = self.base.get(k)
            if self._by_hand(k, v, res):
                continue
            if v is not None and s is not None:
                same = cold_store.digest(v.text) == cold_store.digest(s.text)
                out[k] = v if same or cold_store.digest(s.text) == was else s
            elif v is not None:  # only in the view
                if was is None:
                    res.stored += 1
                    out[k] = v
                elif k in self.retired:
                    res.dropped += 1  # a teammate folded or promoted it
                else:
                    lost[k] = v  # the store lost it without retiring it: git, or a merge?
            elif s is not None:  # only in the store
                if was is not None and k not in self.retired and cold_store.digest(s.text) == was:
                    why = self._left(k, s)  # the view held it at the last sync: why did it go?
                    if why:
                        self.retired[k] = f"{self.today} {why}"  # this machine folded or promoted it
                        res.retired += 1
                    else:  # no fold or promotion: a deleted or edited view, never a reason to
                        res.unexplained.append(k)  # delete the team's entry
                        out[k] = s
                else:
                    res.pulled.setdefault(self.name, []).append(k)
                    out[k] = s
        out.update(self._lost(lost, res, git))
        return out

    def _by_hand(self, k: str, v: Entry | None, res: SyncResult) -> bool:
        """Whether ``k`` was removed by hand (here or by a teammate): then it is kept out of the
        view and the store, whichever still holds it."""
        if k not in self.kept_out and (k not in self.retired or not cold_store.by_hand(self.retired[k])):
            return False
        if v is not None:
            res.hand_removed.setdefault(self.name, []).append(k)
            res.dropped += 1
        return True

    def listed_by_hand(self) -> set[str]:
        return {k for k, why in self.retired.items() if cold_store.by_hand(why)}

    def _remembered(self, git: gittree.Asker) -> None:
        """Entries this clone saw removed by hand that this checkout still has while its
        ``retired.txt`` lacks the line: a branch made before the removal (kept out of the view,
        its committed file left as the checkout has it), or the removal undone (``git revert`` of
        its commit, the line deleted by hand: HEAD's history of ``retired.txt`` has the line; then
        it is forgotten, and the entry is back). When git cannot tell, it stays out."""
        held = {k for k in self.hand - self.listed_by_hand() if k in self.view or k in self.store}
        if not held:
            return
        path = f"{self.layout.cold.name}/{self.name}/{cold_store.RETIRED}"
        undone = git.had_lines(path, held, cold_store.BY_HAND)
        self.hand -= undone
        self.kept_out = held - undone

    def _lost(self, lost: dict[str, Entry], res: SyncResult, git: gittree.Asker) -> dict[str, Entry]:
        """Of the entries gone from the store and not retired, those to write back: not the ones
        git removed (:mod:`scribed.core.gittree`), one question to git for all of them."""
        if not lost:
            return {}
        paths = {k: f"{self.layout.cold.name}/{self.name}/{cold_store.file_name(v)}" for k, v in lost.items()}
        by_git = git.removed(paths.values())
        back: dict[str, Entry] = {}
        for k, v in lost.items():
            if paths[k] in by_git:  # a checkout, a pulled deletion, a revert: as git left it
                res.git_removed.setdefault(self.name, []).append(k)
            else:  # never committed, or a merge kept the other side's tree: written back
                res.restored.append(k)
                back[k] = v
        return back

    def _left(self, k: str, e: Entry) -> str:
        """Why an entry this view held at the last sync is gone from it, when it left on purpose:
        the digest that folded it (its id listed, or its text in the digest's fold archive: a
        digest lists a bounded number of ids, and never an older digest it folded), or promotion
        (its archive exists); "" when nothing explains it (the view deleted or edited by hand, git
        deleting an untracked-then-ignored view on a pull)."""
        for v in self.view.values():
            if k in v.ids and v.entry_id and v.entry_id != k:
                return f"folded into {v.entry_id}"
        if (self.layout.archive / cold_store.promoted_archive_name(self.name, e)).is_file():
            return "left cold"
        needle = f"id={k}".encode()
        for v in self.view.values():
            if v.entry_id and v.entry_id.startswith("d-") and any(needle in b for b in self._chain(v)):
                return f"folded into {v.entry_id}"
        return ""

    def _chain(self, digest: Entry) -> list[bytes]:
        """:meth:`_archived`, once per digest per sync (every departed entry asks each digest)."""
        key = digest.entry_id or ""
        if key not in self.chains:
            self.chains[key] = self._archived(digest)
        return self.chains[key]

    def _archived(self, digest: Entry) -> list[bytes]:
        """The texts of the fold archives ``digest`` names (``archive=`…```) and, down the chain,
        of those the digests folded there name: a run that folds many times between two syncs
        leaves a chain as long as its folds (each archive read once per sync, at most
        :data:`MAX_CHAIN`; a missing or unreadable one is no evidence)."""
        out: list[bytes] = []
        todo = [digest.text]
        seen: set[str] = set()
        while todo and len(seen) < MAX_CHAIN:
            for name in _ARCHIVE_RE.findall(todo.pop()):
                for one in (n.strip() for n in name.split(";")):
                    if one in seen:
                        continue
                    seen.add(one)
                    if one not in self.archives:
                        try:
                            self.archives[one] = gzip.decompress((self.layout.archive / one).read_bytes())
                        except (OSError, EOFError, gzip.BadGzipFile):
                            self.archives[one] = b""
                    blob = self.archives[one]
                    out.append(blob)
                    if b"archive=`" in blob:
                        todo.append(blob.decode("utf-8", "replace"))
        return out

    def merged(self, kept: dict[str, Entry]) -> dict[str, Entry]:
        """``kept`` with digests that fold the same entries made one (:func:`cold.merge_digests`);
        the digests merged away are retired, so no clone writes them back."""
        entries, gone = cold.merge_digests(self.name, list(kept.values()))
        if not gone:
            return kept
        out = {cold_store.key(e): e for e in entries}
        new = next((k for k in out if k not in kept), "")
        for k in gone:
            self.retired[k] = f"{self.today} merged into {new}"
        return out

    def write(self, kept: dict[str, Entry], res: SyncResult, *, store: bool = True) -> bool:
        """Bring the store and the view to ``kept``. Returns whether any file changed. ``store``
        False (a spawn's reader): the committed files of ``cold/{agent}/`` are left as they are,
        and :attr:`held_back` says whether one needed a write (the next run's)."""
        wanted = {cold_store.file_name(e): e for e in kept.values()}
        stale = self._stale(wanted)
        extra = [  # a file of an entry removed by hand that an old branch still has stays: git's
            p
            for k, paths in self.files.items()
            for p in paths
            if p.name not in wanted and k not in self.kept_out
        ]
        retired_path = self.folder / cold_store.RETIRED
        self.retired = cold_store.prune_retired(self.retired, self.today, kept=kept.keys())
        retired_text = cold_store.render_retired(self.retired)
        retired_stale = bool(self.retired) and read_text(retired_path) != retired_text
        changed = False
        if not store:
            self.held_back = bool(stale or extra or retired_stale)
        else:
            if kept or self.folder.exists():
                ensure_dir(self.folder)
            for name, e in stale.items():
                # a file written before store files ended in one newline is left as it is: no
                # commit of blank lines on upgrade, and no flip-flop with a teammate's older scribed
                atomic_write(self.folder / name, e.text, base=self.layout.memory)
                k = cold_store.key(e)
                if k in self.damaged:
                    res.repaired.append(name)
                if k in self.unbased:
                    res.unbased[name] = list(self.unbased[k])
            for p in extra:
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
            if retired_stale:
                atomic_write(retired_path, retired_text, base=self.layout.memory)
            changed = bool(stale or extra or retired_stale)
        view_text = self._view_text(list(kept.values()))
        view = self.layout.cold_file(self.name)
        if read_text(view) != view_text and (view.exists() or kept):
            atomic_write(view, view_text, base=self.layout.memory)
            changed = True
        if changed:
            fsync_dir(self.folder)
            with contextlib.suppress(OSError):  # the view is as new as its store: readers skip the sync
                os.utime(view)
        return changed

    def _stale(self, wanted: dict[str, Entry]) -> dict[str, Entry]:
        """The store files (by name) whose text is not their entry's: changed, or damaged."""
        out = {}
        for name, e in wanted.items():
            held = read_text(self.folder / name)
            if held != e.text and (
                held.rstrip("\n") != e.text.rstrip("\n") or cold_store.key(e) in self.damaged
            ):
                out[name] = e
        return out

    def _view_text(self, entries: list[Entry]) -> str:
        pre = self.pre if self.pre.strip() else preamble(self.name)
        return join_entries(pre, self._ordered(entries)) if entries else pre.rstrip("\n") + "\n"

    def _ordered(self, entries: list[Entry]) -> list[Entry]:
        """The order every clone's view lists them in (:func:`cold_store.order`: by date, then key),
        whichever clone compacted which entry first: two clones load the same spawn context."""
        return cold_store.order(entries)


def sync(layout: Layout, *, force: bool = False, today: str = "", reader: bool = False) -> SyncResult:
    """Bring every agent's view and store together (module docstring). The caller holds the lock;
    ``today`` (YYYY-MM-DD, default the system clock's) dates retirements. ``reader`` (a spawn's
    ``scribed context``, :func:`refresh`): only this machine's own files are written (the views,
    the wiki index); a committed file that needs a write (a conflict's repair, a write-back, a
    removal) is left for the next run, and so is the agent's sync state, so that run does it all."""
    res = SyncResult()
    git = gittree.Asker(layout.memory)
    if not today:
        from datetime import UTC, datetime

        today = datetime.now(UTC).date().isoformat()
    if not layout.memory.is_dir():
        return res
    state = _load_state(layout)
    agents_state: dict[str, Any] = state.setdefault("agents", {})
    parked: dict[str, str] = state.setdefault(PARKED, {})
    fresh = HAND not in state
    hand = _hand(layout, state)
    dirty = fresh and bool(_agents(layout))  # a state from before removals were kept: saved once
    for name in _agents(layout):
        prev = agents_state.get(name, {})
        sig = _signature(layout, name)
        if not force and prev.get("sig") == sig:
            continue
        a = _Agent(layout, name, dict(prev.get("base", {})), today)
        a.hand = {k for k, who in hand.items() if who == name}
        try:
            a.read()
            kept = a.merged(a.resolve(res, git))
            if a.write(kept, res, store=not reader):
                res.agents.append(name)
        except OSError as exc:  # one agent's unreadable file must not stop the others (or the run)
            res.failed[name] = str(exc.strerror or exc)
            continue
        if a.held_back:
            continue  # the next run syncs this agent again, and writes what the reader left
        agents_state[name] = {
            "sig": _signature(layout, name),
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
            atomic_write(layout.state / STATE, json.dumps(state, sort_keys=True), base=layout.state)
        except OSError as exc:  # a full disk: the next sync does it again (a cache: nothing is lost)
            res.failed[STATE] = str(exc.strerror or exc)
    res.git_failed = git.why
    return res


def _hand(layout: Layout, state: dict[str, Any]) -> dict[str, str]:
    """The sync state's ids removed by hand (id → agent); a state from before it was kept is given
    what every ``retired.txt`` lists now."""
    if HAND in state:
        hand: dict[str, str] = state[HAND]
        return hand
    hand = state[HAND] = {}
    for name in _agents(layout):
        rows = cold_store.read_retired(read_text(layout.cold / name / cold_store.RETIRED))
        hand.update({k: name for k, why in rows.items() if cold_store.by_hand(why)})
    return hand


def _remember(hand: dict[str, str], name: str, a: _Agent) -> None:
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


GITIGNORE_LINES = ("/.scribed/", "/inbox/", "/hot/", "/cold/*.md")
GITIGNORE = (
    "# scribed: this machine's own files, not for git. .scribed/ is its local state (ledger, lock,\n"
    "# archives); inbox/ holds agents' wiki writes until scribed applies them; hot/ is the live state\n"
    "# of sessions running here; cold/{agent}.md is this machine's view of cold/{agent}/ (the entries\n"
    "# teams share).\n" + "".join(f"{line}\n" for line in GITIGNORE_LINES)
)


def ensure_gitignore(layout: Layout) -> bool:
    """``.squad/memory/.gitignore`` lists the machine's own files (lines added to one that exists)."""
    path = layout.memory / ".gitignore"
    have = read_text(path)
    lines = {line.strip() for line in have.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line not in lines]
    if not missing:
        return False
    text = GITIGNORE if not have.strip() else have.rstrip("\n") + "\n" + "".join(f"{m}\n" for m in missing)
    atomic_write(path, text, base=layout.memory)
    return True


def stale(layout: Layout) -> list[str]:
    """Agents whose view or store changed since the last sync (a pull, an edit): what a reader that
    holds no lock can tell without writing."""
    agents_state = _load_state(layout).get("agents", {})
    return [n for n in _agents(layout) if agents_state.get(n, {}).get("sig") != _signature(layout, n)]


_KIND = re.compile(r"source=`[^`]*` \((?P<kind>[a-z0-9_-]+)\)")
_SESSION = re.compile(r" · session=(?P<s>[^·\n]+?) · ")


def _seed_of(e: Entry) -> tuple[str, str] | None:
    """The source kind and session an entry's provenance names: what a seed of it is marked with."""
    head = "\n".join(e.text.splitlines()[1:6])
    kind, session = _KIND.search(head), _SESSION.search(head)
    if kind is None or session is None:
        return None
    return kind.group("kind"), session.group("s").strip()


def reseed_pulled(layout: Layout, agent: str, keys: list[str], log: Logger) -> bool:
    """A pull brought ``keys`` into the agent's view: when one of them is now its newest entry, the
    hot file (this machine's, git-ignored) is seeded from it, under the seeding rules (an edited
    hot file or another session's live view is left alone)."""
    newest = hot_seed.newest_entry(layout, agent)
    if newest is None or cold_store.key(newest) not in keys:
        return False
    seed = _seed_of(newest)
    if seed is None:
        return False
    return hot_seed.reseed(layout, agent, seed[0], redacted(seed[1]), log)


def reseed_removed(layout: Layout, agent: str, gone: list[str], log: Logger) -> bool:
    """Entries ``gone`` left the agent's view on purpose (removed by hand here or by a teammate,
    or by git: a checkout, a pulled deletion): scribed's own seed is written again, from its entry
    when that is still there (a seed also shows an earlier entry's decisions and open items), else
    from the newest entry left, or cleared when none is, so no spawn is served what was removed.
    A hot file edited by hand, or a running session's live view, is never rewritten: one that
    names a removed entry is warned about. Never raises for file problems."""
    path = layout.hot_file(agent)
    try:
        before = None if path.is_symlink() else live.current_bytes(path)
        if before is None:
            return False
        fields = live.live_fields(before)
        named, value = fields.get("entry", ""), fields.get(live.MARKER, "")
        if not value.startswith(live.SEED_PREFIX) or not live.owned(before):
            if named in gone:
                log.warning(
                    "hot_file_names_removed_entry",
                    file=str(path),
                    entry=named,
                    action="edit it by hand: scribed rewrites only its own, unedited seed",
                )
            return False
        _, entries = cold.parsed(layout.cold_file(agent))
        e = next((x for x in entries if x.entry_id == named), None) if named not in gone else None
        if e is None:
            e = hot_seed.newest_entry(layout, agent)
            seed = _seed_of(e) if e is not None else None
            value = hot_seed.marker(seed[0], redacted(seed[1])) if seed else ""
        if e is not None and value:
            text = hot_seed.render(agent, value, hot_seed.last_session(layout, agent, e))
        else:
            text = live.TEMPLATE.format(agent=agent)
        if text.encode() == before or not live.swap(path, before, text.encode(), base=layout.memory):
            return False
    except OSError as exc:
        log.warning("hot_seed_failed", file=str(path), agent=agent, reason=str(exc.strerror or exc))
        return False
    log.info("hot_reseeded", agent=agent, entry=e.entry_id if e else None, reason="an entry was removed")
    return True


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
    for name in _agents(layout):
        a = _Agent(layout, name, {})
        a.read()
        for k in keys:
            if k in a.view or k in a.store:
                if k in a.retired and cold_store.by_hand(a.retired[k]):
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
    from scribed.core.ledger_rebuild import _PROV, _fields

    out = f"{today} {cold_store.BY_HAND}"
    m = _PROV.search(e.text) if e is not None else None
    if m is None:
        return out
    f, (first, last) = _fields(m.group("p"))
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
        a = _Agent(layout, name, {}, today)
        a.read()
        for r in rows:
            e = a.view.get(r.id) or (cold_store.pick(a.store[r.id]) if r.id in a.store else None)
            if r.id not in a.retired or not cold_store.by_hand(a.retired[r.id]):
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
    from scribed.core.ledger_rebuild import _WIKI_REF

    state = _load_state(layout)
    out: set[str] = set(state.get(PARKED, {})) | set(state.get(HAND, {}))
    for agent in _agents(layout):
        for e in split_entries(read_text(layout.cold_file(agent)))[1]:
            out |= e.ids
        out |= cold_store.read_retired(read_text(layout.cold / agent / cold_store.RETIRED)).keys()
    if layout.wiki.is_dir():
        for p in layout.wiki.glob("**/*.md"):
            for m in _WIKI_REF.finditer(read_text(p)):
                out.update(m.group(1).split(","))
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
        from scribed.core.ledger_rebuild import rebuild_rows

        missing -= {r["id"] for r in rebuild_rows(layout.memory, layout.archive)}
    if missing:  # a sync state lost after git removed them: git still has them
        ids, _ = gittree.entry_ids(layout.memory, {known[eid][2] for eid in missing})
        by_git = missing & ids
        if by_git:
            state = _load_state(layout)
            state.setdefault(PARKED, {}).update({eid: normalize_name(known[eid][2]) or "" for eid in by_git})
            atomic_write(layout.state / STATE, json.dumps(state, sort_keys=True), base=layout.state)
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
        seen = {r["id"] for r in lost_entries(ledger)}
        rows = lost_entries(ledger) + [r for r in out.lost if r["id"] not in seen]
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


@dataclass(slots=True)
class TeamReport:
    """``doctor``'s team-memory lines (see :func:`report`)."""

    conflicted: list[str]
    front_matter_twice: list[str]
    stale_views: list[str]
    lost: list[dict[str, str]]
    driver_missing: str = ""  # .gitattributes asks for merge=scribed, this clone has no driver


def report(layout: Layout) -> TeamReport:
    """What ``doctor`` says of team memory, read without the lock and writing nothing: tier files a
    merge left with conflict markers or two front matters, views older than their store, and
    entries lost for good (their session ids)."""
    marked: list[str] = []
    doubled: list[str] = []
    folders = [layout.cold, layout.wiki, layout.hot]
    for folder in folders:
        for p in sorted(folder.glob("**/*")) if folder.is_dir() else []:
            if not p.is_file() or p.is_symlink() or p.suffix not in (".md", ".txt"):
                continue
            text = read_text(p)
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

    return TeamReport(marked, doubled, stale(layout), lost, driver_missing(layout))


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
    after_sync(layout, res, _Quiet())
    return True


def after_sync(layout: Layout, res: SyncResult, log: Logger) -> None:
    """The hot files a sync changed the ground under: pulled entries seed them when newest, and a
    seed of an entry removed (by hand, by git) is written again without it."""
    for a, keys in res.pulled.items():
        reseed_pulled(layout, a, keys, log)
    for removed in (res.hand_removed, res.git_removed):
        for a, keys in removed.items():
            reseed_removed(layout, a, keys, log)


class _Quiet:
    """A spawn's context prints the block and nothing else: its refresh logs nowhere."""

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None
