"""The bounded work queue between the timers and the worker threads."""

from __future__ import annotations

import queue
import threading


class WorkQueue:
    """A bounded queue of paths; a path already waiting is not queued twice (floods stay small)."""

    def __init__(self, maxsize: int) -> None:
        # Unbounded underneath so wake() can always add its sentinels; offer() enforces the bound.
        self._q: queue.Queue[str] = queue.Queue()
        self._max = maxsize
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self.overflows = 0

    def offer(self, path: str) -> str:
        """Queue ``path`` without blocking: "queued", "pending" (already waiting) or "full"."""
        with self._lock:
            if path in self._pending:
                return "pending"
            if self._q.qsize() >= self._max:
                self.overflows += 1
                return "full"
            self._q.put_nowait(path)
            self._pending.add(path)
            return "queued"

    def take(self, timeout: float) -> str | None:
        try:
            path = self._q.get(timeout=timeout)
        except queue.Empty:
            return None
        if not path:
            return None  # a wake() sentinel
        with self._lock:
            self._pending.discard(path)
        return path

    def wake(self, n: int) -> None:
        """Unblock ``n`` workers waiting in take() (shutdown), so they need not poll."""
        for _ in range(n):
            self._q.put_nowait("")

    @property
    def depth(self) -> int:
        """Paths waiting for a worker."""
        with self._lock:
            return len(self._pending)
