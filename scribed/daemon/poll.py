"""A polling observer that stats only what can have changed.

Watchdog's ``PollingObserver`` stats every file on every poll (5,000 files every 5 s is most of a
CPU-second a minute). Here each poll stats the folders; only a folder whose mtime changed is
listed again (a file was created, removed or renamed in it), and only the files in it, the files
seen growing lately and a small rolling slice of the rest (an append to an old file does not touch
its folder's mtime) are stat-ed. Every tracked file is thus checked at least once per
``SWEEP_SECONDS``; a file that changed in the last ``GROWING_SECONDS`` on every poll.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from scribed import log as log_mod

SWEEP_SECONDS = 60.0
GROWING_SECONDS = 600.0
# A folder changed this recently may change again within its mtime's granularity: list it again.
UNSTABLE_SECONDS = 2.0

Stamp = tuple[int, int, int]  # (inode, size, mtime_ns)


def _stamp(st: os.stat_result) -> Stamp:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(slots=True)
class _State:
    dirs: dict[str, int] = field(default_factory=dict)  # folder -> mtime_ns when last listed (-1: list again)
    files: dict[str, Stamp] = field(default_factory=dict)
    growing: dict[str, float] = field(default_factory=dict)  # file -> monotonic time of its last change
    sweep: list[str] = field(default_factory=list)
    cursor: int = 0


class Poller:
    """One thread polling every scheduled folder; ``emit(path)`` for a file created or changed.

    ``wanted(path)`` says which files are worth tracking (the source rules); ``skip(folder)``
    which folders are never entered (scribed's own state). A scheduled folder that disappears
    is added to :attr:`vanished` and forgotten; the owner re-schedules once it is back.
    """

    def __init__(
        self,
        interval: float,
        emit: Callable[[str], object],
        wanted: Callable[[str], bool],
        skip: Callable[[str], bool] = lambda _p: False,
    ) -> None:
        self.interval = interval
        self._emit = emit
        self._wanted = wanted
        self._skip = skip
        self._roots: dict[str, bool] = {}
        self._known: set[str] | None = None
        self._s = _State()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.vanished: set[str] = set()  # scheduled folders seen gone
        self.polls = 0
        self.stats = 0  # stat calls, for tests and the benchmark
        self.log = log_mod.get()

    # --- the observer interface the daemon uses ----------------------------------------------
    def schedule(self, folder: str, *, recursive: bool) -> None:
        self._roots[folder] = self._roots.get(folder, False) or recursive

    def start(self, known: Iterable[str] | None = None) -> None:
        """Take the baseline (nothing is emitted for what is already there), then poll in a thread.

        ``known``: the source files discovery lists now, so the baseline need not ask ``wanted``
        about each file (one ``sources.match`` per file costs 10x the discovery walk).
        """
        self._known = set(known) if known is not None else None
        for root, recursive in self._roots.items():
            self._walk(root, recursive, emit=False)
        self._known = None
        self._refresh_sweep()
        self._thread = threading.Thread(target=self._run, name="scribed-poller", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def thread(self) -> threading.Thread | None:
        """The polling thread, for what ended it (:class:`scribed.daemon.deaths.Deaths`)."""
        return self._thread

    # --- polling ------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except Exception as exc:  # a bug in one poll must not end the watching
                self.log.error("poll_failed", reason=f"{type(exc).__name__}: {exc}")

    def _stat(self, path: str, *, file: bool = False) -> os.stat_result | None:
        """A folder's own stat, or a file's; a symlinked file or scheduled folder is stat-ed where
        it leads (the link's own stamp never changes as its target grows). A sub-folder that is a
        link is never tracked (see :meth:`_list`)."""
        self.stats += 1
        try:
            return os.stat(path, follow_symlinks=file or path in self._roots)
        except OSError:
            return None

    def poll(self) -> None:
        """One pass: changed folders, then growing files, then a slice of the rest."""
        self.polls += 1
        s = self._s
        seen: set[str] = set()
        for folder, mtime in list(s.dirs.items()):
            st = self._stat(folder)
            if st is None:
                self._forget(folder)
                continue
            if st.st_mtime_ns != mtime:
                seen.update(self._list(folder, self._recursive(folder), emit=True))
        now = time.monotonic()
        for path, since in list(s.growing.items()):
            if path in seen:
                continue
            seen.add(path)
            if not self._check(path) and now - since > GROWING_SECONDS:
                del s.growing[path]
        self._sweep_slice(seen)

    def _sweep_slice(self, seen: set[str]) -> None:
        s = self._s
        if s.cursor >= len(s.sweep):
            self._refresh_sweep()
        per_poll = math.ceil(len(s.sweep) * self.interval / SWEEP_SECONDS) if s.sweep else 0
        for path in s.sweep[s.cursor : s.cursor + per_poll]:
            if path not in seen and path in s.files:
                self._check(path)
        s.cursor += per_poll

    def _refresh_sweep(self) -> None:
        self._s.sweep, self._s.cursor = list(self._s.files), 0

    def _check(self, path: str) -> bool:
        """Stat one tracked file; emit and mark it growing if it changed. Returns whether it did."""
        st = self._stat(path, file=True)
        if st is None:
            self._s.files.pop(path, None)
            self._s.growing.pop(path, None)
            return False
        stamp = _stamp(st)
        if self._s.files.get(path) == stamp:
            return False
        self._s.files[path] = stamp
        self._s.growing[path] = time.monotonic()
        self._emit(path)
        return True

    # --- folders ------------------------------------------------------------------------------
    def _recursive(self, folder: str) -> bool:
        return any(
            folder == r or (rec and folder.startswith(r.rstrip(os.sep) + os.sep))
            for r, rec in self._roots.items()
        )

    def _forget(self, folder: str) -> None:
        """A folder is gone: drop it and everything under it (a scheduled root: say it vanished)."""
        prefix = folder.rstrip(os.sep) + os.sep
        s = self._s
        for d in [d for d in s.dirs if d == folder or d.startswith(prefix)]:
            del s.dirs[d]
        for f in [f for f in s.files if f.startswith(prefix)]:
            s.files.pop(f, None)
            s.growing.pop(f, None)
        if folder in self._roots:
            self.vanished.add(folder)

    def _walk(self, folder: str, recursive: bool, *, emit: bool) -> None:
        stack = [folder]
        while stack:
            d = stack.pop()
            stack.extend(self._list(d, recursive, emit=emit, subdirs=True))

    def _list(self, folder: str, recursive: bool, *, emit: bool, subdirs: bool = False) -> list[str]:
        """(Re)list one folder: note new and changed files; new sub-folders are walked (or returned).

        Returns the new sub-folders when ``subdirs`` (the walk descends itself), else the files checked.
        """
        s = self._s
        st = self._stat(folder)
        if st is None:
            self._forget(folder)
            return []
        unstable = time.time() - st.st_mtime < UNSTABLE_SECONDS
        s.dirs[folder] = -1 if unstable else st.st_mtime_ns
        checked: list[str] = []
        new_dirs: list[str] = []
        present: set[str] = set()
        with contextlib.suppress(OSError), os.scandir(folder) as it:
            for e in it:
                path = e.path
                if e.is_dir(follow_symlinks=False):
                    present.add(path)
                    if recursive and path not in s.dirs and not self._skip(path):
                        new_dirs.append(path)
                elif path in s.files or (
                    path in self._known if self._known is not None else self._wanted(path)
                ):
                    present.add(path)
                    checked.append(path)
                    self._note(path, emit=emit)
        self._drop_missing(folder, present)
        if subdirs:
            return new_dirs
        for d in new_dirs:  # a folder created since the last poll: everything in it is new
            self._walk(d, recursive, emit=True)
        return checked

    def _note(self, path: str, *, emit: bool) -> None:
        if emit:
            self._check(path)
            return
        st = self._stat(path, file=True)  # the baseline: not known to grow until seen changing
        if st is not None:
            self._s.files[path] = _stamp(st)

    def _drop_missing(self, folder: str, present: set[str]) -> None:
        prefix = folder.rstrip(os.sep) + os.sep
        s = self._s
        for f in [f for f in s.files if f.startswith(prefix) and os.sep not in f[len(prefix) :]]:
            if f not in present:
                s.files.pop(f, None)
                s.growing.pop(f, None)
        for d in [d for d in s.dirs if d.startswith(prefix) and os.sep not in d[len(prefix) :]]:
            if d not in present:
                self._forget(d)
