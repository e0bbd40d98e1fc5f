"""Redo record framing and LWN grouping (redo-format.md §3).

Records are contiguous in the *payload stream* (block bodies with headers stripped, see
:mod:`.blocks`), so a record spanning blocks is a plain slice. The in-block rules still
apply: a record never starts in the last 20 bytes of a block, a zero size means "nothing
more in this block", and an LWN header always starts a block.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

from replicator.errors import RedoLogError
from replicator.redo.blocks import BLOCK_HEADER
from replicator.redo.header import read_scn8

VLD_DATA = 0x01
VLD_LWN = 0x04
RECORD_HEADER = 24
LWN_RECORD_HEADER = 68


@dataclass(slots=True)
class Record:
    """One reassembled redo record."""

    scn: int
    subscn: int
    block: int  # block where the record starts
    offset: int  # byte offset inside that block
    vld: int
    data: bytes  # the whole record, header included
    time: int = 0  # raw redo time of the LWN the record belongs to

    @property
    def header_size(self) -> int:
        return LWN_RECORD_HEADER if self.vld & VLD_LWN else RECORD_HEADER


@dataclass(slots=True)
class Lwn:
    """A log-writer group: the records between two LWN headers, in analysis order."""

    scn: int
    time: int  # raw redo time
    first_block: int
    end_block: int  # first block after the LWN
    records: list[Record] = field(default_factory=list)


_LWN_HEAD = {e: struct.Struct(e + "HHI") for e in "<>"}  # lwn number, nst, length in blocks
_U32 = {e: struct.Struct(e + "I") for e in "<>"}


def lwn_fields(data: bytes, endian: str) -> tuple[int, int, int, int]:
    """(nst, length in blocks, SCN, raw time) of an LWN header record (struct.error when too short)."""
    _, nst, length = _LWN_HEAD[endian].unpack_from(data, 24)
    return nst, length, read_scn8(data, 40, endian), _U32[endian].unpack_from(data, 64)[0]


class RecordFramer:
    """Cuts a payload stream into records and groups them into LWNs.

    Feed it consecutive payload chunks with :meth:`feed`; it yields every LWN that is
    complete. Call :meth:`finish` at the end of the valid data. Partial records and the
    current LWN are carried between chunks.
    """

    def __init__(self, block_size: int, endian: str, path: str = "?", first_block: int = 2, all_records: bool = False):
        self.block_size = block_size
        self.body = block_size - BLOCK_HEADER
        self.path = path
        # Records without change vectors (vld & 1 == 0) are dropped unless a dump wants them.
        self._keep = 0xFF if all_records else VLD_DATA
        # size, vld, (pad), wrap, base, subscn
        self._rec = struct.Struct(endian + "IBxHIH")
        self._endian = endian
        self._buf = b""
        self._buf_block = first_block  # block number of the first payload byte in _buf
        self._pos = 0
        self._lwn_end = first_block  # first block after the current LWN
        self._pieces = 0
        self._nst = 0
        self._current: Lwn | None = None

    def feed(self, payload: bytes, first_block: int) -> Iterator[Lwn]:
        """Append the payload of blocks starting at ``first_block``; yield complete LWNs."""
        if self._pos:
            # Keep from the block where the unfinished record starts (block-aligned).
            keep_from = (self._pos // self.body) * self.body
            self._buf = self._buf[keep_from:]
            self._buf_block += keep_from // self.body
            self._pos -= keep_from
        expected = self._buf_block + len(self._buf) // self.body
        if first_block != expected:
            raise RedoLogError(f"file {self.path}: block {first_block} read out of order (expected {expected})", 40008)
        self._buf = self._buf + payload if self._buf else payload
        yield from self._scan()

    def finish(self) -> Iterator[Lwn]:
        """Flush the last LWN at the end of the valid data (archived log: NAB)."""
        if self._current is not None:
            self._current.end_block = max(self._current.end_block, self._buf_block + self._pos // self.body)
            yield self._sorted(self._current)
        self._current = None

    def _sorted(self, lwn: Lwn) -> Lwn:
        # OLR analyses the records of an LWN in (SCN, sub-SCN, block, offset) order (§3.3).
        lwn.records.sort(key=lambda r: (r.scn, r.subscn, r.block, r.offset))
        return lwn

    def _scan(self) -> Iterator[Lwn]:
        buf, body, pos = self._buf, self.body, self._pos
        limit = len(buf)
        while True:
            inoff = pos % body
            if BLOCK_HEADER + inoff + 20 >= self.block_size:
                pos += body - inoff  # too little room left: next record starts in the next block
                continue
            block = self._buf_block + pos // body
            if block >= self._lwn_end:
                if inoff:
                    pos += body - inoff  # the rest of the LWN's last block is unused
                    continue
                if self._current is not None and self._pieces >= self._nst:
                    # Every block of the LWN has been read: hand it over now, not when the
                    # next LWN arrives (an online log may not have it yet).
                    yield self._sorted(self._current)
                    self._current = None
            if pos + RECORD_HEADER > limit:
                break
            size, vld, wrap, base, subscn = self._rec.unpack_from(buf, pos)
            if size == 0:
                pos += body - inoff
                continue
            if size & 3 or size < RECORD_HEADER:
                raise RedoLogError(
                    f"file {self.path}, block {block}, offset {BLOCK_HEADER + inoff}: bad record size {size}", 40008
                )
            if pos + size > limit:
                break
            if block >= self._lwn_end:
                if not vld & VLD_LWN:
                    raise RedoLogError(
                        f"file {self.path}, block {block}: expected an LWN header at offset 16 (vld {vld:#x})", 40008
                    )
            data = buf[pos : pos + size]
            if vld & VLD_LWN:
                nst, length, lwn_scn, lwn_time = lwn_fields(data, self._endian)
                if self._current is None:
                    self._current = Lwn(lwn_scn, lwn_time, block, block + length)
                    self._pieces, self._nst = 0, nst
                self._pieces += 1
                self._lwn_end = block + length
                self._current.end_block = self._lwn_end
            if self._current is None:
                raise RedoLogError(f"file {self.path}, block {block}: record outside any LWN", 40008)
            if vld & self._keep:
                self._current.records.append(
                    Record((wrap << 32) | base, subscn, block, BLOCK_HEADER + inoff, vld, data, self._current.time)
                )
            pos += size
        self._pos = pos
