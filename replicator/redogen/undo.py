"""Undo segments of the simulated database: transaction slots (XIDs) and undo addresses.

Each open transaction holds one slot of one undo segment's transaction table; the slot's
wrap sequence (SQN) grows every time the slot is reused, as in Oracle. Undo records are
numbered inside undo blocks of the segment, which gives every 5.1 its UBA.
"""

from __future__ import annotations

from replicator.errors import ConfigError
from replicator.redogen.ids import Uba, Xid, dba

SLOTS_PER_SEGMENT = 34  # transaction table entries of an 8 KB undo segment header
RECORDS_PER_BLOCK = 24
MAX_USN = 32000  # CLS = 15 + 2·USN must fit 16 bits


class UndoSpace:
    """Allocates XIDs round-robin over undo segments and UBAs inside them."""

    def __init__(self, rfile: int, afn: int, segments: int = 10, sqn_base: int = 0x230):
        self.rfile = rfile
        self.afn = afn
        self.segments = segments
        self._free: dict[int, list[int]] = {}
        self._sqn: dict[tuple[int, int], int] = {}
        self._block: dict[int, list[int]] = {}  # usn -> [block, seq, rec]
        self._next = 0
        self._sqn_base = sqn_base

    def _segment(self, usn: int) -> list[int]:
        if usn not in self._free:
            self._free[usn] = list(range(SLOTS_PER_SEGMENT - 1, -1, -1))
        return self._free[usn]

    def begin(self) -> Xid:
        """A new XID on a free slot (more segments come online when all slots are busy)."""
        for _ in range(self.segments):
            usn = self._next % self.segments + 1
            self._next += 1
            free = self._segment(usn)
            if free:
                slot = free.pop()
                key = (usn, slot)
                self._sqn[key] = self._sqn.get(key, self._sqn_base + 7 * usn + slot) + 1
                return Xid(usn, slot, self._sqn[key])
        if self.segments >= MAX_USN:
            raise ConfigError("more concurrent transactions than undo slots")
        self.segments = min(MAX_USN, self.segments * 2)
        return self.begin()

    def claim(self, xid: Xid) -> Xid:
        """Take a specific XID (its slot must be free), e.g. to reproduce a real log."""
        free = self._segment(xid.usn)
        if xid.slot not in free:
            raise ConfigError(f"undo slot {xid.usn}.{xid.slot} is busy")
        free.remove(xid.slot)
        self._sqn[(xid.usn, xid.slot)] = xid.sqn
        self.segments = max(self.segments, xid.usn)
        return xid

    def end(self, xid: Xid) -> None:
        """Free the slot of a finished transaction."""
        self._segment(xid.usn).append(xid.slot)

    def header_dba(self, usn: int) -> int:
        """Block of the undo segment header (its transaction table)."""
        return dba(self.rfile, 0x80 + 8 * usn)

    def next_uba(self, usn: int) -> Uba:
        """Address of the next undo record in segment ``usn``."""
        state = self._block.setdefault(usn, [0x1000 + 0x400 * usn, 0x80, 0])
        state[2] += 1
        if state[2] > RECORDS_PER_BLOCK:
            state[0] += 1
            state[1] = (state[1] + 1) & 0xFFFF
            state[2] = 1
        return Uba(dba(self.rfile, state[0]), state[1], state[2])
