"""OpenLogReplicator's JSON string escaping (olr-interfaces.md §2.6), on bytes.

It is not standard JSON escaping: ``/`` is escaped, ``\\t \\r \\n \\f \\b`` use short forms,
bytes 0-7, 11 and 14-30 become ``\\u00`` plus the byte value in *two decimal digits* (0x1B is
``\\u0027``), and byte 31, DEL and every byte >= 0x80 are copied unchanged. Strings are
escaped byte by byte, so multi-byte UTF-8 passes through untouched.
"""

from __future__ import annotations

import re
from typing import Final


def _replacement(byte: int) -> bytes:
    short = {0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0C: b"\\f", 0x0D: b"\\r"}
    if byte in short:
        return short[byte]
    if byte in b'"\\/':
        return b"\\" + bytes([byte])
    return b"\\u00%02d" % byte


_SPECIAL: Final = re.compile(rb'[\x00-\x1e"/\\]')
_REPLACEMENTS: Final[dict[bytes, bytes]] = {
    bytes([b]): _replacement(b) for b in (*range(0x1F), ord('"'), ord("/"), ord("\\"))
}


def _substitute(match: re.Match[bytes]) -> bytes:
    return _REPLACEMENTS[match.group()]


def escape_bytes(data: bytes) -> bytes:
    """Escape raw string bytes for the inside of a JSON string literal, OLR style."""
    if _SPECIAL.search(data) is None:
        return data
    return _SPECIAL.sub(_substitute, data)


def escape_str(text: str) -> bytes:
    """Escape a Python string (encoded as UTF-8) for the inside of a JSON string literal."""
    return escape_bytes(text.encode("utf-8", "surrogateescape"))


def quoted(text: str) -> bytes:
    """A complete JSON string literal for ``text``, OLR-escaped."""
    return b'"' + escape_str(text) + b'"'
