"""The foreachBatch function: one micro-batch -> Delta commits, the driver deciding and committing.

Per batch (the events stay in the executors, :mod:`.executors`):

1. the executors project the events (:func:`.distfold.project`); the driver collects the
   projection and decides which transactions are whole and ready (:mod:`.assemble`), plans
   schemas, DDL and keys (:func:`.tablefold.plan_tables`), and lists each table's files as the
   batch found them;
2. the executors route the ready row changes to (table, bucket) groups, fold each group over
   its bucket's files, write the data files, the tombstones, their share of the change log and
   the events kept for the next batch (:func:`.distfold.fold_group`), and return the actions;
3. the driver commits, each commit carrying the application transaction (query id, batch id),
   in this order: the change log; per table its tombstones, then its rows; the job state.

A batch Spark replays after a crash skips each commit it finds made and folds over each
table as the batch first found it (:meth:`.lakestore.DeltaLake.snapshot_files`), so the
change log and the tables each get the batch exactly once, whatever commit the crash followed.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from typing import Any

from replicator.errors import DataError
from replicator.spark.assemble import assemble
from replicator.spark.distfold import BatchTask, TableTask
from replicator.spark.executors import BatchExecutors, LocalBatch, SparkBatch
from replicator.spark.keys import KeyResolver
from replicator.spark.lakestore import DeltaLake
from replicator.spark.layout import table_arrow, tomb_arrow
from replicator.spark.metrics import BatchMetrics, MetricsSink
from replicator.spark.options import JobOptions
from replicator.spark.state import JobState
from replicator.spark.streamcheck import STREAM_CHECK_FAILED, StreamCheck
from replicator.spark.tablefold import TablePlan, change_rows, change_schema, plan_tables
from replicator.spark.tableschema import BUCKET

log = logging.getLogger("replicator.spark")
# Tests only: SIGKILL the driver right after the N-th commit of a kind ("changes", "tombstones",
# "table", "state"), e.g. "table:2"; a commit boundary per kind.
CRASH_ENV = "REPLICATOR_SPARK_TEST_KILL_AT"


class _Columns(dict[str, Any]):
    """The ready events' columns as Python lists, each made on first use: most are read for a
    few rows only (DDL, merge-on-read replays), and a list per column of every event was most of
    the driver's CPU of a batch."""

    def __init__(self, table: Any) -> None:
        super().__init__()
        self._table = table

    def __missing__(self, name: str) -> list[Any]:
        values: list[Any] = self._table.column(name).to_pylist()
        self[name] = values
        return values


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
        self.spark: Any = None
        self._started = threading.Event()
        self._crash = os.environ.get(CRASH_ENV, "")
        self._commits: dict[str, int] = {}
        self.after_batch: Any = None  # housekeeping between batches (job.py)
        self.stream_check = StreamCheck() if opts.hints.checkpoint_digests else None

    def set_query(self, query_id: str) -> None:
        """The streaming query's id (from the checkpoint): part of the application transaction id."""
        self.query_id = query_id
        self._started.set()

    @property
    def app_id(self) -> str:
        """The Delta application transaction id of this query's batches."""
        return f"replicator-spark-{self.query_id}"

    def __call__(self, batch: Any, batch_id: int) -> None:
        """Apply one micro-batch (``batch`` holds packed events, in the executors)."""
        self._started.wait(120)
        st = self.state
        if st.query_id == self.query_id and batch_id <= st.batch:
            log.info("batch %d was committed before a restart: skipped", batch_id)
            self.sink.record(BatchMetrics(batch_id, skipped=True, applied_scn=st.applied_scn))
            return
        spark = batch.sparkSession
        work = SparkBatch(
            spark, batch, st.pending_files, self.lake.pending_uri, self.lake.storage_options, self.opts.fold_partitions
        )
        try:
            self._apply(work, batch_id, BatchMetrics(batch_id), time.monotonic())
        finally:
            work.close()
        if self.after_batch is not None:
            self.after_batch(self)

    def apply_arrow(self, events: Any, batch_id: int) -> BatchMetrics:
        """Apply a batch of events given as an Arrow table, in this process (no Spark)."""
        metrics = BatchMetrics(batch_id)
        self._apply(
            LocalBatch(events, self.state.pending_files, self.lake.pending_uri, self.lake.storage_options),
            batch_id,
            metrics,
            time.monotonic(),
        )
        return metrics

    def _hit(self, kind: str) -> None:
        """The crash test hook: SIGKILL right after the N-th commit of ``kind``."""
        self._commits[kind] = n = self._commits.get(kind, 0) + 1
        if self._crash == f"{kind}:{n}":
            log.warning("test hook %s: killing the driver after commit %s #%d", CRASH_ENV, kind, n)
            os.kill(os.getpid(), signal.SIGKILL)

    def _apply(self, work: BatchExecutors, batch_id: int, metrics: BatchMetrics, started: float) -> None:
        st, opts, lake, app = self.state, self.opts, self.lake, self.app_id
        known = {n: s.key for n, s in st.tables.items() if s.key_origin}
        proj = work.project(known, self.keys)
        metrics.read_seconds = time.monotonic() - started
        metrics.events = proj.num_rows
        if self.stream_check is not None:
            self._check_stream(proj, batch_id, metrics)
        if not proj.num_rows:  # nothing new and nothing buffered: no commit at all
            metrics.applied_scn = st.applied_scn
            self.sink.record(metrics)
            return
        asm = assemble(
            proj,
            atomic=opts.atomic,
            applied_scn=st.applied_scn,
            pending_timeout=self.pending_timeout,
            was_applied=lake.applied_transactions,
        )
        if asm.error:
            raise DataError(f"batch {batch_id}: {asm.error}", 20003)
        if asm.dropped_replays:
            log.info(
                "batch %d: %d leftover(s) of transactions applied before (producer replay) dropped",
                batch_id,
                asm.dropped_replays,
            )
        ready = asm.ready
        ev: dict[str, Any] = _Columns(ready)
        plans = plan_tables(ev, st.tables, self.keys)
        for plan in plans.values():
            if not plan.schema.buckets:
                plan.schema.buckets = opts.buckets
            if not plan.schema.mode:
                plan.schema.mode = opts.mode
        replayed = self._replayed(plans, ev, st.applied_scn)
        if replayed:
            asm.decision.replayed = replayed

        log_done = lake.done(lake.changes_uri, app, batch_id)
        tasks = {
            name: self._task(name, plan, ev, app, batch_id)
            for name, plan in plans.items()
            if (plan.rows or plan.rewrite) and not lake.done(lake.table_uri(name), app, batch_id)
        }
        done = sorted(n for n, p in plans.items() if (p.rows or p.rewrite) and n not in tasks)
        bt = BatchTask(
            batch_id,
            asm.decision,
            tasks,
            lake.changes_uri,
            lake.pending_uri,
            lake.storage_options,
            opts.hints.timestamp,
            opts.hints.timestamp_tz,
            opts.unbounded_number,
            write_log=not log_done,
            want_lags=self.sink.lags is not None,
        )
        actions = work.fold(bt).to_pylist()
        metrics.fold_seconds = time.monotonic() - started - metrics.read_seconds
        missing: dict[str, int] = {}  # table -> row changes routed without their key
        for a in actions:
            if a["kind"] == "error":
                missing[a["tbl"]] = missing.get(a["tbl"], 0) + a["rows"]
        if missing:

            def lacks(n: str) -> str:
                key = plans[n].schema.key
                return "ROWID (rid)" if key is None else f"key columns {key}"

            detail = "; ".join(f"{n}: {c} change(s) without {lacks(n)}" for n, c in sorted(missing.items()))
            raise DataError(
                f"{len(missing)} table(s) have changes without their key values ({detail}); enable "
                "supplemental logging of the key, or use ROWID keys (--rowid-table, format rid 1)",
                20003,
            )
        committing = time.monotonic()
        import pyarrow.compute as pc

        top = pc.max(ready["commit_scn"]).as_py() if ready.num_rows else None
        applied_scn = max(st.applied_scn, top if top is not None else st.applied_scn)
        self._commit(actions, plans, tasks, ev, log_done, app, batch_id, applied_scn)
        infos = [json.loads(a["info"]) for a in actions if a["kind"] == "info"]
        pending = [a for a in actions if a["kind"] == "pending"]
        newest_ts = pc.max(ready["commit_ts"]).as_py() if ready.num_rows else None
        if newest_ts is None and ready.num_rows:
            newest_ts = pc.max(ready["k_ts"]).as_py()
        newest = newest_ts.timestamp() if newest_ts is not None else None
        pend_scns = None
        if asm.pending is not None and asm.pending.num_rows:
            mm = pc.min_max(asm.pending["commit_scn"]).as_py()
            pend_scns = (mm["min"], mm["max"])
        new = JobState(
            batch=batch_id,
            query_id=self.query_id,
            applied_scn=applied_scn,
            applied_ts=newest or st.applied_ts,
            tables={**st.tables, **{n: p.schema for n, p in plans.items()}},
            pending_files=[a["path"] for a in pending],
            pending_rows=sum(a["rows"] for a in pending),
            pending_scns=pend_scns,
        )
        lake.commit_state(new, app, batch_id)
        self._hit("state")
        self._drop_pending(st.pending_files, new.pending_files)
        self.state = new
        metrics.commit_seconds = time.monotonic() - committing
        by_table: dict[str, list[int]] = {}
        for a in actions:
            if a["kind"] == "info":
                i = json.loads(a["info"])
                n = by_table.setdefault(a["tbl"], [0, 0, 0, 0, 0])
                for k, key in enumerate(("files_read", "bytes_read", "files_removed", "files_added", "bytes_added")):
                    n[k] += i[key]
        metrics.io = by_table
        visible = time.time()
        self.sink.add_lags([visible - t / 1e6 for i in infos for t in i.get("commit_ts", ())])
        metrics.messages, metrics.max_seen_scn = asm.messages, asm.max_seen_scn
        metrics.ready = sum(len(p.rows) for p in plans.values())
        metrics.applied = sum(i["applied"] for i in infos)
        metrics.stale = sum(i["stale"] for i in infos) + len(asm.decision.replayed)
        metrics.tables, metrics.pending = len(plans), new.pending_rows
        metrics.incomplete_txns, metrics.dropped_txns = asm.incomplete, asm.dropped
        metrics.applied_scn = new.applied_scn
        metrics.lag_scn = max(0, metrics.max_seen_scn - new.applied_scn)
        metrics.lag_seconds = time.time() - new.applied_ts if new.applied_ts else None
        metrics.duration_seconds = time.monotonic() - started
        if done:
            log.info("batch %d: tables committed before a restart skipped: %s", batch_id, ", ".join(done))
        self.sink.record(metrics)

    def _check_stream(self, proj: Any, batch_id: int, metrics: BatchMetrics) -> None:
        """The producer's checkpoint digests against what the batch received (:mod:`.streamcheck`),
        before anything of the batch is committed."""
        from replicator.formats.olr_digest import StreamCheckFailed

        check = self.stream_check
        assert check is not None
        try:
            metrics.checkpoints_verified = check.take(proj)
        except StreamCheckFailed as exc:
            metrics.stream_check = f"failed {exc.code}"
            metrics.applied_scn = self.state.applied_scn
            self.sink.record(metrics)
            raise DataError(
                f"batch {batch_id}: the stream does not hold what the producer sent (checkpoint digests, "
                f"stream check {exc.code}): {exc.message}; the batch is not committed, the lake stays at "
                f"applied SCN {self.state.applied_scn}",
                STREAM_CHECK_FAILED,
            ) from exc
        metrics.stream_check = check.state

    def _task(self, name: str, plan: TablePlan, ev: dict[str, Any], app: str, batch: int) -> TableTask:
        """The table's part of the batch task: schemas, the files as the batch found them."""
        lake, unbounded = self.lake, self.opts.unbounded_number
        schema = plan.schema
        arrow, tomb = table_arrow(schema, unbounded), tomb_arrow(schema, unbounded)
        uri, tomb_uri = lake.table_uri(name), lake.tomb_uri(name)
        if not plan.rewrite:  # a rewrite replaces the schema in its commit
            lake.ensure(uri, arrow, [BUCKET])
            lake.ensure(tomb_uri, tomb, [BUCKET])
        first = schema.key_names[0]
        moves = any(ev["move"][i] for i in plan.rows)
        if schema.merge_on_read:
            from replicator.spark.mor import compact_table, recent_arrow

            old = self.state.tables.get(name)
            if plan.rewrite and old is not None:  # the records first, under the columns they were written with
                compact_table(lake, name, old, unbounded)
            else:
                recent = recent_arrow(schema, unbounded)
                lake.ensure(lake.recent_uri(name), recent, [BUCKET])
                return TableTask(
                    name,
                    schema,
                    arrow,
                    tomb,
                    uri,
                    tomb_uri,
                    [],
                    [],
                    dict(plan.renames),
                    False,
                    False,
                    whole=moves,
                    recent_uri=lake.recent_uri(name),
                    recent_arrow=recent,
                )
        files = lake.snapshot_files(uri, app, batch, first)
        tomb_files = lake.snapshot_files(tomb_uri, app, batch, "_key")
        # A small table folds as one group: each (table, bucket) group has a fixed cost (its blobs,
        # its reads and writes) that dwarfs the fold of a few thousand rows; the files stay per bucket.
        small = sum(f.size for f in (*files, *tomb_files)) < self.opts.whole_below_mb * 1048576
        return TableTask(
            name,
            schema,
            arrow,
            tomb,
            uri,
            tomb_uri,
            files,
            tomb_files,
            dict(plan.renames),
            plan.rewrite,
            plan.truncated_now,
            whole=plan.rewrite or moves or small,
        )

    def _commit(
        self,
        actions: list[dict[str, Any]],
        plans: dict[str, TablePlan],
        tasks: dict[str, TableTask],
        ev: dict[str, Any],
        log_done: bool,
        app: str,
        batch: int,
        applied_scn: int,
    ) -> None:
        """The change log, then per table its tombstones and its rows (the state follows)."""
        lake = self.lake
        if not log_done:
            adds = [a for a in actions if a["kind"] == "add" and a["target"] == "changes"]
            adds += self._ddl_log(plans, ev)
            if adds:
                lake.ensure(lake.changes_uri, change_schema(), ["table"])
                lake.commit(lake.changes_uri, adds, [], change_schema(), ["table"], app, batch)
                self._hit("changes")
        for name in sorted(tasks):
            task = tasks[name]
            for target, uri, schema in (
                ("tombstones", task.tomb_uri, task.tomb_arrow),
                ("table", task.uri, task.arrow),
                ("recent", task.recent_uri, task.recent_arrow),
            ):
                mine = [a for a in actions if a["tbl"] == name and a["target"] == target]
                adds = [a for a in mine if a["kind"] == "add"]
                removes = [a for a in mine if a["kind"] == "remove"]
                if not (adds or removes or (task.rewrite and target != "recent")) or lake.done(uri, app, batch):
                    continue
                if lake.open_table(uri) is None:
                    lake.ensure(uri, schema, [BUCKET])
                lake.commit(
                    uri, adds, removes, schema, [BUCKET], app, batch, overwrite=task.rewrite, applied_scn=applied_scn
                )
                self._hit(target)

    def _replayed(self, plans: dict[str, TablePlan], ev: dict[str, Any], applied_scn: int) -> list[str]:
        """Merge-on-read tables: the ready changes at or below the applied SCN that the change log
        holds (a producer replay), as :attr:`.assemble.Decision.replayed` names them."""
        out = []
        for name, plan in sorted(plans.items()):
            if not plan.schema.merge_on_read:
                continue
            old = {
                (ev["commit_scn"][i], ev["c_scn"][i], ev["c_idx"][i], ev["elem"][i])
                for i in plan.rows
                if ev["commit_scn"][i] is not None and ev["commit_scn"][i] <= applied_scn
            }
            if old:
                out += [f"{name}:{p[0]}:{p[1]}:{p[2]}:{p[3]}" for p in sorted(self.lake.logged_positions(name, old))]
        return out

    def _ddl_log(self, plans: dict[str, TablePlan], ev: dict[str, Any]) -> list[dict[str, Any]]:
        """The change-log rows of the batch's DDL, written by the driver (a few rows)."""
        from replicator.spark.lakestore import dir_name
        from replicator.spark.layout import filesystem, write_files

        out = []
        for name, plan in sorted(plans.items()):
            if not plan.ddl:
                continue
            rows = change_rows({"_ready": self._ready_table(ev)}, name, [], [], plan.ddl)
            fs = filesystem(self.lake.changes_uri, self.lake.storage_options)
            for a in write_files(
                fs, rows, ["commit_scn", "c_scn", "c_idx", "elem"], None, prefix=f"table={dir_name(name)}/"
            ):
                out.append(
                    {
                        "kind": "add",
                        "target": "changes",
                        "tbl": name,
                        "path": a["path"],
                        "size": a["size"],
                        "part": json.dumps({"table": name}),
                        "stats": a["stats"],
                    }
                )
        return out

    @staticmethod
    def _ready_table(ev: dict[str, Any]) -> Any:
        import pyarrow as pa

        names = [
            "kind",
            "commit_scn",
            "c_scn",
            "c_idx",
            "elem",
            "xid",
            "sql",
            "rid",
            "commit_ts",
            "k_partition",
            "k_offset",
        ]
        table = pa.table({n: pa.array(ev[n]) for n in names})
        return table.append_column("op", pa.array([None] * len(ev["kind"]), pa.string()))

    def _drop_pending(self, old: list[str], new: list[str]) -> None:
        """Remove the pending files the committed state no longer names."""
        from replicator.spark.layout import filesystem

        gone = [p for p in old if p not in set(new)]
        if not gone:
            return
        fs = filesystem(self.lake.pending_uri, self.lake.storage_options)
        for path in gone:
            try:
                fs.delete_file(path)
            except OSError:
                pass
