"""When the nightly cold → wiki promotion runs: the ``[promote]`` cron line as an APScheduler trigger.

APScheduler 3 only looks forward, so "was a run missed while we were down or asleep?" is answered
here by :func:`previous_fire`.
"""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from scribed.config import Config, ConfigError

if TYPE_CHECKING:
    from apscheduler.triggers.cron import CronTrigger

MISFIRE_GRACE = 6 * 3600  # a laptop waking from sleep still runs the night's promotion
CRON_FIELDS = 5
_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_LAST_WEEKDAY = 6
_SUNDAY_TOO = 7


OFF = "off"  # [promote] schedule: this daemon never promotes (a CI job or another machine does)


def promotion_trigger(cfg: Config) -> CronTrigger | None:
    """The cron trigger for ``[promote]`` (None: ``schedule = "off"``); a bad schedule or zone is
    the user's config error."""
    from apscheduler.triggers.cron import CronTrigger

    if cfg.promote.schedule.strip().lower() == OFF:
        return None
    where = f"{cfg.path}: " if cfg.path else ""
    problems: list[str] = []  # both keys judged: each problem on its own line, at once
    zone = cfg.promote.timezone
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):  # "Europe": a folder
        problems.append(
            f"{where}bad value for 'promote.timezone': unknown time zone (got {zone!r}; e.g. 'UTC', 'Europe/Berlin')"
        )
        zone = "UTC"  # the cron line is judged all the same
    fields = cfg.promote.schedule.split()
    trigger = None
    try:
        if len(fields) != CRON_FIELDS:
            raise ValueError(f"expected 5 fields (minute hour day month weekday), got {len(fields)}")
        minute, hour, day, month, dow = fields
        trigger = CronTrigger(
            minute=minute, hour=hour, day=day, month=month, day_of_week=crontab_weekdays(dow), timezone=zone
        )
    except ValueError as exc:
        problems.append(
            f"{where}bad value for 'promote.schedule': {exc} (got {cfg.promote.schedule!r}; "
            "cron: minute hour day month weekday, e.g. '0 3 * * *')"
        )
    if problems or trigger is None:
        raise ConfigError("\n".join(problems))
    return trigger


def _weekday(tok: str) -> int:
    if tok in _DAY_NAMES:
        return _DAY_NAMES.index(tok)
    n = int(tok)
    if not 0 <= n <= _SUNDAY_TOO:
        raise ValueError(f"weekday {n} out of range 0-7")
    return n


def _weekday_range(rng: str, stepped: bool) -> tuple[int, int]:
    if rng == "*":
        return 0, _LAST_WEEKDAY
    if "-" in rng:
        a, b = rng.split("-", 1)
        lo, hi = _weekday(a), _weekday(b)
        return lo, hi + 7 if hi < lo else hi  # fri-mon wraps over the weekend
    lo = _weekday(rng)
    return lo, _LAST_WEEKDAY if stepped else lo


def crontab_weekdays(field: str) -> str:
    """Cron's weekday field (0 or 7 = Sunday) in APScheduler 3's terms (0 = Monday).

    ``CronTrigger.from_crontab`` passes numbers through unchanged, so "* * * * 1" would fire on
    Tuesdays; spelling the days out as names removes the off-by-one.
    """
    if field == "*":
        return "*"
    days: set[int] = set()
    for part in field.lower().split(","):
        rng, _, step_s = part.partition("/")
        step = int(step_s) if step_s else 1
        if step < 1:
            raise ValueError(f"bad weekday step in {part!r}")
        lo, hi = _weekday_range(rng, bool(step_s))
        days.update(d % 7 for d in range(lo, hi + 1, step))
    return ",".join(_DAY_NAMES[d] for d in sorted(days))


def next_fire(trigger: CronTrigger | None, now: datetime) -> datetime | None:
    if trigger is None:
        return None
    fire: datetime | None = trigger.get_next_fire_time(None, now)
    return fire


def previous_fire(trigger: CronTrigger | None, now: datetime) -> datetime | None:
    """The last scheduled time at or before ``now`` (APScheduler 3 only looks forward)."""
    if trigger is None:
        return None
    window = timedelta(hours=1)
    while window <= timedelta(days=5 * 366):
        t = next_fire(trigger, now - window)
        if t is not None and t <= now:
            while True:
                n = next_fire(trigger, t + timedelta(microseconds=1))
                if n is None or n > now:
                    return t
                t = n
        window *= 2
    return None


def parse_iso(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
