"""INTERVAL codes, ROWID/UROWID, BOOLEAN/RAW and the time-zone region table."""

from __future__ import annotations

import pytest

from replicator.values.interval import (
    encode_interval_ds,
    encode_interval_ym,
    interval_ds_renderer,
    interval_ym_renderer,
)
from replicator.values.raw import boolean_text, raw_json
from replicator.values.rowid import rowid_text, urowid_text
from replicator.values.timezones import REGION_NAMES, region_name, zone_text

YM = [("14", "-14"), ('"14"', '"-14"'), ('"1 2"', '"-1 2"'), ('"1,2"', '"-1,2"'), ('"1-2"', '"-1-2"')]


@pytest.mark.parametrize("code", range(5))
def test_interval_ym_codes(code: int) -> None:
    render = interval_ym_renderer(code)
    assert (render(encode_interval_ym(1, 2)), render(encode_interval_ym(-1, -2))) == YM[code]


def test_interval_ym_spec_example_and_unknown() -> None:
    assert interval_ym_renderer(4)(bytes.fromhex("800000013e")) == '"1-2"'
    assert interval_ym_renderer(0)(bytes.fromhex("8000000130")) is None  # month byte 48
    assert interval_ym_renderer(0)(bytes.fromhex("800000013e00")) is None


DS = [
    ("93784500000000", "-93784000000005"),
    ("93784500000", "-93784000000"),
    ("93784500", "-93784000"),
    ("93785", "-93784"),
    ('"93784500000000"', '"-93784000000005"'),
    ('"93784500000"', '"-93784000000"'),
    ('"93784500"', '"-93784000"'),
    ('"93785"', '"-93784"'),
    ('"1 02:03:04.500000000"', '"-1 02:03:04.000000005"'),
    ('"1,02:03:04.500000000"', '"-1,02:03:04.000000005"'),
    ('"1-02:03:04.500000000"', '"-1-02:03:04.000000005"'),
]


@pytest.mark.parametrize("code", range(11))
def test_interval_ds_codes(code: int) -> None:
    render = interval_ds_renderer(code)
    positive = render(encode_interval_ds(1, 2, 3, 4, 500_000_000))
    negative = render(encode_interval_ds(-1, -2, -3, -4, -5))
    assert (positive, negative) == DS[code]


def test_interval_ds_unknown() -> None:
    good = encode_interval_ds(0, 0, 0, 0, 0)
    assert interval_ds_renderer(8)(good) == '"0 00:00:00.000000000"'
    assert interval_ds_renderer(0)(good[:4] + b"\x24" + good[5:]) is None  # hour byte 36
    assert interval_ds_renderer(0)(good[:10]) is None


def test_rowid() -> None:
    assert rowid_text(72726, 0x0600000E, 0) == "AAARwWAAYAAAAAOAAA"
    assert rowid_text(72726, (7 << 22) | 363, 0) == "AAARwWAAHAAAAFrAAA"


def test_urowid() -> None:
    data = (
        bytes([1])
        + (0x12345).to_bytes(4, "big")
        + (3).to_bytes(2, "big")
        + (7).to_bytes(2, "big")
        + (363).to_bytes(4, "big")
    )
    assert urowid_text(data) == "01c0016b.2345.0003"
    assert urowid_text(b"\x02" + data[1:]) is None
    assert urowid_text(data[:12]) is None


def test_boolean_and_raw() -> None:
    assert boolean_text(b"\x01") == "1"
    assert boolean_text(b"\x00") == "0"
    assert boolean_text(b"\x02") is None
    assert raw_json(b"\xde\xad\xbe\xef") == b'"deadbeef"'


def test_time_zone_regions() -> None:
    assert len(REGION_NAMES) == 595
    assert region_name(0x80A8) == "Africa/Abidjan"
    assert region_name(0x1234) == "TZ?"
    assert zone_text(0x14, 0x3C) == "+00:00"
    assert zone_text(0x19, 0x3C) == "+05:00"
    assert zone_text(0x0F, 0x3C) == "-05:00"
    assert zone_text(0x80, 0xA8) == "Africa/Abidjan"
