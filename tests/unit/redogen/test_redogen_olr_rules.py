"""Redo and dictionary rules OpenLogReplicator enforces or relies on, checked on generated cases.

Each rule was found by reading generated redo with the reference OpenLogReplicator (see
``replicator.redogen.reference_check``): a NULL column's field in an 11.5 is empty (even in a
rollback's 11.5, which copies the undo), OBJ# values are unique in OBJ$, SecureFile LOB pages
come after their transaction's begin, extended VARCHAR2/RAW values are LOBs, and the summary
counts what the expected output holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redocheck import Rec, check_file
from redogen_helpers import pipeline_missing, run_checked

from replicator.errors import ConfigError
from replicator.events import COL_PROPERTY_STORED_AS_LOB
from replicator.redogen import schema, workloads
from replicator.redogen.generate import generate
from replicator.redogen.scenario import ColumnSpec, Event, Scenario, TableSpec

E = Event
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "reference"


def _records(result) -> list[Rec]:
    return [rec for log in result.logs for rec in check_file(log.path).records]


def _bits(bitmap: bytes, count: int) -> list[bool]:
    return [bool(bitmap[i >> 3] & (1 << (i & 7))) for i in range(count)]


def test_null_columns_of_every_11_5_have_empty_fields(tmp_path: Path) -> None:
    cols = [ColumnSpec("ID", "NUMBER", False), ColumnSpec("A", "VARCHAR2(20)"), ColumnSpec("B", "VARCHAR2(20)")]
    sc = Scenario(
        tables=[TableSpec("APP", "T", cols, ["ID"])],
        timeline=[
            E("insert", 1, "T", {"ID": 1, "B": "b"}),
            E("commit", 1),
            E("update", 2, "T", key={"ID": 1}, values={"A": "now set", "B": None}),
            E("rollback", 2),
        ],
    )
    urps = [v for rec in _records(generate(sc, tmp_path)) for v in rec.vectors if v.op == (11, 5)]
    assert len(urps) == 2  # the update and the rollback's compensation
    for vec in urps:
        kdo = vec.fields[1]
        nulls = _bits(kdo[26:], kdo[23])
        assert any(nulls)
        for i, null in enumerate(nulls):
            assert not (null and vec.fields[3 + i]), f"NULL column {i} has a {len(vec.fields[3 + i])}-byte field"


def test_partitions_and_primary_key_index_have_their_own_object_ids(tmp_path: Path) -> None:
    result = generate(Scenario.from_file(SCENARIOS / "partitioned-table.yaml"), tmp_path)
    doc = json.loads(result.checkpoint.read_text())
    objs = [row["obj"] for row in doc["sys-obj"]]
    assert len(objs) == len(set(objs))
    index = {row["name"]: row["obj"] for row in doc["sys-obj"] if row["type"] == 1}
    assert sorted(index.values()) == [73878, 73883]  # after each table's partitions, as Oracle numbered them


def test_checkpoint_with_a_duplicate_dictionary_key_is_refused() -> None:
    rows = [{"row-id": "AAAAASAAAAAAAAAAAA", "obj": 7}, {"row-id": "AAAAASAAAAAAAAAAAB", "obj": 7}]
    with pytest.raises(ConfigError, match="duplicate sys-obj"):
        schema.check_unique({"sys-obj": rows})


def test_lob_pages_come_after_their_transaction_begins(tmp_path: Path) -> None:
    cols = [ColumnSpec("ID", "NUMBER", False), ColumnSpec("DOC", "CLOB")]
    sc = Scenario(
        tables=[TableSpec("APP", "L", cols, ["ID"])],
        timeline=[E("insert", 1, "L", {"ID": 1, "DOC": "x" * 9000}), E("commit", 1)],
    )
    ops = [v.op for rec in _records(generate(sc, tmp_path)) for v in rec.vectors]
    assert ops.index((5, 2)) < ops.index((26, 6))


@pytest.mark.skipif(pipeline_missing() is not None, reason=str(pipeline_missing()))
def test_extended_varchar_and_raw_are_stored_as_lobs(tmp_path: Path) -> None:
    sc = workloads.big_values(9000, 2)
    messages = run_checked(sc, tmp_path)
    doc = json.loads((tmp_path / "checkpoint" / next(p.name for p in (tmp_path / "checkpoint").iterdir())).read_text())
    props = {row["name"]: row["property"][0] for row in doc["sys-col"] if row["name"] in ("TXT", "BIN", "N")}
    assert props["TXT"] & COL_PROPERTY_STORED_AS_LOB and props["BIN"] & COL_PROPERTY_STORED_AS_LOB
    assert not props["N"] & COL_PROPERTY_STORED_AS_LOB
    assert len(doc["sys-lob"]) == 2
    inserts = [p["after"] for m in messages for p in m["payload"] if p["op"] == "c"]
    assert [(len(a["TXT"]), len(a["BIN"])) for a in inserts] == [(9000, 18000)] * 2


def test_summary_counts_what_the_output_holds(tmp_path: Path) -> None:
    result = generate(workloads.oltp(3, 1 << 20), tmp_path)
    messages = [json.loads(line) for line in result.expected.read_text().splitlines()]
    payload = [p["op"] for m in messages for p in m["payload"]]
    assert result.stats["transactions"] == payload.count("commit")
    assert result.stats["rows"] == sum(op in ("c", "u", "d") for op in payload)
    assert result.stats["rollbacks"] > 0
