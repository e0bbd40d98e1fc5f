"""Table state of the simulated database: rows, their row pieces and where blocks put them.

A row is stored as one or more *pieces* (§6.3, §6.8). Tables of up to 255 columns keep a
row in one piece unless it is larger than a data block; then it is chained over several
blocks, splitting a column that alone does not fit (flags N/P). Wider tables are cut into
pieces of at most 255 columns, the first piece taking the remainder as Oracle does, and
store every column (trailing NULLs included) so the piece layout never changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replicator import events as ev
from replicator.redogen.coltypes import ColumnType
from replicator.redogen.ids import dba
from replicator.redogen.scenario import TableSpec
from replicator.redogen.vectors import FB_F, FB_H, FB_L, FB_N, FB_P

MAX_PIECE_COLUMNS = 255
ROWS_PER_BLOCK = 200


@dataclass(slots=True)
class Cell:
    """One column (or one part of a split column) inside a row piece."""

    col: int  # 0-based table column
    start: int = 0  # byte range of the value held here (split columns)
    end: int = -1  # -1: to the end of the value


@dataclass(slots=True)
class Piece:
    """A row piece: its address and the cells it holds, in column order."""

    bdba: int
    slot: int
    cells: list[Cell]
    fb: int = 0

    @property
    def first_col(self) -> int:
        """Table column of the first cell."""
        return self.cells[0].col if self.cells else 0


@dataclass(slots=True)
class Row:
    """Current image of one row, its pieces and the transaction holding its lock."""

    values: list[bytes | None]
    pieces: list[Piece]
    lock: Any = None
    deleted: bool = False

    def cell_value(self, cell: Cell) -> bytes | None:
        """Bytes a cell holds now."""
        v = self.values[cell.col]
        if v is None or (cell.start == 0 and cell.end == -1):
            return v
        return v[cell.start : None if cell.end == -1 else cell.end]

    def split_columns(self) -> set[int]:
        """Columns stored in more than one piece."""
        return {c.col for p in self.pieces for c in p.cells if c.start or c.end != -1}


def _cost(value: bytes | None) -> int:
    if value is None:
        return 1
    return len(value) + (1 if len(value) <= 250 else 3)


def layout(values: list[bytes | None], store_all: bool, capacity: int) -> list[list[Cell]]:
    """Cells of each piece, in row order (head piece first)."""
    if store_all:
        count = len(values)
    else:
        count = max((i + 1 for i, v in enumerate(values) if v is not None), default=0)
    chunks: list[range] = []
    first = count % MAX_PIECE_COLUMNS or min(count, MAX_PIECE_COLUMNS)
    start = 0
    for size in [first] + [MAX_PIECE_COLUMNS] * ((count - first) // MAX_PIECE_COLUMNS):
        if size:
            chunks.append(range(start, start + size))
            start += size
    pieces: list[list[Cell]] = []
    for chunk in chunks or [range(0)]:
        cur: list[Cell] = []
        used = 0
        for col in chunk:
            value = values[col]
            cost = _cost(value)
            if used + cost <= capacity:
                cur.append(Cell(col))
                used += cost
                continue
            if value is None or len(value) + 3 <= capacity:  # fits a fresh piece whole
                pieces.append(cur)
                cur, used = [Cell(col)], cost
                continue
            pos = 0  # split the value over as many pieces as it needs (N/P flags)
            while pos < len(value):
                room = capacity - used - 3
                if room < 16:
                    pieces.append(cur)
                    cur, used = [], 0
                    continue
                end = min(len(value), pos + room)
                cur.append(Cell(col, pos, -1 if end == len(value) else end))
                used += end - pos + 3
                pos = end
        pieces.append(cur)
    return [p for p in pieces if p] or [[]]


def piece_flags(cells_list: list[list[Cell]]) -> list[int]:
    """fb of each piece: H|F on the head, L on the last, N/P around split columns."""
    out = []
    for i, cells in enumerate(cells_list):
        fb = (FB_H | FB_F if i == 0 else 0) | (FB_L if i == len(cells_list) - 1 else 0)
        if cells and cells[0].start:
            fb |= FB_P
        if cells and cells[-1].end != -1:
            fb |= FB_N
        out.append(fb)
    return out


class TableState:
    """One table of the simulated database: identity, columns, rows and block allocation."""

    def __init__(
        self,
        spec: TableSpec,
        ctypes: list[ColumnType],
        table: ev.Table,
        rfile: int,
        first_block: int,
        block_capacity: int,
    ):
        self.spec = spec
        self.ctypes = ctypes
        self.table = table  # the shared-model view used for expected output
        self.obj = spec.obj
        self.data_obj = spec.data_obj
        self.rfile = rfile
        self.hdba = dba(rfile, first_block)
        self.capacity = block_capacity
        self.store_all = len(ctypes) > MAX_PIECE_COLUMNS
        self.key_cols = list(table.key_columns)
        self.column_index = {c.name: i for i, c in enumerate(spec.columns)}
        self.rows: dict[tuple, Row] = {}
        self._block = first_block + 1
        self._used = 0
        self._slot = 0
        self._serial = 0  # row key for tables without a primary key

    def allocate(self, size: int, new_block: bool = False) -> tuple[int, int]:
        """(bdba, slot) for a new row piece of ``size`` bytes."""
        if new_block or self._slot >= ROWS_PER_BLOCK or self._used + size > self.capacity:
            self._block += 1
            self._used, self._slot = 0, 0
        slot = self._slot
        self._slot += 1
        self._used += size + 2
        return dba(self.rfile, self._block), slot

    def row_key(self, values: list[bytes | None]) -> tuple:
        """Dictionary key of a row: its primary key bytes, or a serial number."""
        if self.key_cols:
            return tuple(values[i] for i in self.key_cols)
        self._serial += 1
        return ("#", self._serial)

    def find(self, match: dict[int, bytes | None]) -> tuple[tuple, Row] | None:
        """The live row whose columns equal ``match`` (by primary key when it is given)."""
        if self.key_cols and set(match) >= set(self.key_cols):
            key = tuple(match[i] for i in self.key_cols)
            row = self.rows.get(key)
            if row is not None and not row.deleted and all(row.values[i] == v for i, v in match.items()):
                return key, row
            return None
        for key, row in self.rows.items():
            if not row.deleted and all(row.values[i] == v for i, v in match.items()):
                return key, row
        return None

    def place(self, values: list[bytes | None]) -> Row:
        """Lay out a new row and give each piece an address (pieces of one row share blocks when they fit)."""
        cells_list = layout(values, self.store_all, self.capacity)
        pieces = []
        for idx, (cells, fb) in enumerate(zip(cells_list, piece_flags(cells_list))):
            size = 3 + sum(_cost(values[c.col]) for c in cells) + (6 if not fb & FB_L else 0)
            bdba, slot = self.allocate(min(size, self.capacity), new_block=idx > 0 and size > self.capacity // 2)
            pieces.append(Piece(bdba, slot, cells, fb))
        return Row(list(values), pieces)


def piece_size(row: Row, piece: Piece) -> int:
    """Bytes of a row piece in its block (the KDO size field)."""
    body = sum(_cost(row.cell_value(c)) for c in piece.cells)
    return 3 + body + (0 if piece.fb & FB_L else 6)
