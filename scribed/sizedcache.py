"""A least-recently-used cache bounded by the total size of what it holds, not by a count: the
items (a block of redacted turns) range from a few characters to megabytes. Thread-safe. A leaf
module: it imports nothing of scribed (the redaction door loads it in a spawn)."""

from __future__ import annotations

import _thread
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class SizedCache(Generic[V]):
    """Up to ``limit`` units of ``size(value)``; an item over ``limit // 8`` is not kept (it would
    push out everything else to be used once)."""

    def __init__(self, limit: int, size: Callable[[V], int]) -> None:
        self.limit, self.size = limit, size
        self._items: OrderedDict[str, tuple[V, int]] = OrderedDict()
        self._held = 0
        self._lock = _thread.allocate_lock()  # = threading.Lock(), without importing threading

    def get(self, key: str) -> V | None:
        with self._lock:
            got = self._items.get(key)
            if got is None:
                return None
            self._items.move_to_end(key)
            return got[0]

    def put(self, key: str, value: V) -> None:
        n = self.size(value)
        if n > self.limit // 8:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = (value, n)
            self._held += n
            while self._held > self.limit:
                self._held -= self._items.popitem(last=False)[1][1]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._held = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def held(self) -> int:
        """The total size of the items held."""
        return self._held
