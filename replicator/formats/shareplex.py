"""SharePlex JSON (format type ``shareplex``), with the fields of both OMS and DTS.

One message per row change or DDL::

    {"data":{…},"meta":{"time":"2026-03-07T01:44:40","userid":136,"op":"upd","scn":"2267712",
     "rowid":"AAARwWAAHAAAAFrAAA","trans":"10.12.572","seq":1,"size":3,"table":"OWNER.T",
     "idx":"1/3","posttime":"2026-03-07T01:45:00"},"key":{…}}

``data`` is the full row for INSERT and DELETE and only the changed columns (new values) for
UPDATE; ``key`` exists for UPDATE only and holds the row before the change (every column
the redo has), as in DTS's example. ``rowid`` is the Oracle ROWID, as SharePlex and DTS
print it (OMS's MySQL-oriented "table-pk" text has no meaning for Oracle). ``time`` is the
change time and ``posttime`` the processing time, both UTC without a zone suffix as in the
examples; ``seq``/``size``/``idx`` number the change within the transaction's printable
changes. ``userid`` is the committing session's Oracle user number (SYS.USER$.USER#, the
"logon user" of the transaction's first undo record, as DTS's example shows a number), null
when the redo did not show it. DDL records have
an empty ``data``, ``op`` "ddl" and the statement in ``sql.ddl``. SharePlex has no begin,
commit or heartbeat records.
"""

from __future__ import annotations

from typing import Any

import orjson

from replicator.events import OP_DELETE, OP_INSERT, OP_UPDATE, DdlChange, Message
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
from replicator.formats.rowvalues import RowValues
from replicator.formats.textvalues import TextValues
from replicator.values.datetime import epoch_to_iso
from replicator.values.rowid import rowid_text

OPS = {OP_INSERT: "ins", OP_UPDATE: "upd", OP_DELETE: "del"}


class SharePlexFormat(EventFormat, NativeRowFormat):
    """SharePlex JSON records."""

    def __init__(self, options: FormatOptions, clock: Clock | None = None):
        super().__init__(options, clock)
        self.values = TextValues()

    def _meta(self, ctx: TxnContext, op: str, time: int, scn: int, rowid: str, table: str) -> dict[str, object]:
        seq = ctx.number + 1
        return {
            "time": epoch_to_iso(time, True, False),
            "userid": ctx.txn.logon_user if ctx.txn.logon_user >= 0 else None,
            "op": op,
            "scn": str(scn),
            "rowid": rowid,
            "trans": ctx.xid,
            "seq": seq,
            "size": ctx.total,
            "table": table,
            "idx": f"{seq}/{ctx.total}",
            "posttime": epoch_to_iso(self.now_ms() // 1000, True, False),
        }

    def on_row(self, ctx: TxnContext, pos: Position, row: RowValues) -> list[Message]:
        """One record per row change."""
        view, change = row.view, row.change
        if row.op == OP_UPDATE:
            data = self.values.row(view, row.after or {}, row.modified)
        else:
            data = self.values.row(view, row.current)
        rowid = rowid_text(change.data_obj, change.bdba, change.slot)
        record: dict[str, object] = {
            "data": data,
            "meta": self._meta(ctx, OPS[row.op], change.time, change.scn, rowid, f"{view.owner}.{view.name}"),
        }
        if row.op == OP_UPDATE:
            record["key"] = self.values.row(view, row.before or {})
        return [self.message(dumps(record), pos, ctx, key=self.tag_key(row, self.values.render), table=change.table)]

    def on_native_row(self, ctx: TxnContext, pos: Position, rows: Any, r: int) -> list[Message]:
        """:meth:`on_row` for row ``r`` of a natively decoded transaction (replicator.native
        RowImages; its tables have no `tag` columns): the same bytes, images rendered in C."""
        view, op = rows.view(r), rows.op(r)
        update = op == OP_UPDATE
        data = rows.json(r, 0 if op == OP_DELETE else 1, self.values, update)
        record: dict[str, object] = {
            "data": orjson.Fragment(data),
            "meta": self._meta(ctx, OPS[op], rows.time(r), rows.scn(r), rows.rowid(r), f"{view.owner}.{view.name}"),
        }
        if update:
            record["key"] = orjson.Fragment(rows.json(r, 0, self.values))
        return [self.message(dumps(record), pos, ctx, table=rows.table(r))]

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """A DDL record: empty data, the statement in ``sql.ddl``."""
        table = ddl_table(change)
        record = {
            "data": {},
            "meta": self._meta(ctx, "ddl", change.time, change.scn, "", f"{change.owner}.{table}"),
            "sql": {"ddl": change.sql},
        }
        return [self.message(dumps(record), pos, ctx)]
