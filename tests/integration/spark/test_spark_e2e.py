"""Redo -> replicator -> Kafka (tansu) -> Spark job -> lake tables equal to the source tables.

The scenario is redogen's ``mixed`` workload: tables with every column type (one with
values of thousands of characters), four sessions with interleaved transactions,
rollbacks, savepoints, inserts, updates and deletes. The expected tables come from
replaying the scenario itself (:mod:`replicator.redogen.final_state`), not from the
replicator's output. The job runs as a separate process so it can be SIGKILLed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from spark_kafka import create_topic
from spark_pipeline import (
    Case,
    assert_tables_equal,
    job_command,
    kafka_config,
    kill_at,
    make_case,
    manifest,
    positions,
    produce,
    run_job,
)

TOPIC = "olr.cdc"


def _metrics(lake: Path) -> list[dict[str, Any]]:
    path = lake / "_metrics" / "batches.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _changelog_rows(lake: Path) -> int:
    from deltalake import DeltaTable

    log = DeltaTable(str(lake / "changes")).to_pyarrow_table(columns=["op"])
    return sum(1 for op in log["op"].to_pylist() if op != "ddl")


def _row_changes(case: Case) -> int:
    return sum(
        1
        for line in case.expected_json.read_bytes().splitlines()
        for el in json.loads(line)["payload"]
        if el["op"] in ("c", "u", "d")
    )


@pytest.mark.slow
def test_kill_restart_and_replay_keep_tables_equal(where: Any, broker: Any, tmp_path: Path) -> None:
    """On local[2] and on the standalone cluster: SIGKILL after a table's commit, restart, replay."""
    case = make_case(tmp_path / "case", events=200, wide=False)
    # Three partitions: row messages are keyed by primary key, begin/commit are not, so a
    # transaction's messages spread over partitions and over micro-batches.
    create_topic(broker.bootstrap, TOPIC, 3)
    how = produce(case, broker.bootstrap, TOPIC)
    cfg = kafka_config(case, broker.bootstrap, TOPIC)
    lake = tmp_path / "lake"
    base = where.command(lake, cfg, *case.rowid_args())

    # 1. Small batches, SIGKILL of the driver between two tables' commits of a batch.
    kill_at([*base, "--max-offsets-per-trigger", "50", "--trigger-seconds", "0.2"], "table:5")
    st = manifest(lake)
    assert st is not None  # mid-stream: batches were committed before
    first = _metrics(lake)
    assert any(m["pending"] for m in first), "transactions should have been split across batches"
    from replicator.spark.lakestore import DeltaLake

    store = DeltaLake(str(lake))
    app = f"replicator-spark-{st['query_id']}"
    killed = [t for t in case.tables if store.done(store.table_uri(t), app, st["batch"] + 1)]
    assert killed, "the kill should land after a table's commit of the next batch"

    # 2. Restart from the checkpoint and drain the topic (local: in this process, no second JVM start).
    assert "Python data source" in where.drain([*base, "--available-now"])  # the source choice is logged
    rows = assert_tables_equal(lake, case)
    assert rows > 30
    before = {t: positions(lake, t) for t in case.tables}
    assert _changelog_rows(lake) == _row_changes(case), "each row change logged exactly once (" + how + ")"

    # 3. The whole topic a second time (the replicator restarted from scratch): duplicates.
    seen = len(_metrics(lake))
    produce(case, broker.bootstrap, TOPIC)
    where.drain([*base, "--available-now"])
    assert_tables_equal(lake, case)
    for table, old in before.items():
        new = positions(lake, table)
        assert new.keys() == old.keys()
        moved_back = [k for k in old if new[k] < old[k]]
        assert not moved_back, f"{table}: rows moved backwards: {moved_back[:3]}"
        assert new == old  # replayed changes are all older or equal: nothing moved at all
    replay = _metrics(lake)[seen:]
    assert sum(m["applied"] for m in replay) == 0 and sum(m["stale"] for m in replay) > 0
    assert _changelog_rows(lake) == _row_changes(case), "replays must not repeat in the change log"


def _kafka_jars() -> list[str]:
    import os

    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    found = [str(p) for p in jars.glob("spark-sql-kafka*.jar")]
    extra = os.environ.get("REPLICATOR_SPARK_KAFKA_JARS", "")
    return found + [p for p in extra.split(",") if p]


@pytest.mark.slow
def test_native_kafka_source(broker: Any, tmp_path: Path) -> None:
    jars = _kafka_jars()
    if not jars:
        pytest.skip(
            "Spark's Kafka connector (spark-sql-kafka jar) is not available: the native 'kafka' source "
            "is not exercised; set REPLICATOR_SPARK_KAFKA_JARS=<jar,...> (the connector and its "
            "kafka-clients/commons-pool2 dependencies) to run this test"
        )
    case = make_case(tmp_path / "case", events=150, wide=False, big=False)
    create_topic(broker.bootstrap, TOPIC, 2)
    produce(case, broker.bootstrap, TOPIC)
    lake = tmp_path / "lake"
    log = run_job(
        [
            *job_command(lake, kafka_config(case, broker.bootstrap, TOPIC), *case.rowid_args()),
            "--available-now",
            "--source",
            "kafka",
            "--conf",
            f"spark.jars={','.join(jars)}",
        ]
    )
    assert "native kafka format" in log
    assert_tables_equal(lake, case)
    assert manifest(lake) is not None
