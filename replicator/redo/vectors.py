"""Change vectors inside a redo record (redo-format.md §4.1, §4.2)."""

from __future__ import annotations

import struct
from typing import Iterator

from replicator.errors import RedoLogError
from replicator.redo.header import read_scn8


class ChangeVector:
    """One change vector: its header fields and its (padded) field table.

    Field ``i`` (1-based, as in the spec) is ``data[offsets[i-1] : offsets[i-1] + lengths[i-1]]``;
    :meth:`field` returns it as a memoryview without copying.
    """

    __slots__ = (
        "layer", "code", "opcode", "cls", "afn", "dba", "scn", "seq", "typ", "obj", "con_id",
        "flags", "data", "start", "size", "offsets", "lengths", "endian", "header_size",
    )

    def __init__(self, data: memoryview, start: int, header_size: int, endian: str):
        hdr = _HEADER[endian]
        (self.layer, self.code, self.cls, self.afn, obj_hi, self.dba, self.seq, self.typ,
         obj_lo) = hdr.unpack_from(data, start)
        self.opcode = (self.layer << 8) | self.code
        self.obj = (obj_hi << 16) | obj_lo
        self.scn = read_scn8(data, start + 12, endian)
        if header_size == 32:
            self.con_id, self.flags = _CON[endian].unpack_from(data, start + 24)
        else:
            self.con_id, self.flags = 0, 0
        self.endian = endian
        self.header_size = header_size
        self.data = data
        self.start = start
        table = start + header_size
        tsize = _U16[endian].unpack_from(data, table)[0]
        count = (tsize - 2) // 2
        if tsize < 2 or table + tsize > len(data):
            raise RedoLogError(f"change vector {self.layer}.{self.code}: bad field table size {tsize}", 40009)
        self.lengths = struct.unpack_from(f"{endian}{count}H", data, table + 2) if count else ()
        pos = table + ((tsize + 2) & ~3)
        offsets = []
        for length in self.lengths:
            offsets.append(pos)
            pos += (length + 3) & ~3
        self.offsets = offsets
        self.size = pos - start
        if pos > len(data):
            raise RedoLogError(
                f"change vector {self.layer}.{self.code} at record offset {start} runs past the record end", 40009
            )

    @property
    def field_count(self) -> int:
        return len(self.lengths)

    def field(self, i: int) -> memoryview:
        """Field ``i`` (1-based); an empty view when the vector has fewer fields."""
        if i > len(self.lengths):
            return self.data[0:0]
        off = self.offsets[i - 1]
        return self.data[off : off + self.lengths[i - 1]]

    def flen(self, i: int) -> int:
        """Length of field ``i`` (1-based), 0 when absent."""
        return self.lengths[i - 1] if i <= len(self.lengths) else 0

    @property
    def usn(self) -> int:
        """Undo segment number derived from CLS (§4.3); meaningful for layer 5 vectors."""
        return (self.cls - 15) // 2 if self.cls >= 15 else 0

    def __repr__(self) -> str:
        return f"<CV {self.layer}.{self.code} cls={self.cls} dba={self.dba:#010x} obj={self.obj} fields={self.lengths}>"


_HEADER = {e: struct.Struct(e + "BBHHHIxxxxxxxxBBH") for e in "<>"}
_CON = {e: struct.Struct(e + "HxxH") for e in "<>"}
_U16 = {e: struct.Struct(e + "H") for e in "<>"}


def iter_vectors(data: bytes, header_size: int, vector_header: int, endian: str) -> Iterator[ChangeVector]:
    """Yield the change vectors of one record (``data`` is the whole record)."""
    view = memoryview(data)
    pos = header_size
    end = len(data)
    while pos + vector_header + 2 <= end:
        if view[pos] == 0 and view[pos + 1] == 0:
            break  # zero padding after the last vector
        cv = ChangeVector(view, pos, vector_header, endian)
        yield cv
        pos += cv.size
