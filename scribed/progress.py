"""How far a long piece of work is (a first catch-up over years of transcripts): files and bytes
done and left, and when it should end at the rate so far (issue 32, part 4).

:class:`Tracker` counts; the daemon logs it every :data:`EVERY_SECONDS` while it catches up and
puts it in the heartbeat (``scribed status`` shows it); the TTY bars of ``run-once``, ``import``
and ``promote`` (:func:`scribed.log.progress`) count bytes the same way. The clock is injectable.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

EVERY_SECONDS = 10.0  # a catch-up logs its progress at least this often


@dataclass
class Tracker:
    """Files and bytes of a batch of work; thread-safe (the daemon's workers report to it)."""

    files: int
    bytes_total: int
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    bytes_done: int = 0
    started: float = field(default=0.0)
    logged: float = field(default=0.0)  # when :meth:`due` last said yes
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.started = self.logged = self.clock()

    def add(self, nbytes: int) -> None:
        """One file done, of ``nbytes``."""
        with self._lock:
            self.done += 1
            self.bytes_done += nbytes

    @property
    def finished(self) -> bool:
        return self.done >= self.files

    def eta_seconds(self) -> float | None:
        """Seconds left at the rate so far (bytes per second; files when there are no bytes); None
        before anything is done."""
        with self._lock:
            elapsed = self.clock() - self.started
            if self.bytes_total and self.bytes_done:
                return max(0.0, elapsed / self.bytes_done * (self.bytes_total - self.bytes_done))
            if self.done:
                return max(0.0, elapsed / self.done * (self.files - self.done))
            return None

    def due(self, every: float = EVERY_SECONDS) -> bool:
        """Whether ``every`` seconds passed since the last time this said so (then it counts from now)."""
        now = self.clock()
        with self._lock:
            if now - self.logged < every:
                return False
            self.logged = now
            return True

    def public(self) -> dict[str, Any]:
        """The figures a log line, the heartbeat and ``status`` show."""
        eta = self.eta_seconds()
        with self._lock:
            return {
                "done": self.done,
                "left": max(0, self.files - self.done),
                "files": self.files,
                "bytes_done": self.bytes_done,
                "bytes_left": max(0, self.bytes_total - self.bytes_done),
                "elapsed_s": round(self.clock() - self.started, 1),
                "eta_s": None if eta is None else round(eta, 1),
            }


def describe(p: dict[str, Any]) -> str:
    """One line for ``status``: ``12 of 200 files, 3.1 of 40.2 MB, about 2 min left``."""
    mb = (p["bytes_done"]) / 1e6
    total = (p["bytes_done"] + p["bytes_left"]) / 1e6
    eta = p.get("eta_s")
    left = "" if eta is None else f", about {_duration(eta)} left"
    return f"{p['done']} of {p['files']} files, {mb:.1f} of {total:.1f} MB{left}"


def _duration(seconds: float) -> str:
    if seconds < 90:  # noqa: PLR2004
        return f"{seconds:.0f} s"
    if seconds < 5400:  # noqa: PLR2004
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
