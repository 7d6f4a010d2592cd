"""Watching the source folders: inotify (watchdog's native observer) or the stat-light poller.

Events only name a path; the daemon's ``on_path`` decides whether it is a source file and arms its
timer. ``auto`` takes inotify where it can start and falls back to polling (watch limits).

A watched folder deleted, moved away or replaced (a tool resetting its folder, a re-clone, a
``git clean``) is no death: its watch is dropped with a warning naming it and the folder is then
handled as one not there yet: watched again once it exists, a catch-up walk taking what was
written meanwhile.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from scribed import log as log_mod
from scribed import sources
from scribed.config import Config
from scribed.daemon.deaths import Dead
from scribed.daemon.poll import Poller
from scribed.fsutil import ensure_dir
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver

WATCH_EVENTS = frozenset({"created", "modified", "closed", "moved"})
_INOTIFY_LIMITS = (errno.ENOSPC, errno.EMFILE, errno.ENFILE)
DELETED = "deleted"
REPLACED = "replaced by another folder (moved away or deleted, then made again)"


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class Observer(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def join(self, timeout: float | None = None) -> None: ...
    def is_alive(self) -> bool: ...


class EventHandler(FileSystemEventHandler):
    """Turns watchdog events into ``on_path`` calls (a deleted folder into ``on_gone``). Never does
    work, never raises."""

    def __init__(
        self, on_path: Callable[[str], object], on_gone: Callable[[str], object] | None = None
    ) -> None:
        self._on_path = on_path
        self._on_gone = on_gone
        self.log = log_mod.get()

    def on_any_event(self, event: FileSystemEvent) -> None:
        try:
            if event.is_directory:
                if event.event_type == "deleted" and self._on_gone is not None:
                    self._on_gone(os.fsdecode(event.src_path))
                return
            if event.event_type not in WATCH_EVENTS:
                return
            raw = event.dest_path if event.event_type == "moved" else event.src_path
            self._on_path(os.fsdecode(raw))
        except Exception as exc:  # a dead dispatcher thread would silently stop all watching
            with contextlib.suppress(Exception):
                self.log.error("event_failed", reason=f"{type(exc).__name__}: {exc}")


class Watcher:
    """Owns the one observer of the daemon: start, stop, restart and its health."""

    def __init__(
        self,
        cfg: Config,
        layout: Layout,
        on_path: Callable[[str], object],
        wanted: Callable[[str], bool],
        known: Callable[[], Iterable[str]] | None = None,
        *,
        on_drop: Callable[[], object] | None = None,
    ) -> None:
        self.cfg = cfg
        self.layout = layout
        self._on_path = on_path
        self._wanted = wanted
        self._known = known
        self.observer: Observer | None = None
        self.mode = ""
        self.missing: set[Path] = set()
        self.restart_needed = False
        self._on_drop = on_drop  # wakes the owner's loop to re-watch at once
        self._dropped: set[str] = set()  # folders whose watch was dropped, warned once until back
        self._ids: dict[str, tuple[int, int]] = {}  # inotify's real folder -> (st_dev, st_ino) at start
        self._watching: set[str] = set()  # the folders the observer was given
        self.log = log_mod.get()
        # inotify watches real folders: where a watched path is not (a symlinked source folder, the
        # folder of a file a source links to), its events are said again under the source's path;
        # so are a poller's, and both watchers' events in a source folder another one holds
        self._dirs: list[tuple[str, str]] = []  # (real folder, a source folder leading to it)
        self._files: dict[str, list[str]] = {}  # real file -> the source links leading to it
        self._real: list[tuple[str, bool]] = []  # the real folders watched (recursive or not)

    def native_observer(self) -> BaseObserver:
        from watchdog.observers import Observer as NativeObserver

        return NativeObserver()

    def polling_observer(self) -> Poller:
        state = str(self.layout.state)
        return Poller(
            self.cfg.watch.poll_interval,
            self._emit_polled,
            lambda p: any(self._wanted(q) for q in self._names(p)),
            skip=lambda p: p == state,
        )

    def folders(self) -> list[tuple[Path, bool]]:
        """(folder, recursive) for every existing source folder and the hot folder. A source folder
        another one holds (the same folder, one inside it, or either reached through a symlink) is
        not watched twice: the outer one's watch gives its events, said under its path too
        (:meth:`_names`); of two paths to one folder the first source's is watched."""
        self.missing = set()
        found: list[tuple[str, str]] = []  # (real folder, source folder)
        for src in self.cfg.sources:
            folder = src.expanded
            if os.path.isdir(folder):
                found.append((os.path.realpath(folder), str(folder)))
            else:  # one a folder above hides (EACCES) is not missing: discovery says it cannot read it
                self.missing.add(folder)
                if sources.missing(folder):
                    self.log.warning(
                        "source_missing",
                        source=str(folder),
                        kind=src.kind,
                        reason="not watched until it exists",
                    )
        self._dirs = list(dict.fromkeys(found))
        outer = sorted(range(len(self._dirs)), key=lambda k: len(self._dirs[k][0]))  # stable: config order
        kept: list[int] = []
        for k in outer:
            if not any(_under(self._dirs[k][0], self._dirs[o][0]) for o in kept):
                kept.append(k)
        out = [(Path(self._dirs[k][1]), True) for k in sorted(kept)]
        ensure_dir(self.layout.hot)
        out.append((self.layout.hot, False))
        return out

    def _names(self, path: str) -> list[str]:
        """``path`` and the same file's path under each other source folder that reaches it (a
        symlinked source folder, a folder inside another source's): the daemon resolves each."""
        real = path
        for r, folder in self._dirs:
            if r != folder and path.startswith(folder + os.sep):
                real = r + path[len(folder) :]
                break
        out = [path]
        for r, folder in self._dirs:
            if real.startswith(r.rstrip(os.sep) + os.sep):
                name = folder + real[len(r) :]
                if name not in out:
                    out.append(name)
        return out

    def _emit_polled(self, path: str) -> None:
        for name in self._names(path):
            self._on_path(name)

    def _real_watches(self, folders: list[tuple[Path, bool]]) -> list[tuple[str, bool]]:
        """The real folders inotify must watch: each source folder's own (a symlink's target: the
        link itself holds no events), and the folder of each file a source links to elsewhere."""
        self._files, self._real, self._ids = {}, [], {}
        for folder, recursive in folders:
            real = os.path.realpath(folder)
            if (real, recursive) not in self._real:
                self._real.append((real, recursive))
                with contextlib.suppress(OSError):
                    st = os.stat(real)
                    self._ids[real] = (st.st_dev, st.st_ino)
        for path in self._known() if self._known is not None else ():
            if not os.path.islink(path):
                continue
            real = os.path.realpath(path)
            if not self._watched(real):
                self._real.append((os.path.dirname(real), False))
            self._files.setdefault(real, []).append(path)
        return list(self._real)

    def _watched(self, real: str) -> bool:
        """Whether inotify sees changes to the file at ``real`` (a path with no symlink in it)."""
        return any(
            real.startswith(d.rstrip(os.sep) + os.sep) and (rec or os.path.dirname(real) == d)
            for d, rec in self._real
        )

    def _emit(self, raw: str) -> None:
        """An inotify event, under its own path and each source path that leads to it. A new link
        to a file no watch sees asks for the watches again (:meth:`should_restart`)."""
        paths = self._names(raw) + [p for p in self._files.get(raw, ()) if p != raw]
        for path in paths:
            if self._on_path(path) and os.path.islink(path) and not self._watched(os.path.realpath(path)):
                self.restart_needed = True

    def _observe(self, make: Callable[[], Any], folders: list[tuple[Path, bool]]) -> Observer:
        obs = make()
        handler = EventHandler(self._emit, self._gone) if not isinstance(obs, Poller) else None
        watching: set[str] = set()
        if handler is None:
            for folder, recursive in folders:
                obs.schedule(str(folder), recursive=recursive)
                watching.add(str(folder))
        else:
            for folder_s, recursive in self._real_watches(folders):
                obs.schedule(handler, folder_s, recursive=recursive)
                watching.add(folder_s)
        try:
            if isinstance(obs, Poller) and self._known is not None:
                obs.start(name for p in self._known() for name in self._names(p))
            else:
                obs.start()
        except BaseException:
            with contextlib.suppress(Exception):
                obs.stop()
            raise
        self._watching = watching
        return obs  # type: ignore[no-any-return]

    def start(self) -> None:
        """Start watching; ``auto`` falls back to polling when inotify cannot start (watch limits).
        A dropped folder that exists again is watched again: said once (``watch_rearmed``)."""
        self._start()
        for folder in sorted(self._dropped & self._watching):
            self._dropped.discard(folder)
            self.log.info("watch_rearmed", folder=folder, mode=self.mode)

    def _start(self) -> None:
        folders = self.folders()
        mode = self.cfg.watch.mode
        if mode == "polling":
            self.observer, self.mode = self._observe(self.polling_observer, folders), "polling"
            return
        try:
            self.observer, self.mode = self._observe(self.native_observer, folders), "inotify"
        except OSError as exc:
            if mode != "auto":
                raise
            hint = (
                " (raise fs.inotify.max_user_watches / max_user_instances)"
                if exc.errno in _INOTIFY_LIMITS
                else ""
            )
            self.log.warning(
                "observer_fallback",
                reason=f"{exc.strerror or exc}{hint}",
                errno=exc.errno,
                mode="polling",
                poll_interval=self.cfg.watch.poll_interval,
            )
            self.observer, self.mode = self._observe(self.polling_observer, folders), "polling"

    def stop(self, timeout: float = 5.0) -> None:
        obs, self.observer = self.observer, None
        if obs is None:
            return
        with contextlib.suppress(Exception):
            obs.stop()
        with contextlib.suppress(RuntimeError):
            obs.join(timeout)

    def dead(self) -> Dead:
        """Threads that should be alive and are not. A watch whose folder was deleted, moved away
        or replaced is no death: it is dropped (:meth:`_drop`) and watched again once it exists."""
        obs = self.observer
        if obs is None:
            return []
        if isinstance(obs, Poller):
            if not obs.is_alive():
                return [("observer", obs.thread)]
            for folder in sorted(obs.vanished):
                self._drop(folder, DELETED)
            return []
        if not obs.is_alive():
            return [("observer", obs if isinstance(obs, threading.Thread) else None)]
        dead: Dead = []
        for em in list(getattr(obs, "emitters", [])):
            if em.is_alive():
                continue
            path = str(em.watch.path)
            stopped = getattr(em, "stopped_event", None)  # set: watchdog ended it (its folder was deleted)
            if (stopped is not None and stopped.is_set()) or not os.path.isdir(path):
                self._drop(path, DELETED)
            else:
                dead.append((f"watch {path}", em))
        for folder, why in self._replaced():
            self._drop(folder, why)
        return dead

    def _replaced(self) -> list[tuple[str, str]]:
        """inotify's watched folders that are gone or another folder now (a watch follows the folder
        it was set on: moved away, it would report its events under the old name)."""
        out: list[tuple[str, str]] = []
        for folder, ident in self._ids.items():
            try:
                st = os.stat(folder)
            except OSError:
                out.append((folder, DELETED))
                continue
            if (st.st_dev, st.st_ino) != ident:
                out.append((folder, REPLACED))
        return out

    def _gone(self, path: str) -> None:
        """A deleted folder's event (observer thread): a watched folder's own deletion drops its watch."""
        if any(path == real for real, _ in self._real):
            self._drop(path, DELETED)

    def _drop(self, folder: str, why: str) -> None:
        """Warn once, naming the folder, and ask for new watches (the owner's loop, woken now, takes
        them and walks for what was written meanwhile; a folder not back yet is watched for)."""
        if folder not in self._dropped:
            self._dropped.add(folder)
            self.log.warning(
                "watch_dropped",
                folder=folder,
                reason=f"the folder was {why}: watched again once it exists, "
                "then a catch-up walk takes what was written in it meanwhile",
            )
        self.restart_needed = True
        if self._on_drop is not None:
            with contextlib.suppress(Exception):
                self._on_drop()

    def should_restart(self) -> bool:
        """A watched folder vanished, or a missing one appeared."""
        return self.restart_needed or any(os.path.isdir(p) for p in self.missing)
