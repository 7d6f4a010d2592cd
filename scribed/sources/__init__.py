"""Transcript adapters: each source kind's files in, normalized :class:`Session` objects out.

Everything downstream sees only ``Session``/``Turn``, so a new format is one new module here.
This module finds a source's files (:func:`discover`; :func:`match` for the one file an event
names); reading one is :mod:`scribed.sources.reading`, whose names it re-exports.
:func:`parse_file` never raises: unreadable files and bad content come back as warnings on the
:class:`ParseResult`. ``ParseResult.warnings`` holds every warning for the file;
``Session.warnings`` repeats the ones that concern that session (file-level ones go to the first).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from scribed.fsutil import TMP_PREFIX, shown, utf8_name
from scribed.sources import globs, homes
from scribed.sources.reading import (
    KINDS,
    STREAM_MIN_BYTES,
    Brief,
    ChangedError,
    Reading,
    parse_file,
    read_file,
)

_GLOBS: dict[str, tuple[str, ...]] = {
    "copilot": ("*/events.jsonl", "*.jsonl"),
    "claude": ("**/*.jsonl",),  # also <sessionId>/subagents/agent-<id>.jsonl
    "codex": ("**/rollout-*.jsonl", "**/rollout-*.jsonl.zst"),  # older rollouts are zstd-compressed
    "squad-repl": ("*.json",),
    "markdown": (
        "**/*.md",
        "**/*.markdown",
        "**/*.txt",
        "**/.aider.chat.history.md",
        "**/.specstory/history/*.md",
    ),
    "hot": ("*.md",),
}
# Used only when the kind's own patterns find nothing (Codex files renamed by hand, say).
_FALLBACK_GLOBS: dict[str, tuple[str, ...]] = {"codex": ("**/*.jsonl", "**/*.jsonl.zst")}

# Editors' swap/backup/lock files, partial downloads and scribed's own atomic-write temp files.
_TEMP_PREFIXES = (".#", "~", TMP_PREFIX)
_TEMP_SUFFIXES = ("~", ".tmp", ".swp", ".swo", ".part")


def is_temp(name: str) -> bool:
    """An editor's or downloader's temp file (``.#x``, ``x.swp``, ``x~``, ``#x#``, ``x.part``, …)."""
    return (
        name.startswith(_TEMP_PREFIXES)
        or name.endswith(_TEMP_SUFFIXES)
        or (len(name) > 1 and name[0] == name[-1] == "#")
    )


class FileId(NamedTuple):
    """What tells two names of one file apart from two files, as discovery met it for free: the
    inode (readdir's for a file, its target's for a symlink; equal inodes are compared by a stat,
    which adds the device) and whether the name is a symlink."""

    ino: int
    link: bool


class Note(NamedTuple):
    """What discovery met and did not list, or what it says of the source itself, and why. ``warn``:
    a folder it cannot read, a symlink broken (dangling, a loop) or to a folder (never followed),
    the source one level too high or matching nothing (:func:`discover`); else a second name for a
    file listed under another."""

    path: Path
    reason: str
    warn: bool


def _walk(
    folder: Path,
    patterns: tuple[str, ...],
    first_only: bool = False,
    notes: list[Note] | None = None,
    ids: list[FileId] | None = None,
) -> list[Path]:
    """The regular files under ``folder`` matching any pattern, each file once. A symlinked file is
    read where it leads, unless that file is listed already (see :func:`_links`); a symlinked
    folder is never followed (no loop, no file reached twice, and the watchers do not enter it
    either); a link that is dangling or a loop is skipped. ``notes`` gets each such link and each
    folder it cannot read, ``ids`` each file's :class:`FileId`, in the order returned."""
    pats, states = globs.start(patterns)
    files: list[os.DirEntry[str]] = []
    links: list[tuple[Path, os.stat_result]] = []  # symlinked files and what they lead to
    say = notes.append if notes is not None else lambda _n: None
    stack: list[tuple[Path, globs.State]] = [(folder, states)] if states else []
    while stack:
        cur, st = stack.pop()
        for e in _entries(cur, say):
            inner, final = globs.step(pats, st, e.name)
            if not utf8_name(e.name):
                _not_utf8(e, inner, final, say)
                continue
            try:
                if e.is_symlink():
                    target = _link(e, inner, final and not is_temp(e.name), say)
                    if target is not None:
                        if first_only:
                            return [Path(e.path)]
                        links.append((Path(e.path), target))
                    continue
                is_dir = e.is_dir()
                is_file = e.is_file()
            except OSError:
                continue
            if final and is_file and not is_temp(e.name):
                files.append(e)
                if first_only:
                    return [Path(e.path)]
            if inner and is_dir:
                stack.append((Path(e.path), inner))
    found = [Path(e.path) for e in files]
    kept = _links(folder, found, links, say) if links else []
    if ids is not None:  # readdir's inodes (no stat); a link's is its target's
        ids += [FileId(e.inode(), False) for e in files]
        targets = dict(links)
        ids += [FileId(targets[p].st_ino, True) for p in kept]
    return found + kept


def _entries(folder: Path, say: Callable[[Note], None]) -> list[os.DirEntry[str]]:
    """A folder's entries; none, said, when it cannot be read (one gone since it was listed: none)."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError as exc:
        if not isinstance(exc, FileNotFoundError | NotADirectoryError):
            say(Note(folder, unreadable(folder, exc), True))
        return []


def _not_utf8(e: os.DirEntry[str], inner: globs.State, final: bool, say: Callable[[Note], None]) -> None:
    """Says a file the patterns take, or a folder they enter, whose name is not UTF-8: it is skipped,
    as its name could be neither stored (ledger, provenance, logs) nor shown as it is; the others
    are read (before, one such name stopped every run)."""
    try:
        folder = bool(inner) and e.is_dir(follow_symlinks=False)
        file = final and not folder and e.is_file() and not is_temp(e.name)
    except OSError:
        return
    if not (folder or file):
        return
    say(Note(Path(shown(e.path)), _not_utf8_reason(folder), True))


def _not_utf8_reason(folder: bool) -> str:
    what = "a folder" if folder else "a file"
    whose = "the transcripts in it are" if folder else "it is"
    return (
        f"{what} whose name is not valid UTF-8 (its bad bytes shown as \\xNN): {whose} not compacted; "
        "rename it to a UTF-8 name (e.g. `convmv -f latin1 -t utf-8 --notest`) to have it read"
    )


def not_utf8(kind: str, folder: Path, glob: str, path: Path) -> str | None:
    """Why :func:`match` refuses ``path``, when the reason is a name in it that is not UTF-8 and
    the source would take it otherwise (the daemon says it for a file made while it runs)."""
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return None
    bad = [k for k, p in enumerate(parts) if not utf8_name(p)]
    if not bad or kind not in _GLOBS:
        return None
    pats = globs.expand(glob) if glob else _GLOBS[kind] + _FALLBACK_GLOBS.get(kind, ())
    if not globs.matches(pats, tuple(shown(p) for p in parts)):
        return None
    return _not_utf8_reason(bad[0] < len(parts) - 1)


def _link(
    e: os.DirEntry[str], inner: globs.State, final: bool, say: Callable[[Note], None]
) -> os.stat_result | None:
    """What a symlink the patterns would take (``final``: as a file; ``inner``: as a folder to
    enter) leads to, when it is a regular file to read; else None, said when it is broken or a
    folder."""
    if not (inner or final):
        return None
    try:
        st = os.stat(e.path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            say(Note(Path(e.path), "a symlink loop: skipped", True))
        elif isinstance(exc, FileNotFoundError):
            where = os.path.realpath(e.path)
            say(Note(Path(e.path), f"a symlink to {where}, which does not exist: skipped", True))
        else:
            say(
                Note(
                    Path(e.path), f"a symlink that cannot be followed ({exc.strerror or exc}): skipped", True
                )
            )
        return None
    if stat.S_ISDIR(st.st_mode):
        if inner:
            where = os.path.realpath(e.path)
            reason = f"a symlinked folder (to {where}): not followed; give it a source of its own to read it"
            say(Note(Path(e.path), reason, True))
        return None
    return st if final and stat.S_ISREG(st.st_mode) else None


def _links(
    folder: Path, found: list[Path], links: list[tuple[Path, os.stat_result]], say: Callable[[Note], None]
) -> list[Path]:
    """The symlinked files to list, each file once: none whose file is listed under its own name
    (it lies inside the source), and of several links to one file the oldest (then the first by
    name), so a link made later never takes over the ledger's key of the file."""
    real_folder = os.path.realpath(folder)
    listed = set(found)
    same: dict[tuple[int, int], list[Path]] = {}
    for path, st in links:
        rel = os.path.relpath(os.path.realpath(path), real_folder)
        inside = folder / rel
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep) and inside in listed:
            say(Note(path, f"the same file as {inside}: read once, as that", False))
            continue
        same.setdefault((st.st_dev, st.st_ino), []).append(path)
    kept: list[Path] = []
    for paths in same.values():
        paths.sort(key=lambda p: (_made(p), str(p)))
        kept.append(paths[0])
        for p in paths[1:]:
            say(Note(p, f"the same file as {paths[0]}: read once, as that", False))
    return kept


def _made(link: Path) -> int:
    """When the link itself was made (its own mtime; a link is never written to)."""
    try:
        return os.lstat(link).st_mtime_ns
    except OSError:
        return 0


def patterns(kind: str, glob: str = "") -> tuple[str, ...]:
    """Every pattern a source of ``kind`` with ``glob`` may list a file by (the fallback's too)."""
    if kind not in _GLOBS:
        raise ValueError(f"unknown source kind {kind!r}; expected one of {', '.join(KINDS)}")
    return globs.expand(glob) if glob else _GLOBS[kind] + _FALLBACK_GLOBS.get(kind, ())


def match(kind: str, folder: Path, glob: str, path: Path) -> bool:
    """Whether ``discover(kind, folder, glob)`` would list ``path``, decided for that one file.

    The daemon calls this for each file event, so it must agree with discovery exactly: the same
    patterns and dot rules, the same temp-file and symlinked-folder exclusions, the same fallback.
    """
    if kind not in _GLOBS:
        raise ValueError(f"unknown source kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return False
    if not parts or is_temp(parts[-1]) or not all(map(utf8_name, parts)):
        return False  # a name that is not UTF-8: discovery skips it (said by each run)
    if not _regular(path, folder, parts):
        return False
    pats = globs.expand(glob) if glob else _GLOBS[kind]
    if not globs.matches(pats, parts):
        pats = _FALLBACK_GLOBS.get(kind, ()) if not glob else ()
        if not (pats and globs.matches(pats, parts) and not _walk(folder, _GLOBS[kind], True)):
            return False
    # a link may be a second name for a file listed under another: discovery decides (a walk, but
    # only for a link, whose events are rare: a tool writes to its own file, not through the link)
    return not path.is_symlink() or path in _walk(folder, pats)


def _regular(path: Path, folder: Path, parts: tuple[str, ...]) -> bool:
    """A regular file (or a link to one) not reached through a symlinked folder."""
    cur = folder
    try:
        for part in parts[:-1]:
            cur = cur / part
            if cur.is_symlink():
                return False
        return path.is_file()
    except OSError:
        return False


def unreadable(folder: Path, exc: OSError) -> str:
    """A folder discovery cannot read, as every command says it: nothing in it is ever compacted."""
    why = (exc.strerror or type(exc).__name__).lower()
    return f"cannot read folder {folder} ({why}): the transcripts in it are not compacted"


def missing(folder: Path) -> bool:
    """Nothing is at ``folder``. A folder above it that cannot be searched makes it unreadable,
    not missing (``Path.exists`` raises there): :func:`discover` says so."""
    try:
        os.stat(folder)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


def _about(kind: str, folder: Path, glob: str, paths: list[Path]) -> Note | None:
    """What is wrong with a source as a whole: without a ``glob``, it lies above the folder its
    tool keeps its sessions in (:mod:`scribed.sources.homes`); or it lists nothing although its
    folder holds files (an empty folder is fine, as is a glob without wildcards: the agent has
    written nothing yet)."""
    if glob and globs.problem(glob, str(folder)):  # said as the config's error (scribed run refuses it)
        return None
    sub = None if glob else homes.below(kind, folder)
    if sub is not None:
        return Note(folder, _above(kind, folder, sub, paths), True)
    if paths or (glob and not any(c in p for p in globs.expand(glob) for c in "*?[")):
        return None  # a glob naming files is like a path: they come with the agent's first run
    some = _walk(folder, ("**/*",), first_only=True)
    if not some:
        return None
    held = some[0].relative_to(folder).as_posix()
    if glob:
        ext = some[0].suffix
        every = f"every {ext} file" if ext else "every file"
        reason = (
            f"glob {glob!r} matches no file under {folder} (it holds {held}, for one): a glob is matched "
            f"against each file's path below `path`; `**/*{ext}` takes {every} at any depth"
        )
    else:
        reason = (
            f"no {kind} transcript under {folder}: none of its files ({held}, for one) is named as "
            f"{kind} transcripts are ({', '.join(_GLOBS[kind])}); " + _other_files(kind, folder, held)
        )
    return Note(folder, reason, True)


LOG_PROBE_BYTES = 1 << 20  # a file read to tell a session log from notes (said on every run)


def _other_files(kind: str, folder: Path, held: str) -> str:
    """What to do about a folder holding none of ``kind``'s files. A markdown session log (the
    markdown reader finds a user's turn in it) is another format, not this kind's files renamed: a
    ``glob`` would hand it to this kind's parser, which cannot read it (a Squad REPL folder of
    markdown logs), so the kind that reads it is named instead."""
    if kind != "markdown":
        for p in _walk(folder, _GLOBS["markdown"])[:3]:
            if _is_chat(p):
                name = p.relative_to(folder).as_posix()
                return (
                    f"{'that file' if name == held else name} is a markdown session log: to remember "
                    f'such logs, set `kind = "markdown"` in this source (a `glob` would not help: a '
                    f"{kind} source reads only {kind} transcripts)"
                )
    return "point `path =` at the folder that holds them, or set `glob =`"


def _is_chat(path: Path) -> bool:
    """Whether the markdown reader finds a user's turn in ``path`` (notes and READMEs have none)."""
    try:
        if path.stat().st_size > LOG_PROBE_BYTES:
            return False
        found = parse_file("markdown", path, "")
    except (OSError, ValueError):
        return False
    return any(t.role == "user" for s in found.sessions for t in s.turns)


def _above(kind: str, folder: Path, sub: Path, paths: list[Path]) -> str:
    tool = homes.HOMES[kind].tool
    setup = "; `scribed setup` writes the sources it finds"
    if not paths:
        return (
            f"no {kind} transcript under {folder}: {tool} keeps its sessions in {sub}: point `path =` there"
            + setup
        )
    said = f"{tool} keeps its sessions in {sub}, not in {folder}: point `path =` there"
    outside = [p for p in paths if not p.is_relative_to(sub)]
    if outside:
        n, first = len(outside), outside[0].relative_to(folder).as_posix()
        said += (
            f" ({n} files outside it, such as {first}, are read as transcripts)"
            if n > 1
            else f" (a file outside it, {first}, is read as a transcript)"
        )
    return said + setup


def discover(
    kind: str,
    folder: Path,
    glob: str = "",
    notes: list[Note] | None = None,
    ids: list[FileId] | None = None,
) -> Iterator[Path]:
    """The files of ``kind`` under a configured source folder, sorted; nothing if it is missing.

    A configured ``glob`` replaces the kind's patterns. Wildcards and ``**`` skip names that start
    with a dot (``.git``, ``.e.md``), but a pattern that names a dot file or folder reads it
    (``**/.aider.chat.history.md``, ``.specstory/history/*.md``). Temp files are always skipped.
    Each file is listed once, whatever symlinks lead to it; ``notes`` gets the links not listed
    and the folders it cannot read (see :func:`_walk`), and what is wrong with the source itself
    (:func:`_about`); ``ids`` each listed file's :class:`FileId`, in the order listed (hard
    links, and files other sources reach, are the caller's: :mod:`scribed.core.file_names`).
    """
    if kind not in _GLOBS:
        raise ValueError(f"unknown source kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        if not folder.is_dir():
            return
    except OSError as exc:  # a folder above it cannot be searched
        if notes is not None and not isinstance(exc, FileNotFoundError | NotADirectoryError):
            notes.append(Note(folder, unreadable(folder, exc), True))
        return
    said: list[Note] = []
    found: list[FileId] | None = [] if ids is not None else None
    paths = _walk(folder, globs.expand(glob) if glob else _GLOBS[kind], notes=said, ids=found)
    if not paths and not glob and kind in _FALLBACK_GLOBS:
        said, found = [], [] if ids is not None else None  # the fallback's walk is the one that counts
        paths = _walk(folder, _FALLBACK_GLOBS[kind], notes=said, ids=found)
    if notes is not None:
        about = None if any(n.path == folder for n in said) else _about(kind, folder, glob, paths)
        notes += sorted([*said, about] if about else said)
    if ids is None or found is None:
        yield from sorted(paths)
        return
    order = sorted(range(len(paths)), key=paths.__getitem__)
    ids += [found[k] for k in order]
    yield from (paths[k] for k in order)


__all__ = [
    "KINDS",
    "STREAM_MIN_BYTES",
    "Brief",
    "ChangedError",
    "FileId",
    "Note",
    "Reading",
    "discover",
    "is_temp",
    "match",
    "missing",
    "not_utf8",
    "parse_file",
    "read_file",
    "unreadable",
]
