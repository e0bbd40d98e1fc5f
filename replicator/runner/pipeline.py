"""The batch feed: redo files -> parser -> format -> writer.

:class:`Pipeline` reads a list of archived redo files one at a time (several redo threads:
merged by SCN, :mod:`replicator.runner.rac`); the one :class:`~replicator.runner.driver.Driver`
it is emits committed transactions in commit order, checkpoints after every LWN and hands
the writer batches of messages synchronously (:class:`~replicator.runner.driver.SyncDelivery`).
Chkpt messages reach the writer only when source flag 0x1000 asks for them; otherwise they
are confirmed at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from replicator.events import Checkpoint
from replicator.formats.base import Format
from replicator.redo.header import RedoHeader
from replicator.redo.identity import DatabaseIdentity
from replicator.redo.parser import Parser, ParserOptions
from replicator.redo.reader import RedoFile, read_header, read_lwns
from replicator.redo.records import Lwn
from replicator.redo.source import LOCAL, RedoSource
from replicator.runner.driver import FLUSH_MESSAGES, Driver, Sink, SyncDelivery
from replicator.runner.runstats import RunStats
from replicator.txn.pool import MemoryPool
from replicator.writers.capabilities import RunWriter

__all__ = ["FLUSH_MESSAGES", "Pipeline", "Sink", "StopRun"]


class StopRun(Exception):
    """Raised by an ``on_lwn`` observer to end the run at that LWN's boundary (a stop on a signal):
    :meth:`Pipeline.run` then finishes as at the end of its files (final checkpoint, flush)."""


class Pipeline(Driver):
    """The batch feed: a list of archived redo files through the parser, delivered synchronously
    (:class:`~replicator.runner.driver.SyncDelivery`) by the one :class:`~replicator.runner.driver.Driver`."""

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
        self.source = source
        self.sink = sink
        self.verify_checksum = verify_checksum
        stats = RunStats()
        # A sink with write_runs takes a native transaction's messages as one MessageRun.
        self.native_runs = isinstance(sink, RunWriter)
        self._delivery = SyncDelivery(sink, stats, self.native_runs)
        # (The driver installs its callbacks on the parser.)
        super().__init__(Parser(parser_options, _unset, None, pool=pool), fmt, self._delivery, stats)
        self._on_checkpoint_hook = on_checkpoint
        self.checkpoint_waits = on_checkpoint is not None  # it drains first: stage 2 merges before
        # Observers (progress, metrics: replicator.runner.runwatch); None costs one test per call.
        self.on_lwn: Callable[[RedoFile, Lwn], None] | None = None
        # Schema checkpoints (state directory): called after every LWN checkpoint with the
        # parser, and once more, forced, at the end of the run (OLR's soft-shutdown write).
        self.on_schema_checkpoint: Callable[[Checkpoint, Parser, bool], None] | None = None
        # Its CheckpointManager when that callback is its after_lwn and nothing else (one container):
        # the native record loop may then decide the per-LWN step in C (native_checkpoint_step).
        self.checkpoint_manager: Any = None
        self.threads: dict[int, object] = {}  # RAC runs: per-thread progress (redo.merge.ThreadProgress)
        # RAC runs: called once at the end with (cut SCN, raw redo time, per-thread restart positions).
        self.on_rac_checkpoint: Callable[[int, int, list[tuple[int, int, int, int]]], None] | None = None
        self.engine = engine
        # Every file's header is checked against it before the file is read (redo/identity.py).
        self.identity: DatabaseIdentity | None = None
        # The native engine's loop over a whole file (blocks to commits), else None.
        self.native_loop: Callable[[Pipeline, RedoFile], RedoHeader] | None = None
        if engine == "native":
            from replicator.native import decode_workers
            from replicator.native.wiring import attach

            self.decode_workers = decode_workers()
            attach(self)

    def install_native_feed(self, core: Any) -> None:
        """The batch run's native feed is the record loop over whole files (``native_loop``)."""
        from replicator.native.wiring import run_file

        self.native_loop = run_file

    def checkpointed(self, cp: Checkpoint, final: bool) -> None:
        """The position file's hook (after what the checkpoint covers was written) and the schema
        checkpoint's."""
        if self._on_checkpoint_hook is not None:
            self.drain()
            self._on_checkpoint_hook(cp)
        if self.on_schema_checkpoint is not None:
            self.on_schema_checkpoint(cp, self.parser, final)

    def native_checkpoint_step(self) -> tuple[Any, Any, Any, Any] | None:
        """The arguments of the native RecordLoop's ``set_checkpoint_step``, or None (the parser's
        callback per LWN): only when the per-LWN checkpoint is the format's position step
        (OpenLogReplicator JSON without flag 0x1000) and the schema checkpoint step
        (``checkpoint_manager``) and nothing else -- no position file hook, no other callback
        on the parser."""
        from replicator.formats.olr_json import OlrJsonFormat

        manager = self.checkpoint_manager
        if (
            manager is None
            or self.parser.on_checkpoint != self._on_checkpoint
            or self.checkpoint_waits
            or self.output_checkpoints
            or type(self.format) is not OlrJsonFormat
        ):
            return None
        checkpointed = self.checkpointed

        def hook(cp: Checkpoint, parser: Parser) -> None:
            checkpointed(cp, False)  # _on_checkpoint after its position step: the schema checkpoint

        return self._on_checkpoint, self.format, manager, hook

    def drain(self) -> None:
        """Hand the pending messages to the sink (a batch; the RAC merge drains at its checkpoints)."""
        self._delivery.drain()

    def run_file(self, redo: RedoFile) -> RedoHeader:
        """Process one archived redo file to its end."""
        if self.identity is not None:
            head = read_header(redo.path, self.source, self.verify_checksum)
            if head is not None:  # (an unreadable header is reported by the read itself)
                self.identity.check(head)
        if self.native_loop is not None:
            header = self.native_loop(self, redo)  # replicator.native.wiring.run_file (in run_native)
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

            def merged() -> None:
                try:
                    run_merged(self, files, progress)
                except StopRun:  # no RAC restart point: the merge computes it at its end only
                    self.stats.stopped = True

            self.run_native(merged)
            if self.stats.stopped:
                self.drain()
                self.sink.flush()
            return self.stats
        t0 = time.perf_counter()

        def each_file() -> None:
            try:
                for redo in files:
                    self.run_file(redo)
                    if progress is not None:
                        progress(self.stats, redo)
            except StopRun:
                self.stats.stopped = True

        self.run_native(each_file)  # the workers of native stage 2 stop at the end, or at an error
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


def _unset(txn: object) -> None:
    """The parser's transaction callback until the driver installs its own."""
