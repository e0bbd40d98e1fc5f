"""The foreachBatch function: one micro-batch of events -> Delta commits, in a fixed order.

Per batch: the events come to the driver as one Arrow table (one Spark job: the Kafka
read and the parse run in the executors' Python workers); whole transactions are kept in
commit order (:mod:`.assemble`); schemas, DDL and keys are decided for every table, and
missing keys fail the batch before anything is written, naming every table concerned
(:mod:`.tablefold`); each table's changes are folded over its stored rows. Then, each
commit carrying the application transaction (query id, batch id):

1. the change log (append), 2. each current-state table (MERGE, or overwrite after a
rename/drop/truncate), 3. the job state (schemas, applied SCN, pending buffer).

A batch Spark replays after a crash skips each commit it finds already made, table by
table; a batch whose state commit is there is skipped whole.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from replicator.errors import DataError
from replicator.spark.assemble import assemble
from replicator.spark.eventpack import unpack
from replicator.spark.keys import KeyResolver
from replicator.spark.lakestore import DeltaLake
from replicator.spark.metrics import BatchMetrics, MetricsSink
from replicator.spark.options import JobOptions
from replicator.spark.state import JobState
from replicator.spark.tablefold import change_rows, change_schema, conform_stored, fold_table, key_rows, plan_tables

log = logging.getLogger("replicator.spark")
# Tests only: SIGKILL the driver at the first table commit, after at least this many, that is
# followed by another table's commit in the same batch (so the kill lands between two tables).
CRASH_ENV = "REPLICATOR_SPARK_TEST_KILL_AFTER_TABLE_COMMITS"


class BatchApplier:
    """Callable for ``writeStream.foreachBatch``; keeps the job state between batches."""

    def __init__(self, opts: JobOptions, lake: DeltaLake, sink: MetricsSink, pending_timeout: float = 300.0):
        self.opts = opts
        self.lake = lake
        self.sink = sink
        self.keys = KeyResolver(opts)
        self.pending_timeout = pending_timeout
        self.state: JobState = lake.load_state()
        self.query_id = ""
        self._started = threading.Event()
        self._commits = 0
        self._crash_after = int(os.environ.get(CRASH_ENV, "0") or 0)
        self.threads = 4  # tables read, folded and merged at once (delta-rs works outside the GIL)

    def set_query(self, query_id: str) -> None:
        """The streaming query's id (from the checkpoint): part of the application transaction id."""
        self.query_id = query_id
        self._started.set()

    @property
    def app_id(self) -> str:
        """The Delta application transaction id of this query's batches."""
        return f"replicator-spark-{self.query_id}"

    def __call__(self, batch: Any, batch_id: int) -> None:
        """Apply one micro-batch (``batch`` holds parsed events)."""
        self._started.wait(120)
        st = self.state
        if st.query_id == self.query_id and batch_id <= st.batch:
            log.info("batch %d was committed before a restart: skipped", batch_id)
            self.sink.record(BatchMetrics(batch_id, skipped=True, applied_scn=st.applied_scn))
            return
        started = time.monotonic()
        metrics = BatchMetrics(batch_id)
        events = unpack(batch.toArrow())  # the Spark job: Kafka read and parse in the executors
        metrics.read_seconds = time.monotonic() - started
        self._apply(events, batch_id, metrics, started)

    def _fold(self, ev: dict[str, Any], name: str, plan: Any) -> Any:
        """Read what the table stores for the batch's keys (every row when it is rewritten) and fold."""
        if plan.rewrite:
            stored, files = conform_stored(self.lake.read_rows(name), plan), None
        else:
            files = self.lake.read_stored(name, sorted({k for pair in plan.keys for k in pair if k is not None}))
            stored = files.rows if files is not None else None
        folded = fold_table(ev, plan, stored, self.opts.hints.timestamp, self.opts.unbounded_number)
        folded.stored = files
        return folded

    def _committed(self, more: bool) -> None:
        self._commits += 1
        if self._crash_after and self._commits >= self._crash_after and more:
            log.warning("test hook %s: killing the driver after %d table commits", CRASH_ENV, self._commits)
            os.kill(os.getpid(), signal.SIGKILL)

    def apply_arrow(self, events: Any, batch_id: int) -> BatchMetrics:
        """Apply a batch of events given as an Arrow table (what ``__call__`` does after the Spark job)."""
        metrics = BatchMetrics(batch_id)
        self._apply(events, batch_id, metrics, time.monotonic())
        return metrics

    def _apply(self, events: Any, batch_id: int, metrics: BatchMetrics, started: float) -> None:
        import pyarrow as pa

        st, opts, lake, app = self.state, self.opts, self.lake, self.app_id
        if st.pending is not None and st.pending.num_rows:
            events = pa.concat_tables([events, st.pending.cast(events.schema)])
        metrics.events = events.num_rows
        if not events.num_rows:  # nothing new and nothing buffered: no commit at all
            metrics.applied_scn = st.applied_scn
            self.sink.record(metrics)
            return
        asm = assemble(events, atomic=opts.atomic, applied_scn=st.applied_scn, pending_timeout=self.pending_timeout,
                       was_applied=lake.applied_transactions)
        if asm.error:
            raise DataError(f"batch {batch_id}: {asm.error}", 20003)
        if asm.dropped_replays:
            log.info("batch %d: %d leftover(s) of transactions applied before (producer replay) dropped", batch_id,
                     asm.dropped_replays)
        # Scalars as Python lists (the per-row passes read them); the images stay in Arrow ("_ready").
        # Timestamps as int64 microseconds: a datetime per change costs more than the rest of the columns.
        scalars = asm.ready.drop_columns(["before", "after"])
        for name in ("commit_ts", "k_ts", "seen"):
            at = scalars.schema.get_field_index(name)
            scalars = scalars.set_column(at, name, scalars.column(at).cast(pa.int64()))
        ev: dict[str, Any] = scalars.to_pydict()
        ev["_ready"] = asm.ready
        plans = plan_tables(ev, st.tables, self.keys)
        key_rows(ev, plans)  # every table's keys checked before anything is written

        lake.take_io()  # counted from here: this batch's reads and rewrites
        done = {name for name in plans if lake.done(lake.table_uri(name), app, batch_id)}
        work = [name for name in plans if name not in done]
        with ThreadPoolExecutor(max_workers=self.threads) as pool:  # delta-rs reads outside the GIL
            folded = dict(zip(work, pool.map(lambda name: self._fold(ev, name, plans[name]), work)))
        metrics.fold_seconds = time.monotonic() - started - metrics.read_seconds
        logged = [change_rows(ev, name, f.changes, f.change_keys, plans[name].ddl) for name, f in folded.items()]
        log_rows = pa.concat_tables(logged) if logged else change_schema().empty_table()
        append_log = bool(log_rows.num_rows) and not lake.done(lake.changes_uri, app, batch_id)
        todo = [n for n, f in folded.items() if plans[n].rewrite or f.rows.num_rows]
        committing = time.monotonic()

        def commit(name: str) -> None:
            if plans[name].rewrite:
                lake.overwrite(name, folded[name].rows, app, batch_id)
            else:
                lake.merge(name, folded[name].rows, app, batch_id, folded[name].new_keys, folded[name].stored)

        if self._crash_after:  # one by one, so the test hook lands between two tables' commits
            if append_log:
                lake.append_changes(log_rows, app, batch_id)
            for i, name in enumerate(todo):
                commit(name)
                self._committed(i + 1 < len(todo))
        else:  # one commit per table (the change log too), each atomic by itself: no order among them is needed
            with ThreadPoolExecutor(max_workers=self.threads) as pool:
                logging_done = pool.submit(lake.append_changes, log_rows, app, batch_id) if append_log else None
                list(pool.map(commit, todo))
                if logging_done is not None:
                    logging_done.result()

        ready_scns = [s for s, k in zip(ev["commit_scn"], ev["kind"]) if k in ("dml", "ddl") and s is not None]
        times = [t for t in ev["commit_ts"] if t is not None] or [t for t in ev["k_ts"] if t is not None]
        newest: int | None = max(times) if times else None  # microseconds
        new = JobState(batch=batch_id, query_id=self.query_id, applied_scn=max([st.applied_scn, *ready_scns]),
                       applied_ts=newest / 1e6 if newest else st.applied_ts,
                       tables={**st.tables, **{n: p.schema for n, p in plans.items()}}, pending=asm.pending)
        lake.commit_state(new, app, batch_id)
        self.state = new
        metrics.commit_seconds = time.monotonic() - committing
        metrics.io = lake.take_io()
        visible = time.time()
        self.sink.add_lags([visible - t / 1e6 for f in folded.values() for i in f.changes
                            if (t := ev["commit_ts"][i]) is not None])

        metrics.messages, metrics.max_seen_scn = asm.messages, asm.max_seen_scn
        metrics.ready = sum(len(p.rows) for p in plans.values())
        metrics.applied = sum(len(f.changes) for f in folded.values())
        metrics.stale = sum(f.stale for f in folded.values())
        metrics.tables, metrics.pending = len(plans), new.pending_rows
        metrics.incomplete_txns, metrics.dropped_txns = asm.incomplete, asm.dropped
        metrics.applied_scn = new.applied_scn
        metrics.lag_scn = max(0, metrics.max_seen_scn - new.applied_scn)
        metrics.lag_seconds = time.time() - new.applied_ts if new.applied_ts else None
        metrics.duration_seconds = time.monotonic() - started
        if done:
            log.info("batch %d: tables committed before a restart skipped: %s", batch_id, ", ".join(sorted(done)))
        self.sink.record(metrics)
