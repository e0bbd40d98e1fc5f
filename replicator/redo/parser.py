"""The parser: LWNs -> change vectors -> transactions -> committed :class:`Transaction` events.

Vector pairing follows redo-format.md §4.4 and transaction assembly §7. Changes of
objects that are not replicated are dropped before anything is decoded; row values
are decoded only by the format, after commit.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from replicator import log
from replicator.errors import RedoLogError
from replicator.events import Checkpoint, DdlChange, RowChange, Table, Transaction
from replicator.flags import FLAG_INCOMPLETE_TXN, FLAG_SCHEMALESS, FLAG_SYSTEM_TXN
from replicator.redo.header import RedoHeader
from replicator.redo.invariants import CHECKS, FieldCheckError, check_merged_undo, check_session
from replicator.redo.lobtrack import LobTracker
from replicator.redo.opcodes import session, undo
from replicator.redo.records import Lwn, Record
from replicator.redo.timeconv import redo_time_to_epoch
from replicator.redo.vectors import TYP_ENCRYPTED, ChangeVector, iter_vectors
from replicator.schema.condition import CONDITION_OP, compile_condition
from replicator.txn.buffer import Ddl, OpenTransaction, TransactionBuffer
from replicator.txn.pool import MemoryPool
from replicator.txn.rows import Pair, group_rows

OPC_UNDO, OPC_BEGIN, OPC_COMMIT, OPC_ROLLBACK6, OPC_ROLLBACK11 = 0x0501, 0x0502, 0x0504, 0x0506, 0x050B
OPC_SESSION19, OPC_SESSION20, OPC_DDL = 0x0513, 0x0514, 0x1801
OPC_LOB_PAGE, OPC_LOB_BIMG, OPC_LOB_REDO = 0x1301, 0x1A06, 0x1A02
STORED_REDO = frozenset({0x0B02, 0x0B03, 0x0B05, 0x0B06, 0x0B08, 0x0B0B, 0x0B0C, 0x0B10, 0x0B16})
# Layers and opcodes with no meaning for CDC (§5.11): skipped silently, by length.
QUIET_LAYERS = frozenset({4, 10, 13, 14, 17, 18, 20, 22, 23, 26})
QUIET_OPCODES = frozenset(
    {
        0x0503,
        0x0505,
        0x0507,
        0x0509,
        0x050A,
        0x050C,
        0x050D,
        0x050E,
        0x050F,
        0x0510,
        0x0511,
        0x0512,
        0x0515,
        0x0516,
        0x0517,
        0x0518,
        0x0523,
        0x0524,
        0x1802,
        0x1803,
        0x1804,
        0x1805,
        0x1806,
        0x180A,
        0x1301,
        0x1A06,
        0x0B01,
        0x0B04,
        0x0B07,
        0x0B09,
        0x0B0A,
        0x0B0D,
        0x0B0E,
        0x0B0F,
        0x0B11,
        0x0B12,
        0x0B13,
        0x0B14,
        0x0B15,
        0x0B17,
        0x0B18,
    }
)
STREAM_BYTES = 32 * 1024 * 1024  # transactions holding more than this are handed over as a stream
COLUMN_LIMIT_23 = 4096
COLUMN_LIMIT = 1000


@dataclass
class ParserOptions:
    """What the parser needs to know about the source and the filter."""

    tables: dict[int, Table]  # obj# -> replicated table (system tables included, flagged)
    schemaless: bool = False
    flags: int = 0
    con_id: int = 0  # CDB: keep only this container's vectors (0 = no filtering)
    con_name: str = ""
    first_data_scn: int = 0
    host_tz: int = 0  # host time zone offset in seconds (redo times are host-local)
    skip_xids: frozenset[int] = frozenset()
    emit_ddl: bool = False
    # Dictionary tracking (schema.tracking.DictionaryTracker): applies committed SYS DML
    # and returns the new table map. None: the table map never changes.
    tracker: Any = None
    # (sequence, byte offset) the tracker's dictionary is current at: system transactions
    # committed in an LWN that starts before it are already in it and are not re-applied.
    dictionary_pos: tuple[int, int] = (0, 0)
    # Several PDBs in one run (source.containers): CON_ID -> the options of each
    # other replicated container (its own table map, tracker, name and dictionary position;
    # the rest as this one's). Empty: one container, as OpenLogReplicator.
    containers: dict[int, ParserOptions] = field(default_factory=dict)


@dataclass
class ParserStats:
    """Counters kept locally on the hot path and read by metrics/benchmarks."""

    records: int = 0
    vectors: int = 0
    lwns: int = 0
    transactions: int = 0
    rollbacks: int = 0
    rows: int = 0
    unknown_opcodes: dict[int, int] = field(default_factory=dict)
    # CDB: change vectors of containers the run does not replicate, per CON_ID (warning 60041)
    other_containers: dict[int, int] = field(default_factory=dict)


class Parser:
    """Feeds LWNs through opcode dispatch into a transaction buffer and emits commits."""

    def __init__(
        self,
        options: ParserOptions,
        on_transaction: Callable[[Transaction], None],
        on_checkpoint: Callable[[Checkpoint], None] | None = None,
        pool: MemoryPool | None = None,
    ):
        self.opt = options
        # Several PDBs: every replicated container's options by CON_ID. ``opt`` is the
        # container of the vector being analysed, the first container between records.
        self.primary = options
        self.views: dict[int, ParserOptions] | None = (
            {options.con_id: options, **options.containers} if options.containers else None
        )
        self.on_transaction = on_transaction
        self.on_checkpoint = on_checkpoint
        self.buffer = TransactionBuffer(pool)
        if self.views is not None:
            self.buffer.containers = tuple(self.views)
        self.pool = self.buffer.pool
        self.lobs = LobTracker(self.pool, self.buffer)  # LOB vectors, values at commit (§11)
        self.lobs.refresh(options.tables)
        self.stats = ParserStats()
        self.header: RedoHeader | None = None
        self.vector_header_size = 32
        self.column_limit = COLUMN_LIMIT
        self.last_touched: OpenTransaction | None = None
        self.last_lwn: Lwn | None = None
        self.lwn: Lwn | None = None
        self.rank = 0
        self.schema_txns: set[int] = set()  # pool keys (txn.key) of open transactions touching CCOL$/CDEF$/COL$/ECOL$
        # The native engine's commit (replicator.native): returns False to leave txn to this code.
        self.native_commit: Callable[[Parser, OpenTransaction, Record], bool] | None = None
        self.native_dispatch: Callable[[Parser, Record], bool] | None = None  # likewise for _dispatch
        # The native engine's loop over an LWN's records (each through native_dispatch or python).
        self.native_records: Callable[[Parser, list[Record]], None] | None = None
        # Stream a transaction once it holds an eighth of the memory budget (at most 32 MB).
        self.stream_bytes = min(STREAM_BYTES, max(1 << 20, self.pool.max_bytes // 8))

    # ----------------------------------------------------------------- files and LWNs
    def start_file(self, header: RedoHeader) -> None:
        """Prepare for the records of a new redo file."""
        self.header = header
        self.vector_header_size = header.vector_header_size
        self.column_limit = COLUMN_LIMIT_23 if header.compat >= 0x17000000 else COLUMN_LIMIT

    def process_lwn(self, lwn: Lwn) -> None:
        """Analyse the records of one LWN (already sorted), then emit a checkpoint."""
        self.lwn_started(lwn)
        if self.native_records is not None:
            self.native_records(self, lwn.records)
        else:
            for rank, record in enumerate(lwn.records):
                self.rank = rank
                self.process_record(record)
        self.lwn_done(lwn)

    def lwn_started(self, lwn: Lwn) -> None:
        """Before the records of ``lwn`` (process_lwn; the native record loop calls it too)."""
        self.last_touched = None
        self.stats.lwns += 1
        self.lobs.refresh(self.opt.tables)  # O(1) unless the table map was replaced
        self.lwn = lwn

    def lwn_done(self, lwn: Lwn) -> None:
        """After the records of ``lwn``: it becomes the last LWN, and a checkpoint follows."""
        self.last_lwn = lwn
        if self.on_checkpoint is not None and lwn.scn > self.opt.first_data_scn:
            assert self.header is not None
            self.on_checkpoint(
                Checkpoint(
                    lwn.scn,
                    self.epoch(lwn.time),
                    self.header.sequence,
                    lwn.end_block * self.header.block_size,
                    False,
                    self.header.thread,
                    lwn.first_block,
                )
            )

    def end_file(self) -> None:
        """A file was read to its end: checkpoint with the redo-switch mark."""
        lwn = self.last_lwn
        if (
            lwn is not None
            and self.on_checkpoint is not None
            and self.header is not None
            and lwn.scn > self.opt.first_data_scn
        ):
            self.on_checkpoint(
                Checkpoint(
                    lwn.scn,
                    self.epoch(lwn.time),
                    self.header.sequence,
                    lwn.end_block * self.header.block_size,
                    True,
                    self.header.thread,
                    lwn.first_block,
                )
            )

    # ----------------------------------------------------------------- RAC: merged threads
    def enter(self, header: RedoHeader, lwn: Lwn) -> None:
        """Analyse the next records in the context of ``lwn`` of the thread ``header`` belongs to.

        The thread merge (:mod:`replicator.redo.merge`) interleaves records of several threads;
        positions (begin offsets, commit positions) stay relative to each record's own thread.
        """
        if header is not self.header:
            self.start_file(header)
        if lwn is not self.lwn:
            self.lwn = lwn
            self.last_touched = None
            self.lobs.refresh(self.opt.tables)

    def merged_record(self, rank: int, record: Record) -> None:
        """Analyse one record of the LWN given to :meth:`enter` (``rank``: its place in the LWN)."""
        self.rank = rank
        self.process_record(record)

    def merged_lwn_done(self, lwn: Lwn) -> None:
        """Every record of ``lwn`` (of the current thread) was analysed."""
        self.stats.lwns += 1
        self.last_lwn = lwn

    def epoch(self, redo_time: int) -> int:
        return redo_time_to_epoch(redo_time, self.opt.host_tz)

    # ----------------------------------------------------------------- records
    def process_record(self, record: Record) -> None:
        """Pair the vectors of one record (§4.4) and dispatch them.

        A vector failing one of OpenLogReplicator's checks (:mod:`.invariants`) stops
        with OLR's code (50061, 50006) naming file, block and offset; any other
        contradiction between fields is error 40009 naming the record, never a traceback.
        """
        try:
            if self.views is not None:
                try:
                    self._dispatch_containers(record)
                finally:
                    self.opt = self.primary
            elif self.native_dispatch is None or not self.native_dispatch(self, record):
                self._dispatch(record)
        except FieldCheckError as exc:
            raise self.field_error(record, exc) from None
        except (struct.error, IndexError) as exc:
            raise self.decode_error(record, exc) from exc

    def field_error(self, record: Record, exc: FieldCheckError) -> RedoLogError:
        """A vector of ``record`` failed one of OLR's checks: OLR's code, file, block and offset."""
        assert self.header is not None
        return RedoLogError(
            f"file {self.header.path}, block {record.block}, offset {record.offset}: {exc.text} "
            f"offset: {self._offset(record) + exc.cv.start}",
            exc.code,
        )

    def decode_error(self, record: Record, exc: Exception) -> RedoLogError:
        """A change vector of ``record`` cannot be decoded (40009)."""
        return RedoLogError(
            f"record at block {record.block} offset {record.offset} (scn {record.scn}): "
            f"a change vector cannot be decoded ({exc})",
            40009,
        )

    def _dispatch_containers(self, record: Record) -> None:
        """Several PDBs: the vectors of each container go through :meth:`_vectors` with that
        container's options (table map, dictionary, name) as ``opt``; the vectors of a
        container the run does not replicate are checked, counted and skipped (60041)."""
        assert self.header is not None and self.views is not None
        self.stats.records += 1
        compat = self.header.compat
        vectors = list(iter_vectors(record.data, record.header_size, self.vector_header_size, self.header.endian))
        order = list(dict.fromkeys(cv.con_id for cv in vectors))  # a record holds one container's, as a rule
        for con_id in order:
            part = vectors if len(order) == 1 else [cv for cv in vectors if cv.con_id == con_id]
            view = self.views.get(con_id)
            if view is None:
                for cv in part:
                    self.stats.vectors += 1
                    check = CHECKS.get(cv.opcode)
                    if check is not None and not cv.typ & TYP_ENCRYPTED:
                        check(cv, compat)
                    self.other_container(con_id)
                continue
            self.opt = view
            self.lobs.refresh(view.tables)
            self._vectors(record, part, 0)

    def _dispatch(self, record: Record) -> None:
        assert self.header is not None
        self.stats.records += 1
        vectors = iter_vectors(record.data, record.header_size, self.vector_header_size, self.header.endian)
        self._vectors(record, vectors, self.opt.con_id)

    def _vectors(self, record: Record, vectors: Iterable[ChangeVector], con_id: int) -> None:
        """Pair and dispatch ``vectors`` of ``record``; a CDB's vectors of another container than
        ``con_id`` (not 0) are counted and skipped."""
        assert self.header is not None
        prev: ChangeVector | None = None
        prev_info: undo.UndoInfo | None = None  # parsed once, used again when the pair completes
        compat = self.header.compat
        for cv in vectors:
            self.stats.vectors += 1
            op = cv.opcode
            # OLR checks every vector as it reads it, whatever its object or container.
            check = CHECKS.get(op)
            if check is not None and not cv.typ & TYP_ENCRYPTED:  # encrypted tablespace: not decoded
                check(cv, compat)
            if con_id and cv.con_id != con_id and self.vector_header_size == 32:
                self.other_container(cv.con_id)
                continue
            if prev is not None:
                if prev.opcode == OPC_UNDO:
                    if cv.layer == 11 or op in (OPC_SESSION19, OPC_SESSION20):
                        self.data_pair(prev, prev_info, cv, record)
                        prev = None
                        continue
                    if cv.layer == 10 or op == OPC_LOB_REDO:
                        if self.lobs.enabled and prev_info is not None:  # LOB index / SecureFile metadata
                            if op == OPC_LOB_REDO:
                                self.lobs.kdli_pair(prev_info, prev, cv)
                            else:
                                self.lobs.index_pair(prev_info, prev, cv)
                        prev = None
                        continue
                    prev = None  # a lone undo: matters only for multi-block merging
                elif op in (OPC_ROLLBACK6, OPC_ROLLBACK11):
                    self._partial_rollback(prev, cv)
                    prev = None
                    continue
                else:
                    prev = None
            if op == OPC_UNDO:
                info = undo.undo_info(cv)
                if info is not None and info.flags & (undo.UNDO_TAIL | undo.UNDO_MID):
                    self.undo_piece(cv, info)
                else:
                    prev, prev_info = cv, info
            elif cv.layer == 11:
                prev = cv
            elif op == OPC_BEGIN:
                self._begin(cv, record)
            elif op == OPC_COMMIT:
                self._commit(cv, record)
            elif op in (OPC_SESSION19, OPC_SESSION20):
                if self.last_touched is not None:
                    if op == OPC_SESSION19:
                        check_session(cv)
                    self.last_touched.attributes.update(session.session_attributes(cv, self.header.compat))
            elif op == OPC_DDL:
                self.ddl(cv, record)
            elif (op == OPC_LOB_BIMG or op == OPC_LOB_PAGE) and self.lobs.enabled:
                self.lobs.page(cv)
            elif op in (OPC_ROLLBACK6, OPC_ROLLBACK11) or cv.layer in QUIET_LAYERS or op in QUIET_OPCODES:
                pass
            elif cv.layer == 5 or cv.layer == 24:
                pass
            else:
                self.unknown(cv)

    def other_container(self, con_id: int) -> None:
        """A change vector of container ``con_id``, which this run does not replicate: counted
        (:attr:`ParserStats.other_containers`), logged once per container (60041), never silent."""
        counts = self.stats.other_containers
        count = counts.get(con_id, 0)
        if count == 0:
            log.warning(
                60041,
                f"change vectors of container CON_ID {con_id} skipped: this run replicates "
                f"{self._replicated()} only (logged once per container, "
                f"counted; the counts follow at the end of the run)",
            )
        counts[con_id] = count + 1

    def report_skips(self) -> None:
        """The end of a run: how many change vectors of each other container were skipped (60041)."""
        counts = self.stats.other_containers
        if counts:
            listed = ", ".join(f"CON_ID {c}: {n}" for c, n in sorted(counts.items()))
            log.warning(
                60041,
                f"change vectors skipped, of containers the run does not replicate "
                f"({self._replicated()} replicated): {listed}",
            )

    def _replicated(self) -> str:
        views = self.views or {self.primary.con_id: self.primary}
        return ", ".join(_container_text(v.con_id, v.con_name) for v in views.values())

    def unknown(self, cv: ChangeVector) -> None:
        count = self.stats.unknown_opcodes.get(cv.opcode, 0)
        if count == 0:
            log.warning(60040, f"unknown opcode {cv.layer}.{cv.code} skipped (logged once)")
        self.stats.unknown_opcodes[cv.opcode] = count + 1

    # ----------------------------------------------------------------- opcodes
    def _begin(self, cv: ChangeVector, record: Record) -> None:
        xid = undo.begin_xid(cv)
        if not xid:
            return  # SQN 0: a cleanup, not a real begin
        self.open_txn(cv.con_id, xid, record.scn, record.time, record.block)

    def open_txn(self, con_id: int, xid: int, scn: int, time: int, block: int) -> None:
        """A 5.2 of ``xid`` in the record at ``block`` (from :meth:`_begin`, or the native dispatch)."""
        assert self.header is not None
        # The restart low watermark must be an LWN boundary: keep the LWN's offset, not the record's.
        lwn_block = self.lwn.first_block if self.lwn is not None else block
        txn = self.buffer.begin(con_id, xid, scn, time, self.header.sequence, lwn_block * self.header.block_size)
        self.last_touched = txn

    def _tracked(self, obj: int) -> Table | bool | None:
        """The table for ``obj``, True in schemaless mode, or None when not replicated."""
        table = self.opt.tables.get(obj)
        if table is not None:
            return table
        return True if self.opt.schemaless else None

    def data_pair(self, u: ChangeVector, info: undo.UndoInfo | None, r: ChangeVector, record: Record) -> None:
        if info is None:
            return
        txn = self.buffer.get(u.con_id, info.xid)
        assert txn is not None
        self.last_touched = txn
        if info.flags & undo.UNDO_BEGIN and txn.logon_user < 0:
            txn.logon_user = undo.logon_user(u)
        if r.layer != 11:
            if info.xid:
                txn.attributes.update(session.session_attributes(r, self.header.compat if self.header else 0))
            return
        if info.flags & undo.UNDO_HEAD and txn.pending_undo:
            head = u
            u = self._merge_pending(txn, u, info.flags)
            try:
                check_merged_undo(u, self.header.compat if self.header else 0)
            except FieldCheckError as exc:
                raise FieldCheckError(exc.code, exc.text, head) from None  # located at the head piece
        if r.opcode not in STORED_REDO or info.opc != 0x0B01:
            return
        table = self._tracked(info.obj)
        if table is None:
            return
        if isinstance(table, Table) and table.system:
            txn.system = True
            if self.opt.tracker is not None and self.opt.tracker.is_schema_table(table):
                self.schema_txns.add(txn.key)
        # OLR's `offset` is the file position of the change's 5.1 vector, not of its record.
        txn.add_pair(self.pool, u, r, info.obj, info.data_obj, record.scn, record.time, self._offset(record) + u.start)

    def undo_piece(self, cv: ChangeVector, info: undo.UndoInfo) -> None:
        txn = self.buffer.get(cv.con_id, info.xid)
        assert txn is not None
        txn.pending_undo.append(cv)

    def _merge_pending(self, txn: OpenTransaction, head: ChangeVector, flags: int) -> ChangeVector:
        pieces = txn.pending_undo
        merged = pieces[0]
        for piece in pieces[1:]:
            info = undo.undo_info(piece)
            merged = undo.merge_multiblock(piece, merged, info.flags if info is not None else 0)
        txn.pending_undo = []
        return undo.merge_multiblock(head, merged, flags)

    def _partial_rollback(self, redo: ChangeVector, rb: ChangeVector) -> None:
        info = undo.ktub_info(rb)
        if info is None:
            return
        obj, _, _, slot, _ = info
        self.undo_last(rb.con_id, rb.usn, slot, obj, redo.opcode)

    def undo_last(self, con_id: int, usn: int, slot: int, obj: int, opcode: int) -> None:
        """A 5.6/5.11 undoes the last change (redo ``opcode``) of the transaction in (usn, slot)."""
        if self._tracked(obj) is None:
            return
        txn = self.buffer.by_slot(con_id, usn, slot)
        if txn is None or not txn.rollback_last(self.pool, obj, opcode):
            log.warning(60010, f"partial rollback without a matching change (usn {usn} slot {slot} obj {obj})")

    def ddl(self, cv: ChangeVector, record: Record) -> None:
        head = session.ddl_header(cv)
        if head is None:
            return
        xid, _, piece, _, _ = head
        txn = self.buffer.get(cv.con_id, xid)
        assert txn is not None
        del piece  # pieces are re-joined at commit, in order
        txn.add_ddl(self.pool, cv, record.scn, record.time, self._offset(record))

    def _offset(self, record: Record) -> int:
        assert self.header is not None
        return record.block * self.header.block_size + record.offset

    def _commit(self, cv: ChangeVector, record: Record) -> None:
        info = undo.commit_info(cv)
        if info is None:
            return
        self.end_txn(cv.con_id, info[0], info[1], record)

    def end_txn(self, con_id: int, xid: int, rolled_back: bool, record: Record) -> None:
        """A 5.4 of ``xid`` (from :meth:`_commit`; the native dispatch reads the 5.4 itself)."""
        txn = self.buffer.end(con_id, xid)
        if txn is None:
            return
        try:
            self._finish(txn, xid, rolled_back, record)
        finally:
            key = txn.clog.key  # (txn.key)
            self.schema_txns.discard(key)
            self.lobs.ended(key)
            self.buffer.release(txn)

    def _finish(self, txn: OpenTransaction, xid: int, rolled_back: bool, record: Record) -> None:
        if rolled_back:
            self.stats.rollbacks += 1
            return
        if xid in self.opt.skip_xids:
            return
        if not txn.begun and not self.opt.flags & FLAG_INCOMPLETE_TXN:
            if txn.has_changes:
                log.warning(60011, f"skipping transaction {_xid_text(xid)}: it began before the start position")
            return
        if record.scn <= self.opt.first_data_scn or not txn.has_changes:
            if txn.has_changes and self._tracks(txn) and record.scn > self.opt.tracker.schema_scn:
                # Not output, but a dictionary change committed after the loaded schema's
                # SCN still applies (OLR flushes such system transactions too).
                for _ in self._changes(txn, record.scn):
                    pass
            return
        self._emit(txn, record)

    def _tracks(self, txn: OpenTransaction) -> bool:
        """Whether ``txn``'s SYS rows must be applied to the dictionary at its commit."""
        if self.opt.tracker is None or not txn.system or self.header is None:
            return False
        lwn_offset = (self.lwn.first_block if self.lwn is not None else 0) * self.header.block_size
        return (self.header.sequence, lwn_offset) >= self.opt.dictionary_pos

    def _changes(self, txn: OpenTransaction, scn: int = 0) -> Iterator[RowChange | DdlChange]:
        """The committed changes of ``txn`` in redo order, decoded lazily from the pool.

        A transaction touching the dictionary is applied to it once all its changes were
        produced (rows of the same transaction still use the old definitions, as in OLR).
        """
        track = self._tracks(txn)
        system_rows: list[RowChange] = []
        try:
            yield from self._decoded(txn, system_rows if track else None, txn.key in self.schema_txns)
        except (struct.error, IndexError) as exc:
            raise RedoLogError(
                f"transaction {_xid_text(txn.xid)}: a row change cannot be decoded ({exc})", 40009
            ) from exc
        if system_rows:
            tables = self.opt.tracker.apply(system_rows, scn, self.opt.tables)
            if tables is not None:
                self.opt.tables = tables

    def _decoded(
        self, txn: OpenTransaction, system_rows: list[RowChange] | None, schema: bool
    ) -> Iterator[RowChange | DdlChange]:
        assert self.header is not None
        show_system = bool(self.opt.flags & FLAG_SYSTEM_TXN)
        # OLR outputs no user rows of a transaction that changed CCOL$/CDEF$/COL$/ECOL$.
        hide_user = schema and not show_system
        big_scn, limit, tables = self.header.big_scn, self.column_limit, self.opt.tables
        lobs = self.lobs if self.lobs.enabled else None
        # filter `condition`s pick rows of user tables; flags 0x800 and schemaless print all rows.
        conditions = not self.opt.flags & (FLAG_SYSTEM_TXN | FLAG_SCHEMALESS)

        def pairs_until_ddl(stored: Iterator[Pair | Ddl], tail: list[Ddl]) -> Iterator[Pair]:
            for op in stored:
                if isinstance(op, Pair):
                    yield op
                elif self.opt.emit_ddl:
                    tail.append(op)
                    return

        # Rows and DDL keep their redo order: a DDL ends the current run of row pairs.
        stored = txn.changes(self.pool)
        while True:
            ddl: list[Ddl] = []
            for row in group_rows(pairs_until_ddl(stored, ddl), tables.get, limit, big_scn, log.warning):
                if row.table is not None and row.table.system:
                    if system_rows is not None:
                        system_rows.append(row)
                    if not show_system:
                        continue
                elif hide_user:
                    continue
                elif (
                    conditions
                    and row.table is not None
                    and row.table.condition
                    and not compile_condition(row.table.condition)(CONDITION_OP[row.op], txn.attributes)
                ):
                    continue
                elif lobs is not None and row.table is not None:
                    cols = lobs.columns(row.table)
                    if cols:
                        lobs.resolve(row, txn, cols)  # locators -> assembled LOB values
                row.time = self.epoch(row.time)
                self.stats.rows += 1
                yield row
            if not ddl:
                return
            yield self._ddl_change(ddl[0], system_rows or ())

    def _emit(self, txn: OpenTransaction, record: Record) -> None:
        assert self.header is not None
        if self.native_commit is not None and self.native_commit(self, txn, record):
            return
        changes: Iterable[RowChange | DdlChange] = self._changes(txn, record.scn)
        if txn.size <= self.stream_bytes:
            changes = list(changes)
            if not changes:
                return
        # Above stream_bytes the consumer gets a one-pass iterator: a transaction of any
        # size flows through the format and the writer in bounded memory.
        self.stats.transactions += 1
        begin_scn = txn.begin_scn if txn.begun else record.scn
        begin_time = txn.begin_time if txn.begun else record.time
        self.on_transaction(
            Transaction(
                xid=txn.xid,
                begin_scn=begin_scn,
                begin_time=self.epoch(begin_time),
                commit_scn=record.scn,
                commit_time=self.epoch(record.time),
                changes=changes,
                attributes=txn.attributes,
                logon_user=txn.logon_user,
                thread=self.header.thread,
                begin_seq=txn.begin_seq,
                begin_offset=txn.begin_offset,
                system=txn.system,
                con_name=self.opt.con_name,
                commit_pos=(
                    self.header.sequence,
                    (self.lwn.first_block if self.lwn else 0) * self.header.block_size,
                    self.rank,
                ),
            )
        )

    def _ddl_change(self, op: Ddl, pending: Iterable[RowChange] = ()) -> DdlChange:
        """The DDL statement; for a table not replicated (yet), its owner and name as the
        dictionary rows written so far say, as OLR names it (``pending``: this transaction's
        SYS rows before the statement)."""
        head = session.ddl_header(op.vectors[0])
        stype, obj = (head[1], head[4]) if head else (0, 0)
        owner, sql = session.ddl_text(op.vectors)
        table, name = self.opt.tables.get(obj), ""
        if table is None and self.opt.tracker is not None:
            found = self.opt.tracker.object_name(obj, pending)
            if found is not None:
                owner, name = found
        return DdlChange(
            obj=obj,
            owner=owner,
            table=table,
            sql=sql,
            statement_type=stype,
            scn=op.scn,
            time=self.epoch(op.time),
            offset=op.offset,
            name=name,
        )


def _container_text(con_id: int, con_name: str) -> str:
    return f"container CON_ID {con_id}" + (f" ({con_name})" if con_name else "")


def _xid_text(xid: int) -> str:
    return f"0x{xid >> 48:04x}.{(xid >> 32) & 0xFFFF:03x}.{xid & 0xFFFFFFFF:08x}"
