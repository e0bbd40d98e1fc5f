"""Block 0 (file header) and block 1 (redo log header) of a redo file (redo-format.md §1)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import reduce
from operator import xor

from replicator.errors import RedoLogError

MAGIC_LE = b"\x7d\x7c\x7b\x7a"
MAGIC_BE = b"\x7a\x7b\x7c\x7d"
BLOCK_SIZES = {512: 0x22, 1024: 0x22, 4096: 0x82}

# compatVsn ranges OpenLogReplicator accepts (redo-format.md §1.4).
VERSION_RANGES: tuple[tuple[int, int], ...] = (
    (0x0B200000, 0x0B200400),  # 11.2.0.0 - 11.2.0.4
    (0x0C100000, 0x0C100200),  # 12.1
    (0x0C200000, 0x0C200100),  # 12.2
    (0x12000000, 0x120E0000),  # 18
    (0x13000000, 0x131C0000),  # 19
    (0x15000000, 0x15080000),  # 21
    (0x17000000, 0x171A0000),  # 23 / 26ai
)

SCN_NONE = 0xFFFFFFFFFFFFFFFF
NAB_NONE = 0xFFFFFFFF  # OLR's "zero block": NAB of a log still being written


def version_string(v: int) -> str:
    """Render compatVsn as Oracle does ("19.0.0", "23.6.0", "11.2.0.4")."""
    if v < 0x12000000:
        return f"{v >> 24}.{(v >> 20) & 0xF}.{(v >> 16) & 0xF}.{(v >> 8) & 0xFF}"
    return f"{v >> 24}.{(v >> 16) & 0xFF}.{(v >> 8) & 0xFF}"


def read_scn8(buf: bytes | memoryview, off: int, endian: str) -> int:
    """Read an 8-byte header SCN (§9.1); returns SCN_NONE for the all-FF "none" value."""
    base, w, hi = struct.unpack_from(endian + "IHH", buf, off)
    if base == 0xFFFFFFFF and w == 0xFFFF:
        return SCN_NONE
    if w & 0x8000:
        return base | (hi << 32) | ((w & 0x7FFF) << 48)
    return base | (w << 32)


@dataclass(slots=True)
class RedoHeader:
    """What the parser needs from blocks 0 and 1 of a redo file."""

    endian: str  # "<" little-endian, ">" big-endian
    block_size: int
    blocks: int  # number of blocks after block 0 (file header +24)
    sequence: int
    compat: int
    dbid: int
    db_name: str
    activation: int
    nab: int  # next available block: blocks holding data, counting blocks 0 and 1
    resetlogs: int
    resetlogs_scn: int
    thread: int
    first_scn: int
    first_time: int  # raw redo time
    next_scn: int  # SCN_NONE while an online log is current
    next_time: int
    description: str
    path: str = field(default="?", compare=False)  # the file, for error messages: not part of what it says

    @property
    def version(self) -> str:
        return version_string(self.compat)

    @property
    def vector_header_size(self) -> int:
        """Change-vector header length: 24 bytes before 12.1, 32 from 12.1 on (§4.1)."""
        return 24 if self.compat < 0x0C100000 else 32

    @property
    def big_scn(self) -> bool:
        return self.compat >= 0x0C200000

    @property
    def is_current_online(self) -> bool:
        return self.next_scn == SCN_NONE


def block_checksum_ok(block: bytes | memoryview) -> bool:
    """The XOR of all 16-bit words of a block is zero (redo-format.md §2.2), in either byte order."""
    # Two blocks per file: plain Python (importing numpy for them cost the start-up 0.1 s).
    return reduce(xor, memoryview(bytes(block)).cast("H"), 0) == 0


def parse_headers(data: bytes | memoryview, path: str = "?", verify_checksum: bool = True) -> RedoHeader:
    """Parse and check blocks 0 and 1. ``data`` must hold at least the first two blocks.

    Both header blocks must pass the block checksum (unless ``verify_checksum`` is off,
    ``disable-checks`` bit 4), block 1 must carry block number 1 and the block size of
    block 0, and NAB must lie within the blocks block 0 announces: a single flipped bit in
    NAB would otherwise make a reader stop early (or read stale blocks) without an error.
    """
    if len(data) < 512 + 16:
        raise RedoLogError(f"file {path}: too short to be a redo log ({len(data)} bytes)", 40010)
    magic = bytes(data[28:32])
    if magic == MAGIC_LE:
        endian = "<"
    elif magic == MAGIC_BE:
        endian = ">"
    else:
        raise RedoLogError(f"file {path}: not an Oracle redo log (bad magic {magic.hex()} at offset 28)", 40005)
    if data[0] != 0:
        raise RedoLogError(f"file {path}: bad file header (byte 0 is {data[0]:#x})", 40001)
    block_size, blocks = struct.unpack_from(endian + "II", data, 20)
    marker = BLOCK_SIZES.get(block_size)
    if marker is None or data[1] != marker:
        raise RedoLogError(f"file {path}: bad block size {block_size} (marker {data[1]:#x})", 40001)
    if len(data) < 2 * block_size:
        raise RedoLogError(f"file {path}: truncated before block 1", 40007)
    b1 = memoryview(data)[block_size : 2 * block_size]
    u32 = struct.Struct(endian + "I")
    if b1[0] != 1 or b1[1] != marker:
        raise RedoLogError(f"file {path}: bad block 1 header", 40002)
    if verify_checksum:
        for number, block in ((0, memoryview(data)[:block_size]), (1, b1)):
            if not block_checksum_ok(block):
                raise RedoLogError(
                    f"file {path}, block {number} (offset {number * block_size}): header block checksum mismatch", 40006
                )
    if u32.unpack_from(b1, 4)[0] != 1:
        raise RedoLogError(f"file {path}: block 1 header carries block number {u32.unpack_from(b1, 4)[0]}", 40002)
    header_bs = u32.unpack_from(b1, 44)[0]
    if header_bs and header_bs != block_size:
        raise RedoLogError(f"file {path}: block 1 says block size {header_bs}, block 0 says {block_size}", 40001)
    nab = u32.unpack_from(b1, 156)[0]
    if nab not in (0, NAB_NONE) and not 2 <= nab <= blocks + 1:
        raise RedoLogError(f"file {path}: NAB {nab} outside the file's {blocks + 1} blocks (block 1 offset 156)", 40002)
    compat = u32.unpack_from(b1, 20)[0]
    if compat != 0 and not any(lo <= compat <= hi for lo, hi in VERSION_RANGES):
        raise RedoLogError(f"file {path}: unsupported database version {compat:#010x}", 40003)
    desc = bytes(b1[92:156]).split(b"\x00", 1)[0].decode("ascii", "replace")
    return RedoHeader(
        endian=endian,
        block_size=block_size,
        blocks=blocks,
        sequence=u32.unpack_from(b1, 8)[0],
        compat=compat,
        dbid=u32.unpack_from(b1, 24)[0],
        db_name=bytes(b1[28:36]).split(b"\x00", 1)[0].decode("ascii", "replace"),
        activation=u32.unpack_from(b1, 52)[0],
        nab=nab,
        resetlogs=u32.unpack_from(b1, 160)[0],
        resetlogs_scn=read_scn8(b1, 164, endian),
        thread=struct.unpack_from(endian + "H", b1, 176)[0],
        first_scn=read_scn8(b1, 180, endian),
        first_time=u32.unpack_from(b1, 188)[0],
        next_scn=read_scn8(b1, 192, endian),
        next_time=u32.unpack_from(b1, 200)[0],
        description=desc,
        path=path,
    )
