"""XMLTYPE stored as CLOB through redogen and back.

The scenario declares ``XMLTYPE STORE AS CLOB``: the checkpoint gets the virtual type-58
COL$ row (SEGCOL# 0), the hidden system-generated CLOB ``SYS_NC<INTCOL#>$`` and its LOB$
row; the CLOB is written like any LOB. OLR prints the column (under the XMLTYPE's name) only
with flag 0x40 (show hidden columns) or 0x10000 (experimental XMLTYPE); the latter needs
an XDB.XDB$TTSET row with flags 0, else the run stops with 50069.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redogen_helpers import pipeline_missing, row_payloads, run_checked, run_pipeline

from replicator.redogen.generate import generate
from replicator.redogen.scenario import Scenario

pytestmark = pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")

TABLE = {
    "owner": "APP",
    "name": "XDOCS",
    "primary-key": ["ID"],
    "columns": [
        "ID NUMBER NOT NULL",
        "DOC XMLTYPE STORE AS CLOB",
        "LABEL VARCHAR2(20)",
        "OLD XMLTYPE STORE AS BASICFILE CLOB",
    ],
}
BIG = {"prefix": "<big>", "repeat": "<i>ü</i>", "length": 9000}
TIMELINE = [
    {"insert": "XDOCS", "values": {"ID": 1, "DOC": "<a>x</a>", "LABEL": "l", "OLD": "<o/>"}},
    {"insert": "XDOCS", "values": {"ID": 2, "DOC": BIG}},
    {"commit": 1},
    {"update": "XDOCS", "key": {"ID": 1}, "values": {"DOC": "<a>z</a>"}},
    {"commit": 1},
    {"delete": "XDOCS", "key": {"ID": 2}},
    {"commit": 1},
]


def _scenario(flags: int, **extra: object) -> Scenario:
    return Scenario.from_dict({"version": "23", "flags": flags, "tables": [TABLE], "timeline": TIMELINE, **extra})


def test_checkpoint_columns(tmp_path: Path) -> None:
    result = generate(_scenario(0), tmp_path)
    doc = json.loads(next(result.config.parent.rglob("*-chkpt-*.json")).read_text())
    obj = next(o["obj"] for o in doc["sys-obj"] if o["name"] == "XDOCS")
    cols = [
        (c["name"], c["col"], c["seg-col"], c["int-col"], c["type"], c["property"][0])
        for c in doc["sys-col"]
        if c["obj"] == obj
    ]
    assert cols == [
        ("ID", 1, 1, 1, 2, 0),
        ("DOC", 2, 0, 2, 58, 0),
        ("SYS_NC00003$", 2, 2, 3, 112, 0x1A0),
        ("LABEL", 3, 3, 4, 1, 0),
        ("OLD", 4, 0, 5, 58, 0),
        ("SYS_NC00006$", 4, 4, 6, 112, 0x1A0),
    ]
    assert [(lob["col"], lob["int-col"]) for lob in doc["sys-lob"] if lob["obj"] == obj] == [(2, 3), (4, 6)]
    assert doc["xdb-ttset"] == []  # no token set unless flag 0x10000 (or `xdb-ttset`) asks


def test_hidden_by_default(tmp_path: Path) -> None:
    rows = row_payloads(run_checked(_scenario(0), tmp_path))
    assert rows[0]["after"] == {"ID": 1, "LABEL": "l"}
    assert rows[1]["after"] == {"ID": 2}
    assert rows[2]["before"] == {"ID": 1} and rows[2]["after"] == {"ID": 1}


@pytest.mark.parametrize("flags", [0x40, 0x10000])
def test_printed_with_flags(tmp_path: Path, flags: int) -> None:
    rows = row_payloads(run_checked(_scenario(flags), tmp_path))
    assert rows[0]["after"] == {"ID": 1, "DOC": "<a>x</a>", "LABEL": "l", "OLD": "<o/>"}
    assert rows[1]["after"] == {"ID": 2, "DOC": ("<big>" + "<i>ü</i>" * 1200)[:9000]}
    assert rows[2]["after"] == {"ID": 1, "DOC": "<a>z</a>"}
    assert rows[3]["op"] == "d" and rows[3]["before"] == {"ID": 2}  # LOBs never in before


def test_experimental_flag_without_token_set_stops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = generate(_scenario(0x10000, xdb_ttset=False), tmp_path)
    assert run_pipeline(result.config) != 0
    captured = capsys.readouterr()
    assert "50069 no active XML context found" in captured.out + captured.err
