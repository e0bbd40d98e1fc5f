"""Oracle redo time (seconds in a 31-day-month calendar from 1988) to epoch seconds."""

from __future__ import annotations

import calendar
from functools import lru_cache


def redo_time_parts(v: int) -> tuple[int, int, int, int, int, int]:
    """Split a raw redo time into (year, month, day, hour, minute, second)."""
    second = v % 60
    v //= 60
    minute = v % 60
    v //= 60
    hour = v % 24
    v //= 24
    day = v % 31 + 1
    v //= 31
    month = v % 12 + 1
    v //= 12
    return v + 1988, month, day, hour, minute, second


@lru_cache(maxsize=4096)
def _day_epoch(v_days: int) -> int:
    # Cached per (31-day calendar) day: the expensive part is timegm, not the arithmetic.
    year, month, day, _, _, _ = redo_time_parts(v_days * 86400)
    return calendar.timegm((year, month, day, 0, 0, 0, 0, 0, 0))


def redo_time_to_epoch(v: int, host_tz_offset: int = 0) -> int:
    """Convert a raw redo time (database host local time) to epoch seconds.

    ``host_tz_offset`` is the host time zone's offset east of UTC in seconds.
    """
    return _day_epoch(v // 86400) + v % 86400 - host_tz_offset


def epoch_to_redo_time(epoch: int, host_tz_offset: int = 0) -> int:
    """Inverse of :func:`redo_time_to_epoch` (used by the redo generator and tests)."""
    import time

    t = time.gmtime(epoch + host_tz_offset)
    return (
        ((((t.tm_year - 1988) * 12 + t.tm_mon - 1) * 31 + t.tm_mday - 1) * 24 + t.tm_hour) * 60 + t.tm_min
    ) * 60 + t.tm_sec
