"""What ended a daemon thread: ``threading.excepthook`` records each uncaught exception by thread.

Without it a dead worker or watch is only seen as gone (``thread_died`` said nothing more, and
the default hook's traceback went to stderr, outside the JSON log). Now the failure is logged at
once (``thread_failed``, the traceback at debug level) and ``thread_died`` repeats its cause.
"""

from __future__ import annotations

import contextlib
import threading
import traceback
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scribed.log import Logger

Dead = list[tuple[str, "threading.Thread | None"]]  # (label, the thread, when known)
NO_EXCEPTION = "ended without an exception"


class Deaths:
    """Installs itself as ``threading.excepthook`` for the daemon's life (:meth:`install`)."""

    def __init__(self, log: Logger) -> None:
        self.log = log
        self._lock = threading.Lock()
        self._causes: dict[threading.Thread, str] = {}  # any death ends the daemon: stays tiny
        self._prev: object = None

    def install(self) -> None:
        self._prev = threading.excepthook
        threading.excepthook = self.hook

    def uninstall(self) -> None:
        if threading.excepthook == self.hook and callable(self._prev):
            threading.excepthook = self._prev

    def hook(self, args: threading.ExceptHookArgs) -> None:
        """Record and log the exception; never raises (it runs in the dying thread)."""
        if args.exc_type is SystemExit:  # a thread asked to end, as the default hook treats it
            return
        cause = f"{args.exc_type.__name__}: {args.exc_value}"
        name = args.thread.name if args.thread is not None else "?"
        if args.thread is not None:
            with self._lock:
                self._causes[args.thread] = cause
        with contextlib.suppress(Exception):  # a broken log must not hide the death: thread_died says it
            self.log.error("thread_failed", thread=name, reason=cause)
            tb = "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
            self.log.debug("thread_traceback", thread=name, traceback=tb)

    def cause(self, thread: threading.Thread | None) -> str:
        """``Type: message`` of what ended ``thread``, or that nothing raised (it returned)."""
        with self._lock:
            return self._causes.get(thread, NO_EXCEPTION) if thread is not None else NO_EXCEPTION

    def failed(self, thread: threading.Thread | None) -> bool:
        with self._lock:
            return thread in self._causes

    def describe(self, dead: Dead) -> str:
        """One line for ``thread_died``: each dead thread with its cause."""
        return "; ".join(f"{label}: {self.cause(thread)}" for label, thread in dead)
