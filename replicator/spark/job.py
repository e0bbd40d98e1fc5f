"""Start, run and stop the streaming job.

``run_job`` builds (or reuses) a SparkSession, picks the source and the store, starts the
``foreachBatch`` query with its checkpoint, and waits: for ever, until the topic is
drained (``--available-now``), or until no input arrived for ``--until-idle`` seconds.
SIGTERM/SIGINT stop the query between batches' commits (each commit is atomic, so even a
hard kill leaves the lake at the last committed batch; the next run resumes from there).
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from replicator.errors import DataError, ReplicatorError, RuntimeFailure
from replicator.spark.options import JobOptions

log = logging.getLogger("replicator.spark")
DELTA_TABLE_CLASS = "io.delta.tables.DeltaTable"
# Values are converted as UTC wall clock; the fold merges row maps with map_concat, where
# a later image's value must replace an earlier one.
REQUIRED_CONF = {"spark.sql.session.timeZone": "UTC", "spark.sql.mapKeyDedupPolicy": "LAST_WIN"}
# Defaults only: spark-submit --conf and spark-defaults.conf override them.
DEFAULT_CONF = {"spark.sql.streaming.stopTimeout": "60s", "spark.sql.execution.arrow.pyspark.enabled": "true"}
# Always, unless the job's own --conf says otherwise (PySpark's launcher sets it to true).
QUIET_CONF = {"spark.ui.showConsoleProgress": "false"}
# The driver JVM the job launches itself (not under spark-submit): it only moves the parsed
# events' blobs and plans micro-batches, so the C2 compiler's warm-up costs more CPU than it
# saves (measured: a third less JVM CPU, drain 0.45 -> 0.36 CPU-s per 1,000 rows on 2 cores),
# and one GC thread is enough.
DRIVER_JAVA_OPTIONS = ("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


def _launch_conf(opts: JobOptions, extra: dict[str, str] | None) -> Any:
    """Settings that only count when the JVM starts (None when it runs already or the user set them)."""
    from pyspark import SparkConf

    key, value = DRIVER_JAVA_OPTIONS
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # spark-submit started the JVM and us
        return None
    if extra and key in extra:  # replicator spark run --conf: honoured at launch, not ignored
        return SparkConf(loadDefaults=False).set(key, extra[key])
    conf_dir = os.environ.get("SPARK_CONF_DIR") or os.path.join(os.environ.get("SPARK_HOME", ""), "conf")
    defaults = os.path.join(conf_dir, "spark-defaults.conf")
    user_set = key in os.environ.get("PYSPARK_SUBMIT_ARGS", "") or (
        os.path.isfile(defaults) and key in Path(defaults).read_text(encoding="utf-8", errors="replace")
    )
    if user_set:
        return None
    return SparkConf(loadDefaults=False).set(key, value)


def build_session(opts: JobOptions, master: str | None = None, extra: dict[str, str] | None = None) -> Any:
    """A SparkSession set up for the job (UTC session time zone, quiet console).

    Settings given to spark-submit (``--conf``) or in spark-defaults win over the job's
    defaults; ``extra`` (``--conf`` of ``replicator spark run``) wins over both.
    """
    # Python workers must run this interpreter: it has pyarrow, confluent-kafka and replicator.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    # the JVM gateway (spark-submit's own when it started us)
    SparkContext._ensure_initialized(conf=None if SparkContext._gateway else _launch_conf(opts, extra))
    submitted = SparkConf()  # with the gateway: spark-submit's --conf, as spark.* system properties
    builder = SparkSession.builder.appName(opts.app_name)
    if master:
        builder = builder.master(master)
    for key, value in DEFAULT_CONF.items():
        if not submitted.contains(key):
            builder = builder.config(key, value)
    for key, value in {**QUIET_CONF, **(extra or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    for key, value in REQUIRED_CONF.items():
        spark.conf.set(key, value)
    return spark


def delta_spark_available(spark: Any) -> bool:
    """True when the delta-spark Python package and its jars are usable in ``spark``."""
    try:
        importlib.import_module("delta.tables")  # the delta-spark Python package
        jvm = spark.sparkContext._jvm  # no public API for a class check
        jvm.java.lang.Class.forName(DELTA_TABLE_CLASS, False, jvm.Thread.currentThread().getContextClassLoader())
        return True
    except Exception:  # noqa: BLE001 - ImportError, ClassNotFoundException, no JVM (Connect)
        return False


def make_lake(spark: Any, opts: JobOptions) -> Any:
    """The lake: Delta tables committed by the driver with delta-rs (Spark's Delta reads them too)."""
    from replicator.spark.lakestore import DeltaLake

    if opts.store == "spark-delta":
        raise ReplicatorError(
            "--store spark-delta: the executors write the data files and the driver commits them "
            "with delta-rs; Spark's own Delta reads the tables (replicator.spark.read_table), it "
            "does not write them: use --store auto or delta-rs",
            30002,
        )
    try:
        importlib.import_module("deltalake")
    except ImportError:
        raise ReplicatorError(
            "the deltalake package (delta-rs) is not installed: pip install 'replicator[spark]'", 30002
        ) from None
    log.info("store: Delta Lake tables: data files written by the executors, committed by delta-rs")
    return DeltaLake(opts.lake, opts.storage_options)


def run_job(
    opts: JobOptions,
    spark: Any = None,
    master: str | None = None,
    pending_timeout: float = 300.0,
    conf: dict[str, str] | None = None,
    stop: threading.Event | None = None,
    sink: Any = None,
) -> int:
    """Run the job until it is told (signal, ``stop``) or decides to stop; returns the exit code."""
    from replicator.spark.apply import BatchApplier
    from replicator.spark.housekeeping import scheduled_housekeeping
    from replicator.spark.metrics import MetricsSink, progress_listener
    from replicator.spark.stream import open_events

    own = spark is None
    spark = spark or build_session(opts, master, conf)
    for key, value in REQUIRED_CONF.items():  # also when the caller built the session
        spark.conf.set(key, value)
    sink = sink or MetricsSink(opts.lake)
    listener = progress_listener(sink)
    stop = stop or threading.Event()
    restore = _install_signals(stop)
    query = None
    try:
        lake = make_lake(spark, opts)
        applier = BatchApplier(opts, lake, sink, pending_timeout)
        applier.after_batch = scheduled_housekeeping(opts)
        events, _kind = open_events(spark, opts)
        writer = (
            events.writeStream.foreachBatch(applier)
            .option("checkpointLocation", opts.checkpoint)
            .queryName(opts.app_name.replace("-", "_"))
        )
        writer = (
            writer.trigger(availableNow=True)
            if opts.available_now
            else writer.trigger(processingTime=f"{opts.trigger_seconds} seconds")
        )
        spark.streams.addListener(listener)
        query = writer.start()
        applier.set_query(str(query.id))
        started = time.monotonic()
        while query.isActive and not stop.is_set():
            try:
                query.awaitTermination(0.5)
            except Exception as exc:  # noqa: BLE001 - StreamingQueryException: reported below
                raise _failure(exc) from None
            if opts.until_idle and _idle_for(sink, started) >= opts.until_idle and not query.status["isTriggerActive"]:
                log.info("no input for %.0fs: stopping", opts.until_idle)
                break
        if query.isActive:
            query.stop()
        error = query.exception()
        if error is not None:
            raise _failure(error)
        if opts.available_now and not stop.is_set():
            _check_drained(lake.load_state())
        return 0
    finally:
        if query is not None and query.isActive:
            query.stop()
        spark.streams.removeListener(listener)
        restore()
        if own:
            spark.stop()


def _check_drained(state: Any) -> None:
    """``--available-now`` succeeds only with nothing left waiting for the rest of a transaction."""
    if state.pending_rows:
        low, high = state.pending_scns or (None, None)
        raise DataError(
            f"--available-now: the topic ends inside transactions: {state.pending_rows} event(s) with "
            f"commit SCN {low}..{high} wait for the rest of their transaction (applied "
            f"SCN {state.applied_scn}); run again when the producer has written them",
            20100,
        )


def _idle_for(sink: Any, started: float) -> float:
    busy = [m.committed_at for m in sink.recent.values() if m.messages]
    last = max(busy) if busy else None
    return time.time() - last if last else time.monotonic() - started


_OURS = re.compile(r"replicator\.errors\.\w+: (\d{5}) (.*)")


def _failure(error: BaseException) -> ReplicatorError:
    """The job's own error when a batch raised one (it arrives wrapped by Spark), else a 10048."""
    text = str(error)
    m = _OURS.search(text)
    if m:
        return ReplicatorError(m[2].strip(), int(m[1]))
    first = next((line for line in text.splitlines() if line.strip()), type(error).__name__)
    return RuntimeFailure(f"the streaming query failed: {first.strip()}", 10048)


def _install_signals(stop: threading.Event) -> Any:
    """SIGTERM/SIGINT set ``stop`` (main thread only); returns a function restoring the old handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    for s in old:
        signal.signal(s, lambda *_: stop.set())

    def restore() -> None:
        """Put the previous signal handlers back."""
        for s, h in old.items():
            signal.signal(s, h)

    return restore
