"""JSON as the producers print it: numbers kept as their text, values as text pairs.

Shared by the OpenLogReplicator parser (:mod:`.parse`) and the Debezium one (:mod:`.debezium`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

_DECODER: Final = json.JSONDecoder(parse_float=str, parse_int=str)  # keep numbers as printed
# OLR prints infinities and NaN of BINARY_FLOAT/DOUBLE unquoted (not JSON): quote them.
_MINUS_ZERO: Final = re.compile(rb"-0[,}\]\s]")
_NONFINITE: Final = re.compile(r"(?<=[:\[,])\s*(-?)(inf|nan)(?=\s*[,}\]])")
try:  # msgspec decodes 2-3x faster; fractions and exponents come as their text, integers as int
    import msgspec

    _FAST: Any = msgspec.json.Decoder(float_hook=str)
    _FAST_ERRORS: tuple[type[Exception], ...] = (msgspec.DecodeError,)
except ImportError:  # pragma: no cover - msgspec is in the spark extra
    _FAST, _FAST_ERRORS = None, ()


def decode_json(data: bytes | str) -> Any:
    """JSON with numbers kept as their text; unquoted inf/nan tolerated."""
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError:
        fixed = _NONFINITE.sub(lambda m: f'"{m[1]}{"Infinity" if m[2] == "inf" else "NaN"}"', text)
        return _DECODER.decode(fixed)


def decode_message(data: bytes) -> Any:
    """A Kafka message as :func:`decode_json` reads it, except that integers may come as ``int``
    (their text is ``str(value)``, see :func:`value_text`)."""
    # An integer -0 would lose its sign: its token is followed by , } ] or a space (text such as a
    # date "2024-05-01" holds "-0" followed by a digit and decodes fast).
    if _FAST is not None and (b"-0" not in data or _MINUS_ZERO.search(data) is None):
        try:
            return _FAST.decode(data)
        except _FAST_ERRORS:
            pass  # not UTF-8, unquoted inf/nan, not JSON: the standard decoder copes or says why
    return decode_json(data)


def value_text(value: Any) -> str | None:
    """A decoded JSON value as text: numbers as printed, true/false, other values as JSON."""
    if value is None or value.__class__ is str:
        return value
    if value.__class__ is bool:
        return "true" if value else "false"
    if value.__class__ is int:
        return str(value)
    return json.dumps(value, separators=(",", ":"))


def text_map(image: Any) -> list[tuple[str, str | None]] | None:
    """A before/after object as (name, value text) pairs; None when absent."""
    if not isinstance(image, dict):
        return None
    return [(name, value_text(value)) for name, value in image.items()]
