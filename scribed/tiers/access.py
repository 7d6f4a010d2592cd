"""Whether scribed's user can write where a run writes: the root's memory folders and the files
it opens in place.

A root whose ``.squad/`` belongs to another user (a systemd ``User=`` or a container's uid that
is not the owner's) passed ``check-config`` and then stopped ``scribed run`` at its first
``mkdir`` with a bare ``PermissionError`` and exit 1, which the shipped units restart in a loop.
:func:`problems` says it first, one line per folder or file, naming the user, the owner, the mode
and what to do; ``check-config`` reports it and ``run`` refuses it (exit 78) with the same lines.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import shlex
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scribed.tiers.layout import Layout

# What a folder scribed writes in must allow, each with the words for its lack.
_FOLDER_NEEDS = ((os.R_OK, "list"), (os.W_OK, "write in"), (os.X_OK, "enter"))
_FILE_NEEDS = ((os.R_OK, "read"), (os.W_OK, "write"))


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def user() -> str:
    """scribed's user as ``ps`` shows it: ``nobody (uid 65534)``."""
    uid = os.geteuid()
    return f"{_name(uid)} (uid {uid})"


def _lacks(path: Path, needs: tuple[tuple[int, str], ...]) -> list[str]:
    eff = os.access in os.supports_effective_ids
    return [word for bit, word in needs if not os.access(path, bit, effective_ids=eff)]


def _read_only(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    return False


def _whose(path: Path) -> tuple[str | None, str]:
    """(the owner's name, None when it is scribed's user; ``owned by root, mode 755``) of ``path``."""
    st = path.stat()
    owner = _name(st.st_uid)
    return (None if st.st_uid == os.geteuid() else owner), f"owned by {owner}, mode {st.st_mode & 0o7777:o}"


def _remedy(path: Path, owner: str | None, *, tree: bool, create: bool = False, mode: str = "u+rwx") -> str:
    """What gives scribed's user the access: its own file needs a mode, another's an owner (or
    scribed that owner)."""
    me, where = _name(os.geteuid()), shlex.quote(str(path))
    if owner is None:
        return f"give yourself that access (`chmod {mode} {where}`)"
    fix = (
        f"`install -d -o {shlex.quote(me)} {where}`"
        if create
        else f"`chown{' -R' if tree else ''} {shlex.quote(me)} {where}`"
    )
    return (
        f"{'create it for' if create else 'give'} {me}{'' if create else ' that access'} ({fix}), "
        f"or run scribed as its owner, {owner} (systemd User=, docker --user)"
    )


def _reach(folder: Path) -> tuple[Path, os.stat_result, bool] | None:
    """The folder nearest ``folder`` (itself or above) that exists and can be reached, its stat, and
    whether the one below it could not be entered (so ``folder`` may exist: it cannot be told)."""
    here, blocked = folder, False
    while True:
        try:
            return here, here.stat(), blocked
        except (FileNotFoundError, NotADirectoryError):
            pass
        except PermissionError:
            blocked = True  # a folder above cannot be entered: that one is named
        except OSError:
            return None
        if here == here.parent:
            return None
        here = here.parent


def folder_problem(folder: Path) -> str | None:
    """Why scribed's user cannot write in ``folder``, or reach it, or create it where it is missing
    (the nearest folder above it that exists must then let it), or None. A path that is no folder
    is another check's to name."""
    found = _reach(folder)
    if found is None or not stat.S_ISDIR(found[1].st_mode):
        return None
    here, _, blocked = found
    if _read_only(here):
        return (
            f"{folder}: {here} is on a read-only file system, and scribed writes its memory there: "
            "mount it read-write (systemd: add it to ReadWritePaths=; a container's volume: without :ro)"
        )
    lacks = _lacks(here, _FOLDER_NEEDS if here == folder or blocked else _FOLDER_NEEDS[1:])
    if not lacks:
        return None
    owner, whose = _whose(here)
    cannot = f"cannot {', '.join(lacks[:-1])}{' or ' if len(lacks) > 1 else ''}{lacks[-1]}"
    if here == folder or blocked:
        fix = _remedy(here, owner, tree=True)
        if here == folder:
            return f"{folder}: scribed runs as {user()} and {cannot} it ({whose}): {fix}"
        return f"{folder}: scribed, running as {user()}, {cannot} {here} to reach it ({whose}): {fix}"
    fix = _remedy(here if owner is None else folder, owner, tree=False, create=owner is not None)
    return (
        f"{folder}: missing, and scribed, running as {user()}, {cannot} {here} to create it ({whose}): {fix}"
    )


def file_problem(path: Path, *, write: bool = True) -> str | None:
    """Why scribed's user cannot read (and, ``write``, write) ``path``, a file it opens in place
    (the ledger, the lock), or None; None too where there is no such file yet."""
    try:
        if not path.is_file():
            return None
    except OSError:
        return None
    lacks = _lacks(path, _FILE_NEEDS if write else _FILE_NEEDS[:1])
    if not lacks:
        return None
    owner, whose = _whose(path)
    fix = _remedy(path, owner, tree=False, mode="u+rw")
    return f"{path}: scribed runs as {user()} and cannot {' or '.join(lacks)} it ({whose}): {fix}"


def _subfolders(*folders: Path) -> list[Path]:
    """The folders one level inside ``folders`` (an agent's ``cold/riker/``, a topic's, the archive's
    kinds): one ``sudo scribed run-once`` makes a new agent's folder root's, and the next run as the
    service user could not write there while its parent passed the check."""
    out: list[Path] = []
    for f in folders:
        with contextlib.suppress(OSError):
            out += sorted(Path(e.path) for e in os.scandir(f) if e.is_dir(follow_symlinks=False))
    return out


def problems(layout: Layout, folders: tuple[Path, ...] = ()) -> list[str]:
    """Each folder under ``layout``'s memory a run writes in (and ``folders``: the transcript
    archive's, when it is elsewhere), then each file it opens in place, that scribed's user cannot
    use: one line each, none below a folder already named (one ``chown -R`` fixes them all)."""
    named: list[Path] = []
    out: list[str] = []

    def below_named(p: Path) -> bool:
        return any(p == n or n in p.parents for n in named)

    for d in (layout.memory, layout.state, layout.hot, layout.cold, layout.wiki, layout.archive,
              layout.quarantine, *folders, *_subfolders(layout.cold, layout.wiki, layout.archive)):  # fmt: skip
        if not below_named(d) and (why := folder_problem(d)) is not None:
            named.append(d)
            out.append(why)
    ledger = layout.ledger
    in_place = [(ledger.with_name(ledger.name + s), True) for s in ("", "-wal", "-shm")]
    in_place += [(layout.state / n, True) for n in ("lock", "daemon.pid", "audit.jsonl")]
    in_place.append((layout.state / "content.key", False))
    for f, write in in_place:
        if not below_named(f) and (why := file_problem(f, write=write)) is not None:
            out.append(why)
    return out


def refusal(exc: OSError) -> str | None:
    """A run's write refused for its user or a read-only file system, in one line naming the file
    and the user (what :func:`problems` did not foresee: a file made since); None for any other
    error (a full disk passes; a restart may find room)."""
    if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
        return None
    where = exc.filename or "a file of the root"
    return (
        f"{where}: {exc.strerror or exc} (scribed runs as {user()}): give that user write access to "
        "the root's .squad/memory, or run scribed as its owner; `scribed check-config` names each "
        "folder"
    )


__all__ = ["file_problem", "folder_problem", "problems", "refusal", "user"]
