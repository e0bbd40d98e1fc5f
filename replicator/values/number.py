"""Oracle NUMBER (type 2): base-100 mantissa with an exponent byte, rendered as OLR prints it.

OpenLogReplicator prints NUMBER as plain decimal text: no exponent ever, digit pairs for the
integer part (the first pair without its leading zero), ``00`` padding when the exponent runs
past the stored digits, ``0.`` plus ``00`` pairs for small fractions, and the last fractional
pair loses a trailing zero. The text is exact, so 38-digit values and values like ``1e-130``
come out in full. The encoding is in redo-format.md §8.1.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Final, TypeGuard

from replicator.errors import InternalError

_ZERO: Final = 0x80
_NEGATIVE_TERMINATOR: Final = 0x66  # trailing byte of negative numbers, not a digit
_POSITIVE_BIAS: Final = 0xC0  # exponent byte of a positive number with zero integer pairs
_NEGATIVE_BIAS: Final = 0x3F  # same for negative numbers (the byte is complemented)


def _digit_tables(digit_of: Callable[[int], int]) -> tuple[tuple[str | None, ...], ...]:
    """Per mantissa byte: the pair as two digits, as a leading pair, as a last fraction pair."""
    pairs, leading, last = [], [], []
    for byte in range(256):
        digit = digit_of(byte)
        valid = 0 <= digit <= 99
        pairs.append(f"{digit:02d}" if valid else None)
        leading.append(str(digit) if valid else None)
        last.append((f"{digit:02d}" if digit % 10 else str(digit // 10)) if valid else None)
    return tuple(pairs), tuple(leading), tuple(last)


_POSITIVE: Final = _digit_tables(lambda byte: byte - 1)
_NEGATIVE: Final = _digit_tables(lambda byte: 101 - byte)


class NumberError(InternalError):
    """A NUMBER whose first byte cannot start any value (OLR error 50009)."""

    code = 50009


def number_text(data: bytes) -> str | None:
    """Return OLR's decimal text for a NUMBER value.

    Returns None when a mantissa byte is outside 1..101 (the value cannot be decoded; OLR
    would print garbage there, we print ``"?"``). Raises :class:`NumberError` (50009) for a
    one-byte value other than 0x80 and 0x00, as OLR does.
    """
    first = data[0]
    if first == _ZERO:
        return "0"
    if len(data) >= 2:
        if first > _ZERO:
            return _compose("", data[1:], first - _POSITIVE_BIAS, _POSITIVE)
        mantissa = data[1:-1] if data[-1] == _NEGATIVE_TERMINATOR else data[1:]
        return _compose("-", mantissa, _NEGATIVE_BIAS - first, _NEGATIVE)
    if first == 0:
        # A lone 0x00 (Oracle's -infinity) falls into OLR's "just zero" branch.
        return "0"
    raise NumberError(f"error parsing numeric value: {data.hex()}")


def _compose(sign: str, mantissa: bytes, integer_pairs: int, tables: tuple[tuple[str | None, ...], ...]) -> str | None:
    """Lay out the base-100 ``mantissa`` with ``integer_pairs`` pairs before the point."""
    pairs, leading, last = tables
    texts = list(map(pairs.__getitem__, mantissa))
    if not _all_digits(texts):
        return None
    # Every byte is a digit now, so the leading and last tables hold text for it too.
    if integer_pairs <= 0:
        # 0.<zero pairs><pairs>, the last pair without a trailing zero.
        return f"{sign}0.{'00' * -integer_pairs}{''.join(texts[:-1])}{last[mantissa[-1]]}"
    # The first pair loses its leading zero; the exponent may reach past the stored
    # digits, which pads the integer with zero pairs.
    count = len(texts)
    if integer_pairs >= count:
        return f"{sign}{leading[mantissa[0]]}{''.join(texts[1:])}{'00' * (integer_pairs - count)}"
    return (
        f"{sign}{leading[mantissa[0]]}{''.join(texts[1:integer_pairs])}."
        f"{''.join(texts[integer_pairs:-1])}{last[mantissa[-1]]}"
    )


def _all_digits(texts: list[str | None]) -> TypeGuard[list[str]]:
    """Whether the mantissa is non-empty and every byte of it is a base-100 digit."""
    return bool(texts) and None not in texts


def decode_number(data: bytes) -> Decimal | None:
    """Decode a NUMBER to an exact :class:`~decimal.Decimal` (None if undecodable)."""
    text = number_text(data)
    return None if text is None else Decimal(text)


def number_json(data: bytes) -> bytes:
    """Return the JSON literal OLR prints for a NUMBER (unquoted), or ``"?"`` if undecodable."""
    text = number_text(data)
    return b'"?"' if text is None else text.encode("ascii")


def encode_number(value: Decimal | int | str) -> bytes:
    """Encode a finite number as Oracle NUMBER bytes (used by tests and the redo generator).

    Digits beyond Oracle's 20 mantissa bytes are not rounded here; callers pass values that
    fit (up to 38-40 significant digits).
    """
    number = Decimal(value)
    if not number.is_finite():
        raise ValueError(f"cannot encode {value!r} as NUMBER")
    if number.is_zero():
        return bytes([_ZERO])
    sign, digit_tuple, exponent = number.as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)  # digits before the decimal point
    if point % 2:
        digits, point = "0" + digits, point + 1
    if len(digits) % 2:
        digits += "0"
    pairs = [int(digits[i : i + 2]) for i in range(0, len(digits), 2)]
    while pairs[0] == 0:
        pairs.pop(0)
        point -= 2
    while pairs[-1] == 0:
        pairs.pop()
    integer_pairs = point // 2
    if not sign:
        return bytes([_POSITIVE_BIAS + integer_pairs] + [p + 1 for p in pairs])
    mantissa = [101 - p for p in pairs]
    if len(mantissa) < 20:
        mantissa.append(_NEGATIVE_TERMINATOR)
    return bytes([_NEGATIVE_BIAS - integer_pairs] + mantissa)
