"""The DTS Avro ``Record`` schema (``com.alibaba.dts.formats.avro.Record``).

This is the fixed, public schema every DTS Avro message is written with (and OMS's Avro
serialization uses the same record): the ``Record.avsc`` of Alibaba's public DTS subscription
demos (Python and Go), 15 fields ending with ``bornTimestamp``. A consumer decodes a message
body with it directly: the messages are schemaless Avro binary, one ``Record`` each. Column
values are a union of typed records (Integer, Character, Decimal, Float, Timestamp, DateTime,
TimestampWithTimeZone, BinaryGeometry, TextGeometry, BinaryObject, TextObject) plus the
``EmptyObject`` enum; :data:`RECORD_SCHEMA` spells the record out field for field, in the
order and with the defaults of the published ``Record.avsc``.

The DTS Java SDK compiles the same record without ``bornTimestamp``; its decoder reads the
14 fields and ignores the trailing long, so both kinds of consumer read these messages.
The SDK parses ``TextObject.type`` (and ``BinaryObject.type``) with ``ObjectType.valueOf``:
:data:`OBJECT_TYPES` is that enum, and every type name written comes from it.
"""

from __future__ import annotations

from typing import Any, Final

import fastavro

NAMESPACE: Final = "com.alibaba.dts.formats.avro"
Schema = dict[str, Any]
# The DTS Java SDK's ObjectType enum: the only names ``TextObject.type``/``BinaryObject.type`` may hold.
OBJECT_TYPES: Final = frozenset(
    {
        "BINARY",
        "BOOL",
        "BLOB",
        "XML",
        "JSON",
        "TEXT",
        "BFILE",
        "RAW",
        "LONG_RAW",
        "ROWID",
        "UROWID",
        "ENUM",
        "SET",
        "BYTEA",
        "GEOMETRY",
        "XTYPE",
        "UUID",
    }
)


def _record(name: str, fields: list[Schema], doc: str | None = None) -> Schema:
    record: Schema = {"type": "record", "name": name, "namespace": NAMESPACE, "fields": fields}
    if doc:
        record["doc"] = doc
    return record


def _field(name: str, type_: Any, doc: str | None = None, **extra: Any) -> Schema:
    entry: Schema = {"name": name, "type": type_, **extra}
    if doc:
        entry["doc"] = doc
    return entry


def _optional_int(name: str) -> Schema:
    return _field(name, ["null", "int"], default=None)


_VALUE_TYPES: Final[list[Schema]] = [
    _record("Integer", [_field("precision", "int"), _field("value", "string")]),
    _record("Character", [_field("charset", "string"), _field("value", "bytes")]),
    _record("Decimal", [_field("value", "string"), _field("precision", "int"), _field("scale", "int")]),
    _record("Float", [_field("value", "double"), _field("precision", "int"), _field("scale", "int")]),
    _record("Timestamp", [_field("timestamp", "long"), _field("millis", "int")]),
    _record("DateTime", [_optional_int(n) for n in ("year", "month", "day", "hour", "minute", "second", "millis")]),
    _record("TimestampWithTimeZone", [_field("value", f"{NAMESPACE}.DateTime"), _field("timezone", "string")]),
    _record("BinaryGeometry", [_field("type", "string"), _field("value", "bytes")]),
    _record("TextGeometry", [_field("type", "string"), _field("value", "string")]),
    _record("BinaryObject", [_field("type", "string"), _field("value", "bytes")]),
    _record("TextObject", [_field("type", "string"), _field("value", "string")]),
    {"type": "enum", "name": "EmptyObject", "namespace": NAMESPACE, "symbols": ["NULL", "NONE"]},
]
# The first image union defines the value records; the second refers to them by name.
_FIRST_ITEMS: Final = ["null", *_VALUE_TYPES]
_NAMED_ITEMS: Final = ["null", *(f"{NAMESPACE}.{t['name']}" for t in _VALUE_TYPES)]

SOURCE_TYPES: Final = [
    "MySQL",
    "Oracle",
    "SQLServer",
    "PostgreSQL",
    "MongoDB",
    "Redis",
    "DB2",
    "PPAS",
    "DRDS",
    "HBASE",
    "HDFS",
    "FILE",
    "OTHER",
]
OPERATIONS: Final = [
    "INSERT",
    "UPDATE",
    "DELETE",
    "DDL",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "ABORT",
    "HEARTBEAT",
    "CHECKPOINT",
    "COMMAND",
    "FILL",
    "FINISH",
    "CONTROL",
    "RDB",
    "NOOP",
    "INIT",
]

RECORD_SCHEMA: Final[Schema] = {
    "name": f"{NAMESPACE}.Record",
    "type": "record",
    "fields": [
        _field("version", "int", "version information"),
        _field("id", "long", "unique id of this record in the whole stream"),
        _field("sourceTimestamp", "long", "record log timestamp"),
        _field("sourcePosition", "string", "record source location information"),
        _field("safeSourcePosition", "string", "safe record source location information, use to recovery.", default=""),
        _field("sourceTxid", "string", "record transation id", default=""),
        _field(
            "source",
            _record(
                "Source",
                [
                    _field(
                        "sourceType",
                        {"type": "enum", "name": "SourceType", "namespace": NAMESPACE, "symbols": SOURCE_TYPES},
                    ),
                    _field("version", "string", "source datasource version information"),
                ],
            ),
            "source datasource",
        ),
        _field("operation", {"type": "enum", "name": "Operation", "symbols": OPERATIONS}, namespace=NAMESPACE),
        _field("objectName", ["null", "string"], default=None),
        _field(
            "processTimestamps",
            ["null", {"type": "array", "items": "long"}],
            "time when this record is processed along the stream dataflow",
            default=None,
        ),
        _field("tags", {"type": "map", "values": "string"}, "tags to identify properties of this record", default={}),
        _field(
            "fields",
            [
                "null",
                "string",
                {
                    "type": "array",
                    "items": _record("Field", [_field("name", "string"), _field("dataTypeNumber", "int")]),
                },
            ],
            default=None,
        ),
        _field("beforeImages", ["null", "string", {"type": "array", "items": _FIRST_ITEMS}], default=None),
        _field("afterImages", ["null", "string", {"type": "array", "items": _NAMED_ITEMS}], default=None),
        _field(
            "bornTimestamp", "long", "the timestamp in unit of millisecond that record is born in source", default=0
        ),
    ],
}

PARSED_RECORD: Final = fastavro.parse_schema(RECORD_SCHEMA)


def value_type(name: str) -> str:
    """The full name of a value record (``Integer`` -> ``com.alibaba.dts.formats.avro.Integer``)."""
    return f"{NAMESPACE}.{name}"
