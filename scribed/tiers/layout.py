"""Where everything lives under a squad root (kept apart from :mod:`scribed.tiers.cold`, which
re-exports it, so a spawn's ``scribed context`` finds its files without loading the cold writer).

Where Squad keeps its state on the ``squad-state`` branch (``stateBackend`` ``orphan`` or
``two-layer`` in ``.squad/config.json``), nothing may be written into the working tree: the tiers
then live in ``.git/scribed/memory/`` (this clone's copy, never tracked by git), and
:mod:`scribed.core.statebranch` commits their shared files to the branch. Every command finds the
same folder here, with a file read and a few stats (no git process: a spawn stays light).
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

STATE_BRANCH_BACKENDS = ("orphan", "two-layer")
BRANCH_MEMORY = ("scribed", "memory")  # under the clone's .git folder
BRANCH = "squad-state"
REF = f"refs/heads/{BRANCH}"
BRANCH_STATE = "squad-state.json"  # in the state folder: the tip last pulled or pushed, and its files


class Layout:
    """Where everything lives under a squad root. The folders are joined once, when the root is
    set: a compacted session asked for them about eight times, each a few ``Path`` joins. Equal,
    unhashable and shown as the dataclass it was (``Layout(root=...)``)."""

    __slots__ = (
        "_root",
        "archive",
        "backend",
        "cold",
        "hot",
        "ledger",
        "lock",
        "memory",
        "quarantine",
        "refused",
        "squad",
        "state",
        "wiki",
    )

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def root(self) -> Path:
        return self._root

    @root.setter
    def root(self, root: Path) -> None:
        self._root = root
        self.squad = root / ".squad"
        self.backend = state_backend(self.squad)
        self.refused = ""  # why a state-branch backend cannot be served here ("" where it can)
        self.memory = self.squad / "memory"
        if self.backend.startswith("?: "):
            self.refused = (
                f"{self.squad / 'config.json'}: cannot read it ({self.backend[3:]}): where Squad keeps its "
                "state (stateBackend) is unknown, so scribed stops: fix the file; nothing was written."
            )
        elif self.backend in STATE_BRANCH_BACKENDS:
            git = root / ".git"
            if git.is_dir() and not git.is_symlink():
                self.memory = git.joinpath(*BRANCH_MEMORY)
            else:
                self.refused = (
                    f"{self.squad / 'config.json'} sets stateBackend={self.backend!r}: Squad keeps its state "
                    f"on the 'squad-state' branch, and scribed keeps its tiers there too, from the clone's "
                    f"own .git folder; {root} is not the top of a clone with a .git folder (a linked "
                    "worktree, a subfolder, or no git), so it stops: nothing was written."
                )
        self.hot = self.memory / "hot"
        self.cold = self.memory / "cold"
        self.wiki = self.memory / "wiki"
        self.state = self.memory / ".scribed"
        self.archive = self.state / "archive"
        self.quarantine = self.state / "quarantine"
        self.ledger = self.state / "ledger.sqlite"
        self.lock = self.state / "lock"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self.root == other.root  # (a class with __eq__ and no __hash__ is unhashable)

    def __repr__(self) -> str:
        return f"Layout(root={self.root!r})"

    def cold_file(self, agent: str) -> Path:
        return self.cold / f"{agent}.md"

    def check_state(self) -> None:
        """Refuse state folders that are symlinks or lie outside the root (nothing is written through them)."""
        from scribed.fsutil import check_state_dirs  # gzip, tempfile: not for a spawn that only reads

        subdirs = [self.archive, self.quarantine, *(self.archive / d for d in ("hot", "cold", "promoted"))]
        check_state_dirs(self.root, self.state, subdirs)

    def hot_file(self, agent: str) -> Path:
        return self.hot / f"{agent}.md"

    @property
    def on_branch(self) -> bool:
        """Whether the tiers live on Squad's state branch (their files in ``.git/scribed/memory``)."""
        return self.backend in STATE_BRANCH_BACKENDS and not self.refused


def state_backend(squad: Path) -> str:
    """``stateBackend`` from ``.squad/config.json`` ("" when unset or no file; ``?: why`` when the
    file cannot be read: no command may guess where Squad keeps its state)."""
    try:
        raw = (squad / "config.json").read_bytes()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"?: {exc.strerror or exc}"
    import json

    try:
        data = json.loads(raw)
    except ValueError as exc:
        return f"?: not valid JSON ({exc})"
    value = data.get("stateBackend", "") if isinstance(data, dict) else ""
    return value if isinstance(value, str) else f"?: stateBackend is {value!r}, not a name"


def branch_refs(layout: Layout) -> dict[str, str]:
    """``squad-state`` refs (local and remote-tracking) → commit, read from the ref files."""
    git = layout.root / ".git"
    out: dict[str, str] = {}
    try:
        packed = (git / "packed-refs").read_text("ascii").splitlines()
    except OSError:
        packed = []
    for line in packed:
        sha, _, name = line.partition(" ")
        if name == REF or (name.startswith("refs/remotes/") and name.endswith(f"/{BRANCH}")):
            out[name] = sha
    names = [REF]
    with contextlib.suppress(OSError):
        names += [f"refs/remotes/{r.name}/{BRANCH}" for r in (git / "refs" / "remotes").iterdir()]
    for name in names:
        try:
            out[name] = (git / name).read_text("ascii").strip()
        except OSError:
            continue
    return out


def branch_moved(layout: Layout) -> bool:
    """Whether ``squad-state`` or a remote-tracking copy of it moved since this clone last pulled
    it (a ``squad sync``, a fetch): what a spawn checks with a few file reads before it syncs."""
    import json

    try:
        state = json.loads((layout.state / BRANCH_STATE).read_bytes())
    except (OSError, ValueError):
        state = {}
    seen = {REF: str(state.get("tip", "")), **state.get("remotes", {})}
    return any(seen.get(k, "") != v for k, v in branch_refs(layout).items())


def store_newer(cold: Path, agent: str) -> bool:
    """Whether ``cold/{agent}/`` changed after the agent's view was last written (a pull, a
    checkout): stats only, for a spawn's ``scribed context`` to decide whether to sync first."""
    folder = cold / agent
    try:
        seen = (cold / f"{agent}.md").stat().st_mtime_ns
    except OSError:
        seen = -1
    try:
        if folder.stat().st_mtime_ns > seen:
            return True
        with os.scandir(folder) as it:
            return any(d.stat(follow_symlinks=False).st_mtime_ns > seen for d in it)
    except OSError:
        return False
