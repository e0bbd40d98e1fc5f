"""Redogen partition DDL: DROP / EXCHANGE PARTITION, TRUNCATE and ADD COLUMN on a partitioned table.

The generator writes the dictionary DML Oracle writes (TABPART$/OBJ$/DEFERRED_STG$ deletes
and PART# updates for a drop; DATAOBJ# swapped in OBJ$, TABPART$ and TAB$ for an exchange;
new DATAOBJ# per partition for a truncate; a COL$ insert for a new column), and DML before
and after each operation. Dictionary tracking must follow: the batch output equals the
expected output, rows DML'd through an exchanged segment carry the swapped data object in
their ROWID and belong to the table the OBJ# names, and a dropped partition leaves the
table map.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicator.cli import main
from replicator.redogen import Scenario, generate
from replicator.values.rowid import rowid_text


def run_pipeline(config: Path | str) -> int:
    """`replicator run -f config` in-process (not via conftest: its name is shared across test folders)."""
    return main(["run", "-f", str(config)])


TIMELINE: list[dict[str, Any]] = [
    {"insert": "TP:P1", "values": {"ID": 1, "NAME": "p1"}},
    {"insert": "TP:P2", "values": {"ID": 2, "NAME": "p2"}},
    {"insert": "TP:P3", "values": {"ID": 3, "NAME": "p3"}},
    {"insert": "TX", "values": {"ID": 100, "NAME": "x"}},
    {"commit": 1},
    {"exchange_partition": "TP", "partition": "P1", "with-table": "TX"},
    {"update": "TP:P1", "key": {"ID": 100}, "values": {"NAME": "x in TP"}},
    {"update": "TX", "key": {"ID": 1}, "values": {"NAME": "p1 in TX"}},
    {"insert": "TP:P1", "values": {"ID": 4, "NAME": "new p1"}},
    {"insert": "TX", "values": {"ID": 101, "NAME": "new x"}},
    {"commit": 1},
    {"drop_partition": "TP", "partition": "P2"},
    {"insert": "TP:P3", "values": {"ID": 5, "NAME": "p3 b"}},
    {"delete": "TP:P1", "key": {"ID": 100}},
    {"commit": 1},
    {"add_column": "TP", "column": "EXTRA NUMBER"},
    {"insert": "TP:P3", "values": {"ID": 7, "NAME": "with extra", "EXTRA": 7}},
    {"update": "TP:P1", "key": {"ID": 4}, "values": {"EXTRA": 4}},
    {"commit": 1},
    {"truncate": "TP"},
    {"insert": "TP:P3", "values": {"ID": 6, "NAME": "after truncate", "EXTRA": 6}},
    {"insert": "TX", "values": {"ID": 102, "NAME": "tx still there"}},
    {"commit": 1},
]


def scenario(flags: int = 0) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "TEST",
            "version": "23",
            "flags": flags,
            "format": {"type": "json", "rid": 1},
            "tables": [
                {
                    "owner": "OLR_TEST",
                    "name": "TP",
                    "primary-key": ["ID"],
                    "partitions": ["P1", "P2", "P3"],
                    "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(100)"],
                },
                {
                    "owner": "OLR_TEST",
                    "name": "TX",
                    "primary-key": ["ID"],
                    "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(100)"],
                },
            ],
            "timeline": json.loads(json.dumps(TIMELINE)),
        }
    )


def _objs(checkpoint: Path) -> dict[str, tuple[int, int]]:
    """(OBJ#, DATAOBJ#) by name (partitions as TP:Pn) in the initial checkpoint."""
    doc = json.loads(checkpoint.read_text())
    tab = {o["obj"]: o for o in doc["sys-obj"] if o["owner"] != 0}
    out = {o["name"]: (o["obj"], o["data-obj"]) for o in tab.values() if o["type"] == 2}
    parts = sorted(p["obj"] for p in doc["sys-tabpart"] if p["bo"] == out["TP"][0])  # P1, P2, P3
    for n, obj in enumerate(parts, start=1):
        out[f"TP:P{n}"] = next((p["obj"], p["data-obj"]) for p in doc["sys-tabpart"] if p["obj"] == obj)
    return out


def _payloads(path: Path) -> list[dict[str, Any]]:
    return [
        p for line in path.read_text().splitlines() for p in json.loads(line)["payload"] if p["op"] in ("c", "u", "d")
    ]


def _data_obj(rid: str) -> str:
    return rid[:6]


@pytest.mark.parametrize("flags", [0, 0x20])
def test_partition_ddl_replicates(tmp_path: Path, flags: int) -> None:
    result = generate(scenario(flags), tmp_path)
    assert run_pipeline(result.config) == 0
    assert result.output.read_text() == result.expected.read_text()
    objs = _objs(result.checkpoint)
    p1_seg, tx_seg = objs["TP:P1"][1], objs["TX"][1]
    rows = _payloads(result.output)

    def find(op: str, table: str, key: int) -> dict[str, Any]:
        return next(
            p
            for p in rows
            if p["op"] == op and p["schema"]["table"] == table and (p.get("after") or p.get("before"))["ID"] == key
        )

    # Before the exchange each segment carries its own data object.
    assert _data_obj(find("c", "TP", 1)["rid"]) == _data_obj(rowid_text(p1_seg, 0, 0))
    assert _data_obj(find("c", "TX", 100)["rid"]) == _data_obj(rowid_text(tx_seg, 0, 0))
    # After it, the row inserted into TX is updated through partition P1: table TP, TX's old segment.
    moved = find("u", "TP", 100)
    assert moved["before"] == {"ID": 100, "NAME": "x"} and _data_obj(moved["rid"]) == _data_obj(
        rowid_text(tx_seg, 0, 0)
    )
    back = find("u", "TX", 1)
    assert back["after"] == {"ID": 1, "NAME": "p1 in TX"} and _data_obj(back["rid"]) == _data_obj(
        rowid_text(p1_seg, 0, 0)
    )
    assert find("d", "TP", 100)["before"] == {"ID": 100, "NAME": "x in TP"}
    # ADD COLUMN reaches every partition, TRUNCATE gives P3 a new segment.
    assert find("u", "TP", 4)["after"] == {"ID": 4, "EXTRA": 4}
    assert find("c", "TP", 7)["after"] == {"ID": 7, "NAME": "with extra", "EXTRA": 7}
    after_truncate = find("c", "TP", 6)
    assert _data_obj(after_truncate["rid"]) != _data_obj(find("c", "TP", 7)["rid"])
    assert find("c", "TX", 102)["after"] == {"ID": 102, "NAME": "tx still there"}
    if flags:
        ddl = [
            p["sql"]
            for line in result.output.read_text().splitlines()
            for p in json.loads(line)["payload"]
            if p["op"] == "ddl"
        ]
        assert "ALTER TABLE OLR_TEST.TP EXCHANGE PARTITION P1 WITH TABLE OLR_TEST.TX" in ddl
        assert "ALTER TABLE OLR_TEST.TP DROP PARTITION P2" in ddl


class _Sink:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    def write(self, batch: list[Any]) -> None:
        self.messages.extend(batch)

    def flush(self) -> None:
        pass


def test_tracking_follows_drop_and_exchange(tmp_path: Path) -> None:
    from replicator.runner.assembly import create_format_for
    from replicator.runner.batch import build_job
    from replicator.runner.pipeline import Pipeline

    result = generate(scenario(), tmp_path, with_expected=False)
    objs = _objs(result.checkpoint)
    job = build_job(str(result.config))
    before = job.parser.tables
    assert {objs["TP:P1"][0], objs["TP:P2"][0], objs["TP:P3"][0]} <= set(before)
    pipeline = Pipeline(job.parser, create_format_for(job.format_options), _Sink())
    pipeline.run(job.files)
    tables = pipeline.parser.opt.tables
    # The dropped partition no longer maps to TP; the others still do.
    assert objs["TP:P2"][0] not in tables
    assert tables[objs["TP:P1"][0]].name == "TP" and tables[objs["TP:P3"][0]].name == "TP"
    # The exchange swapped the data objects: TX now owns P1's former segment.
    assert tables[objs["TX"][0]].name == "TX" and tables[objs["TX"][0]].data_obj == objs["TP:P1"][1]
    d = pipeline.parser.opt.tracker.dictionary
    parts = dict(d.partitions(objs["TP"][0]))
    assert objs["TP:P2"][0] not in parts
    # The TRUNCATE at the end gave both remaining partitions new segments.
    assert not {parts[objs["TP:P1"][0]], parts[objs["TP:P3"][0]]} & {o[1] for o in objs.values()}


def test_partition_ddl_errors(tmp_path: Path) -> None:
    from replicator.errors import ConfigError

    def bad(event: dict[str, Any]) -> None:
        sc = scenario()
        sc_dict = {
            "name": "TEST",
            "version": "23",
            "tables": [
                {
                    "owner": "OLR_TEST",
                    "name": "TP",
                    "primary-key": ["ID"],
                    "partitions": ["P1"],
                    "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(100)"],
                },
                {"owner": "OLR_TEST", "name": "TY", "primary-key": ["ID"], "columns": ["ID NUMBER NOT NULL"]},
            ],
            "timeline": [event],
        }
        del sc
        with pytest.raises(ConfigError):
            generate(Scenario.from_dict(sc_dict), tmp_path / str(len(list(tmp_path.iterdir()))), with_expected=False)

    bad({"drop_partition": "TP", "partition": "P1"})  # the only partition
    bad({"drop_partition": "TP", "partition": "P9"})
    bad({"drop_partition": "TY", "partition": "P1"})  # not partitioned
    bad({"exchange_partition": "TP", "partition": "P1", "with-table": "TY"})  # columns differ
    bad({"exchange_partition": "TP", "partition": "P1"})
    bad({"drop_column": "TP", "column": "NAME"})
