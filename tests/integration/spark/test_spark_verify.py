"""``replicator verify --sink delta:LAKE``: redo -> replicator -> Kafka (tansu) -> the Spark job
(local[2]) -> a Delta lake, verified against the redo: its change log change by change and its
current-state tables row by row, up to the lake's applied SCN. A clean lake verifies OK; a row
changed in a current table (written with deltalake) is found with its table and key; a
change-log row removed is found with its position. With checkpoint digests on a one-partition
topic the job checks every segment as it applies batches; a message lost upstream stops it with
error 20101 before the batch that misses it commits."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka_broker import Broker, tansu_binary
from spark_kafka import create_topic, produce_lines
from spark_pipeline import FORMAT, Case, job_command, kafka_config, make_case, produce, run_in_process

from replicator.verify.command import build_parser, verify
from replicator.verify.report import Report

TOPIC = "olr.verify"


@pytest.fixture(scope="module")
def kafka() -> Iterator[Broker]:
    """The module's broker (the shared fixture is per test)."""
    broker = Broker(tansu_binary())
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def lake(spark: Any, kafka: Broker, tmp_path_factory: pytest.TempPathFactory) -> tuple[Case, Path, Path]:
    """A small mixed workload replicated through Kafka into a lake: (case, replicator config, lake)."""
    root = tmp_path_factory.mktemp("spark-verify")
    case = make_case(root / "case", events=150, wide=False, big=False)
    create_topic(kafka.bootstrap, TOPIC, 2)
    produce(case, kafka.bootstrap, TOPIC)
    config = kafka_config(case, kafka.bootstrap, TOPIC)
    path = root / "lake"
    run_in_process(spark, [*job_command(path, config, *case.rowid_args()), "--available-now"])
    return case, config, path


def _verify(config: Path, lake: Path) -> Report:
    return verify(build_parser().parse_args(["-f", str(config), "--sink", f"delta:{lake}", "--max-report", "100"]))


def _copy(lake: Path, name: str) -> Path:
    out = lake.parent / name
    shutil.copytree(lake, out)
    return out


def test_a_clean_lake_verifies(lake: tuple[Case, Path, Path]) -> None:
    case, config, path = lake
    report = _verify(config, path)
    text = report.text()
    assert report.ok, text
    assert report.result.redo_changes == report.result.sink_changes > 50, text
    assert report.state is not None and report.state.tables
    assert sum(t["lake_rows"] for t in report.state.tables) == sum(len(r) for r in case.tables.values()) > 20, text
    assert "OK: the sink holds exactly" in text and "current-state tables at applied SCN" in text


def test_a_row_changed_in_a_current_table_is_found(lake: tuple[Case, Path, Path]) -> None:
    from deltalake import DeltaTable

    from replicator.spark.lake_read import LakeReader

    case, config, path = lake
    changed = _copy(path, "lake-row-changed")
    reader = LakeReader(str(changed))
    table = next(t for t in sorted(case.tables) if case.tables[t])
    column = next(c for c, t in case.types[table].items() if t.startswith("VARCHAR2") and c not in case.keys[table])
    key_names = reader.key_columns(table)  # _rowid: the workload's tables have no supplemental logging
    row = reader.current_rows(table, with_metadata=True).to_pylist()[0]
    predicate = " AND ".join(
        f'"{k}" = {row[k]!r}' if isinstance(row[k], str) else f'"{k}" = {row[k]}' for k in key_names
    )
    dt = DeltaTable(str(changed / "tables" / table))
    assert dt.update(updates={f'"{column}"': "'changed behind the job'"}, predicate=predicate)["num_updated_rows"] == 1

    report = _verify(config, changed)
    assert not report.ok
    assert report.result.total == 0, report.text()  # the change log is intact
    assert report.state is not None and report.state.counts == {"missing": 0, "extra": 0, "differs": 1}
    found = report.state.differences[0]
    assert (found.kind, found.table, found.columns) == ("differs", table, [column])
    assert found.key == {k: str(row[k]) for k in key_names} or found.key == {k: row[k] for k in key_names}
    assert f"differs    {table} key" in report.text()


def test_a_change_log_row_removed_is_found_at_its_position(lake: tuple[Case, Path, Path]) -> None:
    from deltalake import DeltaTable

    case, config, path = lake
    removed = _copy(path, "lake-log-row-removed")
    dt = DeltaTable(str(removed / "changes"))
    rows = [r for r in dt.to_pyarrow_table().to_pylist() if r["op"] in ("c", "u", "d")]
    victim = rows[len(rows) // 2]
    predicate = (
        f"c_scn = {victim['c_scn']} AND c_idx = {victim['c_idx']} AND elem = {victim['elem']} "
        f"AND xid = '{victim['xid']}'"
    )
    assert dt.delete(predicate)["num_deleted_rows"] == 1

    report = _verify(config, removed)
    assert not report.ok
    assert report.result.counts == {"missing": 1, "duplicated": 0, "differs": 0, "extra": 0}, report.text()
    (missing,) = report.details
    assert (missing.kind, missing.c_scn, missing.c_idx, missing.xid, missing.table) == (
        "missing",
        victim["c_scn"],
        victim["c_idx"],
        victim["xid"],
        victim["table"],
    )
    assert missing.key == {"rid": victim["rid"]}  # the lake keys these tables by ROWID
    assert report.state is not None and report.state.total == 0  # the current tables are intact
    assert f"missing    c_scn {victim['c_scn']} c_idx {victim['c_idx']}" in report.text()


# -- the job's continuous check of the checkpoint digests ---------------------------------------


def _records(broker: Broker, topic: str) -> list[tuple[bytes | None, bytes]]:
    """(key, value) of every record of a one-partition topic, in order."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "copy",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out = []
        while True:
            record = consumer.poll(10)
            assert record is not None, f"{topic}: no end of partition within 10 s"
            if record.error() is not None:
                assert record.error().code() == KafkaError._PARTITION_EOF
                return out
            out.append((record.key(), record.value()))
    finally:
        consumer.close()


def _metrics(lake: Path) -> list[dict[str, Any]]:
    path = lake / "_metrics" / "batches.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def signed(
    kafka: Broker, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Case, Path, list[tuple[bytes | None, bytes]]]:
    """A workload replicated with checkpoint digests to a one-partition topic: (case, config, records)."""
    root = tmp_path_factory.mktemp("spark-verify-digests")
    case = make_case(root / "case", events=150, wide=False, big=False, fmt={**FORMAT, "checkpoint-digests": 1})
    doc = json.loads(case.config.read_text())
    doc["source"][0]["flags"] = doc["source"][0].get("flags", 0) | 0x1000  # checkpoint messages are sent
    case.config.write_text(json.dumps(doc))
    create_topic(kafka.bootstrap, "signed", 1)
    produce(case, kafka.bootstrap, "signed")
    records = _records(kafka, "signed")
    assert sum(b'"digests"' in value for _, value in records) > 3
    return case, kafka_config(case, kafka.bootstrap, "signed"), records


def _olr_config(config: Path, topic: str) -> Path:
    doc = json.loads(config.read_text())
    doc["target"][0]["writer"]["topic"] = topic
    path = config.parent / f"{topic}.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_job_checks_the_checkpoint_digests_batch_by_batch(
    spark: Any, kafka: Broker, signed: Any, tmp_path: Path
) -> None:
    case, config, _ = signed
    path = tmp_path / "lake"
    run_in_process(
        spark, [*job_command(path, config, *case.rowid_args()), "--available-now", "--max-offsets-per-trigger", "40"]
    )
    batches = [m for m in _metrics(path) if not m["skipped"]]
    assert len(batches) > 2 and all(m["stream_check"] == "on" for m in batches), batches
    assert sum(m["checkpoints_verified"] for m in batches) > 3
    assert any(m["pending"] for m in batches), "a transaction should span batches (pending events checked once)"
    report = _verify(config, path)
    assert report.ok, report.text()


def test_a_message_lost_upstream_stops_the_job_before_it_commits(
    spark: Any, kafka: Broker, signed: Any, tmp_path: Path
) -> None:
    from replicator.errors import ReplicatorError
    from replicator.spark.lake_read import LakeReader

    case, config, records = signed
    rows = [i for i, (_, value) in enumerate(records) if b'"op":"u"' in value or b'"op":"c"' in value]
    lost = rows[len(rows) * 2 // 3]  # after a few checkpoints: earlier batches commit
    create_topic(kafka.bootstrap, "lossy", 1)
    produce_lines(kafka.bootstrap, "lossy", [r for i, r in enumerate(records) if i != lost], partition=0)
    path = tmp_path / "lake"
    with pytest.raises(ReplicatorError) as failed:
        run_in_process(
            spark,
            [
                *job_command(path, _olr_config(config, "lossy"), *case.rowid_args()),
                "--available-now",
                "--max-offsets-per-trigger",
                "40",
            ],
        )
    assert failed.value.code == 20101 and "stream check 10403" in failed.value.message, failed.value.message
    last = _metrics(path)[-1]
    assert last["stream_check"] == "failed 10403"
    lost_scn = json.loads(records[lost][1])["e_scn"]
    applied = LakeReader(str(path)).applied_scn()
    assert applied < lost_scn, "the batch with the lost message must not be committed"
    assert 0 < applied, "the batches before it are"


def test_a_lake_ahead_of_the_redo_read_is_compared_up_to_the_end_of_the_redo(lake: tuple[Case, Path, Path]) -> None:
    _, config, path = lake
    logs = json.loads(config.read_text())["source"][0]["reader"]["redo-log"]
    report = verify(build_parser().parse_args(["-f", str(config), "--sink", f"delta:{path}", "--redo", *logs[:2]]))
    text = report.text()
    assert report.ok, text
    assert report.state is None and "the current-state tables are not compared" in text
    full = _verify(config, path)
    assert 0 < report.result.redo_changes < full.result.redo_changes, text


def test_a_merge_on_read_lake_verifies(spark: Any, lake: tuple[Case, Path, Path], tmp_path: Path) -> None:
    """The current rows of a merge-on-read table are its base files merged with its records."""
    case, config, _ = lake
    path = tmp_path / "lake"
    run_in_process(
        spark,
        [
            *job_command(path, config, *case.rowid_args()),
            "--available-now",
            "--mode",
            "merge-on-read",
            "--max-offsets-per-trigger",
            "60",
        ],
    )
    assert any((path / "_replicator" / "recent").rglob("*.parquet")), "the batches' records should not be merged yet"
    report = _verify(config, path)
    assert report.ok, report.text()
    assert report.state is not None
    assert sum(t["lake_rows"] for t in report.state.tables) == sum(len(r) for r in case.tables.values())
