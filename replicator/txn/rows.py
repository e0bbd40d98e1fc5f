"""Turn stored (undo, redo) pairs of a committed transaction into logical row changes.

Implements redo-format.md §6.4–§6.8: column mapping with the supplemental `before` /
`after` shifts, NULL bitmaps, split columns (N/P flags) concatenated across pieces,
grouping of chained/migrated row pieces by their supplemental head (bdba, slot), and
supplemental values filling what the undo/redo images leave out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from replicator.events import OP_DELETE, OP_INSERT, OP_UPDATE, RowChange, RowImage, Table
from replicator.redo.opcodes import kdo as K
from replicator.redo.vectors import ChangeVector

OPC_IRP, OPC_DRP, OPC_LKR, OPC_URP, OPC_ORP, OPC_CFA = 0x0B02, 0x0B03, 0x0B04, 0x0B05, 0x0B06, 0x0B08
OPC_QMI, OPC_QMD, OPC_SUPP, OPC_CMP = 0x0B0B, 0x0B0C, 0x0B10, 0x0B16
ROW_OPCODES = frozenset({OPC_IRP, OPC_DRP, OPC_URP, OPC_ORP, OPC_CFA, OPC_SUPP, OPC_CMP})
AFTER_SUPP_OPS = frozenset({OPC_IRP, OPC_LKR, OPC_URP, OPC_SUPP})
BEFORE_SUPP_OPS = frozenset({OPC_DRP, OPC_URP, OPC_ORP, OPC_SUPP})


@dataclass(slots=True)
class Pair:
    """A stored data change: the 5.1 undo and its 11.x redo, with where it came from."""

    undo: ChangeVector
    redo: ChangeVector
    obj: int
    data_obj: int
    scn: int
    time: int
    offset: int
    supp: K.Supplemental | None = None
    ukdo: K.Kdo | None = None
    rkdo: K.Kdo | None = None
    # Where the undo's row data starts and its URP column numbers (kdo.undo_layout),
    # kept from analyse() for build_row: the URP layout walks every column.
    ufirst: int = 0
    unums: tuple[int, ...] | None = None

    def analyse(self) -> None:
        """Parse the KDO headers and supplemental data (done once, at commit)."""
        self.ukdo = ukdo = K.parse_kdo(self.undo, 4)
        self.rkdo = K.parse_kdo(self.redo, 2)
        if ukdo is not None:
            self.ufirst, self.unums, supp_at = K.undo_layout(self.undo, ukdo)
            if supp_at:
                self.supp = K.parse_supplemental(self.undo, supp_at, ukdo)

    @property
    def head(self) -> tuple[int, int]:
        if self.supp is not None:
            return self.supp.bdba, self.supp.slot
        k = self.rkdo or self.ukdo
        return (k.bdba, k.slot) if k else (0, 0)


class _Values:
    """Column values of one logical row being assembled (OLR's four value kinds)."""

    __slots__ = ("after", "after_supp", "before", "before_supp", "parts")

    def __init__(self) -> None:
        self.before: dict[int, bytes | None] = {}
        self.after: dict[int, bytes | None] = {}
        self.before_supp: dict[int, bytes | None] = {}
        self.after_supp: dict[int, bytes | None] = {}
        # (kind, col) -> pieces of split columns; None until a row actually has one.
        self.parts: dict[tuple[int, int], list[bytes]] | None = None

    def add_part(self, kind: int, col: int, value: bytes | None) -> None:
        """One piece of a column split across row pieces (concatenated by :meth:`merged`)."""
        if self.parts is None:
            self.parts = {}
        self.parts.setdefault((kind, col), []).append(value or b"")

    def merged(self) -> tuple[RowImage, RowImage]:
        """The before and after images; the dicts are handed over, not copied."""
        before, after = self.before, self.after
        if self.parts is not None:
            for (kind, col), pieces in self.parts.items():
                (after if kind else before)[col] = b"".join(pieces) or None
        # A supplemental value fills a column the image lacks, or holds as NULL (OLR rule).
        for col, value in self.before_supp.items():
            if before.get(col) is None:
                before[col] = value
        for col, value in self.after_supp.items():
            if after.get(col) is None:
                after[col] = value
        return before, after


def _columns(
    cv: ChangeVector,
    kdo: K.Kdo,
    first: int,
    nums: tuple[int, ...] | None,
    shift: int,
    undo: bool,
    values: _Values,
    kind: int,
    limit: int,
) -> None:
    """Read the column fields of one undo or redo row image into ``values`` (hot path)."""
    if not first:
        return
    if nums is not None:
        shift -= nums[0]
    data, offsets, lengths = cv.data, cv.offsets, cv.lengths
    n = len(lengths)
    # The NULL bitmap as one integer: bit c is column c, missing bytes read as "not NULL".
    nulls = int.from_bytes(kdo.nulls, "little")
    cc = kdo.cc
    # Split-column flags apply to the first (P) and last (N) column of the piece only.
    split_first = 0 if kdo.fb & K.FB_P else -1
    split_last = cc - 1 if kdo.fb & K.FB_N else -1
    target = values.before if kind == 0 else values.after
    i = first - 1  # 0-based field index
    for c in range(cc):
        col = (nums[c] if nums is not None else c) + shift
        if col >= limit:
            break
        if undo:
            # Undo images carry no field for a NULL column, and may hold empty fillers.
            if nulls >> c & 1:
                value = None
            else:
                while i < n and lengths[i] == 0:
                    i += 1
                if i >= n:
                    break
                o = offsets[i]
                value = data[o : o + lengths[i]]
                i += 1
        else:
            if i >= n:
                break
            if nulls >> c & 1:
                value = None
            else:
                o = offsets[i]
                value = data[o : o + lengths[i]]
            i += 1
        if c == split_first or c == split_last:
            values.add_part(kind, col, value)
        else:
            target[col] = value


def _supplemental(pair: Pair, supp: K.Supplemental, values: _Values, limit: int) -> None:
    """Supplemental column values of ``pair`` into the after and/or before supplemental sets."""
    redo_op = pair.redo.opcode
    after_supp = values.after_supp if redo_op in AFTER_SUPP_OPS else None
    before_supp = values.before_supp if redo_op in BEFORE_SUPP_OPS else None
    cv = pair.undo
    data, offsets, lengths = cv.data, cv.offsets, cv.lengths
    k = supp.first_value - 1  # 0-based field index of the first value
    n = len(lengths)
    for num, length in zip(supp.nums, supp.lens):
        col = num - 1
        if col >= limit:
            break
        if length == 0xFFFF or length == 0 or k >= n:
            value = None
        else:
            o = offsets[k]
            value = data[o : o + lengths[k]]
        k += 1
        if after_supp is not None:
            after_supp[col] = value
        if before_supp is not None:
            before_supp[col] = value


def build_row(pairs: list[Pair], op: str, table: Table | None, column_limit: int) -> RowChange:
    """Assemble one logical row from its grouped pairs (already in OLR's piece order)."""
    first, last = pairs[0], pairs[-1]
    limit = len(table.columns) if table is not None else column_limit
    values = _Values()
    compressed: bytes | None = None
    for p in pairs:
        uk, rk, supp = p.ukdo, p.rkdo, p.supp
        if uk is not None:
            ufirst = p.ufirst
            shift = supp.before - 1 if supp is not None and supp.before > 0 else 0
            if ufirst and K.is_compressed(p.undo, uk, ufirst, False):
                compressed = bytes(p.undo.field(ufirst))
            else:
                _columns(p.undo, uk, ufirst, p.unums, shift, True, values, 0, limit)
        if supp is not None and supp.first_value:
            _supplemental(p, supp, values, limit)
        if rk is not None:
            rfirst, rnums = K.redo_layout(p.redo, rk)
            shift = supp.after - 1 if supp is not None and supp.after > 0 else 0
            if rfirst and K.is_compressed(p.redo, rk, rfirst, True):
                compressed = bytes(p.redo.field(rfirst))
            else:
                _columns(p.redo, rk, rfirst, rnums, shift, False, values, 1, limit)
    before, after = values.merged()
    if op == OP_INSERT:
        head = next((p for p in pairs if p.rkdo is not None and p.rkdo.fb & K.FB_F), first)
        bdba, slot = (head.rkdo.bdba, head.rkdo.slot) if head.rkdo else (0, 0)
        obj, data_obj = head.obj, head.data_obj
    elif first.supp is not None and (first.supp.bdba or first.supp.slot):
        bdba, slot, obj, data_obj = first.supp.bdba, first.supp.slot, first.obj, first.data_obj
    else:
        k = first.rkdo or first.ukdo
        bdba, slot = (k.bdba, k.slot) if k else (0, 0)
        obj, data_obj = first.obj, first.data_obj
    return RowChange(
        op=op,
        obj=obj,
        data_obj=data_obj,
        table=table,
        before=before if op != OP_INSERT else None,
        after=after if op != OP_DELETE else None,
        scn=last.scn,
        time=last.time,
        bdba=bdba,
        slot=slot,
        offset=first.offset,
        compressed=compressed,
    )


def multirow_changes(pair: Pair, table: Table | None, big_scn: bool) -> list[RowChange]:
    """Rows of a multi-row insert (11.11) or multi-row delete (11.12) (§6.5)."""
    out: list[RowChange] = []
    if pair.redo.opcode == OPC_QMI:
        kdo, cv, op = pair.rkdo, pair.redo, OP_INSERT
        sizes, rows_field = 3, 4
    else:
        kdo, cv, op = pair.ukdo, pair.undo, OP_DELETE
        sizes, rows_field = 5, 6
    if kdo is None or not kdo.nrow:
        return out
    for slot, row in zip(kdo.slots, K.multirow(cv, sizes, rows_field, kdo, big_scn)):
        out.append(
            RowChange(
                op=op,
                obj=pair.obj,
                data_obj=pair.data_obj,
                table=table,
                before=row if op == OP_DELETE else None,
                after=row if op == OP_INSERT else None,
                scn=pair.scn,
                time=pair.time,
                bdba=kdo.bdba,
                slot=slot,
                offset=pair.offset,
            )
        )
    return out


def group_rows(
    pairs: Iterable[Pair],
    table_of: Callable[[int], Table | None],
    column_limit: int,
    big_scn: bool,
    warn: Callable[[int, str], None],
) -> Iterator[RowChange]:
    """Group a transaction's pairs into logical rows in OLR's order (§6.8), lazily.

    ``pairs`` may be a stream (a huge transaction read back chunk by chunk); rows come out
    as soon as their last piece is seen. ``table_of(obj)`` returns the Table (or None in
    schemaless mode); ``warn(code, msg)`` reports an inconsistency.
    """
    group: list[Pair] = []
    op = ""
    for p in pairs:
        p.analyse()
        k1, k2 = p.ukdo, p.rkdo
        if (k1 is not None and k1.fb & K.FB_K) or (k2 is not None and k2.fb & K.FB_K):
            continue  # cluster key
        if p.supp is not None and p.supp.fb & K.FB_K:
            continue  # partition move
        code = p.redo.opcode
        if code in (OPC_QMI, OPC_QMD):
            yield from multirow_changes(p, table_of(p.obj), big_scn)
            continue
        if code not in ROW_OPCODES:
            continue
        if not op:
            op = OP_INSERT if code == OPC_IRP else OP_DELETE if code == OPC_DRP else OP_UPDATE
        elif op == OP_INSERT and code in (OPC_DRP, OPC_URP, OPC_ORP, OPC_CFA):
            op = OP_UPDATE
        elif op == OP_DELETE and code in (OPC_IRP, OPC_URP, OPC_ORP, OPC_CFA):
            op = OP_UPDATE
        supp_fb = p.supp.fb if p.supp is not None else K.FB_L
        if not group:
            if not (code == OPC_CMP and (p.supp is None or p.supp.bdba == 0) and not supp_fb & K.FB_L):
                group.append(p)
        elif group[-1].head == p.head and group[0].obj == p.obj:
            if op == OP_INSERT:
                group.insert(0, p)  # Oracle writes the last piece of an insert first
            elif code == OPC_ORP and group[-1].redo.opcode == OPC_IRP:
                group.insert(len(group) - 1, p)
            else:
                group.append(p)
        else:
            warn(60017, f"minimal supplemental log missing or redo inconsistency at offset {p.offset}")
        if supp_fb & K.FB_L:
            if group:
                yield build_row(group, op, table_of(group[0].obj), column_limit)
            group, op = [], ""
