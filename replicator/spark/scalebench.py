"""``replicator spark bench --stored-rows N``: per-batch cost against the size of the stored table.

A 10-column table (``BENCH.WIDE``: an integer key, integers, strings, a decimal, a date) of N
rows is written straight into the lake's layout -- Parquet files per bucket committed with
delta-rs, and the job state that names the table -- without Spark. Then ``--batches`` + 1
transactions of K updates each (one column changed, OpenLogReplicator's ``column: 0`` shape)
go to a one-partition topic, one transaction per micro-batch; the spread is ``uniform`` (keys
drawn from all N) or ``skewed`` (keys of 2 buckets only). Per batch the job's metrics and the
processes' CPU give: the driver's CPU (the job's Python process), the executors' CPU (the
Python workers and the JVM in local mode, the cluster's executors otherwise), data bytes read
and written, the driver's resident memory, rows/s; the medians are over the batches after the
first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

COLUMNS = [
    {"name": "ID", "type": "number", "precision": 12, "scale": 0, "nullable": False},
    *({"name": f"N{i}", "type": "number", "precision": 10, "scale": 0, "nullable": True} for i in range(1, 5)),
    *({"name": f"S{i}", "type": "varchar2", "length": 40, "nullable": True} for i in range(1, 4)),
    {"name": "AMOUNT", "type": "number", "precision": 12, "scale": 2, "nullable": True},
    {"name": "DAY", "type": "date", "nullable": True},
]
TABLE = "BENCH.WIDE"
BASE_SCN = 1_000_000


def seed(lake: str, rows: int, buckets: int, chunk: int = 1_000_000, mode: str = "copy-on-write") -> float:
    """Write ``rows`` rows of :data:`TABLE` into ``lake`` without Spark; returns the seconds taken."""
    import numpy as np
    import pyarrow as pa

    from replicator.spark.lakestore import DeltaLake
    from replicator.spark.layout import buckets_of, filesystem, table_arrow, tomb_arrow, write_files
    from replicator.spark.state import JobState
    from replicator.spark.tableschema import BUCKET, TableSchema

    started = time.monotonic()
    store = DeltaLake(lake)
    schema = TableSchema(TABLE, [dict(c) for c in COLUMNS], key=["ID"], key_origin="--key", buckets=buckets, mode=mode)
    arrow = table_arrow(schema, "string")
    data_schema = pa.schema([f for f in arrow if f.name != BUCKET])
    uri = store.table_uri(TABLE)
    store.ensure(uri, arrow, [BUCKET])
    store.ensure(store.tomb_uri(TABLE), tomb_arrow(schema, "string"), [BUCKET])
    fs = filesystem(uri, None)
    adds = []
    for lo in range(1, rows + 1, chunk):
        ids = np.arange(lo, min(rows, lo + chunk - 1) + 1, dtype=np.int64)
        n = len(ids)
        cols: dict[str, Any] = {"ID": ids}
        for i in range(1, 5):
            cols[f"N{i}"] = (ids * (7 + i)) % 1_000_003
        for i in range(1, 4):
            cols[f"S{i}"] = pa.array(np.char.add(f"s{i}-", (ids % 100_000).astype(str)).tolist(), pa.string())
        cols["AMOUNT"] = pa.array(ids % 100_000, pa.int64()).cast(pa.decimal128(21, 2)).cast(pa.decimal128(12, 2))
        cols["DAY"] = pa.array(1_700_000_000_000_000 + ids * 1_000_000, pa.int64()).cast(pa.timestamp("us"))
        cols["_commit_scn"] = np.full(n, BASE_SCN, np.int64)
        cols["_c_scn"] = np.full(n, BASE_SCN, np.int64)
        cols["_c_idx"] = ids
        cols["_elem"] = pa.array(np.zeros(n, np.int32))
        cols["_op"] = pa.array(["c"] * n, pa.string())
        cols["_xid"] = pa.array(["seed"] * n, pa.string())
        cols["_commit_ts"] = pa.array(np.full(n, 1_700_000_000_000_000, np.int64)).cast(pa.timestamp("us", tz="UTC"))
        table = pa.table({f.name: pa.array(cols[f.name]).cast(f.type) for f in data_schema})
        homes = buckets_of([str(i) for i in ids.tolist()], buckets)
        for b in range(buckets):
            part = table.filter(pa.array(homes == b))
            for a in write_files(fs, part, ["ID"], b):
                adds.append(
                    {"path": a["path"], "size": a["size"], "part": json.dumps(a["partition"]), "stats": a["stats"]}
                )
    store.commit(uri, adds, [], arrow, [BUCKET], "seed", 0, applied_scn=BASE_SCN)
    store.commit_state(JobState(batch=-1, query_id="seed", applied_scn=BASE_SCN, tables={TABLE: schema}), "seed", 0)
    return time.monotonic() - started


def update_keys(rows: int, count: int, spread: str, buckets: int, rng: Any) -> list[int]:
    """``count`` distinct keys of 1..rows: uniformly drawn, or drawn from the keys of buckets 0 and 1."""
    from replicator.spark.layout import buckets_of

    if spread == "uniform":
        return sorted(rng.sample(range(1, rows + 1), count))
    out: list[int] = []
    while len(out) < count:
        cand = rng.sample(range(1, rows + 1), min(rows, count * buckets))
        homes = buckets_of([str(c) for c in cand], buckets)
        out += [c for c, b in zip(cand, homes) if b < 2]
    return sorted(set(out[:count]))


def produce_updates(bootstrap: str, topic: str, batches: list[list[int]]) -> int:
    """One OLR JSON transaction per list of keys (each update sets N1 and S1); returns messages sent."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": True})
    sent = 0
    schema = {"owner": "BENCH", "table": "WIDE", "columns": COLUMNS}
    for t, keys in enumerate(batches):
        scn = BASE_SCN + 100 * (t + 1)
        base = {"e_scn": scn + 5, "e_tm": time.time_ns(), "c_scn": scn, "xid": f"9.{t}.1"}
        elements: list[dict[str, object]] = [{"op": "begin"}]
        elements += [
            {"op": "u", "schema": schema, "before": {"ID": k, "N1": 0}, "after": {"ID": k, "N1": t + 1, "S1": f"u{t}"}}
            for k in keys
        ]
        elements.append({"op": "commit"})
        for idx, el in enumerate(elements, start=1):
            p.produce(topic, json.dumps({**base, "c_idx": idx, "payload": [el]}).encode())
            sent += 1
            if sent % 50_000 == 0:
                p.poll(0)
    p.flush(60)
    return sent


def scale(work: Path, args: argparse.Namespace, bootstrap: str, spark: Any, cluster: Any) -> list[str]:
    """Seed, produce, drain; the lines to print."""
    import random

    from replicator.spark.benchprocs import CpuSink, create_topic
    from replicator.spark.job import run_job
    from replicator.spark.options import JobOptions

    lake = work / "lake-scale"
    seconds = seed(str(lake), args.stored_rows, args.buckets, mode=args.mode)
    stored_mb = sum(f.stat().st_size for f in (lake / "tables").rglob("*.parquet")) / 1e6
    rng = random.Random(11)
    keys = [
        update_keys(args.stored_rows, args.updates, args.spread, args.buckets, rng) for _ in range(args.batches + 1)
    ]
    topic = f"bench.scale.{int(time.time())}"
    create_topic(bootstrap, topic, 1)
    produce_updates(bootstrap, topic, keys)
    opts = JobOptions(
        lake=str(lake),
        bootstrap_servers=bootstrap,
        topic=topic,
        available_now=True,
        max_offsets_per_trigger=args.updates + 2,
        keys={TABLE: ["ID"]},
        whole_below_mb=args.whole_below_mb,
        fold_partitions=args.fold_partitions,
    )
    sink = CpuSink(str(lake), {args.broker_pid}, set(cluster.pids()) if cluster is not None else None)
    load_before = os.getloadavg()[0]
    run_job(opts, spark=spark, sink=sink)
    load = (load_before, os.getloadavg()[0])
    batches = [json.loads(line) for line in (lake / "_metrics" / "batches.jsonl").read_text().splitlines()]
    where = f"cluster of {args.cluster_workers} worker(s)" if cluster is not None else args.master
    lines = [
        f"scale: {TABLE} of {args.stored_rows:,} rows ({stored_mb:.0f} MB in {args.buckets} buckets, seeded "
        f"without Spark in {seconds:.1f} s, {args.mode}); {args.batches + 1} batches of {args.updates:,} "
        f"{args.spread} updates on {where}"
    ]
    per: dict[str, list[float]] = {k: [] for k in ("driver", "executors", "read", "written", "rss", "rate", "wall")}
    for i, (b, (prev, cur)) in enumerate(zip(batches, zip(sink.cpu, sink.cpu[1:]))):
        d = {k: cur[2][k] - prev[2][k] for k in ("driver", "jvm", "workers", "cluster")}
        executors = d["cluster"] + (d["workers"] if cluster is None else 0.0)
        io = [sum(v[j] for v in b.get("io", {}).values()) for j in range(5)]
        wall = cur[1] - prev[1]
        lines.append(
            f"  batch {b['batch']}: {b['applied']} rows in {wall:.2f} s ({b['applied'] / wall:.0f} rows/s); "
            f"CPU s driver {d['driver']:.2f}, driver JVM {d['jvm']:.2f}, executors {executors:.2f}; "
            f"read {io[0]} files {io[1] / 1e6:.1f} MB, removed {io[2]}, written {io[3]} files "
            f"{io[4] / 1e6:.1f} MB; driver RSS {cur[2]['rss_mb']:.0f} MB"
        )
        if i == 0:
            continue
        for k, v in (
            ("driver", d["driver"]),
            ("executors", executors),
            ("read", io[1] / 1e6),
            ("written", io[4] / 1e6),
            ("rss", cur[2]["rss_mb"]),
            ("rate", b["applied"] / wall),
            ("wall", wall),
        ):
            per[k].append(v)
    if per["driver"]:
        med = {k: statistics.median(v) for k, v in per.items()}
        lines.append(
            f"median of {len(per['driver'])} batches after the first: driver {med['driver']:.2f} CPU-s, "
            f"executors {med['executors']:.2f} CPU-s, read {med['read']:.1f} MB, written "
            f"{med['written']:.1f} MB, driver RSS {med['rss']:.0f} MB (peak {max(per['rss']):.0f}), "
            f"{med['rate']:.0f} rows/s ({med['wall']:.2f} s per batch); load average {load[0]:.1f} -> "
            f"{load[1]:.1f} on {os.cpu_count()} cores"
        )
    return lines
