"""OLR-compatible decoders for Oracle's Unicode character sets, used when bytes are not clean.

Valid input never comes here: the codecs in :mod:`replicator.values.charset` pass valid
UTF-8/UTF-16 straight through Python's C codecs. These loops reproduce how OpenLogReplicator
walks malformed input (how many bytes a bad sequence swallows, which lenient forms it still
accepts, such as overlong UTF-8 or CESU surrogate pairs) so the output bytes stay identical.
Each returns the decoded code points and the number of bad characters (each became U+FFFD).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

REPLACEMENT: Final = 0xFFFD


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _decode(data: bytes, char: Callable[[bytes, int], tuple[int, int]], ascii_bytes: bool) -> tuple[list[int], int]:
    """Walk ``data`` one character at a time: ``char(data, i)`` decodes the one at ``i`` as
    (code point or -1 when bad, index after it); a bad one becomes U+FFFD and is counted.
    With ``ascii_bytes`` a byte below 0x80 is a character by itself."""
    out: list[int] = []
    bad = 0
    i, n = 0, len(data)
    while i < n:
        if ascii_bytes and data[i] < 0x80:
            out.append(data[i])
            i += 1
            continue
        code, i = char(data, i)
        if code < 0:
            bad += 1
            code = REPLACEMENT
        out.append(code)
    return out, bad


def al32utf8_code_points(data: bytes) -> tuple[list[int], int]:
    """Decode AL32UTF8 (UTF-8) like OLR: 1-4 byte forms, no check for overlong encodings."""
    return _decode(data, _utf8_char, True)


def _utf8_char(data: bytes, i: int) -> tuple[int, int]:
    """One AL32UTF8 character of two bytes or more at ``i``: (code point or -1, next index)."""
    n = len(data)
    b1 = data[i]
    i += 1
    code = -1
    if i < n and _continuation(b2 := data[i]):
        i += 1
        if b1 & 0xE0 == 0xC0:
            code = ((b1 & 0x1F) << 6) | (b2 & 0x3F)
        elif i < n and _continuation(b3 := data[i]):
            i += 1
            if b1 & 0xF0 == 0xE0:
                code = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
            elif i < n:
                b4 = data[i]
                i += 1
                if _continuation(b4) and b1 & 0xF8 == 0xF0:
                    value = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
                    if value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF:
                        code = value
        elif i < n:
            i += 1  # a non-continuation third byte is consumed with the bad sequence
    elif i < n:
        i += 1  # likewise for the second byte
    return code, i


def cesu8_code_points(data: bytes) -> tuple[list[int], int]:
    """Decode Oracle UTF8 (CESU-8) like OLR: surrogate pairs as two 3-byte forms."""
    return _decode(data, _cesu8_char, True)


def _cesu8_char(data: bytes, i: int) -> tuple[int, int]:
    """One CESU-8 character of two bytes or more at ``i``: (code point or -1, next index)."""
    n = len(data)
    b1 = data[i]
    i += 1
    code = -1
    if i < n:
        b2 = data[i]
        i += 1
        if b1 & 0xE0 == 0xC0:
            if _continuation(b2):
                code = ((b1 & 0x1F) << 6) | (b2 & 0x3F)
        elif i < n:
            b3 = data[i]
            i += 1
            if b1 == 0xED and b2 & 0xF0 == 0xA0:
                code, i = _cesu_pair(data, i, b2, b3)
            elif _continuation(b2) and _continuation(b3):
                code = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
    return code, i


def _cesu_pair(data: bytes, i: int, b2: int, b3: int) -> tuple[int, int]:
    """Finish a CESU-8 surrogate pair after its first three bytes; -1 marks a bad one."""
    n = len(data)
    if not _continuation(b3) or i >= n:
        return -1, i
    b4 = data[i]
    i += 1
    if b4 != 0xED or i >= n:
        return -1, i
    b5 = data[i]
    i += 1
    if b5 & 0xF0 != 0xB0 or i >= n:
        return -1, i
    b6 = data[i]
    i += 1
    if not _continuation(b6):
        return -1, i
    code = (((b2 & 0x0F) << 16) | ((b3 & 0x3F) << 10) | ((b5 & 0x0F) << 6) | (b6 & 0x3F)) + 0x10000
    return (code if code <= 0x10FFFF else -1), i


def al16utf16_code_points(data: bytes) -> tuple[list[int], int]:
    """Decode AL16UTF16 (UTF-16 big-endian) like OLR, including its handling of odd lengths."""
    return _decode(data, _utf16_char, False)


def _utf16_char(data: bytes, i: int) -> tuple[int, int]:
    """One AL16UTF16 character at ``i`` (a lone last byte is a bad one): (code point or -1, next index)."""
    n = len(data)
    b1 = data[i]
    code = -1
    if i + 1 >= n:
        return code, i + 1
    b2 = data[i + 1]
    i += 2
    if b1 & 0xFC == 0xD8:
        if i + 1 < n:
            b3, b4 = data[i], data[i + 1]
            if b3 & 0xFC == 0xDC:
                code = 0x10000 + (((b1 & 0x03) << 18) | (b2 << 10) | ((b3 & 0x03) << 8) | b4)
        i = min(i + 2, n)
    elif b1 & 0xFC != 0xDC:
        code = (b1 << 8) | b2
    return code, i


def encode_utf8(code_points: list[int]) -> bytes:
    """Encode code points as OLR does: plain UTF-8, lone surrogates as 3-byte forms."""
    return "".join(map(chr, code_points)).encode("utf-8", "surrogatepass")
