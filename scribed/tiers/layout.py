"""Where everything lives under a squad root (kept apart from :mod:`scribed.tiers.cold`, which
re-exports it, so a spawn's ``scribed context`` finds its files without loading the cold writer)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


class Layout:
    """Where everything lives under a squad root. The folders are joined once, when the root is
    set: a compacted session asked for them about eight times, each a few ``Path`` joins. Equal,
    unhashable and shown as the dataclass it was (``Layout(root=...)``)."""

    __slots__ = (
        "_root",
        "archive",
        "cold",
        "hot",
        "ledger",
        "lock",
        "memory",
        "quarantine",
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
        self.memory = self.squad / "memory"
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
