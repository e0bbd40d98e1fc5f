"""Layer 5 (undo and transaction control): 5.1 ktudb/ktub, 5.2 begin, 5.4 commit, multi-block undo."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from replicator.redo.vectors import ChangeVector

UNDO_HEAD, UNDO_TAIL, UNDO_LAST_SPLIT, UNDO_BEGIN, UNDO_USER_DONE, UNDO_MID = 0x1, 0x2, 0x4, 0x8, 0x10, 0x100
COMMIT_ROLLBACK = 0x04


@dataclass(slots=True)
class UndoInfo:
    """Identity of a 5.1 undo vector: transaction, object and the operation it reverses."""

    xid: int
    obj: int
    data_obj: int
    opc: int  # e.g. 0x0B01 row operation, 0x0A16 index leaf, 0x1A01 LOB
    slot: int
    flags: int


# usn, slot, sqn at ktudb +8 (field 1 of a 5.1)
_KTUDB_XID = {e: struct.Struct(e + "HHI") for e in "<>"}
# obj, data obj, (8 bytes), opc layer, opc code, slot, (1 byte), flags: a ktub (field 2 of a 5.1)
_KTUB = {e: struct.Struct(e + "II8xBBBxH") for e in "<>"}


def undo_info(cv: ChangeVector) -> UndoInfo | None:
    """Parse 5.1 fields 1 (ktudb) and 2 (ktub); None when they are too short."""
    # Runs for every 5.1 vector: fields are read in place, not sliced out first.
    lengths = cv.lengths
    if len(lengths) < 2 or lengths[0] < 20 or lengths[1] < 22:
        return None
    e = cv.endian
    data, offsets = cv.data, cv.offsets
    usn, slot, sqn = _KTUDB_XID[e].unpack_from(data, offsets[0] + 8)
    obj, data_obj, opc_layer, opc_code, row_slot, flags = _KTUB[e].unpack_from(data, offsets[1])
    return UndoInfo((usn << 48) | (slot << 32) | sqn, obj, data_obj, (opc_layer << 8) | opc_code, row_slot, flags)


def logon_user(cv: ChangeVector) -> int:
    """The logon user# of a begin-transaction 5.1 (ktubl, field 2 of 76+ bytes, at +72); -1 if absent."""
    if len(cv.lengths) < 2 or cv.lengths[1] < 76:
        return -1
    return struct.unpack_from(cv.endian + "I", cv.data, cv.offsets[1] + 72)[0]


def ktub_info(cv: ChangeVector) -> tuple[int, int, int, int, int] | None:
    """For 5.6 / 5.11: (obj, data_obj, opc, slot, flags) from field 1 (a ktub)."""
    f1 = cv.field(1)
    if len(f1) < 22:
        return None
    e = cv.endian
    obj, data_obj = struct.unpack_from(e + "II", f1, 0)
    return obj, data_obj, (f1[16] << 8) | f1[17], f1[18], struct.unpack_from(e + "H", f1, 20)[0]


def begin_xid(cv: ChangeVector) -> int:
    """XID opened by a 5.2 (0 for a cleanup with SQN 0)."""
    f1 = cv.field(1)
    if len(f1) < 8:
        return 0
    slot, sqn = struct.unpack_from(cv.endian + "HxxI", f1, 0)
    return (cv.usn << 48) | (slot << 32) | sqn if sqn else 0


def commit_info(cv: ChangeVector) -> tuple[int, bool] | None:
    """(xid, rolled back) of a 5.4."""
    f1 = cv.field(1)
    if len(f1) < 17:
        return None
    slot, sqn = struct.unpack_from(cv.endian + "HxxI", f1, 0)
    return (cv.usn << 48) | (slot << 32) | sqn, bool(f1[16] & COMMIT_ROLLBACK)


def build_vector(template: ChangeVector, fields: list[bytes]) -> ChangeVector:
    """A new vector with ``template``'s header and the given fields (multi-block undo merge)."""
    e = template.endian
    header_len = template.header_size
    head = bytes(template.data[template.start : template.start + header_len])
    table = struct.pack(f"{e}H{len(fields)}H", 2 + 2 * len(fields), *[len(f) for f in fields])
    table += b"\x00" * (((len(table) + 3) & ~3) - len(table))
    body = b"".join(f + b"\x00" * (((len(f) + 3) & ~3) - len(f)) for f in fields)
    data = head + table + body
    return ChangeVector(data, 0, header_len, e)


def merge_multiblock(newer: ChangeVector, older: ChangeVector, flags: int) -> ChangeVector:
    """Merge two pieces of a split undo record (§7.5): newer's fields, then older's fields 3..m."""
    new_fields = [bytes(newer.field(i)) for i in range(1, newer.field_count + 1)]
    old_fields = [bytes(older.field(i)) for i in range(3, older.field_count + 1)]
    if flags & UNDO_LAST_SPLIT and old_fields and len(new_fields) > 2:
        new_fields[-1] += old_fields.pop(0)
    return build_vector(newer, new_fields + old_fields)
