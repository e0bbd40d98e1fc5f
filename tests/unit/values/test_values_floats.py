"""BINARY_FLOAT/BINARY_DOUBLE: C++ stream formatting (%g, 6 digits) and OLR's arithmetic quirks."""

from __future__ import annotations

import math

import pytest

from replicator.values.floats import (
    binary_double_text,
    binary_float_text,
    decode_binary_double,
    decode_binary_float,
    encode_binary_double,
    encode_binary_float,
)


def test_spec_encodings() -> None:
    assert binary_float_text(bytes.fromhex("bf800000")) == "1"
    assert binary_float_text(bytes.fromhex("407fffff")) == "-1"
    assert binary_float_text(bytes.fromhex("80000000")) == "0"
    assert binary_double_text(bytes.fromhex("bff0000000000000")) == "1"
    assert binary_double_text(bytes.fromhex("400fffffffffffff")) == "-1"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.14, "3.14"),
        (-1.5, "-1.5"),
        (9.99, "9.99"),
        (256.0, "256"),
        (-256.0, "-256"),
        (0.5, "0.5"),
        (3.14159265, "3.14159"),
        (1.0, "1"),
        (0.0, "0"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (1e20, "1e+20"),
        (1e-5, "1e-05"),
    ],
)
def test_binary_float_reference_values(value: float, text: str) -> None:
    assert binary_float_text(encode_binary_float(value)) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.718281828459045, "2.71828"),
        (1.0e100, "1e+100"),
        (-1.5, "-1.5"),
        (65536.125, "65536.1"),
        (-65536.125, "-65536.1"),
        (0.0625, "0.0625"),
        (3.14159265358979323846, "3.14159"),
        (1234567.0, "1.23457e+06"),
        (123456.5, "123456"),
        (math.nan, "nan"),
        (1.7976931348623157e308, "1.79769e+308"),
    ],
)
def test_binary_double_reference_values(value: float, text: str) -> None:
    assert binary_double_text(encode_binary_double(value)) == text


def test_quirks_reproduced() -> None:
    # OLR builds subnormals without the implicit bit but with exponent -1023: half the value.
    assert binary_double_text(encode_binary_double(5e-324)) == "2.47033e-324"
    assert binary_float_text(encode_binary_float(1e-40)) == "4.99997e-41"
    # A NaN with another payload becomes a finite long double just above DBL_MAX.
    assert binary_double_text(bytes.fromhex("fff0000000000001")) == "1.79769e+308"
    assert binary_float_text(bytes.fromhex("ffc00000")) == "nan"
    assert binary_float_text(bytes.fromhex("7fffffff")) == "-0"


def test_plain_decoders() -> None:
    assert decode_binary_float(encode_binary_float(-2.5)) == -2.5
    assert decode_binary_double(encode_binary_double(1e-310)) == 1e-310
