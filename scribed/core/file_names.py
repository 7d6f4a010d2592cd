"""Each file once, whatever reaches it: which of a file's names it is read and compacted under.

Discovery lists each source's files once within that source, whatever symlinks lead to them
(:func:`scribed.sources.discover`). Left to this module: a file with two hard-linked names, and a
file two configured sources both reach (the same folder given twice, one inside the other, one
through a symlink, a link from one source to the other's file). Read under each name, it was
compacted twice (the second entry dropped only when both readings matched). Of its names one is
kept, in this order:

* the one the ledger already knows it by, so a name made later never takes the file over (its
  ledger key, the entries' ``source=``);
* else the first source's, in the config's order (its kind, agent and workspace are the file's);
* within a source, its own name before a symlink, then the first by path.

Two sources whose folders overlap are a configuration mistake, said once per run with both named
(:func:`overlaps`; ``check-config`` and ``doctor`` say it too); the daemon keeps its answers to
"which name?" here (:class:`Owners`), checked against each file's identity.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scribed.config_light import source_label
from scribed.names import normalize_name
from scribed.sources import FileId, globs

if TYPE_CHECKING:
    from scribed.config import Config
    from scribed.core.results import SourceItem

Known = Callable[[str], bool]  # whether the ledger has a row for this path


class Listed(NamedTuple):
    """A name discovery listed: the source it came from (its index in the config), its work item
    and its identity."""

    source: int
    item: SourceItem
    ident: FileId


class Overlap(NamedTuple):
    """A source (``later``) whose folder overlaps an earlier one's (``first``: the owner)."""

    first: int
    later: int
    reason: str


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (both resolved by the caller)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def overlaps(cfg: Config) -> list[Overlap]:
    """Each source whose folder is an earlier source's, lies inside it or holds it (paths compared
    with symlinks resolved), with the first such earlier source: it owns the files both list."""
    reals: list[str | None] = []
    for s in cfg.sources:
        try:
            reals.append(os.path.realpath(s.expanded) if s.expanded.is_dir() else None)
        except OSError:
            reals.append(None)
    out: list[Overlap] = []
    for j, b in enumerate(reals):
        for i, a in enumerate(reals[:j]):
            if a is not None and b is not None and (under(a, b) or under(b, a)) and _reach(cfg, i, j, a, b):
                out.append(Overlap(i, j, _reason(cfg, i, j, a if under(a, b) else b)))
                break
    return out


def _reach(cfg: Config, i: int, j: int, a: str, b: str) -> bool:
    """Whether the outer of two nested folders' source can list a file in the inner one: its
    patterns must walk down to it (an Aider source at the repository, ``glob =
    ".aider.chat.history.md"``, never reaches ``.specstory/history``, a SpecStory source there)."""
    from scribed.sources import patterns

    if a == b:
        return True
    k, folder, inner = (i, a, b) if under(b, a) else (j, b, a)
    outer = cfg.sources[k]
    return globs.reaches(patterns(outer.kind, outer.glob), Path(os.path.relpath(inner, folder)).parts)


def _reason(cfg: Config, i: int, j: int, shared: str) -> str:
    """The overlap's words: both sources named, and what the files both list are read as."""
    first, later = cfg.sources[i], cfg.sources[j]
    scoped = first.scope(cfg.root_path) != later.scope(cfg.root_path)

    def what(k: int) -> str:
        s = cfg.sources[k]
        agent = normalize_name(s.agent) or s.kind.replace("squad-repl", "squad")
        scope = s.scope(cfg.root_path)
        return f"kind {s.kind}, agent {agent}" + (
            f", workspace {', '.join(scope or ['*'])}" if scoped else ""
        )

    a, b = what(i), what(j)
    owner = source_label(i) + "'s" + ("" if a == b else f" ({a}), never as {source_label(j)}'s ({b})")
    return (
        f"{source_label(j)} ({later.kind} {later.expanded}) and {source_label(i)} ({first.kind} "
        f"{first.expanded}) both reach {shared}: a file both list is read once, as {owner}; give "
        "each folder to one source"
    )


def _rank(name: Listed, known: Known | None) -> tuple[bool, int, bool, str]:
    path = str(name.item.path)
    return (known is None or not known(path), name.source, name.ident.link, path)


class Once(NamedTuple):
    """What :func:`once` keeps of discovery's names: each file once, the kept name of each file met
    under several (by its device and inode), and the names dropped."""

    kept: list[Listed]
    owners: dict[tuple[int, int], SourceItem]
    dropped: list[Listed]


def once(
    listed: Sequence[Listed], known: Known | None = None, say: Callable[[Listed, Listed], None] | None = None
) -> Once:
    """``listed`` less every name but one of each file (``say(dropped, kept)`` for each). Only
    names whose inodes discovery saw equal are stat-ed: a tree of distinct files costs nothing."""
    inos = [name.ident.ino for name in listed]
    if len(set(inos)) == len(inos):  # the usual tree: every name a file of its own
        return Once(list(listed), {}, [])
    by_ino: dict[int, list[int]] = {}
    for k, ino in enumerate(inos):
        by_ino.setdefault(ino, []).append(k)
    drop: list[int] = []
    owners: dict[tuple[int, int], SourceItem] = {}
    for ks in by_ino.values():
        if len(ks) == 1:
            continue
        files: dict[tuple[int, int], list[int]] = {}
        for k in ks:
            try:
                st = os.stat(listed[k].item.path)
            except OSError:  # gone since: its compaction says so
                continue
            files.setdefault((st.st_dev, st.st_ino), []).append(k)
        for key, same in files.items():
            if len(same) == 1:
                continue  # one inode number on two devices: two files
            same.sort(key=lambda k: _rank(listed[k], known))
            kept = listed[same[0]]
            owners[key] = kept.item
            for k in same[1:]:
                drop.append(k)
                if say is not None:
                    say(listed[k], kept)
    gone = set(drop)
    return Once([n for k, n in enumerate(listed) if k not in gone], owners, [listed[k] for k in sorted(drop)])


def duplicate_reason(dropped: Listed, kept: Listed) -> str:
    """Why a name is not read: the words of a ``source_link_duplicate`` note."""
    if dropped.source != kept.source:
        return f"the same file as {kept.item.path} ({source_label(kept.source)}'s): read once, as that"
    if not (dropped.ident.link or kept.ident.link):
        return f"a hard link to {kept.item.path}: read once, as that"
    return f"the same file as {kept.item.path}: read once, as that"


class Owners:
    """The daemon's answer, per event, to "which name is this file compacted under?", the same as
    discovery's: kept from the last walk of every source (:class:`Once`), looked up by the file's
    identity. A name that may be a second one (a hard link, a symlink, a file of two overlapping
    sources) is walked for again when it was not there at the last walk or its file's link count
    changed since (a new hard link); any other name is its own unless the last walk said not."""

    def __init__(self, cfg: Config, walk: Callable[[], Once]) -> None:
        self.cfg = cfg
        self._walk = walk
        self._owners: dict[tuple[int, int], SourceItem] | None = None
        self._met: dict[str, tuple[int, int, int]] = {}  # name -> (device, inode, links) at the walk
        self._lock = threading.Lock()
        self._shared = [str(cfg.sources[k].expanded) for o in overlaps(cfg) for k in (o.first, o.later)]

    def _again(self) -> dict[tuple[int, int], SourceItem]:
        """Walk every source; each name listed is stamped, so the catch-up's files cost no walk."""
        found = self._walk()
        self._met = {}  # names gone since are forgotten
        for name in (*found.kept, *found.dropped):
            with contextlib.suppress(OSError):
                st = os.stat(name.item.path)
                self._met[str(name.item.path)] = (st.st_dev, st.st_ino, st.st_nlink)
        self._owners = found.owners
        return found.owners

    def of(self, item: SourceItem) -> SourceItem:
        """The item ``item``'s file is compacted as (``item`` itself but for a second name)."""
        path = str(item.path)
        try:
            st = os.stat(path)
        except OSError:  # gone: the work on it says so
            return item
        key, stamp = (st.st_dev, st.st_ino), (st.st_dev, st.st_ino, st.st_nlink)
        maybe_second = st.st_nlink > 1 or any(under(path, f) for f in self._shared) or os.path.islink(path)
        with self._lock:  # the watchers' threads and the workers ask
            owners = self._owners
            if owners is None or (maybe_second and self._met.get(path) != stamp):
                owners = self._again()
                self._met[path] = stamp  # not listed (yet): not walked for again until it changes
            owner = owners.get(key)
            if owner is not None and owner.path != item.path and not _same(owner, key):
                owner = self._again().get(key)  # its kept name is gone, or is another file now
        if owner is None or owner.path == item.path:
            return item
        return owner if _same(owner, key) else item


def _same(item: SourceItem, key: tuple[int, int]) -> bool:
    try:
        st = os.stat(item.path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == key
