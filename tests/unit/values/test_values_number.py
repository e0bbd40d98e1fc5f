"""NUMBER decoding: exact OLR text for the encodings of redo-format.md §8.1 and edge cases."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replicator.values.number import (
    NumberError,
    decode_number,
    encode_number,
    number_json,
    number_text,
)

SPEC_SAMPLES = [
    ("80", "0"),
    ("c102", "1"),
    ("c20225", "136"),
    ("c3081c1b", "72726"),
    ("c202182e", "123.45"),
    ("c00b", "0.1"),
    ("c1020b", "1.1"),
    ("3e6466", "-1"),
    ("3d644e3866", "-123.45"),
]


@pytest.mark.parametrize(("hex_bytes", "text"), SPEC_SAMPLES)
def test_spec_samples(hex_bytes: str, text: str) -> None:
    assert number_text(bytes.fromhex(hex_bytes)) == text


# Values printed by OLR in the reference outputs (number-precision, data-types, null-handling).
REFERENCE_VALUES = [
    "0",
    "1",
    "-1",
    "100",
    "200",
    "999",
    "42",
    "12345.67",
    "-999.99",
    "0.5",
    "0.01",
    "3.14",
    "99999999999999999999999999999999999999",
    "-99999999999999999999999999999999999999",
    "9999999999.9999999999",
    "-9999999999.9999999999",
    "999.99",
    "-999.99",
    "2147483647",
    "-2147483648",
    "0.000000000000000000000000000000000001",
    "0.0000000001",
    "3.14159265358979323846264338327950288",
    "3.1415926536",
    "12345678901234567890",
    "12345678901234567890123456789012345678",
    "1234567890.123456789",
    "123.45",
]


@pytest.mark.parametrize("text", REFERENCE_VALUES)
def test_round_trip_reference_values(text: str) -> None:
    encoded = encode_number(text)
    assert number_text(encoded) == text
    assert decode_number(encoded) == Decimal(text)


def test_trailing_zero_of_last_pair_is_dropped_and_integers_padded() -> None:
    assert number_text(encode_number("1234567890.1234567890")) == "1234567890.123456789"
    assert number_text(encode_number("1.5")) == "1.5"
    assert number_text(encode_number("1E+6")) == "1000000"
    assert number_text(encode_number("-1E+6")) == "-1000000"
    assert number_text(encode_number("-0.001")) == "-0.001"


def test_huge_and_tiny_exponents_print_plain_decimal() -> None:
    assert number_text(bytes.fromhex("ff0b")) == "1" + "0" * 125
    assert number_text(encode_number("1e-127")) == "0." + "0" * 126 + "1"
    assert number_text(encode_number("-1e-127")) == "-0." + "0" * 126 + "1"
    # Values below 1e-128 have exponent byte 0x80, which OLR takes for zero.
    assert number_text(encode_number("1e-129")) == "0"
    assert number_text(bytes.fromhex("8002")) == "0"


def test_negative_terminator_optional_for_twenty_digit_mantissa() -> None:
    encoded = encode_number("-99999999999999999999999999999999999999")
    assert encoded[-1] == 0x66
    assert number_text(encoded[:-1]) == "-99999999999999999999999999999999999999"


def test_invalid_values() -> None:
    assert number_text(b"\x00") == "0"  # Oracle's -infinity: OLR prints 0
    with pytest.raises(NumberError) as error:
        number_text(b"\xc1")
    assert error.value.code == 50009
    assert number_text(b"\xc1\xff") is None  # digit byte out of range
    assert number_json(b"\xc1\xff") == b'"?"'
    assert number_json(b"\xc1\x02") == b"1"


@given(
    st.decimals(allow_nan=False, allow_infinity=False, places=20, min_value=Decimal("-1e18"), max_value=Decimal("1e18"))
)
def test_round_trip_matches_plain_decimal_text(value: Decimal) -> None:
    text = number_text(encode_number(value))
    expected = format(value, "f")
    if "." in expected:
        expected = expected.rstrip("0").rstrip(".")
    expected = "0" if expected in ("0", "-0") else expected
    assert text == expected
