"""Blocks of a redo file: block headers and checksums, records packed into LWNs (§2, §3).

:func:`pack_lwn` lays records out exactly as the reader of §3.2 walks them: a record
never starts in the last 20 bytes of a block, continues after the next block's 16-byte
header, and every LWN starts at offset 16 of a fresh block with the 68-byte header. Block
checksums are filled in afterwards for many blocks at once with numpy (:func:`seal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from replicator.redogen import byteorder

BLOCK_HEADER: Final = byteorder.Struct("<BBHIIHH")  # type, size marker, 0, block, sequence, first-record, checksum
RECORD_HEADER: Final = byteorder.Struct("<IBBHIHHII")  # size, vld, ?, wrap, base, subscn, 0, con_uid, 0
LWN_HEADER: Final = byteorder.Struct("<HHII4sIHH8sIHHI")  # num, nst, len, len, ?, SCN8, 0, SCN8, time
VLD_DATA, VLD_LWN = 0x01, 0x04


def size_marker(block_size: int) -> int:
    """Byte +1 of every block: 0x22 for 512/1024-byte blocks, 0x82 for 4096."""
    if block_size not in (512, 1024, 4096):
        raise ValueError(f"unsupported redo block size {block_size}")
    return 0x82 if block_size == 4096 else 0x22


@dataclass(slots=True)
class Record:
    """One redo record before placement. ``body`` is its change vectors (size % 4 == 0).

    After :func:`pack_lwn` the placement fields say where it landed.
    """

    scn: int
    subscn: int
    body: bytes
    time: int = 0  # time of its LWN (epoch seconds once the stream has placed it)
    vector_offsets: list[int] = field(default_factory=list)  # offsets of vectors inside ``body``
    header_size: int = 24  # 68 when it opens an LWN
    block: int = 0  # placement: block number and offset of the record start
    offset: int = 0
    lwn_block: int = 0  # first block of the LWN holding it
    sequence: int = 0  # log sequence of the file holding it
    con_uid: int | None = None  # CON_UID in its header (multitenant: its container's); None: the stream's

    @property
    def size(self) -> int:
        """Record length with its header."""
        return self.header_size + len(self.body)


def layout(sizes: Sequence[int], block_size: int) -> tuple[list[tuple[int, int]], list[int], int]:
    """Record start positions (block index, offset), per-block first boundary, block count."""
    starts: list[tuple[int, int]] = []
    boundary: dict[int, int] = {}
    blk, off = 0, 16
    for size in sizes:
        if off >= block_size - 20:  # the reader starts nothing in the last 20 bytes
            blk, off = blk + 1, 16
        starts.append((blk, off))
        boundary.setdefault(blk, off)
        remaining = size
        while True:
            take = min(remaining, block_size - off)
            remaining -= take
            off += take
            if remaining == 0:
                break
            blk, off = blk + 1, 16
        if off < block_size - 20:  # where the record ends, if a record could still start there
            boundary.setdefault(blk, off)
        if off == block_size:
            blk, off = blk + 1, 16
    nblocks = blk + 1 if off > 16 else blk
    return starts, [boundary.get(i, 0) for i in range(nblocks)], nblocks


def pack_lwn(
    records: Sequence[Record], block_size: int, first_block: int, sequence: int, con_uid: int, lwn_time: int
) -> bytearray:
    """Blocks of one LWN (checksums still zero); sets each record's placement fields."""
    records[0].header_size = 68
    for r in records[1:]:
        r.header_size = 24
    starts, boundaries, nblocks = layout([r.size for r in records], block_size)
    buf = bytearray(nblocks * block_size)
    marker = size_marker(block_size)
    for i in range(nblocks):
        BLOCK_HEADER.pack_into(buf, i * block_size, 1, marker, 0, first_block + i, sequence, 0x8000 | boundaries[i], 0)
    lwn_scn = records[0].scn
    max_scn = max(r.scn for r in records)
    usable = block_size - 16
    for r, (blk, off) in zip(records, starts):
        vld = VLD_DATA | (VLD_LWN if r.header_size == 68 else 0)
        uid = con_uid if r.con_uid is None else r.con_uid
        head = RECORD_HEADER.pack(r.size, vld, 0, (r.scn >> 32) & 0xFFFF, r.scn & 0xFFFFFFFF, r.subscn, 0, uid, 0)
        if r.header_size == 68:
            head += LWN_HEADER.pack(
                0,
                1,
                nblocks,
                nblocks,
                b"\x0a\0\0\0",
                lwn_scn & 0xFFFFFFFF,
                (lwn_scn >> 32) & 0xFFFF,
                0,
                b"\0" * 8,
                max_scn & 0xFFFFFFFF,
                (max_scn >> 32) & 0xFFFF,
                0,
                lwn_time,
            )
        data = head + r.body
        r.block, r.offset, r.lwn_block, r.time = first_block + blk, off, first_block, lwn_time
        r.sequence = sequence
        pos, first = 0, True
        while pos < len(data):
            take = min(len(data) - pos, block_size - off) if first else min(len(data) - pos, usable)
            at = blk * block_size + off
            buf[at : at + take] = data[pos : pos + take]
            pos += take
            blk, off, first = blk + 1, 16, False
    return buf


def seal(buf: bytearray | memoryview, block_size: int, checksum_at: int = 14) -> None:
    """Fill the checksum of every block in ``buf`` so that its 16-bit XOR fold is zero."""
    n = len(buf) // block_size
    if n == 0:
        return
    words = np.frombuffer(buf, dtype="<u2", count=n * block_size // 2).reshape(n, block_size // 2).copy()
    words[:, checksum_at // 2] = 0
    sums = np.bitwise_xor.reduce(words, axis=1)
    view = np.frombuffer(buf, dtype="<u2", count=n * block_size // 2).reshape(n, block_size // 2)
    view[:, checksum_at // 2] = sums


def verify(buf: bytes | bytearray | memoryview, block_size: int) -> np.ndarray:
    """Indexes of blocks whose XOR fold is not zero (empty when all pass)."""
    n = len(buf) // block_size
    words = np.frombuffer(buf, dtype="<u2", count=n * block_size // 2).reshape(n, block_size // 2)
    return np.nonzero(np.bitwise_xor.reduce(words, axis=1))[0]
