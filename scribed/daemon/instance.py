"""One daemon a root: ``{state}/daemon.pid`` held under a lock for the daemon's life."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os

from scribed.fsutil import FILE_MODE, ensure_dir
from scribed.tiers.cold import Layout


class AlreadyRunningError(RuntimeError):
    """Another daemon serves this root; the message (one line) names its pid and the lock file."""


def claim_instance(layout: Layout) -> int:
    """Hold ``{state}/daemon.pid`` (non-blocking flock, our pid inside) for the daemon's life.

    Two daemons on one root would double the watchers and race each other's heartbeat; the kernel
    drops the lock with the process, so a crashed daemon leaves no stale claim. Returns the fd.
    """
    path = layout.state / "daemon.pid"
    ensure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = ""
        with contextlib.suppress(OSError, UnicodeDecodeError):
            holder = os.pread(fd, 32, 0).decode().strip()
        os.close(fd)
        if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise
        who = f" (pid {holder})" if holder.isdigit() else ""
        raise AlreadyRunningError(
            f"another scribed daemon{who} already serves {layout.root} (it holds {path}); "
            "`scribed status` shows it"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd
