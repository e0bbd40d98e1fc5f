"""Change vectors inside a redo record (redo-format.md §4.1, §4.2)."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Final

from replicator.errors import RedoLogError
from replicator.redo.header import SCN_NONE

# ChangeVector.typ bit: the vector belongs to an encrypted tablespace (OLR does not decode it).
TYP_ENCRYPTED: Final = 0x80


class ChangeVector:
    """One change vector: its header fields and its (padded) field table.

    Field ``i`` (1-based, as in the spec) is ``data[offsets[i-1] : offsets[i-1] + lengths[i-1]]``;
    ``data`` is the whole record as ``bytes``, so :meth:`field` is one slice.
    """

    __slots__ = (
        "_scn",
        "afn",
        "cls",
        "code",
        "con_id",
        "data",
        "dba",
        "endian",
        "flags",
        "header_size",
        "layer",
        "lengths",
        "obj",
        "offsets",
        "opcode",
        "seq",
        "size",
        "start",
        "typ",
    )

    def __init__(self, data: bytes, start: int, header_size: int, endian: str):
        # Hot path (every vector at parse, every stored one again at commit): one unpack
        # reads the header and the field-table size, and the offsets are a plain loop,
        # which measured faster than accumulate() for the usual 2-30 fields.
        if header_size == 32:
            (
                layer,
                code,
                self.cls,
                self.afn,
                obj_hi,
                self.dba,
                scn_base,
                scn_w,
                scn_hi,
                self.seq,
                self.typ,
                obj_lo,
                self.con_id,
                self.flags,
                tsize,
            ) = _HEADER32[endian].unpack_from(data, start)
        else:
            (
                layer,
                code,
                self.cls,
                self.afn,
                obj_hi,
                self.dba,
                scn_base,
                scn_w,
                scn_hi,
                self.seq,
                self.typ,
                obj_lo,
                tsize,
            ) = _HEADER24[endian].unpack_from(data, start)
            self.con_id = self.flags = 0
        self.layer = layer
        self.code = code
        self.opcode = (layer << 8) | code
        self.obj = (obj_hi << 16) | obj_lo
        # The block SCN is rarely used: keep its raw parts (decoded by the `scn` property).
        self._scn = (scn_base, scn_w, scn_hi)
        self.endian = endian
        self.header_size = header_size
        self.data = data
        self.start = start
        table = start + header_size
        size = len(data)
        if tsize < 2 or table + tsize > size:
            raise RedoLogError(f"change vector {layer}.{code}: bad field table size {tsize}", 40009)
        count = (tsize - 2) >> 1
        lengths = u16_struct(endian, count).unpack_from(data, table + 2) if count else ()
        self.lengths = lengths
        offsets = []
        pos = table + ((tsize + 2) & ~3)
        for n in lengths:
            offsets.append(pos)
            pos += (n + 3) & ~3  # fields are padded to 4 bytes
        self.offsets = offsets
        self.size = pos - start
        if pos > size:
            raise RedoLogError(f"change vector {layer}.{code} at record offset {start} runs past the record end", 40009)

    @property
    def scn(self) -> int:
        """The block SCN before the change (vector header +12)."""
        base, w, hi = self._scn
        if base == 0xFFFFFFFF and w == 0xFFFF:
            return SCN_NONE
        if w & 0x8000:
            return base | (hi << 32) | ((w & 0x7FFF) << 48)
        return base | (w << 32)

    @property
    def field_count(self) -> int:
        return len(self.lengths)

    def field(self, i: int) -> bytes:
        """Field ``i`` (1-based); empty when the vector has fewer fields."""
        if i > len(self.lengths):
            return b""
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


# layer, code, cls, afn, obj hi, dba, SCN base/wrap/high, seq, typ, obj lo, then the
# field-table size that follows the 24-byte header.
_HEADER24 = {e: struct.Struct(e + "BBHHHIIHHBBHH") for e in "<>"}
# The same with the 12c+ CON_ID and flags in between (32-byte header).
_HEADER32 = {e: struct.Struct(e + "BBHHHIIHHBBHHxxHxxH") for e in "<>"}
_LENGTHS: dict[tuple[str, int], struct.Struct] = {}


def u16_struct(endian: str, count: int) -> struct.Struct:
    """A cached struct of ``count`` u16 values (field tables, column numbers, slots)."""
    s = _LENGTHS.get((endian, count))
    if s is None:
        s = _LENGTHS[(endian, count)] = struct.Struct(f"{endian}{count}H")
    return s


def iter_vectors(data: bytes, header_size: int, vector_header: int, endian: str) -> Iterator[ChangeVector]:
    """Yield the change vectors of one record (``data`` is the whole record)."""
    pos = header_size
    end = len(data)
    while pos + vector_header + 2 <= end:
        if data[pos] == 0 and data[pos + 1] == 0:
            break  # zero padding after the last vector
        cv = ChangeVector(data, pos, vector_header, endian)
        yield cv
        pos += cv.size
