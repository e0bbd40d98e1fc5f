"""Block 0 (file header) and block 1 (redo log header) of a redo file (§1.2, §1.3).

Field values that OLR does not read (control sequence, misc flags, the redo log key...)
copy what the real 23ai and 19c archives in shared/fixtures/redo carry, so dumps of a
generated file look like a real one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from replicator.redogen import byteorder
from replicator.redogen.blocks import BLOCK_HEADER, seal, size_marker
from replicator.redogen.vectors import scn8

NO_SCN = 0xFFFFFFFFFFFFFFFF


@dataclass(slots=True)
class LogHeader:
    """What block 1 says about one redo log file."""

    sequence: int
    compat: int
    dbid: int
    db_name: str
    block_size: int
    file_blocks: int  # size of the online log, in blocks
    activation: int
    resetlogs: int
    resetlogs_scn: int
    thread: int
    first_scn: int
    first_time: int
    next_scn: int = NO_SCN  # NO_SCN while the log is current
    next_time: int = 0
    nab: int = 2  # next available block
    largest_lwn: int = 0
    file_number: int = 1
    control_seq: int = 0x4BC
    prev_resetlogs_scn: int = 1
    prev_resetlogs: int = 0


def file_header_block(block_size: int, blocks: int, compat: int) -> bytearray:
    """Block 0: size marker, block size, block count (without block 0), endianness magic."""
    buf = bytearray(block_size)
    buf[0:16] = bytes([0, size_marker(block_size), 0, 0, 0, 0, 0xC0, 0xFF]) + b"\0" * 7 + b"\x04"
    byteorder.pack_into(
        "<IIII",
        buf,
        20,
        block_size,
        blocks,
        0x7A7B7C7D,  # magic: 7D7C7B7A little, 7A7B7C7D big
        4 if compat >= 0x17000000 else 0x81A0,
    )
    seal(buf, block_size, checksum_at=16)  # block 0 keeps its checksum at +16
    return buf


def _scn(value: int, big: bool) -> bytes:
    return b"\xff" * 8 if value == NO_SCN else scn8(value, big)


def redo_header_block(h: LogHeader) -> bytearray:
    """Block 1, checksum included."""
    bs = h.block_size
    big = h.compat >= 0x0C200000  # 12.2+ writes header SCNs in the 0x8000 big form
    buf = bytearray(bs)
    BLOCK_HEADER.pack_into(buf, 0, 1, size_marker(bs), 0, 1, h.sequence, 0x8000, 0)
    name = h.db_name.encode("ascii")[:8].ljust(8, b"\0")
    byteorder.pack_into(
        "<II8sIIIHHI", buf, 20, h.compat, h.dbid, name, h.control_seq, h.file_blocks, bs, h.file_number, 2, h.activation
    )
    next_text = "ffffffffffffffff" if h.next_scn == NO_SCN else f"{h.next_scn:016x}"
    desc = f"T {h.thread:04d}, S {h.sequence:010d}, SCN 0x{h.first_scn:016x}-0x{next_text}".encode()
    buf[92 : 92 + len(desc)] = desc
    byteorder.pack_into("<II", buf, 156, h.nab, h.resetlogs)
    buf[164:172] = _scn(h.resetlogs_scn, big)
    byteorder.pack_into("<IH", buf, 172, 2, h.thread)
    buf[180:188] = _scn(h.first_scn, big)
    byteorder.pack_into("<I", buf, 188, h.first_time)
    buf[192:200] = _scn(h.next_scn, big)
    byteorder.pack_into("<IBBBB", buf, 200, h.next_time if h.next_scn != NO_SCN else 0, 0, 0, 8, 0x12)
    buf[208:216] = _scn(h.resetlogs_scn, big)  # enabled SCN/time: the thread was enabled at resetlogs
    byteorder.pack_into("<I", buf, 216, h.resetlogs)
    buf[220:228] = _scn(h.first_scn, big)  # thread-closed SCN/time
    byteorder.pack_into("<III", buf, 228, h.first_time, 0, 0x10800011)
    byteorder.pack_into("<I", buf, 252, 2)
    byteorder.pack_into("<I", buf, 268, h.largest_lwn)
    buf[272:280] = b"\xff" * 8
    buf[284:292] = scn8(h.prev_resetlogs_scn, False)
    byteorder.pack_into("<I", buf, 292, h.prev_resetlogs)
    # Thread enable indicator and redo log key: opaque in real files, derived from the DBID here.
    key = hashlib.sha256(byteorder.pack("<IIi", h.dbid, h.resetlogs, h.sequence)).digest()
    off = 432 if h.compat >= 0x17000000 else 448
    buf[off : off + 48] = key + key[:16]
    byteorder.pack_into("<H", buf, 480, 0x75)
    seal(buf, bs)
    return buf
