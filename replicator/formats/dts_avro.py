"""DTS Avro (format type ``dts-avro``, also ``oms-avro``): one schemaless Avro ``Record`` per event.

The schema is :data:`replicator.formats.dts_schema.RECORD_SCHEMA`. Oracle mapping
(docs/formats.md §4.8):

* ``id`` = serial of the stream position, ``sourceTimestamp`` = change time (s),
  ``sourcePosition`` = the change SCN, ``safeSourcePosition`` = the transaction's begin SCN
  (restarting there replays the transaction whole), ``sourceTxid`` = ``usn.slot.sqn``,
  ``source`` = ``{Oracle, ""}``, ``objectName`` = ``OWNER.TABLE``, ``processTimestamps`` =
  [processing time in ms], ``tags.pk_uk_info`` = ``{"PRIMARY":[key columns]}``;
* ``fields`` = ``[{name, dataTypeNumber}]`` with the Oracle type code (SYS.COL$.TYPE#) as
  DTS numbers Oracle columns; images are arrays in field order;
* values: NUMBER(p,0) p < 19 and BOOLEAN -> Integer, other NUMBER -> Decimal (declared or,
  for an unconstrained NUMBER, the value's own precision/scale), BINARY_FLOAT/DOUBLE ->
  Float, CHAR/VARCHAR2 (and N-) -> Character (UTF-8), CLOB/NCLOB, intervals and UROWID ->
  TextObject, RAW/BLOB -> BinaryObject (the object ``type`` is a name of the DTS Java SDK's
  ``ObjectType`` enum, :func:`object_type`), DATE/TIMESTAMP -> DateTime, WITH TIME ZONE ->
  TimestampWithTimeZone (wall clock in its zone), WITH LOCAL TIME ZONE -> Timestamp (UTC);
  the ``millis`` fields hold microseconds (DTS names them so, its sources keep µs);
  SQL NULL -> null; a column the redo does not hold (UPDATE) -> EmptyObject ``NONE``;
* ``bornTimestamp`` = the event's time in the source, in milliseconds;
* BEGIN/COMMIT records for transactions, DDL records with the statement as the string
  ``afterImages``, HEARTBEAT records for checkpoints.
"""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import fastavro

from replicator.errors import InternalError
from replicator.events import (
    OP_DELETE,
    OP_INSERT,
    OP_UPDATE,
    TYPE_JSON,
    TYPE_LONG,
    TYPE_LONG_RAW,
    TYPE_XMLTYPE,
    Checkpoint,
    DdlChange,
    Message,
)
from replicator.formats.base import FormatOptions
from replicator.formats.capabilities import NativeRowFormat
from replicator.formats.dts_schema import PARSED_RECORD, RECORD_SCHEMA, value_type
from replicator.formats.framework import (
    Clock,
    EventFormat,
    Position,
    TxnContext,
    ddl_table,
    dumps,
    native_avro,
)
from replicator.formats.rowvalues import ColumnView, RowValues, TableView, Value
from replicator.formats.temporal import (
    DaySecond,
    Instant,
    YearMonth,
    ZonedInstant,
    calendar_fields,
    interval_literal,
)
from replicator.formats.textvalues import TextValues, decimal_text
from replicator.formats.typemap import INTEGER_FAMILIES, OracleType

OPERATIONS = {OP_INSERT: "INSERT", OP_UPDATE: "UPDATE", OP_DELETE: "DELETE"}
_FLOAT_DIGITS = {"binary_float": 7, "binary_double": 16}
# ObjectType names (dts_schema.OBJECT_TYPES) by family: the SDK throws on any other name.
_OBJECT_TYPES = {
    "clob": "TEXT",
    "nclob": "TEXT",
    "interval_ym": "TEXT",
    "interval_ds": "TEXT",
    "urowid": "UROWID",
    "raw": "RAW",
    "blob": "BLOB",
}
# Types the formats carry as raw bytes (unknown-type 1), by SYS.COL$.TYPE#.
_UNSUPPORTED_OBJECT_TYPES = {TYPE_LONG: "TEXT", TYPE_LONG_RAW: "LONG_RAW", TYPE_XMLTYPE: "XML", TYPE_JSON: "JSON"}


def object_type(otype: OracleType) -> str:
    """The ObjectType name of a TextObject/BinaryObject value of type ``otype``."""
    if otype.family == "unsupported":
        return _UNSUPPORTED_OBJECT_TYPES.get(otype.code, "BINARY")
    return _OBJECT_TYPES[otype.family]


def _datetime(value: Instant) -> dict[str, int]:
    year, month, day, hour, minute, second = calendar_fields(value)
    return {
        "year": year,
        "month": month,
        "day": day,
        "hour": hour,
        "minute": minute,
        "second": second,
        "millis": value.nanos // 1000,
    }


def dts_value(column: ColumnView, value: Value) -> Any:
    """One image element: ``(record name, fields)`` for fastavro's union choice, or None."""
    if value is None:
        return None
    otype = column.otype
    if isinstance(value, bool):
        return value_type("Integer"), {"precision": 1, "value": "1" if value else "0"}
    if isinstance(value, Decimal):
        if otype.family in INTEGER_FAMILIES:
            return value_type("Integer"), {"precision": otype.precision, "value": decimal_text(value)}
        precision, scale = otype.precision, otype.scale
        if precision < 0 or scale < 0:
            digits, exponent = value.as_tuple().digits, int(value.as_tuple().exponent)
            precision, scale = len(digits), max(-exponent, 0)
        return value_type("Decimal"), {"value": decimal_text(value), "precision": precision, "scale": scale}
    if isinstance(value, float):
        return value_type("Float"), {"value": value, "precision": _FLOAT_DIGITS[otype.family], "scale": 0}
    if isinstance(value, str):
        if otype.family in ("clob", "nclob", "urowid"):
            return value_type("TextObject"), {"type": object_type(otype), "value": value}
        return value_type("Character"), {"charset": "utf8", "value": value.encode("utf-8")}
    if isinstance(value, bytes):
        return value_type("BinaryObject"), {"type": object_type(otype), "value": value}
    if isinstance(value, ZonedInstant):
        return value_type("TimestampWithTimeZone"), {"value": _datetime(value.local()), "timezone": value.zone}
    if isinstance(value, Instant):
        if otype.family == "timestamp_ltz":
            return value_type("Timestamp"), {"timestamp": value.epoch, "millis": value.nanos // 1000}
        return value_type("DateTime"), _datetime(value)
    if isinstance(value, (YearMonth, DaySecond)):
        return value_type("TextObject"), {"type": object_type(otype), "value": interval_literal(value)}
    raise InternalError(f"no DTS Avro value for {type(value).__name__}", 50000)


# The native encoder's column kinds (replicator/formats/_avro.pyx DTK_*).
(
    _DTK_PY,
    _DTK_INTEGER,
    _DTK_DECIMAL,
    _DTK_FLOAT,
    _DTK_CHAR,
    _DTK_BINARY,
    _DTK_DATETIME,
    _DTK_TS,
    _DTK_ZONED,
    _DTK_TEXT,
) = range(10)
_OPERATION_INDEX = {OP_INSERT: 0, OP_UPDATE: 1, OP_DELETE: 2}  # dts_schema.OPERATIONS
# Pieces of the Record encoded alone (native rows): two strings, an image array, tags + fields.
_STRINGS = fastavro.parse_schema(
    {
        "type": "record",
        "name": "Strings",
        "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}],
    }
)
_ELEMENTS = fastavro.parse_schema(next(f["type"][2] for f in RECORD_SCHEMA["fields"] if f["name"] == "beforeImages"))
_TAGS_FIELDS = fastavro.parse_schema(
    {
        "type": "record",
        "name": "TagsFields",
        "namespace": "com.alibaba.dts.formats.avro",
        "fields": [f for f in RECORD_SCHEMA["fields"] if f["name"] in ("tags", "fields")],
    }
)
_STRING, _OPTIONAL_STRING = fastavro.parse_schema("string"), fastavro.parse_schema(["null", "string"])


def _encode(parsed: Any, datum: Any) -> bytes:
    """fastavro's schemaless bytes of ``datum`` (``parsed``: a parsed schema)."""
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, datum)
    return buffer.getvalue()


_CONTROL_OPERATIONS = {"BEGIN": 4, "COMMIT": 5}  # dts_schema.OPERATIONS


def _long(value: int) -> bytes:
    """An Avro int/long: zig-zag, then base-128 varint."""
    u = (value << 1) ^ (value >> 63)
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def _text(value: str) -> bytes:
    data = value.encode("utf-8")
    return _long(len(data)) + data


def control_record(serial: int, time: int, position: str, safe: str, txid: str, operation: int, now_ms: int) -> bytes:
    """The Record of a transaction's BEGIN or COMMIT, byte for byte what fastavro writes for
    DtsAvroFormat._record (no objectName, tags, fields or images): once per transaction
    each, so written directly instead of through fastavro's generic writer."""
    return b"".join(
        (
            b"\x02",
            _long(serial),
            _long(time),
            _text(position),
            _text(safe),
            _text(txid),
            b"\x02\x00",
            _long(operation),
            b"\x00\x02\x02",
            _long(now_ms),
            b"\x00\x00\x00\x00\x00",
            _long(time * 1000),
        )
    )


class DtsAvroFormat(EventFormat, NativeRowFormat):
    """DTS Avro records."""

    begin_op, commit_op = "BEGIN", "COMMIT"

    def __init__(self, options: FormatOptions, clock: Clock | None = None):
        super().__init__(options, clock)
        self._key_values = TextValues()  # Kafka keys (filter `tag`) are JSON text
        # native rows: table view id -> (view, ColumnCodes, objectName, tags + fields), all encoded
        self._native: dict[int, tuple[TableView, Any, bytes, bytes]] = {}
        self._txn_part: tuple[TxnContext | None, bytes] = (None, b"")

    def _encode(self, record: dict[str, Any]) -> bytes:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, PARSED_RECORD, record)
        return buffer.getvalue()

    def _record(
        self, pos: Position, operation: str, timestamp: int, position: str, safe: str, txid: str, **rest: Any
    ) -> bytes:
        record = {
            "version": 1,
            "id": pos.serial,
            "sourceTimestamp": timestamp,
            "sourcePosition": position,
            "safeSourcePosition": safe,
            "sourceTxid": txid,
            "source": {"sourceType": "Oracle", "version": ""},
            "operation": operation,
            "objectName": None,
            "processTimestamps": [self.now_ms()],
            "tags": {},
            "fields": None,
            "beforeImages": None,
            "afterImages": None,
            "bornTimestamp": timestamp * 1000,
        }
        record.update(rest)
        return self._encode(record)

    def transaction_record(self, ctx: TxnContext, pos: Position, op: str, time: int, scn: int) -> list[Message]:
        """A BEGIN or COMMIT record at the begin/commit SCN (written without fastavro: see
        :func:`control_record`)."""
        data = control_record(
            pos.serial, time, str(scn), str(ctx.txn.begin_scn), ctx.xid, _CONTROL_OPERATIONS[op], self.now_ms()
        )
        return [self.message(data, pos, ctx)]

    def on_row(self, ctx: TxnContext, pos: Position, row: RowValues) -> list[Message]:
        """One record per row change."""
        view, change = row.view, row.change
        tags = {"pk_uk_info": dumps({"PRIMARY": [k.name for k in view.keys]}).decode()} if view.keys else {}
        data = self._record(
            pos,
            OPERATIONS[row.op],
            change.time,
            str(change.scn),
            str(ctx.txn.begin_scn),
            ctx.xid,
            objectName=f"{view.owner}.{view.name}",
            tags=tags,
            fields=[{"name": c.name, "dataTypeNumber": c.otype.code} for c in view.columns],
            beforeImages=self._image(view, row.before),
            afterImages=self._image(view, row.after),
        )
        return [self.message(data, pos, ctx, key=self.tag_key(row, self._key_values.render), table=change.table)]

    def on_native_row(self, ctx: TxnContext, pos: Position, rows: Any, r: int) -> list[Message]:
        """:meth:`on_row` for row ``r`` of a natively decoded transaction (replicator.native
        RowImages; its tables have no `tag` columns): the same bytes, the record written in C."""
        view = rows.view(r)
        cached = self._native.get(id(view))
        if cached is None or cached[0] is not view:
            cached = self._native[id(view)] = self._native_table(view)
        if self._txn_part[0] is not ctx:
            self._txn_part = (ctx, _encode(_STRINGS, {"a": str(ctx.txn.begin_scn), "b": ctx.xid}))
        time = rows.time(r)
        data = native_avro().dts_record(
            rows,
            r,
            cached[1],
            pos.serial,
            time,
            self._txn_part[1],
            _OPERATION_INDEX[rows.op(r)],
            cached[2],
            self.now_ms(),
            cached[3],
        )
        return [self.message(data, pos, ctx, table=rows.table(r))]

    def _native_table(self, view: TableView) -> tuple[TableView, Any, bytes, bytes]:
        """A table's column codes for the native encoder and its constant record parts."""
        kinds, p1, p2, extra = [], [], [], []
        for c in view.columns:
            otype = c.otype
            family = otype.family
            kind, a, b, x = _DTK_PY, 0, 0, b""
            if family in INTEGER_FAMILIES:
                kind, a = _DTK_INTEGER, otype.precision
            elif family in ("decimal", "number", "float"):
                kind, a, b = _DTK_DECIMAL, otype.precision, otype.scale
            elif family in _FLOAT_DIGITS:
                kind, a = _DTK_FLOAT, _FLOAT_DIGITS[family]
            elif family in ("char", "nchar", "varchar", "nvarchar"):
                kind = _DTK_CHAR
            elif family in ("raw", "blob", "unsupported"):
                kind, x = _DTK_BINARY, _encode(_STRING, object_type(otype))
            elif family in ("date", "timestamp"):
                kind = _DTK_DATETIME
            elif family == "timestamp_ltz":
                kind = _DTK_TS
            elif family == "timestamp_tz":
                kind = _DTK_ZONED
            elif family in ("interval_ym", "interval_ds"):
                kind, x = _DTK_TEXT, _encode(_STRING, object_type(otype))
            kinds.append(kind)
            p1.append(a)
            p2.append(b)
            extra.append(x)
        columns = view.columns

        def fallback(v: int, value: Value) -> bytes:
            return _encode(_ELEMENTS, [dts_value(columns[v], value)])[1:-1]  # the one item

        tags = {"pk_uk_info": dumps({"PRIMARY": [k.name for k in view.keys]}).decode()} if view.keys else {}
        fields = [{"name": c.name, "dataTypeNumber": c.otype.code} for c in view.columns]
        return (
            view,
            native_avro().ColumnCodes(kinds, p1, p2, extra, fallback),
            _encode(_OPTIONAL_STRING, f"{view.owner}.{view.name}"),
            _encode(_TAGS_FIELDS, {"tags": tags, "fields": fields}),
        )

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """A DDL record: the statement is the string ``afterImages``."""
        table = ddl_table(change)
        data = self._record(
            pos,
            "DDL",
            change.time,
            str(change.scn),
            str(ctx.txn.begin_scn),
            ctx.xid,
            objectName=f"{change.owner}.{table}",
            afterImages=change.sql,
        )
        return [self.message(data, pos, ctx)]

    def on_checkpoint(self, cp: Checkpoint, pos: Position) -> list[Message]:
        """A HEARTBEAT record at the checkpoint SCN."""
        data = self._record(pos, "HEARTBEAT", cp.time, str(cp.scn), str(cp.scn), "")
        return [self.message(data, pos, seq=cp.seq)]

    @staticmethod
    def _image(view: TableView, image: dict[int, Value] | None) -> list[Any] | None:
        if image is None:
            return None
        return [dts_value(c, image[c.index]) if c.index in image else "NONE" for c in view.columns]
