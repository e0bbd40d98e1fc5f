"""Redo -> replicator -> Kafka (tansu) -> Spark job: key updates and producer replays.

A scenario of primary-key updates written as redo: single- and multi-column keys, a key
moved after an update of the same row in its transaction, a key moved right after its
insert, chains of moves across micro-batches, NULLs, a delete and a rollback, on tables
with key-only supplemental logging (updates carry the key and the changed columns, as
OpenLogReplicator's default ``column: 0`` prints them). The expected tables come from
replaying the scenario itself (:mod:`replicator.redogen.final_state`). Primary keys come
from the replicator's schema checkpoint (``--olr-config``), whose newest files hold only a
reference to the dictionary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from spark_kafka import create_topic, produce_lines
from spark_pipeline import (
    FORMAT,
    Case,
    assert_tables_equal,
    job_command,
    kafka_config,
    kill_at,
    manifest,
    produce,
    run_in_process,
)


def key_case(out: Path) -> Case:
    """The key-update scenario, generated as redo."""
    from replicator.redogen.final_state import FinalState
    from replicator.redogen.generate import generate
    from replicator.redogen.scenario import ColumnSpec, Event, Scenario, TableSpec

    acct = TableSpec(
        "APP",
        "ACCT",
        [
            ColumnSpec("ID", "NUMBER(10)", False),
            ColumnSpec("NAME", "VARCHAR2(30)"),
            ColumnSpec("BAL", "NUMBER(12,2)"),
            ColumnSpec("CODE", "RAW(8)"),
            ColumnSpec("SEEN", "DATE"),
        ],
        ["ID"],
        supplemental="pk",
    )
    link = TableSpec(
        "APP",
        "LINK",
        [
            ColumnSpec("A", "NUMBER(10)", False),
            ColumnSpec("B", "VARCHAR2(10)", False),
            ColumnSpec("V", "VARCHAR2(20)"),
            ColumnSpec("W", "NUMBER(10)"),
        ],
        ["A", "B"],
        supplemental="pk",
    )
    E = Event
    acct_rows = [
        {"ID": i, "NAME": f"n{i}", "BAL": f"{i}0.25", "CODE": f"0A0B{i:02X}", "SEEN": "2025-01-02 03:04:05"}
        for i in range(1, 7)
    ]
    timeline = [
        *[E("insert", 1, "ACCT", r) for r in acct_rows],
        *[
            E("insert", 1, "LINK", {"A": a, "B": b, "V": f"v{a}{b}", "W": a * 10})
            for a, b in ((1, "a"), (1, "b"), (2, "a"), (3, "c"))
        ],
        E("commit", 1),
        E("update", 1, "ACCT", key={"ID": 1}, values={"BAL": "99.99"}),
        E("update", 1, "ACCT", key={"ID": 1}, values={"ID": 11}),  # after an update in the same transaction
        E("update", 1, "ACCT", key={"ID": 2}, values={"ID": 12, "NAME": "moved"}),  # from the stored row
        E("update", 1, "LINK", key={"A": 1, "B": "a"}, values={"B": "z"}),  # one key column of two
        E("commit", 1),
        E("insert", 2, "ACCT", {"ID": 7, "NAME": "new", "BAL": "1", "CODE": "FF"}),
        E("update", 2, "ACCT", key={"ID": 7}, values={"ID": 17}),  # moved right after its insert
        E("update", 2, "LINK", key={"A": 2, "B": "a"}, values={"A": 5, "B": "q", "V": "both"}),  # both columns
        E("commit", 2),
        E("update", 3, "ACCT", key={"ID": 11}, values={"ID": 21}),  # a chain, in a later batch
        E("delete", 3, "ACCT", key={"ID": 3}),
        E("update", 3, "LINK", key={"A": 3, "B": "c"}, values={"W": 5}),
        E("commit", 3),
        E("update", 4, "ACCT", key={"ID": 4}, values={"ID": 14}),
        E("rollback", 4),
        E("update", 1, "ACCT", key={"ID": 12}, values={"SEEN": None, "CODE": None}),
        E("update", 1, "ACCT", key={"ID": 21}, values={"ID": 31, "BAL": "-5.5"}),
        E("update", 1, "LINK", key={"A": 1, "B": "z"}, values={"A": 9}),
        E("update", 1, "LINK", key={"A": 9, "B": "z"}, values={"B": "y", "W": None}),
        E("commit", 1),
        E("update", 2, "ACCT", key={"ID": 5}, values={"ID": 15}),
        E("update", 2, "ACCT", key={"ID": 6}, values={"ID": 16}),
        E("update", 2, "ACCT", key={"ID": 15}, values={"NAME": "fifteen"}),
        E("commit", 2),
    ]
    sc = Scenario(tables=[acct, link], timeline=timeline, name="KEYS", format=dict(FORMAT))
    state = FinalState(sc)
    sc.timeline = state.watch(sc.timeline)
    result = generate(sc, out)
    assert result.expected is not None
    return Case(
        out,
        result.config,
        result.expected,
        {t.full_name: state.rows(t.full_name) for t in sc.tables},
        {t.full_name: {c.name: c.type for c in t.columns} for t in sc.tables},
        {t.full_name: list(t.primary_key) for t in sc.tables},
    )


def _consume(bootstrap: str, topic: str) -> list[dict[str, Any]]:
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "t", "enable.partition.eof": True})
    c.assign([TopicPartition(topic, 0, 0)])
    out = []
    try:
        while True:
            msg = c.poll(10)
            assert msg is not None, "no end of partition"
            if msg.error():
                assert msg.error().code() == KafkaError._PARTITION_EOF
                return out
            out.append({"key": msg.key(), "value": msg.value(), "doc": json.loads(msg.value())})
    finally:
        c.close()


@pytest.mark.slow
def test_key_updates_replay_leftover_and_pending_check(where: Any, broker: Any, tmp_path: Path) -> None:
    """On local[2] and on the standalone cluster: key moves across buckets and batches."""
    case = key_case(tmp_path / "case")
    topic = "keys"
    create_topic(broker.bootstrap, topic, 1)
    produce(case, broker.bootstrap, topic)
    cfg = kafka_config(case, broker.bootstrap, topic)
    lake = tmp_path / "lake"
    # No --key options: the keys come from the schema checkpoint the replicator left behind.
    base = where.command(lake, cfg, "--max-offsets-per-trigger", "5", "--trigger-seconds", "0.1")
    where.drain([*base, "--available-now"])
    m = manifest(lake)
    assert m is not None and m["batch"] >= 5  # the moves spread over many batches
    assert {t: s["key_origin"] for t, s in m["tables"].items()} == {
        "APP.ACCT": "schema checkpoint",
        "APP.LINK": "schema checkpoint",
    }
    assert assert_tables_equal(lake, case) == 10

    # A producer replay that left a piece of an applied transaction (no begin): dropped at once.
    records = _consume(broker.bootstrap, topic)
    by_xid: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_xid.setdefault(r["doc"]["xid"], []).append(r)
    txn = max(by_xid.values(), key=len)
    produce_lines(broker.bootstrap, topic, [(r["key"], r["value"]) for r in txn[2:]])
    where.drain([*base, "--available-now"])
    batches = [json.loads(line) for line in (lake / "_metrics" / "batches.jsonl").read_text().splitlines()]
    assert batches[-1]["dropped_txns"] == 1 and batches[-1]["pending"] == 0
    assert assert_tables_equal(lake, case) == 10

    # The topic ends inside a new transaction: --available-now must not report success.
    begin = dict(txn[0]["doc"], e_scn=txn[0]["doc"]["e_scn"] + 10**6, xid="9.9.9")
    produce_lines(broker.bootstrap, topic, [(None, json.dumps(begin).encode())])
    where.drain([*base, "--available-now"], error="20100")


@pytest.mark.slow
def test_per_table_topics_read_through_a_pattern(spark: Any, broker: Any, tmp_path: Path) -> None:
    """The kafka writer's ``topic-per-table``: begin/commit on the main topic, rows on one topic per
    table; with ``-f`` the job subscribes to all of them by a pattern and still applies whole
    transactions."""
    case = key_case(tmp_path / "case")
    main, per_table = "ptt.main", "ptt.{owner}.{table}"
    for topic in (main, "ptt.APP.ACCT", "ptt.APP.LINK"):
        create_topic(broker.bootstrap, topic, 1)
    cfg = kafka_config(case, broker.bootstrap, main)
    doc = json.loads(cfg.read_text())
    doc["target"][0]["writer"]["topic-per-table"] = per_table
    cfg.write_text(json.dumps(doc))
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg), "--progress", "off"],
        cwd=case.out,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _consume(broker.bootstrap, "ptt.APP.ACCT") and _consume(broker.bootstrap, "ptt.APP.LINK")
    lake = tmp_path / "lake"
    run_in_process(spark, [*job_command(lake, cfg, "--max-offsets-per-trigger", "9"), "--available-now"])
    assert assert_tables_equal(lake, case) == 10


@pytest.mark.slow
@pytest.mark.parametrize("boundary", ["changes:4", "tombstones:1", "state:4"])
def test_sigkill_at_a_commit_boundary_and_restart_land_each_change_once(
    spark: Any, broker: Any, tmp_path: Path, boundary: str
) -> None:
    """SIGKILL of the driver right after the change log's, a tombstone table's or the state's commit
    (the e2e test kills after a table's): the restarted job applies the rest without waiting for
    anything, the tables equal the source and the change log holds every change once."""
    from deltalake import DeltaTable

    case = key_case(tmp_path / "case")
    topic = f"kill-{boundary.split(':')[0]}"
    create_topic(broker.bootstrap, topic, 1)
    produce(case, broker.bootstrap, topic)
    cfg = kafka_config(case, broker.bootstrap, topic)
    lake = tmp_path / "lake"
    base = job_command(lake, cfg, "--max-offsets-per-trigger", "6", "--trigger-seconds", "0.1")
    kill_at(base, boundary)
    started = time.monotonic()
    run_in_process(spark, [*base, "--available-now"])
    assert time.monotonic() - started < 120  # nothing waited for the 300 s pending timeout
    assert assert_tables_equal(lake, case) == 10
    batches = [json.loads(line) for line in (lake / "_metrics" / "batches.jsonl").read_text().splitlines()]
    assert batches[-1]["pending"] == 0 and not any(b["dropped_txns"] for b in batches)
    changes = DeltaTable(str(lake / "changes")).to_pyarrow_table(columns=["op", "commit_scn", "c_scn", "c_idx"])
    rows = [r for r in changes.to_pylist() if r["op"] != "ddl"]
    assert len(rows) == len({(r["commit_scn"], r["c_scn"], r["c_idx"]) for r in rows})  # none twice
    assert len(rows) == sum(
        1
        for line in case.expected_json.read_bytes().splitlines()
        for el in json.loads(line)["payload"]
        if el["op"] in ("c", "u", "d")
    )
