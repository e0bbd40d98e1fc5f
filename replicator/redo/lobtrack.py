"""LOB tracking in the parser: which vectors belong to which transaction, and values at commit.

The parser hands over the LOB vectors it meets (19.1 and 26.6 pages, (5.1, 26.2) SecureFile
and (5.1, 10.x) LOB index pairs) and, at commit, every row of a table with LOB columns.
This module follows OpenLogReplicator's rules (redo-format.md §11.2):

* pages are kept only for LOB segments of replicated tables (SYS.LOB$ DATAOBJ#s);
* a 26.6 names its transaction (FPLOAD/SUPLOG XID); a 19.1 does not, so its transaction is
  the one whose LOB index pair first named the LOB id, or the page waits as an orphan;
* only LOB ids starting ``00 00 00 01`` are tracked; the id -> XID map entries of a
  transaction are dropped when it ends.

Nothing here runs for transactions without LOB vectors, and rows of tables without LOB
columns are not looked at: the hot path is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replicator.events import (
    COL_PROPERTY_STORED_AS_LOB,
    TYPE_BLOB,
    TYPE_CLOB,
    TYPE_JSON,
    TYPE_RAW,
    TYPE_VARCHAR2,
    RowChange,
    Table,
)
from replicator.redo.opcodes import lob as L
from replicator.redo.opcodes.undo import UndoInfo
from replicator.redo.vectors import ChangeVector
from replicator.txn.buffer import OpenTransaction, TransactionBuffer
from replicator.txn.lobassembly import LobReader
from replicator.txn.lobs import Orphans, TxnLobs
from replicator.txn.pool import XID_MASK, MemoryPool

LOB_TYPES = frozenset({TYPE_CLOB, TYPE_BLOB, TYPE_JSON})


def lob_columns(table: Table) -> tuple[int, ...]:
    """Columns whose row value is a LOB locator (CLOB, NCLOB, BLOB, JSON, VARCHAR2/RAW stored as LOB)."""
    out = []
    for i, c in enumerate(table.columns):
        if c.type_code in LOB_TYPES or (
            c.property & COL_PROPERTY_STORED_AS_LOB and c.type_code in (TYPE_VARCHAR2, TYPE_RAW)
        ):
            out.append(i)
    return tuple(out)


class LobTracker:
    """Parser-side LOB state shared by all transactions."""

    def __init__(self, pool: MemoryPool, buffer: TransactionBuffer):
        self.pool = pool
        self.buffer = buffer
        self.orphans = Orphans()
        self._xid_of: dict[bytes, int] = {}  # LOB id -> XID of the transaction writing it
        self._ids_of: dict[int, list[bytes]] = {}  # pool key (XID, or CON_ID and XID) -> LOB ids in _xid_of
        self._segments: dict[int, int] = {}  # LOB segment DATAOBJ# -> page size
        self._indexes: frozenset[int] = frozenset()
        self._columns: dict[int, tuple[Table, tuple[int, ...]]] = {}
        self._tables: Mapping[int, Table] | None = None
        self._count = -1
        self.enabled = False  # some replicated table has LOB columns
        # id(table map) -> (the map, its size, segments, indexes, columns, enabled): see refresh
        self._kept: dict[int, tuple[Any, ...]] = {}

    def refresh(self, tables: Mapping[int, Table]) -> None:
        """Rebuild the LOB segment maps when the table map was replaced or resized.

        A run of several PDBs switches between their table maps record by record: the maps
        of the last few are kept, so a switch back costs a lookup, not a rebuild."""
        if tables is self._tables and len(tables) == self._count:
            return
        kept = self._kept.get(id(tables))
        if kept is not None and kept[0] is tables and kept[1] == len(tables):
            _, self._count, self._segments, self._indexes, self._columns, self.enabled = kept
            self._tables = tables
            return
        self._build(tables)
        if len(self._kept) >= 16:
            self._kept.clear()
        self._kept[id(tables)] = (tables, self._count, self._segments, self._indexes, self._columns, self.enabled)

    def _build(self, tables: Mapping[int, Table]) -> None:
        self._tables, self._count = tables, len(tables)
        segments: dict[int, int] = {}
        indexes: set[int] = set()
        columns: dict[int, tuple[Table, tuple[int, ...]]] = {}
        for table in tables.values():
            if id(table) in columns:
                continue
            columns[id(table)] = (table, lob_columns(table))
            for lob in table.lobs:
                segments.update(lob.segments)
                indexes.update(lob.indexes)
        self._segments, self._indexes, self._columns = segments, frozenset(indexes), columns
        self.enabled = any(cols for _, cols in columns.values())

    # ------------------------------------------------------------------ vectors
    def page(self, cv: ChangeVector) -> None:
        """A 19.1 or 26.6 page vector."""
        page = L.bimg_page(cv) if cv.layer == 26 else L.direct_page(cv)
        if page is None:
            return
        page_size = self._segments.get(page.data_obj)
        if page_size is None:
            return  # not a LOB of a replicated table
        xid = page.xid or self._xid_of.get(page.lob_id, 0)
        if not xid:
            self.orphans.add(page.lob_id, page.dba, page.page_no, page_size, page.data)
            return
        self._lobs(self.buffer.get(cv.con_id, xid)).add_page(
            self.pool, page.lob_id, page.dba, 0, page.page_no, page_size, page.data
        )

    def kdli_pair(self, info: UndoInfo, undo: ChangeVector, redo: ChangeVector) -> None:
        """A (5.1, 26.2) pair: SecureFile fills, extent lists and list-page chains."""
        kdli = L.kdli_redo(redo)
        if kdli is None or not kdli.lob_id.startswith(L.TRACKED_PREFIX):
            return
        txn = self.buffer.get(undo.con_id, info.xid)
        lobs = self._claim(txn, kdli.lob_id)
        for dba, nxt in zip((kdli.dba, *kdli.chain), kdli.chain):
            if not nxt:
                break
            lobs.chain(dba, nxt)
        code = kdli.code
        if code in L.LIST_SET:
            lobs.set_list(kdli.dba, kdli.payload, redo.endian)
        elif code in L.LIST_APPEND:
            lobs.append_list(kdli.dba, kdli.payload, redo.endian)
        elif code == L.KDLI_FILL:
            lobs.add_page(self.pool, kdli.lob_id, kdli.dba, kdli.fill_offset, L.NO_PAGE, 0, kdli.payload)

    def index_pair(self, info: UndoInfo, undo: ChangeVector, redo: ChangeVector) -> None:
        """A (5.1, 10.x) pair; only leaf changes of a LOB index matter."""
        data_obj = info.data_obj or redo.obj
        if data_obj not in self._indexes:
            return
        entry = L.index_entry(undo, redo)
        if entry is None or not entry.lob_id.startswith(L.TRACKED_PREFIX):
            return
        xid = info.xid
        if redo.opcode == 0x0A08:
            xid = self._xid_of.get(entry.lob_id, xid)  # a leaf split by another transaction
        lobs = self._claim(self.buffer.get(undo.con_id, xid), entry.lob_id)
        lobs.set_pages(entry.lob_id, entry.page_no, entry.dbas)
        if entry.size is not None and entry.page_no == 0:
            lobs.set_size(entry.lob_id, *entry.size)

    def ended(self, key: int) -> None:
        """A transaction (by pool key) committed or rolled back: forget its LOB ids."""
        xid = key & XID_MASK
        for lob_id in self._ids_of.pop(key, ()):
            if self._xid_of.get(lob_id) == xid:
                del self._xid_of[lob_id]

    # ------------------------------------------------------------------ commit
    def columns(self, table: Table) -> tuple[int, ...]:
        """LOB column indexes of a replicated table (cached)."""
        found = self._columns.get(id(table))
        if found is None or found[0] is not table:
            found = self._columns[id(table)] = (table, lob_columns(table))
        return found[1]

    def resolve(self, row: RowChange, txn: OpenTransaction, cols: tuple[int, ...]) -> None:
        """Replace the locators of ``row`` by :class:`~replicator.values.lob.LobValue` objects.

        The after image gets the assembled value; the before image only what the locator
        itself holds (an old out-of-row value is not in this transaction's redo).
        """
        if txn.lobs is None and len(self.orphans):
            self._lobs(txn)  # orphaned pages named by this row's locators join the transaction
        after = LobReader(self.pool, txn.lobs, self.orphans, txn.xid)
        before = LobReader(self.pool, None, None, txn.xid, inline_only=True)
        for image, reader in ((row.after, after), (row.before, before)):
            if not image:
                continue
            for col in cols:
                value = image.get(col)
                if value:
                    image[col] = reader.value(value)

    # ------------------------------------------------------------------ internals
    def _lobs(self, txn: OpenTransaction) -> TxnLobs:
        if txn.lobs is None:
            txn.lobs = TxnLobs(self.pool, txn.xid, txn.key)
        return txn.lobs

    def _claim(self, txn: OpenTransaction, lob_id: bytes) -> TxnLobs:
        """Map a LOB id to ``txn`` (first writer wins) and give it the LOB's orphaned pages."""
        lobs = self._lobs(txn)
        if lob_id not in self._xid_of:
            self._xid_of[lob_id] = txn.xid
            self._ids_of.setdefault(txn.key, []).append(lob_id)
            if len(self.orphans):
                self.orphans.claim(lob_id, self.pool, lobs)
        return lobs
