"""Qlik Replicate Kafka/MSK JSON messages (format type ``qlik``).

Every message is a Replicate envelope ``{"magic":"atMSG","type":…,"headers":null,
"messageSchemaId":null,"messageSchema":null,"message":{…}}``:

* ``DT`` data messages, one per row change: ``message`` = ``{"data":{…},"beforeData":{…}|null,
  "headers":{operation, changeSequence, timestamp, streamPosition, transactionId, changeMask,
  columnMask, externalSchemaId, transactionEventCounter, transactionLastEvent}}``. ``data`` is
  the row after the change (the deleted row for DELETE), ``beforeData`` the row before an
  UPDATE. Masks: :mod:`replicator.formats.masks`.
* ``MD`` metadata messages, sent ahead of a table's first data message and again when its
  structure changes (a DDL): ``schemaId``, ``lineage`` (server, task, schema, table,
  tableVersion, timestamp), ``tableStructure.tableColumns`` (ordinal, type, length,
  precision, scale, primaryKeyPosition per column) and ``dataSchema`` (null: JSON messages).
  The ordinals there are the mask bit positions.

Oracle mapping (docs/formats.md §3): ``changeSequence`` has Qlik's 35 characters,
``YYYYMMDDHHmmSShh`` (the commit time; Oracle's is whole seconds, so ``hh`` is ``00``) and a
19-digit counter: the commit SCN's low 10 digits and the event number in the transaction
(9 digits), so it sorts as text in commit order; ``timestamp`` the change time (UTC, ms);
``streamPosition`` ``<change SCN hex>.<thread>:<c_scn>.<c_idx>``; ``transactionId`` the XID
in LogMiner RAW order (16 hex digits) left-padded with zeros to Qlik's 32; ``externalSchemaId`` the ``schemaId`` of the table's
metadata message. Qlik has no begin, commit, DDL or heartbeat data messages. The Kafka key is
``OWNER.TABLE`` (Qlik's "schema and table name" key), or the filter's `tag` when set.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from typing import Any

import orjson

from replicator.events import OP_DELETE, OP_UPDATE, DdlChange, Message, RowChange, Table
from replicator.formats.base import FormatOptions
from replicator.formats.capabilities import NativeRowFormat
from replicator.formats.framework import Clock, EventFormat, Position, TxnContext, dumps
from replicator.formats.masks import change_mask, column_mask
from replicator.formats.oms_default import RECORD_TYPES
from replicator.formats.rowvalues import RowValues, TableView
from replicator.formats.textvalues import TextValues
from replicator.formats.typemap import QLIK_TYPES
from replicator.values.datetime import epoch_to_iso

_ENVELOPE = {"magic": "atMSG", "type": "", "headers": None, "messageSchemaId": None, "messageSchema": None}


SEQUENCE_SCN_DIGITS = 10  # low digits of the commit SCN in changeSequence's counter
SEQUENCE_EVENT_DIGITS = 9  # event number in the transaction; 10 + 9 = Qlik's 19 digits


def transaction_id(xid: int) -> str:
    """Qlik's 32 hex digits: the XID in LogMiner RAW order (usn, slot: 2 bytes each, sqn: 4,
    little-endian) right-aligned, as Qlik's Oracle messages pad it
    (``00000000000000000000000000060008``)."""
    raw = struct.pack("<HHI", xid >> 48, (xid >> 32) & 0xFFFF, xid & 0xFFFFFFFF).hex().upper()
    return raw.rjust(32, "0")


def change_sequence(commit_time: int, commit_scn: int, number: int) -> str:
    """``YYYYMMDDHHmmSShh`` + 19 digits (see the module docstring): 35 characters.

    Across seconds the time orders; within one second the commit SCNs differ by far less than
    10**10, so their low digits keep the order (a wrap of those digits inside the very second
    is the one case that would not).
    """
    stamp = epoch_to_iso(commit_time, False, False).replace("-", "").replace(":", "").replace(" ", "")
    counter = (commit_scn % 10**SEQUENCE_SCN_DIGITS) * 10**SEQUENCE_EVENT_DIGITS + min(
        number, 10**SEQUENCE_EVENT_DIGITS - 1
    )
    return f"{stamp}00{counter:019d}"


def table_structure(view: TableView) -> dict[str, dict[str, int | str]]:
    """``tableColumns``: ordinal, Qlik type, length, precision, scale and key position."""
    keys = {k.index: n for n, k in enumerate(view.keys, 1)}
    return {
        c.name: {
            "ordinal": c.ordinal,
            "type": QLIK_TYPES[c.otype.family],
            "length": c.column.length,
            "precision": max(c.otype.precision, 0),
            "scale": max(c.otype.scale, 0),
            "primaryKeyPosition": keys.get(c.index, 0),
        }
        for c in view.columns
    }


class QlikFormat(EventFormat, NativeRowFormat):
    """Qlik Replicate envelope messages: DT per row, MD per table structure."""

    def __init__(self, options: FormatOptions, clock: Clock | None = None):
        super().__init__(options, clock)
        self.values = TextValues(quote_decimals=True, booleans="bool")
        self._sent: dict[int, tuple[str, int]] = {}  # obj -> (schemaId, tableVersion)
        self._events_of: TxnContext | None = None  # the transaction the counters below are for
        self._events = 0
        self._last_row = -1
        self._structures: dict[int, tuple[TableView, dict[str, dict[str, int | str]], str]] = {}

    def _envelope(self, kind: str, message: Mapping[str, object]) -> bytes:
        return dumps({**_ENVELOPE, "type": kind, "message": message})

    def _key(self, view: TableView, row: RowValues | None = None) -> bytes:
        tag = self.tag_key(row, self.values.render) if row is not None else None
        return tag if tag is not None else f"{view.owner}.{view.name}".encode()

    def _metadata(self, ctx: TxnContext, pos: Position, view: TableView) -> list[Message]:
        """An MD message when the table's structure is new to this process, else nothing.

        Ahead of a data message it takes the previous position (``aux_position``); for a DDL
        it is the event's own message.
        """
        cached = self._structures.get(id(view))
        if cached is None or cached[0] is not view:  # once per table view, not per row
            structure = table_structure(view)
            cached = self._structures[id(view)] = (
                view,
                structure,
                hashlib.sha1(dumps([view.owner, view.name, structure])).hexdigest()[:32],
            )
        structure, digest = cached[1], cached[2]
        known = self._sent.get(view.table.obj)
        if known is not None and known[0] == digest:
            return []
        version = known[1] + 1 if known is not None else 1
        self._sent[view.table.obj] = (digest, version)
        lineage = {
            "server": "replicator",
            "task": self.options.database,
            "schema": view.owner,
            "table": view.name,
            "tableVersion": version,
            "timestamp": epoch_to_iso(self.now_ms() // 1000, True, False) + ".000",
        }
        message = {
            "schemaId": digest,
            "lineage": lineage,
            "tableStructure": {"tableColumns": structure},
            "dataSchema": None,
        }
        own = isinstance(ctx.changes[ctx.number], DdlChange)
        return [
            self.message(
                self._envelope("MD", message),
                pos if own else self.aux_position(pos),
                ctx,
                key=self._key(view),
                table=view.table,
            )
        ]

    def _count(self, ctx: TxnContext, rows_only: bool = False) -> tuple[int, bool]:
        """(transactionEventCounter, transactionLastEvent) of the current row change
        (``rows_only``: every change of the transaction is a row, the native engine's case)."""
        if self._events_of is not ctx:
            self._events_of, self._events = ctx, 0
            self._last_row = (
                ctx.total - 1
                if rows_only
                else max((n for n, c in enumerate(ctx.changes) if isinstance(c, RowChange)), default=-1)
            )
        self._events += 1
        return self._events, ctx.number == self._last_row

    def on_row(self, ctx: TxnContext, pos: Position, row: RowValues) -> list[Message]:
        """Metadata if due, then the data message."""
        view, change = row.view, row.change
        out = self._metadata(ctx, pos, view)
        message = self._data(
            ctx,
            pos,
            view,
            row.op,
            change.time,
            change.scn,
            change_mask(row),
            column_mask(row),
            self._count(ctx),
            self.values.row(view, row.current),
            self.values.row(view, row.before or {}) if row.op == OP_UPDATE else None,
        )
        out.append(self.message(self._envelope("DT", message), pos, ctx, key=self._key(view, row), table=change.table))
        return out

    def on_native_row(self, ctx: TxnContext, pos: Position, rows: Any, r: int) -> list[Message]:
        """:meth:`on_row` for row ``r`` of a natively decoded transaction (replicator.native
        RowImages; its tables have no `tag` columns): the same bytes, images rendered in C."""
        view, op = rows.view(r), rows.op(r)
        out = self._metadata(ctx, pos, view)
        change, column = rows.masks(r)
        data = orjson.Fragment(rows.json(r, 0 if op == OP_DELETE else 1, self.values))
        before = orjson.Fragment(rows.json(r, 0, self.values)) if op == OP_UPDATE else None
        message = self._data(
            ctx, pos, view, op, rows.time(r), rows.scn(r), change, column, self._count(ctx, True), data, before
        )
        out.append(self.message(self._envelope("DT", message), pos, ctx, key=self._key(view), table=rows.table(r)))
        return out

    def _data(
        self,
        ctx: TxnContext,
        pos: Position,
        view: TableView,
        op: str,
        time: int,
        scn: int,
        change: str,
        column: str,
        count: tuple[int, bool],
        data: object,
        before: object,
    ) -> dict[str, object]:
        txn = ctx.txn
        counter, last = count
        headers = {
            "operation": RECORD_TYPES[op],
            "changeSequence": change_sequence(txn.commit_time, txn.commit_scn, ctx.number),
            "timestamp": epoch_to_iso(time, True, False) + ".000",
            "streamPosition": f"{scn:016x}.{txn.thread}:{pos.scn}.{pos.idx + 1}",
            "transactionId": transaction_id(txn.xid),
            "changeMask": change,
            "columnMask": column,
            "externalSchemaId": self._sent[view.table.obj][0],
            "transactionEventCounter": counter,
            "transactionLastEvent": last,
        }
        return {"data": data, "beforeData": before, "headers": headers}

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """A DDL makes a new table version: its metadata message, if the structure changed."""
        table: Table | None = change.table
        if table is None:
            return []
        return self._metadata(ctx, pos, self.table_view(table))
