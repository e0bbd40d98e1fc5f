"""Decoded dates, timestamps and intervals, and their renderings in the other formats.

The decoders of :mod:`replicator.values` give ``(epoch seconds, nanoseconds)``; these small
value types carry that result to the formats, which need epoch units (Debezium, Avro),
calendar text (OMS, Canal, Qlik, SharePlex), calendar fields (DTS Avro), zone offsets (the
wall clock of a TIMESTAMP WITH TIME ZONE) and ISO-8601 durations. Calendar text always goes
through :func:`replicator.values.datetime.epoch_to_iso`, so BC years and the 9999 AD limit
behave as in OpenLogReplicator JSON.
"""

from __future__ import annotations

import datetime as _dt
import re
import zoneinfo
from dataclasses import dataclass
from typing import Final

from replicator.values.datetime import epoch_to_iso

_NS: Final = 1_000_000_000
_OFFSET: Final = re.compile(r"([+-])(\d{1,2}):(\d{2})$")
_UNITS: Final = {"ms": 1_000_000, "us": 1000, "ns": 1}


@dataclass(frozen=True, slots=True)
class Instant:
    """DATE/TIMESTAMP (wall clock read as UTC) or TIMESTAMP WITH LOCAL TIME ZONE (UTC)."""

    epoch: int
    nanos: int

    def units(self, unit: str) -> int:
        """Epoch value in ``ms``, ``us`` or ``ns`` (sub-unit digits are cut, not rounded)."""
        return self.epoch * (_NS // _UNITS[unit]) + self.nanos // _UNITS[unit]


@dataclass(frozen=True, slots=True)
class ZonedInstant:
    """TIMESTAMP WITH TIME ZONE: the UTC instant and the zone (``±HH:MM`` or a region)."""

    epoch: int
    nanos: int
    zone: str

    def offset(self) -> int:
        """The zone's UTC offset in seconds at this instant (0 for an unknown region)."""
        match = _OFFSET.match(self.zone)
        if match:
            seconds = int(match.group(2)) * 3600 + int(match.group(3)) * 60
            return -seconds if match.group(1) == "-" else seconds
        try:
            zone = zoneinfo.ZoneInfo(self.zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return 0  # "TZ?" and regions the host's tz database lacks: keep UTC
        # Clamp to what datetime can hold; the offset of such instants is the zone's LMT anyway.
        moment = _dt.datetime.fromtimestamp(min(max(self.epoch, -62135596800), 253402300799), _dt.UTC)
        delta = moment.astimezone(zone).utcoffset()
        return int(delta.total_seconds()) if delta is not None else 0

    def local(self) -> Instant:
        """The wall clock in the value's own zone, as an :class:`Instant`."""
        return Instant(self.epoch + self.offset(), self.nanos)


@dataclass(frozen=True, slots=True)
class YearMonth:
    """INTERVAL YEAR TO MONTH as signed total months."""

    months: int


@dataclass(frozen=True, slots=True)
class DaySecond:
    """INTERVAL DAY TO SECOND as signed total nanoseconds."""

    nanos: int


def fraction(nanos: int, digits: int | None = None) -> str:
    """``.fffffffff`` with ``digits`` digits (cut), or trailing zeros trimmed when None."""
    if digits is None:
        text = f"{nanos:09d}".rstrip("0")
        return "." + text if text else ""
    return "." + f"{nanos:09d}"[:digits] if digits > 0 else ""


def calendar_text(value: Instant, t_separator: bool = False, digits: int | None = None) -> str:
    """``YYYY-MM-DD HH:MM:SS[.f]`` (``T`` optional); raises 10069 outside 4712 BC..9999 AD."""
    return epoch_to_iso(value.epoch, t_separator, False) + fraction(value.nanos, digits)


def offset_text(seconds: int) -> str:
    """``+HH:MM`` for an offset in seconds (``Z`` is left to the caller)."""
    sign = "-" if seconds < 0 else "+"
    hours, minutes = divmod(abs(seconds) // 60, 60)
    return f"{sign}{hours:02d}:{minutes:02d}"


def zoned_iso(value: ZonedInstant | Instant) -> str:
    """ISO-8601 with offset (Debezium ZonedTimestamp): local time and ``+HH:MM``, or ``Z``."""
    if isinstance(value, Instant):
        return calendar_text(value, True) + "Z"
    offset = value.offset()
    text = calendar_text(value.local(), True)
    return text + ("Z" if offset == 0 else offset_text(offset))


def calendar_fields(value: Instant) -> tuple[int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second); BC years are negative."""
    text = epoch_to_iso(value.epoch, True, False)
    sign = -1 if text.startswith("-") else 1
    date, _, clock = text.lstrip("-").partition("T")
    year, month, day = (int(part) for part in date.split("-"))
    hour, minute, second = (int(part) for part in clock.split(":"))
    return sign * year, month, day, hour, minute, second


def year_month_parts(value: YearMonth) -> tuple[str, int, int]:
    """(sign, years, months) of a YEAR TO MONTH interval."""
    sign = "-" if value.months < 0 else ""
    years, months = divmod(abs(value.months), 12)
    return sign, years, months


def day_second_parts(value: DaySecond) -> tuple[str, int, int, int, int, int]:
    """(sign, days, hours, minutes, seconds, nanoseconds) of a DAY TO SECOND interval."""
    sign = "-" if value.nanos < 0 else ""
    seconds, nanos = divmod(abs(value.nanos), _NS)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    return sign, days, hour, minute, second, nanos


def interval_literal(value: YearMonth | DaySecond) -> str:
    """The Oracle interval literal, e.g. ``INTERVAL '-1 02:03:04.500000000' DAY TO SECOND``."""
    if isinstance(value, YearMonth):
        sign, years, months = year_month_parts(value)
        return f"INTERVAL '{sign}{years}-{months}' YEAR TO MONTH"
    sign, days, hours, minutes, seconds, nanos = day_second_parts(value)
    return f"INTERVAL '{sign}{days} {hours:02d}:{minutes:02d}:{seconds:02d}.{nanos:09d}' DAY TO SECOND"


def iso_duration(value: YearMonth | DaySecond) -> str:
    """ISO-8601 duration in Debezium's Interval layout ``PnYnMnDTnHnMnS`` (every part signed)."""
    if isinstance(value, YearMonth):
        sign, years, months = year_month_parts(value)
        return f"P{_signed(sign, years)}Y{_signed(sign, months)}M0DT0H0M0S"
    sign, days, hours, minutes, seconds, nanos = day_second_parts(value)
    second_text = _signed(sign, seconds, nanos)
    return f"P0Y0M{_signed(sign, days)}DT{_signed(sign, hours)}H{_signed(sign, minutes)}M{second_text}S"


def _signed(sign: str, whole: int, nanos: int = 0) -> str:
    """A duration part with the interval's sign; zero parts stay unsigned, as in Java."""
    text = f"{whole}{fraction(nanos)}"
    return sign + text if sign and (whole or nanos) else text
