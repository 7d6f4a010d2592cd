"""Wiki facts a merge lost, written back: the wiki's side of team memory on git.

A wiki page is one shared file, and scribed never deletes a block from it: a reversal or a
deprecation moves the block under ``## Superseded``, a duplicate adds a source to the block that
holds it. So a block title that this clone's page held at the last sync and that is nowhere in the
page now was taken out from outside scribed: a conflict resolved with "ours" or "theirs", a merge
that took a teammate's older page, a reset. Whenever the team sync runs (the root lock taken or let
go, a spawn after a pull), each page whose stat changed since the last sync is compared with the
copy kept then (``.scribed/wiki-base/``): a block that vanished is written back under its section,
a block a text merge left twice is kept once (its two versions merged as an add/add, neither
dropped for the other), and a block a text merge left on the wrong side of ``## Superseded`` goes
where its own mark says (:func:`wiki_merge.placed`: a current fact never reads as retired because of
where git put it); then the copy is taken again.
To retire a fact on purpose, deprecate it (``scribed deprecate``): it stays on the page, under
``## Superseded``; a block deleted by hand comes back, with a warning in the log.

What a checkout did is not a loss (:mod:`scribed.core.gittree`): a page gone whose file git has
committed on some ref and its index no longer holds (a plain ``rm`` leaves it there: written back),
or a page whose last-synced version git committed but the commit checked
out does not descend from (a branch made before the fact, an old tag), is left as git put it, and
so is a missing ``index.md`` git has elsewhere: written back, each would be a file git refuses to
overwrite on the way back (one a ``wiki-write`` there wrote is taken out again).

``index.md`` is derived from the pages: when a page (or the index) changed since the last sync, it
is regenerated. A merge cannot be trusted with it: two clones that each added a fact to one page
both wrote the same "(1 active)" line, which git keeps once while the page holds two.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scribed.fsutil import atomic_write, ensure_dir, read_text
from scribed.tiers import wiki_merge
from scribed.tiers.wiki import INDEX, Wiki

if TYPE_CHECKING:
    from pathlib import Path

    from scribed.core.gittree import Asker
    from scribed.tiers.layout import Layout

BASE = "wiki-base"  # in the state folder: each page as it was at the last sync
INDEX_STATE = "wiki-index"  # in the sync state: index.md's stat when it was last checked
INDEX_GIT = "wiki-index-git"  # in the sync state: git removed index.md from this checkout


@dataclass(slots=True)
class WikiSync:
    restored: dict[str, list[str]] = field(default_factory=dict)  # page → block titles written back
    deduped: list[str] = field(default_factory=list)  # pages whose doubled blocks were made one
    placed: dict[str, list[str]] = field(default_factory=dict)  # page → blocks moved to where their marks say
    index: bool = False  # index.md rewritten: a page changed outside scribed (a merge, a pull)
    left: list[str] = field(default_factory=list)  # pages a checkout removed or took back: as git left them


def _titles(text: str) -> list[str]:
    return [t for _, t, _ in wiki_merge.chunks(text)[1] if t]


def _missing(base: str, text: str) -> str:
    """The blocks of ``base`` whose titles ``text`` lacks, with their section headings."""
    have = set(_titles(text))
    out: list[str] = []
    section = ""
    for s, t, chunk in wiki_merge.chunks(base)[1]:
        if not t or t in have:
            continue
        if s != section and s:
            out.append(s + "\n\n")
        section = s
        out.append(chunk if chunk.endswith("\n") else chunk + "\n")
    return "".join(out)


def _pages(layout: Layout) -> dict[str, Path]:
    if not layout.wiki.is_dir():
        return {}
    return {
        p.relative_to(layout.wiki).as_posix(): p
        for p in sorted(layout.wiki.glob("**/*.md"))
        if p.is_file() and not p.is_symlink() and p.name != INDEX
    }


def sync(
    layout: Layout, state: dict[str, Any], git: Asker | None = None, *, pages: bool = True
) -> tuple[WikiSync, bool]:
    """Compare the changed pages with their copies, write back what vanished (unless git removed
    it: ``git``, see the module docstring), and take new copies. Returns what was done and whether
    ``state`` changed. ``pages`` False (a spawn's reader): a page that needs a write is left, with
    its copy, for the next run (the index is still brought up to date)."""
    res = WikiSync()
    seen: dict[str, list[int]] = state.setdefault("wiki", {})
    base_dir = layout.state / BASE
    folder = layout.wiki.name
    found = _pages(layout)
    dirty = _gone_pages(layout, seen, found, res, git) if pages else False
    for rel, path in found.items():
        st = path.stat()
        sig = [st.st_mtime_ns, st.st_size]
        if seen.get(rel) == sig:
            continue
        text = read_text(path)
        if "<<<<<<<" in text:
            continue  # the conflict repair runs first and writes it again: compared then
        fixed, moved = wiki_merge.placed(text)
        if moved:
            res.placed[rel] = moved
        was = read_text(base_dir / rel)
        lost = _missing(was, text)
        if lost and git is not None and git.moved_away(f"{folder}/{rel}", was):
            res.left.append(rel)  # a checkout of a commit from before those blocks: not a loss
            lost = ""
        keys = wiki_merge.block_keys(text)
        if lost or len(keys) != len(set(keys)):
            fixed = wiki_merge.merge_wiki(fixed, lost)
            if lost:
                res.restored[rel] = _titles(lost)
            if len(keys) != len(set(keys)):
                res.deduped.append(rel)
        if fixed != text:
            if not pages:
                res.restored.pop(rel, None)
                res.placed.pop(rel, None)
                res.deduped = [x for x in res.deduped if x != rel]
                continue
            atomic_write(path, fixed, base=layout.memory)
            st = path.stat()
        ensure_dir((base_dir / rel).parent)
        atomic_write(base_dir / rel, fixed, base=layout.state)
        seen[rel] = [st.st_mtime_ns, st.st_size]
        dirty = True
    return res, _index(layout, state, res, pages_changed=dirty, git=git) or dirty


def _gone_pages(
    layout: Layout, seen: dict[str, list[int]], pages: dict[str, Path], res: WikiSync, git: Asker | None
) -> bool:
    """Pages gone since the last sync: written back from their copies (added to ``pages``), unless
    git removed them (a checkout without them: checking out one with them brings them back).
    Returns whether ``seen`` changed."""
    base_dir = layout.state / BASE
    gone = sorted(set(seen) - set(pages))
    folder = layout.wiki.name
    by_git = git.removed(f"{folder}/{rel}" for rel in gone) if git is not None and gone else set()
    dirty = False
    for rel in gone:
        base = base_dir / rel
        if f"{folder}/{rel}" in by_git:
            res.left.append(rel)
            with contextlib.suppress(OSError):
                base.unlink()
            del seen[rel]
            dirty = True
        elif base.is_file():
            ensure_dir((layout.wiki / rel).parent)
            atomic_write(layout.wiki / rel, read_text(base), base=layout.memory)
            res.restored[rel] = _titles(read_text(base))
            pages[rel] = layout.wiki / rel
        else:
            with contextlib.suppress(OSError):
                base.unlink()
            del seen[rel]
            dirty = True
    return dirty


def _index(
    layout: Layout, state: dict[str, Any], res: WikiSync, *, pages_changed: bool, git: Asker | None = None
) -> bool:
    """``index.md`` regenerated when a page changed since the last sync (a merge, a pull: git
    merges the index's line for a page as text, and both sides' "(1 active)" stay one line while
    the page holds both facts) or when the index itself did (a merge, a hand). Returns whether
    ``state`` changed."""
    path = layout.wiki / INDEX
    if not pages_changed and _sig(path) == state.get(INDEX_STATE):
        return False
    rel = f"{layout.wiki.name}/{INDEX}"
    if path.exists() and state.get(INDEX_GIT) and git is not None and git.removed([rel]):
        # written since a checkout without it took it (a wiki-write there): git does not track it
        # here and has it elsewhere, so left, it would stop the way back ("untracked … overwritten")
        path.unlink(missing_ok=True)
        return False
    if path.exists():
        state.pop(INDEX_GIT, None)
    elif state.get(INDEX_GIT) or (
        state.get(INDEX_STATE) and git is not None and git.removed([rel])
    ):  # it was here, and a checkout without it took it: written, it would stop the way back
        changed = not state.get(INDEX_GIT)
        state[INDEX_GIT] = True
        return changed
    res.index = Wiki(layout.wiki, layout.memory).write_index()
    sig = _sig(path)
    if sig == state.get(INDEX_STATE):
        return False
    state[INDEX_STATE] = sig
    return True


def _sig(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]
