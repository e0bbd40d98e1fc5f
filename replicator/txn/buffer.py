"""Open transactions: begin, stored changes, partial rollback, commit (redo-format.md §7)."""

from __future__ import annotations

from dataclasses import dataclass, field

from replicator.redo.vectors import ChangeVector
from replicator.txn.rows import Pair

# The compensating opcode of a partial rollback for each stored redo opcode (§7.4).
INVERSE = {0x0B02: 0x0B03, 0x0B03: 0x0B02, 0x0B05: 0x0B05, 0x0B06: 0x0B06, 0x0B08: 0x0B08,
           0x0B0B: 0x0B0C, 0x0B0C: 0x0B0B, 0x0B16: 0x0B16}


@dataclass(slots=True)
class Ddl:
    """A stored 24.1 DDL vector chain (pieces concatenated at commit)."""

    vectors: list[ChangeVector]
    scn: int
    time: int
    offset: int


@dataclass(slots=True)
class OpenTransaction:
    """A transaction seen in the redo and not yet committed or rolled back."""

    xid: int
    begun: bool = False
    begin_scn: int = 0
    begin_time: int = 0  # raw redo time
    begin_seq: int = 0
    begin_offset: int = 0
    ops: list[Pair | Ddl] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    system: bool = False
    size: int = 0  # bytes of redo held, for memory accounting
    pending_undo: list[ChangeVector] = field(default_factory=list)  # multi-block undo pieces

    def rollback_last(self, obj: int, compensating: int) -> bool:
        """Undo the last stored change if the compensating opcode inverts it (§7.4)."""
        for i in range(len(self.ops) - 1, -1, -1):
            op = self.ops[i]
            if isinstance(op, Ddl):
                return False
            if INVERSE.get(op.redo.opcode) == compensating and op.obj == obj:
                del self.ops[i]
                self.size -= len(op.undo.data) + len(op.redo.data)
                return True
            return False
        return False


class TransactionBuffer:
    """Open transactions keyed by (CON_ID, USN, slot), as Oracle's transaction tables are."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[int, int, int], OpenTransaction] = {}

    def __len__(self) -> int:
        return len(self._by_key)

    def begin(self, con_id: int, xid: int, scn: int, time: int, seq: int, offset: int) -> OpenTransaction:
        """Open a transaction (5.2); a stale entry for the same slot is replaced."""
        key = (con_id, xid >> 48, (xid >> 32) & 0xFFFF)
        txn = OpenTransaction(xid, True, scn, time, seq, offset)
        old = self._by_key.get(key)
        if old is not None and old.xid == xid and not old.begun:
            # Changes arrived before the 5.2 in the same LWN order: keep them.
            txn.ops, txn.attributes, txn.size = old.ops, old.attributes, old.size
        self._by_key[key] = txn
        return txn

    def get(self, con_id: int, xid: int, create: bool = True) -> OpenTransaction | None:
        """Find the transaction of a change; create an un-begun one if asked."""
        key = (con_id, xid >> 48, (xid >> 32) & 0xFFFF)
        txn = self._by_key.get(key)
        if txn is not None and txn.xid == xid:
            return txn
        if not create:
            return None
        txn = OpenTransaction(xid)
        self._by_key[key] = txn
        return txn

    def by_slot(self, con_id: int, usn: int, slot: int) -> OpenTransaction | None:
        """Find a transaction when only USN and slot are known (5.6 / 5.11 rollbacks)."""
        return self._by_key.get((con_id, usn, slot))

    def end(self, con_id: int, xid: int) -> OpenTransaction | None:
        """Remove and return the transaction a 5.4 ends (None if never seen)."""
        key = (con_id, xid >> 48, (xid >> 32) & 0xFFFF)
        txn = self._by_key.get(key)
        if txn is None or txn.xid != xid:
            return None
        del self._by_key[key]
        return txn

    def oldest_begin(self) -> tuple[int, int] | None:
        """(sequence, offset) of the oldest open, begun transaction: the restart low watermark."""
        begun = [(t.begin_seq, t.begin_offset) for t in self._by_key.values() if t.begun]
        return min(begun) if begun else None

    def open_transactions(self) -> list[OpenTransaction]:
        return list(self._by_key.values())
