"""RAW (23), BLOB (113) and BOOLEAN (252) values.

RAW and BLOB print as lowercase hex strings. BOOLEAN (Oracle 23ai) is one byte, 0 or 1, and
prints as a bare number; anything else is an unknown value. These helpers are tiny, but they
keep every type family's rule in :mod:`replicator.values`.
"""

from __future__ import annotations


def raw_json(data: bytes) -> bytes:
    """JSON string of raw bytes: lowercase hex in quotes."""
    return b'"' + data.hex().encode("ascii") + b'"'


def boolean_text(data: bytes) -> str | None:
    """``0`` or ``1`` for a BOOLEAN value, None when the bytes are not a valid boolean."""
    if len(data) == 1 and data[0] <= 1:
        return "1" if data[0] else "0"
    return None
