"""DDL in the middle of DML, with a daemon restart in between: the schema checkpoint is reloaded.

The first run reads only the first archived log: DML, an ALTER TABLE ADD COLUMN, DML using
the new column, while another session keeps a transaction open across the DDL. It stops
softly; the schema checkpoint it wrote holds the new column. The second run restarts from
that checkpoint (re-reading from the open transaction's begin, so the DDL's redo is read
again and must not be applied twice), then a RENAME COLUMN and a CREATE TABLE follow. The
whole output must equal the expected output of an uninterrupted run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from fixture_configs import fast_offline_config, write_config
from test_daemon_fixture import _start, _stop, _wait_for

from replicator.redogen import Scenario
from replicator.redogen.generate import generate

TIMELINE = [
    {"insert": "T1", "values": {"ID": 1, "NAME": "a", "VAL": 1}},
    {"commit": 1},
    {"s": 2, "insert": "T1", "values": {"ID": 9, "NAME": "open across DDL and restart"}},
    {"add_column": "T1", "column": "EMAIL VARCHAR2(50)"},
    {"insert": "T1", "values": {"ID": 2, "NAME": "b", "EMAIL": "b@x"}},
    {"commit": 1},
    {"switch": None},
    {"update": "T1", "key": {"ID": 1}, "values": {"EMAIL": "a@x"}},
    {"commit": 1},
    {"commit": 2},
    {"rename_column": "T1", "column": "VAL", "to": "AMOUNT"},
    {"update": "T1", "key": {"ID": 2}, "values": {"AMOUNT": 22}},
    {
        "create_table": {
            "owner": "OLR_TEST",
            "name": "T2",
            "primary-key": ["K"],
            "columns": ["K NUMBER NOT NULL", "V VARCHAR2(10)"],
        }
    },
    {"insert": "T2", "values": {"K": 1, "V": "one"}},
    {"commit": 1},
]


def test_ddl_survives_a_restart(tmp_path: Path) -> None:
    sc = Scenario.from_dict(
        {
            "name": "TEST",
            "version": "23",
            "tables": [
                {
                    "owner": "OLR_TEST",
                    "name": "T1",
                    "primary-key": ["ID"],
                    "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(100)", "VAL NUMBER"],
                }
            ],
            "timeline": TIMELINE,
        }
    )
    result = generate(sc, tmp_path / "gen")
    assert len(result.logs) == 2
    arch = tmp_path / "arch"
    arch.mkdir()
    cfg = write_config(tmp_path, fast_offline_config(result, arch), "offline.json")
    state = Path(result.checkpoint).parent
    shutil.copy(result.logs[0].path, arch / result.logs[0].path.name)
    output, expected = result.output, result.expected.read_text()

    proc = _start(cfg)
    try:
        assert _wait_for(lambda: output.exists() and "b@x" in output.read_text(), 30)
    finally:
        err = _stop(proc)
    assert "updated metadata: OLR_TEST.T1" in err
    first = [p for p in state.glob("TEST-chkpt-*.json") if p.name != result.checkpoint.name]
    assert first, "no schema checkpoint written"
    newest = max(first, key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    doc = json.loads(newest.read_text())
    assert doc.get("min-tran"), "the session-2 transaction is open at the stop"
    if "schema-ref-scn" in doc:
        doc = json.loads((state / f"TEST-chkpt-{doc['schema-ref-scn']}.json").read_text())
    assert any(c["name"] == "EMAIL" for c in doc["sys-col"])

    shutil.copy(result.logs[1].path, arch / result.logs[1].path.name)
    proc = _start(cfg)
    try:
        assert _wait_for(lambda: len(output.read_text()) >= len(expected), 30)
    finally:
        err = _stop(proc)
    assert "duplicate" not in err
    assert output.read_text() == expected
    assert '"AMOUNT":22' in expected and '"table":"T2"' in expected
