"""Which columns of a row change OpenLogReplicator prints (the `column` option).

Row images map a column index to raw bytes; a key mapped to None (or b"") is a column that
redo holds as NULL, a missing key is a column redo does not mention. The rules follow OLR's
builder:

* INSERT/DELETE, ``column`` 0: drop NULL non-key columns, add NULL for missing key columns;
  ``column`` >= 1: every table column, missing ones as NULL.
* UPDATE, ``column`` < 2: a non-key column is dropped when before and after are both present
  and byte-identical (NULL = NULL included), or when it is present as NULL on one side and
  missing on the other; a key column present as NULL on one side gets NULL on the other.
  Then, for every mode, a column present on only one side becomes NULL on the other (which
  also covers OLR's NULL propagation for key columns).
* A NOT NULL column going from NULL to a value logs warning 60034 once per column; with
  source flag 0x40000 the after value is copied into the before image.
* Compressed rows and unknown tables are not reduced (only the last UPDATE rule applies to
  unknown tables).
"""

from __future__ import annotations

import logging
from enum import Enum
from typing import Final

from replicator.events import OP_DELETE, OP_INSERT, RowChange, RowImage, Table
from replicator.formats.olr_columns import TablePlan

log = logging.getLogger(__name__)

# An image as printed: the columns, the raw bytes of a compressed row, or None (no image).
Image = RowImage | bytes | None

FLAG_NOT_NULL_MISSING: Final = 0x40000  # source.flags: copy AFTER into a NULL NOT NULL BEFORE


class _Absent(Enum):
    """The type of :data:`_ABSENT` (an enum member, so that ``is _ABSENT`` narrows)."""

    ABSENT = 0


_ABSENT: Final = _Absent.ABSENT  # a column the image does not mention


def reduce_single(image: RowImage, plan: TablePlan | None, column_mode: int) -> RowImage:
    """Columns printed for the one image of an INSERT (after) or DELETE (before)."""
    if plan is None:
        return image
    if column_mode >= 1:
        full = dict.fromkeys(range(len(plan.columns)))
        full.update(image)
        return full
    keys = plan.keys
    count = len(keys)
    reduced = {i: v for i, v in image.items() if v or (i < count and keys[i])}
    for index in plan.key_indexes:
        reduced.setdefault(index, None)
    return reduced


class UpdateReducer:
    """Applies the UPDATE rules; remembers which NOT NULL columns were already warned about."""

    def __init__(self, column_mode: int, flags: int):
        self.column_mode = column_mode
        self._reduce = column_mode < 2
        self.copy_after = bool(flags & FLAG_NOT_NULL_MISSING)
        self._warned: set[tuple[int, int]] = set()

    def images(self, change: RowChange, plan: TablePlan | None) -> tuple[Image, Image]:
        """The (before, after) images OLR prints for any row change; None means no image.

        A compressed row is printed raw (bytes) on the side whose image is missing (after
        when both exist); INSERT/DELETE go through :func:`reduce_single`, UPDATE through
        :meth:`reduce`. Shared by the JSON and protobuf formats so both select alike.
        """
        op = change.op
        before, after = change.before or {}, change.after or {}
        if change.compressed is not None:
            raw = change.compressed
            if op == OP_INSERT:
                return None, raw
            if op == OP_DELETE:
                return raw, None
            if before and after:
                return before, raw
            return (before or raw), (after or raw)
        if op == OP_INSERT:
            return None, reduce_single(after, plan, self.column_mode)
        if op == OP_DELETE:
            return reduce_single(before, plan, self.column_mode), None
        return self.reduce(before, after, plan)

    def reduce(self, before: RowImage, after: RowImage, plan: TablePlan | None) -> tuple[RowImage, RowImage]:
        """Return the (before, after) images OLR prints for an UPDATE."""
        new_before: RowImage = {}
        new_after: RowImage = {}
        if plan is not None:
            nullable, keys = plan.nullable, plan.keys
        else:
            nullable = keys = ()
        count = len(keys)
        reduce = self._reduce
        for index in sorted(before.keys() | after.keys()):
            # One lookup per side; _ABSENT tells "not logged" from "logged as NULL".
            old = before.get(index, _ABSENT)
            new = after.get(index, _ABSENT)
            if old is _ABSENT:
                in_before = False
                old = None
            else:
                in_before = True
            if new is _ABSENT:
                in_after = False
                new = None
            else:
                in_after = True
            if index < count:
                if not nullable[index] and in_before and in_after and not old and new:
                    self.warn_not_null(plan, index)
                    if self.copy_after:
                        old = new
                if reduce and not keys[index]:
                    if in_before and in_after and (old or b"") == (new or b""):
                        continue  # unchanged
                    if (in_before and not old and not in_after) or (in_after and not new and not in_before):
                        continue  # NULL on one side, not logged on the other
            # Everything kept is printed on both sides; a missing side is NULL.
            new_before[index] = old
            new_after[index] = new
        return new_before, new_after

    def warn_not_null(self, plan: TablePlan | None, index: int) -> None:
        assert plan is not None
        key = (id(plan), index)
        if key in self._warned:
            return
        self._warned.add(key)
        table: Table = plan.table
        log.warning(
            "60034 observed UPDATE operation for NOT NULL column with NULL value for table %s.%s column %s",
            table.owner,
            table.name,
            plan.columns[index].name,
        )
