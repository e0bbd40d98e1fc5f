"""Small identifiers of redo: XID, UBA, DBA, ROWID and the redo time encoding (§9)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final, NamedTuple

from replicator.redogen import byteorder

_XID: Final = byteorder.Struct("<HHI")
_UBA: Final = byteorder.Struct("<IHBx")
_B64: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


class Xid(NamedTuple):
    """Transaction id: undo segment, slot, sequence."""

    usn: int
    slot: int
    sqn: int

    def pack(self) -> bytes:
        """u16 usn, u16 slot, u32 sqn."""
        return _XID.pack(self.usn, self.slot, self.sqn)

    @property
    def packed(self) -> int:
        """usn << 48 | slot << 32 | sqn, as replicator.events.Transaction.xid."""
        return self.usn << 48 | self.slot << 32 | self.sqn


class Uba(NamedTuple):
    """Undo block address: undo block DBA, block sequence, record number."""

    dba: int
    seq: int
    rec: int

    def pack(self) -> bytes:
        """u32 dba, u16 seq, u8 rec, pad."""
        return _UBA.pack(self.dba, self.seq, self.rec)


def dba(rfile: int, block: int) -> int:
    """Relative file number (top 10 bits) and block (low 22 bits)."""
    return (rfile & 0x3FF) << 22 | (block & 0x3FFFFF)


def _b64(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(_B64[value & 63])
        value >>= 6
    return "".join(reversed(chars))


def rowid(data_obj: int, block_address: int, slot: int) -> str:
    """Extended ROWID text: 6 chars data object, 3 rfile, 6 block, 3 slot."""
    return _b64(data_obj, 6) + _b64(block_address >> 22, 3) + _b64(block_address & 0x3FFFFF, 6) + _b64(slot, 3)


def redo_time(epoch: int, tz_offset: int = 0) -> int:
    """Epoch seconds -> redo time (31-day months since 1988) of the host's local wall clock."""
    t = datetime.fromtimestamp(epoch + tz_offset, tz=UTC)
    return (((((t.year - 1988) * 12 + t.month - 1) * 31 + t.day - 1) * 24 + t.hour) * 60 + t.minute) * 60 + t.second


def redo_time_to_epoch(value: int, tz_offset: int = 0) -> int:
    """Inverse of :func:`redo_time`."""
    sec, value = value % 60, value // 60
    minute, value = value % 60, value // 60
    hour, value = value % 24, value // 24
    day, value = value % 31 + 1, value // 31
    month, year = value % 12 + 1, value // 12 + 1988
    return int(datetime(year, month, day, hour, minute, sec, tzinfo=UTC).timestamp()) - tz_offset
