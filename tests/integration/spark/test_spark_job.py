"""The job in-process on one SparkSession: schema evolution, Debezium input, clear failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from spark_kafka import create_topic, produce_lines
from spark_pipeline import lake_rows

from replicator.errors import ReplicatorError

COLS = [
    {"name": "ID", "type": "number", "precision": 10, "scale": 0, "nullable": False},
    {"name": "A", "type": "varchar2", "length": 10, "nullable": True},
]


class Stream:
    """Builds OLR JSON transactions (scn-type 8, schema 1) with consecutive positions."""

    def __init__(self) -> None:
        self.scn = 1000
        self.lines: list[tuple[bytes | None, bytes]] = []
        self.xid = 0

    def txn(self, *payload: dict[str, Any]) -> None:
        self.scn += 10
        self.xid += 1
        begin_scn, commit_scn, xid = self.scn, self.scn + 5, f"1.{self.xid}.7"
        elements = [{"op": "begin"}, *payload, {"op": "commit"}]
        for idx, el in enumerate(elements, start=1):
            doc = {
                "e_scn": commit_scn,
                "e_tm": commit_scn * 10**9,
                "c_scn": begin_scn,
                "c_idx": idx,
                "xid": xid,
                "payload": [el],
            }
            self.lines.append((None, json.dumps(doc).encode()))


def dml(op: str, before: dict | None = None, after: dict | None = None, columns: list | None = None) -> dict:
    """A row change element of table APP.T."""
    schema: dict[str, Any] = {"owner": "APP", "table": "T"}
    if columns:
        schema["columns"] = columns
    el: dict[str, Any] = {"op": op, "schema": schema}
    if before is not None:
        el["before"] = before
    if after is not None:
        el["after"] = after
    return el


def ddl(sql: str) -> dict:
    """A DDL element of table APP.T."""
    return {"op": "ddl", "schema": {"owner": "APP", "table": "T"}, "sql": sql}


def _run(spark: Any, broker: Any, lake: Path, topic: str, **extra: Any) -> None:
    from replicator.spark.job import run_job
    from replicator.spark.options import JobOptions

    opts = JobOptions(
        lake=str(lake),
        bootstrap_servers=broker.bootstrap,
        topic=topic,
        available_now=True,
        keys={"APP.T": ["ID"]},
        **extra,
    )
    assert run_job(opts, spark=spark) == 0


def _table(lake: Path, name: str = "APP.T") -> dict[Any, dict[str, Any]]:
    return {str(r["ID"]): {k: v for k, v in r.items() if not k.startswith("_")} for r in lake_rows(lake, name)}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_ddl_add_rename_drop_truncate_and_replay(spark: Any, broker: Any, tmp_path: Path, mode: str) -> None:
    """Schema changes mid-stream in both table modes (merge-on-read merges its records before a rewrite)."""
    topic, lake = f"ddl-{mode}", tmp_path / "lake"
    create_topic(broker.bootstrap, topic, 1)
    s = Stream()
    s.txn(dml("c", after={"ID": 1, "A": "x"}, columns=COLS), dml("c", after={"ID": 2, "A": "y"}))
    s.txn(ddl("ALTER TABLE APP.T ADD (B NUMBER(5))"))
    s.txn(dml("c", after={"ID": 3, "A": "z", "B": 7}), dml("u", {"ID": 1, "B": None}, {"ID": 1, "B": 5}))
    produce_lines(broker.bootstrap, topic, s.lines)
    _run(spark, broker, lake, topic, mode=mode)
    rows = _table(lake)
    assert rows == {
        "1": {"ID": 1, "A": "x", "B": 5},
        "2": {"ID": 2, "A": "y", "B": None},
        "3": {"ID": 3, "A": "z", "B": 7},
    }

    first = len(s.lines)
    s.txn(ddl('ALTER TABLE "APP"."T" RENAME COLUMN A TO A2'), dml("u", {"ID": 2, "A2": "y"}, {"ID": 2, "A2": "yy"}))
    s.txn(ddl("ALTER TABLE APP.T DROP COLUMN B"))
    produce_lines(broker.bootstrap, topic, s.lines[first:])
    _run(spark, broker, lake, topic, mode=mode)
    assert _table(lake) == {"1": {"ID": 1, "A2": "x"}, "2": {"ID": 2, "A2": "yy"}, "3": {"ID": 3, "A2": "z"}}

    second = len(s.lines)
    s.txn(ddl("TRUNCATE TABLE APP.T"))
    s.txn(dml("c", after={"ID": 9, "A2": "n"}))
    produce_lines(broker.bootstrap, topic, s.lines[second:] + s.lines)  # and a replay of everything
    _run(spark, broker, lake, topic, mode=mode)
    assert _table(lake) == {"9": {"ID": 9, "A2": "n"}}  # nothing from before the TRUNCATE comes back


@pytest.mark.slow
def test_debezium_events_from_the_replicator(spark: Any, broker: Any, tmp_path: Path) -> None:
    import subprocess
    import sys

    from spark_pipeline import kafka_config
    from spark_values import actual, expected, same

    from replicator.redogen.demo import demo_scenario
    from replicator.redogen.final_state import FinalState
    from replicator.redogen.generate import generate

    sc = demo_scenario()
    sc.format = {"type": "debezium-envelope"}
    state = FinalState(sc)
    sc.timeline = state.watch(sc.timeline)
    result = generate(sc, tmp_path / "case")
    create_topic(broker.bootstrap, "dbz", 2)
    case = type("C", (), {"config": result.config, "out": tmp_path / "case"})
    cfg = kafka_config(case, broker.bootstrap, "dbz")  # type: ignore[arg-type]
    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg), "--progress", "off"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lake = tmp_path / "lake"
    from replicator.spark.job import run_job
    from replicator.spark.options import JobOptions

    assert (
        run_job(
            JobOptions(lake=str(lake), bootstrap_servers=broker.bootstrap, topic="dbz", available_now=True), spark=spark
        )
        == 0
    )
    for t in sc.tables:
        types = {c.name: c.type for c in t.columns}
        want = {str(r["ID"]): r for r in state.rows(t.full_name)}
        got = {str(r["ID"]): r for r in lake_rows(lake, t.full_name)}
        assert sorted(want) == sorted(got), t.full_name
        for key, w in want.items():
            for c in ("NAME", "EMAIL", "BALANCE", "CREATED", "CUSTOMER_ID", "AMOUNT", "STATUS", "NOTE"):
                if c in types:  # columns whose Debezium encoding maps back to the same value
                    a, b = expected(types[c], w.get(c)), actual(types[c], got[key].get(c))
                    assert same(types[c], a, b), (t.full_name, key, c, a, b)


def test_a_message_without_commit_scn_stops_the_job_with_advice(spark: Any, broker: Any, tmp_path: Path) -> None:
    create_topic(broker.bootstrap, "plain", 1)
    doc = {"scn": 5, "c_scn": 5, "c_idx": 1, "xid": "1.2.3", "payload": [{"op": "begin"}]}
    produce_lines(broker.bootstrap, "plain", [(None, json.dumps(doc).encode())])
    with pytest.raises(ReplicatorError, match="scn-type to 8"):
        _run(spark, broker, tmp_path / "lake", "plain")


@pytest.mark.slow
def test_debezium_bytes_in_both_binary_handling_modes(spark: Any, broker: Any, tmp_path: Path) -> None:
    """RAW values written by the replicator's Debezium format as base64 (the default) and as hex.

    ``bytes`` is a Connect ``bytes`` schema with base64 text: the lake column is binary. In
    ``hex`` (like ``base64`` and ``base64-url-safe``) Debezium declares a ``string`` schema, so
    nothing says the column is binary: the lake keeps the producer's text, unchanged.
    """
    import subprocess
    import sys

    from spark_pipeline import job_command, kafka_config, run_in_process

    from replicator.redogen.generate import generate
    from replicator.redogen.scenario import ColumnSpec, Event, Scenario, TableSpec

    values = {1: "ABCD", 2: "00FF10", 3: "DEADBEEF0001", 4: None}  # ABCD is also valid base64 text
    table = TableSpec("APP", "BIN", [ColumnSpec("ID", "NUMBER(10)", False), ColumnSpec("R", "RAW(16)")], ["ID"])
    for mode in ("bytes", "hex"):
        sc = Scenario(
            tables=[table],
            name="BIN",
            timeline=[*[Event("insert", 1, "BIN", {"ID": k, "R": v}) for k, v in values.items()], Event("commit", 1)],
            format={"type": "debezium-envelope", "binary-handling-mode": mode},
        )
        result = generate(sc, tmp_path / mode, with_expected=False)
        topic = f"bin-{mode}"
        create_topic(broker.bootstrap, topic, 1)
        case = type("C", (), {"config": result.config, "out": tmp_path / mode})
        cfg = kafka_config(case, broker.bootstrap, topic)  # type: ignore[arg-type]
        proc = subprocess.run(
            [sys.executable, "-m", "replicator", "run", "-f", str(cfg), "--progress", "off"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        lake = tmp_path / f"lake-{mode}"
        run_in_process(spark, [*job_command(lake, cfg), "--available-now"])  # the mode comes from the config
        got = {r["ID"]: r["R"] for r in lake_rows(lake, "APP.BIN")}
        if mode == "bytes":
            assert got == {k: None if v is None else bytes.fromhex(v) for k, v in values.items()}
        else:
            assert got == {k: None if v is None else v.lower() for k, v in values.items()}


def _small_lake(spark: Any, broker: Any, tmp_path: Path, topic: str) -> Path:
    lake = tmp_path / "lake"
    create_topic(broker.bootstrap, topic, 1)
    s = Stream()
    s.txn(dml("c", after={"ID": 1, "A": "x"}, columns=COLS), dml("c", after={"ID": 2, "A": "y"}))
    s.txn(dml("d", before={"ID": 2}), dml("u", {"ID": 1}, {"ID": 1, "A": "z"}))
    produce_lines(broker.bootstrap, topic, s.lines)
    _run(spark, broker, lake, topic)
    return lake


def test_spark_reads_the_current_rows(spark: Any, broker: Any, tmp_path: Path) -> None:
    """``replicator.spark.read_table``: Spark's parquet reader over the table's current files."""
    from replicator.spark import read_table

    lake = _small_lake(spark, broker, tmp_path, "read-parquet")
    rows = read_table(spark, str(lake), "APP.T").collect()
    assert [(r["ID"], r["A"]) for r in rows] == [(1, "z")]


def test_spark_delta_reads_the_tables(spark: Any, broker: Any, tmp_path: Path) -> None:
    """Spark's own Delta reader (delta-spark) on the tables delta-rs committed."""
    from replicator.spark.job import delta_spark_available

    if not delta_spark_available(spark):
        pytest.skip(
            "delta-spark and its jars are not on this session's classpath (pip install delta-spark and "
            "--packages io.delta:delta-spark_2.13:<version>): Spark's Delta reader is not exercised"
        )
    lake = _small_lake(spark, broker, tmp_path, "read-delta")
    df = spark.read.format("delta").load(str(lake / "tables" / "APP.T"))
    assert [(r["ID"], r["A"]) for r in df.collect()] == [(1, "z")]
    assert spark.read.format("delta").load(str(lake / "changes")).count() == 4
