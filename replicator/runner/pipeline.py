"""The batch data path: redo files -> parser -> format -> writer.

This is the synchronous core the daemon reuses: it processes one file at a time,
emits committed transactions in commit order and checkpoints after every LWN, and
hands the writer batches of messages. Chkpt messages reach the writer only when source
flag 0x1000 asks for them; otherwise they are confirmed at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from replicator.events import Change, Checkpoint, Message, Transaction
from replicator.flags import FLAG_CHECKPOINT
from replicator.formats.base import Format
from replicator.formats.capabilities import SilentCheckpoints, StreamingFormat
from replicator.redo.header import RedoHeader
from replicator.redo.identity import DatabaseIdentity
from replicator.redo.online import read_header
from replicator.redo.parser import Parser, ParserOptions
from replicator.redo.reader import RedoFile, read_lwns
from replicator.redo.records import Lwn
from replicator.redo.source import LOCAL, RedoSource
from replicator.runner.runstats import RunStats
from replicator.txn.pool import MemoryPool
from replicator.writers.capabilities import RunWriter

if TYPE_CHECKING:  # msgspec and hashlib: imported only by a run with checkpoint digests
    from replicator.formats.olr_digest import CheckpointDigests

FLUSH_MESSAGES = 4096


class StopRun(Exception):
    """Raised by an ``on_lwn`` observer to end the run at that LWN's boundary (a stop on a signal):
    :meth:`Pipeline.run` then finishes as at the end of its files (final checkpoint, flush)."""


class Sink(Protocol):
    """What the pipeline needs from a writer."""

    def write(self, batch: list[Message]) -> None: ...

    def flush(self) -> None: ...


class Pipeline:
    """Wires a parser to a format and a writer for a list of archived redo files."""

    def __init__(
        self,
        parser_options: ParserOptions,
        fmt: Format,
        sink: Sink,
        *,
        verify_checksum: bool = True,
        on_checkpoint: Callable[[Checkpoint], None] | None = None,
        pool: MemoryPool | None = None,
        source: RedoSource = LOCAL,
        engine: str = "python",
    ):
        self.format = fmt
        self.source = source
        self.sink = sink
        self.verify_checksum = verify_checksum
        self.output_checkpoints = bool(parser_options.flags & FLAG_CHECKPOINT)
        # The format's optional abilities (formats/capabilities.py), looked up once.
        self._checkpoint_unsent: Callable[[Checkpoint], None] | None = (
            fmt.checkpoint_unsent if isinstance(fmt, SilentCheckpoints) else None
        )
        self._iter_transaction: Callable[[Transaction], Iterator[Message]] | None = (
            fmt.iter_transaction if isinstance(fmt, StreamingFormat) else None
        )
        self.parser = Parser(parser_options, self._on_transaction, self._on_checkpoint, pool=pool)
        self.stats = RunStats()
        self._pending: list[Message] = []
        self._on_checkpoint_hook = on_checkpoint
        # Observers (progress, metrics: replicator.runner.runwatch); None costs one test per call.
        self.on_lwn: Callable[[RedoFile, Lwn], None] | None = None
        self.on_commit: Callable[[Transaction], None] | None = None
        self.on_change: Callable[[Change], None] | None = None  # per change of a streamed transaction
        # Schema checkpoints (state directory): called after every LWN checkpoint with the
        # parser, and once more, forced, at the end of the run (OLR's soft-shutdown write).
        self.on_schema_checkpoint: Callable[[Checkpoint, Parser, bool], None] | None = None
        self.threads: dict[int, object] = {}  # RAC runs: per-thread progress (redo.merge.ThreadProgress)
        # RAC runs: called once at the end with (cut SCN, raw redo time, per-thread restart positions).
        self.on_rac_checkpoint: Callable[[int, int, list[tuple[int, int, int, int]]], None] | None = None
        self.engine = engine
        # Every file's header is checked against it before the file is read (redo/identity.py).
        self.identity: DatabaseIdentity | None = None
        # A sink with write_runs takes a native transaction's messages as one MessageRun
        # (one buffer, no per-row object): _pending then holds runs among the Messages and
        # _run_extra counts the messages the runs add beyond one list item each.
        self.native_runs = isinstance(sink, RunWriter)
        self._run_extra = 0
        # format.checkpoint-digests: the batches pass it in order before the sink writes them.
        self.checkpoint_digests: CheckpointDigests | None = None
        # The native engine's loop over a whole file (blocks to commits), else None.
        self.native_loop: Callable[[Pipeline, RedoFile], RedoHeader] | None = None
        # Native stage 2 in worker threads (replicator/native/_stage2.pxi): how many, and
        # the committer's merge of everything queued (set by attach when workers run).
        self.decode_workers = 0
        self.native_barrier: Callable[[], None] | None = None
        self.native_finish: Callable[[], None] | None = None
        self.native: Any = None  # the native committer (native.wiring.attach), if any
        self.tally: Any = None  # batch runs count metrics in runwatch, not in the committer
        if engine == "native":
            from replicator.native import decode_workers
            from replicator.native.wiring import attach

            self.decode_workers = decode_workers()
            attach(self)

    def install_native_feed(self, core: Any) -> None:
        """The batch run's native feed is the record loop over whole files (``native_loop``)."""

    def commit_declines(self) -> Callable[[Any, Any], bool] | None:
        """A batch run renders every commit it reads."""
        return None

    def on_native(self, txn: Transaction, messages: Sequence[Message], rows: int) -> None:
        """A transaction the native engine rendered: the list branch of _on_transaction.

        ``messages`` is a list, or a MessageRun when the sink takes runs (native_runs)."""
        self.stats.transactions += 1
        self.stats.last_scn = txn.commit_scn
        self._take_native(messages, rows)

    def on_native_stream(self, txn: Transaction) -> int:
        """A huge transaction the native engine renders in parts (the stream branch of
        _on_transaction); returns how many messages it may hand over before the next drain."""
        self.stats.transactions += 1
        self.stats.last_scn = txn.commit_scn
        return FLUSH_MESSAGES - len(self._pending) - self._run_extra

    def on_native_part(self, messages: Sequence[Message], rows: int) -> int:
        """Messages (and their row count) of a streamed native transaction; returns the room
        before the next drain, so batches are cut where the python engine's stream cuts them.

        ``messages`` is a list, or a MessageRun when the sink takes runs (native_runs)."""
        self._take_native(messages, rows)
        return FLUSH_MESSAGES - len(self._pending) - self._run_extra

    def _take_native(self, messages: Sequence[Message], rows: int) -> None:
        """Queue natively rendered messages (a list, or a MessageRun kept whole) and drain
        when a batch is full."""
        if type(messages) is list:
            self._pending.extend(messages)
        elif messages:
            self._pending.append(messages)  # type: ignore[arg-type]  # a MessageRun, kept whole
            self._run_extra += len(messages) - 1
        self.stats.rows += rows
        if len(self._pending) + self._run_extra >= FLUSH_MESSAGES:
            self.drain()

    def _on_transaction(self, txn: Transaction) -> None:
        self.stats.transactions += 1
        self.stats.last_scn = txn.commit_scn
        if isinstance(txn.changes, list):
            self._pending.extend(self.format.transaction(txn))
            self.stats.rows += len(txn.changes)
            if self.on_commit is not None:
                self.on_commit(txn)
            if len(self._pending) + self._run_extra >= FLUSH_MESSAGES:
                self.drain()
            return
        # A huge transaction arrives as a stream: format and write it in batches.
        stream = self._iter_transaction
        txn.changes = self._counted(txn.changes)
        if stream is None:
            txn.changes = list(txn.changes)
            messages = iter(self.format.transaction(txn))
        else:
            messages = stream(txn)
        for message in messages:
            self._pending.append(message)
            if len(self._pending) + self._run_extra >= FLUSH_MESSAGES:
                self.drain()
        if self.on_commit is not None:
            self.on_commit(replace(txn, changes=[]))

    def _counted(self, changes: Iterable[Change]) -> Iterator[Change]:
        on_change = self.on_change
        for change in changes:
            self.stats.rows += 1
            if on_change is not None:
                on_change(change)
            yield change

    def _on_checkpoint(self, cp: Checkpoint, final: bool = False) -> None:
        if self.native_barrier is not None and (self.output_checkpoints or self._on_checkpoint_hook is not None):
            self.native_barrier()  # the queued transactions come before the checkpoint
        if self.output_checkpoints:
            messages = self.format.checkpoint(cp)
            # The end of a batch run is not a soft stop in OLR: its parser leaves the last file
            # after the end-of-file ("redo") checkpoint without an "at exit" one, so the final
            # checkpoint (state and schema files) prints no message.
            if not final:
                self._pending.extend(messages)
        elif self._checkpoint_unsent is not None:
            self._checkpoint_unsent(cp)  # the position effect only: no message rendered to drop
        else:
            self.format.checkpoint(cp)
        if self._on_checkpoint_hook is not None:
            self.drain()
            self._on_checkpoint_hook(cp)
        if self.on_schema_checkpoint is not None:
            self.on_schema_checkpoint(cp, self.parser, final)

    def drain(self) -> None:
        """Hand the pending messages to the sink (a batch; the RAC merge drains at its checkpoints)."""
        if self._pending:
            self.stats.messages += len(self._pending) + self._run_extra
            if self.checkpoint_digests is not None:
                self.checkpoint_digests.observe(self._pending)
            if self.native_runs:
                self.sink.write_runs(self._pending)  # type: ignore[attr-defined]  # native_runs: a RunWriter
            else:
                self.sink.write(self._pending)
            self._pending = []
            self._run_extra = 0

    def run_file(self, redo: RedoFile) -> RedoHeader:
        """Process one archived redo file to its end."""
        if self.identity is not None:
            head = read_header(redo.path, self.source, self.verify_checksum)
            if head is not None:  # (an unreadable header is reported by the read itself)
                self.identity.check(head)
        if self.native_loop is not None:
            try:
                header = self.native_loop(self, redo)  # replicator.native.wiring.run_file
            except BaseException:
                self.stage2_done()  # what the single thread had output before the error
                raise
        else:
            header = self._run_file_python(redo)
        self.parser.end_file()
        self.stage2_barrier()
        self.drain()
        size = redo.size if redo.size >= 0 else self.source.size(redo.path)
        self.stats.files += 1
        self.stats.bytes_read += size
        self.stats.per_file.append((redo.path, size))
        return header

    def stage2_barrier(self) -> None:
        """Hand every transaction the native decode workers still hold to the pipeline."""
        if self.native_barrier is not None:
            self.native_barrier()

    def stage2_done(self) -> None:
        """stage2_barrier, and stop the workers (the end of a run, or an error)."""
        if self.native_finish is not None:
            self.native_finish()

    def _run_file_python(self, redo: RedoFile) -> RedoHeader:
        headers: list[RedoHeader] = []
        started = False
        for lwn in read_lwns(redo.path, self.verify_checksum, header_out=headers, source=self.source):
            if not started:
                self.parser.start_file(headers[0])
                started = True
            self.parser.process_lwn(lwn)
            if self.on_lwn is not None:
                self.on_lwn(redo, lwn)
        if not started:
            raise AssertionError("read_lwns yielded nothing")  # pragma: no cover - finish() always yields
        return headers[0]

    def run(self, files: list[RedoFile], progress: Callable[[RunStats, RedoFile], None] | None = None) -> RunStats:
        """Process every file in order, then stop softly (final checkpoint, flush).

        Files of several redo threads (RAC) are merged into one SCN order (:mod:`replicator.runner.rac`).
        """
        if len({f.thread for f in files}) > 1:
            from replicator.runner.rac import run_merged

            try:
                return run_merged(self, files, progress)
            except StopRun:  # no RAC restart point: the merge computes it at its end only
                self.stats.stopped = True
            finally:
                self.stage2_done()
            self.drain()
            self.sink.flush()
            return self.stats
        t0 = time.perf_counter()
        try:
            for redo in files:
                self.run_file(redo)
                if progress is not None:
                    progress(self.stats, redo)
        except StopRun:
            self.stats.stopped = True
        finally:
            self.stage2_done()
        last = self.parser.last_lwn
        header = self.parser.header
        if last is not None and header is not None and last.scn > self.parser.opt.first_data_scn:
            self._on_checkpoint(
                Checkpoint(
                    last.scn,
                    self.parser.epoch(last.time),
                    header.sequence,
                    last.end_block * header.block_size,
                    False,
                    header.thread,
                    last.first_block,
                ),
                final=True,
            )
        self.drain()
        self.sink.flush()
        self.parser.report_skips()
        self.stats.lwns = self.parser.stats.lwns
        self.stats.seconds = time.perf_counter() - t0
        return self.stats
