"""Squad's state branch as the shared store of scribed's tiers (``stateBackend`` orphan / two-layer).

Squad keeps its state on the ``squad-state`` branch, never checked out, and refuses state files in
the working tree. scribed then keeps its tier files in the clone's ``.git/scribed/memory/`` (see
:mod:`scribed.tiers.layout`: every command finds them there) and shares them through the branch,
under ``memory/`` (the path they have under ``.squad/`` on a ``local`` backend), with git's own
plumbing, under the root lock:

- :func:`pull`, when the lock is taken: a remote-tracking ``squad-state`` that is ahead is
  fast-forwarded into the local branch, one that diverged is merged into it (tier files entry by
  entry, :mod:`scribed.tiers.git_merge`; a conflict in Squad's own files is left to the user, who
  is told); then what the branch changed since the last pull is written into the local copy,
  three ways (a file changed on both sides is merged entry by entry, never overwritten);
- :func:`push`, before the lock is let go: the shared files (cold entries, ``retired.txt``, wiki
  pages) that changed since the last push become one commit on the branch, its tree built in a
  temporary index (``read-tree``, ``update-index``, ``write-tree``), the ref moved with
  compare-and-swap (``update-ref NEW OLD``); a branch that moved meanwhile (``squad sync``, Squad's
  own write) is pulled again and the commit rebuilt on top of it.

Hot files and cold views stay this clone's own (they are not on the branch), as on ``local``.
Pushing the branch to a remote is Squad's (``squad sync`` and the hooks it installs).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed.fsutil import atomic_write, ensure_dir, read_json_object, read_text, shown, utf8_name
from scribed.log import utf8_named
from scribed.names import normalize_name
from scribed.tiers import git_merge
from scribed.tiers.layout import BRANCH as BRANCH
from scribed.tiers.layout import BRANCH_STATE
from scribed.tiers.layout import REF as REF
from scribed.tiers.layout import branch_refs as _refs

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from scribed.tiers.layout import Layout

PREFIX = "memory/"  # the tier files' folder on the branch
ZERO = "0" * 40
ATTEMPTS = 5  # compare-and-swap tries before a push gives up (the next run tries again)
ON_BRANCH = (  # why a path of the branch whose name is not UTF-8 is neither pulled nor touched
    f"its name on the {BRANCH} branch is not valid UTF-8 (its bad bytes shown as \\xNN): left there "
    f"as it is and not read; rename it on the branch (`git worktree add ../state {BRANCH}`, rename it "
    "to a UTF-8 name, commit) to have it read"
)
IDENTITY = {  # used only where the clone has no user.name / user.email of its own
    "GIT_AUTHOR_NAME": "scribed",
    "GIT_AUTHOR_EMAIL": "scribed@localhost",
    "GIT_COMMITTER_NAME": "scribed",
    "GIT_COMMITTER_EMAIL": "scribed@localhost",
}


class StateBranchError(Exception):
    """git failed on the state branch (missing git, a broken repository): the message says what."""


@dataclass(slots=True)
class BranchResult:
    """What one pull or push did, for the log and ``doctor``."""

    pulled: list[str] = field(default_factory=list)  # paths written from the branch
    merged: list[str] = field(default_factory=list)  # paths changed on both sides, merged
    commit: str = ""  # the commit a push made ("" none)
    remote: str = ""  # a remote-tracking branch fast-forwarded or merged in
    diverged: str = ""  # why a remote-tracking branch could not be merged in ("" it could)


def shared(rel: str) -> bool:
    """Whether a file of the memory folder is shared through the branch (cold entries, their
    ``retired.txt``, wiki pages); hot files, cold views and the state folder are this clone's."""
    return bool(git_merge.kind_of(PREFIX + rel))


class Git:
    """git in the root's clone, with a commit identity where the clone has none."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.env = dict(os.environ)
        self._identity_checked = False

    def run(self, *args: str, data: bytes | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
        try:
            p = subprocess.run(
                ["git", "-C", str(self.top), *args],
                input=data,
                capture_output=True,
                env=self.env,
                check=False,
            )
        except OSError as exc:
            raise StateBranchError(f"git: cannot run it ({exc.strerror or exc})") from exc
        if p.returncode not in ok:
            err = p.stderr.decode("utf-8", "replace").strip().splitlines()
            raise StateBranchError(f"git {args[0]}: {err[-1] if err else f'exit {p.returncode}'}")
        return p.stdout

    def text(self, *args: str, data: bytes | None = None) -> str:
        return self.run(*args, data=data).decode("utf-8", "replace").strip()

    def rev(self, ref: str) -> str:
        out = self.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", ok=(0, 1))
        return out.decode().strip()

    def ancestor(self, a: str, b: str) -> bool:
        p = subprocess.run(
            ["git", "-C", str(self.top), "merge-base", "--is-ancestor", a, b],
            capture_output=True,
            check=False,
        )
        return p.returncode == 0

    def blobs(self, oids: list[str]) -> dict[str, bytes]:
        """The contents of ``oids`` through one ``cat-file --batch``."""
        if not oids:
            return {}
        out = self.run("cat-file", "--batch", data="".join(f"{o}\n" for o in oids).encode())
        got: dict[str, bytes] = {}
        pos = 0
        for oid in oids:
            end = out.index(b"\n", pos)
            head = out[pos:end].split()
            if len(head) != 3:  # noqa: PLR2004  ("<oid> missing")
                raise StateBranchError(f"git cat-file: {oid} is missing from the repository")
            size = int(head[2])
            got[oid] = out[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return got

    def commit(self, tree: str, parents: list[str], message: str) -> str:
        if not self._identity_checked:
            self._identity_checked = True
            for var, key in (("GIT_AUTHOR_IDENT", "AUTHOR"), ("GIT_COMMITTER_IDENT", "COMMITTER")):
                if subprocess.run(["git", "-C", str(self.top), "var", var], capture_output=True).returncode:
                    self.env.update({k: v for k, v in IDENTITY.items() if key in k})
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        return self.text(*args, "-m", message)

    def move(self, new: str, old: str) -> bool:
        """Compare-and-swap the branch from ``old`` ("" absent) to ``new``; False if it moved."""
        p = subprocess.run(
            ["git", "-C", str(self.top), "update-ref", "-m", "scribed", REF, new, old or ZERO],
            capture_output=True,
            env=self.env,
            check=False,
        )
        return p.returncode == 0


# --- this clone's record ----------------------------------------------------------------------
def _load(layout: Layout) -> dict[str, Any]:
    return read_json_object(layout.state / BRANCH_STATE)


def _save(layout: Layout, state: dict[str, Any]) -> None:
    ensure_dir(layout.state)
    atomic_write(layout.state / BRANCH_STATE, json.dumps(state, sort_keys=True), base=layout.state)


def _files(layout: Layout) -> Iterator[tuple[str, Path]]:
    """The shared files of the local copy, as (path under memory/, file); one whose name is not
    UTF-8 is a warning and stays this clone's (git could store it, but no other reader could)."""
    for folder in (layout.cold, layout.wiki):
        if not folder.is_dir():
            continue
        found = sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
        for p in utf8_named(p for p in found if shared(p.relative_to(layout.memory).as_posix())):
            yield p.relative_to(layout.memory).as_posix(), p


# --- pull ---------------------------------------------------------------------------------------
def _blobs_of(git: Git, commit: str, keep: Callable[[str], bool], *under: str) -> Iterator[tuple[str, str]]:
    """(path, blob id) of the files of ``commit`` (under the ``under`` folders) that ``keep`` takes.
    One whose name is not UTF-8 is a warning and left out: neither pulled, nor deleted or
    rewritten by a push, nor imported."""
    rows: dict[str, str] = {}
    for row in git.run("ls-tree", "-r", "-z", commit, "--", *under).split(b"\0"):
        meta, _, path = row.partition(b"\t")
        parts = meta.split()
        name = path.decode("utf-8", "surrogateescape")
        if len(parts) == 3 and parts[1] == b"blob" and keep(name):  # noqa: PLR2004
            rows[name] = parts[2].decode()
    for p in utf8_named((Path(f"{BRANCH}:{name}") for name in rows), ON_BRANCH):
        name = str(p).removeprefix(f"{BRANCH}:")
        yield name, rows[name]


def _tree(git: Git, commit: str) -> dict[str, str]:
    """Path under memory/ → blob id, of the branch's shared files at ``commit``."""
    if not commit:
        return {}
    found = _blobs_of(git, commit, lambda path: shared(path[len(PREFIX) :]), PREFIX)
    return {path[len(PREFIX) :]: oid for path, oid in found}


def pull(layout: Layout, git: Git) -> BranchResult:
    """Bring the local copy up to the branch (module docstring). The caller holds the lock."""
    res = BranchResult()
    _take_remote(layout, git, res)
    tip = git.rev(REF)
    state = _load(layout)
    base = str(state.get("tip", ""))
    remotes = {k: v for k, v in _refs(layout).items() if k != REF}
    if tip == base:
        if state.get("remotes", {}) != remotes:
            state["remotes"] = remotes
            _save(layout, state)
        return res
    old, new = _tree(git, base), _tree(git, tip)
    changed = sorted(r for r in old.keys() | new.keys() if old.get(r) != new.get(r))
    data = git.blobs(sorted({o for r in changed for o in (old.get(r), new.get(r)) if o}))
    for rel in changed:
        _apply(layout, rel, data.get(old.get(rel, ""), None), data.get(new.get(rel, ""), None), res)
    state["tip"] = tip
    state["remotes"] = remotes
    state["files"] = {}  # the next push hashes what it finds (stats changed under the writes)
    _save(layout, state)
    return res


def _apply(layout: Layout, rel: str, base: bytes | None, theirs: bytes | None, res: BranchResult) -> None:
    """One path the branch changed since the last pull, written three ways into the local copy."""
    path = layout.memory / rel
    mine = path.read_bytes() if path.is_file() else None
    if mine == theirs:
        return
    if mine != base and mine is not None and theirs is not None:  # changed here too (unpushed)
        kind = git_merge.kind_of(PREFIX + rel)
        old = "" if base is None else base.decode("utf-8", "replace")  # added on both sides: git's add/add
        text = git_merge.merge(kind, mine.decode("utf-8", "replace"), theirs.decode("utf-8", "replace"), old)
        res.merged.append(rel)
    elif mine != base and mine is not None:  # deleted there, changed here: this clone's change stays
        return
    elif theirs is None:
        path.unlink(missing_ok=True)
        res.pulled.append(rel)
        return
    else:
        text = theirs.decode("utf-8", "replace")
        res.pulled.append(rel)
    ensure_dir(path.parent)
    atomic_write(path, text, base=layout.memory)


def _take_remote(layout: Layout, git: Git, res: BranchResult) -> None:
    """A remote-tracking ``squad-state`` ahead of the local branch is fast-forwarded into it; one
    that diverged is merged (``git merge-tree``), tier files entry by entry."""
    refs = git.text("for-each-ref", "--format=%(objectname) %(refname)", "refs/remotes/")
    for line in refs.splitlines():
        sha, _, name = line.partition(" ")
        if not name.endswith(f"/{BRANCH}"):
            continue
        tip = git.rev(REF)
        if sha == tip or (tip and git.ancestor(sha, tip)):
            continue
        short = name.removeprefix("refs/remotes/")
        if not tip or git.ancestor(tip, sha):
            if git.move(sha, tip):
                res.remote = short
            continue
        merged = _merge_tree(git, tip, sha, short, res)
        if merged and git.move(git.commit(merged, [tip, sha], f"scribed: merge {short} into {BRANCH}"), tip):
            res.remote = short


def _merge_tree(git: Git, ours: str, theirs: str, name: str, res: BranchResult) -> str:
    """The tree of ``ours`` and ``theirs`` merged, or "" (with ``res.diverged`` saying why)."""
    out = git.run("merge-tree", "--write-tree", "-z", ours, theirs, ok=(0, 1)).split(b"\0")
    tree = out[0].decode().strip()
    stages: dict[str, dict[str, str]] = {}
    for row in out[1:]:
        if not row:
            break  # the informational messages follow an empty field
        meta, _, raw = row.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3:  # noqa: PLR2004
            stage = stages.setdefault(raw.decode("utf-8", "surrogateescape"), {})
            stage[parts[2].decode()] = parts[1].decode()
    if not stages:
        return tree
    # a path not UTF-8 is left to the user with Squad's files: its merged text could not be stored
    foreign = sorted(
        shown(p) for p in stages if not (utf8_name(p) and p.startswith(PREFIX) and shared(p[len(PREFIX) :]))
    )
    if foreign:
        res.diverged = (
            f"{BRANCH} and {name} diverged with conflicts in Squad's own files ({', '.join(foreign[:5])}): "
            f"merge them by hand (git merge-tree {BRANCH} {name}); scribed keeps writing to {BRANCH}"
        )
        return ""
    blobs = git.blobs(sorted({o for s in stages.values() for o in s.values()}))
    lines = []
    for path, st in sorted(stages.items()):
        mine = blobs.get(st.get("2", ""), b"").decode("utf-8", "replace")
        other = blobs.get(st.get("3", ""), b"").decode("utf-8", "replace")
        # no base stage: the path was added on both sides, which the driver is given as an empty base
        base = blobs[st["1"]].decode("utf-8", "replace") if st.get("1") in blobs else ""
        text = (
            git_merge.merge(git_merge.kind_of(path), mine, other, base) if mine and other else mine or other
        )
        oid = git.text("hash-object", "-w", "--stdin", data=text.encode())
        lines.append(f"100644 {oid}\t{path}")
        res.merged.append(path[len(PREFIX) :])
    return _rewrite(git, tree, lines)


def _message(head: str, info: list[str]) -> str:
    """The commit message: what the run did, then how many files of each tier changed."""
    cold = sum(1 for x in info if f"\t{PREFIX}cold/" in x)
    wiki = len(info) - cold
    parts = [f"{n} {what}" for n, what in ((cold, "cold file(s)"), (wiki, "wiki page(s)")) if n]
    return f"{head}: {', '.join(parts) or 'no change'}\n\nWritten by scribed (tier files under {PREFIX})."


def _rewrite(git: Git, tree: str, index_info: list[str]) -> str:
    """``tree`` with the ``update-index --index-info`` lines applied, in a temporary index."""
    index = git.text("rev-parse", "--git-path", "scribed-index")
    path = Path(index) if Path(index).is_absolute() else git.top / index
    git.env["GIT_INDEX_FILE"] = str(path)
    try:
        git.run("read-tree", tree)
        if index_info:
            git.run("update-index", "--index-info", data="".join(f"{x}\n" for x in index_info).encode())
        return git.text("write-tree")
    finally:
        del git.env["GIT_INDEX_FILE"]
        path.unlink(missing_ok=True)


# --- push ---------------------------------------------------------------------------------------
def push(layout: Layout, git: Git, message: str) -> BranchResult:
    """Commit the shared files that changed since the last pull or push (module docstring); a
    branch that moved meanwhile is pulled again and the commit rebuilt on top, a few times."""
    res = BranchResult()
    for attempt in range(ATTEMPTS):
        if _push_once(layout, git, message, res):
            return res
        time.sleep(0.05 * (attempt + 1))
        again = pull(layout, git)
        res.pulled += again.pulled
        res.merged += again.merged
    res.diverged = f"{BRANCH} kept moving during {ATTEMPTS} tries: the next run commits what is left"
    return res


def _push_once(layout: Layout, git: Git, message: str, res: BranchResult) -> bool:
    """One try: True when the branch holds the local shared files (committed now or already)."""
    state = _load(layout)
    tip = git.rev(REF)
    if str(state.get("tip", "")) != tip:
        return False  # the branch moved since this clone last pulled: pull first, never delete its news
    seen: dict[str, list[Any]] = state.get("files", {})
    now: dict[str, list[Any]] = {}
    todo: list[tuple[str, Path]] = []
    for rel, p in _files(layout):
        st = p.stat()
        sig = [st.st_mtime_ns, st.st_size]
        old = seen.get(rel)
        if old is not None and old[:2] == sig:
            now[rel] = old
        else:
            todo.append((rel, p))
            now[rel] = [*sig, ""]
    if seen and not todo and now.keys() == seen.keys():
        return True  # nothing changed since the last push (a few stats)
    if todo:
        oids = git.text(
            "hash-object", "-w", "--stdin-paths", data="".join(f"{p}\n" for _, p in todo).encode()
        )
        for (rel, _), oid in zip(todo, oids.split(), strict=True):
            now[rel][2] = oid
    have = _tree(git, tip)
    want = {rel: row[2] for rel, row in now.items()}
    if have != want:
        info = [f"100644 {oid}\t{PREFIX}{rel}" for rel, oid in sorted(want.items()) if have.get(rel) != oid]
        info += [f"0 {ZERO}\t{PREFIX}{rel}" for rel in sorted(have.keys() - want.keys())]
        base_tree = git.text("rev-parse", f"{tip}^{{tree}}") if tip else git.text("mktree", data=b"")
        commit = git.commit(_rewrite(git, base_tree, info), [tip] if tip else [], _message(message, info))
        if not git.move(commit, tip):
            return False
        res.commit = tip = commit
    state["tip"] = tip
    state["files"] = now
    _save(layout, state)
    return True


# --- Squad's own files, for import ----------------------------------------------------------------
SNAPSHOT = "squad-state-tree"  # in the state folder: Squad's files of the branch, for scribed import


def _squad_file(path: str) -> bool:
    """What ``scribed import`` reads of Squad's: histories, decision logs and the inbox."""
    parts = path.split("/")
    if not path.endswith(".md") or path.startswith(PREFIX):
        return False
    if len(parts) == 3 and parts[0] == "agents" and parts[2].startswith("history"):  # noqa: PLR2004
        return True
    return (len(parts) == 1 and parts[0].startswith("decisions")) or parts[0] == "decisions"


def squad_agents(layout: Layout, git: Git) -> list[str]:
    """Agents with a ``history.md`` on the branch (read-only: ``plan`` runs before the lock)."""
    tip = git.rev(REF)
    if not tip:
        return []
    out = git.text("ls-tree", "-r", "--name-only", tip, "--", "agents/")
    parts = [p.split("/") for p in out.splitlines()]
    names = (normalize_name(p[1]) for p in parts if len(p) == 3 and p[2] == "history.md")  # noqa: PLR2004
    return sorted({n for n in names if n is not None})


def squad_snapshot(layout: Layout, git: Git) -> Path | None:
    """Squad's histories and decision logs as the branch holds them, copied into the state folder
    (refreshed when the branch moved), each file dated by the tip's commit: what ``scribed import``
    reads beside the working tree's ``.squad/``. None where the branch does not exist."""
    tip = git.rev(REF)
    if not tip:
        return None
    dest = layout.state / SNAPSHOT
    mark = dest / ".tip"
    if read_text(mark).strip() == tip:
        return dest
    rows = list(_blobs_of(git, tip, _squad_file))
    data = git.blobs([oid for _, oid in rows])
    when = int(git.text("log", "-1", "--format=%ct", tip) or "0")
    import shutil

    shutil.rmtree(dest, ignore_errors=True)
    for name, oid in rows:
        p = dest / name
        ensure_dir(p.parent)
        atomic_write(p, data[oid].decode("utf-8", "replace"), base=layout.state)
        os.utime(p, (when, when))
    ensure_dir(dest)
    atomic_write(mark, tip + "\n", base=layout.state)
    return dest
