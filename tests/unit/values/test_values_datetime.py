"""DATE/TIMESTAMP/TSTZ/TSLTZ decoding and every `timestamp`, `timestamp-tz`, metadata code."""

from __future__ import annotations

import pytest

from replicator.values.datetime import (
    TimestampRangeError,
    decode_timestamp,
    decode_timestamp_tz,
    encode_timestamp,
    encode_timestamp_tz,
    epoch_to_iso,
)
from replicator.values.timefmt import (
    metadata_renderer,
    nanos_text,
    timestamp_renderer,
    timestamp_tz_renderer,
)

SAMPLE = encode_timestamp(2025, 6, 15, 10, 30, 0, 123456789)

TIMESTAMP_CODES = [
    "1749983400123456789",
    "1749983400123457",
    "1749983400123",
    "1749983400",
    '"1749983400123456789"',
    '"1749983400123457"',
    '"1749983400123"',
    '"1749983400"',
    '"2025-06-15T10:30:00.123456789Z"',
    '"2025-06-15T10:30:00.123457Z"',
    '"2025-06-15T10:30:00.123Z"',
    '"2025-06-15T10:30:00Z"',
    '"2025-06-15 10:30:00.123456789"',
    '"2025-06-15 10:30:00.123457"',
    '"2025-06-15 10:30:00.123"',
    '"2025-06-15 10:30:00"',
]


def test_spec_date_example() -> None:
    assert decode_timestamp(bytes.fromhex("787e0307022d26")) == (1772847877, 0)


@pytest.mark.parametrize("code", range(16))
def test_timestamp_codes(code: int) -> None:
    decoded = decode_timestamp(SAMPLE)
    assert decoded is not None
    assert timestamp_renderer(code)(*decoded) == TIMESTAMP_CODES[code]


def test_rounding_carries_into_seconds() -> None:
    decoded = decode_timestamp(encode_timestamp(2026, 12, 31, 23, 59, 59, 999_999_999))
    assert decoded is not None
    assert timestamp_renderer(7)(*decoded) == '"1798761600"'  # timestamp-variants reference
    assert timestamp_renderer(15)(*decoded) == '"2027-01-01 00:00:00"'
    assert timestamp_renderer(14)(*decoded) == '"2027-01-01 00:00:00.000"'
    assert timestamp_renderer(12)(*decoded) == '"2026-12-31 23:59:59.999999999"'
    half = decode_timestamp(encode_timestamp(2026, 3, 1, 8, 0, 0, 500_000_000))
    assert half is not None and timestamp_renderer(7)(*half) == '"1772352001"'


def test_invalid_fields_are_unknown() -> None:
    assert decode_timestamp(b"\x78\x7e\x03\x07\x02\x2d") is None  # 6 bytes
    assert decode_timestamp(bytes.fromhex("787e0d07022d26")) is None  # month 13
    assert decode_timestamp(bytes.fromhex("787e0307022d3d")) is None  # second 60
    assert (
        decode_timestamp(encode_timestamp(2020, 1, 1, nanos=0, size=11)[:7] + (1_000_000_000).to_bytes(4, "big"))
        is None
    )
    # The day is only checked against 1..31: 31 February is accepted as 2 March.
    feb31 = decode_timestamp(encode_timestamp(2023, 2, 31))
    assert feb31 is not None and epoch_to_iso(feb31[0], False, False) == "2023-03-03 00:00:00"


def test_bc_dates_and_range() -> None:
    first = decode_timestamp(encode_timestamp(-4712, 1, 1))
    assert first == (-210831897600, 0)
    assert epoch_to_iso(first[0], False, False) == "-4712-01-01 00:00:00"
    # OLR's BC fraction runs backwards and its reverse calendar mirrors the time of day.
    bc = decode_timestamp(encode_timestamp(-1, 1, 1, 0, 0, 1, 250_000_000))
    assert bc == (-62167132800, 750_000_000)
    assert epoch_to_iso(-62167132799, True, True) == "-0001-01-02T23:59:59Z"
    with pytest.raises(TimestampRangeError) as error:
        epoch_to_iso(253402300800, False, False)
    assert error.value.code == 10069
    assert epoch_to_iso(253402300799, False, False) == "9999-12-31 23:59:59"


def test_local_time_zone_subtracts_db_offset() -> None:
    decoded = decode_timestamp(encode_timestamp(2025, 1, 1, 2, 0, 0), tz_offset=7200)
    assert decoded is not None and epoch_to_iso(decoded[0], False, False) == "2025-01-01 00:00:00"


TZ_CODES = [
    '"1712345678123456789,Europe/Warsaw"',
    '"1712345678123457,Europe/Warsaw"',
    '"1712345678123,Europe/Warsaw"',
    '"1712345678,Europe/Warsaw"',
    '"2024-04-05T19:34:38.123456789Z Europe/Warsaw"',
    '"2024-04-05T19:34:38.123457Z Europe/Warsaw"',
    '"2024-04-05T19:34:38.123Z Europe/Warsaw"',
    '"2024-04-05T19:34:38Z Europe/Warsaw"',
    '"2024-04-05 19:34:38.123456789 Europe/Warsaw"',
    '"2024-04-05 19:34:38.123457 Europe/Warsaw"',
    '"2024-04-05 19:34:38.123 Europe/Warsaw"',
    '"2024-04-05 19:34:38 Europe/Warsaw"',
]


@pytest.mark.parametrize("code", range(12))
def test_timestamp_tz_codes(code: int) -> None:
    decoded = decode_timestamp_tz(encode_timestamp_tz(2024, 4, 5, 19, 34, 38, 123456789, "Europe/Warsaw"))
    assert decoded is not None
    assert timestamp_tz_renderer(code)(*decoded) == TZ_CODES[code]


def test_timestamp_tz_offsets_and_unknown_region() -> None:
    for zone in ("+00:00", "+05:30", "-05:00", "-00:30"):
        decoded = decode_timestamp_tz(encode_timestamp_tz(2024, 1, 1, 0, 0, 0, 0, zone))
        assert decoded is not None and decoded[2] == zone
    data = encode_timestamp_tz(2024, 1, 1, 0, 0, 0, 0, "+00:00")[:11] + b"\xff\xff"
    assert decode_timestamp_tz(data) == (1704067200, 0, "TZ?")
    assert decode_timestamp_tz(data[:12]) is None


METADATA_CODES = [
    '"tm":1772847880000000000',
    '"tm":1772847880000000',
    '"tm":1772847880000',
    '"tm":1772847880',
    '"tms":"1772847880000000000"',
    '"tms":"1772847880000000"',
    '"tms":"1772847880000"',
    '"tms":"1772847880"',
    '"tms":"2026-03-07T01:44:40.000000000Z"',
    '"tms":"2026-03-07T01:44:40Z.000000Z"',
    '"tms":"2026-03-07T01:44:40.000Z"',
    '"tms":"2026-03-07T01:44:40Z"',
    '"tms":"2026-03-07 01:44:40.000000000"',
    '"tms":"2026-03-07 01:44:40.000000"',
    '"tms":"2026-03-07 01:44:40.000"',
    '"tms":"2026-03-07 01:44:40"',
]


@pytest.mark.parametrize("code", range(16))
def test_metadata_codes(code: int) -> None:
    assert metadata_renderer(code)("tm", 1772847880) == METADATA_CODES[code]


def test_metadata_zero_epoch_and_prefixes() -> None:
    assert metadata_renderer(0)("tm", 0) == '"tm":0'
    assert metadata_renderer(6)("b_tm", 0) == '"b_tms":"0"'
    assert metadata_renderer(2)("e_tm", 5) == '"e_tm":5000'


def test_nanos_text_large_and_negative() -> None:
    assert nanos_text(1_000_000_000, 5) == "1000000000000000005"
    assert nanos_text(-5, 1) == "-4999999999"
    assert nanos_text(-1_500_000_000, 0) == "-1500000000000000000"
    assert nanos_text(-1_500_000_000, 250) == "-1499999999999999750"
    # A negative multiple of 1e9 with a fraction wraps like OLR's unsigned arithmetic.
    assert nanos_text(-2_000_000_000, 1) == "-2" + str((1 << 64) - 1)[-18:]
