"""The native shortest float text equals repr() / str(numpy.float32) on random bit patterns."""

from __future__ import annotations

import math
import random

from replicator.formats.textvalues import float_text
from replicator.native import values
from replicator.values.floats import decode_binary_double, decode_binary_float


def _check(data: bytes, single: bool) -> int:
    native = values().float_repr(data, single)
    if native is None:
        return 0  # the python renderer takes it
    value = decode_binary_float(data) if single else decode_binary_double(data)
    assert math.isfinite(value)
    assert native.decode() == float_text(value, single), (data.hex(), value)
    return 1


def test_random_bit_patterns() -> None:
    rng = random.Random(14)
    native = 0
    for _ in range(40000):
        native += _check(rng.randbytes(4), True)
        native += _check(rng.randbytes(8), False)
    assert native > 70000


def test_workload_like_values() -> None:
    from replicator.values.floats import encode_binary_double, encode_binary_float

    rng = random.Random(15)
    values = [0.0, -0.0, 1.0, -1.5, 0.1, 1e-4, 1e-5, 1e6, 999999.9, 1e15, 1e16, 1e17, 123456789.0, 2.5e-300]
    values += [float(f"{rng.uniform(-1e6, 1e6):.5g}") for _ in range(5000)]
    values += [rng.uniform(-1e12, 1e12) for _ in range(5000)]
    values += [rng.uniform(-10, 10) * 10 ** rng.randint(-30, 30) for _ in range(5000)]
    for value in values:
        _check(encode_binary_double(value), False)
        _check(encode_binary_float(value), True)
