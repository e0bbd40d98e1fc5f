"""Per-table Avro schemas with logical types, and Avro values, for the ``avro`` format.

A table's value schema is a Debezium-style envelope record ``<ns>.Envelope`` with ``before``
and ``after`` (``<ns>.Value``, one nullable field per visible column), ``source``, ``op`` and
``ts_ms``; ``<ns>`` is ``replicator.<OWNER>.<TABLE>``. Oracle types map as follows (the
column's precision decides the unit; docs/formats.md §2):

* NUMBER(p,0) p < 10 -> int, p < 19 -> long; other NUMBER(p,s) -> bytes/decimal(p,s) (a
  negative scale becomes decimal(p-s, 0)); unconstrained NUMBER and FLOAT(b) -> string
  (Avro's decimal needs a fixed scale);
* BINARY_FLOAT -> float, BINARY_DOUBLE -> double, BOOLEAN -> boolean, RAW/BLOB -> bytes;
* DATE, TIMESTAMP(0-3) -> long/local-timestamp-millis, TIMESTAMP(4-6) -> local-timestamp-micros,
  TIMESTAMP(7-9) -> local-timestamp-nanos (Avro 1.12); WITH LOCAL TIME ZONE -> the
  timestamp-* (UTC) equivalents; WITH TIME ZONE -> string (ISO-8601 with offset);
* intervals -> string (ISO-8601 duration: Avro's duration is unsigned and has no nanoseconds);
* character types and UROWID -> string.

Every column field is nullable with default null: NULL and "not in the redo" (an UPDATE
without full supplemental logging) are both null here. Names that are not Avro names
(Oracle allows ``$`` and ``#``) are rewritten with ``_``, the original kept in ``doc``.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Final

from replicator.errors import InternalError
from replicator.formats.rowvalues import ColumnView, TableView, Value, placeholder
from replicator.formats.temporal import DaySecond, Instant, YearMonth, ZonedInstant, iso_duration, zoned_iso
from replicator.formats.textvalues import decimal_text
from replicator.formats.typemap import OracleType

Schema = dict[str, Any]
_INVALID: Final = re.compile(r"[^A-Za-z0-9_]")
_UNIT_BY_LOGICAL: Final = {"millis": "ms", "micros": "us", "nanos": "ns"}

SOURCE_SCHEMA: Final[Schema] = {
    "type": "record",
    "name": "Source",
    "namespace": "replicator.avro",
    "fields": [
        {"name": n, "type": t}
        for n, t in (
            ("version", "string"),
            ("connector", "string"),
            ("name", "string"),
            ("ts_ms", "long"),
            ("db", "string"),
            ("schema", "string"),
            ("table", "string"),
            ("txId", "string"),
            ("scn", "long"),
            ("commit_scn", "long"),
            ("c_scn", "long"),
            ("c_idx", "long"),
            ("row_id", ["null", "string"]),
        )
    ],
}
CONTROL_SCHEMA: Final[Schema] = {
    "type": "record",
    "name": "Control",
    "namespace": "replicator.avro",
    "doc": "begin, commit, ddl and heartbeat events",
    "fields": [
        {"name": "op", "type": "string"},
        {"name": "scn", "type": "long"},
        {"name": "ts_ms", "type": "long"},
        {"name": "c_scn", "type": "long"},
        {"name": "c_idx", "type": "long"},
        *(
            {"name": n, "type": ["null", t], "default": None}
            for n, t in (
                ("xid", "string"),
                ("db", "string"),
                ("owner", "string"),
                ("table", "string"),
                ("sql", "string"),
                ("event_count", "long"),
                ("seq", "long"),
                ("offset", "long"),
            )
        ),
    ],
}


def avro_name(text: str) -> str:
    """``text`` as an Avro name: other characters become ``_``, a leading digit gets ``_``."""
    name = _INVALID.sub("_", text) or "_"
    return "_" + name if name[0].isdigit() else name


def _time(logical: str, precision: int) -> Schema:
    unit = "millis" if precision <= 3 else "micros" if precision <= 6 else "nanos"
    return {"type": "long", "logicalType": f"{logical}-{unit}"}


def column_type(otype: OracleType) -> Any:
    """The Avro type (without null) of a column type."""
    family, p, s = otype.family, otype.precision, otype.scale
    simple = {
        "int8": "int",
        "int16": "int",
        "int32": "int",
        "int64": "long",
        "boolean": "boolean",
        "binary_float": "float",
        "binary_double": "double",
        "raw": "bytes",
        "blob": "bytes",
        "unsupported": "bytes",
    }
    if family in simple:
        return simple[family]
    if family == "decimal":
        precision, scale = (p - s, 0) if s < 0 else (max(p, s), s)
        return {"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale}
    if family == "date":
        return _time("local-timestamp", 0)
    if family == "timestamp":
        return _time("local-timestamp", p)
    if family == "timestamp_ltz":
        return _time("timestamp", p)
    return "string"  # characters, UROWID, unconstrained NUMBER, FLOAT(b), TSTZ, intervals


def value_schema(view: TableView, namespace: str) -> Schema:
    """The ``Value`` record of a table: one nullable field per visible column."""
    fields, used = [], set()
    for column in view.columns:
        name = avro_name(column.name)
        if name in used:
            name = f"{name}_{column.ordinal}"  # two Oracle names that sanitize alike
        used.add(name)
        entry: Schema = {"name": name, "type": ["null", column_type(column.otype)], "default": None}
        if name != column.name:
            entry["doc"] = column.name
        fields.append(entry)
    return {"type": "record", "name": "Value", "namespace": namespace, "fields": fields}


def envelope_schema(view: TableView) -> Schema:
    """The table's message schema (see the module docstring)."""
    namespace = f"replicator.{avro_name(view.owner)}.{avro_name(view.name)}"
    return {
        "type": "record",
        "name": "Envelope",
        "namespace": namespace,
        "fields": [
            {"name": "before", "type": ["null", value_schema(view, namespace)], "default": None},
            {"name": "after", "type": ["null", f"{namespace}.Value"], "default": None},
            {"name": "source", "type": SOURCE_SCHEMA},
            {"name": "op", "type": "string"},
            {"name": "ts_ms", "type": "long"},
        ],
    }


def avro_value(column: ColumnView, value: Value) -> Any:
    """The Avro datum of one column value under :func:`column_type`."""
    if value is None or isinstance(value, (str, bool, float, bytes)):
        return value
    kind = column_type(column.otype)
    if isinstance(value, Decimal):
        if kind in ("int", "long"):
            return int(value)
        return value if isinstance(kind, dict) else decimal_text(value)
    if isinstance(value, ZonedInstant):
        return zoned_iso(value)
    if isinstance(value, Instant):
        return value.units(_UNIT_BY_LOGICAL[kind["logicalType"].rsplit("-", 1)[1]])
    if isinstance(value, (YearMonth, DaySecond)):
        return iso_duration(value)
    raise InternalError(f"no Avro value for {type(value).__name__}", 50000)


def avro_row(view: TableView, image: dict[int, Value] | None, names: list[str]) -> dict[str, Any] | None:
    """A ``Value`` record datum (``names``: the field names of :func:`value_schema`).

    A column the image lacks is null, except a LOB whose value is unavailable (an UPDATE that
    did not touch it, pages not in the redo): Debezium's ``__debezium_unavailable_value``
    placeholder, so a consumer does not read "set to NULL" and erase the value.
    """
    if image is None:
        return None
    return {
        name: avro_value(c, image[c.index]) if c.index in image else placeholder(c) if c.otype.lob else None
        for name, c in zip(names, view.columns, strict=True)
    }
