"""The lake as other readers see it: typed keys and values, no tombstones, the public read API.

Batches go through :meth:`BatchApplier.apply_arrow` (the job's batch logic without Spark);
the tables are then read by delta-rs, Polars (``read_delta``) and DuckDB (over the Arrow
table), which must all see the same live rows with the types the docs promise.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("deltalake")

from test_spark_fold import events  # noqa: E402

from replicator.spark.apply import BatchApplier  # noqa: E402
from replicator.spark.lake_read import LakeReader  # noqa: E402
from replicator.spark.lakestore import DeltaLake  # noqa: E402
from replicator.spark.metrics import MetricsSink  # noqa: E402
from replicator.spark.options import FormatHints, JobOptions  # noqa: E402

COLS = [
    {"name": "ID", "type": "number", "precision": 12, "scale": 0},
    {"name": "AMOUNT", "type": "number", "precision": -1, "scale": -1},
    {"name": "AT", "type": "timestamp with time zone"},
    {"name": "LOCAL_AT", "type": "timestamp with local time zone"},
    {"name": "DAY", "type": "date"},
    {"name": "CODE", "type": "raw", "length": 4},
]


def _lines(scn: int, *elements: dict[str, Any]) -> list[bytes]:
    els = [
        {"op": "begin"},
        *({"schema": {"owner": "APP", "table": "R", "columns": COLS}, **e} for e in elements),
        {"op": "commit"},
    ]
    return [
        json.dumps({"e_scn": scn + 5, "c_scn": scn, "c_idx": i, "xid": f"1.{scn}.1", "payload": [el]}).encode()
        for i, el in enumerate(els, 1)
    ]


def test_tables_are_typed_without_tombstones_for_every_reader(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    opts = JobOptions(
        lake=str(lake),
        keys={"APP.R": ["ID"]},
        unbounded_number="decimal",
        hints=FormatHints(scn_type=8, timestamp=1, timestamp_tz=1),
    )
    a = BatchApplier(opts, DeltaLake(str(lake)), MetricsSink(str(lake)))
    a.set_query("q")
    row = {"AT": "1735779845123456,+02:00", "LOCAL_AT": "1735779845123456", "DAY": "1735776000000000", "CODE": "0A0B"}
    a.apply_arrow(
        events(
            _lines(
                100,
                {"op": "c", "after": {"ID": 1, "AMOUNT": "12.5", **row}},
                {"op": "c", "after": {"ID": 2, "AMOUNT": "123456789012345678901234567890123456", **row}},
                {"op": "c", "after": {"ID": 3, "AMOUNT": "1E+100", **row}},
            )
            + _lines(
                200,
                {"op": "d", "before": {"ID": 3}},
                {"op": "u", "before": {"ID": 1}, "after": {"ID": 1, "AMOUNT": "-0.25"}},
            )
        ),
        0,
    )
    rows = LakeReader(str(lake)).current_rows("APP.R")
    at = datetime(2025, 1, 2, 1, 4, 5, 123456, tzinfo=UTC)
    assert rows.schema.field("ID").type == pa.int64()
    assert rows.schema.field("AMOUNT").type == pa.decimal128(38, 10)
    assert rows.schema.field("AT").type == pa.struct([("utc", pa.timestamp("us", tz="UTC")), ("zone", pa.string())])
    assert rows.schema.field("LOCAL_AT").type == pa.timestamp("us", tz="UTC")
    assert rows.schema.field("DAY").type == pa.timestamp("us")
    got = {r["ID"]: r for r in rows.to_pylist()}
    assert sorted(got) == [1, 2]  # the deleted row is gone, not a tombstone
    assert got[1]["AMOUNT"] == Decimal("-0.2500000000") and got[2]["AMOUNT"] is None  # beyond decimal(38,10)
    assert got[1]["AT"] == {"utc": at, "zone": "+02:00"} and got[1]["CODE"] == b"\n\x0b"
    tombs = LakeReader(str(lake)).tombstones("APP.R")
    assert tombs["_key"].to_pylist() == ["3"]
    changes = pa.Table.from_batches(list(LakeReader(str(lake)).iter_changes("APP.R")))
    amounts = {
        json.loads(k)[0]: dict(a or {}).get("AMOUNT")
        for k, a in zip(changes["key"].to_pylist(), changes["after"].to_pylist())
        if a
    }
    assert amounts["2"] == "123456789012345678901234567890123456"  # the exact text is in the change log

    polars = pytest.importorskip("polars")
    df = polars.read_delta(str(lake / "tables" / "APP.R"))
    assert sorted(df["ID"].to_list()) == [1, 2]
    assert df.schema["ID"] == polars.Int64 and df.schema["AMOUNT"] == polars.Decimal(38, 10)
    assert df.schema["AT"] == polars.Struct({"utc": polars.Datetime("us", "UTC"), "zone": polars.String})
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    con.register("r", rows)
    assert con.execute("select count(*), min(ID), typeof(min(AMOUNT)) from r").fetchall() == [(2, 1, "DECIMAL(38,10)")]
    assert con.execute('select typeof("AT".utc), "AT".zone from r where ID = 1').fetchall() == [
        ("TIMESTAMP WITH TIME ZONE", "+02:00")
    ]
