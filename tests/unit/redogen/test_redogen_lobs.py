"""LOB columns through redogen and back: in-row, out-of-row SecureFile, 10 MB values, updates, NULL/empty.

Each scenario is written as redo by redogen, replicated by ``replicator run`` and compared
byte for byte with the output redogen derives from the values it wrote.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from redogen_helpers import TEN_MB, pipeline_missing, row_payloads, run_checked, ten_megabyte_img

from replicator.redogen.lobs import INLINE_MAX, extent_locator, inline_locator
from replicator.redogen.scenario import Scenario
from replicator.txn.lobassembly import LobReader
from replicator.txn.pool import MemoryPool

pytestmark = pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")

TABLE = {
    "owner": "APP",
    "name": "DOCS",
    "primary-key": ["ID"],
    "columns": ["ID NUMBER NOT NULL", "BODY CLOB", "NOTE NCLOB", "IMG BLOB", "LABEL VARCHAR2(40)"],
}


def _scenario(timeline: list[dict], version: str = "19", **extra) -> Scenario:
    return Scenario.from_dict({"version": version, "tables": [TABLE], "timeline": timeline, **extra})


def test_in_row_values_null_and_empty(tmp_path: Path) -> None:
    rows = row_payloads(
        run_checked(
            _scenario(
                [
                    {
                        "insert": "DOCS",
                        "values": {
                            "ID": 1,
                            "BODY": "short text ünïcödé 🙂",
                            "NOTE": "national",
                            "IMG": "aabbccdd",
                            "LABEL": "a",
                        },
                    },
                    {"insert": "DOCS", "values": {"ID": 2, "BODY": None, "IMG": None, "LABEL": "nulls"}},
                    {"insert": "DOCS", "values": {"ID": 3, "BODY": "EMPTY_CLOB()", "IMG": "EMPTY_BLOB()"}},
                    {"commit": 1},
                ]
            ),
            tmp_path,
        )
    )
    assert rows[0]["after"] == {
        "ID": 1,
        "BODY": "short text ünïcödé 🙂",
        "NOTE": "national",
        "IMG": "aabbccdd",
        "LABEL": "a",
    }
    assert rows[1]["after"] == {"ID": 2, "LABEL": "nulls"}  # NULL LOBs are left out of an insert
    assert rows[2]["after"] == {"ID": 3, "BODY": "", "IMG": ""}  # an empty LOB is not NULL


def test_out_of_row_and_updates(tmp_path: Path) -> None:
    big = {"repeat": "Medium CLOB content. ", "length": 8000}
    rows = row_payloads(
        run_checked(
            _scenario(
                [
                    {"insert": "DOCS", "values": {"ID": 1, "BODY": big, "IMG": {"repeat": "ffee", "length": 20000}}},
                    {"commit": 1},
                    {"update": "DOCS", "key": {"ID": 1}, "values": {"BODY": "now in row", "LABEL": "x"}},
                    {"commit": 1},
                    {"update": "DOCS", "key": {"ID": 1}, "values": {"BODY": {"repeat": "xyz", "length": 5000}}},
                    {"commit": 1},
                    {"update": "DOCS", "key": {"ID": 1}, "values": {"BODY": None, "IMG": None}},
                    {"commit": 1},
                    {"delete": "DOCS", "key": {"ID": 1}},
                    {"commit": 1},
                ],
                version="23",
            ),
            tmp_path,
        )
    )
    assert rows[0]["after"]["BODY"] == ("Medium CLOB content. " * 400)[:8000]
    assert rows[0]["after"]["IMG"] == ("ffee" * 10000)
    assert rows[1]["before"] == {"ID": 1, "LABEL": None} and rows[1]["after"] == {
        "ID": 1,
        "BODY": "now in row",
        "LABEL": "x",
    }
    assert rows[2]["after"]["BODY"] == ("xyz" * 1667)[:5000]
    assert rows[3]["after"] == {"ID": 1, "BODY": None, "IMG": None}
    assert rows[4]["op"] == "d" and rows[4]["before"] == {"ID": 1, "LABEL": "x"}


def test_ten_megabyte_value(tmp_path: Path) -> None:
    assert len(ten_megabyte_img(_scenario, tmp_path)) == 2 * TEN_MB


def test_rolled_back_lob_write_is_not_output(tmp_path: Path) -> None:
    rows = row_payloads(
        run_checked(
            _scenario(
                [
                    {"insert": "DOCS", "values": {"ID": 1, "BODY": {"repeat": "a", "length": 9000}}},
                    {"rollback": 1},
                    {"insert": "DOCS", "values": {"ID": 2, "BODY": "kept"}},
                    {"commit": 1},
                ]
            ),
            tmp_path,
        )
    )
    assert [r["after"]["ID"] for r in rows] == [2]


def test_locators_read_back() -> None:
    """The locators redogen writes are the 19c fixture's forms (checked against the assembler)."""
    lob_id = bytes.fromhex("00000001000000bc9bcb")
    empty = inline_locator(2, lob_id, b"")
    assert empty.hex() == "00700001020c0080000100000001000000bc9bcb000a4890000400000000"  # fixture bytes
    sql = inline_locator(2, lob_id, b"alter system switch logfile\0")
    assert sql.hex().endswith("00264890002000001c01616c7465722073797374656d20737769746368206c6f6766696c6500")
    reader = LobReader(MemoryPool(), None, None, 0)
    assert bytes(reader.value(inline_locator(1, lob_id, b"x" * INLINE_MAX))) == b"x" * INLINE_MAX
    big = extent_locator(1, lob_id, 1694997, [(0x01C005CA, 54), (0x01C00601, 157)])
    assert big[20:] == bytes.fromhex("001940900013220019dd1501010201c005ca360201c006019d")
