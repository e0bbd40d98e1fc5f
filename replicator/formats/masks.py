"""Qlik Replicate's changeMask and columnMask (qlik-replicate-msk-data-messages.txt).

A mask is a bitmask over the table's data columns, bit ``n - 1`` for the column at ordinal
``n`` of the metadata message (the visible columns in dictionary order), written as
upper-case hex in little-endian order: byte 0 holds ordinals 1-8 (bit 0 = ordinal 1), byte 1
ordinals 9-16, and so on; ``ceil(columns / 8)`` bytes, two digits each. With four columns,
ordinals 1, 2 and 4 give ``0B``, the document's example; with ten columns, ordinals 1 and 10
give ``0102``.

* changeMask: INSERT - every inserted column; DELETE - the primary-key columns (all columns
  when the table has no key: they are what identifies the row); UPDATE - the columns whose
  value the statement changed. LOB columns (CLOB, NCLOB, BLOB) are never set.
* columnMask: the columns the redo holds. INSERT and DELETE rows are complete (a NULL is
  set: it is a value) except LOB values the redo does not give; an UPDATE under minimal supplemental logging holds only the changed
  and the logged columns, so the mask tells a NULL value from a column that was not captured.
"""

from __future__ import annotations

from collections.abc import Iterable

from replicator.events import OP_DELETE, OP_INSERT
from replicator.formats.rowvalues import RowValues


def mask_hex(ordinals: Iterable[int], count: int) -> str:
    """The little-endian hex mask with the bits of ``ordinals`` (1-based) set."""
    data = bytearray(max(1, (count + 7) // 8))
    for ordinal in ordinals:
        bit = ordinal - 1
        data[bit >> 3] |= 1 << (bit & 7)
    return data.hex().upper()


def mask_ordinals(mask: str) -> list[int]:
    """The ordinals set in a mask (the inverse of :func:`mask_hex`, for consumers and tests)."""
    data = bytes.fromhex(mask)
    return [n * 8 + bit + 1 for n, byte in enumerate(data) for bit in range(8) if byte >> bit & 1]


def change_mask(row: RowValues) -> str:
    """Columns the operation changed, by the rules in the module docstring."""
    view = row.view
    if row.op == OP_INSERT:
        indexes: Iterable[int] = row.present
    elif row.op == OP_DELETE:
        indexes = [k.index for k in view.keys] or row.present
    else:
        indexes = row.modified
    ordinals = (view.by_index[i].ordinal for i in indexes if i in view.by_index and not view.by_index[i].otype.lob)
    return mask_hex(ordinals, len(view.columns))


def column_mask(row: RowValues) -> str:
    """Columns present in the redo for this change."""
    view = row.view
    return mask_hex((view.by_index[i].ordinal for i in row.present if i in view.by_index), len(view.columns))
