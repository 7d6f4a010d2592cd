"""One agent's cold entries on git: the shared store and this machine's view brought together.

``cold/{agent}/`` (one file per entry, committed, see :mod:`scribed.tiers.cold_store`) is what
clones share; ``cold/{agent}.md`` is this machine's view, what every reader and writer of the
cold tier uses. :class:`AgentSync` brings the two together three ways, against what they held at
the last sync (the sync state, :mod:`scribed.core.sync_state`: without it nothing is deleted,
everything is kept); :mod:`scribed.core.team_sync` runs it for every agent whose files changed:

- an entry new in the view (a compaction, an agent's edit) is written to the store;
- an entry new in the store (a pull) is added to the view, in the order every clone uses;
- an entry gone from the view because it was folded into a digest the view holds, or promoted
  (its archive exists), leaves the store and is listed in ``retired.txt``; one gone from the view
  with no such reason (the view deleted or edited by hand, or deleted by git on a pull) is kept
  and written back to the view;
- an entry gone from the store that ``retired.txt`` lists leaves the view too; one it does not
  list is asked about (:mod:`scribed.core.gittree`): when git's index no longer holds its file and
  git has it committed on some ref, git removed it (a branch switch or checkout, a pulled ``git
  rm`` or ``git revert``), and it leaves the view without a ``retired.txt`` line (checking out a
  commit that has it brings it back, as a pulled entry); when not, a merge that kept one side,
  ``git clean``, a crash or a plain ``rm`` (the index still holds it) lost it, and it is written
  back from the view (so is every such entry when git cannot answer);
- a store file that holds no entry of its own (emptied, cut short: :func:`cold_store.broken`) is
  no removal: its entry is written back from the view, else from the newest version git has of
  the file; with neither, the file is left as it is and named (a fragment is never an entry);
- an entry ``retired.txt`` lists as removed by hand (``scribed cold-remove``) is kept out of the
  view and the store, whichever side still holds it; this clone remembers it (the sync state's
  ``removed_by_hand``), so a checkout of a branch made before the removal, whose ``retired.txt``
  lacks the line, keeps it out of the view too (its committed file left as the branch has it),
  unless HEAD's history has the line (the removal was undone: ``git revert``);
- a store file with conflict markers, two versions of its entry or a second entry is rewritten
  whole (both sides' entries kept; of two versions of one entry, the one every clone picks);
- entries of one session whose lines overlap (two clones compacted it at different points) are
  made one (:mod:`scribed.tiers.cold_overlap`: the finer cut kept, else merged into one entry),
  and what left is listed in ``retired.txt`` with its session and lines.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scribed.compress.entry import Entry, join_entries, provenance, split_entries
from scribed.core.wikisync import WikiSync
from scribed.fsutil import atomic_write, ensure_dir, fsync_dir, read_text
from scribed.tiers import cold, cold_overlap, cold_store
from scribed.tiers.cold import preamble

if TYPE_CHECKING:
    from pathlib import Path

    from scribed.core import gittree
    from scribed.core.git_dropped import DroppedEdit
    from scribed.tiers.layout import Layout

_ARCHIVE_RE = re.compile(r" · archive=`([^`]+)`")
MAX_CHAIN = 256  # fold archives followed from one digest, per sync


def _place(e: Entry) -> tuple[str, str, str, int, int] | None:
    """The part of a session ``e`` tells, from its provenance (agent, session, source, lines),
    whatever its id says; None for an entry that names none (a digest, one written by hand)."""
    got = provenance(e.text)
    if got is None:
        return None
    f, (first, last) = got
    if not f.get("session") or first < 1:
        return None
    return f.get("agent", ""), f["session"], f.get("source", ""), first, last


@dataclass(slots=True)
class Restored:
    """An entry written back to the store: its file (under the memory folder) and why."""

    file: str
    why: str


IN_INDEX = "deleted from the working tree while git's index still has it (a plain `rm`, not `git rm`)"
NOT_GIT = "missing from the store, not retired, and not removed by git"
DAMAGED_FIX = (
    "restore it from git (`git log -p -- FILE` shows its versions; `git checkout COMMIT -- FILE` "
    "takes one) or from the teammate who compacted it, then `git add` and commit it"
)


@dataclass(slots=True)
class SyncResult:
    """What one sync changed, per kind, as agent names or entry keys."""

    agents: list[str] = field(default_factory=list)  # agents whose view or store changed
    pulled: dict[str, list[str]] = field(default_factory=dict)  # agent → keys new from the store
    stored: int = 0  # entries written to the store
    retired: int = 0  # entries that left the store on purpose
    restored: dict[str, Restored] = field(default_factory=dict)  # key → its file written back, and why
    unrestored: dict[str, str] = field(default_factory=dict)  # damaged file → why; nothing holds its entry
    repaired: list[str] = field(default_factory=list)  # store files rewritten whole
    # repaired files whose markers had no base (no merge driver): file → the entries or blocks
    # whose lines both sides changed, both versions kept
    unbased: dict[str, list[str]] = field(default_factory=dict)
    dropped: int = 0  # entries a teammate retired, taken out of this view
    # agent → keys retired as a session told twice (:mod:`scribed.tiers.cold_overlap`)
    told_twice: dict[str, list[str]] = field(default_factory=dict)
    hand_removed: dict[str, list[str]] = field(default_factory=dict)  # agent → keys removed by hand
    # key → (agent, the edit of its file the removal by hand wins over: a modify/delete conflict)
    edits_dropped: dict[str, tuple[str, DroppedEdit]] = field(default_factory=dict)
    git_removed: dict[str, list[str]] = field(default_factory=dict)  # agent → keys git removed
    git_failed: str = ""  # why git could not tell what it removed (those entries were written back)
    unexplained: list[str] = field(default_factory=list)  # gone from the view, kept: nothing retired them
    wiki: WikiSync = field(default_factory=WikiSync)  # wiki blocks a merge lost, written back
    failed: dict[str, str] = field(default_factory=dict)  # agent → why its files could not be synced

    @property
    def changed(self) -> bool:
        return bool(self.agents)


@dataclass(slots=True)
class AgentSync:
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
    broken: dict[str, tuple[Path, str]] = field(default_factory=dict)  # key → its file holding no entry, why
    unbased: dict[str, tuple[str, ...]] = field(default_factory=dict)  # key → conflicts, no base
    held_back: bool = False  # a reader's sync left a committed file the run must write
    retired: dict[str, str] = field(default_factory=dict)
    hand: set[str] = field(default_factory=set)  # this clone saw them removed by hand (sync state)
    kept_out: set[str] = field(default_factory=set)  # remembered removals this checkout's retired.txt lacks
    archives: dict[str, bytes] = field(default_factory=dict)  # fold archives read this sync
    chains: dict[str, list[bytes]] = field(default_factory=dict)  # digest id → its archives' texts
    # the part of a session each view entry new since the last sync tells → its key (:meth:`_renamed`)
    new_places: dict[tuple[str, str, str, int, int], str] | None = None

    @property
    def folder(self) -> Path:
        return self.layout.cold / self.name

    def read(self) -> None:
        self.pre, entries = split_entries(cold_store.lf(read_text(self.layout.cold_file(self.name))))
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
            k_name = cold_store.key_of_name(p.name)
            if got.broken and k_name:
                self.broken[k_name] = (p, got.broken)
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
        self._mend(res, git)
        for k in sorted(self.view.keys() | self.store.keys()):
            v = self.view.get(k)
            s = self.stored(k)
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

    def _rel(self, path: Path) -> str:
        return f"{self.layout.cold.name}/{self.name}/{path.name}"

    def _mend(self, res: SyncResult, git: gittree.Asker) -> None:
        """Store files that hold no entry of their own (emptied, cut short: :func:`cold_store.broken`):
        the entry is taken from this machine's view, else from the newest version git has of the
        file that holds it (the index's, then HEAD's history), and the file is rewritten; with
        neither, the file is left as it is and named (``doctor`` names it too)."""
        for k, (path, why) in sorted(self.broken.items()):
            if k in self.store or k in self.retired or k in self.kept_out or k in self.hand:
                continue  # another file holds it, or it left on purpose
            e, where = self.view.get(k), "this machine's view"
            if e is None:
                e, where = self._in_git(k, path, git)
            if e is None:
                res.unrestored[self._rel(path)] = why
                continue
            self.store[k], self.files[k] = [e], [path]
            res.restored[k] = Restored(self._rel(path), f"its file was {why}: written back from {where}")

    def _in_git(self, k: str, path: Path, git: gittree.Asker) -> tuple[Entry | None, str]:
        """Entry ``k`` as the newest version git has of its file holds it, and where that was."""
        for where, text in git.versions(self._rel(path)):
            for e in cold_store.read_file(path, text).entries:
                if cold_store.key(e) == k:
                    return e, f"git ({where})"
        return None, ""

    def _by_hand(self, k: str, v: Entry | None, res: SyncResult) -> bool:
        """Whether ``k`` was removed by hand (here or by a teammate): then it is kept out of the
        view and the store, whichever still holds it."""
        if k not in self.kept_out and not self.removed_by_hand(k):
            return False
        if v is not None:
            res.hand_removed.setdefault(self.name, []).append(k)
            res.dropped += 1
        return True

    def stored(self, k: str) -> Entry | None:
        """The store's version of ``k`` (of two, the one every clone picks), or None."""
        return cold_store.pick(self.store[k]) if k in self.store else None

    def removed_by_hand(self, k: str) -> bool:
        """Whether ``retired.txt`` lists ``k`` as removed by hand."""
        return k in self.retired and cold_store.by_hand(self.retired[k])

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
        there = {p for p in paths.values() if (self.layout.memory / p).exists()}  # holds another entry
        by_git = git.removed(p for p in paths.values() if p not in there)
        back: dict[str, Entry] = {}
        for k, v in lost.items():
            p = paths[k]
            if p in by_git:  # a checkout, a pulled deletion, a revert: as git left it
                res.git_removed.setdefault(self.name, []).append(k)
                continue
            # never committed, a merge kept the other side's tree, deleted behind git's back: written back
            why = IN_INDEX if p in git.in_index else "its file holds another entry" if p in there else NOT_GIT
            res.restored[k] = Restored(p, f"{why}: written back from this machine's view")
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
        renamed = self._renamed(k, e)
        if renamed:
            return renamed
        told = self._told_twice(k, e)
        if told:
            return told
        needle = f"id={k}".encode()
        for v in self.view.values():
            if v.entry_id and v.entry_id.startswith("d-") and any(needle in b for b in self._chain(v)):
                return f"folded into {v.entry_id}"
        return ""

    def _renamed(self, k: str, e: Entry) -> str:
        """Why ``e`` left the view when the view holds it under another id: an entry new since the
        last sync naming the same part of the same session (agent, session, source, lines) is
        ``e`` with its id edited by hand. The edit is the user's: ``e`` is retired, its line naming
        the session and lines (no ledger compacts that part again), not written back beside it."""
        at = _place(e)
        if at is None:
            return ""
        if self.new_places is None:  # once per sync, and only when an entry left unexplained
            self.new_places = {}
            for k2, v in self.view.items():
                if k2 not in self.base and (p := _place(v)) is not None:
                    self.new_places.setdefault(p, k2)  # the first in the view, as a scan found it
        now = self.new_places.get(at)
        if now is None or now == k:
            return ""
        session = re.sub(r"\s+", "_", at[1])
        return f"id edited by hand: now {now} · session={session} · lines {at[3]}–{at[4]}"

    def _told_twice(self, k: str, e: Entry) -> str:
        """Why ``e`` left the view when a part of its session the view holds tells it already (a
        reader's sync made the view one, :meth:`deduped`, and left the store to the run): the
        reason :func:`cold_overlap.plan` gives it, else ""."""
        s = cold_overlap.span(e)
        if s is None:
            return ""
        same = [v for v in self.view.values() if f"session={s.session[2]} " in v.text]
        return cold_overlap.plan(self.name, [*same, e]).retired.get(k, "") if same else ""

    def deduped(self, kept: dict[str, Entry], res: SyncResult) -> dict[str, Entry]:
        """``kept`` with no session told twice (:mod:`scribed.tiers.cold_overlap`: the finer cut
        kept, else the overlapping entries merged into one); what left is retired, its line naming
        its session and lines, so no clone writes it back and no ledger compacts it again."""
        p = cold_overlap.plan(self.name, kept.values())
        if not p.retired:
            return kept
        for k, why in p.retired.items():
            self.retired.setdefault(k, f"{self.today} {why}")  # one that came back keeps its line
        res.told_twice.setdefault(self.name, []).extend(sorted(p.retired))
        return {cold_store.key(e): e for e in p.entries}

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
        extra += [  # a damaged file whose entry is kept under another name, or left on purpose
            p
            for k, (p, _) in self.broken.items()
            if p.name not in wanted and k not in self.kept_out and (k in kept or k in self.retired)
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
            held = cold_store.lf(read_text(self.folder / name))  # a CRLF checkout is no change
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
