"""LOB columns in generated redo: locators, SecureFile page images and their dictionary rows.

Modelled on the real 19c archive in ``shared/fixtures/redo/ora19-lob`` (redo-format.md §11):

* a value of up to :data:`INLINE_MAX` bytes stays in the row: the locator carries it
  (flg2 0x4890, a 1–3 byte length, the data);
* a larger value goes out of row to a SecureFile segment: one 26.6 block image per page
  (KDLI common BIMG, FPLOAD with the XID and segment DATAOBJ#, LOAD_DATA with the LOB id,
  the page data, SUPLOG with table OBJ# and column) written before the row change, and a
  locator listing the pages as extents (flg2 0x4090, style 0x20);
* ``EMPTY_CLOB()`` / ``EMPTY_BLOB()`` is a locator of length 0; NULL is no locator.

CLOB values are stored in AL16UTF16 when the database character set is multibyte (so OLR's
national-charset rule decodes them), NCLOB in the national set, BLOB as raw bytes. Each
written value gets a new LOB id, as Oracle gives a new LOB to every assigned value.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from replicator import events as ev
from replicator.errors import ConfigError
from replicator.redogen.blocks import Record
from replicator.redogen.ids import dba, rowid
from replicator.values.lob import LobValue

if TYPE_CHECKING:
    from replicator.redogen.coltypes import ColumnType
    from replicator.redogen.emit import Emitter
    from replicator.redogen.ids import Xid
    from replicator.redogen.rows import TableState

INLINE_MAX: Final = 3964  # bytes of data a locator keeps in the row (4000 minus its header)
MULTIBYTE_CHARSETS: Final = frozenset({871, 873})  # UTF8, AL32UTF8: CLOB data is stored as AL16UTF16
EMPTY_MARKERS: Final = frozenset({"EMPTY_CLOB()", "EMPTY_BLOB()"})
LOB_OBJ_BASE: Final = 4_000_000  # OBJ# of LOB segments: base + table OBJ# * 2048 + 2 * column
PAGE_OVERHEAD: Final = 132  # an 8 KiB SecureFile block holds 8060 bytes of data
MAX_EXTENT: Final = 255  # pages per extent (1-byte count)
TYP_LOB: Final = 10  # vector TYP of the 26.6 block images in the 19c fixture


class LobData(bytes):
    """A LOB value as stored (AL16UTF16 / raw bytes), before it becomes a locator."""


def is_lob(ctype: ColumnType) -> bool:
    """CLOB, NCLOB and BLOB columns."""
    return ctype.type_code in (ev.TYPE_CLOB, ev.TYPE_BLOB)


def parse_lob_type(base: str, text: str) -> tuple[int, int, int] | None:
    """(type code, COL$ length, charset form) of a LOB type name, None for other types."""
    return {"CLOB": (ev.TYPE_CLOB, 4000, 1), "NCLOB": (ev.TYPE_CLOB, 4000, 2),
            "BLOB": (ev.TYPE_BLOB, 4000, 0)}.get(base)


def _expand(value: Any, blob: bool) -> Any:
    """``{prefix: P, repeat: X, length: N}`` builds big values like SQL ``RPAD(P, N, X)``.

    Lengths count characters, or bytes for a BLOB (whose P and X are hex).
    """
    if isinstance(value, dict):
        pattern, length, prefix = value.get("repeat"), value.get("length"), value.get("prefix", "")
        if pattern is None or not isinstance(length, int) or length < 0 or set(value) - {"prefix", "repeat", "length"}:
            raise ConfigError(f"LOB value {value!r}: expected {{prefix: ..., repeat: ..., length: N}}")
        unit, head = (bytes.fromhex(pattern), bytes.fromhex(prefix)) if blob else (str(pattern), str(prefix))
        if not unit:
            raise ConfigError("LOB value: `repeat` must not be empty")
        return (head + unit * ((length - len(head)) // len(unit) + 1))[:length]
    return value


def encode_lob(ctype: ColumnType, value: Any, charsets: tuple[int, int], db_multibyte: bool) -> bytes | None:
    """A scenario value -> :class:`LobData` (None for NULL and for '' as Oracle does)."""
    blob = ctype.type_code == ev.TYPE_BLOB
    value = _expand(value, blob)
    if isinstance(value, str) and value.upper() in EMPTY_MARKERS:
        return LobData(b"")
    if blob:
        raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value)
        return LobData(raw) if raw else None
    text = str(value)
    if not text:
        return None
    from replicator.redogen.encode import encode_text

    if ctype.charset_form == 2 or db_multibyte:
        return LobData(encode_text(text, 2000 if ctype.charset_form != 2 else charsets[1]))
    return LobData(encode_text(text, charsets[0]))


def _length(total: int) -> tuple[int, bytes]:
    width = 0 if total < 0x100 else 1 if total < 0x10000 else 2 if total < 0x1000000 else 3
    return width, total.to_bytes(width + 1, "big")


def _locator(kind: int, lob_id: bytes, flg2: int, tail: bytes) -> bytes:
    """Header, LOB id, BE16 body size (from +20), BE16 flg2, BE16 bytes after +26, then ``tail``."""
    body = struct.pack(">HH", flg2, len(tail)) + tail
    return bytes.fromhex("00700001") + bytes([kind, 0x0C]) + bytes.fromhex("00800001") + lob_id \
        + struct.pack(">H", len(body) + 2) + body


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


@dataclass(slots=True)
class LobColumn:
    """Storage of one LOB column: segment and index OBJ#s."""

    column: int
    segment: int
    index: int


def lob_columns(ts: TableState) -> list[LobColumn]:
    """The LOB columns of a table with their (deterministic) segment and index OBJ#s."""
    return [LobColumn(i, LOB_OBJ_BASE + ts.obj * 2048 + 2 * i, LOB_OBJ_BASE + ts.obj * 2048 + 2 * i + 1)
            for i, ct in enumerate(ts.ctypes) if is_lob(ct)]


@dataclass
class LobStore:
    """Writes LOB values of the simulated database and remembers locator -> data for the expected output."""

    emit: Emitter
    rfile: int
    page_bytes: int
    db_multibyte: bool
    values: dict[bytes, bytes] = field(default_factory=dict)
    _next_id: int = 0x00BC0000
    _next_block: int = 0x1000
    _columns: dict[int, list[LobColumn]] = field(default_factory=dict)

    def columns(self, ts: TableState) -> list[LobColumn]:
        """LOB columns of ``ts`` (cached)."""
        found = self._columns.get(id(ts))
        if found is None:
            found = self._columns[id(ts)] = lob_columns(ts)
        return found

    def store(self, xid: Xid, ts: TableState, values: list[bytes | None]) -> list[bytes | None]:
        """Replace every :class:`LobData` of a row by a locator, writing out-of-row pages first."""
        out = list(values)
        for lob in self.columns(ts):
            data = out[lob.column]
            if isinstance(data, LobData):
                out[lob.column] = self._write(xid, ts, lob, bytes(data))
        return out

    def _write(self, xid: Xid, ts: TableState, lob: LobColumn, data: bytes) -> bytes:
        self._next_id += 1
        lob_id = b"\x00\x00\x00\x01" + self._next_id.to_bytes(6, "big")
        kind = 1 if ts.ctypes[lob.column].type_code == ev.TYPE_BLOB else 2
        if len(data) <= INLINE_MAX:
            locator = inline_locator(kind, lob_id, data)
        else:
            extents = self._pages(xid, ts, lob, lob_id, data)
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
        common = struct.pack("<BBBBHHI", 6, 0x20, 2, 0, len(page), 0x80, block)
        fpload = struct.pack("<BxxxIQHHIII", 11, self.page_bytes + PAGE_OVERHEAD, scn, xid.usn, xid.slot, xid.sqn,
                             lob.segment, 0)
        load = struct.pack("<BxxxIHBB", 4, scn & 0xFFFFFFFF, 0x8000, 0x20, 0) + lob_id + b"\0" * 30 \
            + struct.pack("<HH", len(page), 0)
        suplog = struct.pack("<BxxxHHIIHHI", 9, xid.usn, xid.slot, xid.sqn, ts.obj, 1, lob.column + 1, 0)
        vec = emit.d.vector(26, 6, 1, self.rfile, block, scn, 1, TYP_LOB, lob.segment,
                            [common, fpload, load, page, suplog])
        emit.stream.add(Record(scn, sub, vec, vector_offsets=[0]), False)

    # -------------------------------------------------------------- expected output
    def expected(self, ts: TableState, image: dict[int, bytes | None] | None, after: bool
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
            inline = data is not None and len(data) <= INLINE_MAX
            if data is not None and (after or inline):
                out[lob.column] = LobValue(data, locator)
            else:
                out[lob.column] = LobValue(b"", locator, complete=False)
        return out


def add_dictionary_rows(doc: dict[str, Any], tables: list[TableState]) -> None:
    """Add SYS.LOB$ and the OBJ$ rows of LOB segments (type 21) and LOB indexes (type 1) to a
    schema checkpoint document, and mark LOB columns in COL$ (PROPERTY 0x80, as Oracle does)."""
    owners = {u["name"]: u["user"] for u in doc.get("sys-user", [])}
    lob_cols = {(ts.obj, lob.column + 1) for ts in tables for lob in lob_columns(ts)}
    if not lob_cols:
        return
    # Copies: the lists and rows may be shared with the engine's catalog.
    doc["sys-lob"], doc["sys-obj"] = list(doc.get("sys-lob", [])), list(doc.get("sys-obj", []))
    known = {row["l-obj"] for row in doc["sys-lob"]}
    doc["sys-col"] = [dict(row, property=[row["property"][0] | ev.COL_PROPERTY_STORED_AS_LOB, row["property"][1]])
                      if (row["obj"], row["col"]) in lob_cols else row for row in doc.get("sys-col", [])]
    n = 0
    for ts in tables:
        for lob in lob_columns(ts):
            n += 1
            if lob.segment in known or ts.spec.owner not in owners:
                continue
            col = lob.column + 1
            doc["sys-lob"].append({"row-id": rowid(2, dba(1, 0x7A00 + n // 64), n % 64), "obj": ts.obj, "col": col,
                                   "int-col": col, "l-obj": lob.segment, "ts": ts.spec.ts})
            for k, (obj, name, kind) in enumerate(((lob.segment, f"SYS_LOB{ts.obj:010d}C{col:05d}$$", 21),
                                                   (lob.index, f"SYS_IL{ts.obj:010d}C{col:05d}$$", 1))):
                m = 2 * n + k
                doc["sys-obj"].append({
                    "row-id": rowid(18, dba(1, 0x7C00 + m // 64), m % 64), "owner": owners[ts.spec.owner],
                    "obj": obj, "data-obj": obj, "name": name, "type": kind, "flags": [4, 0], "single": 0})
