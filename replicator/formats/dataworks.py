"""DataWorks 2.0 JSON (format type ``dataworks``), as OMS documents it.

Every record has ``version``, ``schema`` (source, column list, primary key), ``payload`` and
``extend``::

    {"version":"2.0","schema":{"source":{"dbType":"oracle","dbVersion":null,"dbName":"FREEPDB1",
     "schema":"OWNER","table":"T"},"column":[{"name":"ID","type":"INT64"},…],"pk":["ID"]},
     "payload":{"before":null,"after":{"data":{…}},"op":"INSERT","timestamp":{"eventTime":<ms>,
     "systemTime":<ms>,"checkpointTime":<s>},"ddl":null,"scn":"226771400001"},"extend":{}}

Oracle mapping (docs/formats.md §4.3): ``dbName`` is the container (else the source name),
``schema`` the owner; column types are OMS light types; ``eventTime`` is the change time,
``checkpointTime`` the transaction's begin time (the safe restart point), ``scn`` OMS's
"auto-incremented ID" for sorting: the commit SCN followed by five digits of the record's
number in its transaction (begin 0, changes 1…, end last), strictly increasing over the
stream and the same after a restart (:class:`~replicator.formats.framework.StreamSequence`). ``pk`` is left out for a table
without a primary key, as DataWorks allows. DataWorks has transaction records
(TRANSACTION_BEGIN/TRANSACTION_END), DDL records whose ``op`` is the statement kind (CREATE,
ALTER, ERASE, TRUNCATE, RENAME, CINDEX, DINDEX, QUERY) with ``ddl.text``, and the short
HEARTBEAT record, which checkpoints become.
"""

from __future__ import annotations

from typing import Any

import orjson

from replicator.events import Checkpoint, DdlChange, Message
from replicator.formats.base import FormatOptions
from replicator.formats.capabilities import NativeRowFormat
from replicator.formats.framework import (
    Clock,
    EventFormat,
    Position,
    StreamSequence,
    TxnContext,
    ddl_table,
    dumps,
)
from replicator.formats.oms_default import RECORD_TYPES
from replicator.formats.rowvalues import RowValues, TableView
from replicator.formats.textvalues import TextValues
from replicator.formats.typemap import OMS_TYPES, ddl_kind


class DataWorksFormat(EventFormat, NativeRowFormat):
    """DataWorks 2.0 records."""

    begin_op, commit_op = "TRANSACTION_BEGIN", "TRANSACTION_END"

    def __init__(self, options: FormatOptions, clock: Clock | None = None):
        super().__init__(options, clock)
        self.values = TextValues()
        self._sequence = StreamSequence()
        self._columns: dict[int, tuple[TableView, orjson.Fragment, list[str]]] = {}

    def _record(
        self,
        source: dict[str, object],
        columns: orjson.Fragment | None,  # the table's column list, rendered once per table view
        pk: list[str] | None,
        payload: dict[str, object],
        with_pk: bool = True,
    ) -> bytes:
        schema: dict[str, object] = {"source": source, "column": columns}
        if with_pk:
            schema["pk"] = pk
        return dumps({"version": "2.0", "schema": schema, "payload": payload, "extend": {}})

    @staticmethod
    def _source(ctx: TxnContext, owner: str | None, table: str | None) -> dict[str, object]:
        return {"dbType": "oracle", "dbVersion": None, "dbName": ctx.db, "schema": owner, "table": table}

    def _payload(
        self,
        op: str,
        event_ms: int,
        ctx: TxnContext,
        number: int,
        before: object = None,
        after: object = None,
        ddl: object = None,
    ) -> dict[str, object]:
        timestamp = {"eventTime": event_ms, "systemTime": self.now_ms(), "checkpointTime": ctx.txn.begin_time}
        scn = self._sequence.next(ctx.txn.commit_scn, number)
        return {"before": before, "after": after, "op": op, "timestamp": timestamp, "ddl": ddl, "scn": str(scn)}

    def transaction_record(self, ctx: TxnContext, pos: Position, op: str, time: int, scn: int) -> list[Message]:
        """TRANSACTION_BEGIN/TRANSACTION_END at the begin/commit SCN and time."""
        data = self._record(
            self._source(ctx, None, None),
            None,
            None,
            self._payload(op, time * 1000, ctx, 0 if op == self.begin_op else ctx.total + 1),
        )
        return [self.message(data, pos, ctx)]

    def on_row(self, ctx: TxnContext, pos: Position, row: RowValues) -> list[Message]:
        """A data record with the table's column list."""
        view, change = row.view, row.change
        payload = self._payload(
            RECORD_TYPES[row.op],
            change.time * 1000,
            ctx,
            ctx.number + 1,
            before=self._image(view, row.before),
            after=self._image(view, row.after),
        )
        return [
            self.message(
                self._row_record(ctx, view, payload),
                pos,
                ctx,
                key=self.tag_key(row, self.values.render),
                table=change.table,
            )
        ]

    def on_native_row(self, ctx: TxnContext, pos: Position, rows: Any, r: int) -> list[Message]:
        """:meth:`on_row` for row ``r`` of a natively decoded transaction (replicator.native
        RowImages; its tables have no `tag` columns): the same bytes, images rendered in C."""
        view = rows.view(r)
        images = [
            {"data": orjson.Fragment(rows.json(r, side, self.values))} if rows.has_image(r, side) else None
            for side in (0, 1)
        ]
        payload = self._payload(
            RECORD_TYPES[rows.op(r)], rows.time(r) * 1000, ctx, ctx.number + 1, before=images[0], after=images[1]
        )
        return [self.message(self._row_record(ctx, view, payload), pos, ctx, table=rows.table(r))]

    def _row_record(self, ctx: TxnContext, view: TableView, payload: dict[str, object]) -> bytes:
        cached = self._columns.get(id(view))
        if cached is None or cached[0] is not view:  # the column list, rendered once per table view
            cached = self._columns[id(view)] = (
                view,
                orjson.Fragment(dumps([{"name": c.name, "type": OMS_TYPES[c.otype.family]} for c in view.columns])),
                [c.name for c in view.keys],
            )
        keys = cached[2]
        return self._record(self._source(ctx, view.owner, view.name), cached[1], keys, payload, with_pk=bool(keys))

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """A DDL record: ``op`` is the statement kind, ``ddl.text`` the statement."""
        table = ddl_table(change)
        payload = self._payload(
            ddl_kind(change.sql).canal, change.time * 1000, ctx, ctx.number + 1, ddl={"text": change.sql}
        )
        data = self._record(self._source(ctx, change.owner, table), None, None, payload)
        return [self.message(data, pos, ctx)]

    def on_checkpoint(self, cp: Checkpoint, pos: Position) -> list[Message]:
        """The heartbeat record DataWorks defines: version, op and the event time only."""
        data = dumps({"version": "2.0", "payload": {"timestamp": {"eventTime": cp.time * 1000}, "op": "HEARTBEAT"}})
        return [self.message(data, pos, seq=cp.seq)]

    def _image(self, view: TableView, image: dict | None) -> dict[str, object] | None:
        return None if image is None else {"data": self.values.row(view, image)}
