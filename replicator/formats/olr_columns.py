"""Per-table rendering plans for the OpenLogReplicator JSON format.

A plan is built once per (table, format instance) and holds, for every column, the ready
``"NAME":`` prefix and closures that turn raw bytes into a complete ``"NAME":value``
fragment for the before and after images (None means OLR prints nothing for it). All option
checks happen here, at plan time, so rendering a row is a dict walk plus one call per value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from replicator.events import (
    COL_PROPERTY_STORED_AS_LOB,
    TYPE_BINARY_DOUBLE,
    TYPE_BINARY_FLOAT,
    TYPE_BLOB,
    TYPE_CHAR,
    TYPE_CLOB,
    TYPE_DATE,
    TYPE_INTERVAL_DS,
    TYPE_INTERVAL_YM,
    TYPE_JSON,
    TYPE_LONG,
    TYPE_LONG_RAW,
    TYPE_NUMBER,
    TYPE_RAW,
    TYPE_TIMESTAMP,
    TYPE_TIMESTAMP_LTZ,
    TYPE_TIMESTAMP_TZ,
    TYPE_UROWID,
    TYPE_VARCHAR2,
    TYPE_XMLTYPE,
    Column,
    RowImage,
    Table,
)
from replicator.flags import FLAG_RAW_HEX
from replicator.formats.base import FormatOptions, column_suppressed
from replicator.formats.escape import escape_str
from replicator.formats.olr_values import value_renderer

Fragment = Callable[[bytes], "bytes | None"]

# Types whose NULLs are printed with unknown-type 0; LOB-like types only in the after image.
_NULL_VISIBLE: Final = frozenset(
    {
        TYPE_VARCHAR2,
        TYPE_NUMBER,
        TYPE_DATE,
        TYPE_RAW,
        TYPE_CHAR,
        TYPE_BINARY_FLOAT,
        TYPE_BINARY_DOUBLE,
        TYPE_TIMESTAMP,
        TYPE_INTERVAL_YM,
        TYPE_INTERVAL_DS,
        TYPE_UROWID,
        TYPE_TIMESTAMP_LTZ,
    }
)
_NULL_VISIBLE_AFTER: Final = frozenset({TYPE_XMLTYPE, TYPE_JSON, TYPE_CLOB, TYPE_BLOB})

# Schema `columns` entries: type name and whether `length` follows.
_SCHEMA_TYPES: Final[dict[int, tuple[str, bool]]] = {
    TYPE_VARCHAR2: ("varchar2", True),
    TYPE_LONG: ("long", False),
    TYPE_DATE: ("date", False),
    TYPE_RAW: ("raw", True),
    TYPE_LONG_RAW: ("long raw", False),
    TYPE_CHAR: ("char", True),
    TYPE_BINARY_FLOAT: ("binary_float", False),
    TYPE_BINARY_DOUBLE: ("binary_double", False),
    TYPE_CLOB: ("clob", False),
    TYPE_BLOB: ("blob", False),
    TYPE_TIMESTAMP: ("timestamp", True),
    TYPE_TIMESTAMP_TZ: ("timestamp with time zone", True),
    TYPE_INTERVAL_YM: ("interval year to month", True),
    TYPE_INTERVAL_DS: ("interval day to second", True),
    TYPE_UROWID: ("urowid", True),
    TYPE_TIMESTAMP_LTZ: ("timestamp with local time zone", True),
}


def effective_type(column: Column) -> int:
    """Column type as OLR renders it: extended VARCHAR2/RAW stored as LOB become CLOB/BLOB."""
    if column.property & COL_PROPERTY_STORED_AS_LOB:
        if column.type_code == TYPE_VARCHAR2:
            return TYPE_CLOB
        if column.type_code == TYPE_RAW:
            return TYPE_BLOB
    return column.type_code


class ColumnPlan:
    """How one column is printed: fragments for values and NULLs in each image."""

    __slots__ = ("after", "before", "index", "key", "name", "null_after", "null_before", "nullable")

    def __init__(self, index: int, column: Column, table: Table, options: FormatOptions, key: bool):
        self.index = index
        self.key = key
        self.nullable = column.nullable
        self.name = column.name
        prefix = b'"' + escape_str(column.name) + b'":'
        flags = options.flags
        suppressed = column_suppressed(column, flags)
        type_code = effective_type(column)
        self.after: Fragment | None
        self.before: Fragment | None
        if flags & FLAG_RAW_HEX:
            # OLR hex-dumps before looking at visibility or type.
            self.after = self.before = _hex_fragment(prefix)
        elif suppressed:
            self.after = self.before = None
        else:
            self.after = value_renderer(prefix, column, type_code, table, options, True)
            self.before = value_renderer(prefix, column, type_code, table, options, False)
        null = prefix + b"null"
        if options.unknown_type == 0:
            # With unknown-type 0 OLR hides NULLs of suppressed and of "unknown" types.
            self.null_after = None if suppressed or not _null_visible(type_code, True) else null
            self.null_before = None if suppressed or not _null_visible(type_code, False) else null
        else:
            self.null_after = self.null_before = null


def _null_visible(type_code: int, after: bool) -> bool:
    return type_code in _NULL_VISIBLE or (after and type_code in _NULL_VISIBLE_AFTER)


def _hex_fragment(prefix: bytes) -> Fragment:
    # Raw column data: for a LOB that is its locator, not the assembled value.
    return lambda data: prefix + b'"' + getattr(data, "locator", data).hex().encode("ascii") + b'"'


class TablePlan:
    """Rendering plan of one table: schema header pieces and one :class:`ColumnPlan` per column."""

    def __init__(self, table: Table, options: FormatOptions):
        self.table = table
        self.schema_head = (
            b'"schema":{"owner":"' + escape_str(table.owner) + b'","table":"' + escape_str(table.name) + b'"'
        )
        self.schema_columns = b',"columns":[' + b",".join(map(_schema_column, table.columns)) + b"]"
        # Key columns: the dictionary's primary key or the configured `key` list, either way.
        keys = set(table.key_columns) | {i for i, c in enumerate(table.columns) if c.key}
        self.columns = [ColumnPlan(i, c, table, options, i in keys) for i, c in enumerate(table.columns)]
        self.key_indexes = tuple(sorted(k for k in keys if k < len(table.columns)))
        # Per image, the column fragments and NULL texts by column index: render() runs
        # for every row image, so it indexes two lists instead of reading ColumnPlans.
        self.fragments = (tuple(c.before for c in self.columns), tuple(c.after for c in self.columns))
        self.nulls = (tuple(c.null_before for c in self.columns), tuple(c.null_after for c in self.columns))
        # Per column index, for the column-selection rules (olr_rows) run on every row.
        self.keys = tuple(c.key for c in self.columns)
        self.nullable = tuple(c.nullable for c in self.columns)

    def render(self, image: RowImage, after: bool) -> bytes:
        """``{…}`` of an image: present columns in column order, as OLR prints them."""
        fragments = self.fragments[after]
        nulls = self.nulls[after]
        count = len(fragments)
        parts: list[bytes] = []
        append = parts.append
        for index in sorted(image):
            if index >= count:
                break  # indexes are sorted: every later one is past the table too
            value = image[index]
            if value:
                fragment = fragments[index]
                if fragment is None:
                    continue
                piece = fragment(value)
            else:
                piece = nulls[index]
            if piece is not None:
                append(piece)
        return b"{" + b",".join(parts) + b"}"

    def render_tag(self, image: RowImage, tag_columns: tuple[int, ...]) -> bytes:
        """The Kafka key fragment (filter `tag`): the tag columns present in ``image``."""
        parts = []
        for index in tag_columns:
            if index not in image or index >= len(self.columns):
                continue
            plan = self.columns[index]
            value = image[index]
            if value:
                piece = plan.after(value) if plan.after is not None else None
            else:
                piece = plan.null_after
            if piece is not None:
                parts.append(piece)
        return b",".join(parts)


def _schema_column(column: Column) -> bytes:
    """One entry of the schema ``columns`` list."""
    type_code = effective_type(column)
    if type_code == TYPE_NUMBER:
        details = f'"number","precision":{column.precision},"scale":{column.scale}'
    else:
        name, has_length = _SCHEMA_TYPES.get(type_code, ("unknown", False))
        details = f'"{name}","length":{column.length}' if has_length else f'"{name}"'
    nullable = "true" if column.nullable else "false"
    return (
        b'{"name":"'
        + escape_str(column.name)
        + b'","type":'
        + details.encode("ascii")
        + b',"nullable":'
        + nullable.encode("ascii")
        + b"}"
    )


def render_schemaless(image: RowImage) -> bytes:
    """``{…}`` of an image of an unknown table: ``COL_<index>`` names and hex values."""
    parts = []
    for index in sorted(image):
        value = image[index]
        text = b'"' + value.hex().encode("ascii") + b'"' if value else b"null"
        parts.append(b'"COL_%d":' % index + text)
    return b"{" + b",".join(parts) + b"}"


def render_compressed(data: bytes) -> bytes:
    """The single-key image OLR prints for an undecodable compressed row piece."""
    return b'{"COMPRESSED":"' + data.hex().encode("ascii") + b'"}'
