"""BINARY_FLOAT (type 100) and BINARY_DOUBLE (type 101), printed like OLR's C++ streams.

Oracle stores IEEE-754 big-endian with an order-preserving transform: a set top bit marks a
non-negative value (clear it and read as IEEE), otherwise every bit is inverted. OLR rebuilds
the value arithmetically and prints it with ``std::ostream << value``, i.e. ``%g`` with six
significant digits (``inf``/``nan`` included, although they are not valid JSON).

Two quirks of OLR's arithmetic are reproduced on purpose: subnormals come out at half their
value (the exponent is taken as -127/-1023 without the implicit bit), and NaNs other than the
canonical quiet NaN are read as huge finite numbers. BINARY_DOUBLE is computed in ``long
double`` there, so those huge values exceed a Python float; they are printed from an exact
:class:`~decimal.Decimal` instead.
"""

from __future__ import annotations

import math
import struct
from decimal import Context, Decimal
from typing import Final

_EXACT: Final = Context(prec=2000)


def _significand_exponent(raw: int, exp_bits: int, frac_bits: int) -> tuple[int, int, int] | float:
    """Split an order-transformed value into (sign, significand, binary exponent) like OLR.

    The value is ``sign * significand * 2**exponent``; specials come back as a float.
    """
    exp_mask = (1 << exp_bits) - 1
    frac_mask = (1 << frac_bits) - 1
    bias = exp_mask >> 1
    sign_bit = 1 << (exp_bits + frac_bits)
    exponent = (raw >> frac_bits) & exp_mask
    significand = raw & frac_mask
    if raw & sign_bit:
        if significand == 0:
            if exponent == 0:
                return 0.0
            if exponent == exp_mask:
                return math.inf
        elif significand == 1 << (frac_bits - 1) and exponent == exp_mask:
            return math.nan
        if exponent > 0:
            significand |= 1 << frac_bits
        return 1, significand, exponent - bias - frac_bits
    if exponent == 0 and significand == frac_mask:
        return -math.inf
    significand = frac_mask - significand
    if exponent < exp_mask:
        significand += 1 << frac_bits
    # The stored exponent is complemented as well: unbiased = (mask - e) - bias.
    return -1, significand, (bias + 1) - exponent - frac_bits


def _format_g(sign: int, significand: int, exponent: int, long_double: bool) -> str:
    """Format ``sign * significand * 2**exponent`` as C's ``%g`` would."""
    if not long_double or -1022 <= exponent + significand.bit_length() - 1 <= 1023:
        value = math.ldexp(significand, exponent)
        if value != 0.0 or significand == 0:
            return "%g" % (sign * value)
    exact = _EXACT.multiply(Decimal(sign * significand), _EXACT.power(Decimal(2), exponent))
    # Decimal's own "g" switches notation at other thresholds than C, so apply C's rule.
    mantissa, _, exp_text = format(exact, ".5e").partition("e")
    exp = int(exp_text)
    if -4 <= exp < 6:
        return _strip_zeros(format(exact, f".{5 - exp}f"))
    return f"{_strip_zeros(mantissa)}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def _strip_zeros(text: str) -> str:
    """Drop trailing fractional zeros (and a bare point), as ``%g`` does."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def binary_float_text(data: bytes) -> str:
    """Return OLR's text for a 4-byte BINARY_FLOAT value."""
    parts = _significand_exponent(int.from_bytes(data, "big"), 8, 23)
    if isinstance(parts, float):
        return "%g" % parts
    return _format_g(*parts, long_double=False)


def binary_double_text(data: bytes) -> str:
    """Return OLR's text for an 8-byte BINARY_DOUBLE value."""
    parts = _significand_exponent(int.from_bytes(data, "big"), 11, 52)
    if isinstance(parts, float):
        return "%g" % parts
    return _format_g(*parts, long_double=True)


def decode_binary_float(data: bytes) -> float:
    """Decode a BINARY_FLOAT to a Python float (standard IEEE semantics, for other formats)."""
    return _decode_ieee(int.from_bytes(data, "big"), 0x80000000, "f", 4)


def decode_binary_double(data: bytes) -> float:
    """Decode a BINARY_DOUBLE to a Python float (standard IEEE semantics, for other formats)."""
    return _decode_ieee(int.from_bytes(data, "big"), 1 << 63, "d", 8)


def _decode_ieee(raw: int, sign_bit: int, code: str, size: int) -> float:
    """Undo Oracle's order-preserving transform and unpack as IEEE-754."""
    bits = raw ^ sign_bit if raw & sign_bit else ~raw & ((1 << (8 * size)) - 1)
    return struct.unpack(">" + code, bits.to_bytes(size, "big"))[0]


def encode_binary_float(value: float) -> bytes:
    """Encode a float as Oracle BINARY_FLOAT bytes (order-preserving transform)."""
    return _encode_ieee(struct.unpack(">I", struct.pack(">f", value))[0], 32)


def encode_binary_double(value: float) -> bytes:
    """Encode a float as Oracle BINARY_DOUBLE bytes (order-preserving transform)."""
    return _encode_ieee(struct.unpack(">Q", struct.pack(">d", value))[0], 64)


def _encode_ieee(bits: int, width: int) -> bytes:
    sign_bit = 1 << (width - 1)
    stored = bits | sign_bit if not bits & sign_bit else ~bits & ((1 << width) - 1)
    return stored.to_bytes(width // 8, "big")
