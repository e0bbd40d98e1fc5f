"""Avro with per-table schemas (format type ``avro``), written with fastavro.

Each data message is Confluent's wire format: byte 0x00, the schema id (4 bytes, big-endian)
and the schemaless Avro body, so registry-aware deserializers read it once they know the
schema. Row changes use their table's envelope schema (:mod:`replicator.formats.avro_schema`);
begin, commit, DDL and heartbeat events use the fixed ``replicator.avro.Control`` schema.

The schema id is the CRC-64-AVRO fingerprint of the schema's parsing canonical form, cut to
31 bits, so the same table structure keeps its id across restarts and a DDL that changes the
structure yields a new one. A schema is delivered once per process before its first use:

* as a *schema message* (default): JSON ``{"schemaId":…,"subject":"OWNER.TABLE-value",
  "schema":{…}}`` with the Kafka header ``replicator.avro: schema`` (data messages carry
  ``replicator.avro: data``, both carry ``schema.id``);
* or, with the format key ``avro-schema-path`` set, as a file ``<subject>-<id>.avsc`` in that
  directory (written atomically), and no schema message.

Schema messages take the position of the event before them, so confirming one never
confirms the data message it precedes.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import fastavro
from fastavro.schema import fingerprint, to_parsing_canonical_form

from replicator import __version__
from replicator.errors import RuntimeFailure
from replicator.events import Checkpoint, DdlChange, Message
from replicator.formats.avro_schema import CONTROL_SCHEMA, avro_row, avro_value, column_type, envelope_schema
from replicator.formats.base import FormatOptions
from replicator.formats.capabilities import NativeRowFormat
from replicator.formats.framework import (
    Clock,
    EventFormat,
    Position,
    TxnContext,
    ddl_table,
    dumps,
    native_avro,
)
from replicator.formats.rowvalues import RowValues, TableView, Value
from replicator.formats.textvalues import TextValues
from replicator.values.rowid import rowid_text

Schema = dict[str, Any]


# The native encoder's column kinds (replicator/formats/_avro.pyx AVK_*).
_AVK_PY, _AVK_LONG, _AVK_DEC, _AVK_STR, _AVK_BYTES, _AVK_FLOAT, _AVK_DOUBLE, _AVK_TIME = range(8)
_SIMPLE_KINDS = {"string": _AVK_STR, "bytes": _AVK_BYTES, "float": _AVK_FLOAT, "double": _AVK_DOUBLE}
_UNIT_NANOS = {"millis": 1_000_000, "micros": 1000, "nanos": 1}
_OPS = {"c": b"\x02c", "u": b"\x02u", "d": b"\x02d"}  # the op string, encoded
_PARSED_STRING = fastavro.parse_schema("string")
_PARSED_STRINGS = fastavro.parse_schema(
    {"type": "record", "name": "Strings", "fields": [{"name": n, "type": "string"} for n in "abc"]}
)


def _encode(parsed: Any, datum: Any) -> bytes:
    """fastavro's schemaless bytes of ``datum`` (``parsed``: a parsed schema)."""
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, parsed, datum)
    return buffer.getvalue()


class AvroFormat(EventFormat, NativeRowFormat):
    """Per-table Avro messages in Confluent framing, with schema messages or files."""

    begin_op, commit_op = "begin", "commit"

    def __init__(self, options: FormatOptions, clock: Clock | None = None):
        super().__init__(options, clock)
        self.schema_path = Path(options.avro_schema_path) if options.avro_schema_path else None
        self._parsed: dict[int, Any] = {}  # schema id -> parsed schema, once announced
        self._tables: dict[int, tuple[TableView, Schema, int, list[str]]] = {}
        self._control_id = self._schema_id(CONTROL_SCHEMA)
        self._key_values = TextValues()
        # native rows: table view id -> (view, ColumnCodes, encoded schema + table); per transaction db, txId
        self._native: dict[int, tuple[TableView, Any, bytes]] = {}
        self._txn_part: tuple[TxnContext | None, bytes, bytes] = (None, b"", b"")
        self._source_a = _encode(
            _PARSED_STRINGS, {"a": __version__, "b": "oracle", "c": self.options.database or "replicator"}
        )

    @staticmethod
    def _schema_id(schema: Schema) -> int:
        parsed = fastavro.parse_schema(schema)
        return int(fingerprint(to_parsing_canonical_form(parsed), "CRC-64-AVRO"), 16) & 0x7FFFFFFF

    def _announce(
        self, schema: Schema, schema_id: int, subject: str, pos: Position, ctx: TxnContext | None
    ) -> list[Message]:
        """Register ``schema`` on first use: a schema file or a schema message."""
        if schema_id in self._parsed:
            return []
        self._parsed[schema_id] = fastavro.parse_schema(schema)
        if self.schema_path is not None:
            self._write_file(schema, schema_id, subject)
            return []
        body = dumps({"schemaId": schema_id, "subject": subject, "schema": schema})
        headers = [("replicator.avro", b"schema"), ("schema.id", str(schema_id).encode())]
        if ctx is None:
            return [self.message(body, pos, headers=headers)]
        return [self.message(body, self.aux_position(pos), ctx, headers=headers)]

    def _write_file(self, schema: Schema, schema_id: int, subject: str) -> None:
        assert self.schema_path is not None
        target = self.schema_path / f"{subject}-{schema_id}.avsc"
        if target.exists():
            return
        temp = target.with_suffix(".tmp")
        try:
            self.schema_path.mkdir(parents=True, exist_ok=True)
            temp.write_bytes(dumps(schema))
            os.replace(temp, target)
        except OSError as exc:
            raise RuntimeFailure(f"avro schema file {target} cannot be written: {exc}", 10006) from exc

    def _encode(self, schema_id: int, datum: dict[str, Any]) -> bytes:
        buffer = io.BytesIO()
        buffer.write(b"\x00" + schema_id.to_bytes(4, "big"))
        fastavro.schemaless_writer(buffer, self._parsed[schema_id], datum)
        return buffer.getvalue()

    def _data(self, schema_id: int, datum: dict[str, Any], pos: Position, ctx: TxnContext | None, **kw: Any) -> Message:
        headers = [("replicator.avro", b"data"), ("schema.id", str(schema_id).encode())]
        return self.message(self._encode(schema_id, datum), pos, ctx, headers=headers, **kw)

    def _control(
        self, pos: Position, ctx: TxnContext | None, op: str, scn: int, time: int, **fields: Any
    ) -> list[Message]:
        out = self._announce(CONTROL_SCHEMA, self._control_id, "replicator.control", pos, ctx)
        datum = {
            "op": op,
            "scn": scn,
            "ts_ms": time * 1000,
            "c_scn": pos.scn,
            "c_idx": pos.idx + 1,
            "xid": ctx.xid if ctx is not None else None,
            "db": ctx.db if ctx is not None else None,
            **fields,
        }
        out.append(self._data(self._control_id, datum, pos, ctx, seq=fields.get("seq") or 0))
        return out

    def transaction_record(self, ctx: TxnContext, pos: Position, op: str, time: int, scn: int) -> list[Message]:
        """A Control record ``begin``, or ``commit`` with the number of changes."""
        if op == "commit":
            return self._control(pos, ctx, op, scn, time, event_count=ctx.total)
        return self._control(pos, ctx, op, scn, time)

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """A Control record ``ddl`` with the statement."""
        table = ddl_table(change)
        return self._control(pos, ctx, "ddl", change.scn, change.time, owner=change.owner, table=table, sql=change.sql)

    def on_checkpoint(self, cp: Checkpoint, pos: Position) -> list[Message]:
        """A Control record ``heartbeat`` with the redo position."""
        return self._control(pos, None, "heartbeat", cp.scn, cp.time, seq=cp.seq, offset=cp.offset)

    def _table(self, view: TableView) -> tuple[TableView, Schema, int, list[str]]:
        cached = self._tables.get(id(view))
        if cached is None or cached[0] is not view:
            schema = envelope_schema(view)
            names = [f["name"] for f in schema["fields"][0]["type"][1]["fields"]]
            cached = self._tables[id(view)] = (view, schema, self._schema_id(schema), names)
        return cached

    def on_native_row(self, ctx: TxnContext, pos: Position, rows: Any, r: int) -> list[Message]:
        """:meth:`on_row` for row ``r`` of a natively decoded transaction (replicator.native
        RowImages; its tables have no `tag` columns): the same bytes, the record written in C."""
        view = rows.view(r)
        _, schema, schema_id, _ = self._table(view)
        out = self._announce(schema, schema_id, f"{view.owner}.{view.name}-value", pos, ctx)
        native = self._native.get(id(view))
        if native is None or native[0] is not view:
            native = self._native[id(view)] = self._native_table(view)
        if self._txn_part[0] is not ctx:
            self._txn_part = (ctx, _encode(_PARSED_STRING, ctx.db), _encode(_PARSED_STRING, ctx.xid))
        data = native_avro().avro_envelope(
            rows,
            r,
            native[1],
            b"\x00" + schema_id.to_bytes(4, "big"),
            self._source_a,
            rows.time(r) * 1000,
            self._txn_part[1] + native[2] + self._txn_part[2],
            ctx.txn.commit_scn,
            pos.scn,
            pos.idx + 1,
            _OPS[rows.op(r)],
            self.now_ms(),
        )
        headers = [("replicator.avro", b"data"), ("schema.id", str(schema_id).encode())]
        out.append(self.message(data, pos, ctx, headers=headers, table=rows.table(r)))
        return out

    def _native_table(self, view: TableView) -> tuple[TableView, Any, bytes]:
        """A table's column codes for the native encoder and its encoded schema and table names."""
        kinds, p1, p2, parsed = [], [], [], []
        for c in view.columns:
            kind = column_type(c.otype)
            code, a, b = _AVK_PY, 0, 0
            if kind in ("int", "long"):
                code = _AVK_LONG
            elif isinstance(kind, str) and kind in _SIMPLE_KINDS:
                code = _SIMPLE_KINDS[kind]
            elif isinstance(kind, dict) and kind.get("logicalType") == "decimal":
                code, a, b = _AVK_DEC, kind["precision"], kind["scale"]
            elif isinstance(kind, dict):
                code, a = _AVK_TIME, _UNIT_NANOS[kind["logicalType"].rsplit("-", 1)[1]]
            kinds.append(code)
            p1.append(a)
            p2.append(b)
            parsed.append(
                fastavro.parse_schema(
                    {"type": "record", "name": "One", "fields": [{"name": "v", "type": ["null", kind]}]}
                )
            )
        columns = view.columns

        def fallback(v: int, value: Value) -> bytes:
            return _encode(parsed[v], {"v": avro_value(columns[v], value)})

        return (
            view,
            native_avro().ColumnCodes(kinds, p1, p2, [], fallback),
            _encode(_PARSED_STRING, view.owner) + _encode(_PARSED_STRING, view.name),
        )

    def on_row(self, ctx: TxnContext, pos: Position, row: RowValues) -> list[Message]:
        """Schema (first use), then the row's envelope record."""
        view, change = row.view, row.change
        _, schema, schema_id, names = self._table(view)
        out = self._announce(schema, schema_id, f"{view.owner}.{view.name}-value", pos, ctx)
        txn = ctx.txn
        source = {
            "version": __version__,
            "connector": "oracle",
            "name": self.options.database or "replicator",
            "ts_ms": change.time * 1000,
            "db": ctx.db,
            "schema": view.owner,
            "table": view.name,
            "txId": ctx.xid,
            "scn": change.scn,
            "commit_scn": txn.commit_scn,
            "c_scn": pos.scn,
            "c_idx": pos.idx + 1,
            "row_id": rowid_text(change.data_obj, change.bdba, change.slot),
        }
        datum = {
            "before": avro_row(view, row.before, names),
            "after": avro_row(view, row.after, names),
            "source": source,
            "op": change.op,
            "ts_ms": self.now_ms(),
        }
        out.append(
            self._data(schema_id, datum, pos, ctx, key=self.tag_key(row, self._key_values.render), table=change.table)
        )
        return out
