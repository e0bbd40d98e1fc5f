"""Canal flat JSON (format type ``canal``), as OMS and DTS deliver it to Kafka.

One message per row change or DDL, with OMS's field list plus DTS's ``id`` and ``gtid``::

    {"database":"OWNER","sqlType":{"ID":2,…},"data":[{…}],"pkNames":["ID"],"old":[{…}]|null,
     "mysqlType":{"ID":"decimal",…},"type":"UPDATE","table":"T","es":<ms>,"isDdl":false,
     "ts":<ms>,"sql":"","id":<serial>,"gtid":"usn.slot.sqn"}

Values are strings, as in Canal itself and DTS (NULL stays null). ``data`` holds the row after
the change, and the deleted row for DELETE (the open-source Canal layout DTS switched to in
2022); ``old`` exists for UPDATE only and holds the previous values of the columns the
statement changed. ``sqlType`` uses java.sql.Types codes, ``mysqlType`` bare MySQL type names
(docs/formats.md §2). ``es`` is the change time, ``ts`` the processing time, ``id`` the
serial of the stream position. DDL messages carry the statement in ``sql`` and the Canal
event type (CREATE, ALTER, ERASE, TRUNCATE, RENAME, CINDEX, DINDEX, QUERY) in ``type``.
Canal has no begin, commit or heartbeat messages.
"""

from __future__ import annotations

from typing import Any

import orjson

from replicator.events import OP_DELETE, OP_UPDATE, DdlChange, Message
from replicator.formats.base import FormatOptions
from replicator.formats.capabilities import NativeRowFormat
from replicator.formats.framework import (
    Clock,
    EventFormat,
    Position,
    TxnContext,
    ddl_table,
    dumps,
)
from replicator.formats.oms_default import RECORD_TYPES
from replicator.formats.rowvalues import RowValues, TableView
from replicator.formats.textvalues import TextValues
from replicator.formats.typemap import CANAL_TYPES, ddl_kind


class CanalFormat(EventFormat, NativeRowFormat):
    """Canal flat messages."""

    def __init__(self, options: FormatOptions, clock: Clock | None = None):
        super().__init__(options, clock)
        self.values = TextValues(quote_all=True, booleans="str")
        self._type_cache: dict[int, tuple[TableView, orjson.Fragment, list[str] | None, orjson.Fragment]] = {}

    def on_row(self, ctx: TxnContext, pos: Position, row: RowValues) -> list[Message]:
        """One flat message per row change."""
        view = row.view
        data = self.values.row(view, row.current)
        old = None
        if row.before is not None and row.after is not None:
            old = [self.values.row(view, row.before, row.modified)]
        record = self._record(view, row.op, data, old, row.change.time, ctx, pos)
        return [
            self.message(dumps(record), pos, ctx, key=self.tag_key(row, self.values.render), table=row.change.table)
        ]

    def on_native_row(self, ctx: TxnContext, pos: Position, rows: Any, r: int) -> list[Message]:
        """:meth:`on_row` for row ``r`` of a natively decoded transaction (replicator.native
        RowImages; its tables have no `tag` columns): the same bytes, images rendered in C."""
        view, op = rows.view(r), rows.op(r)
        data = orjson.Fragment(rows.json(r, 0 if op == OP_DELETE else 1, self.values))
        old = [orjson.Fragment(rows.json(r, 0, self.values, True))] if op == OP_UPDATE else None
        record = self._record(view, op, data, old, rows.time(r), ctx, pos)
        return [self.message(dumps(record), pos, ctx, table=rows.table(r))]

    def _record(
        self, view: TableView, op: str, data: object, old: object, time: int, ctx: TxnContext, pos: Position
    ) -> dict[str, object]:
        sql_types, pk_names, mysql_types = self._types(view)
        return {
            "database": view.owner,
            "sqlType": sql_types,
            "data": [data],
            "pkNames": pk_names,
            "old": old,
            "mysqlType": mysql_types,
            "type": RECORD_TYPES[op],
            "table": view.name,
            "es": time * 1000,
            "isDdl": False,
            "ts": self.now_ms(),
            "sql": "",
            "id": pos.serial,
            "gtid": ctx.xid,
        }

    def _types(self, view: TableView) -> tuple[orjson.Fragment, list[str] | None, orjson.Fragment]:
        """sqlType, pkNames and mysqlType of a table, rendered once per table view."""
        cached = self._type_cache.get(id(view))
        if cached is None or cached[0] is not view:
            cached = self._type_cache[id(view)] = (
                view,
                orjson.Fragment(dumps({c.name: CANAL_TYPES[c.otype.family][0] for c in view.columns})),
                [c.name for c in view.keys] or None,
                orjson.Fragment(dumps({c.name: CANAL_TYPES[c.otype.family][1] for c in view.columns})),
            )
        return cached[1], cached[2], cached[3]

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """A DDL message: no column data, the statement in ``sql``."""
        record = {
            "database": change.owner,
            "sqlType": None,
            "data": None,
            "pkNames": None,
            "old": None,
            "mysqlType": None,
            "type": ddl_kind(change.sql).canal,
            "table": ddl_table(change),
            "es": change.time * 1000,
            "isDdl": True,
            "ts": self.now_ms(),
            "sql": change.sql,
            "id": pos.serial,
            "gtid": ctx.xid,
        }
        return [self.message(dumps(record), pos, ctx)]
