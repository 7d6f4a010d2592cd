"""Freed memory given back to the system after a large session (issue 32).

CPython frees a compacted session's strings and objects, but the C allocator keeps the pages: the
next large phase (the next session, the transcript copy) then adds to them instead of reusing
them, and the daemon's resident size stays at its largest file's. On glibc, ``malloc_trim(0)``
returns every whole free page, and a fixed mmap threshold (:func:`settle`) gives each big block
(a long turn's text, a read chunk) pages of its own, returned when it is freed; elsewhere both
are no-ops.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

# A phase that handled at least this many bytes is followed by a trim (a trim walks the heap: a
# few milliseconds, worth it after a large session, not after each small one).
TRIM_AFTER_BYTES = 4 << 20

# glibc's mallopt parameter and the size from which a block is mapped on its own (glibc's default
# start; fixed, the threshold no longer climbs to the largest block freed so far, up to 32 MB,
# which kept every later text under that size in the heap: a 64 MB Squad REPL session's freed
# texts stayed resident while the next phase grew, 212 MB peak against 175 fixed)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024

_libc: Any = None
_looked = False


def _glibc() -> Any:
    """The C library when it is glibc (it has ``malloc_trim``), else None (macOS, Windows, musl)."""
    global _libc, _looked
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            import ctypes  # here: a spawn's `scribed context` never loads it

            try:
                libc = ctypes.CDLL("libc.so.6")
                _libc = libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
            except OSError:
                _libc = None
    return _libc


def settle(environ: Mapping[str, str] = os.environ) -> bool:
    """Fix the allocator's mmap threshold before a process handles big files; whether it did.
    A block of a big text costs one mmap more when allocated, measured as nothing on a 20 MB
    backlog (bench/throughput.py's files, 5.4–7.3 s either way). A threshold the user set
    (``MALLOC_MMAP_THRESHOLD_``, or ``mmap_threshold`` in ``GLIBC_TUNABLES``) is left as it is."""
    if "MALLOC_MMAP_THRESHOLD_" in environ or "mmap_threshold" in environ.get("GLIBC_TUNABLES", ""):
        return False
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def trim(handled: int = TRIM_AFTER_BYTES) -> bool:
    """Give free heap pages back after a phase that handled ``handled`` bytes; whether it did."""
    if handled < TRIM_AFTER_BYTES:
        return False
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
