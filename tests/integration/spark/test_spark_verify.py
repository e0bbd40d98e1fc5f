"""``replicator verify --sink delta:LAKE``: redo -> replicator -> Kafka (tansu) -> the Spark job
(local[2]) -> a Delta lake, verified against the redo: its change log change by change and its
current-state tables row by row, up to the lake's applied SCN. A clean lake verifies OK; a row
changed in a current table (written with deltalake) is found with its table and key; a
change-log row removed is found with its position."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka_broker import Broker, tansu_binary
from spark_kafka import create_topic
from spark_pipeline import Case, job_command, kafka_config, make_case, produce, run_in_process

from replicator.verify.command import build_parser, verify
from replicator.verify.report import Report

TOPIC = "olr.verify"


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Case, Path, Path]]:
    """A small mixed workload replicated through Kafka into a lake: (case, replicator config, lake).
    The broker (the module's own: the shared fixture is per test) stops once the lake is
    written; verify reads only the redo and the lake."""
    root = tmp_path_factory.mktemp("spark-verify")
    case = make_case(root / "case", events=150, wide=False, big=False)
    broker = Broker(tansu_binary())
    broker.start()
    try:
        create_topic(broker.bootstrap, TOPIC, 2)
        produce(case, broker.bootstrap, TOPIC)
        config = kafka_config(case, broker.bootstrap, TOPIC)
        path = root / "lake"
        run_in_process(spark, [*job_command(path, config, *case.rowid_args()), "--available-now"])
    finally:
        broker.stop()
    yield case, config, path


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
    predicate = " AND ".join(f'"{k}" = {row[k]!r}' if isinstance(row[k], str) else f'"{k}" = {row[k]}'
                             for k in key_names)
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
    predicate = (f"c_scn = {victim['c_scn']} AND c_idx = {victim['c_idx']} AND elem = {victim['elem']} "
                 f"AND xid = '{victim['xid']}'")
    assert dt.delete(predicate)["num_deleted_rows"] == 1

    report = _verify(config, removed)
    assert not report.ok
    assert report.result.counts == {"missing": 1, "duplicated": 0, "differs": 0, "extra": 0}, report.text()
    (missing,) = report.details
    assert (missing.kind, missing.c_scn, missing.c_idx, missing.xid, missing.table) == \
        ("missing", victim["c_scn"], victim["c_idx"], victim["xid"], victim["table"])
    assert missing.key == {"rid": victim["rid"]}  # the lake keys these tables by ROWID
    assert report.state is not None and report.state.total == 0  # the current tables are intact
    assert f"missing    c_scn {victim['c_scn']} c_idx {victim['c_idx']}" in report.text()
