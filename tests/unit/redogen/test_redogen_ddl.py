"""Redogen DDL: the dictionary DML Oracle writes for a DDL, replicated through `replicator run`.

Each scenario mixes DML with DDL (create table, add/drop/rename column, set unused,
truncate, new partition, drop table); the batch output must equal the expected output
before and after every change, with and without the 24.1 DDL messages (flag 0x20).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from redogen_helpers import pipeline_missing, run_pipeline

from replicator.redogen import Scenario, generate

TIMELINE: list[dict[str, Any]] = [
    {"insert": "T1", "values": {"ID": 1, "NAME": "a", "VAL": 1, "EXTRA": "x"}},
    {"insert": "TP:P1", "values": {"ID": 1, "NAME": "p1"}},
    {"s": 2, "insert": "T1", "values": {"ID": 9, "NAME": "open across the DDL"}},
    {"commit": 1},
    {
        "create_table": {
            "owner": "OLR_TEST",
            "name": "T2",
            "primary-key": ["K"],
            "columns": ["K NUMBER NOT NULL", "V VARCHAR2(10)"],
        }
    },
    {"insert": "T2", "values": {"K": 1, "V": "one"}},
    {"add_column": "T1", "column": "EMAIL VARCHAR2(50)"},
    {"insert": "T1", "values": {"ID": 2, "NAME": "b", "VAL": 2, "EMAIL": "b@x"}},
    {"commit": 2},
    {"rename_column": "T1", "column": "VAL", "to": "AMOUNT"},
    {"update": "T1", "key": {"ID": 1}, "values": {"AMOUNT": 10, "EMAIL": "a@x"}},
    {"commit": 1},
    {"drop_column": "T1", "column": "EXTRA"},
    {"update": "T1", "key": {"ID": 1}, "values": {"AMOUNT": 11}},
    {"set_unused_column": "T1", "column": "NAME"},
    {"delete": "T1", "key": {"ID": 2}},
    {"truncate": "T2"},
    {"insert": "T2", "values": {"K": 5, "V": "five"}},
    {"add_partition": "TP", "partition": {"name": "P3"}},
    {"insert": "TP:P3", "values": {"ID": 3, "NAME": "p3"}},
    {"delete": "TP:P1", "key": {"ID": 1}},
    {"commit": 1},
    {"drop_table": "T2"},
    {"insert": "T1", "values": {"ID": 3, "AMOUNT": 3}},
    {"commit": 1},
]


def scenario(flags: int = 0) -> Scenario:
    """The DDL scenario (also used by the daemon restart test)."""
    return Scenario.from_dict(
        {
            "name": "TEST",
            "version": "23",
            "flags": flags,
            "tables": [
                {
                    "owner": "OLR_TEST",
                    "name": "T1",
                    "primary-key": ["ID"],
                    "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(100)", "VAL NUMBER", "EXTRA VARCHAR2(20)"],
                },
                {
                    "owner": "OLR_TEST",
                    "name": "TP",
                    "primary-key": ["ID"],
                    "partitions": ["P1", "P2"],
                    "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(100)"],
                },
            ],
            "timeline": json.loads(json.dumps(TIMELINE)),
        }
    )


def _payloads(path: Path) -> list[dict[str, Any]]:
    return [p for line in path.read_text().splitlines() for p in json.loads(line)["payload"]]


@pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")
@pytest.mark.parametrize("flags", [0, 0x20])
def test_ddl_scenario_replicates(tmp_path: Path, flags: int) -> None:
    result = generate(scenario(flags), tmp_path)
    assert run_pipeline(result.config) == 0
    assert result.output.read_text() == result.expected.read_text()
    payloads = _payloads(result.output)
    ddl = [p["sql"] for p in payloads if p["op"] == "ddl"]
    assert len(ddl) == (8 if flags else 0)
    if flags:
        assert ddl[0].startswith("CREATE TABLE OLR_TEST.T2")
        create = next(p for p in payloads if p["op"] == "ddl")
        # Not replicated until committed: OLR names it from the OBJ$ row the transaction wrote.
        assert create["schema"] == {"owner": "OLR_TEST", "table": "T2"}
    rows = [
        (p["op"], p["schema"]["table"], p.get("after") or p.get("before"))
        for p in payloads
        if p["op"] in ("c", "u", "d")
    ]
    assert ("c", "T1", {"ID": 2, "NAME": "b", "VAL": 2, "EMAIL": "b@x"}) in rows  # after ADD COLUMN
    assert ("u", "T1", {"ID": 1, "AMOUNT": 10, "EMAIL": "a@x"}) in rows  # after RENAME COLUMN
    assert ("d", "T1", {"ID": 2, "AMOUNT": 2, "EMAIL": "b@x"}) in rows  # NAME unused: hidden
    assert ("c", "T2", {"K": 5, "V": "five"}) in rows and ("c", "TP", {"ID": 3, "NAME": "p3"}) in rows
    assert ("c", "T1", {"ID": 9, "NAME": "open across the DDL"}) in rows


def test_checkpoint_holds_the_dictionary_tables(tmp_path: Path) -> None:
    result = generate(scenario(), tmp_path, with_expected=False)
    doc = json.loads(result.checkpoint.read_text())
    objs = {o["name"]: o for o in doc["sys-obj"] if o["owner"] == 0}
    assert {"OBJ$", "COL$", "TAB$", "USER$", "CDEF$", "CCOL$", "TABPART$", "DEFERRED_STG$"} <= set(objs)
    tabs = {t["obj"]: t for t in doc["sys-tab"]}
    assert objs["COL$"]["data-obj"] == 2 and tabs[objs["COL$"]["obj"]]["clu-cols"] == 1
    col_cols = sorted((c["seg-col"], c["name"]) for c in doc["sys-col"] if c["obj"] == objs["COL$"]["obj"])
    assert col_cols[:3] == [(1, "OBJ#"), (2, "COL#"), (3, "SEGCOL#")] and (37, "DEFAULT$") in col_cols
    # Rows of clustered tables carry the cluster's data object in their ROWID.
    assert all(c["row-id"].startswith("AAAAAC") for c in doc["sys-col"])
    tp = next(o for o in doc["sys-obj"] if o["name"] == "TP" and o["type"] == 2)
    assert tp["data-obj"] == 0 and len([p for p in doc["sys-tabpart"] if p["bo"] == tp["obj"]]) == 2
