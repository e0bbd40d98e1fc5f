"""ROWID text (the `rid` field) and UROWID column values.

An extended ROWID prints as 18 base-64 characters (alphabet ``A-Za-z0-9+/``): 6 for the data
object id, 3 for the relative file number (DBA >> 22), 6 for the block (DBA & 0x3FFFFF) and
3 for the slot (redo-format.md §9.3). UROWID columns hold a 13-byte physical form that OLR
prints as ``%08x.%04x.%04x``: DBA, data object id cut to 16 bits, slot.
"""

from __future__ import annotations

from typing import Final

_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _base64(value: int, width: int) -> str:
    """``width`` base-64 digits of ``value``, most significant first (higher bits dropped)."""
    return "".join(_ALPHABET[(value >> (6 * shift)) & 0x3F] for shift in range(width - 1, -1, -1))


def rowid_text(data_obj: int, dba: int, slot: int) -> str:
    """Extended ROWID text of a row: data object id, block address (rfile/block) and slot."""
    return _base64(data_obj, 6) + _base64(dba >> 22, 3) + _base64(dba & 0x3FFFFF, 6) + _base64(slot, 3)


def urowid_text(data: bytes) -> str | None:
    """Text of a UROWID value, or None unless it is the 13-byte physical form (first byte 1).

    The 12 bytes after the marker are read as data object (4), slot (2), relative file (2)
    and block (4), as OLR does.
    """
    if len(data) != 13 or data[0] != 0x01:
        return None
    data_obj = int.from_bytes(data[1:5], "big")
    slot = int.from_bytes(data[5:7], "big")
    rfile = int.from_bytes(data[7:9], "big")
    dba = (int.from_bytes(data[9:13], "big") | (rfile << 22)) & 0xFFFFFFFF
    return f"{dba:08x}.{data_obj & 0xFFFF:04x}.{slot:04x}"
