"""The root lock: one writer per squad root (daemon, run-once, CLI writes and other containers take
turns). Only the core takes it; drivers call :class:`scribed.core.scribe.Scribe` methods that do."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from scribed.fsutil import FILE_MODE, ensure_dir


class RootBusyError(RuntimeError):
    """Another scribed holds the lock on this root."""


@contextlib.contextmanager
def root_lock(lock_path: Path, timeout: float = -1) -> Iterator[None]:
    """Exclusive lock per squad root. ``timeout`` < 0 waits forever; 0 fails at once with
    :class:`RootBusyError`."""
    ensure_dir(lock_path.parent)
    lock = FileLock(str(lock_path), mode=FILE_MODE)
    try:
        lock.acquire(timeout=timeout)
    except Timeout as exc:
        raise RootBusyError(f"another scribed is working on this root (lock {lock_path})") from exc
    try:
        yield
    finally:
        lock.release()
