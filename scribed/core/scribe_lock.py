"""The root lock as :class:`scribed.core.scribe.Scribe` holds it, and what each taking of it brings
in step: the state branch pulled and pushed, the team's cold store synced. Kept apart from the
core's operations, which only say ``with self.locked():``; this is the one place that knows what
taking the lock costs and what it runs before and after the caller's writes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime

from scribed.config import ConfigError
from scribed.core import backend, hot_reseed, statebranch, team_said, team_sync
from scribed.core.cold_sync import SyncResult
from scribed.core.lock import RootBusyError, root_lock
from scribed.log import Logger
from scribed.tiers import audit
from scribed.tiers.cold import Layout

LOCK_WAIT_SAID = 0.1  # seconds: a wait for the root lock this long is logged (``lock_waited``)


class Locking:
    """The lock's methods; the :class:`scribed.core.scribe.Scribe` sets these fields."""

    dry_run: bool
    layout: Layout
    log: Logger
    clock: Callable[[], datetime]
    _held: threading.local  # per thread: how deep this thread holds the lock

    @contextlib.contextmanager
    def locked(self, *, timeout: float = -1, wait: bool = False) -> Iterator[None]:
        """Hold the root lock (re-entrant for this Scribe; a dry run never locks). ``wait``: try at
        once, and if another scribed holds it, say so in the log and wait."""
        depth = getattr(self._held, "depth", 0)
        if self.dry_run or depth:
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth = depth
            return
        refused = backend.refusal(self.layout)
        if refused:
            raise ConfigError(refused)
        with self._take_lock(timeout, wait):
            self._held.depth = 1
            try:
                self.pull_branch()
                self.sync_team()
                yield
                self.sync_team()
                self.push_branch()
            finally:
                self._held.depth = 0

    def pull_branch(self) -> None:
        """On a state-branch backend, the local copy brought up to ``squad-state`` (the caller
        holds the lock); a git failure stops the command before it writes (exit 2)."""
        if not self.layout.on_branch:
            return
        try:
            res = statebranch.pull(self.layout, statebranch.Git(self.layout.root))
        except statebranch.StateBranchError as exc:
            raise ConfigError(f"{self.layout.root}: {statebranch.BRANCH}: {exc}") from exc
        team_said.branch(self.log, res)

    def push_branch(self) -> None:
        """On a state-branch backend, this run's shared tier files committed to ``squad-state``;
        a git failure is a warning (the files are safe here, the next run commits them)."""
        if not self.layout.on_branch or self.dry_run:
            return
        try:
            res = statebranch.push(self.layout, statebranch.Git(self.layout.root), "scribed")
        except statebranch.StateBranchError as exc:
            self.log.warning("state_branch_push_failed", reason=str(exc), action="the next run commits it")
            return
        team_said.branch(self.log, res)

    def sync_team(self) -> SyncResult:
        """The shared cold store and this machine's views made one (see :mod:`scribed.core.team_sync`);
        the caller holds the lock. A pull's new entries re-seed the hot files they are newest for."""
        res = team_sync.sync(self.layout, today=self.clock().date().isoformat())
        team_said.synced(self.log, self.layout, res)
        hot_reseed.after_sync(self.layout, res, self.log, now=self.clock())
        if res.changed:
            self.log.debug("team_synced", agents=res.agents, stored=res.stored, retired=res.retired)
        return res

    @contextlib.contextmanager
    def locked_unless(self, stopping: threading.Event, *, poll: float = 0.5) -> Iterator[bool]:
        """The root lock, waited for in ``poll`` steps so a stop request is noticed: yields False
        (not taken) once ``stopping`` is set. The daemon takes it once per unit of work."""
        stack = contextlib.ExitStack()
        waited = False
        while True:
            try:
                stack.enter_context(self.locked(timeout=poll))
                break
            except RootBusyError:
                if stopping.is_set():
                    yield False
                    return
                if not waited:
                    waited = True
                    self.log.info("waiting_for_lock", lock=str(self.layout.lock))
        with stack:
            yield True

    @contextlib.contextmanager
    def _take_lock(self, timeout: float, wait: bool) -> Iterator[None]:
        lock = self.layout.lock
        audit.ensure_state(self.layout)  # the lock is its first file: the folder's .gitignore comes first
        stack = contextlib.ExitStack()
        t0 = time.monotonic()
        try:
            stack.enter_context(root_lock(lock, timeout=0 if wait else timeout))
        except RootBusyError:
            if not wait:
                raise
            self.log.info("waiting_for_lock", lock=str(lock))
            stack.enter_context(root_lock(lock, timeout=timeout))
        waited = time.monotonic() - t0
        if waited >= LOCK_WAIT_SAID:  # who waits behind whom, and how long: the lock's one cost
            self.log.info("lock_waited", seconds=round(waited, 3), lock=str(lock))
        with stack:
            yield
