"""systemd's notify protocol (``Type=notify``, ``WatchdogSec=``) without a library.

The protocol is one datagram of ``KEY=VALUE`` lines to the AF_UNIX socket named by
``$NOTIFY_SOCKET``; a leading ``@`` names an abstract socket. Outside systemd the variable is
unset and every call is a cheap no-op, so the daemon can call it unconditionally.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping


def _address(environ: Mapping[str, str]) -> str | None:
    addr = environ.get("NOTIFY_SOCKET", "")
    if addr.startswith("@"):
        return "\0" + addr[1:]  # abstract namespace
    if addr.startswith("/"):
        return addr
    return None  # unset, or a transport we do not speak (vsock:)


def notify(msg: str, environ: Mapping[str, str] | None = None) -> bool:
    """Send ``msg`` (e.g. ``READY=1``) to systemd; False when there is no socket or sending failed.

    Never raises: a supervisor that went away must not take the daemon down with it.
    """
    addr = _address(os.environ if environ is None else environ)
    if addr is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.settimeout(1.0)  # a stuck reader must not stall the main loop (datagram sends can block)
            sock.connect(addr)
            sock.sendall(msg.encode("utf-8", "replace"))
    except OSError:
        return False
    return True


def watchdog_interval(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds between ``WATCHDOG=1`` pings (half of ``$WATCHDOG_USEC``), or None when not asked for.

    ``$WATCHDOG_PID``, when set, must be our pid: a child must not ping on its parent's behalf.
    """
    env = os.environ if environ is None else environ
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    pid = env.get("WATCHDOG_PID", "")
    if usec <= 0 or (pid and pid != str(os.getpid())):
        return None
    return usec / 2 / 1_000_000
