"""Text renderings of timestamps: the `timestamp`, `timestamp-tz` and `timestamp-metadata` codes.

Every function returns the JSON literal OLR prints (numbers bare, strings quoted), for an
instant given as ``(epoch seconds, nanoseconds)``. Rounding is half-up and carries into the
seconds, as in OLR. Codes and examples are in olr-interfaces.md §2.3 and §2.5.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from replicator.values.datetime import epoch_to_iso

_NS: Final = 1_000_000_000
_UINT64: Final = 1 << 64

TimestampRenderer = Callable[[int, int], str]


def nanos_text(epoch: int, fraction: int) -> str:
    """Epoch nanoseconds as OLR prints them (its split for |epoch| >= 1e9 included).

    OLR prints large values as ``epoch / 1e9`` followed by 18 digits; for a negative epoch
    that is an exact multiple of 1e9 with a fraction the low part wraps as unsigned 64-bit.
    """
    if -_NS < epoch < _NS:
        return str(epoch * _NS + fraction)
    high = abs(epoch) // _NS * (1 if epoch > 0 else -1)
    low = (abs(epoch) % _NS) * _NS + (fraction if epoch > 0 else -fraction)
    return f"{high}{(low % _UINT64) % 10**18:018d}"


def _micros(epoch: int, fraction: int) -> str:
    return str(epoch * 1_000_000 + (fraction + 500) // 1000)


def _millis(epoch: int, fraction: int) -> str:
    return str(epoch * 1000 + (fraction + 500_000) // 1_000_000)


def _seconds(epoch: int, fraction: int) -> str:
    return str(epoch + (fraction + 500_000_000) // _NS)


_NUMERIC: Final = (nanos_text, _micros, _millis, _seconds)


def _iso(epoch: int, fraction: int, digits: int, t_separator: bool) -> str:
    """ISO text with ``digits`` fraction digits (0, 3, 6, 9), rounded half-up with carry."""
    if digits == 0:
        return epoch_to_iso(epoch + (fraction >= 500_000_000), t_separator, False)
    limit = 10**digits
    if digits == 9:
        value = fraction  # printed as stored, no rounding
    else:
        scale = 10 ** (9 - digits)
        value = (fraction + scale // 2) // scale
        if value >= limit:
            value -= limit
            epoch += 1
    # OLR prints exactly `digits` low-order digits (only an unchecked TSTZ fraction overflows).
    return f"{epoch_to_iso(epoch, t_separator, False)}.{value % limit:0{digits}d}"


_ISO_DIGITS: Final = (9, 6, 3, 0)


def timestamp_renderer(code: int) -> TimestampRenderer:
    """Renderer for DATE/TIMESTAMP/TSLTZ values under `timestamp` code 0..15."""
    if code < 4:
        return _NUMERIC[code]
    if code < 8:
        numeric = _NUMERIC[code - 4]
        return lambda epoch, fraction: f'"{numeric(epoch, fraction)}"'
    digits = _ISO_DIGITS[(code - 8) % 4]
    if code < 12:
        return lambda epoch, fraction: f'"{_iso(epoch, fraction, digits, True)}Z"'
    return lambda epoch, fraction: f'"{_iso(epoch, fraction, digits, False)}"'


TimestampTzRenderer = Callable[[int, int, str], str]


def timestamp_tz_renderer(code: int) -> TimestampTzRenderer:
    """Renderer for TIMESTAMP WITH TIME ZONE values under `timestamp-tz` code 0..11.

    The zone text is appended unescaped, as OLR does.
    """
    if code < 4:
        numeric = _NUMERIC[code]
        return lambda epoch, fraction, zone: f'"{numeric(epoch, fraction)},{zone}"'
    digits = _ISO_DIGITS[(code - 4) % 4]
    if code < 8:
        return lambda epoch, fraction, zone: f'"{_iso(epoch, fraction, digits, True)}Z {zone}"'
    return lambda epoch, fraction, zone: f'"{_iso(epoch, fraction, digits, False)} {zone}"'


# `timestamp-metadata`: (suffix for the unit, quoted) for codes 0..7; header times have no
# fraction, so the zeros are simply appended (and left out when the epoch is 0).
_METADATA_NUMERIC: Final = (
    ("000000000", False),
    ("000000", False),
    ("000", False),
    ("", False),
    ("000000000", True),
    ("000000", True),
    ("000", True),
    ("", True),
)
# Codes 8..15: (T separator, "Z" added by the ISO routine, literal tail). Code 9 prints
# "...SSZ.000000Z" because OLR asks for the Z twice.
_METADATA_ISO: Final = (
    (True, False, ".000000000Z"),
    (True, True, ".000000Z"),
    (True, False, ".000Z"),
    (True, True, ""),
    (False, False, ".000000000"),
    (False, False, ".000000"),
    (False, False, ".000"),
    (False, False, ""),
)


def metadata_renderer(code: int) -> Callable[[str, int], str]:
    """Renderer of a header time field (``tm``, ``b_tm``, ``e_tm``) under `timestamp-metadata`.

    It takes the numeric field name (``tm``) and the epoch, and returns ``"tm":…`` or
    ``"tms":"…"`` (the string variants add an ``s`` to the name).
    """
    if code < 8:
        suffix, quoted = _METADATA_NUMERIC[code]
        if quoted:
            return lambda name, epoch: f'"{name}s":"{epoch}{suffix if epoch else ""}"'
        return lambda name, epoch: f'"{name}":{epoch}{suffix if epoch else ""}'
    t_separator, add_z, tail = _METADATA_ISO[code - 8]
    return lambda name, epoch: f'"{name}s":"{epoch_to_iso(epoch, t_separator, add_z)}{tail}"'
