"""Open transactions: begin, stored changes, partial rollback, commit (redo-format.md §7).

A transaction's changes are serialised into chunks of the :class:`~.pool.MemoryPool`
(so memory is bounded and cold transactions can be swapped to disk) and rebuilt as
change vectors only at commit.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, overload

from replicator.redo.vectors import ChangeVector
from replicator.txn.pool import ChunkLog, MemoryPool, pool_key
from replicator.txn.rows import Pair

# The compensating opcode of a partial rollback for each stored redo opcode (§7.4).
INVERSE = {
    0x0B02: 0x0B03,
    0x0B03: 0x0B02,
    0x0B05: 0x0B05,
    0x0B06: 0x0B06,
    0x0B08: 0x0B08,
    0x0B0B: 0x0B0C,
    0x0B0C: 0x0B0B,
    0x0B16: 0x0B16,
}

KIND_PAIR, KIND_DDL = 1, 2
# kind, endian ('<' = 0), vector header size, obj, data obj, scn, time, offset, len1, len2
_ENTRY = struct.Struct("<BBBxIIQIQII")


@dataclass(slots=True)
class Ddl:
    """A 24.1 DDL statement: its vector pieces (concatenated at commit)."""

    vectors: list[ChangeVector]
    scn: int
    time: int
    offset: int


def _vector_bytes(cv: ChangeVector) -> bytes:
    return bytes(cv.data[cv.start : cv.start + cv.size])


@dataclass(slots=True)
class OpenTransaction:
    """A transaction seen in the redo and not yet committed or rolled back."""

    xid: int
    clog: ChunkLog
    begun: bool = False
    begin_scn: int = 0
    begin_time: int = 0  # raw redo time
    begin_seq: int = 0
    begin_offset: int = 0
    # Every stored change, for partial rollback, packed (a million changes cost 16 MB, not
    # 100+ MB of tuples): where it starts (chunk << 32 | offset), kind << 16 | redo opcode, obj.
    # (partial, not a lambda: a transaction is opened per 5.2, and a partial adds no python frame)
    where: array[int] = field(default_factory=partial(array, "q"))
    what: array[int] = field(default_factory=partial(array, "l"))
    objs: array[int] = field(default_factory=partial(array, "L"))
    attributes: dict[str, str] = field(default_factory=dict)
    logon_user: int = -1  # USER# from the begin-transaction undo (ktubl), -1 until seen
    system: bool = False
    size: int = 0
    pending_undo: list[ChangeVector] = field(default_factory=list)  # multi-block undo pieces
    lobs: Any = None  # TxnLobs (replicator.txn.lobs) once the transaction writes a LOB

    @property
    def key(self) -> int:
        """Its key in the memory pool: the XID, or CON_ID and XID in a run of several PDBs."""
        return self.clog.key

    def add_pair(
        self,
        pool: MemoryPool,
        undo: ChangeVector,
        redo: ChangeVector,
        obj: int,
        data_obj: int,
        scn: int,
        time: int,
        offset: int,
    ) -> None:
        """Store a (5.1, 11.x) pair."""
        if redo.data is undo.data and redo.start == undo.start + undo.size:
            # The usual case: the redo directly follows its undo in the record, one slice.
            body = undo.data[undo.start : redo.start + redo.size]
        else:
            body = _vector_bytes(undo) + _vector_bytes(redo)
        head = _ENTRY.pack(
            KIND_PAIR, undo.endian == ">", undo.header_size, obj, data_obj, scn, time, offset, undo.size, redo.size
        )
        entry = head + body
        chunk, off = pool.append(self.clog, entry)
        self.remember(chunk, off, KIND_PAIR, redo.opcode, obj)
        self.size += len(entry)

    def add_ddl(self, pool: MemoryPool, cv: ChangeVector, scn: int, time: int, offset: int) -> None:
        """Store one 24.1 piece."""
        v = _vector_bytes(cv)
        head = _ENTRY.pack(KIND_DDL, cv.endian == ">", cv.header_size, 0, 0, scn, time, offset, len(v), 0)
        chunk, off = pool.append(self.clog, head + v)
        self.remember(chunk, off, KIND_DDL, cv.opcode, 0)
        self.size += len(head) + len(v)

    def rollback_last(self, pool: MemoryPool, obj: int, compensating: int) -> bool:
        """Undo the last stored change if the compensating opcode inverts it (§7.4)."""
        if not self.where:
            return False
        kind, opcode = self.what[-1] >> 16, self.what[-1] & 0xFFFF
        if kind != KIND_PAIR or INVERSE.get(opcode) != compensating or self.objs[-1] != obj:
            return False
        where = self.where.pop()
        self.what.pop()
        self.objs.pop()
        pool.truncate(self.clog, where >> 32, where & 0xFFFFFFFF)
        return True

    def remember(self, chunk: int, offset: int, kind: int, opcode: int, obj: int) -> None:
        self.where.append(chunk << 32 | offset)
        self.what.append(kind << 16 | opcode)
        self.objs.append(obj)

    @property
    def has_changes(self) -> bool:
        """Whether anything is stored (changes of replicated tables or DDL)."""
        return bool(self.where)

    def changes(self, pool: MemoryPool) -> Iterator[Pair | Ddl]:
        """Rebuild the stored changes in order (reads swapped chunks back).

        Later pieces of a long DDL statement are appended to the :class:`Ddl` already
        yielded for its first piece, so consume the iterator fully before using DDLs.
        """
        ddl: Ddl | None = None
        unpack_entry, entry_size = _ENTRY.unpack_from, _ENTRY.size
        for raw in pool.read(self.clog):
            data = bytes(raw)
            pos = 0
            end = len(data)
            while pos < end:
                kind, big, vh, obj, data_obj, scn, time, offset, n1, n2 = unpack_entry(data, pos)
                endian = ">" if big else "<"
                pos += entry_size
                first = ChangeVector(data, pos, vh, endian)
                pos += n1 + n2
                if kind == KIND_PAIR:
                    yield Pair(first, ChangeVector(data, pos - n2, vh, endian), obj, data_obj, scn, time, offset)
                    continue
                piece = struct.unpack_from(endian + "H", first.field(1), 18)[0] if first.flen(1) >= 20 else 1
                if piece > 1 and ddl is not None:
                    ddl.vectors.append(first)
                else:
                    ddl = Ddl([first], scn, time, offset)
                    yield ddl


class TransactionBuffer:
    """Open transactions keyed by (CON_ID, USN, slot), as Oracle's transaction tables are."""

    def __init__(self, pool: MemoryPool | None = None) -> None:
        self.pool = pool if pool is not None else MemoryPool()
        self.by_key: dict[tuple[int, int, int], OpenTransaction] = {}
        # Several PDBs in one run: their CON_IDs. The memory pool then keys a transaction by
        # CON_ID and XID (pool_key), as two PDBs' local undo may give one XID to two open
        # transactions at once; with one container or none, by the XID alone.
        self.containers: tuple[int, ...] = ()

    def __len__(self) -> int:
        return len(self.by_key)

    def begin(self, con_id: int, xid: int, scn: int, time: int, seq: int, offset: int) -> OpenTransaction:
        """Open a transaction (5.2); a stale entry for the same slot is replaced."""
        key = (con_id, xid >> 48, (xid >> 32) & 0xFFFF)
        old = self.by_key.get(key)
        if old is not None and old.xid == xid:
            # Changes stored before the 5.2 (LWN order) stay with the transaction.
            old.begun, old.begin_scn, old.begin_time, old.begin_seq, old.begin_offset = True, scn, time, seq, offset
            return old
        if old is not None:
            self.pool.discard(old.clog.key)
        clog = self.pool.log_for(pool_key(con_id, xid, len(self.containers) > 1))
        txn = self.by_key[key] = OpenTransaction(xid, clog, True, scn, time, seq, offset)
        return txn

    @overload
    def get(self, con_id: int, xid: int, create: Literal[True] = True) -> OpenTransaction: ...
    @overload
    def get(self, con_id: int, xid: int, create: bool) -> OpenTransaction | None: ...
    def get(self, con_id: int, xid: int, create: bool = True) -> OpenTransaction | None:
        """Find the transaction of a change; create an un-begun one if asked."""
        key = (con_id, xid >> 48, (xid >> 32) & 0xFFFF)
        txn = self.by_key.get(key)
        if txn is not None and txn.xid == xid:
            self.pool.log_for(txn.clog.key)  # mark active: swapping prefers idle transactions
            return txn
        if not create:
            return None
        if txn is not None:
            self.pool.discard(txn.clog.key)
        clog = self.pool.log_for(pool_key(con_id, xid, len(self.containers) > 1))
        txn = self.by_key[key] = OpenTransaction(xid, clog)
        return txn

    def by_slot(self, con_id: int, usn: int, slot: int) -> OpenTransaction | None:
        """Find a transaction when only USN and slot are known (5.6 / 5.11 rollbacks)."""
        return self.by_key.get((con_id, usn, slot))

    def end(self, con_id: int, xid: int) -> OpenTransaction | None:
        """Remove and return the transaction a 5.4 ends (None if never seen).

        The caller reads its changes, then calls :meth:`release`.
        """
        key = (con_id, xid >> 48, (xid >> 32) & 0xFFFF)
        txn = self.by_key.get(key)
        if txn is None or txn.xid != xid:
            return None
        del self.by_key[key]
        return txn

    def release(self, txn: OpenTransaction) -> None:
        """Free a finished transaction's memory and swap file."""
        self.pool.discard(txn.clog.key)

    def oldest_begin(self) -> tuple[int, int, int] | None:
        """(sequence, offset, xid) of the oldest open, begun transaction: the restart low watermark."""
        begun = [(t.begin_seq, t.begin_offset, t.xid) for t in self.by_key.values() if t.begun]
        return min(begun) if begun else None

    def open_transactions(self) -> list[OpenTransaction]:
        return list(self.by_key.values())
