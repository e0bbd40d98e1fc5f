"""Oracle internal value encodings (redo-format.md §8), written from Python values.

Every encoder returns the exact bytes Oracle stores in a row piece (and so in redo);
multi-byte fields are big-endian on every platform. ``None`` (SQL NULL) is never
encoded here: NULL is structural (null bitmap, 0xFF length byte), and Oracle stores an
empty string or empty RAW as NULL, which :func:`replicator.redogen.coltypes` handles.
"""

from __future__ import annotations

import math
import struct
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import cache

from replicator.errors import DataError

_NUMBER_MAX_MANTISSA = 20  # base-100 digits Oracle keeps


def encode_number(value: int | float | str | Decimal) -> bytes:
    """NUMBER (type 2): exponent byte plus base-100 mantissa; negatives get a 0x66 terminator."""
    d = value if isinstance(value, Decimal) else Decimal(repr(value) if isinstance(value, float) else value)
    if not d.is_finite():
        raise DataError(f"NUMBER cannot hold {value!r}", 50009)
    if d == 0:
        return b"\x80"
    sign, digit_tuple, exp = d.as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    assert isinstance(exp, int)
    stripped = digits.rstrip("0")  # trailing zeros move into the exponent
    exp += len(digits) - len(stripped)
    digits = stripped
    if exp % 2:  # align the decimal point on a base-100 boundary
        digits += "0"
        exp -= 1
    if len(digits) % 2:
        digits = "0" + digits
    pairs = [int(digits[i : i + 2]) for i in range(0, len(digits), 2)]
    while pairs and pairs[-1] == 0:
        pairs.pop()
        exp += 2
    if len(pairs) > _NUMBER_MAX_MANTISSA:
        raise DataError(f"NUMBER {value!r} has more than 40 significant digits", 50009)
    expo = len(pairs) - 1 + exp // 2  # base-100 exponent of the first digit
    if not -65 <= expo <= 62:
        raise DataError(f"NUMBER {value!r} is out of Oracle's range", 50009)
    head = 0xC1 + expo  # 0x80 sign bit | (exponent + 65)
    if not sign:
        return bytes([head]) + bytes(p + 1 for p in pairs)
    out = bytes([~head & 0xFF]) + bytes(101 - p for p in pairs)
    return out + b"\x66" if len(pairs) < _NUMBER_MAX_MANTISSA else out


def _order_preserving(raw: bytes) -> bytes:
    """IEEE big-endian -> Oracle form: set the sign bit of positives, invert negatives."""
    if raw[0] & 0x80:
        return bytes(b ^ 0xFF for b in raw)
    return bytes([raw[0] | 0x80]) + raw[1:]


def encode_binary_float(value: float) -> bytes:
    """BINARY_FLOAT (type 100): 4 bytes; -0.0 is stored as +0.0 like Oracle does."""
    return _order_preserving(struct.pack(">f", 0.0 if value == 0 else value))


def encode_binary_double(value: float) -> bytes:
    """BINARY_DOUBLE (type 101): 8 bytes, same transform as BINARY_FLOAT."""
    if isinstance(value, float) and math.isnan(value):
        return _order_preserving(struct.pack(">d", math.nan))
    return _order_preserving(struct.pack(">d", 0.0 if value == 0 else value))


def _date_bytes(year: int, month: int, day: int, hour: int, minute: int, second: int) -> bytes:
    if year >= 0:
        century, yy = 100 + year // 100, 100 + year % 100
    else:  # BC years count down from 100
        century, yy = 100 - (-year) // 100, 100 - (-year) % 100
    return bytes([century, yy, month, day, hour + 1, minute + 1, second + 1])


class OraDateTime:
    """A wall-clock value with nanoseconds and a proleptic year that may be BC (negative).

    Python's datetime stops at year 1 and microseconds; Oracle needs both more.
    """

    __slots__ = ("day", "hour", "minute", "month", "nanos", "second", "year")

    def __init__(
        self, year: int, month: int = 1, day: int = 1, hour: int = 0, minute: int = 0, second: int = 0, nanos: int = 0
    ):
        if not (
            1 <= month <= 12
            and 1 <= day <= 31
            and 0 <= hour < 24
            and 0 <= minute < 60
            and 0 <= second < 60
            and 0 <= nanos < 1_000_000_000
            and year != 0
        ):
            raise DataError(f"invalid date/time {year}-{month}-{day} {hour}:{minute}:{second}.{nanos}", 60002)
        self.year, self.month, self.day = year, month, day
        self.hour, self.minute, self.second, self.nanos = hour, minute, second, nanos

    @classmethod
    def from_datetime(cls, value: datetime | date) -> OraDateTime:
        """Naive wall clock of a datetime (an aware one keeps its own local wall clock)."""
        if not isinstance(value, datetime):
            return cls(value.year, value.month, value.day)
        return cls(value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond * 1000)

    def to_datetime(self) -> datetime:
        """As a naive datetime (AD only; nanoseconds truncated to microseconds)."""
        return datetime(self.year, self.month, self.day, self.hour, self.minute, self.second, self.nanos // 1000)

    def shifted(self, seconds: int) -> OraDateTime:
        """The same instant moved by ``seconds`` (AD dates only)."""
        moved = self.to_datetime().replace(microsecond=0) + timedelta(seconds=seconds)
        return OraDateTime(moved.year, moved.month, moved.day, moved.hour, moved.minute, moved.second, self.nanos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OraDateTime) and all(getattr(self, a) == getattr(other, a) for a in self.__slots__)

    def __repr__(self) -> str:
        return (
            f"OraDateTime({self.year}-{self.month:02}-{self.day:02} "
            f"{self.hour:02}:{self.minute:02}:{self.second:02}.{self.nanos:09})"
        )


def encode_date(value: OraDateTime) -> bytes:
    """DATE (type 12): 7 bytes, fractional seconds dropped."""
    return _date_bytes(value.year, value.month, value.day, value.hour, value.minute, value.second)


def encode_timestamp(value: OraDateTime) -> bytes:
    """TIMESTAMP (180) and TIMESTAMP WITH LOCAL TIME ZONE (231): 7 bytes, 11 with a fraction."""
    head = encode_date(value)
    return head + struct.pack(">I", value.nanos) if value.nanos else head


def encode_timestamp_tz(value: OraDateTime, offset_minutes: int) -> bytes:
    """TIMESTAMP WITH TIME ZONE (181): the UTC wall clock, BE32 nanoseconds and a fixed offset.

    ``value`` is the local wall clock at ``offset_minutes`` east of UTC. Region-named zones
    (the 0x80 form) are not generated.
    """
    if not -12 * 60 <= offset_minutes <= 14 * 60:
        raise DataError(f"time zone offset {offset_minutes} minutes out of range", 60002)
    utc = value.shifted(-offset_minutes * 60)
    hours, minutes = divmod(abs(offset_minutes), 60)
    sign = -1 if offset_minutes < 0 else 1
    return encode_date(utc) + struct.pack(">I", value.nanos) + bytes([20 + sign * hours, 60 + sign * minutes])


def encode_interval_ym(years: int, months: int) -> bytes:
    """INTERVAL YEAR TO MONTH (182): BE32 years + 2^31, months + 60 (both carry the sign)."""
    if (years and months and (years < 0) != (months < 0)) or not -11 <= months <= 11:
        raise DataError(f"invalid interval {years}-{months}", 60002)
    return struct.pack(">I", (years + 0x80000000) & 0xFFFFFFFF) + bytes([months + 60])


def encode_interval_ds(days: int, hours: int, minutes: int, seconds: int, nanos: int) -> bytes:
    """INTERVAL DAY TO SECOND (183): BE32 days, h/m/s + 60, BE32 nanoseconds (all + bias)."""
    parts = (days, hours, minutes, seconds, nanos)
    if any(p > 0 for p in parts) and any(p < 0 for p in parts):
        raise DataError(f"interval parts must share one sign: {parts}", 60002)
    return (
        struct.pack(">I", (days + 0x80000000) & 0xFFFFFFFF)
        + bytes([hours + 60, minutes + 60, seconds + 60])
        + struct.pack(">I", (nanos + 0x80000000) & 0xFFFFFFFF)
    )


def _cesu8(text: str) -> bytes:
    """Oracle's UTF8 (CESU-8): supplementary characters as two 3-byte surrogates."""
    out = bytearray()
    for ch in text:
        if ord(ch) > 0xFFFF:
            high, low = struct.unpack(">2H", ch.encode("utf-16-be"))
            out += (chr(high) + chr(low)).encode("utf-8", "surrogatepass")
        else:
            out += ch.encode("utf-8", "surrogateescape")
    return bytes(out)


# Oracle character set ids -> Python codecs (the sets OLR's tests use most); the other single-byte
# sets OLR knows are encoded with the inverse of the parser's byte table (:func:`_table_codec`).
CHARSETS: dict[int, str] = {1: "ascii", 31: "latin-1", 178: "cp1252", 871: "cesu-8", 873: "utf-8", 2000: "utf-16-be"}
CHARSET_IDS: dict[str, int] = {
    "US7ASCII": 1,
    "WE8ISO8859P1": 31,
    "WE8MSWIN1252": 178,
    "UTF8": 871,
    "AL32UTF8": 873,
    "AL16UTF16": 2000,
}
_ESCAPE = 0xDC00  # a byte b >= 0x80 that is no character of the set travels as U+DC00+b (Python's surrogateescape)


@cache
def _table_codec(charset_id: int) -> tuple[str, dict[str, int]] | None:
    """Byte -> character table of a single-byte set OLR knows, and the inverse (first byte
    wins: a 7-bit set's top half repeats its bottom half); None for other sets."""
    from replicator.values.charset import CHARSET_NAMES, CharsetError, get_charset

    name = CHARSET_NAMES.get(charset_id)
    try:
        table = getattr(get_charset(name), "table", None) if name else None
    except CharsetError:
        return None
    if not isinstance(table, str) or len(table) != 256:
        return None
    inverse: dict[str, int] = {}
    for byte, ch in enumerate(table):
        if ch != "\ufffd":
            inverse.setdefault(ch, byte)
    return table, inverse


def can_encode(charset_id: int) -> bool:
    """True when redogen can write text in this character set."""
    return charset_id in CHARSETS or _table_codec(charset_id) is not None


def encode_text(text: str, charset_id: int) -> bytes:
    """A character value in the column's character set. A character U+DC80..U+DCFF stands for
    the byte it escapes (:func:`decode_text`): bytes stored as they are, as
    ``UTL_RAW.CAST_TO_VARCHAR2`` stores them whatever the database character set."""
    return _encode(text, charset_id, None)


def convert_text(text: str, charset_id: int) -> bytes:
    """:func:`encode_text` as Oracle's client conversion does it: a character the set does not
    have becomes its replacement character ``?``."""
    return _encode(text, charset_id, "?")


def decode_text(data: bytes, charset_id: int) -> str:
    """The text :func:`encode_text` turns back into ``data``: each byte that is no character of
    the set (or not the first byte for its character) as its escape U+DC00+byte."""
    codec = CHARSETS.get(charset_id)
    if codec in ("utf-8", "ascii", "latin-1", "cp1252"):
        return data.decode(codec, "surrogateescape")
    if codec == "cesu-8":  # surrogate pairs of 3 bytes each make one character
        try:
            return data.decode("utf-8", "surrogatepass").encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeError:
            return data.decode("utf-8", "surrogateescape")
    if codec is not None:
        return data.decode(codec)
    tc = _table_codec(charset_id)
    if tc is None:
        raise DataError(f"character set id {charset_id} is not supported by redogen", 10042)
    table, inverse = tc
    return "".join(table[b] if inverse.get(table[b]) == b else chr(_ESCAPE + b) for b in data)


def _encode(text: str, charset_id: int, replacement: str | None) -> bytes:
    codec = CHARSETS.get(charset_id)
    try:
        if codec == "cesu-8":
            return _cesu8(text)
        if codec is not None:
            return text.encode(codec, "surrogateescape")
    except UnicodeEncodeError as exc:
        if replacement is None:
            raise DataError(f"{text!r} cannot be stored in character set {charset_id}: {exc}", 50010) from None
        out = bytearray()
        for ch in text:
            try:
                out += _encode(ch, charset_id, None)
            except DataError:
                out += replacement.encode()
        return bytes(out)
    tc = _table_codec(charset_id)
    if tc is None:
        raise DataError(f"character set id {charset_id} is not supported by redogen", 10042)
    inverse = tc[1]
    out = bytearray()
    for ch in text:
        byte = inverse.get(ch)
        if byte is None and 0xDC80 <= ord(ch) <= 0xDCFF:
            byte = ord(ch) - _ESCAPE
        if byte is None:
            if replacement is None:
                raise DataError(f"{text!r} cannot be stored in character set {charset_id}: {ch!r}", 50010)
            byte = inverse[replacement]
        out.append(byte)
    return bytes(out)


def utc_epoch(value: datetime) -> int:
    """Epoch seconds of an aware datetime, or of a naive one read as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp())
