"""Native value texts equal the python renderers' on random and edge-case bytes."""

from __future__ import annotations

import random

import pytest

from replicator.formats.escape import escape_bytes
from replicator.native import core
from replicator.values.charset import get_charset
from replicator.values.datetime import decode_timestamp, decode_timestamp_tz
from replicator.values.floats import (
    binary_double_text,
    binary_float_text,
    encode_binary_double,
    encode_binary_float,
)
from replicator.values.interval import interval_ds_renderer, interval_ym_renderer
from replicator.values.number import NumberError, encode_number, number_text
from replicator.values.timefmt import timestamp_renderer, timestamp_tz_renderer
from replicator.values.timezones import REGION_NAMES

KINDS = ("number", "ts", "tstz", "iym", "ids", "str", "hex", "bfloat", "bdouble")


def native(kind: str, data: bytes, param: int = 0, offset: int = 0) -> bytes | None:
    return core().value_text(KINDS.index(kind), param, offset, data)


def _random_bytes(rng: random.Random, sizes: tuple[int, ...], lo: int = 0, hi: int = 255) -> bytes:
    return bytes(rng.randint(lo, hi) for _ in range(rng.choice(sizes)))


def test_numbers() -> None:
    rng = random.Random(1)
    values = [
        encode_number(v)
        for v in (
            "0",
            "1",
            "-1",
            "100",
            "0.01",
            "-0.5",
            "123456789012345678901234567890123456",
            "1e-130",
            "-1e125",
            "99.99",
            "-100.001",
            "10",
            "1000000",
        )
    ]
    values += [_random_bytes(rng, (1, 2, 3, 5, 8, 21)) for _ in range(20000)]
    for data in values:
        got = native("number", data)
        try:
            want = number_text(data)
        except NumberError:
            assert got is None, data.hex()
            continue
        if want is None:
            assert got is None, data.hex()
        elif got is not None:
            assert got == want.encode(), data.hex()
        else:
            pytest.fail(f"native declined a decodable NUMBER {data.hex()}")


def test_nanoseconds_of_large_epochs() -> None:
    from replicator.values.timefmt import nanos_text

    for year, extra in ((2026, b"\x3b\x9a\xc9\xff"), (1900, b"\x00\x00\x00\x01"), (1901, b""), (9999, b"")):
        data = bytes([year // 100 + 100, year % 100 + 100, 3, 7, 2, 45, 39]) + extra
        decoded = decode_timestamp(data)
        assert decoded is not None
        assert native("ts", data, 0) == nanos_text(*decoded).encode()
        assert native("ts", data, 4) == f'"{nanos_text(*decoded)}"'.encode()


@pytest.mark.parametrize("code", range(8))
def test_timestamps(code: int) -> None:
    rng = random.Random(code)
    render = timestamp_renderer(code)
    for i in range(5000):
        if i % 2:
            data = bytes(
                [
                    rng.randint(119, 121),
                    rng.randint(100, 199),
                    rng.randint(1, 12),
                    rng.randint(1, 31),
                    rng.randint(1, 24),
                    rng.randint(1, 60),
                    rng.randint(1, 60),
                ]
            )
            if rng.random() < 0.5:
                data += rng.randint(0, 999_999_999).to_bytes(4, "big")
        else:
            data = _random_bytes(rng, (7, 11, 5))
        offset = rng.choice((0, 3600, -19800))
        got = native("ts", data, code, offset)
        decoded = decode_timestamp(data, offset)
        if got is not None:
            assert decoded is not None and got == render(*decoded).encode(), data.hex()


@pytest.mark.parametrize("code", range(4))
def test_timestamps_tz(code: int) -> None:
    rng = random.Random(code)
    render = timestamp_tz_renderer(code)
    for _ in range(5000):
        data = bytes(
            [
                rng.randint(119, 121),
                rng.randint(100, 199),
                rng.randint(1, 12),
                rng.randint(1, 31),
                rng.randint(1, 24),
                rng.randint(1, 60),
                rng.randint(1, 60),
            ]
        )
        if rng.random() < 0.5:
            data += rng.randint(0, 0xFFFFFFFF).to_bytes(4, "big")
        if rng.random() < 0.5:
            data += bytes([rng.randint(0, 40), rng.randint(0, 120)])
        else:
            region = rng.choice((*REGION_NAMES, 0x8000, 0xFFFF))
            data += region.to_bytes(2, "big")
        got = native("tstz", data, code)
        decoded = decode_timestamp_tz(data)
        if got is not None:
            assert decoded is not None and got == render(*decoded).encode(), data.hex()


def test_intervals() -> None:
    rng = random.Random(5)
    for _ in range(20000):
        ym = (rng.randint(0x80000000 - 2000, 0x80000000 + 2000)).to_bytes(4, "big") + bytes([rng.randint(45, 75)])
        code = rng.randint(0, 4)
        want = interval_ym_renderer(code)(ym)
        got = native("iym", ym, code)
        if got is not None:
            assert want is not None and got == want.encode(), (ym.hex(), code)
        elif want is not None:
            pytest.fail(f"native declined {ym.hex()}")
        ds = (
            rng.choice((rng.randint(0, 0xFFFFFFFF), rng.randint(0x80000000 - 99999, 0x80000000 + 99999))).to_bytes(
                4, "big"
            )
            + bytes([rng.randint(35, 85), rng.randint(0, 120), rng.randint(0, 120)])
            + rng.randint(0x80000000 - 999_999_999, 0x80000000 + 999_999_999).to_bytes(4, "big")
        )
        code = rng.randint(0, 10)
        want = interval_ds_renderer(code)(ds)
        got = native("ids", ds, code)
        if got is not None:
            assert want is not None and got == want.encode(), (ds.hex(), code)


def test_strings_and_hex() -> None:
    rng = random.Random(7)
    utf8, cesu, utf16 = get_charset("AL32UTF8"), get_charset("UTF8"), get_charset("AL16UTF16")
    samples = ["plain", 'quote" slash/ back\\ tab\t nl\n', "\x00\x01\x1b\x1f\x7f", "żółw", "日本語", "😀 emoji"]
    values = [s.encode() for s in samples]
    values += [_random_bytes(rng, (0, 1, 3, 8, 20)) for _ in range(20000)]
    values += [rng.choice(samples).encode()[: rng.randint(0, 8)] for _ in range(2000)]
    # ASCII with escapes among runs of plain bytes, around the 8-byte steps of is_ascii
    values += [_random_bytes(rng, (7, 8, 9, 15, 16, 17, 40), 0, 127) for _ in range(5000)]
    values += [bytes(rng.choice(b'ab/\\"\n\x01') for _ in range(rng.randint(0, 30))) for _ in range(2000)]
    for data in values:
        for param, charset in ((0, utf8), (1, cesu), (2, utf16)):
            got = native("str", data, param)
            if got is not None:
                assert got == escape_bytes(charset.to_utf8(data)), data.hex()
        assert native("hex", data) == data.hex().encode()
    for text in samples:
        data = text.encode("utf-16-be")
        assert native("str", data, 2) == escape_bytes(utf16.to_utf8(data))


def test_binary_floats() -> None:
    rng = random.Random(9)
    specials = [encode_binary_float(v) for v in (0.0, -0.0, 1.0, -1.5, 3.4e38, 1e-45, 123456.7, 1e-5, 1e6)]
    doubles = [encode_binary_double(v) for v in (0.0, -0.0, 1.0, -2.5, 1e308, 5e-324, 1e-5, 123456.5, 1e16)]
    values = specials + [_random_bytes(rng, (4,)) for _ in range(20000)]
    for data in values:
        got = native("bfloat", data)
        if got is not None:
            assert got == binary_float_text(data).encode(), data.hex()
    for data in doubles + [_random_bytes(rng, (8,)) for _ in range(20000)]:
        got = native("bdouble", data)
        if got is not None:
            assert got == binary_double_text(data).encode(), data.hex()
