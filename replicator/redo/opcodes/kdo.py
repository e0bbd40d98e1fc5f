"""KDO row operations: the header (§6.2), column fields (§6.4) and supplemental log data (§6.6).

Used at commit time only, for tables that passed the filter: nothing here runs for
changes nobody replicates.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from replicator.redo.vectors import ChangeVector, u16_struct

# KDO operation codes (op & 0x1F).
IUR, IRP, DRP, LKR, URP, ORP, MFC, CFA = 1, 2, 3, 4, 5, 6, 7, 8
QMI, QMD, LMN = 11, 12, 16
OP_ROWDEPS = 0x40
FLAG_KDOM2 = 0x80

# Row flag bits (§6.3).
FB_N, FB_P, FB_L, FB_F, FB_D, FB_H, FB_C, FB_K = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80

_KDO = {e: struct.Struct(e + "IIHBB") for e in "<>"}  # bdba, hdba, maxfr, op, flags
_U16 = {e: struct.Struct(e + "H") for e in "<>"}


@dataclass(slots=True)
class Kdo:
    """The parts of a KDO header that decoding needs."""

    op: int  # op & 0x1F
    rowdeps: bool
    kdom2: bool
    bdba: int
    slot: int = 0
    fb: int = 0
    cc: int = 0
    size_delt: int = 0
    nulls: bytes = b""
    nrow: int = 0
    slots: tuple[int, ...] = ()


# After the common header: fb, (1), cc, (21), size/delt, slot of an IRP/ORP (from +16).
_KDO_IRP = {e: struct.Struct(e + "BxB21xHH") for e in "<>"}
# fb, (3), slot, (1), cc of a URP (from +16).
_KDO_URP = {e: struct.Struct(e + "B3xHxB") for e in "<>"}


def parse_kdo(cv: ChangeVector, index: int) -> Kdo | None:
    """Parse the KDO header in field ``index`` of ``cv``; None if the field is too short."""
    f = cv.field(index)
    size = len(f)
    if size < 16:
        return None
    e = cv.endian
    bdba, _, _, op_byte, flags = _KDO[e].unpack_from(f, 0)
    op = op_byte & 0x1F
    rowdeps = bool(op_byte & OP_ROWDEPS)
    kdom2 = bool(flags & FLAG_KDOM2)
    # Built in one call per op (this runs twice for every replicated change at commit).
    if op == URP:
        if size < 26:
            return None
        fb, slot, cc = _KDO_URP[e].unpack_from(f, 16)
        return Kdo(op, rowdeps, kdom2, bdba, slot, fb, cc, 0, bytes(f[26 : 26 + (cc + 7) // 8]))
    if op == IRP or op == ORP:
        if size < 45:
            return None
        fb, cc, size_delt, slot = _KDO_IRP[e].unpack_from(f, 16)
        return Kdo(op, rowdeps, kdom2, bdba, slot, fb, cc, size_delt, bytes(f[45 : 45 + (cc + 7) // 8]))
    if op == DRP or op == LKR:
        return Kdo(op, rowdeps, kdom2, bdba, _U16[e].unpack_from(f, 16)[0] if size >= 18 else 0)
    if op == CFA:
        return Kdo(op, rowdeps, kdom2, bdba, _U16[e].unpack_from(f, 24)[0] if size >= 26 else 0)
    if op == QMI or op == QMD:
        if size < 20:
            return None
        nrow = f[18]
        slots = u16_struct(e, nrow).unpack_from(f, 20) if size >= 20 + 2 * nrow else ()
        return Kdo(op, rowdeps, kdom2, bdba, slots[0] if slots else 0, nrow=nrow, slots=slots)
    return Kdo(op, rowdeps, kdom2, bdba)


@dataclass(slots=True)
class Supplemental:
    """Supplemental log data at the end of a 5.1 undo (§6.6)."""

    fb: int
    cc: int
    before: int
    after: int
    bdba: int
    slot: int
    nums: tuple[int, ...]  # 1-based segment column numbers
    lens: tuple[int, ...]
    first_value: int  # field index of the first value


def parse_supplemental(cv: ChangeVector, index: int, kdo: Kdo) -> Supplemental | None:
    """Parse supplemental fields starting at field ``index`` (0-length fields skipped first)."""
    lengths = cv.lengths
    n = len(lengths)
    while index <= n and lengths[index - 1] == 0:
        index += 1
    if index > n:
        return None
    head = cv.field(index)
    if len(head) < 20:
        return None  # too short (seen with row triggers): treat as "no supplemental data"
    e = cv.endian
    fb, cc, before, after = _SUPP_HEAD[e].unpack_from(head, 0)
    if len(head) >= 26:
        bdba, slot = _SUPP_HEAD_ROW[e].unpack_from(head, 20)
    else:
        bdba, slot = kdo.bdba, kdo.slot
    if index + 2 > n or cc == 0:
        return Supplemental(fb, cc, before, after, bdba, slot, (), (), 0)
    u16s = u16_struct(e, cc)
    nums = u16s.unpack_from(cv.field(index + 1), 0)
    lens = u16s.unpack_from(cv.field(index + 2), 0)
    return Supplemental(fb, cc, before, after, bdba, slot, nums, lens, index + 3)


# (1), fb, cc, (2), before, after: the supplemental head; then bdba, slot at +20.
_SUPP_HEAD = {e: struct.Struct(e + "xBH2xHH") for e in "<>"}
_SUPP_HEAD_ROW = {e: struct.Struct(e + "IH") for e in "<>"}


def undo_layout(cv: ChangeVector, kdo: Kdo) -> tuple[int, tuple[int, ...] | None, int]:
    """Locate the row data of a 5.1 undo (opc 11.1).

    Returns (first row-data field or 0, URP column numbers or None, field index where the
    supplemental data search starts).
    """
    op = kdo.op
    if op == URP:
        nums = _colnums(cv, 5, kdo.cc)
        if kdo.kdom2:
            return 6, nums, 7
        # Skip one non-empty field per non-NULL column (empty fillers do not count).
        lengths = cv.lengths
        n = len(lengths)
        if len(kdo.nulls) < (kdo.cc + 7) >> 3:
            raise IndexError("KDO NULL bitmap shorter than its column count")
        nulls = int.from_bytes(kdo.nulls, "little")
        i = 6
        for c in range(kdo.cc):
            if not nulls >> c & 1:
                while i <= n and lengths[i - 1] == 0:
                    i += 1
                i += 1
        if kdo.rowdeps:
            while i <= n and lengths[i - 1] == 0:
                i += 1
            i += 1
        return 6, nums, i
    if op == IRP or op == ORP:
        i = 5
        if kdo.cc:
            compressed = kdo.cc > 1 and cv.flen(5) == kdo.size_delt
            i = 6 if compressed else 5 + kdo.cc
        if kdo.rowdeps:
            i += 1
        return (5 if kdo.cc else 0), None, i
    if op == QMI:
        return 5, None, 0
    start = 5 + (1 if op == DRP and kdo.rowdeps else 0)
    return 0, None, start


def _colnums(cv: ChangeVector, index: int, cc: int) -> tuple[int, ...] | None:
    f = cv.field(index)
    if not f or not cc or len(f) < 2 * cc:
        return None
    return u16_struct(cv.endian, cc).unpack_from(f, 0)


def redo_layout(cv: ChangeVector, kdo: Kdo) -> tuple[int, tuple[int, ...] | None]:
    """Locate the row data of an 11.x redo vector: (first row-data field or 0, URP column numbers)."""
    if kdo.op == URP:
        return (4 if cv.field_count >= 4 else 0), _colnums(cv, 3, kdo.cc)
    if kdo.op in (IRP, ORP):
        return (3 if kdo.cc else 0), None
    if kdo.op == QMI:
        return 4, None
    return 0, None


def is_compressed(cv: ChangeVector, kdo: Kdo, first: int, redo: bool) -> bool:
    """A compressed row piece is one opaque field whose length equals size/delt (§6.4)."""
    if kdo.op not in (IRP, ORP) or not first:
        return False
    return (kdo.cc > 1 or (redo and kdo.cc == 0)) and cv.flen(first) == kdo.size_delt


def multirow(
    cv: ChangeVector, sizes_field: int, rows_field: int, kdo: Kdo, big_scn: bool
) -> list[dict[int, bytes | None]]:
    """Decode the rows of a QMI (11.11 redo) or of the undo of a QMD (§6.5)."""
    e = cv.endian
    sizes = u16_struct(e, kdo.nrow).unpack_from(cv.field(sizes_field), 0)
    data = cv.field(rows_field)
    rows: list[dict[int, bytes | None]] = []
    pos = 0
    for size in sizes:
        p = pos + 3
        cc = data[pos + 2]
        if kdo.rowdeps:
            p += 8 if big_scn else 6
        row: dict[int, bytes | None] = {}
        for col in range(cc):
            n = data[p]
            p += 1
            if n == 0xFF:
                row[col] = None
                continue
            if n == 0xFE:
                n = _U16[e].unpack_from(data, p)[0]
                p += 2
            row[col] = bytes(data[p : p + n])
            p += n
        rows.append(row)
        pos += size
    return rows
