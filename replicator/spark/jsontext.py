"""JSON as the producers print it: numbers kept as their text, values as text pairs.

Shared by the OpenLogReplicator parser (:mod:`.parse`) and the Debezium one (:mod:`.debezium`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

_DECODER: Final = json.JSONDecoder(parse_float=str, parse_int=str)  # keep numbers as printed
# OLR prints infinities and NaN of BINARY_FLOAT/DOUBLE unquoted (not JSON): quote them.
_NONFINITE: Final = re.compile(r'(?<=[:\[,])\s*(-?)(inf|nan)(?=\s*[,}\]])')


def decode_json(data: bytes | str) -> Any:
    """JSON with numbers kept as their text; unquoted inf/nan tolerated."""
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError:
        fixed = _NONFINITE.sub(lambda m: f'"{m[1]}{"Infinity" if m[2] == "inf" else "NaN"}"', text)
        return _DECODER.decode(fixed)


def text_map(image: Any) -> list[tuple[str, str | None]] | None:
    """A before/after object as (name, value text) pairs; None when absent."""
    if not isinstance(image, dict):
        return None
    out: list[tuple[str, str | None]] = []
    for name, value in image.items():
        if value is None or isinstance(value, str):
            out.append((name, value))
        elif isinstance(value, bool):
            out.append((name, "true" if value else "false"))
        else:
            out.append((name, json.dumps(value, separators=(",", ":"))))
    return out
