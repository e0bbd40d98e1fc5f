"""Value encoders against the spec's example tables (redo-format.md §8), plus round trips."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replicator.errors import ConfigError, DataError
from replicator.redogen import encode as enc
from replicator.redogen.coltypes import encode_value, parse_type

NUMBERS = [
    ("80", 0),
    ("C102", 1),
    ("C20225", 136),
    ("C3081C1B", 72726),
    ("C202182E", "123.45"),
    ("C00B", "0.1"),
    ("C1020B", "1.1"),
    ("3E6466", -1),
    ("3D644E3866", "-123.45"),
]


@pytest.mark.parametrize("hexa,value", NUMBERS)
def test_number_examples(hexa: str, value: object) -> None:
    assert enc.encode_number(value).hex().upper() == hexa


def decode_number(b: bytes) -> Decimal:
    """§8.1 written independently for the round trip."""
    if b == b"\x80":
        return Decimal(0)
    if b[0] & 0x80:
        e = (b[0] & 0x7F) - 65
        digits = [x - 1 for x in b[1:]]
        sign = 1
    else:
        e = ((~b[0]) & 0x7F) - 65
        body = b[1:-1] if b[-1] == 0x66 else b[1:]
        digits = [101 - x for x in body]
        sign = -1
    total = sum(Decimal(d) * Decimal(100) ** (e - k) for k, d in enumerate(digits))
    return sign * total


@given(
    st.decimals(
        allow_nan=False, allow_infinity=False, places=None, min_value=Decimal("-1e60"), max_value=Decimal("1e60")
    ).filter(lambda d: len(d.normalize().as_tuple().digits) <= 38)
)
@settings(max_examples=300, deadline=None)
def test_number_round_trip(d: Decimal) -> None:
    d = d.normalize()
    if d != 0 and (abs(d) < Decimal("1e-120")):
        return
    got = decode_number(enc.encode_number(d))
    assert got == d


def test_number_order_is_bytewise() -> None:
    values = [Decimal(x) for x in ("-1000", "-1.5", "-1", "-0.01", "0", "0.01", "1", "1.5", "99", "100", "1e10")]
    encoded = [enc.encode_number(v) for v in values]
    assert encoded == sorted(encoded)


def test_number_limits() -> None:
    with pytest.raises(DataError):
        enc.encode_number("1e200")
    with pytest.raises(DataError):
        enc.encode_number(Decimal("1." + "1" * 45))


@pytest.mark.parametrize("value,hexa", [(1.0, "BF800000"), (-1.0, "407FFFFF"), (0.0, "80000000")])
def test_binary_float_examples(value: float, hexa: str) -> None:
    assert enc.encode_binary_float(value).hex().upper() == hexa


@pytest.mark.parametrize("value,hexa", [(1.0, "BFF0000000000000"), (-1.0, "400FFFFFFFFFFFFF")])
def test_binary_double_examples(value: float, hexa: str) -> None:
    assert enc.encode_binary_double(value).hex().upper() == hexa


@given(st.floats(allow_nan=False, allow_infinity=True))
def test_binary_double_round_trip(x: float) -> None:
    b = enc.encode_binary_double(x)
    raw = bytes([b[0] & 0x7F]) + b[1:] if b[0] & 0x80 else bytes(v ^ 0xFF for v in b)
    assert struct.unpack(">d", raw)[0] == (0.0 if x == 0 else x)


def test_date_example() -> None:
    assert enc.encode_date(enc.OraDateTime(2026, 3, 7, 1, 44, 37)).hex().upper() == "787E0307022D26"


def test_bc_date() -> None:
    b = enc.encode_date(enc.OraDateTime(-4712, 1, 1))
    assert -((100 - b[0]) * 100 + (100 - b[1])) == -4712


def test_timestamp_lengths() -> None:
    assert len(enc.encode_timestamp(enc.OraDateTime(2020, 1, 1))) == 7
    ts = enc.encode_timestamp(enc.OraDateTime(2020, 1, 1, nanos=123456789))
    assert len(ts) == 11 and struct.unpack(">I", ts[7:])[0] == 123456789


@pytest.mark.parametrize("offset,tail", [(0, "143C"), (300, "193C"), (-300, "0F3C"), (-30, "141E")])
def test_tstz_offsets(offset: int, tail: str) -> None:
    b = enc.encode_timestamp_tz(enc.OraDateTime(2025, 6, 1, 12, 0, 0), offset)
    assert len(b) == 13 and b[11:].hex().upper() == tail
    hour = b[4] - 1  # stored as UTC
    assert hour == (12 - offset // 60) % 24 if offset % 60 == 0 else True


def test_intervals() -> None:
    assert enc.encode_interval_ym(1, 2).hex().upper() == "800000013E"
    ds = enc.encode_interval_ds(-1, -2, -3, -4, -5)
    assert struct.unpack(">I", ds[:4])[0] - 0x80000000 == -1 and ds[4] == 58 and ds[5] == 57 and ds[6] == 56
    assert struct.unpack(">I", ds[7:])[0] - 0x80000000 == -5
    with pytest.raises(DataError):
        enc.encode_interval_ds(1, -1, 0, 0, 0)


def test_text_charsets() -> None:
    assert enc.encode_text("hello world", 873) == b"hello world"
    assert enc.encode_text("é", 2000) == b"\x00\xe9"
    assert enc.encode_text("\U0001f600", 871) == bytes.fromhex("eda0bdedb880")  # CESU-8
    with pytest.raises(DataError):
        enc.encode_text("é", 1)


def test_column_values() -> None:
    ids = (873, 2000)
    assert encode_value(parse_type("VARCHAR2(5)"), "", ids) is None  # '' is NULL in Oracle
    assert encode_value(parse_type("CHAR(4)"), "ab", ids) == b"ab  "
    assert encode_value(parse_type("NCHAR(2)"), "a", ids) == b"\x00a\x00 "
    assert encode_value(parse_type("RAW(4)"), "0aff", ids) == b"\x0a\xff"
    assert encode_value(parse_type("NUMBER(10,2)"), "1.50", ids) == enc.encode_number("1.5")
    assert len(encode_value(parse_type("TIMESTAMP(3)"), "2024-01-01 00:00:00.123456789", ids)) == 11
    assert encode_value(parse_type("TIMESTAMP(0)"), "2024-01-01 00:00:00.9", ids) == encode_value(
        parse_type("DATE"), "2024-01-01", ids
    )
    tstz = encode_value(parse_type("TIMESTAMP WITH TIME ZONE"), "2024-01-01 05:30:00 +05:30", ids)
    assert tstz[:7] == enc.encode_date(enc.OraDateTime(2024, 1, 1)) and tstz[11:] == bytes([25, 90])
    ltz = encode_value(parse_type("TIMESTAMP WITH LOCAL TIME ZONE"), "2024-01-01 10:00:00 +02:00", ids, 0)
    assert ltz == enc.encode_date(enc.OraDateTime(2024, 1, 1, 8))
    assert encode_value(parse_type("INTERVAL DAY TO SECOND"), "-1 02:03:04.5", ids) == enc.encode_interval_ds(
        -1, -2, -3, -4, -500000000
    )
    assert encode_value(parse_type("BOOLEAN"), True, ids) == b"\x01"


def test_type_parsing() -> None:
    t = parse_type("VARCHAR2(10 CHAR)")
    assert (t.type_code, t.length, t.charset_form) == (1, 40, 1)
    t = parse_type("NUMBER(10,2)")
    assert (t.type_code, t.precision, t.scale) == (2, 10, 2)
    assert parse_type("TIMESTAMP(3) WITH TIME ZONE").type_code == 181
    assert parse_type("INTERVAL DAY(3) TO SECOND(2)").scale == 2
    with pytest.raises(ConfigError):
        parse_type("LONG RAW")
