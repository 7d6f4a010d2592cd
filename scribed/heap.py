"""Freed memory given back to the system after a large session (issue 32).

CPython frees a compacted session's strings and objects, but the C allocator keeps the pages: the
next large phase (the next session, the transcript copy) then adds to them instead of reusing
them, and the daemon's resident size stays at its largest file's. On glibc, ``malloc_trim(0)``
returns every whole free page; elsewhere this is a no-op.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

# A phase that handled at least this many bytes is followed by a trim (a trim walks the heap: a
# few milliseconds, worth it after a large session, not after each small one).
TRIM_AFTER_BYTES = 4 << 20

_trim: Callable[[int], int] | None = None
_looked = False


def trim(handled: int = TRIM_AFTER_BYTES) -> bool:
    """Give free heap pages back after a phase that handled ``handled`` bytes; whether it did."""
    global _trim, _looked
    if handled < TRIM_AFTER_BYTES:
        return False
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            import ctypes  # here: a spawn's `scribed context` never loads it

            try:
                _trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):  # musl (Alpine) has no malloc_trim
                _trim = None
    if _trim is None:
        return False
    _trim(0)
    return True
