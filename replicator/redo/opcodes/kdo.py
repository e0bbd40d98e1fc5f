"""KDO row operations: the header (§6.2), column fields (§6.4) and supplemental log data (§6.6).

Used at commit time only, for tables that passed the filter: nothing here runs for
changes nobody replicates.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from replicator.redo.vectors import ChangeVector

# KDO operation codes (op & 0x1F).
IUR, IRP, DRP, LKR, URP, ORP, MFC, CFA = 1, 2, 3, 4, 5, 6, 7, 8
QMI, QMD, LMN = 11, 12, 16
OP_ROWDEPS = 0x40
FLAG_KDOM2 = 0x80

# Row flag bits (§6.3).
FB_N, FB_P, FB_L, FB_F, FB_D, FB_H, FB_C, FB_K = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80

_KDO = {e: struct.Struct(e + "IIHBB") for e in "<>"}  # bdba, hdba, maxfr, op, flags
_U16 = {e: struct.Struct(e + "H") for e in "<>"}
_U32 = {e: struct.Struct(e + "I") for e in "<>"}


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


def parse_kdo(cv: ChangeVector, index: int) -> Kdo | None:
    """Parse the KDO header in field ``index`` of ``cv``; None if the field is too short."""
    f = cv.field(index)
    if len(f) < 16:
        return None
    e = cv.endian
    bdba, _, _, op_byte, flags = _KDO[e].unpack_from(f, 0)
    op = op_byte & 0x1F
    kdo = Kdo(op, bool(op_byte & OP_ROWDEPS), bool(flags & FLAG_KDOM2), bdba)
    u16 = _U16[e]
    if op in (IRP, ORP):
        if len(f) < 45:
            return None
        kdo.fb, kdo.cc = f[16], f[18]
        kdo.size_delt = u16.unpack_from(f, 40)[0]
        kdo.slot = u16.unpack_from(f, 42)[0]
        kdo.nulls = bytes(f[45 : 45 + (kdo.cc + 7) // 8])
    elif op in (DRP, LKR):
        kdo.slot = u16.unpack_from(f, 16)[0] if len(f) >= 18 else 0
    elif op == URP:
        if len(f) < 26:
            return None
        kdo.fb = f[16]
        kdo.slot = u16.unpack_from(f, 20)[0]
        kdo.cc = f[23]
        kdo.nulls = bytes(f[26 : 26 + (kdo.cc + 7) // 8])
    elif op == CFA:
        kdo.slot = u16.unpack_from(f, 24)[0] if len(f) >= 26 else 0
    elif op in (QMI, QMD):
        if len(f) < 20:
            return None
        kdo.nrow = f[18]
        kdo.slots = struct.unpack_from(f"{e}{kdo.nrow}H", f, 20) if len(f) >= 20 + 2 * kdo.nrow else ()
        kdo.slot = kdo.slots[0] if kdo.slots else 0
    return kdo


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
    n = cv.field_count
    while index <= n and cv.flen(index) == 0:
        index += 1
    if index > n:
        return None
    head = cv.field(index)
    if len(head) < 20:
        return None  # too short (seen with row triggers): treat as "no supplemental data"
    e = cv.endian
    u16 = _U16[e]
    cc = u16.unpack_from(head, 2)[0]
    if len(head) >= 26:
        bdba, slot = _U32[e].unpack_from(head, 20)[0], u16.unpack_from(head, 24)[0]
    else:
        bdba, slot = kdo.bdba, kdo.slot
    supp = Supplemental(head[1], cc, u16.unpack_from(head, 6)[0], u16.unpack_from(head, 8)[0], bdba, slot, (), (), 0)
    if index + 2 > n or cc == 0:
        return supp
    supp.nums = struct.unpack_from(f"{e}{cc}H", cv.field(index + 1), 0)
    supp.lens = struct.unpack_from(f"{e}{cc}H", cv.field(index + 2), 0)
    supp.first_value = index + 3
    return supp


def undo_layout(cv: ChangeVector, kdo: Kdo) -> tuple[int, tuple[int, ...] | None, int]:
    """Locate the row data of a 5.1 undo (opc 11.1).

    Returns (first row-data field or 0, URP column numbers or None, field index where the
    supplemental data search starts).
    """
    if kdo.op == URP:
        nums = _colnums(cv, 5, kdo.cc)
        if kdo.kdom2:
            return 6, nums, 7
        i = 6
        bit = 0
        for c in range(kdo.cc):
            if not kdo.nulls[c >> 3] & (1 << (c & 7)):
                while i <= cv.field_count and cv.flen(i) == 0:
                    i += 1
                i += 1
            bit += 1
        if kdo.rowdeps:
            while i <= cv.field_count and cv.flen(i) == 0:
                i += 1
            i += 1
        return 6, nums, i
    if kdo.op in (IRP, ORP):
        i = 5
        if kdo.cc:
            compressed = kdo.cc > 1 and cv.flen(5) == kdo.size_delt
            i = 6 if compressed else 5 + kdo.cc
        if kdo.rowdeps:
            i += 1
        return (5 if kdo.cc else 0), None, i
    if kdo.op == QMI:
        return 5, None, 0
    start = 5 + (1 if kdo.op == DRP and kdo.rowdeps else 0)
    return 0, None, start


def _colnums(cv: ChangeVector, index: int, cc: int) -> tuple[int, ...] | None:
    f = cv.field(index)
    if not f or not cc or len(f) < 2 * cc:
        return None
    return struct.unpack_from(f"{cv.endian}{cc}H", f, 0)


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


def multirow(cv: ChangeVector, sizes_field: int, rows_field: int, kdo: Kdo, big_scn: bool) -> list[dict[int, bytes | None]]:
    """Decode the rows of a QMI (11.11 redo) or of the undo of a QMD (§6.5)."""
    e = cv.endian
    sizes = struct.unpack_from(f"{e}{kdo.nrow}H", cv.field(sizes_field), 0)
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
