"""LOB columns in generated redo: locators and SecureFile page images (dictionary rows: lobrows.py).

Modelled on the real 19c archive in ``shared/fixtures/redo/ora19-lob`` (redo-format.md §11):

* a value of up to :data:`INLINE_MAX` bytes stays in the row: the locator carries it
  (flg2 0x4890, a 1–3 byte length, the data);
* a larger value goes out of row to a SecureFile segment: one 26.6 block image per page
  (KDLI common BIMG, FPLOAD with the XID and segment DATAOBJ#, LOAD_DATA with the LOB id,
  the page data, SUPLOG with table OBJ# and column) written before the row change, and a
  locator listing the pages as extents (flg2 0x4090, style 0x20). OLR keeps such pages only
  for a transaction it has seen begin, so a transaction whose first change is one opens with
  a begin record first (5.2, a 5.1 with ktubl opc 5.7, 5.20), as in the fixture;
* ``EMPTY_CLOB()`` / ``EMPTY_BLOB()`` is a locator of length 0; NULL is no locator.

CLOB values are stored in AL16UTF16 when the database character set is multibyte (so OLR's
national-charset rule decodes them), NCLOB in the national set, BLOB as raw bytes. Each
written value gets a new LOB id, as Oracle gives a new LOB to every assigned value.

**BasicFile storage.** A column typed ``CLOB BASICFILE`` (``NCLOB``/``BLOB`` likewise) is
written the way Oracle writes a BasicFile LOB, as OLR's parser reads it (§5.7, §5.8, §11):

* up to :data:`INLINE_MAX` bytes stay in the row: the 11g inode form (flg2 0x0900, +24 BE32
  blocks 0, +28 BE16 size, +30 version 0.1, the data at +36);
* a larger value is written as pages of :data:`~replicator.schema.lobs.PAGE_SIZES` bytes
  (8132 per 8 KiB block), one 19.1 direct-path page write each (f1: segment DATAOBJ#, LOB id,
  version, page number, DBA, the whole page from +36; the last page zero-padded as the
  block is). The locator is the inode index form (flg2 0x0400: +24 BE32 full pages, +28 BE16
  rest bytes, then the DBAs of the first 12 pages); pages 12 and up are found through the
  LOB index ``SYS_IL<obj>C<col>$$``: (5.1 opc 10.22, 10.2 insert leaf row) pairs with the
  key ``0A`` + LOB id + ``04`` + BE32 first page number and 32 bytes of key data (8 BE32
  page DBAs). When a leaf block is full (:data:`LEAF_ROWS`) the next entry goes to a new leaf
  by a 10.8 holding that single row (a 90/10 split, ``01 01`` + data + key);
* ``CLOB BASICFILE DISABLE STORAGE IN ROW``: every non-empty value is out of row and the
  locator is the bare 20-byte form (+5 bit 0x04 clear). The LOB index holds all pages: page
  0's key data starts with a 16-byte header (+4 BE32 full pages, +8 BE16 rest bytes)
  followed by 4 DBAs; once the pages are written a (5.1 10.22, 10.18) pair updates that
  header to the final size (OLR takes the size only from that 10.18).

Pages of an entry are written before its index pair, so the first pages arrive as orphans
(a 19.1 has no XID) and later ones find their transaction through the LOB id, exercising
both paths. Rolling back writes no compensation for LOB pages or index entries (the 5.4
rollback drops them). Where only OLR's parser documents a field, the value is chosen so
that parser reads it as intended; the rest (kdilk, kdxln, 19.1 f2) is plausible filler.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from replicator import events as ev
from replicator.errors import ConfigError
from replicator.redogen import byteorder
from replicator.redogen.blocks import Record
from replicator.redogen.ids import dba
from replicator.redogen.lobvalues import BASICFILE, BASICFILE_OUT_OF_ROW, SECUREFILE, LobData
from replicator.values.lob import LobValue

if TYPE_CHECKING:
    from replicator.redogen.coltypes import ColumnType
    from replicator.redogen.emit import Emitter, TxnRedo
    from replicator.redogen.ids import Xid
    from replicator.redogen.rows import TableState

INLINE_MAX: Final = 3964  # bytes of data a locator keeps in the row (4000 minus its header)
LOB_OBJ_BASE: Final = 4_000_000  # OBJ# of LOB segments: base + table OBJ# * 2048 + 2 * column
PAGE_OVERHEAD: Final = 132  # an 8 KiB SecureFile block holds 8060 bytes of data
MAX_EXTENT: Final = 255  # pages per extent (1-byte count)
TYP_LOB: Final = 10  # vector TYP of the 26.6 block images in the 19c fixture
INODE_PAGES: Final = 12  # page DBAs a BasicFile inode (in-row locator) keeps
ENTRY_PAGES: Final = 8  # page DBAs per LOB index entry (32 bytes of key data)
HEADER_PAGES: Final = 4  # page 0's entry: a 16-byte header, then 4 DBAs
LEAF_ROWS: Final = 140  # LOB index rows per 8 KiB leaf block before a split
OPC_INDEX_UNDO: Final = 0x0A16  # ktub opc of index undo records (10.22)
KDILK_PURGE, KDILK_UPDATE = 2, 18  # kdilk codes: purge leaf row (undo of an insert), update keydata


def is_lob(ctype: ColumnType) -> bool:
    """CLOB, NCLOB and BLOB columns, and extended VARCHAR2/RAW columns stored as LOBs."""
    return ctype.type_code in (ev.TYPE_CLOB, ev.TYPE_BLOB) or ctype.stored_as_lob


def _length(total: int) -> tuple[int, bytes]:
    width = 0 if total < 0x100 else 1 if total < 0x10000 else 2 if total < 0x1000000 else 3
    return width, total.to_bytes(width + 1, "big")


def _locator(kind: int, lob_id: bytes, flg2: int, tail: bytes) -> bytes:
    """Header, LOB id, BE16 body size (from +20), BE16 flg2, BE16 bytes after +26, then ``tail``."""
    body = struct.pack(">HH", flg2, len(tail)) + tail
    return (
        bytes.fromhex("00700001")
        + bytes([kind, 0x0C])
        + bytes.fromhex("00800001")
        + lob_id
        + struct.pack(">H", len(body) + 2)
        + body
    )


def inline_locator(kind: int, lob_id: bytes, data: bytes) -> bytes:
    """In-row value: flg3 = length width, flg4 0, the length, a 0x01 byte, the data."""
    if not data:
        return _locator(kind, lob_id, 0x4890, b"\x00\x00\x00\x00")
    width, size = _length(len(data))
    return _locator(kind, lob_id, 0x4890, bytes([width, 0]) + size + b"\x01" + data)


def extent_locator(kind: int, lob_id: bytes, total: int, extents: list[tuple[int, int]]) -> bytes:
    """Out-of-row SecureFile value: style 0x20 extents (flg5 0x02, BE32 first DBA, page count)."""
    width, size = _length(total)
    tail = bytes([0x20 | width, 0]) + size + b"\x01" + bytes([len(extents) - 1])
    for first, count in extents:
        tail += bytes([0x02]) + struct.pack(">IB", first, count)
    return _locator(kind, lob_id, 0x4090, tail)


def _basic_header(kind: int, lob_id: bytes, out_of_row: bool = False) -> bytes:
    """Locator head: version, flags (type; +5 0x0C, or 0x08 without the in-row inode), LOB id."""
    return bytes.fromhex("00700001") + bytes([kind, 0x08 if out_of_row else 0x0C]) + bytes.fromhex("00000001") + lob_id


def _inode(kind: int, lob_id: bytes, flg2: int, blocks: int, rest: int, tail: bytes) -> bytes:
    """BasicFile in-row inode: BE16 size, flags, BE32 blocks, BE16 bytes, version 0.1 (BE16, BE32)."""
    return _basic_header(kind, lob_id) + struct.pack(">HHIHHI", 16 + len(tail), flg2, blocks, rest, 0, 1) + tail


def basic_value_locator(kind: int, lob_id: bytes, data: bytes) -> bytes:
    """BasicFile value kept in the row (flg2 0x0900: inline | value form)."""
    return _inode(kind, lob_id, 0x0900, 0, len(data), data)


def basic_index_locator(kind: int, lob_id: bytes, total: int, page_size: int, dbas: list[int]) -> bytes:
    """BasicFile value out of row: full pages, rest bytes and the first :data:`INODE_PAGES` DBAs."""
    full, rest = divmod(total, page_size)
    return _inode(kind, lob_id, 0x0400, full, rest, b"".join(struct.pack(">I", d) for d in dbas[:INODE_PAGES]))


def basic_bare_locator(kind: int, lob_id: bytes) -> bytes:
    """DISABLE STORAGE IN ROW: the 20-byte locator (+5 bit 0x04 clear), pages all in the LOB index."""
    return _basic_header(kind, lob_id, out_of_row=True)


def index_key(lob_id: bytes, page_no: int) -> bytes:
    """LOB index key: ``0A`` + LOB id + ``04`` + BE32 page number (§11.2)."""
    return b"\x0a" + lob_id + b"\x04" + struct.pack(">I", page_no)


def index_data(dbas: list[int], header: tuple[int, int] | None = None) -> bytes:
    """32 bytes of key data: BE32 DBAs (0 = none), after page 0's header (+4 pages, +8 rest)."""
    head = b"" if header is None else struct.pack(">IIH6x", 0, header[0], header[1])
    body = head + b"".join(struct.pack(">I", d) for d in dbas)
    return body + b"\0" * (32 - len(body))


@dataclass(slots=True)
class LobColumn:
    """Storage of one LOB column: segment and index OBJ#s."""

    column: int
    segment: int
    index: int


def lob_columns(ts: TableState) -> list[LobColumn]:
    """The LOB columns of a table with their (deterministic) segment and index OBJ#s."""
    return [
        LobColumn(i, LOB_OBJ_BASE + ts.obj * 2048 + 2 * i, LOB_OBJ_BASE + ts.obj * 2048 + 2 * i + 1)
        for i, ct in enumerate(ts.ctypes)
        if is_lob(ct)
    ]


@dataclass
class _Leaf:
    """The LOB index leaf block entries go to (right-most leaf, ascending keys)."""

    dba: int
    rows: int = 0


@dataclass
class LobStore:
    """Writes LOB values of the simulated database and remembers locator -> data for the expected output."""

    emit: Emitter
    rfile: int
    page_bytes: int
    db_multibyte: bool
    basic_page: int = 8132  # BasicFile page bytes (OLR's page size for the tablespace block size)
    values: dict[bytes, bytes] = field(default_factory=dict)
    readable: set[bytes] = field(default_factory=set)  # locators that hold their value themselves
    _next_id: int = 0x00BC0000
    _next_block: int = 0x1000
    _next_leaf: int = 0x300000  # LOB index blocks, away from the page blocks
    _columns: dict[int, list[LobColumn]] = field(default_factory=dict)
    _leaves: dict[int, _Leaf] = field(default_factory=dict)

    def columns(self, ts: TableState) -> list[LobColumn]:
        """LOB columns of ``ts`` (cached)."""
        found = self._columns.get(id(ts))
        if found is None:
            found = self._columns[id(ts)] = lob_columns(ts)
        return found

    def store(self, tx: TxnRedo, ts: TableState, values: list[bytes | None]) -> list[bytes | None]:
        """Replace every :class:`LobData` of a row by a locator, writing out-of-row pages first."""
        out = list(values)
        for lob in self.columns(ts):
            data = out[lob.column]
            if isinstance(data, LobData):
                out[lob.column] = self._write(tx, ts, lob, bytes(data))
        return out

    def preload(self, ts: TableState, values: list[bytes | None]) -> list[bytes | None]:
        """A preloaded row's LOB values as in-row locators, written without redo (the row is in
        its block before the redo starts); a value that would go out of row is refused, as its
        pages would have to be in the LOB segment too."""
        out = list(values)
        for lob in self.columns(ts):
            data = out[lob.column]
            if not isinstance(data, LobData):
                continue
            ctype = ts.ctypes[lob.column]
            if len(data) > INLINE_MAX or (ctype.lob_storage == BASICFILE_OUT_OF_ROW and data):
                raise ConfigError(
                    f"{ts.spec.full_name}: a preloaded LOB value is stored out of row "
                    f"({len(data)} bytes); preloaded LOB values must fit in the row "
                    f"(up to {INLINE_MAX} bytes, not DISABLE STORAGE IN ROW)"
                )
            self._next_id += 1
            lob_id = b"\x00\x00\x00\x01" + self._next_id.to_bytes(6, "big")
            kind = 1 if ctype.type_code in (ev.TYPE_BLOB, ev.TYPE_RAW) else 2
            if ctype.lob_storage == BASICFILE_OUT_OF_ROW:
                locator = basic_bare_locator(kind, lob_id)
            else:
                locator = (basic_value_locator if ctype.lob_storage == BASICFILE else inline_locator)(
                    kind, lob_id, bytes(data)
                )
                self.readable.add(locator)
            self.values[locator] = bytes(data)
            out[lob.column] = locator
        return out

    def _write(self, tx: TxnRedo, ts: TableState, lob: LobColumn, data: bytes) -> bytes:
        self._next_id += 1
        lob_id = b"\x00\x00\x00\x01" + self._next_id.to_bytes(6, "big")
        ctype = ts.ctypes[lob.column]
        kind = 1 if ctype.type_code in (ev.TYPE_BLOB, ev.TYPE_RAW) else 2
        if ctype.lob_storage != SECUREFILE:
            locator = self._basic(tx, ts, lob, lob_id, kind, data, ctype.lob_storage == BASICFILE_OUT_OF_ROW)
        elif len(data) <= INLINE_MAX:
            locator = inline_locator(kind, lob_id, data)
            self.readable.add(locator)
        else:
            if not tx.begun:  # OLR drops pages of a transaction it has not seen begin
                self.emit.begin(tx)
            extents = self._pages(tx.xid, ts, lob, lob_id, data)
            locator = extent_locator(kind, lob_id, len(data), extents)
        self.values[locator] = data
        return locator

    def _pages(self, xid: Xid, ts: TableState, lob: LobColumn, lob_id: bytes, data: bytes) -> list[tuple[int, int]]:
        """One 26.6 record per page, pages in runs of at most :data:`MAX_EXTENT` blocks."""
        size = self.page_bytes
        count = -(-len(data) // size)
        extents: list[tuple[int, int]] = []
        for n in range(count):
            if n % MAX_EXTENT == 0:
                self._next_block += 1  # leave a gap: extents are separate runs of blocks
                extents.append((dba(self.rfile, self._next_block), 0))
            block = dba(self.rfile, self._next_block)
            self._next_block += 1
            first, pages = extents[-1]
            extents[-1] = (first, pages + 1)
            self._page(xid, ts, lob, lob_id, block, data[n * size : (n + 1) * size])
        return extents

    def _page(self, xid: Xid, ts: TableState, lob: LobColumn, lob_id: bytes, block: int, page: bytes) -> None:
        """A 26.6 block image: KDLI common, FPLOAD, LOAD_DATA, the page, SUPLOG (fixture layout)."""
        emit = self.emit
        scn, sub = emit.stream.open_record(emit.epoch)
        common = byteorder.pack("<BBBBHHI", 6, 0x20, 2, 0, len(page), 0x80, block)
        fpload = byteorder.pack(
            "<BxxxIQHHIII", 11, self.page_bytes + PAGE_OVERHEAD, scn, xid.usn, xid.slot, xid.sqn, lob.segment, 0
        )
        load = (
            byteorder.pack("<BxxxIHBB", 4, scn & 0xFFFFFFFF, 0x8000, 0x20, 0)
            + lob_id
            + b"\0" * 30
            + byteorder.pack("<HH", len(page), 0)
        )
        suplog = byteorder.pack("<BxxxHHIIHHI", 9, xid.usn, xid.slot, xid.sqn, ts.obj, 1, lob.column + 1, 0)
        vec = emit.d.vector(
            26, 6, 1, self.rfile, block, scn, 1, TYP_LOB, lob.segment, [common, fpload, load, page, suplog]
        )
        emit.stream.add(Record(scn, sub, vec, vector_offsets=[0]), False)

    # -------------------------------------------------------------- BasicFile
    def _basic(
        self, tx: TxnRedo, ts: TableState, lob: LobColumn, lob_id: bytes, kind: int, data: bytes, out_of_row: bool
    ) -> bytes:
        """A BasicFile value: in-row inode, or 19.1 pages + LOB index entries and an index-form locator."""
        if not out_of_row and len(data) <= INLINE_MAX:
            locator = basic_value_locator(kind, lob_id, data)
            self.readable.add(locator)
            return locator
        if not data:  # EMPTY_CLOB() out of row: no pages, no index entry (read as "")
            return basic_bare_locator(kind, lob_id)
        size = self.basic_page
        count = -(-len(data) // size)
        self._next_block += 1  # a gap between LOBs
        dbas = [dba(self.rfile, self._next_block + n) for n in range(count)]
        self._next_block += count
        written = 0

        def pages_to(stop: int) -> None:
            nonlocal written
            for n in range(written, min(stop, count)):
                self._direct_page(lob, lob_id, n, dbas[n], data[n * size : (n + 1) * size])
            written = max(written, min(stop, count))

        if out_of_row:
            pages_to(HEADER_PAGES)
            first = self._index_insert(tx, ts, lob, index_key(lob_id, 0), index_data(dbas[:HEADER_PAGES], (0, 0)))
            starts = range(HEADER_PAGES, count, ENTRY_PAGES)
        else:
            pages_to(INODE_PAGES)
            starts = range(INODE_PAGES, count, ENTRY_PAGES)
        for start in starts:
            pages_to(start + ENTRY_PAGES)
            self._index_insert(tx, ts, lob, index_key(lob_id, start), index_data(dbas[start : start + ENTRY_PAGES]))
        if not out_of_row:
            return basic_index_locator(kind, lob_id, len(data), size, dbas)
        full, rest = divmod(len(data), size)
        self._index_update(
            tx,
            ts,
            lob,
            first,
            index_key(lob_id, 0),
            index_data(dbas[:HEADER_PAGES], (0, 0)),
            index_data(dbas[:HEADER_PAGES], (full, rest)),
        )
        return basic_bare_locator(kind, lob_id)

    def _direct_page(self, lob: LobColumn, lob_id: bytes, page_no: int, block: int, page: bytes) -> None:
        """19.1: f1 = segment DATAOBJ#, LOB id, version, page number, DBA, the whole page from +36."""
        emit = self.emit
        scn, sub = emit.stream.open_record(emit.epoch)
        page = page + b"\0" * (self.basic_page - len(page))
        f1 = byteorder.pack("<I", lob.segment) + lob_id + byteorder.pack("<xxIHxxIII", 1, 0, page_no, block, 0) + page
        vec = emit.d.vector(19, 1, 1, self.rfile, block, scn, 1, TYP_LOB, lob.segment, [f1, b"\0" * 4])
        emit.stream.add(Record(scn, sub, vec, vector_offsets=[0]), False)

    def _leaf(self, lob: LobColumn) -> tuple[_Leaf, bool]:
        """The leaf the next entry goes to, and whether it is a new block (a split)."""
        leaf = self._leaves.get(lob.index)
        if leaf is None:
            self._next_leaf += 2
            leaf = self._leaves[lob.index] = _Leaf(dba(self.rfile, self._next_leaf))
            return leaf, False
        if leaf.rows >= LEAF_ROWS:
            self._next_leaf += 1
            leaf = self._leaves[lob.index] = _Leaf(dba(self.rfile, self._next_leaf))
            return leaf, True
        return leaf, False

    def _index_insert(self, tx: TxnRedo, ts: TableState, lob: LobColumn, key: bytes, keydata: bytes) -> tuple[int, int]:
        """A new LOB index entry: 10.2 into the current leaf, or 10.8 of a new leaf holding it alone."""
        leaf, split = self._leaf(lob)
        slot = leaf.rows
        leaf.rows += 1
        kdilk = self._kdilk(KDILK_PURGE, lob, leaf.dba)
        if split:
            kdxln = byteorder.pack("<BBBBB3xII", 2, 2, len(keydata), 0, 0, 0, leaf.dba - 1)
            fields = [kdxln, byteorder.pack("<HH", 0, 0x1F00), b"\x01\x01" + keydata + key]
            self._index_pair(tx, ts, lob, leaf.dba, 8, [kdilk, key, keydata], fields)
        else:
            head = byteorder.pack("<BBHHxx", 2, 0, slot, 2 + len(keydata) + len(key))
            self._index_pair(tx, ts, lob, leaf.dba, 2, [kdilk, key, keydata], [head, key, keydata])
        return leaf.dba, slot

    def _index_update(
        self, tx: TxnRedo, ts: TableState, lob: LobColumn, where: tuple[int, int], key: bytes, old: bytes, new: bytes
    ) -> None:
        """10.18: new key data of an entry; its 10.22 undo carries the key and the old key data."""
        leaf_dba, slot = where
        head = byteorder.pack("<HHHxx", 2, slot, 2 + len(new) + len(key))
        self._index_pair(tx, ts, lob, leaf_dba, 18, [self._kdilk(KDILK_UPDATE, lob, leaf_dba), key, old], [head, new])

    def _kdilk(self, code: int, lob: LobColumn, leaf_dba: int) -> bytes:
        """kdilk (20 bytes): code, itl, flags, index segment header DBA, leaf DBA, sdc."""
        return byteorder.pack("<BBBxIIiI", code, 2, 0, dba(self.rfile, 0x300000), leaf_dba, 0, 0)

    def _index_pair(
        self,
        tx: TxnRedo,
        ts: TableState,
        lob: LobColumn,
        leaf_dba: int,
        code: int,
        undo_tail: list[bytes],
        redo_tail: list[bytes],
    ) -> None:
        """One (5.1 opc 10.22, 10.x) record on the LOB index, opening the transaction if needed,
        exactly as :meth:`Emitter.pair` writes table changes."""
        self.emit.undo_redo(
            tx,
            leaf_dba,
            lob.index,
            lob.index,
            ts.spec.ts,
            (10, code, self.rfile),
            undo_tail,
            redo_tail,
            opc=OPC_INDEX_UNDO,
        )

    # -------------------------------------------------------------- expected output
    def expected(
        self, ts: TableState, image: dict[int, bytes | None] | None, after: bool
    ) -> dict[int, bytes | None] | None:
        """An expected row image with locators replaced as the parser replaces them."""
        if image is None:
            return None
        cols = self.columns(ts)
        if not cols:
            return image
        out = dict(image)
        for lob in cols:
            locator = out.get(lob.column)
            if not locator:
                continue
            data = self.values.get(locator)
            if data is not None and (after or locator in self.readable):
                out[lob.column] = LobValue(data, locator)
            else:
                out[lob.column] = LobValue(b"", locator, complete=False)
        return out
