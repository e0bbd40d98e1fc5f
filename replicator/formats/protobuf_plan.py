"""Per-table plans of the protobuf format: which columns are printed and how each value is set.

Column selection and NULL visibility come from the JSON format's :class:`TablePlan` (a
column the JSON format leaves out is left out here too), so both formats describe the same
row; only the value encoding differs (:mod:`replicator.formats.protobuf_values`).
"""

from __future__ import annotations

from typing import Protocol

from replicator.events import TYPE_BLOB, TYPE_CLOB, RowImage, Table
from replicator.flags import FLAG_RAW_HEX
from replicator.formats.base import FormatOptions
from replicator.formats.olr_columns import TablePlan, effective_type
from replicator.formats.protobuf_values import COLUMN_TYPES, Setter, set_bytes, value_setter
from replicator.proto import olr_pb2 as pb
from replicator.values.lob import unavailable


class Values(Protocol):
    """A repeated ``Value`` field of a message (``Payload.before``/``after``): protobuf's
    RepeatedCompositeFieldContainer, whose stubs are not installed."""

    def add(self, **fields: object) -> pb.Value: ...


class _ColumnPlan:
    __slots__ = ("after", "before", "name", "null_after", "null_before")

    def __init__(
        self, name: str, after: Setter | None, before: Setter | None, null_after: bool, null_before: bool
    ) -> None:
        self.name = name
        self.after = after
        self.before = before
        self.null_after = null_after
        self.null_before = null_before


def _set_raw(value: pb.Value, data: bytes) -> None:
    """Raw column data (flag 0x8000): for a LOB its locator, as the JSON format prints it."""
    set_bytes(value, getattr(data, "locator", data))


class PbTablePlan:
    """Value setters of one table, built once per (table, format instance)."""

    def __init__(self, table: Table, options: FormatOptions) -> None:
        self.table = table
        self.json = TablePlan(table, options)
        self.column_plans: list[_ColumnPlan] = []
        raw = self._raw = bool(options.flags & FLAG_RAW_HEX)
        for column, plan in zip(table.columns, self.json.columns):
            type_code = effective_type(column)
            setter = _set_raw if raw else value_setter(column, type_code, table, options)
            # With unknown-type 0, OLR's protobuf builder leaves a NULL CLOB/BLOB nameless even in
            # the after image, where JSON prints it as null.
            lob_null_hidden = options.unknown_type == 0 and type_code in (TYPE_CLOB, TYPE_BLOB)
            self.column_plans.append(
                _ColumnPlan(
                    column.name,
                    setter if plan.after is not None else None,
                    setter if plan.before is not None else None,
                    plan.null_after is not None and not lob_null_hidden,
                    plan.null_before is not None,
                )
            )

    def fill(self, target: Values, image: RowImage, after: bool) -> None:
        """Append a Value for every column of ``image``, in column order; NULL is a name alone.

        As OpenLogReplicator's builder, the Value is added before the column is looked at, so
        a column JSON would not print (hidden, an unsupported type, a LOB in a before image or
        not in the redo, a NULL of a type whose NULL JSON hides) is an *empty* Value: no name,
        no datum.
        """
        columns = self.column_plans
        count = len(columns)
        for index in sorted(image):
            if index >= count:
                continue
            plan = columns[index]
            value = image[index]
            if value:
                setter = plan.after if after else plan.before
                # A LOB not in the redo is not printed, unless raw data (its locator) is asked for.
                if setter is not None and (self._raw or not unavailable(value)):
                    setter(target.add(name=plan.name), value)
                else:
                    target.add()
            elif plan.null_after if after else plan.null_before:
                target.add(name=plan.name)
            else:
                target.add()

    def tag(self, image: RowImage) -> bytes:
        """The Kafka key (filter `tag`), byte-identical to the JSON format's."""
        return self.json.render_tag(image, self.table.tag_columns)

    def columns_schema(self) -> list[pb.Column]:
        """``Schema.column`` entries for every column (OLR kept only the last one)."""
        out = []
        for column in self.table.columns:
            kind, has_length = COLUMN_TYPES.get(effective_type(column), (pb.UNKNOWN, False))
            entry = pb.Column(name=column.name, type=kind, nullable=column.nullable)
            if kind == pb.NUMBER:
                entry.precision, entry.scale = column.precision, column.scale
            elif has_length:
                entry.length = column.length
            out.append(entry)
        return out


def fill_compressed(target: Values, data: bytes) -> None:
    """An undecodable compressed row piece: one ``COMPRESSED`` value with the raw bytes."""
    target.add(name="COMPRESSED", value_bytes=data)


def fill_schemaless(target: Values, image: RowImage) -> None:
    """An unknown table's image: ``COL_<index>`` with the raw bytes (NULL: name only)."""
    for index in sorted(image):
        value = image[index]
        if value:
            target.add(name=f"COL_{index}", value_bytes=value)
        else:
            target.add(name=f"COL_{index}")
