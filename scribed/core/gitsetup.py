"""``scribed git setup``: make a clone's team memory merge cleanly (one command, idempotent).

It writes the repository's ``.gitattributes`` lines (committed, so every clone and a hosted merge
see them), this clone's ``merge.scribed.driver`` (git config is per clone: each developer runs
setup once), ``.squad/memory/.gitignore`` (hot files and cold views are this machine's), and takes
hot files and cold views out of git's index where an earlier commit added them (the files stay).
A cold view leaves the index only with its replacement staged beside it: the files of
``cold/{agent}/`` that hold its entries (a Squad team commits ``cold/{agent}.md``; a commit of the
removal alone would leave the remote without the memory, and a teammate's pull would delete it).
Without the driver (a hosted pull-request merge, a clone never set up) git falls back to its text
merge; the next scribed run repairs what that leaves (see :mod:`scribed.core.team_sync`).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from scribed import hint
from scribed.fsutil import atomic_write, read_text
from scribed.tiers.layout import Layout

MARK = "# scribed: team memory merges entry by entry (`scribed git setup`)"


class GitSetupError(Exception):
    """The root is not in a git work tree, or git is missing: nothing was written."""


COMMIT_MESSAGE = "scribed: team memory merges"


@dataclass(slots=True)
class GitSetup:
    changes: list[str] = field(default_factory=list)  # what was written, one line each
    commit: str = ""  # the command that commits what setup changed in the clone ("" when nothing)
    top: str = ""  # the clone's top folder, where ``commit`` runs


def _git(top: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True, check=False)


def work_tree(root: Path) -> Path:
    try:
        got = _git(root, "rev-parse", "--show-toplevel")
    except OSError as exc:
        raise GitSetupError(f"git: cannot run it ({exc.strerror or exc})") from exc
    if got.returncode != 0:
        raise GitSetupError(f"not in a git work tree: {root}")
    return Path(got.stdout.strip())


_GLOB_CHARS = "\\*?["  # special in a gitattributes pattern: a folder's name is matched as it is


def _pattern(memory: str, rest: str) -> str:
    """``memory/rest`` as a gitattributes pattern: the folder's own glob characters escaped, and the
    whole in C-style double quotes when it holds a blank or a quote. Unquoted, a root in "My Repo"
    split the line at the blank: git warned that "Repo/.squad/…" is not a valid attribute name on
    every command, and the merge driver never applied."""
    path = "".join(f"\\{c}" if c in _GLOB_CHARS else c for c in memory) + "/" + rest
    if path.startswith(("#", "!")):  # else a comment, or a negation (which gitattributes ignores)
        path = "\\" + path
    if not any(c.isspace() or c == '"' for c in path):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def attribute_lines(memory: str) -> list[str]:
    return [
        MARK,
        f"{_pattern(memory, 'cold/*/*.md')} merge=scribed",
        f"{_pattern(memory, 'cold/*/retired.txt')} merge=union",
        f"{_pattern(memory, 'wiki/**/*.md')} merge=scribed",
    ]


def _unquoted_lines(memory: str) -> set[str]:
    """The lines an older setup wrote for a folder that needs quoting (broken: see :func:`_pattern`)."""
    old = {
        f"{memory}/cold/*/*.md merge=scribed",
        f"{memory}/cold/*/retired.txt merge=union",
        f"{memory}/wiki/**/*.md merge=scribed",
    }
    return old - set(attribute_lines(memory))


def driver_command() -> str:
    """The driver as git runs it: this Python and this scribed, whatever PATH the merge has."""
    return f"{shlex.quote(sys.executable)} -m scribed git merge-file %O %A %B %P"


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


def setup(layout: Layout) -> GitSetup:
    """Write what the module docstring lists; a second run changes nothing."""
    out = GitSetup()
    top = work_tree(layout.root)
    if layout.on_branch:  # the tiers are not in the working tree: scribed merges squad-state itself
        return out
    memory = layout.memory.resolve().relative_to(top.resolve()).as_posix()
    attrs = top / ".gitattributes"
    have = read_text(attrs).splitlines(keepends=True)
    broken = _unquoted_lines(memory)
    kept = [line for line in have if line.rstrip("\r\n") not in broken]
    lines = {line.rstrip("\r\n") for line in kept}
    missing = [line for line in attribute_lines(memory) if line not in lines]
    if missing or len(kept) != len(have):
        base = "".join(kept)
        text = (base.rstrip("\n") + "\n" if base.strip() else "") + "".join(f"{m}\n" for m in missing)
        atomic_write(attrs, text, base=top)
        if len(kept) != len(have):
            out.changes.append(
                f"{attrs}: removed {len(have) - len(kept)} line(s) an older setup wrote unquoted"
            )
        if missing:
            out.changes.append(f"{attrs}: added {len(missing)} line(s)")
    for key, want in (
        ("merge.scribed.name", "scribed tier files"),
        ("merge.scribed.driver", driver_command()),
    ):
        if _git(top, "config", "--local", "--get", key).stdout.strip() != want:
            if _git(top, "config", "--local", key, want).returncode != 0:
                raise GitSetupError(f"git config {key}: could not be set in {top}")
            out.changes.append(f"git config {key} = {want}")
    if ensure_gitignore(layout):
        out.changes.append(
            f"{layout.memory / '.gitignore'}: .scribed/, inbox/, hot/ and cold/*.md are this machine's"
        )
    tracked = machine_files(top, memory)
    if tracked:
        kept = _stage_entries(top, memory, tracked, out)
        gone = [p for p in tracked if p not in kept]
        if gone and _git(top, "rm", "--cached", "-q", "--", *(f":(literal){p}" for p in gone)).returncode:
            raise GitSetupError(f"git rm --cached: could not take this machine's files out of {top}'s index")
        out.changes += [f"git rm --cached {shlex.quote(p)} (kept on disk: this machine's file)" for p in gone]
        out.changes += [
            f"kept in git: {p}: an entry of it is in no file of {p.removesuffix('.md')}/ "
            f"(run `{hint.cmd('run-once')}`, then setup again)"
            for p in kept
        ]
    if out.changes and any(not c.startswith("git config ") for c in out.changes):
        ignore = shlex.quote(f"{memory}/.gitignore")
        out.commit = f'git add .gitattributes {ignore} && git commit -m "{COMMIT_MESSAGE}"'
        out.top = str(top)
    return out


def _stage_entries(top: Path, memory: str, tracked: list[str], out: GitSetup) -> list[str]:
    """Stage the entry files that replace each tracked cold view about to leave the index, and
    return the views that must stay (an entry of the committed view is in no staged file)."""
    from scribed.compress.entry import split_entries
    from scribed.tiers import cold_store

    kept = []
    for view in tracked:
        rel = view.removeprefix(f"{memory}/")
        if not rel.startswith("cold/"):
            continue  # a hot file: this machine's, re-seeded from cold on every clone
        folder = view.removesuffix(".md") + "/"
        new = _lines(
            _git(top, "ls-files", "-z", "--others", "--exclude-standard", "--", f":(literal){folder}")
        )
        if new:
            add = [
                "git",
                "-C",
                str(top),
                "--literal-pathspecs",
                "add",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ]
            if subprocess.run(
                add, input="\0".join(new), capture_output=True, text=True, check=False
            ).returncode:
                raise GitSetupError(f"git add {folder}: could not stage the entries of {view} in {top}")
            out.changes.append(
                f"git add {shlex.quote(folder)} ({len(new)} new file(s): the entries of {view}, to be "
                "committed in its place)"
            )
        have = {
            cold_store.key_of_name(PurePosixPath(p).name)
            for p in _lines(_git(top, "ls-files", "-z", "--", f":(literal){folder}"))
        }
        have |= set(cold_store.read_retired(read_text(top / folder / cold_store.RETIRED)))
        committed = _git(top, "show", f":{view}").stdout  # the text the commit would take away
        keys = {cold_store.key(cold_store.canonical(e)) for e in split_entries(committed)[1]}
        if not keys <= have:
            kept.append(view)
    return kept


def _lines(got: subprocess.CompletedProcess[str]) -> list[str]:
    if got.returncode:
        raise GitSetupError(f"git: {got.stderr.strip() or 'failed'}")
    return [p for p in got.stdout.split("\0") if p]


def machine_files(top: Path, memory: str) -> list[str]:
    """This machine's files that git tracks: hot files and the cold views ``cold/{agent}.md``, never
    the shared entries ``cold/{agent}/*.md``. In a plain git pathspec ``*`` matches ``/`` too
    (``cold/*.md`` names every entry file), so the pathspecs are ``:(glob)`` ones, and each path
    git lists is checked again by its depth: one wrong pattern must not delete the team's memory."""
    got = _git(
        top,
        "-c",
        "core.quotePath=false",
        "ls-files",
        "-z",
        "--",
        f":(glob){memory}/hot/**",
        f":(glob){memory}/cold/*.md",
    )
    if got.returncode != 0:
        raise GitSetupError(f"git ls-files: {got.stderr.strip() or 'failed'} in {top}")
    out = []
    for path in got.stdout.split("\0"):
        rel = path.removeprefix(f"{memory}/")
        if rel == path:
            continue
        folder, _, name = rel.partition("/")
        if folder == "hot" or (folder == "cold" and "/" not in name and name.endswith(".md")):
            out.append(path)
    return out
