"""Debezium change events: ``debezium-envelope``, ``debezium-flatten``, ``debezium-smt``.

These are OMS's Debezium, DebeziumFlatten and DebeziumSmt serializations, mapped from Oracle
(OLR's own ``debezium`` type stays the OLR JSON preset of olr-interfaces.md §2.8):

* envelope: ``{"schema":{…Connect schema…},"payload":{"op","source","before","after","ts_ms",
  "transaction"}}`` — what Kafka Connect's JsonConverter writes with schemas enabled;
* flatten: the payload object alone;
* smt: the row after the change (the deleted row for DELETE) plus ``"__deleted":"true|false"``,
  as ExtractNewRecordState leaves it, with Kafka headers ``__op``, ``__db``, ``__schema``,
  ``__table`` and ``__source_ts_ms`` (its ``add.headers`` option) since the value alone does
  not say what happened.

``source`` carries OMS's fields (version, connector, name, ts_ms, db, table, server_id, pos)
and the Debezium Oracle ones (snapshot, schema, txId, scn, commit_scn, redo_thread,
user_name, row_id); ``pos`` is ``c_scn:c_idx``. Envelope and flatten also emit Debezium's
transaction metadata (status BEGIN/END with event counts per data collection), schema
change events for DDL (``ddl`` plus a ``tableChanges`` description), a tombstone after each
DELETE of a keyed table (``tombstones-on-delete``, default 1, as Debezium's
``tombstones.on.delete``) and, for checkpoints, Debezium's heartbeat: value ``{"ts_ms":…}``
(schema ``io.debezium.connector.common.Heartbeat``), key ``{"serverName":…}``, on the topic
``__debezium-heartbeat.<source name>``. The Kafka key is the primary key struct
(``{"schema","payload"}`` in envelope mode), ``{"id":xid}`` for transaction metadata and
``{"databaseName":…}`` for schema changes; keyless tables have no key. Binary values follow
``binary-handling-mode`` (:mod:`replicator.formats.debezium_schema`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from replicator import __version__
from replicator.events import OP_DELETE, Checkpoint, DdlChange, Message
from replicator.formats.base import FormatOptions
from replicator.formats.debezium_schema import (
    SCHEMA_CHANGE_FIELDS,
    SOURCE_FIELDS,
    TRANSACTION_FIELDS,
    TXN_METADATA_FIELDS,
    Schema,
    column_field,
    field,
    render,
    row,
    struct,
    table_change,
)
from replicator.formats.framework import (
    Clock,
    EventFormat,
    Position,
    TxnContext,
    ddl_table,
    dumps,
)
from replicator.formats.rowvalues import RowValues, TableView
from replicator.formats.typemap import ddl_kind
from replicator.values.rowid import rowid_text

_SOURCE = struct("io.debezium.connector.oracle.Source", SOURCE_FIELDS, False, "source")
TXN_SCHEMA = struct("io.debezium.connector.common.TransactionMetadataValue", TXN_METADATA_FIELDS)
_DDL_SCHEMA = struct(
    "io.debezium.connector.oracle.SchemaChangeValue", [_SOURCE, field("ts_ms", "int64", False), *SCHEMA_CHANGE_FIELDS]
)
_TABLE_CHANGE_TYPES = {"CREATE": "CREATE", "ERASE": "DROP"}
_HEARTBEAT = struct("io.debezium.connector.common.Heartbeat", [field("ts_ms", "int64", False)])
HEARTBEAT_TOPIC_PREFIX = "__debezium-heartbeat"  # Debezium's heartbeat.topics.prefix default


class DebeziumFormat(EventFormat):
    """Debezium change events in ``mode`` envelope, flatten or smt."""

    def __init__(self, options: FormatOptions, clock: Clock | None = None, *, mode: str = "envelope"):
        super().__init__(options, clock)
        self.mode = mode
        self.server = options.database or "replicator"
        self._schemas: dict[int, tuple[TableView, Schema, Schema | None]] = {}
        self.orders: Counter[str] = Counter()  # events per data collection, this transaction
        self.orders_of: TxnContext | None = None
        self.binary = options.binary_handling_mode
        self.tombstones = bool(options.tombstones_on_delete) and mode != "smt"

    # -- envelope helpers --------------------------------------------------------------------

    def render_value(self, schema: Schema, payload: dict[str, Any]) -> bytes:
        return dumps({"schema": schema, "payload": payload} if self.mode == "envelope" else payload)

    def render_key(self, name: str, fields: list[Schema], payload: dict[str, Any]) -> bytes:
        return self.render_value(struct(name, fields), payload)

    def _source(
        self,
        ctx: TxnContext | None,
        pos: Position,
        ts: int,
        scn: int,
        owner: str = "",
        table: str = "",
        row_id: str | None = None,
    ) -> dict[str, Any]:
        txn = ctx.txn if ctx is not None else None
        return {
            "version": __version__,
            "connector": "oracle",
            "name": self.server,
            "ts_ms": ts * 1000,
            "snapshot": "false",
            "db": ctx.db if ctx is not None else self.options.con_name or self.server,
            "schema": owner,
            "table": table,
            "txId": ctx.xid if ctx is not None else None,
            "scn": str(scn),
            "commit_scn": str(txn.commit_scn) if txn is not None else None,
            "redo_thread": txn.thread if txn is not None else None,
            "user_name": ctx.user if ctx is not None else None,
            "row_id": row_id,
            "server_id": txn.thread if txn is not None else None,
            "pos": pos.text,
        }

    def table_schemas(self, view: TableView) -> tuple[Schema, Schema | None]:
        cached = self._schemas.get(id(view))
        if cached is None or cached[0] is not view:
            prefix = f"{self.server}.{view.owner}.{view.name}"
            columns = [column_field(c, self.binary) for c in view.columns]
            value = struct(
                f"{prefix}.Envelope",
                [
                    struct(f"{prefix}.Value", columns, True, "before"),
                    struct(f"{prefix}.Value", columns, True, "after"),
                    _SOURCE,
                    field("op", "string", False),
                    field("ts_ms", "int64"),
                    struct("event.block", TRANSACTION_FIELDS, True, "transaction"),
                ],
            )
            key = struct(f"{prefix}.Key", [column_field(k, self.binary) for k in view.keys]) if view.keys else None
            cached = self._schemas[id(view)] = (view, value, key)
        return cached[1], cached[2]

    # -- hooks -------------------------------------------------------------------------------

    def on_begin(self, ctx: TxnContext, pos: Position) -> list[Message]:
        """Transaction metadata BEGIN (not in smt mode)."""
        if self.mode == "smt":
            return []
        payload = {
            "status": "BEGIN",
            "id": ctx.xid,
            "event_count": None,
            "data_collections": None,
            "ts_ms": ctx.txn.begin_time * 1000,
        }
        return [self._txn_message(ctx, pos, payload)]

    def on_commit(self, ctx: TxnContext, pos: Position) -> list[Message]:
        """Transaction metadata END with the event count per data collection."""
        if self.mode == "smt":
            return []
        orders = self.orders if self.orders_of is ctx else Counter[str]()
        collections = [{"data_collection": name, "event_count": count} for name, count in orders.items()]
        payload = {
            "status": "END",
            "id": ctx.xid,
            "event_count": sum(orders.values()),
            "data_collections": collections,
            "ts_ms": ctx.txn.commit_time * 1000,
        }
        return [self._txn_message(ctx, pos, payload)]

    def _txn_message(self, ctx: TxnContext, pos: Position, payload: dict[str, Any]) -> Message:
        key = self.render_key(
            "io.debezium.connector.common.TransactionMetadataKey", [field("id", "string", False)], {"id": ctx.xid}
        )
        return self.message(self.render_value(TXN_SCHEMA, payload), pos, ctx, key=key)

    def on_row(self, ctx: TxnContext, pos: Position, values: RowValues) -> list[Message]:
        """One change event per row."""
        view, change = values.view, values.change
        collection = f"{ctx.db}.{view.owner}.{view.name}"
        if self.orders_of is not ctx:
            self.orders_of = ctx
            self.orders.clear()
        self.orders[collection] += 1
        value_schema, key_schema = self.table_schemas(view)
        key = None
        if key_schema is not None:
            key_payload = {k.name: render(k, values.current.get(k.index), self.binary) for k in view.keys}
            key = self.render_value(key_schema, key_payload)
        if self.mode == "smt":
            payload = row(view, values.current, self.binary) or {}
            payload["__deleted"] = "true" if change.op == OP_DELETE else "false"
            headers = [
                ("__op", change.op.encode()),
                ("__db", ctx.db.encode()),
                ("__schema", view.owner.encode()),
                ("__table", view.name.encode()),
                ("__source_ts_ms", str(change.time * 1000).encode()),
            ]
            return [self.message(dumps(payload), pos, ctx, key=key, table=change.table, headers=headers)]
        rid = rowid_text(change.data_obj, change.bdba, change.slot)
        payload = {
            "op": change.op,
            "source": self._source(ctx, pos, change.time, change.scn, view.owner, view.name, rid),
            "before": row(view, values.before, self.binary),
            "after": row(view, values.after, self.binary),
            "ts_ms": self.now_ms(),
            "transaction": {
                "id": ctx.xid,
                "total_order": sum(self.orders.values()),
                "data_collection_order": self.orders[collection],
            },
        }
        out = [self.message(self.render_value(value_schema, payload), pos, ctx, key=key, table=change.table)]
        if change.op == OP_DELETE and self.tombstones and key is not None:
            # Debezium's tombstone: same key, null value, so log compaction drops the row.
            # Without a key there is nothing to compact (and compacted topics refuse it).
            tombstone = self.message(b"", pos, ctx, key=key, table=change.table)
            tombstone.tombstone = True
            out.append(tombstone)
        return out

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """A schema change event (not in smt mode)."""
        if self.mode == "smt":
            return []
        table = ddl_table(change)
        changes = []
        if change.table is not None:
            kind = _TABLE_CHANGE_TYPES.get(ddl_kind(change.sql).canal, "ALTER")
            changes.append(table_change(self.table_view(change.table), kind, ctx.db))
        payload = {
            "source": self._source(ctx, pos, change.time, change.scn, change.owner, table),
            "ts_ms": self.now_ms(),
            "databaseName": ctx.db,
            "schemaName": change.owner,
            "ddl": change.sql,
            "tableChanges": changes,
        }
        key = self.render_key(
            "io.debezium.connector.oracle.SchemaChangeKey",
            [field("databaseName", "string", False)],
            {"databaseName": ctx.db},
        )
        return [self.message(self.render_value(_DDL_SCHEMA, payload), pos, ctx, key=key)]

    def on_checkpoint(self, cp: Checkpoint, pos: Position) -> list[Message]:
        """Debezium's heartbeat (not in smt mode): ``{"ts_ms":…}`` on the heartbeat topic."""
        if self.mode == "smt":
            return []
        key = self.render_key(
            "io.debezium.connector.common.ServerNameKey",
            [field("serverName", "string", False)],
            {"serverName": self.server},
        )
        message = self.message(self.render_value(_HEARTBEAT, {"ts_ms": self.now_ms()}), pos, key=key, seq=cp.seq)
        message.topic = f"{HEARTBEAT_TOPIC_PREFIX}.{self.server}"
        return [message]
