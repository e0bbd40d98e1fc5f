"""Per-batch metrics: rows in, rows applied, lag in SCN and in seconds.

Each batch logs one line (logger ``replicator.spark``) and appends a JSON line to
``<lake>/_metrics/batches.jsonl``. A :class:`ProgressLog` listener adds them to Spark's
own per-batch progress line, next to Spark's input rate and durations; the stream also
carries observed metrics named ``replicator`` (events, max commit SCN) in
``StreamingQueryProgress.observedMetrics``.

Lag: ``lag_scn`` = highest commit SCN seen in the stream (incl. pending transactions and
checkpoint messages) minus the highest applied; ``lag_seconds`` = wall clock at commit of
the batch minus the commit time of the newest applied change (``e_tm``, or ``tm`` with
timestamp-type 1; the Kafka timestamp otherwise).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("replicator.spark")


@dataclass(slots=True)
class BatchMetrics:
    """What one micro-batch did."""

    batch: int
    messages: int = 0  # Kafka records in the batch
    events: int = 0  # parsed events incl. the pending buffer
    ready: int = 0  # row changes of complete transactions
    applied: int = 0  # row changes that moved a row forward
    stale: int = 0  # row changes older than the stored row (replays, duplicates)
    tables: int = 0
    pending: int = 0  # events buffered for the next batch
    incomplete_txns: int = 0
    dropped_txns: int = 0
    max_seen_scn: int = 0
    applied_scn: int = 0
    lag_scn: int = 0
    lag_seconds: float | None = None
    duration_seconds: float = 0.0
    read_seconds: float = 0.0  # the Spark job reading and parsing the batch
    fold_seconds: float = 0.0  # transactions, keys and fold on the driver (incl. reading stored rows)
    commit_seconds: float = 0.0  # the Delta commits (change log, tables, state)
    # Per table: [data files read, bytes read, files removed (rewritten), files added, bytes added]
    io: dict[str, list[int]] = field(default_factory=dict)
    committed_at: float = 0.0
    skipped: bool = False  # the batch was already committed (a retry after a crash)
    # Checkpoint digests (.streamcheck): "" (not asked), "on", "off: N partitions", "failed CODE";
    # the checkpoints whose segment the batch verified.
    stream_check: str = ""
    checkpoints_verified: int = 0

    @property
    def rows_per_second(self) -> float:
        """Applied rows per second of batch time."""
        return self.applied / self.duration_seconds if self.duration_seconds > 0 else 0.0

    def line(self) -> str:
        """One human-readable log line."""
        lag_s = "-" if self.lag_seconds is None else f"{self.lag_seconds:.1f}s"
        return (
            f"batch {self.batch}: {self.messages} messages, {self.ready} row changes ready, "
            f"{self.applied} applied, {self.stale} stale, {self.pending} events pending "
            f"({self.incomplete_txns} incomplete txns), {self.tables} tables, applied SCN {self.applied_scn}, "
            f"lag {self.lag_scn} SCN / {lag_s}, {self.duration_seconds:.2f}s (read {self.read_seconds:.2f}s, fold "
            f"{self.fold_seconds:.2f}s, commit {self.commit_seconds:.2f}s; {self.rows_per_second:.0f} rows/s)"
            f"{self.io_text()}{self.check_text()}"
        )

    def check_text(self) -> str:
        """``; stream check on, N checkpoints verified`` when the job checks checkpoint digests."""
        if not self.stream_check:
            return ""
        return f"; stream check {self.stream_check}, {self.checkpoints_verified} checkpoints verified"

    def io_text(self) -> str:
        """``; files read N (X MB), rewritten N, written N (Y MB)`` over all tables, or nothing."""
        if not self.io:
            return ""
        t = [sum(v[i] for v in self.io.values()) for i in range(5)]
        return f"; data files read {t[0]} ({t[1] / 1e6:.1f} MB), removed {t[2]}, written {t[3]} ({t[4] / 1e6:.1f} MB)"


class MetricsSink:
    """Keeps recent batch metrics (for the listener) and appends them to the lake."""

    def __init__(self, lake: str, keep_lags: bool = False):
        local = "://" not in lake or lake.startswith("file://")
        self.path = Path(lake.removeprefix("file://")) / "_metrics" / "batches.jsonl" if local else None
        self.recent: dict[int, BatchMetrics] = {}
        self.lags: list[float] | None = [] if keep_lags else None  # commit -> visible seconds per row

    def add_lags(self, lags: list[float]) -> None:
        """Commit-to-visible seconds of the rows a batch applied (kept only when asked for)."""
        if self.lags is not None:
            self.lags.extend(lags)

    def record(self, m: BatchMetrics) -> None:
        """Log and persist one batch."""
        m.committed_at = time.time()
        log.info("%s", m.line())
        self.recent[m.batch] = m
        for old in [b for b in self.recent if b < m.batch - 100]:
            del self.recent[old]
        if self.path is None:  # a lake on an object store: the log line only
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps({**asdict(m), "rows_per_second": round(m.rows_per_second, 1)}) + "\n")


def progress_listener(sink: MetricsSink) -> Any:
    """A StreamingQueryListener logging Spark's progress with the job's metrics."""
    from pyspark.sql.streaming import StreamingQueryListener

    class ProgressLog(StreamingQueryListener):
        """Spark progress + replicator metrics, one line per batch."""

        def onQueryStarted(self, event: Any) -> None:
            """Log the query and run ids."""
            log.info("streaming query %s started (run %s)", event.id, event.runId)

        def onQueryProgress(self, event: Any) -> None:
            """One line: Spark's batch progress with the job's metrics of that batch."""
            p = event.progress
            m = sink.recent.get(p.batchId)
            ours = m.line() if m else "no replicator metrics"
            log.info(
                "progress batch %d: input %d rows (%.0f rows/s in, %.0f rows/s processed), trigger %s ms | %s",
                p.batchId,
                p.numInputRows,
                p.inputRowsPerSecond or 0.0,
                p.processedRowsPerSecond or 0.0,
                p.durationMs.get("triggerExecution"),
                ours,
            )

        def onQueryIdle(self, event: Any) -> None:
            """Nothing: idle triggers are not worth a line."""

        def onQueryTerminated(self, event: Any) -> None:
            """Log the end of the query (with its exception if any)."""
            log.info("streaming query %s stopped%s", event.id, f": {event.exception}" if event.exception else "")

    return ProgressLog()
