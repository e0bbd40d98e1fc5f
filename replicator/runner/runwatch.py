"""Watching a batch run: progress display, metrics, systemd notifications, read-rate cap.

:class:`RunWatch` hooks into a :class:`~replicator.runner.pipeline.Pipeline` (``on_lwn``,
``on_commit`` and the per-file callback of ``run``). Per LWN it only stores a few ints in
its :class:`~replicator.ops.metrics_tally.Tally` and compares one clock reading; every
``tick`` seconds it redraws the progress line, publishes the metrics and pings systemd.
So the cost on the hot path does not depend on how many observers are switched on.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from replicator.events import Transaction
from replicator.ops.metrics_tally import Tally
from replicator.ops.notify import Notifier
from replicator.ops.progress import Pacer, Progress
from replicator.redo.reader import RedoFile
from replicator.redo.records import Lwn
from replicator.redo.timeconv import redo_time_to_epoch
from replicator.runner.pipeline import Pipeline, StopRun
from replicator.runner.stop import SoftStop
from replicator.writers.base import Writer

if TYPE_CHECKING:  # prometheus-client is imported only by a run that serves metrics
    from replicator.ops.metrics import Metrics

STATUS_EVERY = 1.0  # seconds between two STATUS lines sent to systemd


class RunWatch:
    """Observer of one batch run; every part (metrics, notifier, progress, pacer) is optional."""

    def __init__(
        self,
        files: list[RedoFile],
        *,
        metrics: Metrics | None = None,
        notifier: Notifier | None = None,
        progress: Progress | None = None,
        pacer: Pacer | None = None,
        tick: float = 0.25,
    ) -> None:
        self.metrics = metrics
        self.notifier = notifier
        self.progress = progress
        self.pacer = pacer
        self.tally = Tally(metrics.tag_names if metrics is not None else "none")
        self.tick_interval = tick
        self._sizes = [f.size if f.size >= 0 else os.path.getsize(f.path) for f in files]
        self._base = 0  # bytes of the files already finished
        self._files_done = 0
        self._raw_time = 0  # raw redo time of the LWN just read; converted at tick time
        self._next_tick = 0.0
        self._next_status = 0.0
        self._pipeline: Any = None
        self._writers: list[Any] = []
        self.stop: SoftStop | None = None  # a signal asks the run to end at the next LWN (runner.stop)

    def attach(self, pipeline: Pipeline, writer: object = None) -> None:
        """Install the hooks on ``pipeline``; ``writer`` supplies the sent/confirmed counts."""
        self._pipeline = pipeline
        self._writers = [writer] if writer is not None and isinstance(writer, Writer) else []
        pipeline.on_lwn = self.on_lwn
        if self.metrics is not None:
            pipeline.on_commit = self.on_commit
            pipeline.on_change = self.tally.change
            native = pipeline.native
            if native is not None:  # the native commit counts its rows into the same tally itself
                native.tally = self.tally

    # ------------------------------------------------------------------ hot path
    def on_commit(self, txn: Transaction) -> None:
        """Count a transaction that was output (rows by type, DDL)."""
        self.tally.transaction(txn)

    def on_lwn(self, redo: RedoFile, lwn: Lwn) -> None:
        """Record the position after one LWN; do the periodic work when it is due."""
        parser = self._pipeline.parser
        header = parser.header
        tally = self.tally
        position = self._base + lwn.end_block * header.block_size
        tally.bytes_parsed = position
        if position > tally.bytes_read:
            tally.bytes_read = position
        tally.scn = lwn.scn
        tally.sequence = header.sequence
        self._raw_time = lwn.time
        if lwn.scn > parser.opt.first_data_scn:
            tally.checkpoints_out += 1
        else:
            tally.checkpoints_skip += 1
        if self.pacer is not None:
            self.pacer.pace(position)
        if time.monotonic() >= self._next_tick:
            self.tick()
        if self.stop is not None and self.stop.signum:
            raise StopRun(self.stop.signum)

    def on_file(self, stats: Any, redo: RedoFile) -> None:
        """A file was read to its end (the ``progress`` callback of ``Pipeline.run``)."""
        del stats  # the pipeline's totals are read in tick()
        self._base += self._sizes[self._files_done] if self._files_done < len(self._sizes) else 0
        self._files_done += 1
        self.tally.bytes_parsed = self.tally.bytes_read = max(self._base, self.tally.bytes_read)
        lag = time.time() - self._redo_epoch() if self._raw_time else 0.0
        self.tally.log_switch("archived", max(lag, 0.0))
        self.tick()

    # ------------------------------------------------------------------ periodic work
    def _redo_epoch(self) -> float:
        return float(redo_time_to_epoch(self._raw_time, self._pipeline.parser.opt.host_tz))

    def status_text(self) -> str:
        """One line for ``systemctl status``."""
        stats = self._pipeline.stats if self._pipeline is not None else None
        rows = stats.rows if stats is not None else 0
        return (
            f"{self._files_done}/{len(self._sizes)} files, {self.tally.bytes_parsed / 1e6:.1f} MB, "
            f"seq {self.tally.sequence}, SCN {self.tally.scn}, {rows} rows"
        )

    def tick(self) -> None:
        """Publish metrics, redraw progress and notify systemd (rate-limited by the caller)."""
        now = time.monotonic()
        self._next_tick = now + self.tick_interval
        if self._raw_time:
            self.tally.redo_time = self._redo_epoch()
        pipeline = self._pipeline
        if self.metrics is not None and pipeline is not None:
            self.metrics.publish(self.tally, pool=pipeline.parser.pool, writers=self._writers, parser=pipeline.parser)
        if self.progress is not None:
            rows = pipeline.stats.rows if pipeline is not None else 0
            self.progress.update(self._files_done, self.tally.bytes_parsed, self.tally.scn, rows)
        if self.notifier is not None:
            if now >= self._next_status:
                self._next_status = now + STATUS_EVERY
                self.notifier.status(self.status_text())
            self.notifier.maybe_watchdog()

    # ------------------------------------------------------------------ life cycle
    def started(self) -> None:
        """Everything is open: tell systemd we are ready and metrics we replicate."""
        if self.metrics is not None:
            self.metrics.set_state("replicating")
        if self.notifier is not None:
            self.notifier.ready(f"replicating {len(self._sizes)} redo files")
            self.notifier.watchdog()

    def finished(self, ok: bool) -> None:
        """The run ended (``ok`` False after an error): final figures everywhere."""
        if self.metrics is not None:
            self.metrics.set_state("finishing" if ok else "aborting")
        if self._pipeline is not None:
            self.tick()
        if self.progress is not None:
            rows = self._pipeline.stats.rows if self._pipeline is not None else 0
            self.progress.finish(self._files_done, self.tally.bytes_parsed, self.tally.scn, rows)
        if self.notifier is not None:
            self.notifier.stopping(("finished: " if ok else "failed: ") + self.status_text())
