"""Undo/redo payloads of row operations: one (5.1, 11.x) pair per row piece (§5.6, §6).

Each function returns :class:`PairSpec` objects in the order Oracle writes them, without
the parts that depend on the transaction (ktudb, ktub, KTB), which the engine adds. The
supplemental header's before/after give the 1-based table column of the first column a
vector lists (§6.7); its head ROWID ties the pieces of one chained row together (§6.8).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from replicator.redogen import byteorder
from replicator.redogen import vectors as v
from replicator.redogen.rows import Piece, Row, TableState, piece_size

SUPP_UPDATE, SUPP_INSERT, SUPP_DELETE = 1, 2, 4
SUPP_FB = 0x10  # seen on every supplemental header of the fixtures


@dataclass(slots=True)
class PairSpec:
    """One undo/redo pair of a row operation, minus the transaction-dependent fields."""

    bdba: int
    redo_code: int  # 11.x opcode minor
    redo_fields: list[bytes]  # KDO header and data (the engine prepends KTB)
    undo_fields: list[bytes]  # KDO header, data, supplemental fields (the engine prepends ktudb, ktub, KTB)
    comp_code: int  # 11.x minor of the compensating change written on rollback


def _supp_fb(index: int, count: int) -> int:
    return SUPP_FB | (v.FB_F if index == 0 else 0) | (v.FB_L if index == count - 1 else 0)


def _head(row: Row) -> tuple[int, int] | None:
    """Head-piece address for the long supplemental header (only chained rows need it)."""
    return (row.pieces[0].bdba, row.pieces[0].slot) if len(row.pieces) > 1 else None


def _nrid(row: Row, index: int) -> tuple[int, int]:
    if index + 1 < len(row.pieces):
        nxt = row.pieces[index + 1]
        return nxt.bdba, nxt.slot
    return 0, 0


def insert_pairs(ts: TableState, row: Row, itl: int) -> list[PairSpec]:
    """INSERT: 11.2 per piece, the last piece first; the undo is a DRP."""
    out = []
    order = list(range(len(row.pieces) - 1, -1, -1))
    for n, i in enumerate(order):
        p = row.pieces[i]
        values = [row.cell_value(c) for c in p.cells]
        kdo = v.kdo_irp(p.bdba, ts.hdba, v.OP_IRP, v.XA, itl, p.fb, values, p.slot, piece_size(row, p), _nrid(row, i))
        undo_kdo = v.kdo_drp(p.bdba, ts.hdba, v.UNDO_OP | v.OP_DRP, v.XA, itl, p.slot)
        supp = v.supp_fields(SUPP_INSERT, _supp_fb(n, len(order)), 0, p.first_col + 1, [], _head(row))
        out.append(PairSpec(p.bdba, 2, [kdo, *(x or b"" for x in values)], [undo_kdo, *supp], 3))
    return out


def delete_pairs(ts: TableState, row: Row, itl: int) -> list[PairSpec]:
    """DELETE: 11.3 per piece, head first; the undo is an IRP with the piece's columns."""
    out = []
    for i, p in enumerate(row.pieces):
        values = [row.cell_value(c) for c in p.cells]
        undo_kdo = v.kdo_irp(
            p.bdba, ts.hdba, v.UNDO_OP | v.OP_IRP, v.XA, itl, p.fb, values, p.slot, piece_size(row, p), _nrid(row, i)
        )
        supp = v.supp_fields(SUPP_DELETE, _supp_fb(i, len(row.pieces)), p.first_col + 1, 0, [], _head(row))
        kdo = v.kdo_drp(p.bdba, ts.hdba, v.OP_DRP, v.XA, itl, p.slot)
        out.append(PairSpec(p.bdba, 3, [kdo], [undo_kdo, *(x or b"" for x in values), *supp], 2))
    return out


def update_pairs(
    ts: TableState,
    row: Row,
    old: Sequence[bytes | None],
    changed: Sequence[int],
    supp: Sequence[tuple[int, bytes | None]],
    itl: int,
) -> list[PairSpec]:
    """UPDATE: 11.5 per piece holding changed columns; supplemental columns go with the last."""
    by_piece: list[tuple[Piece, list[int]]] = []
    for p in row.pieces:
        cols = [c.col for c in p.cells if c.col in changed]
        if p is row.pieces[-1]:  # columns past the stored ones extend the last piece
            cols += [c for c in changed if c > (p.cells[-1].col if p.cells else -1)]
        if cols:
            by_piece.append((p, sorted(set(cols))))
    out = []
    for n, (p, cols) in enumerate(by_piece):
        base = p.first_col
        nums = [c - base for c in cols]
        ncol = max(len(p.cells), nums[-1] + 1)
        new_vals = [row.values[c] for c in cols]
        old_vals = [old[c] for c in cols]
        delta = sum(len(x or b"") for x in new_vals) - sum(len(x or b"") for x in old_vals)
        kdo = v.kdo_urp(p.bdba, ts.hdba, v.OP_URP, v.XA, itl, p.fb, itl, p.slot, ncol, new_vals, delta)
        undo_kdo = v.kdo_urp(p.bdba, ts.hdba, v.UNDO_OP | v.OP_URP, v.XA, itl, p.fb, 0, p.slot, ncol, old_vals, -delta)
        colnums = b"".join(x.to_bytes(2, byteorder.byteorder()) for x in nums)
        last = n == len(by_piece) - 1
        sfields = v.supp_fields(
            SUPP_UPDATE, _supp_fb(n, len(by_piece)), cols[0] + 1, cols[0] + 1, list(supp) if last else [], _head(row)
        )
        # Undo and redo hold one field per listed column, 0-length for NULL: a rollback copies the
        # undo into its 11.5, where OLR requires a NULL column's field to be empty (ERROR 50061).
        out.append(
            PairSpec(
                p.bdba,
                5,
                [kdo, colnums, *(x or b"" for x in new_vals)],
                [undo_kdo, colnums, *(x or b"" for x in old_vals), *sfields],
                5,
            )
        )
    return out


def multi_insert_pair(ts: TableState, rows: Sequence[Row], itl: int) -> PairSpec:
    """INSERT of several single-piece rows of one block: 11.11 QMI, undo QMD."""
    bdba, slots, sizes, images = _qm_rows(rows, itl)
    kdo = v.kdo_qm(bdba, ts.hdba, v.OP_QMI, v.XA, itl, slots)
    undo_kdo = v.kdo_qm(bdba, ts.hdba, v.UNDO_OP | v.OP_QMD, v.XA, itl, slots)
    return PairSpec(bdba, 11, [kdo, sizes, images], [undo_kdo], 12)


def multi_delete_pair(ts: TableState, rows: Sequence[Row], itl: int) -> PairSpec:
    """DELETE of several single-piece rows of one block: 11.12 QMD, undo QMI with the rows."""
    bdba, slots, sizes, images = _qm_rows(rows, itl)
    kdo = v.kdo_qm(bdba, ts.hdba, v.OP_QMD, v.XA, itl, slots)
    undo_kdo = v.kdo_qm(bdba, ts.hdba, v.UNDO_OP | v.OP_QMI, v.XA, itl, slots)
    return PairSpec(bdba, 12, [kdo], [undo_kdo, sizes, images], 11)


def _qm_rows(rows: Sequence[Row], itl: int) -> tuple[int, list[int], bytes, bytes]:
    """Block, slots, the u16 size array and the packed row images of a multi-row (QM) change."""
    images = [v.row_bytes(v.FB_H | v.FB_F | v.FB_L, itl, [r.cell_value(c) for c in r.pieces[0].cells]) for r in rows]
    sizes = b"".join(len(i).to_bytes(2, byteorder.byteorder()) for i in images)
    return rows[0].pieces[0].bdba, [r.pieces[0].slot for r in rows], sizes, b"".join(images)


def image(row: Row, values: Sequence[bytes | None] | None = None) -> dict[int, bytes | None]:
    """Every stored column of a row, split parts joined (the OLR row image of an insert/delete)."""
    vals = row.values if values is None else values
    return {c.col: vals[c.col] for p in row.pieces for c in p.cells}
