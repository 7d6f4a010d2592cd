"""Merging the versions of a tier file entry by entry: what ``scribed git merge-file`` (a git merge
driver, given the base ``%O``, ours ``%A`` and theirs ``%B``) and the repair of a file left with
conflict markers both do, and what a reader is given of such a file (:func:`readable`).

With the base, each cold entry and each wiki block merges three ways, as git merges a file: one
changed on one side only takes that side's version (a teammate's untouched copy never beats a
correction); unchanged on both stays; added on one side is kept; deleted on one side and unchanged
on the other goes (the deletion was deliberate); deleted on one side and changed on the other
keeps the change (nothing lost: the deleting side did not see it); changed on both sides is merged
line by line (:mod:`scribed.tiers.text_merge`, ``git merge-file``). Only the same lines changed
two ways are a conflict: both versions are kept (:attr:`Merged.text`), and the driver writes them
between git's markers and exits 1 so git reports the conflict to the person merging
(:attr:`Merged.marked`).

Markers without a base (git's default conflict style: a clone without the driver) are repaired
three ways against a stand-in base, the lines both sides share
(:func:`scribed.tiers.cold_store.versions`): each conflict is then both versions, one after the
other, as a conflict with the base is; no side is dropped for being shorter. Without any base
(the wiki sync's write-backs) the older rules hold: the entries and blocks of both, one per key;
of two versions of one entry, the longer (every clone picks the same).

Which merge a file takes is its path's (:func:`kind_of`):

- a cold entry file (``cold/{agent}/*.md``): one entry, or two added on both sides
  (:func:`scribed.tiers.cold_store.pick`: two compactions of one session, no person's edit);
- ``retired.txt``: the union of its lines;
- a wiki topic: block by block, laid out by each block's mark (:mod:`scribed.tiers.wiki_merge`);
- ``wiki/index.md``: derived from the pages (rewritten by the next run), so a conflict in it takes
  this side's lines and is never reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from scribed.tiers import cold_store, wiki_merge
from scribed.tiers.text_merge import Merged, plain


def merge_entries(ours: str, theirs: str, base: str | None = None) -> str:
    return cold_store.merge_entries(ours, theirs, base).text


def merge_lines(ours: str, theirs: str) -> str:
    rows = cold_store.read_retired(ours)
    for k, v in cold_store.read_retired(theirs).items():
        rows.setdefault(k, v)
    return cold_store.render_retired(rows)


def kind_of(path: str) -> str:
    """Which merge a tier file takes, from its path: entries, lines, wiki, index (the wiki's derived
    index), or "" (none of ours)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if "memory" not in parts:
        return ""
    rest = parts[parts.index("memory") + 1 :]
    if len(rest) == 3 and rest[0] == "cold" and rest[2] == cold_store.RETIRED:  # noqa: PLR2004
        return "lines"
    if len(rest) == 3 and rest[0] == "cold" and rest[2].endswith(".md"):  # noqa: PLR2004
        return "entries"
    if rest == ("wiki", "index.md"):
        return "index"
    if len(rest) >= 2 and rest[0] == "wiki" and rest[-1].endswith(".md"):  # noqa: PLR2004
        return "wiki"
    return ""


def merge(kind: str, ours: str, theirs: str, base: str | None = None) -> str:
    """The merge with both versions of each conflict kept (no markers): a repair, the state branch."""
    return merge_file(kind, ours, theirs, base).text


def merge_file(
    kind: str, ours: str, theirs: str, base: str | None = None, *, stand_in: bool = False
) -> Merged:
    """``ours`` and ``theirs`` merged by ``kind`` (:func:`kind_of`), three ways given ``base``
    (``""``: the file is new on both sides; ``stand_in``: the lines both share, for markers without
    a base). A side the other did not change is taken whole, as git takes it: a file nobody
    changed keeps its bytes."""
    if theirs in (ours, base):
        return plain(ours)
    if base == ours:
        return plain(theirs)
    if kind == "entries":
        return cold_store.merge_entries(ours, theirs, base, stand_in=stand_in)
    if kind == "lines":
        return plain(merge_lines(ours, theirs))
    return wiki_merge.merged(ours, theirs, base, derived=kind == "index")


def repair(kind: str, text: str) -> str | None:
    """A file git left with conflict markers, merged entry by entry (None: it has none); three
    ways, against the base when the markers carry it (``diff3`` style, as the driver writes them),
    else against the lines both sides share (both versions of each conflict kept)."""
    got = cold_store.versions(text)
    return None if got is None else merge_file(kind, got[1], got[2], got[0], stand_in=not got[3]).text


_FRONT = re.compile(r"^---\n(?=scribed-live: )", re.M)


@dataclass(frozen=True, slots=True)
class Repaired:
    """A tier file as a reader gets it (:func:`repaired`), and what its markers were."""

    text: str
    unbased: bool = False  # markers without a base (no driver): both versions of each conflict kept
    conflicts: tuple[str, ...] = ()  # the entries or blocks whose same lines both sides changed


def readable(path: str, text: str) -> str:
    """What a reader (a spawn's context, search) is given of a tier file a merge left with conflict
    markers or two front matters (a hot file under ``merge=union``): never the file as it is.
    Cold views and wiki pages are merged entry by entry in memory; a hot file keeps this machine's
    side, or its last front matter and what follows it. The next run writes the same repair."""
    return repaired(path, text).text


def repaired(path: str, text: str) -> Repaired:
    """:func:`readable`, with what the repair met (the run's log names a repair without a base)."""
    rel = path.replace("\\", "/")
    hot = "/hot/" in rel
    got = cold_store.versions(text) if "<<<<<<<" in text else None
    merged = None
    if got is not None:
        kind = "hot" if hot else kind_of(rel) or ("wiki" if "/wiki/" in rel else "entries")
        if kind == "hot":
            text = got[1]
        else:
            merged = merge_file(kind, got[1], got[2], got[0], stand_in=not got[3])
            text = merged.text
    if hot:
        starts = [m.start() for m in _FRONT.finditer(text)]
        if len(starts) > 1:
            text = text[starts[-1] :]
    unbased = got is not None and not got[3] and not hot
    return Repaired(text, unbased, () if merged is None else merged.conflicts)
