"""DATE (12), TIMESTAMP (180), TIMESTAMP WITH TIME ZONE (181) and WITH LOCAL TIME ZONE (231).

Decoding turns the 7/11/13-byte Oracle forms (redo-format.md §8.3-8.5) into ``(epoch seconds,
nanoseconds)`` exactly as OpenLogReplicator does, including its calendar arithmetic: days are
counted with proleptic Gregorian rules, the day field is range-checked (0..30) but not against
the month, and BC years use OLR's own convention (leap years mirrored from AD, fractions
subtracted instead of added). :func:`epoch_to_iso` is the reverse used by the ISO renderings,
with OLR's limits: outside 4712 BC .. 9999 AD it raises error 10069.
"""

from __future__ import annotations

import datetime as _dt
from typing import Final

from replicator.errors import RuntimeFailure
from replicator.values.timezones import zone_text

_DAY: Final = 86400
_AD_EPOCH: Final = 62167132800  # seconds from OLR's day zero to 1970-01-01
_BC_EPOCH: Final = _AD_EPOCH - 365 * _DAY
_MIN_EPOCH: Final = -210831897600  # 4712-01-01 BC
_MAX_EPOCH: Final = 253402300799  # 9999-12-31 23:59:59
_CUM_DAYS: Final = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_CUM_DAYS_LEAP: Final = (0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335)
_UNIX_ZERO: Final = _dt.datetime(1970, 1, 1)
_MAX_FRACTION: Final = 999_999_999


class TimestampRangeError(RuntimeFailure):
    """A timestamp outside 4712 BC .. 9999 AD was to be printed as text (OLR error 10069)."""

    code = 10069


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _year_days(year: int) -> int:
    """Days in all years before ``year`` (a positive year number) from OLR's day zero."""
    return year * 365 + year // 4 - year // 100 + year // 400


def values_to_epoch(year: int, month: int, day: int, hour: int, minute: int, second: int, tz_offset: int = 0) -> int:
    """Epoch seconds of a broken-down time (``month``/``day`` 0-based), minus ``tz_offset``."""
    if year > 0:
        days = _year_days(year) - (1 if month < 2 and _is_leap(year) else 0)
        base = _AD_EPOCH
    else:
        bc_year = -year
        days = -(_year_days(bc_year) - (1 if month >= 2 and _is_leap(bc_year) else 0))
        base = _BC_EPOCH
    days += _CUM_DAYS[month] + day
    return ((days * 24 + hour) * 60 + minute) * 60 + second - base - tz_offset


def _year_of(century: int, year: int) -> int:
    """Year from the first two bytes: both >= 100 means AD, anything else BC (negative)."""
    if century >= 100 and year >= 100:
        return (century - 100) * 100 + (year - 100)
    return -((100 - century) * 100 + (100 - year))


def _decode_fields(data: bytes, tz_offset: int, check_fraction: bool) -> tuple[int, int] | None:
    """Shared part of all timestamp decoders: validate fields, return (epoch, fraction)."""
    month, day, hour, minute, second = data[2] - 1, data[3] - 1, data[4] - 1, data[5] - 1, data[6] - 1
    fraction = int.from_bytes(data[7:11], "big") if len(data) >= 11 else 0
    if not (0 <= second <= 59 and 0 <= minute <= 59 and 0 <= hour <= 23 and 0 <= day <= 30 and 0 <= month <= 11):
        return None
    if check_fraction and fraction > _MAX_FRACTION:
        return None
    year = _year_of(data[0], data[1])
    epoch = values_to_epoch(year, month, day, hour, minute, second, tz_offset)
    if year < 0 and fraction > 0:
        # OLR's BC convention: the fraction counts backwards from the next second.
        fraction = 1_000_000_000 - fraction
        epoch -= 1
    return epoch, fraction


def decode_timestamp(data: bytes, tz_offset: int = 0) -> tuple[int, int] | None:
    """Decode DATE/TIMESTAMP (or TSLTZ with ``tz_offset`` = DBTIMEZONE seconds).

    Returns ``(epoch seconds, nanoseconds)``, or None when OLR treats the value as unknown
    (wrong size, a field out of range, fraction above 999,999,999).
    """
    if len(data) != 7 and len(data) != 11:
        return None
    return _decode_fields(data, tz_offset, True)


def decode_timestamp_tz(data: bytes) -> tuple[int, int, str] | None:
    """Decode TIMESTAMP WITH TIME ZONE (9 or 13 bytes): ``(epoch, nanoseconds, zone text)``.

    The stored date and time are UTC; the zone is a ``±HH:MM`` offset or a region name
    (``TZ?`` when unknown). OLR does not range-check the fraction of this type.
    """
    if len(data) != 9 and len(data) != 13:
        return None
    zone = zone_text(data[11], data[12]) if len(data) == 13 else zone_text(data[7], data[8])
    fields = _decode_fields(data[:7] + (data[7:11] if len(data) == 13 else b""), 0, False)
    if fields is None:
        return None
    return fields[0], fields[1], zone


def epoch_to_iso(epoch: int, t_separator: bool, add_z: bool) -> str:
    """Render epoch seconds as ``YYYY-MM-DD HH:MM:SS`` (``T`` and trailing ``Z`` optional).

    BC instants get a leading ``-`` and OLR's BC arithmetic. Raises
    :class:`TimestampRangeError` (10069) outside 4712 BC .. 9999 AD.
    """
    if epoch < _MIN_EPOCH or epoch > _MAX_EPOCH:
        raise TimestampRangeError(f"invalid timestamp value: {epoch}")
    sep = "T" if t_separator else " "
    zulu = "Z" if add_z else ""
    if epoch + _AD_EPOCH >= 365 * _DAY:
        moment = _UNIX_ZERO + _dt.timedelta(seconds=epoch)
        return (
            f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}{sep}"
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}{zulu}"
        )
    year, month, day, hour, minute, second = _bc_fields(epoch)
    return f"-{year:04d}-{month:02d}-{day:02d}{sep}{hour:02d}:{minute:02d}:{second:02d}{zulu}"


def _bc_fields(epoch: int) -> tuple[int, int, int, int, int, int]:
    """OLR's reverse calendar for BC instants: counts backwards from 1 BC, time mirrored."""
    rest = 365 * _DAY - (epoch + _AD_EPOCH)
    rest, second = divmod(rest, 60)
    rest, minute = divmod(rest, 60)
    days, hour = divmod(rest, 24)
    year = max(days // 366 - 1, 0)
    while _bc_year_start(year) < days:
        year += 1
    day_of_year = _bc_year_start(year) - days
    cumulative = _CUM_DAYS_LEAP if _is_leap(year) else _CUM_DAYS
    month = min(day_of_year // 27, 11)
    while cumulative[month] > day_of_year:
        month -= 1
    return year, month + 1, day_of_year - cumulative[month] + 1, hour, minute, second


def _bc_year_start(year: int) -> int:
    """OLR's day count for the start of BC ``year`` (its yearToDaysBC with month 0)."""
    return _year_days(year)


def encode_timestamp(
    year: int,
    month: int,
    day: int,
    hour: int = 0,
    minute: int = 0,
    second: int = 0,
    nanos: int = 0,
    size: int | None = None,
) -> bytes:
    """Encode DATE/TIMESTAMP bytes (``month``/``day`` 1-based; BC years negative).

    The result has 7 bytes when ``nanos`` is 0 (as Oracle stores TIMESTAMPs without a
    fraction) unless ``size`` is 11. Used by tests and the redo generator.
    """
    if year > 0:
        century, yy = year // 100 + 100, year % 100 + 100
    else:
        century, yy = 100 - (-year) // 100, 100 - (-year) % 100
    head = bytes([century, yy, month, day, hour + 1, minute + 1, second + 1])
    if nanos or size == 11:
        return head + nanos.to_bytes(4, "big")
    return head


def encode_timestamp_tz(
    year: int, month: int, day: int, hour: int, minute: int, second: int, nanos: int, zone: str
) -> bytes:
    """Encode TIMESTAMP WITH TIME ZONE (13 bytes) from UTC fields and ``±HH:MM`` or a region."""
    if zone[:1] in "+-" and ":" in zone:
        hours, minutes = (int(part) for part in zone[1:].split(":"))
        sign = -1 if zone[0] == "-" else 1
        tail = bytes([20 + sign * hours, 60 + sign * minutes])
    else:
        from replicator.values.timezones import REGION_NAMES

        region = next(key for key, name in REGION_NAMES.items() if name == zone)
        tail = region.to_bytes(2, "big")
    return encode_timestamp(year, month, day, hour, minute, second, nanos, size=11) + tail
