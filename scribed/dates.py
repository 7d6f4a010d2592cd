"""A session's dates as the door takes them. A transcript's time stamps say when its work happened,
unless the clock that wrote them was wrong: a VM set to 2099 writes sessions that would sort after
every real one for decades (the newest in every order: the hot file's seed, the spawn's cold
entries, promotion's age). A stamp later than the run's clock by more than :data:`SKEW` (the
difference two machines' clocks may have) cannot be true, so such a session is dated by what is:
its file's modification time or the run's clock, whichever is earlier (a file written by the
wrong clock may carry its date too). Its turns keep their stamps: they are part of what identifies
an entry on every clone (:func:`scribed.core.ledger_ids.content_id`).

Dates read back from files (a seed's ``updated:``, a cold entry's heading) that a wrong clock wrote
before this rule, or on a teammate's machine, are not believed either (:func:`believed`): they
order as undated, never as the newest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

SKEW = timedelta(days=1)
# What every run takes as its clock, so a test can hand it a fixed one (utcnow by default).
Clock = Callable[[], datetime]


def utcnow() -> datetime:
    """The wall clock: every run's default :data:`Clock`, and a reader's with no run of its own."""
    return datetime.now(UTC)


def believed(when: datetime | None, now: datetime) -> datetime | None:
    """``when``, unless it lies beyond ``now`` + :data:`SKEW` (a wrong clock wrote it): None."""
    return None if when is None or when > now + SKEW else when


def file_mtime(path: Path) -> datetime | None:
    """``path``'s modification time; None when it cannot be read (gone since it was parsed)."""
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return None


def known_true(now: datetime, mtime: datetime | None) -> datetime:
    """The latest date known to be true of a file: its modification time or ``now``, the earlier."""
    return now if mtime is None else min(now, mtime)


class Dates(NamedTuple):
    """A session part's dates as its entry shows them."""

    start: datetime | None
    end: datetime
    claimed: datetime | None = None  # the future date its stamps claimed (None: they were believed)


def session_dates(
    stamps: Iterable[datetime | None],
    start: datetime | None,
    end: datetime | None,
    *,
    now: datetime,
    mtime: Callable[[], datetime | None],
) -> Dates:
    """The dates of a part whose turns carry ``stamps``: their span, else the session's own
    ``start`` and ``end`` (a header's date), else the file's ``mtime`` (asked only when needed;
    None: unknown). A part that claims a date past ``now`` + :data:`SKEW` is dated :func:`known_true`."""
    got = [s for s in stamps if s is not None]
    if got:
        start, end = min(got), max(got)
    elif end is None:
        end = mtime() or now
    if believed(end, now) is not None:
        return Dates(start, end)
    true = known_true(now, mtime())
    return Dates(true if start is None or start > true else start, true, claimed=end)
