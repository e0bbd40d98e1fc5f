"""The common frame of the non-OpenLogReplicator formats: events, positions, views, clock.

:class:`EventFormat` walks a committed transaction the way OLR JSON does and calls one hook
per event: ``on_begin``, ``on_row`` or ``on_ddl`` per printable change, ``on_commit``, and
``on_checkpoint`` for checkpoints. Printable means what OLR JSON prints: DDL only with source
flag 0x20, unknown tables only in schemaless mode or with flag 0x800, SYS tables only with
0x800; `message` bits 4 and 8 skip begin and commit.

Positions are OLR JSON's, event for event: a transaction resets ``c_scn`` to its begin SCN
and a checkpoint to its LWN SCN, the index restarts when ``c_scn`` changes, and begin, each
change and commit take the next index *whether or not the format has a message for them*
(Canal has no begin). So every format confirms the same ``(c_scn, c_idx)`` for the same redo.
A format that sends an extra message ahead of an event (a schema or metadata message) gives
it :meth:`EventFormat.aux_position`, the position of the event before, so that confirming it
never confirms the event that follows. `message` bit 1 (FULL) does not apply here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from replicator.events import (
    Change,
    Checkpoint,
    DdlChange,
    Message,
    RowChange,
    Table,
    Transaction,
)
from replicator.formats.base import NO_SCN, FormatOptions, printable_filter
from replicator.formats.rowvalues import (
    ColumnView,
    RowValues,
    TableView,
    Value,
    raw_table,
    row_values,
)

Clock = Callable[[], float]


def dumps(value: object) -> bytes:
    """Compact UTF-8 JSON (orjson; ``orjson.Fragment`` carries exact number text)."""
    return orjson.dumps(value)


_NATIVE: list[object] = []


def native_avro() -> Any:
    """The compiled Avro encoders (replicator.formats._avro, beside avro.py: ColumnCodes and the
    records the formats' ``on_native_row`` write, which only runs when the native engine is built,
    so the module is there); imported once, when first used."""
    if not _NATIVE:
        import replicator.formats._avro as compiled

        _NATIVE.append(compiled)
    return _NATIVE[0]


def xid_text(xid: int) -> str:
    """``usn.slot.sqn`` in decimal, the form DTS, SharePlex and OMS print."""
    return f"{xid >> 48}.{(xid >> 32) & 0xFFFF}.{xid & 0xFFFFFFFF}"


def ddl_table(change: DdlChange) -> str:
    """The table name of a DDL statement (``OBJ_<obj>`` when the dictionary lacks it)."""
    if change.table is not None:
        return change.table.name
    return change.name or f"OBJ_{change.obj}"


@dataclass(frozen=True, slots=True)
class Position:
    """A message's stream position: c_scn and the *internal* index (JSON prints idx + 1)."""

    scn: int
    idx: int

    @property
    def text(self) -> str:
        """``c_scn:c_idx`` as OLR JSON prints them (index + 1): a unique, resumable id."""
        return f"{self.scn}:{self.idx + 1}"

    @property
    def serial(self) -> int:
        """A 64-bit record id, ``c_scn * 100000 + index`` (unique below 100000 per c_scn)."""
        return self.scn * 100_000 + self.idx % 100_000


class StreamSequence:
    """A sequence number strictly increasing over the output stream, the same after a restart.

    OMS's ``storeDataSequence`` and DataWorks' ``scn`` are "for sorting": a time followed by
    up to five digits of an incrementing number. Transactions come out in commit order, so
    the commit SCN stands in for the time (seconds repeat; SCNs do not) and the event's number
    in its transaction (begin 0, changes 1…, commit last) fills the five digits:
    ``commit_scn * 100000 + number``, a pure function of the redo, hence restart-stable.
    Where that would not increase (a transaction of 100000+ events, two transactions with one
    commit SCN) the previous value + 1 is used instead, so the order still holds.
    """

    STEP = 100_000

    def __init__(self) -> None:
        self._last = -1

    def next(self, commit_scn: int, number: int) -> int:
        """The sequence number of event ``number`` of the transaction committed at ``commit_scn``."""
        value = max(commit_scn * self.STEP + number, self._last + 1)
        self._last = value
        return value


@dataclass(slots=True)
class TxnContext:
    """What the hooks know about the transaction being rendered."""

    txn: Transaction
    changes: list[Change]  # the printable changes, in order
    db: str  # container name, else the source name
    number: int = 0  # index of the current change in ``changes``

    @property
    def total(self) -> int:
        """Number of printable changes."""
        return len(self.changes)

    @property
    def last(self) -> bool:
        """True for the last printable change of the transaction."""
        return self.number == len(self.changes) - 1

    @property
    def xid(self) -> str:
        """The transaction id as ``usn.slot.sqn``."""
        return xid_text(self.txn.xid)

    @property
    def user(self) -> str | None:
        """The login user name, when the redo recorded it."""
        return self.txn.attributes.get("login username")


class EventFormat:
    """Base class: drives the hooks and keeps positions, table views and the clock."""

    def __init__(self, options: FormatOptions, clock: Clock | None = None):
        self.options = options
        self.clock: Clock = clock or time.time
        flags = options.flags
        self._printable = printable_filter(flags)
        full = bool(options.message & 1)
        self.skip_begin = bool(options.message & 4) and not full
        self.skip_commit = bool(options.message & 8) and not full
        self.scn = NO_SCN
        self.idx = 0
        self.last: Position | None = None
        self.previous: Position | None = None
        self._views: dict[int, TableView] = {}
        self._stand_ins: dict[tuple[int, int, bool], TableView] = {}

    # -- hooks (formats override what they have) ---------------------------------------------

    # A format with on_native_row (formats/capabilities.NativeRowFormat) is rendered from the
    # native engine's row images; False leaves its rows to the python hooks.
    native_rows = True

    begin_op = ""  # the format's name of a transaction-start record ("": it has none)
    commit_op = ""  # the same for the end of a transaction

    def on_begin(self, ctx: TxnContext, pos: Position) -> list[Message]:
        """Messages for the start of a transaction: ``transaction_record`` with ``begin_op``."""
        if not self.begin_op:
            return []
        return self.transaction_record(ctx, pos, self.begin_op, ctx.txn.begin_time, ctx.txn.begin_scn)

    def transaction_record(self, ctx: TxnContext, pos: Position, op: str, time: int, scn: int) -> list[Message]:
        """A begin or commit record at ``time``/``scn`` (formats with begin/commit_op define it)."""
        return []

    def on_row(self, ctx: TxnContext, pos: Position, row: RowValues) -> list[Message]:
        """Messages for one row change (default: none)."""
        return []

    def on_ddl(self, ctx: TxnContext, pos: Position, change: DdlChange) -> list[Message]:
        """Messages for a DDL statement (default: none)."""
        return []

    def on_commit(self, ctx: TxnContext, pos: Position) -> list[Message]:
        """Messages for the end of a transaction: ``transaction_record`` with ``commit_op``."""
        if not self.commit_op:
            return []
        return self.transaction_record(ctx, pos, self.commit_op, ctx.txn.commit_time, ctx.txn.commit_scn)

    def on_checkpoint(self, cp: Checkpoint, pos: Position) -> list[Message]:
        """Heartbeat messages for a checkpoint (default: none)."""
        return []

    # -- Format protocol ---------------------------------------------------------------------

    def transaction(self, txn: Transaction) -> list[Message]:
        """Render one committed transaction through the hooks."""
        self.reset(txn.begin_scn)
        changes = [change for change in txn.changes if self._printable(change)]
        if not changes:
            return []
        ctx = TxnContext(txn, changes, txn.con_name or self.options.con_name or self.options.database)
        out: list[Message] = []
        if not self.skip_begin:
            out += self.on_begin(ctx, self.take())
        for number, change in enumerate(changes):
            ctx.number = number
            pos = self.take()
            if isinstance(change, DdlChange):
                out += self.on_ddl(ctx, pos, change)
            else:
                out += self.on_row(ctx, pos, row_values(change, self.view(change)))
        if not self.skip_commit:
            out += self.on_commit(ctx, self.take())
        return out

    def checkpoint(self, cp: Checkpoint) -> list[Message]:
        """Render a checkpoint through ``on_checkpoint`` (output only with flag 0x1000)."""
        self.reset(cp.scn)
        return self.on_checkpoint(cp, self.take())

    # -- helpers for the formats -------------------------------------------------------------

    def now_ms(self) -> int:
        """Processing time in epoch milliseconds (the formats' ``ts``/``posttime`` fields)."""
        return int(self.clock() * 1000)

    def aux_position(self, pos: Position) -> Position:
        """Position for a message sent ahead of the event at ``pos`` (see module docstring)."""
        return self.previous if self.previous is not None else pos

    def message(
        self,
        data: bytes,
        pos: Position,
        ctx: TxnContext | None = None,
        *,
        key: bytes | None = None,
        table: Table | None = None,
        headers: list[tuple[str, bytes]] | None = None,
        seq: int = 0,
    ) -> Message:
        """A positioned message; ``checkpoint`` is set when there is no transaction."""
        if ctx is None:
            return Message(data=data, scn=pos.scn, idx=pos.idx, tag=key, checkpoint=True, seq=seq, headers=headers)
        return Message(
            data=data,
            scn=pos.scn,
            idx=pos.idx,
            tag=key,
            seq=ctx.txn.begin_seq,
            xid=ctx.txn.xid,
            table=table,
            headers=headers,
        )

    def view(self, change: RowChange) -> TableView:
        """The :class:`TableView` of a change's table (a RAW stand-in for unknown tables)."""
        table = change.table
        if change.compressed is None and table is not None:
            return self.table_view(table)
        compressed = change.compressed is not None
        width = 1 if compressed else 1 + max([*(change.before or {}), *(change.after or {}), -1])
        key = (change.obj, width, compressed)
        view = self._stand_ins.get(key)
        if view is None:
            labels = ("COMPRESSED",) if compressed else tuple(f"COL_{n}" for n in range(width))
            owner, name = (table.owner, table.name) if table is not None else ("", "")
            view = self._stand_ins[key] = TableView(raw_table(change.obj, labels, owner, name), self.options)
        return view

    def table_view(self, table: Table) -> TableView:
        """The cached :class:`TableView` of a dictionary table."""
        view = self._views.get(id(table))
        if view is None or view.table is not table:
            view = self._views[id(table)] = TableView(table, self.options)
        return view

    @staticmethod
    def tag_key(row: RowValues, render: Callable[[ColumnView, Value], object]) -> bytes | None:
        """The Kafka key from the filter's `tag` columns: a JSON object, or None."""
        table = row.change.table
        if table is None or not table.tag_columns:
            return None
        image = row.current
        fields = {
            view.name: render(view, image[view.index])
            for index in table.tag_columns
            if (view := row.view.by_index.get(index)) is not None and index in image
        }
        return dumps(fields)

    # -- internals ---------------------------------------------------------------------------

    def reset(self, scn: int) -> None:
        if self.scn != scn:
            self.scn = scn
            self.idx = 0

    def take(self) -> Position:
        pos = Position(self.scn, self.idx)
        self.idx += 1
        self.previous, self.last = self.last, pos
        return pos
