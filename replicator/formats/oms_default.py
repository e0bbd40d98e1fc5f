"""OceanBase Migration Service "Default" JSON and "DefaultExtendColumnType" (oms-default, oms-extended).

One message per row change, DDL and heartbeat (checkpoint)::

    {"prevStruct":{…}|null,"postStruct":{…}|null,"allMetaData":{…},"recordType":"INSERT"}

``prevStruct`` is the before image (UPDATE, DELETE), ``postStruct`` the after image (INSERT,
UPDATE) or ``{"ddl":"<statement>"}``; both are null in a HEARTBEAT. ``allMetaData`` maps the
Oracle facts onto OMS's fields (docs/formats.md §4.1): ``checkpoint`` = transaction begin time
in seconds (the safe restart point), ``db`` = owner (OMS's database is Oracle's schema),
``timestamp`` = change time in seconds, ``transId`` = ``usn.slot.sqn``, ``uniqueId`` =
``c_scn:c_idx``, ``storeDataSequence`` = the commit SCN followed by five digits of the
event's number in its transaction, strictly increasing over the stream and the same after a
restart (:class:`~replicator.formats.framework.StreamSequence`). ``clusterId`` does not exist for Oracle (OMS says so) and is left out; ``ddlType``
appears in DDL records. OMS has no begin/commit records.

``oms-extended`` adds ``"__light_type":{"COL":{"schemaType":"INT64"},…}`` to each non-null
image (the DDL column ``ddl`` is ``VAR_STRING``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from replicator.events import OP_DELETE, OP_INSERT, OP_UPDATE, Checkpoint, DdlChange, Message
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
    native_avro,
)
from replicator.formats.rowvalues import ColumnView, RowValues, TableView, Value
from replicator.formats.textvalues import TextValues
from replicator.formats.typemap import OMS_TYPES, ddl_kind

RECORD_TYPES = {OP_INSERT: "INSERT", OP_UPDATE: "UPDATE", OP_DELETE: "DELETE"}
_KEY_SEPARATOR = "\u0001"
# allMetaData in OMS's order; clusterId does not exist for Oracle sources.
_META_FIELDS = (
    "checkpoint",
    "record_primary_key",
    "record_primary_value",
    "source_identity",
    "dbType",
    "storeDataSequence",
    "table_name",
    "db",
    "timestamp",
    "uniqueId",
    "transId",
)


def _meta(**values: object) -> dict[str, object]:
    """allMetaData: every OMS field (null unless given), ``ddlType`` only when given."""
    meta: dict[str, object] = dict.fromkeys(_META_FIELDS)
    meta["dbType"] = "ORACLE"
    meta.update(values)
    return meta


class OmsDefaultFormat(EventFormat, NativeRowFormat):
    """OMS Default JSON; ``extended`` turns it into DefaultExtendColumnType."""

    def __init__(self, options: FormatOptions, clock: Clock | None = None, *, extended: bool = False):
        super().__init__(options, clock)
        self.extended = extended
        self.values = TextValues()
        self._key_text = TextValues(quote_all=True)
        self._sequence = StreamSequence()
        # table view id -> (view, present_json, "NAME":{"schemaType":…} per column): oms-extended native rows
        self._light: dict[int, tuple[TableView, Any, list[bytes]]] = {}

    def on_row(self, ctx: TxnContext, pos: Position, row: RowValues) -> list[Message]:
        """One record per row change."""
        view, change = row.view, row.change
        current = row.current
        record = self._row_record(
            ctx,
            pos,
            view,
            row.op,
            change.time,
            lambda c: current.get(c.index),
            self._image(view, row.before),
            self._image(view, row.after),
        )
        return [self.message(dumps(record), pos, ctx, key=self.tag_key(row, self.values.render), table=change.table)]

    def on_native_row(self, ctx: TxnContext, pos: Position, rows: Any, r: int) -> list[Message]:
        """:meth:`on_row` for row ``r`` of a natively decoded transaction (replicator.native
        RowImages; its tables have no `tag` columns): the same bytes, images rendered in C."""
        view, op = rows.view(r), rows.op(r)
        side = 0 if op == OP_DELETE else 1
        images = [
            orjson.Fragment(self._native_image(rows, r, s, view)) if rows.has_image(r, s) else None for s in (0, 1)
        ]
        record = self._row_record(
            ctx, pos, view, op, rows.time(r), lambda c: rows.get(r, side, c.ordinal - 1), images[0], images[1]
        )
        return [self.message(dumps(record), pos, ctx, table=rows.table(r))]

    def _native_image(self, rows: Any, r: int, side: int, view: TableView) -> bytes:
        """One image's JSON object; DefaultExtendColumnType appends ``__light_type`` for the
        columns the image holds (rendered in C from per-table fragments)."""
        struct = rows.json(r, side, self.values)
        if not self.extended:
            return struct
        cached = self._light.get(id(view))
        if cached is None or cached[0] is not view:
            cached = self._light[id(view)] = (
                view,
                native_avro().present_json,
                [dumps(c.name) + b':{"schemaType":' + dumps(OMS_TYPES[c.otype.family]) + b"}" for c in view.columns],
            )
        light = cached[1](rows, r, side, cached[2])
        return struct[:-1] + (b',"__light_type":' if len(struct) > 2 else b'"__light_type":') + light + b"}"

    def _row_record(
        self,
        ctx: TxnContext,
        pos: Position,
        view: TableView,
        op: str,
        time: int,
        key_value: Callable[[ColumnView], Value],
        before: object,
        after: object,
    ) -> dict[str, object]:
        keys = view.keys
        meta = _meta(
            checkpoint=str(ctx.txn.begin_time),
            record_primary_key=_KEY_SEPARATOR.join(c.name for c in keys) if keys else None,
            record_primary_value=(
                _KEY_SEPARATOR.join(self._key_value(c, key_value(c)) for c in keys) if keys else None
            ),
            storeDataSequence=self._sequence.next(ctx.txn.commit_scn, ctx.number + 1),
            table_name=view.name,
            db=view.owner,
            timestamp=str(time),
            uniqueId=pos.text,
            transId=ctx.xid,
        )
        return {"prevStruct": before, "postStruct": after, "allMetaData": meta, "recordType": RECORD_TYPES[op]}

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """A DDL record: ``postStruct`` holds the statement."""
        post: dict[str, object] = {"ddl": change.sql}
        if self.extended:
            post["__light_type"] = {"ddl": {"schemaType": "VAR_STRING"}}
        table = ddl_table(change)
        meta = _meta(
            checkpoint=str(ctx.txn.begin_time),
            table_name=table,
            db=change.owner,
            storeDataSequence=self._sequence.next(ctx.txn.commit_scn, ctx.number + 1),
            timestamp=str(change.time),
            uniqueId=pos.text,
            transId=ctx.xid,
            ddlType=ddl_kind(change.sql).oms,
        )
        record = {"prevStruct": None, "postStruct": post, "allMetaData": meta, "recordType": "DDL"}
        return [self.message(dumps(record), pos, ctx)]

    def on_checkpoint(self, cp: Checkpoint, pos: Position) -> list[Message]:
        """A HEARTBEAT record: no images, the checkpoint time as OMS's checkpoint."""
        meta = _meta(checkpoint=str(cp.time), timestamp=str(cp.time), uniqueId=pos.text)
        record = {"prevStruct": None, "postStruct": None, "allMetaData": meta, "recordType": "HEARTBEAT"}
        return [self.message(dumps(record), pos, seq=cp.seq)]

    def _image(self, view: TableView, image: dict[int, Value] | None) -> dict[str, object] | None:
        if image is None:
            return None
        struct = self.values.row(view, image)
        if self.extended:
            struct["__light_type"] = {
                c.name: {"schemaType": OMS_TYPES[c.otype.family]} for c in view.columns if c.index in image
            }
        return struct

    def _key_value(self, column: ColumnView, value: Value) -> str:
        text = self._key_text.render(column, value)
        return "" if text is None else str(text)
