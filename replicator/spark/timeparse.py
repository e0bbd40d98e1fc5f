"""Message-header times (``tm``/``tms``/``e_tm``...) in every ``timestamp-metadata`` form.

OLR prints the header time as a number or string of ns, us, ms or s since the epoch
(codes 0-7) or as ISO text (8-15, code 9 with a doubled ``Z``); see olr-interfaces.md
§2.3. The result here is microseconds since the epoch (Spark's timestamp resolution).
"""

from __future__ import annotations

import calendar
from typing import Final

# timestamp-metadata code -> divisor from the printed number to microseconds (negative: multiply).
_UNIT_TO_US: Final[dict[int, int]] = {0: 1000, 1: 1, 2: -1000, 3: -1_000_000}


def epoch_number_to_us(value: int, code: int | None = None) -> int:
    """ns/us/ms/s since the epoch -> us. Without ``code`` the unit is guessed by magnitude.

    The guess is safe for header times (they are "now", 2001..2286 in every unit) but not
    for column values, whose unit must come from the ``timestamp`` option.
    """
    if code is not None and code % 4 in _UNIT_TO_US and code < 8:
        factor = _UNIT_TO_US[code % 4]
    else:
        magnitude = abs(value)
        factor = (
            1000 if magnitude >= 10**17 else 1 if magnitude >= 10**14 else -1000 if magnitude >= 10**11 else -1_000_000
        )
    return value // factor if factor > 0 else value * -factor


def iso_to_us(text: str) -> int:
    """``YYYY-MM-DD[T ]HH:MM:SS[.f...][Z]`` (also OLR's ``SSZ.ffffffZ`` quirk) -> us since the epoch."""
    text = text.strip().replace("Z.", ".").rstrip("Z")
    negative_year = text.startswith("-")
    if negative_year:
        text = text[1:]
    date_part, _, time_part = text.replace("T", " ").partition(" ")
    year, month, day = (int(x) for x in date_part.split("-"))
    if negative_year:
        year = -year
    clock, _, fraction = (time_part or "00:00:00").partition(".")
    hh, mm, ss = (int(x) for x in clock.split(":"))
    micros = int((fraction + "000000")[:6]) if fraction else 0
    days = _days_from_civil(year, month, day)
    return ((days * 86400 + hh * 3600 + mm * 60 + ss) * 1_000_000) + micros


def _days_from_civil(year: int, month: int, day: int) -> int:
    # calendar.timegm needs year >= 1; Howard Hinnant's algorithm covers every year.
    if year >= 1:
        return calendar.timegm((year, month, day, 0, 0, 0)) // 86400
    y = year - (month <= 2)
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def header_time_us(value: object, code: int | None = None) -> int | None:
    """A header ``tm``/``tms`` value (number, digit string or ISO text) -> us, None if absent."""
    if value is None:
        return None
    if value.__class__ is int:  # the usual form (a JSON number): no text round trip per message
        return epoch_number_to_us(value, code)  # type: ignore[arg-type]
    text = str(value).strip()
    if not text:
        return None
    if text.lstrip("-").isdigit():
        return epoch_number_to_us(int(text), code)
    return iso_to_us(text)
