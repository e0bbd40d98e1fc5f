"""Change vectors as Oracle writes them (redo-format.md §4, §5, §6), little-endian.

:class:`Dialect` knows the per-version layout (24- or 32-byte vector header, CON_ID,
session-number position...). The small ``*_field`` helpers build one payload field each
(ktudb, ktub/ktubl, KTB, KDO headers, supplemental header); the ``v_*`` methods assemble a
whole vector for one opcode. Layouts were copied from the real 23ai and 19c archives in
shared/fixtures/redo (field sizes, constant bytes such as maxfr 0x12fa and flg 0x0d).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from replicator.redogen import byteorder
from replicator.redogen.ids import Uba, Xid

_HDR32: Final = byteorder.Struct("<BBHHHIIHHBBHHHHH")  # 12.1+: ... CON_ID, 0, flags, 0
_HDR24: Final = byteorder.Struct("<BBHHHIIHHBBH")  # 11.2
_U16: Final = byteorder.Struct("<H")
UNDO_OBJ: Final = 0xFFFFFFFF
TYP_NO_BLOCK: Final = 6  # vector not tied to a block (5.19/5.20, 24.x)

# KDO operation codes (§6.2) and row flag bits (§6.3).
OP_IRP, OP_DRP, OP_URP, OP_ORP, OP_QMI, OP_QMD = 2, 3, 5, 6, 11, 12
UNDO_OP: Final = 0x20  # the bit Oracle sets on undo-side KDO headers
XA, XR = 1, 2  # KDO xtype: redo / rollback
FB_N, FB_P, FB_L, FB_F, FB_H = 0x01, 0x02, 0x04, 0x08, 0x20
MAXFR: Final = 0x12FA


_PAD: Final = (b"", b"\0\0\0", b"\0\0", b"\0")  # padding after a field, by length % 4


def field_table(fields: Sequence[bytes]) -> bytes:
    """The field-length table (§4.2): its own size, one u16 per field, padded to 4 bytes."""
    n = len(fields)
    table = byteorder.pack(f"<{n + 1}H", 2 + 2 * n, *map(len, fields))
    return table + _PAD[len(table) & 3]


def join_fields(fields: Sequence[bytes]) -> bytes:
    """Fields, each padded to a multiple of 4 bytes."""
    return b"".join([x for f in fields for x in (f, _PAD[len(f) & 3])])


class Dialect:
    """Per-version vector layout."""

    def __init__(self, compat: int, con_id: int):
        self.compat = compat
        self.con_id = con_id
        self.hdr32 = compat >= 0x0C100000
        self.v19 = compat >= 0x13000000
        self.v23 = compat >= 0x17000000

    def vector(
        self,
        layer: int,
        code: int,
        cls: int,
        afn: int,
        dba: int,
        scn: int,
        seq: int,
        typ: int,
        obj: int,
        fields: Sequence[bytes],
    ) -> bytes:
        """Header + field-length table + padded fields of one change vector."""
        table = field_table(fields)
        scn_base, scn_wrap = scn & 0xFFFFFFFF, (scn >> 32) & 0xFFFF
        if self.hdr32:
            head = _HDR32.pack(
                layer,
                code,
                cls,
                afn,
                obj >> 16,
                dba,
                scn_base,
                scn_wrap,
                0,
                seq,
                typ,
                obj & 0xFFFF,
                self.con_id,
                0,
                0,
                0,
            )
        else:
            head = _HDR24.pack(layer, code, cls, afn, obj >> 16, dba, scn_base, scn_wrap, 0, seq, typ, obj & 0xFFFF)
        return head + table + join_fields(fields)


# ---------------------------------------------------------------------------------------
# Payload fields
# ---------------------------------------------------------------------------------------
def ktudb_field(xid: Xid, uba: Uba, *, first: bool, size: int) -> bytes:
    """5.1 f1: undo record size/space/flags, the XID and the UBA sequence/record."""
    return byteorder.pack(
        "<HHHHHHIHBB",
        min(size, 0xFFFF),
        0x1F00,
        0x12 if first else 0x22,
        0,
        xid.usn,
        xid.slot,
        xid.sqn,
        uba.seq,
        uba.rec,
        0,
    )


def ktub_field(
    obj: int,
    data_obj: int,
    ts: int,
    slot: int,
    flags: int,
    sqn: int,
    *,
    opc: int = 0x0B01,
    rci: int = 0,
    begin: tuple[Uba, int, int] | None = None,
) -> bytes:
    """ktub (24 bytes), or ktubl (76 bytes) for the begin-transaction undo.

    ``begin`` is (prev-ctl UBA, base SCN for the prev-commit fields, logon user#).
    """
    head = byteorder.pack("<IIIIBBBBHH", obj, data_obj, ts, 0, opc >> 8, opc & 0xFF, slot, rci, flags, sqn & 0xFFFF)
    if begin is None:
        return head
    prev_uba, scn, user = begin
    return (
        head
        + byteorder.pack("<HH", 0, 0)
        + prev_uba.pack()
        + scn8(scn - 7, False)
        + scn8(scn - 3, False)
        + b"\0" * 4
        + b"\xff" * 8
        + byteorder.pack("<III", 0x172, 0, user)
    )


def scn8(scn: int, big_form: bool = True) -> bytes:
    """SCN8: base u32, wrap u16 (with 0x8000 for the 12.2+ big form), u16 high bits."""
    if big_form:
        return byteorder.pack("<IHH", scn & 0xFFFFFFFF, 0x8000 | (scn >> 48), (scn >> 32) & 0xFFFF)
    return byteorder.pack("<IHH", scn & 0xFFFFFFFF, (scn >> 32) & 0xFFFF, 0)


KTB_Z: Final = bytes([0x03, 0x0D]) + b"\0" * 6


def ktb_f(xid: Xid, uba: Uba) -> bytes:
    """KTB redo type F (new ITL): 8-byte header, XID, UBA."""
    return bytes([0x01, 0x0D]) + b"\0" * 6 + xid.pack() + uba.pack()


def ktb_c(uba: Uba) -> bytes:
    """KTB redo type C: 8-byte header, UBA."""
    return bytes([0x02, 0x0D]) + b"\0" * 6 + uba.pack()


def _kdo_head(bdba: int, hdba: int, op: int, xtype: int, itli: int) -> bytes:
    return byteorder.pack("<IIHBBBBH", bdba, hdba, MAXFR, op, xtype, itli, 0, 0)


def null_bitmap(values: Sequence[bytes | None]) -> bytes:
    """Bit i set (LSB first) when value i is NULL."""
    out = bytearray((len(values) + 7) // 8)
    for i, v in enumerate(values):
        if v is None:
            out[i >> 3] |= 1 << (i & 7)
    return bytes(out)


def kdo_irp(
    bdba: int,
    hdba: int,
    op: int,
    xtype: int,
    itli: int,
    fb: int,
    values: Sequence[bytes | None],
    slot: int,
    size: int,
    nrid: tuple[int, int] = (0, 0),
) -> bytes:
    """KDO IRP/ORP (48 + bitmap bytes): fb, lb, cc, nrid, size, slot, tabn, null bitmap."""
    body = byteorder.pack("<BBBB8xIH6xHHB", fb, itli, len(values), 0, nrid[0], nrid[1], size, slot, 0)
    return _kdo_head(bdba, hdba, op, xtype, itli) + body + null_bitmap(values) + b"\0" * 3


def kdo_drp(bdba: int, hdba: int, op: int, xtype: int, itli: int, slot: int) -> bytes:
    """KDO DRP (20 bytes): slot, tabn."""
    return _kdo_head(bdba, hdba, op, xtype, itli) + byteorder.pack("<HBB", slot, 0, 0)


def kdo_urp(
    bdba: int,
    hdba: int,
    op: int,
    xtype: int,
    itli: int,
    fb: int,
    lock: int,
    slot: int,
    ncol: int,
    values: Sequence[bytes | None],
    size_delta: int,
) -> bytes:
    """KDO URP (28 + bitmap bytes): fb, lock, ckix, tabn, slot, ncol, nnew, size delta, null bitmap."""
    body = byteorder.pack("<BBBBHBBh", fb, lock, 0, 0, slot, ncol, len(values), size_delta)
    return _kdo_head(bdba, hdba, op, xtype, itli) + body + null_bitmap(values) + b"\0" * 2


def kdo_qm(bdba: int, hdba: int, op: int, xtype: int, itli: int, slots: Sequence[int]) -> bytes:
    """KDO QMI/QMD (22 + 2·nrow bytes): tabn, lock, nrow, slot list."""
    return _kdo_head(bdba, hdba, op, xtype, itli) + byteorder.pack(
        f"<BBBB{len(slots)}H2x", 0, itli, len(slots), 0, *slots
    )


def row_bytes(fb: int, lb: int, values: Sequence[bytes | None]) -> bytes:
    """A row in block format (§6.5): fb lb cc, then length-prefixed columns (0xFF NULL, 0xFE+u16)."""
    out = bytearray((fb, lb, len(values)))
    for v in values:
        if v is None:
            out.append(0xFF)
        elif len(v) <= 250:
            out.append(len(v))
            out += v
        else:
            out.append(0xFE)
            out += _U16.pack(len(v))
            out += v
    return bytes(out)


def supp_fields(
    kind: int,
    fb: int,
    before: int,
    after: int,
    columns: Sequence[tuple[int, bytes | None]],
    head: tuple[int, int] | None = None,
) -> list[bytes]:
    """Supplemental-log fields of a 5.1 (§6.6): header, column numbers, lengths, values.

    ``kind`` is 1 update, 2 insert, 4 delete; ``columns`` are (1-based segcol, value).
    """
    header = byteorder.pack("<BBHHHH10x", kind, fb, len(columns), 1, before, after)
    if head is not None:  # the head-piece ROWID of a chained/migrated row
        header += byteorder.pack("<IHH", head[0], head[1], 1)
    out = [header]
    if columns:
        out.append(byteorder.pack(f"<{len(columns)}H", *(c for c, _ in columns)))
        out.append(byteorder.pack(f"<{len(columns)}H", *(0xFFFF if v is None else len(v) for _, v in columns)))
        out.extend(v or b"" for _, v in columns)
    return out
