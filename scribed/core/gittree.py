"""Whether git put the working tree in the state the team sync finds it in.

The sync writes back a cold entry, a wiki page or block, that vanished since the last sync: a merge
that kept one side (``-s ours``), a crash or a hand lost it. But git removes files on purpose too:
a branch switch or a checkout of an old commit, a pull of a teammate's deletion, ``git revert``,
``git rm`` and a commit. Written back, such a file is untracked in a checkout that lacks it, and
git refuses to switch back ("untracked working tree files would be overwritten"); or a deletion is
undone on every clone.

The rule: a path git's index no longer holds (git takes a file it removes out of its index: a
checkout, a pull, ``git rm``, a revert) and that git's history of some ref shows (``git log --all --
PATH``: a commit added, changed or deleted it) is where git put it, and is left so. One the index
still holds (:func:`tracked`) was deleted behind git's back (a plain ``rm``, a tool: ``git status``
shows `` D``) and is written back; so is one that no ref's history shows: it was
never committed (an entry not committed yet, removed by ``git clean``, a crash) or was dropped by a
merge that took the other side's tree (git's history simplification follows the parent a merge
took, so the dropped side's commits are not shown), and is written back as before. Outside a git
work tree, without git, or when git fails or takes longer than :data:`TIMEOUT`, nothing is known
and the file is written back, as before; the reason is returned for the log. A path a stash holds
as an untracked file (``git stash -u`` of a file not committed yet, :func:`stashed`) was put away
by git too: written back, it would stop ``git stash pop`` ("already exists, no checkout").

git runs only when something is missing (rare), once per question, from the memory folder, and
stops reading as soon as every path asked about was seen (a branch switch's files are in the
newest commits of the branch it left).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scribed.tiers.layout import Layout

TIMEOUT = 10.0  # seconds: a history this slow to walk is treated as no answer (written back)
MAX_PATHS = 200  # more paths than this are asked about by their folders (then the whole history is read)
# git's variables that point it at another repository (a hook's GIT_DIR is relative to its cwd)
_REPO_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX", "GIT_NAMESPACE")
_NOT_A_REPO = ("not a git repository", "does not have any commits yet")


@dataclass(slots=True)
class Found:
    """The paths git's history shows (relative to the folder asked from); ``why`` is set when git
    could not answer, and ``quiet`` when that is normal (no git, not a repository)."""

    paths: set[str] = field(default_factory=set)
    why: str = ""
    quiet: bool = False

    @property
    def known(self) -> bool:
        return not self.why


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REPO_VARS}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def _git(cwd: Path, args: list[str]) -> list[str]:
    return ["git", "--literal-pathspecs", "-C", str(cwd), "-c", "log.showSignature=false", *args]


def usable(memory: Path) -> bool:
    """Whether the memory folder is in a work tree git checks out (not a state-branch copy kept
    inside ``.git``, which git never checks out)."""
    return ".git" not in memory.parts


def committed(cwd: Path, paths: Iterable[str], *, timeout: float | None = None) -> Found:
    """Which of ``paths`` (relative to ``cwd``; a folder ending in ``/`` stands for every file in
    it) git's history of any ref shows, or a superset of them (many paths are asked about by their
    folders). Streams ``git log --all --name-only`` and stops once each file path asked about was
    seen."""
    asked = sorted(set(paths))
    if not asked:
        return Found()
    if len(asked) > MAX_PATHS:  # a command line has a limit (32 K characters on Windows): their folders
        asked = sorted({p if p.endswith("/") else (p.rpartition("/")[0] or ".") + "/" for p in asked})
    files = set(asked) if not any(p.endswith("/") for p in asked) else set()
    # ``-c``: a file only a merge commit added (a conflict resolved with `scribed run-once`) too; not
    # ``-m``, which walks every parent: a ``-s ours`` merge's dropped side would count as git's
    args = [
        "log",
        "--all",
        "-c",
        "--format=",
        "--name-only",
        "--no-renames",
        "-z",
        "--relative",
        "--",
        *asked,
    ]
    out = Found()

    prefix = [""]  # of the names a merge's combined diff gives: it ignores ``--relative``

    def relative(name: str) -> str:
        if not prefix[0]:
            for p in asked:
                at = name.find(p) if p.endswith("/") else len(name) - len(p) if name.endswith(p) else -1
                if at > 0 and name[at - 1] == "/":
                    prefix[0] = name[:at]
                    break
        return name.removeprefix(prefix[0]) if prefix[0] else name

    def take(names: list[bytes]) -> bool:
        for n in names:
            name = n.strip(b"\n").decode("utf-8", "surrogateescape")
            out.paths.add(name if name in files else relative(name))
        return bool(files) and files <= out.paths

    why, quiet = _stream(cwd, args, b"\0", take, timeout)
    out.paths.discard("")
    return Found(why=why, quiet=quiet) if why else out


def stashed(cwd: Path, paths: Iterable[str], *, timeout: float | None = None) -> Found:
    """Which of ``paths`` (relative to ``cwd``) a stash holds as an untracked file (``git stash
    -u``): those live in the stash commit's third parent, a commit of their own that no ref's
    history shows, so :func:`committed` does not see them. Two git calls, only when there is a
    stash: the stashes' parents (``git stash list``), then one ``git log --no-walk`` of every
    untracked-files commit, restricted to ``paths``."""
    asked = sorted(set(paths))
    if not asked:
        return Found()
    parents: list[str] = []

    def take_parents(lines: list[bytes]) -> bool:
        for line in lines:
            ids = line.split()
            if len(ids) >= 3:  # noqa: PLR2004  (HEAD, index, untracked files)
                parents.append(ids[2].decode("ascii", "replace"))
        return False

    why, quiet = _stream(cwd, ["stash", "list", "--format=%P"], b"\n", take_parents, timeout)
    if why or not parents:
        return Found(why=why, quiet=quiet)
    if len(asked) > MAX_PATHS:
        asked = sorted({p if p.endswith("/") else (p.rpartition("/")[0] or ".") + "/" for p in asked})
    args = ["log", "--no-walk", "--format=", "--name-only", "--no-renames", "-z", "--relative"]
    out = Found()

    def take(names: list[bytes]) -> bool:
        out.paths.update(n.strip(b"\n").decode("utf-8", "surrogateescape") for n in names)
        return False

    why, quiet = _stream(cwd, [*args, *parents, "--", *asked], b"\0", take, timeout)
    out.paths.discard("")
    return Found(why=why, quiet=quiet) if why else out


def tracked(cwd: Path, paths: Iterable[str], *, timeout: float | None = None) -> Found:
    """Which of ``paths`` (relative to ``cwd``; a folder ending in ``/`` stands for every file in
    it) git's index holds (``git ls-files -t``), those a sparse checkout keeps out of the working
    tree (skip-worktree) left out: git put those away. A path the index holds and the working tree
    lacks was deleted behind git's back (a plain ``rm``, a tool): git removes a file from its
    index too (a checkout, a pull, ``git rm``, a revert)."""
    asked = sorted(set(paths))
    if not asked:
        return Found()
    if len(asked) > MAX_PATHS:
        asked = sorted({p if p.endswith("/") else (p.rpartition("/")[0] or ".") + "/" for p in asked})
    out = Found()

    def take(records: list[bytes]) -> bool:
        for r in records:
            tag, _, name = r.partition(b" ")
            if name and tag != b"S":
                out.paths.add(name.decode("utf-8", "surrogateescape"))
        return False

    why, quiet = _stream(cwd, ["ls-files", "-z", "-t", "--cached", "--", *asked], b"\0", take, timeout)
    return Found(why=why, quiet=quiet) if why else out


MAX_VERSIONS = 32  # texts of one file read back from git at most, newest first


def versions(cwd: Path, path: str, *, timeout: float | None = None) -> tuple[list[tuple[str, str]], str]:
    """The texts ``path`` (relative to ``cwd``) had, newest first, as (where, text): the index's,
    then, down the history of HEAD, each version a commit left or replaced (at most
    :data:`MAX_VERSIONS`); and why git could not answer ("" when it did, or when that is normal)."""
    oids: list[tuple[str, str]] = []

    def add(where: str, oid: bytes) -> None:
        text = oid.decode("ascii", "replace")
        if oid.strip(b"0") and all(o != text for _, o in oids):  # all zeros: no file on that side
            oids.append((where, text))

    def take_index(records: list[bytes]) -> bool:
        for r in records:
            parts = r.split(b"\t", 1)[0].split()
            if len(parts) == 3:  # noqa: PLR2004  (mode, object, stage)
                add("the index", parts[1])
        return False

    why, quiet = _stream(cwd, ["ls-files", "-s", "-z", "--", path], b"\0", take_index, timeout)
    if why:
        return [], "" if quiet else why
    commit = [""]

    def take_log(lines: list[bytes]) -> bool:
        for line in lines:
            parts = line.split()
            if line.startswith(b":") and len(parts) >= 5:  # noqa: PLR2004  (:mode mode old new status)
                add(f"commit {commit[0]}", parts[3])
                add(f"the parent of {commit[0]}", parts[2])
            elif parts:
                commit[0] = parts[0].decode("ascii", "replace")
        return len(oids) >= MAX_VERSIONS

    args = ["log", "HEAD", "--format=%h", "--raw", "--no-abbrev", "--no-renames", "--", path]
    why, quiet = _stream(cwd, args, b"\n", take_log, timeout)
    if why and not oids:
        return [], "" if quiet else why
    texts = _cat(cwd, [o for _, o in oids[:MAX_VERSIONS]], timeout)
    return [(where, texts[o]) for where, o in oids[:MAX_VERSIONS] if o in texts], ""


def _cat(cwd: Path, oids: list[str], timeout: float | None) -> dict[str, str]:
    """The blobs ``oids`` name, as text read as scribed reads its files (bad bytes replaced), in
    one ``git cat-file --batch``; none when git fails."""
    if not oids:
        return {}
    try:
        p = subprocess.run(
            _git(cwd, ["cat-file", "--batch"]),
            input=("\n".join(oids) + "\n").encode(),
            env=_env(),
            capture_output=True,
            check=False,
            timeout=TIMEOUT if timeout is None else timeout,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    out: dict[str, str] = {}
    data, at = p.stdout, 0
    for oid in oids:
        end = data.find(b"\n", at)
        head = data[at:end].split() if end >= 0 else []
        if len(head) != 3 or head[1] != b"blob":  # noqa: PLR2004  (object type size); "missing"
            at = end + 1 if end >= 0 else len(data)
            continue
        size = int(head[2])
        out[oid] = data[end + 1 : end + 1 + size].decode("utf-8", "replace")
        at = end + 1 + size + 1
    return out


def blobs(cwd: Path, rev: str, path: str, *, timeout: float | None = None) -> Found:
    """The blob ids ``path`` (relative to ``cwd``) had in the commits of ``rev``'s history that
    changed it (``--all`` for every ref's), as ``Found.paths``."""
    # ``-c``: the version only a merge commit has (the driver's page with both sides' blocks) too,
    # as ``::mode mode mode old old new status``; not ``-m``, which walks a ``-s ours`` merge's other side
    args = ["log", rev, "-c", "--format=", "--raw", "--no-abbrev", "--no-renames", "--", path]
    out = Found()

    def take(lines: list[bytes]) -> bool:
        for line in lines:
            meta = line.split(b"\t", 1)[0].split()
            if line.startswith(b":") and len(meta) >= 5:  # noqa: PLR2004  (:mode mode old new status)
                out.paths.add(meta[-2].decode("ascii", "replace"))
        return False

    why, quiet = _stream(cwd, args, b"\n", take, timeout)
    return Found(why=why, quiet=quiet) if why else out


def _stream(
    cwd: Path, args: list[str], sep: bytes, take: Callable[[list[bytes]], bool], timeout: float | None
) -> tuple[str, bool]:
    """Run git, handing ``take`` its output's records as they come, until ``take`` says it has
    seen enough or git ends; killed (with whatever it started) after ``timeout`` seconds.
    Returns why there is no answer ("" when there is one) and whether that is normal."""
    limit = TIMEOUT if timeout is None else timeout
    try:
        proc = subprocess.Popen(
            _git(cwd, args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=_env(),
            start_new_session=True,  # its own process group: a kill reaches what it started too
        )
    except OSError as exc:
        return f"git: cannot run it ({exc.strerror or exc})", True

    def kill() -> None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)

    timer = threading.Timer(limit, kill)
    timer.start()
    enough = False
    try:
        assert proc.stdout is not None and proc.stderr is not None
        rest = b""
        while chunk := os.read(proc.stdout.fileno(), 65536):
            *records, rest = (rest + chunk).split(sep)
            if take(records):
                enough = True
                kill()
                break
        if not enough:
            take([rest])
        err = b"" if enough else proc.stderr.read()
        code = proc.wait()
    finally:
        timer.cancel()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    if enough or code == 0:
        return "", False
    if code < 0:  # the timer killed it
        return f"git log: no answer within {limit:g} s", False
    msg = err.decode("utf-8", "replace").strip().splitlines()
    last = msg[-1] if msg else f"exit {code}"
    return f"git log: {last}", any(s in last for s in _NOT_A_REPO)


def blob_id(data: bytes, oid_len: int = 40) -> str:
    """git's object id of a file holding ``data`` (SHA-1, or SHA-256 in a repository using it)."""
    head = b"blob %d\0" % len(data)
    h = hashlib.sha256() if oid_len == 64 else hashlib.sha1()  # noqa: PLR2004  (git's own ids)
    h.update(head + data)
    return h.hexdigest()


@dataclass(slots=True)
class Asker:
    """One sync's questions to git, asked from the memory folder (paths relative to it). ``why``
    keeps the first reason git could not answer that is worth a warning (a timeout, an error; not
    "no git" or "not a repository", where the old rule is the only one)."""

    memory: Path
    timeout: float | None = None
    why: str = ""
    in_index: set[str] = field(default_factory=set)  # asked about, missing, and still in git's index

    def _note(self, found: Found) -> bool:
        if not found.known and not found.quiet and not self.why:
            self.why = found.why
        return found.known

    def removed(self, paths: Iterable[str]) -> set[str]:
        """Of ``paths``, files missing from the working tree, those git put so: out of its index
        (:func:`tracked`; those it still holds are kept in :attr:`in_index`) and shown by some ref's
        history (:func:`committed`) or a stash; none when git cannot tell."""
        asked = sorted(set(paths))
        if not asked or not usable(self.memory):
            return set()
        index = tracked(self.memory, asked, timeout=self.timeout)
        if not self._note(index):
            return set()
        self.in_index |= index.paths & set(asked)  # deleted behind git's back (``rm``): not git's
        asked = [p for p in asked if p not in index.paths]
        if not asked:
            return set()
        found = committed(self.memory, asked, timeout=self.timeout)
        if not self._note(found):
            return set()
        out = found.paths & set(asked)
        rest = [p for p in asked if p not in out]
        if rest:  # put away by ``git stash -u`` (back with ``git stash pop``): git has it too
            stash = stashed(self.memory, rest, timeout=self.timeout)
            if self._note(stash):
                out |= stash.paths & set(rest)
        return out

    def versions(self, path: str) -> list[tuple[str, str]]:
        """The texts git has of ``path``, newest first (:func:`versions`); none outside a work tree
        git checks out, or when git cannot answer."""
        if not usable(self.memory):
            return []
        got, why = versions(self.memory, path, timeout=self.timeout)
        if why and not self.why:
            self.why = why
        return got

    def had_lines(self, path: str, keys: Iterable[str], reason: str) -> set[str]:
        """Of ``keys``, those whose ``retired.txt`` line (``KEY … reason``) the history of the
        commit checked out added to ``path`` at some point: the checkout descends from the
        removal, so a line missing now was taken out after it (a revert). Outside a work tree git
        checks out (a state branch, never checked out), every key; when git cannot answer, none."""
        want = set(keys)
        if not want:
            return set()
        if not usable(self.memory):
            return want
        args = ["log", "HEAD", "--format=", "-p", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv"]
        seen: set[str] = set()
        tag = reason.encode()

        def take(lines: list[bytes]) -> bool:
            for line in lines:
                if line.startswith(b"+") and tag in line:
                    k = line[1:].split(b" ", 1)[0].decode("ascii", "replace")
                    if k in want:
                        seen.add(k)
            return seen == want

        why, quiet = _stream(self.memory, [*args, "--", path], b"\n", take, self.timeout)
        return seen if self._note(Found(why=why, quiet=quiet)) else set()

    def moved_away(self, path: str, seen: str) -> bool:
        """Whether a checkout took the file at ``path`` off ``seen`` (its text at the last sync):
        ``seen`` is a version git committed on some ref, and not one in the history of the commit
        checked out. A merge that dropped part of it descends from that version (or, keeping the
        other side's file whole, shows none): then it is not a checkout."""
        if not usable(self.memory):
            return False
        head = blobs(self.memory, "HEAD", path, timeout=self.timeout)
        if not self._note(head):
            return False
        data = seen.encode("utf-8", "surrogateescape")
        if head.paths and blob_id(data, len(next(iter(head.paths)))) in head.paths:
            return False
        every = blobs(self.memory, "--all", path, timeout=self.timeout)
        if not self._note(every) or not every.paths:
            return False
        return blob_id(data, len(next(iter(every.paths)))) in every.paths


def entry_ids(memory: Path, agents: Iterable[str] = ()) -> tuple[set[str], str]:
    """The ids of every cold entry file git's history of some ref shows under ``cold/`` (in the
    named agents' folders, or in all): what a checkout, a pull or a revert may have taken out of
    the working tree. One walk of the history (about 1 s for 50,000 commits, measured); with no
    answer, no ids and why (empty when that is normal: no git, no repository)."""
    from scribed.names import normalize_name
    from scribed.tiers.cold_store import key_of_name

    names = [normalize_name(a) for a in agents]
    paths = ["cold/"] if not names or None in names else [f"cold/{n}/" for n in names]
    if not usable(memory):
        return set(), ""
    found = committed(memory, paths)
    if not found.known:
        return set(), "" if found.quiet else found.why
    out: set[str] = set()
    for p in found.paths:
        parts = p.split("/")
        key = key_of_name(parts[-1]) if len(parts) == 3 and parts[0] == "cold" else None  # noqa: PLR2004
        if key:
            out.add(key)
    return out, ""


def _git_at(where: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One short git call, as :func:`committed` runs git (its environment and options)."""
    return subprocess.run(
        _git(where, list(args)), env=_env(), capture_output=True, text=True, check=False, timeout=TIMEOUT
    )


DRIVER_MISSING = (
    "`.gitattributes` asks git to merge team memory with `merge=scribed`, but this clone's git config "
    "has no `merge.scribed.driver`: git merges it as plain text, and a conflict leaves markers "
    "without a base (the next run keeps both versions of those lines for a person to choose) "
    "— run `scribed git setup` once in this clone"
)


def driver_missing(layout: Layout) -> str:
    """:data:`DRIVER_MISSING` when the memory's cold entries ask for ``merge=scribed`` and this
    clone has no driver for it (a teammate who cloned and never ran setup); "" otherwise, and
    outside git or on a state branch (two ``git`` calls, about 5 ms)."""
    if layout.on_branch or not layout.memory.is_dir():
        return ""
    try:
        attr = _git_at(layout.memory, "check-attr", "merge", "--", "cold/agent/entry.md")
        if attr.returncode != 0 or not attr.stdout.strip().endswith(": merge: scribed"):
            return ""
        driver = _git_at(layout.memory, "config", "--get", "merge.scribed.driver")
    except (OSError, subprocess.SubprocessError):
        return ""
    return "" if driver.returncode == 0 and driver.stdout.strip() else DRIVER_MISSING
