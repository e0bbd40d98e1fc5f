"""The foreachBatch function: one micro-batch of events -> one committed lake snapshot.

Steps: add the pending buffer; stop on unusable messages; keep whole transactions in
commit order (:mod:`.txn`); update schemas and keys; fold each table's changes into its
touched buckets (:mod:`.tables`); stage the change log; commit tables, schemas, pending
buffer and batch id together (:mod:`.store`); then move the change log into place.

A batch Spark replays after a crash (same query, same batch id) that was already
committed is skipped; its change log is finished if the crash came before that.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from replicator.errors import DataError
from replicator.spark.changelog import ddl_rows, publish, stage
from replicator.spark.keys import KeyResolver
from replicator.spark.manifest import Manifest
from replicator.spark.metrics import BatchMetrics, MetricsSink
from replicator.spark.options import JobOptions
from replicator.spark.parse import event_spark_schema
from replicator.spark.tables import apply_table, key_changes, plan_tables
from replicator.spark.txn import split, summarize

log = logging.getLogger("replicator.spark")


class BatchApplier:
    """Callable for ``writeStream.foreachBatch``; owns the lake's manifest between batches."""

    def __init__(self, opts: JobOptions, store: Any, sink: MetricsSink, pending_timeout: float = 300.0):
        self.opts = opts
        self.store = store
        self.sink = sink
        self.keys = KeyResolver(opts)
        self.pending_timeout = pending_timeout
        self.manifest: Manifest = store.load(opts.buckets)
        if self.manifest.batch >= 0 and self.manifest.buckets != opts.buckets:
            log.warning("the lake was created with %d buckets per table; --buckets %d ignored",
                        self.manifest.buckets, opts.buckets)
        self.buckets = self.manifest.buckets or opts.buckets
        self.threads = 4  # concurrent Spark jobs per batch (tables, change log, pending buffer)
        self.last_applied = self.last_pending = 0
        self._finish_changelog(self.manifest)

    def query_id(self) -> str:
        """The streaming query's id from the Spark checkpoint (a new checkpoint = a new query)."""
        try:
            return str(json.loads((Path(self.opts.checkpoint) / "metadata").read_text())["id"])
        except (OSError, ValueError, KeyError):
            return ""

    def _finish_changelog(self, m: Manifest) -> None:
        if m.changelog_staging and hasattr(self.store, "root"):
            moved = publish(self.store.root / "_data" / "_staging" / m.changelog_staging,
                            self.store.root / "changes", m.batch)
            m.changelog_staging = None
            self.store.rewrite_manifest(m)
            log.debug("change log of batch %d published (%d files)", m.batch, moved)

    def __call__(self, batch: Any, batch_id: int) -> None:
        """Apply one micro-batch (``batch`` holds parsed events)."""
        m = self.manifest
        if batch_id <= m.batch and m.query_id == self.query_id():
            log.info("batch %d was committed before a restart: skipped", batch_id)
            self._finish_changelog(m)
            self.sink.record(BatchMetrics(batch_id, skipped=True, applied_scn=m.applied_scn))
            return
        started = time.monotonic()
        self._apply(batch, batch_id, BatchMetrics(batch_id), started)

    def _apply(self, batch: Any, batch_id: int, metrics: BatchMetrics, started: float) -> None:
        from pyspark.sql import functions as F

        spark, m, opts = batch.sparkSession, self.manifest, self.opts
        version = self.store.new_version(batch_id)
        events = batch
        if m.pending:
            events = events.unionByName(spark.read.schema(event_spark_schema()).parquet(self.store.pending_path(m)))
        events = events.persist()
        try:
            asm = split(events, summarize(events), atomic=opts.atomic, applied_scn=m.applied_scn,
                        pending_timeout=self.pending_timeout)
            if asm.error:
                raise DataError(f"batch {batch_id}: {asm.error}", 20003)
            ddl = []
            if any(t.ddl for t in asm.tables.values()):
                ddl = asm.ready.where(F.col("kind") == "ddl").orderBy("commit_scn", "c_scn", "c_idx", "elem").collect()
            plans = plan_tables(asm.ready, asm.tables, ddl, m.tables, self.keys)
            keyed = key_changes(asm.ready, plans, self.buckets)
            try:
                new = self._write(asm, plans, ddl, version, batch_id)
            finally:
                if keyed is not None:
                    keyed.unpersist()
        finally:
            events.unpersist()
        self.store.commit(new)
        self.manifest = new
        self._finish_changelog(new)
        metrics.messages, metrics.max_seen_scn = asm.messages, asm.max_seen_scn
        metrics.ready = sum(t.rows for t in asm.tables.values())
        metrics.applied = self.last_applied
        metrics.stale = max(0, metrics.ready - metrics.applied)
        metrics.tables, metrics.pending = len(plans), self.last_pending
        metrics.incomplete_txns, metrics.dropped_txns = asm.incomplete, asm.dropped
        metrics.applied_scn = new.applied_scn
        metrics.lag_scn = max(0, metrics.max_seen_scn - new.applied_scn)
        metrics.lag_seconds = time.time() - new.applied_ts if new.applied_ts else None
        metrics.duration_seconds = time.monotonic() - started
        self.sink.record(metrics)

    def _write(self, asm: Any, plans: dict[str, Any], ddl: list[Any], version: str, batch_id: int) -> Manifest:
        """Run the table writes, the change log and the pending buffer as concurrent Spark jobs."""
        from pyspark.sql import functions as F

        m, opts = self.manifest, self.opts
        staging = self.store.staging_path(version)
        pending_dir = self.store.pending_path_for(version)
        with ThreadPoolExecutor(max_workers=self.threads) as pool:
            # Spark runs jobs from several threads at once: the driver-side overhead of one
            # overlaps the executors' work of another.
            tables = {name: pool.submit(apply_table, self.store, name, plan, version, opts, self.buckets)
                      for name, plan in plans.items()}
            pend = None
            if asm.watermark is not None:  # otherwise nothing waits for a later batch
                pend = pool.submit(lambda: asm.pending.write.mode("overwrite").parquet(pending_dir))
            logs = [f.result() for f in tables.values()]
            logs = [df for df in logs if df is not None]
            if ddl:
                logs.append(ddl_rows(asm.ready.where(F.col("kind") == "ddl")))
            if logs:
                union = logs[0]
                for part in logs[1:]:
                    union = union.unionByName(part)
                stage(union, staging)
            if pend is not None:
                pend.result()
        self.last_applied = max(0, parquet_rows(staging) - len(ddl))
        self.last_pending = parquet_rows(Path(pending_dir))
        tables_after = dict(m.tables)
        tables_after.update({name: plan.entry for name, plan in plans.items()})
        applied_scn = max([m.applied_scn] + [t.max_scn for t in asm.tables.values()])
        newest = max([t.max_ts for t in asm.tables.values() if t.max_ts is not None], default=None)
        return Manifest(batch=batch_id, query_id=self.query_id(), snapshot=version, buckets=self.buckets,
                        tables=tables_after, pending=version if self.last_pending else None,
                        changelog_staging=version if logs else None, applied_scn=applied_scn,
                        applied_ts=newest.timestamp() if newest else m.applied_ts)


def parquet_rows(directory: Path) -> int:
    """Rows in the parquet files under ``directory`` (footers only; 0 when absent)."""
    import pyarrow.parquet as pq

    if not directory.is_dir():
        return 0
    return sum(pq.ParquetFile(f).metadata.num_rows for f in directory.rglob("*.parquet"))
