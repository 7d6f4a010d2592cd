"""The daemon's locked work besides compacting files: cold → wiki promotion on its schedule (and
at once when a start finds it overdue), the wiki entries agents drop in the inbox, and the
transcript copies a failed archive folder owes. Kept apart from the service's lifecycle (start,
signals, heartbeat, reload, shutdown): each of these takes the work gate (the root lock) the
file workers share, so it never runs while a file is being compacted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from scribed.compress.entry import iso
from scribed.daemon.schedule import MISFIRE_GRACE, next_fire, parse_iso, previous_fire
from scribed.daemon.work import Dispatcher
from scribed.log import Logger
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from apscheduler.triggers.cron import CronTrigger

    from scribed.core.scribe import Scribe


class Chores:
    """Promotion, the inbox and owed copies; the :class:`scribed.daemon.service.Daemon` sets these."""

    trigger: CronTrigger | None
    clock: Callable[[], datetime]
    log: Logger
    layout: Layout
    dispatch: Dispatcher
    _stopping: threading.Event
    _scheduler_factory: Callable[[], Any]
    _scheduler: Any

    if TYPE_CHECKING:

        @property
        def scribe(self) -> Scribe: ...

    def next_promotion(self) -> datetime | None:
        return next_fire(self.trigger, self.clock())

    def last_promotion(self) -> datetime | None:
        return parse_iso(self.scribe.last_promotion_at())

    def promotion_overdue(self) -> bool:
        """True when the last scheduled promotion time passed without a promotion (asleep, stopped)."""
        prev = previous_fire(self.trigger, self.clock())
        if prev is None:
            return False
        last = self.last_promotion()
        return last is None or last < prev

    def apply_inbox_if_any(self) -> None:
        """Apply wiki entries agents dropped in ``inbox/wiki/`` (under the root lock, like all work)."""
        inbox = self.layout.memory / "inbox" / "wiki"
        try:
            if not any(p.suffix == ".md" for p in inbox.iterdir()):
                return
        except OSError:
            return
        scribe = self.scribe
        try:
            with self.dispatch.gate.hold(scribe, self._stopping, self.log) as held:
                if held:
                    scribe.apply_inbox()
        except Exception as exc:  # one bad inbox pass must not stop the service
            self.log.error("inbox_failed", reason=f"{type(exc).__name__}: {exc}")

    def retry_copies_if_owed(self) -> None:
        """Make the transcript copies a failed archive folder owes (:mod:`scribed.core.copies_owed`),
        under the root lock; with none owed, one look at the ledger and no lock."""
        scribe = self.scribe
        try:
            if not scribe.ledger.copies_owed():
                return
            with self.dispatch.gate.hold(scribe, self._stopping, self.log) as held:
                if held:
                    scribe.retry_copies()
        except Exception as exc:  # one failed retry must not stop the service: the next one tries again
            self.log.error("copy_retry_failed", reason=f"{type(exc).__name__}: {exc}")

    def promote(self) -> bool:
        """Cold → wiki promotion under the root lock: never while a file is being compacted."""
        scribe = self.scribe
        try:
            with self.dispatch.gate.hold(scribe, self._stopping, self.log) as held:
                if not held:
                    return False
                result = scribe.promote().to_json()  # re-entrant: this thread holds the lock
        except Exception as exc:  # the scheduler thread logs nothing useful; we do
            self.log.error("promotion_failed", reason=f"{type(exc).__name__}: {exc}")
            return False
        summary = {k: v for k, v in result.items() if isinstance(v, int | float | str | bool)}
        self.log.info("promoted", at=iso(self.clock()), report=summary or None)
        return True

    def start_scheduler(self) -> None:
        sched = self._scheduler_factory()
        self._scheduler = sched
        if self.trigger is None:
            self.log.info("promotion_off", reason='[promote] schedule = "off": another machine promotes')
            sched.start()
            return
        kwargs: dict[str, Any] = {
            "trigger": self.trigger,
            "id": "promote",
            "name": "promotion",
            "coalesce": True,
            "max_instances": 1,
            "misfire_grace_time": MISFIRE_GRACE,
            "replace_existing": True,
        }
        if self.promotion_overdue():
            last = self.last_promotion()
            self.log.info("promotion_overdue", last=iso(last) if last else None, running="now")
            kwargs["next_run_time"] = self.clock()
        sched.add_job(self.promote, **kwargs)
        sched.start()
        self._scheduler = sched

    def _reschedule(self, trigger: Any) -> None:
        """A reloaded schedule: moved, turned off, or turned on."""
        has = self._scheduler.get_job("promote") is not None
        if trigger is None:
            if has:
                self._scheduler.remove_job("promote")
        elif has:
            self._scheduler.reschedule_job("promote", trigger=trigger)
        else:
            self._scheduler.add_job(
                self.promote, trigger=trigger, id="promote", name="promotion", coalesce=True,
                max_instances=1, misfire_grace_time=MISFIRE_GRACE, replace_existing=True,
            )  # fmt: skip
