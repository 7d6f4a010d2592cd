"""Where everything lives under a squad root (kept apart from :mod:`scribed.tiers.cold`, which
re-exports it, so a spawn's ``scribed context`` finds its files without loading the cold writer)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(slots=True)
class Layout:
    """Where everything lives under a squad root."""

    root: Path

    @property
    def squad(self) -> Path:
        return self.root / ".squad"

    @property
    def memory(self) -> Path:
        return self.squad / "memory"

    @property
    def hot(self) -> Path:
        return self.memory / "hot"

    @property
    def cold(self) -> Path:
        return self.memory / "cold"

    @property
    def wiki(self) -> Path:
        return self.memory / "wiki"

    @property
    def state(self) -> Path:
        return self.memory / ".scribed"

    @property
    def archive(self) -> Path:
        return self.state / "archive"

    @property
    def quarantine(self) -> Path:
        return self.state / "quarantine"

    @property
    def ledger(self) -> Path:
        return self.state / "ledger.sqlite"

    @property
    def lock(self) -> Path:
        return self.state / "lock"

    def cold_file(self, agent: str) -> Path:
        return self.cold / f"{agent}.md"

    def check_state(self) -> None:
        """Refuse state folders that are symlinks or lie outside the root (nothing is written through them)."""
        from scribed.fsutil import check_state_dirs  # gzip, tempfile: not for a spawn that only reads

        subdirs = [self.archive, self.quarantine, *(self.archive / d for d in ("hot", "cold", "promoted"))]
        check_state_dirs(self.root, self.state, subdirs)

    def hot_file(self, agent: str) -> Path:
        return self.hot / f"{agent}.md"
