"""The stage contract: what the native engine (``replicator/native/*.pyx``) uses of the python objects.

The compiled core reads and writes python objects of other packages on its hot path (a format's
position in the LWN, the parser's open/end/undo entry points, the pool's chunk lists, the
checkpoint manager's counters, the driver's hand-offs). Those members are public and declared
here, one Protocol ("port") per object, so a rename in ``olr_json.py`` or ``parser.py`` shows in
a type check and in ``tests/unit/test_native_ports.py`` rather than only on the native path at
run time. The ports list what the native code touches, not everything the classes have.

Plain attributes stay plain attributes (no properties): the native code reads them per row.
This module holds Protocols only and imports the concrete types for type checking only, so any
package may import it without an import circle.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from replicator.events import Checkpoint, Message, Table, Transaction
    from replicator.formats.framework import Position, TableView, TxnContext
    from replicator.formats.olr_columns import TablePlan
    from replicator.formats.protobuf_plan import PbTablePlan
    from replicator.redo.records import Lwn
    from replicator.txn.buffer import OpenTransaction
    from replicator.txn.pool import ChunkLog


# -- formats -------------------------------------------------------------------------------------


class HeaderPort(Protocol):
    """OLR JSON's header builder (``formats.olr_header.HeaderBuilder``)."""

    scn_all: bool  # every message carries the SCN (``scn-type`` bit 2), not only the first
    tm_all: bool  # the same for the time (``timestamp-type`` bit 2)


class ReducerPort(Protocol):
    """The update-image reducer (``formats.olr_rows.UpdateReducer``)."""

    column_mode: int  # the ``column`` option: which columns an update prints
    copy_after: bool  # a missing NOT NULL before-value copies the after-value (flag 0x4000)

    def warn_not_null(self, plan: TablePlan | None, index: int) -> None:
        """Warn (once per column) that a NOT NULL column had no before-value."""


class TablePlanPort(Protocol):
    """OLR JSON's per-table plan (``formats.olr_columns.TablePlan``)."""

    fragments: tuple[tuple[Any, ...], tuple[Any, ...]]  # per column: the rendered name prefix (before, after)
    nulls: tuple[tuple[Any, ...], tuple[Any, ...]]  # per column: the rendering of NULL (before, after)


class PbTablePlanPort(Protocol):
    """Protobuf's per-table plan (``formats.protobuf_plan.PbTablePlan``)."""

    column_plans: list[Any]  # per column: name and value setter


class LwnFormatPort(Protocol):
    """A format numbering its messages within an LWN (OLR JSON and protobuf): the "format plan".

    ``set_position(scn)`` starts a new LWN (index 0) when the SCN moves on; every message
    takes the next index (``lwn_idx`` += 1; OLR JSON's ``take_index``); the native renderers advance
    ``lwn_idx`` themselves for a run of rows and store it back.
    """

    options: Any  # FormatOptions
    full: bool  # ``message`` bit 0: a transaction is one message
    add_num: bool  # ``message`` bit 1: rows carry their number
    add_offset: bool  # ``message`` bit 4: rows carry their redo offset
    skip_begin: bool  # ``message`` bit 2: no begin message
    skip_commit: bool  # ``message`` bit 3: no commit message
    reducer: ReducerPort
    lwn_scn: int  # SCN of the current LWN position
    lwn_idx: int  # indexes taken at that SCN (the next message's index is lwn_idx + 1)

    def set_position(self, scn: int) -> None:
        """Move to ``scn``: index 0 when it differs from the current one."""


class JsonFormatPort(LwnFormatPort, Protocol):
    """OLR JSON (``formats.olr_json.OlrJsonFormat``)."""

    rid: bool  # rows carry their ROWID
    schema_columns: bool  # ``schema`` bit 0: the schema lists the columns
    header: Any  # HeaderBuilder (see HeaderPort)
    plans: dict[int, TablePlan]

    def take_index(self) -> int:
        """The next message index at the current SCN."""

    def plan(self, table: Table) -> TablePlan:
        """The table's plan (made once per table object)."""

    def table_schema(self, plan: TablePlan | None, obj: int, owner: str = "", name: str = "") -> bytes:
        """The ``"schema":{...}`` member of a row or DDL message."""


class ProtobufFormatPort(LwnFormatPort, Protocol):
    """OLR protobuf (``formats.protobuf.ProtobufFormat``)."""

    plans: dict[int, PbTablePlan]

    def table_schema(self, schema: Any, plan: PbTablePlan | None, obj: int, owner: str = "", name: str = "") -> None:
        """Fill a ``Schema`` message."""


class EventFormatPort(Protocol):
    """A hook-driven format (``formats.framework.EventFormat``): positions by ``take()``."""

    options: Any
    skip_begin: bool
    skip_commit: bool
    scn: int  # SCN of the current position
    idx: int  # next index at that SCN
    last: Position | None  # the position taken last
    previous: Position | None  # the one before it (what an auxiliary message uses)

    def reset(self, scn: int) -> None:
        """Move to ``scn`` (index 0 when it differs)."""

    def take(self) -> Position:
        """The next position."""

    def on_begin(self, ctx: TxnContext, pos: Position) -> list[Message]: ...

    def on_commit(self, ctx: TxnContext, pos: Position) -> list[Message]: ...

    def table_view(self, table: Table) -> TableView: ...


class DebeziumFormatPort(EventFormatPort, Protocol):
    """Debezium (``formats.debezium.DebeziumFormat``): what its native renderer shares."""

    orders: Any  # Counter of events per data collection in the current transaction
    orders_of: TxnContext | None  # the transaction ``orders`` counts

    def render_value(self, schema: Any, payload: dict[str, Any]) -> bytes: ...

    def render_key(self, name: str, fields: list[Any], payload: dict[str, Any]) -> bytes: ...

    def table_schemas(self, view: TableView) -> tuple[Any, Any]: ...


# -- the parser and its transaction store --------------------------------------------------------


class PoolPort(Protocol):
    """The chunk pool (``txn.pool.MemoryPool``)."""

    logs: OrderedDict[int, ChunkLog]  # open transactions' chunk logs by pool key, least recently touched first
    free_chunks: list[bytearray]  # recycled chunks
    used: int
    min_chunks: int
    max_bytes: int
    peak_bytes: int

    def log_for(self, key: int) -> ChunkLog: ...


class OpenTransactionPort(Protocol):
    """An open transaction (``txn.buffer.OpenTransaction``)."""

    xid: int
    size: int

    def remember(self, chunk: int, offset: int, kind: int, opcode: int, obj: int) -> None:
        """Index an entry appended to the transaction's chunk log."""


class BufferPort(Protocol):
    """The open transactions (``txn.buffer.TransactionBuffer``)."""

    pool: PoolPort
    by_key: dict[tuple[int, int, int], OpenTransaction]  # (con_id, usn, slot) -> open transaction


class ParserPort(Protocol):
    """The python parser (``redo.parser.Parser``) as the native record loop drives it.

    The native loop decodes the records and calls the parser's entry points with numbers
    (``open_txn``, ``end_txn``, ``undo_last``) or decoded vectors (``data_pair``,
    ``undo_piece``, ``ddl``, ``unknown``); checkpoints go to ``on_checkpoint``.
    """

    header: Any  # RedoHeader of the file being parsed
    opt: Any
    pool: PoolPort
    buffer: BufferPort
    stats: Any
    stream_bytes: int  # a transaction larger than this is rendered in parts
    lwn: Lwn | None  # the LWN being analysed
    rank: int  # the record's rank within its LWN (commit order of one LWN)
    vector_header_size: int  # 24 or 32 (12c+) bytes per change vector header
    column_limit: int  # the highest column number a row may have (1000, 4096 from 23c)
    schema_txns: set[int]  # pool keys of open transactions touching the dictionary
    last_touched: OpenTransaction | None  # what a 5.20 session vector applies to
    on_checkpoint: Callable[[Checkpoint], None] | None

    def epoch(self, redo_time: int) -> int:
        """Epoch seconds of a raw redo time."""

    def open_txn(self, con_id: int, xid: int, scn: int, time: int, block: int) -> None: ...

    def end_txn(self, con_id: int, xid: int, rolled_back: bool, record: Any) -> None: ...

    def undo_last(self, con_id: int, usn: int, slot: int, obj: int, opcode: int) -> None: ...

    def undo_piece(self, cv: Any, info: Any) -> None: ...

    def data_pair(self, u: Any, info: Any, r: Any, record: Any) -> None: ...

    def ddl(self, cv: Any, record: Any) -> None: ...

    def unknown(self, cv: Any) -> None: ...

    def field_error(self, record: Any, exc: Exception) -> Exception: ...

    def decode_error(self, record: Any, exc: Exception) -> Exception: ...


# -- checkpoints and the drivers -----------------------------------------------------------------


class CheckpointPort(Protocol):
    """The daemon's checkpoint manager (``runner.checkpoint.CheckpointManager``): the counters its
    per-LWN rule reads, which the native daemon loop evaluates in C."""

    interval_s: int
    interval_mb: int
    bytes_since: int  # redo bytes since the last schema checkpoint (the loop adds to it)
    last_time: int  # epoch of the last schema checkpoint
    written_scns: list[int]  # SCNs of the schema checkpoints this process wrote


class CommitSink(Protocol):
    """The driver taking what the native committer renders (``runner.driver.Driver``: the batch
    ``Pipeline``, the daemon's ``DaemonEngine`` and ``RacEngine`` are its feeds).

    Transaction: ``on_native``; a huge one in parts: ``on_native_stream`` then
    ``on_native_part`` (both return the room before the next drain). Checkpoints reach the
    driver through the parser's ``on_checkpoint``. The barrier (queued stage-2 transactions
    out before a checkpoint) is ``native_barrier``, set by ``native.wiring.attach``. The
    committer reads ``native_runs`` (hand a transaction over as one MessageRun) and
    ``decode_workers`` (stage 2's worker threads, with runs) when it is made.
    """

    parser: Any
    on_commit: Callable[..., Any] | None  # observers: set, a commit is left to python
    on_change: Callable[..., Any] | None
    native_barrier: Callable[[], None] | None
    native_runs: bool
    decode_workers: int
    tally: Any  # metrics counters the committer counts its rows into (the daemon's), or None

    def on_native(self, txn: Transaction, messages: Sequence[Message], rows: int) -> None: ...

    def on_native_stream(self, txn: Transaction) -> int: ...

    def on_native_part(self, messages: Sequence[Message], rows: int) -> int: ...


class NativeDriver(CommitSink, Protocol):
    """The driver the native engine attaches to (``native.wiring.attach``): ``runner.driver.Driver``,
    whatever its feed (the batch ``Pipeline``, the daemon's ``DaemonEngine`` or its ``RacEngine``).
    Each feed installs its own native loop classes, so attach needs no test of which it has."""

    format: Any  # the run's format (formats.base.Format)
    native: Any  # the native committer attach installed, or None
    native_finish: Callable[[], None] | None
    tally: Any  # the daemon's metrics counters (ops.metrics_tally.Tally), None in batch runs

    def install_native_feed(self, core: Any) -> None:
        """Take the native loop classes this feed uses (``core`` is replicator.native._core)."""

    def commit_declines(self) -> Callable[[Any, Any], bool] | None:
        """``declines(txn, record)``: commits to leave to python, or None when none are."""


class DaemonDriverPort(Protocol):
    """What the daemon's native block loop (``_daemon_loop.pxi``) uses of ``runner.daemon_engine.DaemonEngine``."""

    state: Any  # EngineState: its heartbeat is stamped by the loop

    def handoff(self) -> None:
        """Give the pending messages to the writer task (blocks while its queue is full)."""


class RacDriverPort(DaemonDriverPort, Protocol):
    """What the native RAC merge (``RacMerge`` in ``_daemon_loop.pyx``) uses of ``runner.rac_engine.RacEngine``."""

    cut_scn: int  # SCN of the last record analysed (the merge stores it)

    def fill_native(self, st: Any) -> bool:
        """Feed a thread's next blocks to its loop; False when the thread has nothing more now."""
