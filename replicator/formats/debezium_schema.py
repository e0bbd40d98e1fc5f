"""Kafka Connect schemas and values of the Debezium formats (OMS's Debezium mapping for Oracle).

Column types come from :func:`replicator.formats.typemap.debezium_type`; values follow them:
integers as JSON integers, decimals as plain decimal strings, BINARY_FLOAT/DOUBLE as numbers,
binary by Debezium's ``binary.handling.mode`` (format key ``binary-handling-mode``): ``bytes``
(default) is a ``bytes`` schema whose JSON value is standard base64, exactly what Kafka
Connect's JsonConverter writes and reads for ``bytes``; ``base64``, ``base64-url-safe`` and
``hex`` are ``string`` schemas with that text (hex in lower case, as Debezium's). DATE and
TIMESTAMP as epoch integers (Timestamp = ms, MicroTimestamp = µs, NanoTimestamp = ns; the
wall clock read as UTC, as Debezium does), WITH (LOCAL) TIME ZONE as ZonedTimestamp ISO text,
intervals as ISO-8601 durations (io.debezium.time.Interval), BOOLEAN as true/false.

Every value field is optional except key columns: an UPDATE image can lack columns the redo
does not hold, and Debezium's JsonConverter rejects a missing non-optional field. A LOB whose
value is unavailable (an UPDATE that did not touch it) is Debezium's placeholder
``__debezium_unavailable_value`` (for BLOB: its bytes, encoded as above), never absent: a
consumer reads an absent field as null and would erase the LOB.
"""

from __future__ import annotations

import base64
from decimal import Decimal
from typing import Any, Final

import orjson

from replicator.errors import InternalError
from replicator.formats.rowvalues import ColumnView, TableView, Value, placeholder
from replicator.formats.temporal import DaySecond, Instant, YearMonth, ZonedInstant, iso_duration, zoned_iso
from replicator.formats.textvalues import decimal_text, float_text, non_finite_text
from replicator.formats.typemap import BINARY_FAMILIES, CANAL_TYPES, INTEGER_FAMILIES, debezium_type

Schema = dict[str, Any]
_UNITS: Final = {
    "io.debezium.time.Timestamp": "ms",
    "io.debezium.time.MicroTimestamp": "us",
    "io.debezium.time.NanoTimestamp": "ns",
}


def field(field_name: str, type_: str, optional: bool = True, **extra: Any) -> Schema:
    """One Connect field schema, in OMS's key order (field, optional, type, …)."""
    return {"field": field_name, "optional": optional, "type": type_, **extra}


_BINARY_TEXT: Final = {
    "bytes": lambda data: base64.b64encode(data).decode("ascii"),  # JsonConverter's bytes encoding
    "base64": lambda data: base64.b64encode(data).decode("ascii"),
    "base64-url-safe": lambda data: base64.urlsafe_b64encode(data).decode("ascii"),
    "hex": lambda data: data.hex(),
}


def binary_text(data: bytes, mode: str) -> str:
    """The JSON text of binary ``data`` under ``binary.handling.mode`` ``mode``."""
    return _BINARY_TEXT[mode](data)


def column_field(column: ColumnView, binary_mode: str = "bytes") -> Schema:
    """The Connect field of a table column (semantic name and version when it has one)."""
    type_, name = debezium_type(column.otype)
    if column.otype.family in BINARY_FAMILIES and binary_mode != "bytes":
        type_ = "string"
    extra: dict[str, Any] = {"name": name, "version": 1} if name else {}
    return field(column.name, type_, not column.key, **extra)


def struct(name: str, fields: list[Schema], optional: bool = False, field_name: str | None = None) -> Schema:
    """A Connect struct schema (``field_name`` set when it is a field of another struct)."""
    schema: Schema = {"type": "struct", "optional": optional, "name": name, "fields": fields}
    return {"field": field_name, **schema} if field_name else schema


SOURCE_FIELDS: Final = [
    field("version", "string", False),
    field("connector", "string", False),
    field("name", "string", False),
    field("ts_ms", "int64", False),
    field(
        "snapshot",
        "string",
        True,
        name="io.debezium.data.Enum",
        version=1,
        parameters={"allowed": "true,last,false,incremental"},
    ),
    field("db", "string", False),
    field("schema", "string", False),
    field("table", "string", False),
    field("txId", "string"),
    field("scn", "string"),
    field("commit_scn", "string"),
    field("redo_thread", "int32"),
    field("user_name", "string"),
    field("row_id", "string"),
    field("server_id", "int64"),
    field("pos", "string"),
]
TRANSACTION_FIELDS: Final = [
    field("id", "string", False),
    field("total_order", "int64", False),
    field("data_collection_order", "int64", False),
]
TXN_METADATA_FIELDS: Final = [
    field("status", "string", False),
    field("id", "string", False),
    field("event_count", "int64"),
    {
        "field": "data_collections",
        "optional": True,
        "type": "array",
        "items": struct(
            "event.block", [field("data_collection", "string", False), field("event_count", "int64", False)]
        ),
    },
    field("ts_ms", "int64", False),
]
_COLUMN_FIELDS: Final = [
    field("name", "string", False),
    field("jdbcType", "int32", False),
    field("typeName", "string", False),
    field("length", "int32"),
    field("scale", "int32"),
    field("position", "int32", False),
    field("optional", "boolean", False),
]
_TABLE_FIELDS: Final = [
    {
        "field": "primaryKeyColumnNames",
        "optional": True,
        "type": "array",
        "items": {"type": "string", "optional": False},
    },
    {
        "field": "columns",
        "optional": False,
        "type": "array",
        "items": struct("io.debezium.connector.schema.Column", _COLUMN_FIELDS),
    },
]
SCHEMA_CHANGE_FIELDS: Final = [
    field("databaseName", "string"),
    field("schemaName", "string"),
    field("ddl", "string"),
    {
        "field": "tableChanges",
        "optional": False,
        "type": "array",
        "items": struct(
            "io.debezium.connector.schema.Change",
            [
                field("type", "string", False),
                field("id", "string", False),
                struct("io.debezium.connector.schema.Table", _TABLE_FIELDS, True, "table"),
            ],
        ),
    },
]


def table_change(view: TableView, kind: str, db: str) -> dict[str, object]:
    """A ``tableChanges`` entry describing the table as the dictionary knows it."""
    columns = [
        {
            "name": c.name,
            "jdbcType": CANAL_TYPES[c.otype.family][0],
            "typeName": c.otype.name,
            "length": c.otype.precision if c.otype.precision >= 0 else c.column.length,
            "scale": c.otype.scale if c.otype.scale >= 0 else None,
            "position": c.ordinal,
            "optional": c.column.nullable,
        }
        for c in view.columns
    ]
    return {
        "type": kind,
        "id": f'"{db}"."{view.owner}"."{view.name}"',
        "table": {"primaryKeyColumnNames": [c.name for c in view.keys], "columns": columns},
    }


def render(column: ColumnView, value: Value, binary_mode: str = "bytes") -> object:
    """The JSON value of one column under its Debezium schema."""
    if value is None or isinstance(value, (str, bool)):
        return value
    family = column.otype.family
    if isinstance(value, Decimal):
        return int(value) if family in INTEGER_FAMILIES else decimal_text(value)
    if isinstance(value, float):
        text = float_text(value, family == "binary_float")
        return orjson.Fragment(text.encode("ascii")) if text is not None else non_finite_text(value)
    if isinstance(value, bytes):
        return binary_text(value, binary_mode)
    if isinstance(value, ZonedInstant) or (isinstance(value, Instant) and family == "timestamp_ltz"):
        return zoned_iso(value)
    if isinstance(value, Instant):
        return value.units(_UNITS[debezium_type(column.otype)[1] or ""])
    if isinstance(value, (YearMonth, DaySecond)):
        return iso_duration(value)
    raise InternalError(f"no Debezium rendering for {type(value).__name__}", 50000)


def row(view: TableView, image: dict[int, Value] | None, binary_mode: str = "bytes") -> dict[str, object] | None:
    """A before/after struct: the image's columns in column order (None stays None); an
    unavailable LOB is the placeholder."""
    if image is None:
        return None
    return {
        c.name: render(c, image[c.index] if c.index in image else placeholder(c), binary_mode)
        for c in view.columns
        if c.index in image or c.otype.lob
    }
