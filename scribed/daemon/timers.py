"""Per-file deadlines (quiet time, live refresh, retry) on one heap, fired by one thread."""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable

from scribed import log as log_mod

TIMER_MAX_WAIT = 5.0  # wake now and then even when idle: a wall clock that jumped (suspend) is noticed
_COMPACT_SLACK = 64


class Timers:
    """Re-arming a (path, slot) replaces its deadline; stale heap entries are skipped and compacted.

    The clock is injectable (seconds since the epoch) and :meth:`wakeup` lets tests move time.
    """

    def __init__(self, clock: Callable[[], float], fire: Callable[[str], None]) -> None:
        self._clock = clock
        self._fire = fire
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, str, str]] = []
        self._live: dict[tuple[str, str], tuple[float, int]] = {}
        self._seq = itertools.count()
        self._stopped = False
        self.thread: threading.Thread | None = None
        self.log = log_mod.get()

    def arm(self, path: str, deadline: float, slot: str = "quiet", *, later_only: bool = False) -> None:
        with self._cond:
            key = (path, slot)
            cur = self._live.get(key)
            if later_only and cur is not None and cur[0] >= deadline:
                return
            seq = next(self._seq)
            self._live[key] = (deadline, seq)
            heapq.heappush(self._heap, (deadline, seq, path, slot))
            if len(self._heap) > 2 * len(self._live) + _COMPACT_SLACK:
                self._heap = [(d, s, p, sl) for (p, sl), (d, s) in self._live.items()]
                heapq.heapify(self._heap)
            self._cond.notify()

    def deadline(self, path: str, slot: str = "quiet") -> float | None:
        with self._cond:
            cur = self._live.get((path, slot))
        return None if cur is None else cur[0]

    def __len__(self) -> int:
        with self._cond:
            return len(self._live)

    def heap_size(self) -> int:
        with self._cond:
            return len(self._heap)

    def pop_due(self, now: float | None = None) -> list[str]:
        """Remove and return the paths whose deadline has passed (each once)."""
        with self._cond:
            return self._pop_due_locked(self._clock() if now is None else now)

    def _pop_due_locked(self, now: float) -> list[str]:
        due: list[str] = []
        seen: set[str] = set()
        while self._heap and self._heap[0][0] <= now:
            d, seq, path, slot = heapq.heappop(self._heap)
            if self._live.get((path, slot)) != (d, seq):
                continue  # re-armed since
            del self._live[(path, slot)]
            if path not in seen:
                seen.add(path)
                due.append(path)
        return due

    def wakeup(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def start(self) -> None:
        self._stopped = False
        self.thread = threading.Thread(target=self._run, name="scribed-timers", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout)

    def _next_due(self) -> list[str] | None:
        """Due paths, after waiting for the earliest deadline if none is due yet; None once stopped."""
        with self._cond:
            while not self._stopped:
                now = self._clock()
                due = self._pop_due_locked(now)
                if due:
                    return due
                wait = (
                    min(TIMER_MAX_WAIT, max(0.01, self._heap[0][0] - now)) if self._heap else TIMER_MAX_WAIT
                )
                self._cond.wait(wait)
        return None

    def _run(self) -> None:
        while (due := self._next_due()) is not None:
            for path in due:
                try:
                    self._fire(path)
                except Exception as exc:  # the one timer thread must outlive any one file
                    self.log.error("timer_failed", file=path, reason=f"{type(exc).__name__}: {exc}")
