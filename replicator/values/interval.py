"""INTERVAL YEAR TO MONTH (182) and INTERVAL DAY TO SECOND (183), rendered as OLR does.

Layouts are in redo-format.md §8.6-8.7: 32-bit biased counts plus byte fields offset by 60.
Any negative part makes the whole value negative (a single leading ``-``); magnitudes are
printed without padding for years/days and with two digits for hours, minutes and seconds.
Each renderer returns the JSON literal (bare number or quoted string) or None when OLR treats
the bytes as an unknown value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

_BIAS: Final = 0x80000000
_LIMIT: Final = 999_999_999
_YM_SEPARATORS: Final = {2: " ", 3: ",", 4: "-"}
_DS_SEPARATORS: Final = {8: " ", 9: ",", 10: "-"}
_NS: Final = 1_000_000_000
# interval-dts codes 0..3 (and 4..7 as strings): divisor and rounding half of the ns total.
_DS_UNITS: Final = ((1, 0), (1000, 500), (1_000_000, 500_000), (_NS, 500_000_000))

IntervalRenderer = Callable[[bytes], "str | None"]


def _biased(value: int) -> tuple[int, bool]:
    """Magnitude and sign of a 32-bit count stored with a 0x80000000 bias."""
    if value & _BIAS:
        return value - _BIAS, False
    return _BIAS - value, True


def _offset60(byte: int) -> tuple[int, bool]:
    """Magnitude and sign of a byte field stored as value + 60."""
    return (byte - 60, False) if byte >= 60 else (60 - byte, True)


def interval_ym_renderer(code: int) -> IntervalRenderer:
    """Renderer for INTERVAL YEAR TO MONTH under `interval-ytm` code 0..4."""

    def render(data: bytes) -> str | None:
        if len(data) != 5 or not 49 <= data[4] <= 71:
            return None
        years, negative = _biased(int.from_bytes(data[:4], "big"))
        if years > _LIMIT:
            return None
        months, months_negative = _offset60(data[4])
        sign = "-" if negative or months_negative else ""
        if code == 0:
            return f"{sign}{years * 12 + months}"
        if code == 1:
            return f'"{sign}{years * 12 + months}"'
        return f'"{sign}{years}{_YM_SEPARATORS[code]}{months}"'

    return render


def interval_ds_renderer(code: int) -> IntervalRenderer:
    """Renderer for INTERVAL DAY TO SECOND under `interval-dts` code 0..10."""

    def render(data: bytes) -> str | None:
        if len(data) != 11 or not 37 <= data[4] <= 83 or not 1 <= data[5] <= 119 or not 1 <= data[6] <= 119:
            return None
        days, negative = _biased(int.from_bytes(data[:4], "big"))
        nanos, nanos_negative = _biased(int.from_bytes(data[7:11], "big"))
        if days > _LIMIT or nanos > _LIMIT:
            return None
        hours, hours_negative = _offset60(data[4])
        minutes, minutes_negative = _offset60(data[5])
        seconds, seconds_negative = _offset60(data[6])
        negative = negative or nanos_negative or hours_negative or minutes_negative or seconds_negative
        sign = "-" if negative else ""
        if code >= 8:
            return f'"{sign}{days}{_DS_SEPARATORS[code]}{hours:02d}:{minutes:02d}:{seconds:02d}.{nanos:09d}"'
        divisor, half = _DS_UNITS[code % 4]
        total = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * _NS + nanos
        text = f"{sign}{(total + half) // divisor}"
        return text if code < 4 else f'"{text}"'

    return render


def encode_interval_ym(years: int, months: int) -> bytes:
    """Encode INTERVAL YEAR TO MONTH bytes; both parts carry the value's sign."""
    return ((years + _BIAS) & 0xFFFFFFFF).to_bytes(4, "big") + bytes([months + 60])


def encode_interval_ds(days: int, hours: int, minutes: int, seconds: int, nanos: int) -> bytes:
    """Encode INTERVAL DAY TO SECOND bytes; every part carries the value's sign."""
    return (
        ((days + _BIAS) & 0xFFFFFFFF).to_bytes(4, "big")
        + bytes([hours + 60, minutes + 60, seconds + 60])
        + ((nanos + _BIAS) & 0xFFFFFFFF).to_bytes(4, "big")
    )
