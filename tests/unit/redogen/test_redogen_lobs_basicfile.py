"""BasicFile LOB columns through redogen and back: 19.1 pages, LOB index (5.1, 10.2/10.8/10.18) pairs.

The BasicFile counterparts of ``test_redogen_lobs.py``: in-row values (inode value form),
out-of-row values (inode index form, pages past the 12th through the LOB index), ``DISABLE
STORAGE IN ROW`` (bare locator, all pages and the size in the LOB index), 100 KB and 10 MB
values (the latter splits a LOB index leaf: 10.8), updates, NULL/EMPTY and rollback. Each
scenario is written by redogen, replicated by ``replicator run`` and compared byte for byte
with the output redogen derives from the values it wrote.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from redogen_helpers import TEN_MB, pipeline_missing, row_payloads, run_checked, ten_megabyte_img

from replicator.redo.opcodes.lob import _key
from replicator.redogen.coltypes import parse_type
from replicator.redogen.lobs import (
    basic_bare_locator,
    basic_index_locator,
    basic_value_locator,
    index_data,
    index_key,
)
from replicator.redogen.lobvalues import BASICFILE, BASICFILE_OUT_OF_ROW, SECUREFILE
from replicator.redogen.scenario import Scenario
from replicator.txn.lobassembly import LobReader
from replicator.txn.lobs import TxnLobs
from replicator.txn.pool import MemoryPool

pytestmark = pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")

TABLE = {
    "owner": "APP",
    "name": "DOCS",
    "primary-key": ["ID"],
    "columns": [
        "ID NUMBER NOT NULL",
        "BODY CLOB BASICFILE",
        "NOTE NCLOB BASICFILE DISABLE STORAGE IN ROW",
        "IMG BLOB BASICFILE",
        "LABEL VARCHAR2(40)",
    ],
}


def _scenario(timeline: list[dict], version: str = "19", **extra) -> Scenario:
    return Scenario.from_dict({"version": version, "tables": [TABLE], "timeline": timeline, **extra})


def test_column_types() -> None:
    assert parse_type("CLOB").lob_storage == SECUREFILE
    assert parse_type("BLOB SECUREFILE").lob_storage == SECUREFILE
    assert parse_type("clob basicfile").lob_storage == BASICFILE
    assert parse_type("NCLOB BASICFILE DISABLE STORAGE IN ROW").lob_storage == BASICFILE_OUT_OF_ROW
    assert parse_type("NCLOB BASICFILE DISABLE STORAGE IN ROW").charset_form == 2


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
                    {
                        "insert": "DOCS",
                        "values": {"ID": 3, "BODY": "EMPTY_CLOB()", "NOTE": "EMPTY_CLOB()", "IMG": "EMPTY_BLOB()"},
                    },
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
    assert rows[1]["after"] == {"ID": 2, "LABEL": "nulls"}
    assert rows[2]["after"] == {"ID": 3, "BODY": "", "NOTE": "", "IMG": ""}


def test_out_of_row_and_updates(tmp_path: Path) -> None:
    big = {"repeat": "Medium CLOB content. ", "length": 8000}  # 16000 bytes: 2 pages, all in the inode
    rows = row_payloads(
        run_checked(
            _scenario(
                [
                    {
                        "insert": "DOCS",
                        "values": {
                            "ID": 1,
                            "BODY": big,
                            "NOTE": "small but out of row",
                            "IMG": {"repeat": "ffee", "length": 20000},
                        },
                    },
                    {"commit": 1},
                    {"update": "DOCS", "key": {"ID": 1}, "values": {"BODY": "now in row", "LABEL": "x"}},
                    {"commit": 1},
                    {
                        "update": "DOCS",
                        "key": {"ID": 1},
                        "values": {"BODY": {"repeat": "xyz", "length": 5000}, "NOTE": {"repeat": "n", "length": 40000}},
                    },
                    {"commit": 1},
                    {"update": "DOCS", "key": {"ID": 1}, "values": {"BODY": None, "IMG": None, "NOTE": None}},
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
    assert rows[0]["after"]["NOTE"] == "small but out of row"
    assert rows[0]["after"]["IMG"] == "ffee" * 10000
    assert rows[1]["before"] == {"ID": 1, "LABEL": None} and rows[1]["after"] == {
        "ID": 1,
        "BODY": "now in row",
        "LABEL": "x",
    }
    assert rows[2]["after"]["BODY"] == ("xyz" * 1667)[:5000]
    assert rows[2]["after"]["NOTE"] == "n" * 40000
    assert rows[3]["after"] == {"ID": 1, "BODY": None, "NOTE": None, "IMG": None}
    assert rows[4]["op"] == "d" and rows[4]["before"] == {"ID": 1, "LABEL": "x"}


def test_multi_page_values_use_the_lob_index(tmp_path: Path) -> None:
    """100 KB: 13 pages, the 13th only through a 10.2 LOB index entry (in-row form) and all
    through the index with its 10.18 size update (DISABLE STORAGE IN ROW)."""
    size = 100 * 1024
    rows = row_payloads(
        run_checked(
            _scenario(
                [
                    {
                        "insert": "DOCS",
                        "values": {
                            "ID": 1,
                            "IMG": {"repeat": "00112233", "length": size},
                            "NOTE": {"repeat": "abcdefgh", "length": size // 2},
                        },
                    },
                    {
                        "insert": "DOCS",
                        "values": {"ID": 2, "BODY": {"prefix": "start:", "repeat": "0123456789", "length": size}},
                    },
                    {"commit": 1},
                ]
            ),
            tmp_path,
        )
    )
    assert rows[0]["after"]["IMG"] == "00112233" * (size // 4)
    assert rows[0]["after"]["NOTE"] == "abcdefgh" * (size // 16)
    assert rows[1]["after"]["BODY"] == ("start:" + "0123456789" * size)[:size]


def test_ten_megabyte_value(tmp_path: Path) -> None:
    """1290 pages: 161 LOB index entries, more than one leaf holds, so one goes in by a 10.8."""
    img = ten_megabyte_img(_scenario, tmp_path)
    assert len(img) == 2 * TEN_MB and img[:32] == "0123456789abcdef" * 2


def test_rolled_back_lob_write_is_not_output(tmp_path: Path) -> None:
    rows = row_payloads(
        run_checked(
            _scenario(
                [
                    {
                        "insert": "DOCS",
                        "values": {
                            "ID": 1,
                            "BODY": {"repeat": "a", "length": 60000},
                            "NOTE": {"repeat": "b", "length": 9000},
                        },
                    },
                    {"rollback": 1},
                    {"insert": "DOCS", "values": {"ID": 2, "BODY": "kept"}},
                    {"commit": 1},
                ]
            ),
            tmp_path,
        )
    )
    assert [r["after"]["ID"] for r in rows] == [2]


def test_lob_only_transaction_start(tmp_path: Path) -> None:
    """A LOB index pair can be the first change of a transaction (it carries the 5.2 begin)."""
    rows = row_payloads(
        run_checked(
            _scenario(
                [
                    {"insert": "DOCS", "values": {"ID": 1, "LABEL": "first"}},
                    {"commit": 1},
                    {"update": "DOCS", "key": {"ID": 1}, "values": {"NOTE": {"repeat": "z", "length": 3}}},
                    {"commit": 1},
                ]
            ),
            tmp_path,
        )
    )
    assert rows[1]["after"] == {"ID": 1, "NOTE": "zzz"}


def test_locators_and_keys() -> None:
    """Locator forms and LOB index keys read back by the assembler and the 10.x key decoder."""
    lob_id = bytes.fromhex("00000001000000bc0001")
    inline = basic_value_locator(2, lob_id, b"hello")
    assert inline[5] & 0x04 and inline[20:36].hex() == "00150900000000000005000000000001"
    reader = LobReader(MemoryPool(), None, None, 0, inline_only=True)
    assert bytes(reader.value(inline)) == b"hello"
    assert bytes(reader.value(basic_value_locator(2, lob_id, b""))) == b""
    bare = basic_bare_locator(1, lob_id)
    assert len(bare) == 20 and not bare[5] & 0x04
    assert not reader.value(bare).complete  # a before image cannot read an out-of-row value
    key = index_key(lob_id, 12)
    assert _key(key) == (lob_id, 12)
    head = index_data([0x01000010], (3, 100))
    assert len(head) == 32 and struct.unpack_from(">IH", head, 4) == (3, 100)
    assert struct.unpack_from(">I", head, 16)[0] == 0x01000010
    # Index form: 13 pages of 8132 + 5 bytes -> 13 full pages, rest 5, 12 DBAs in the locator.
    pool = MemoryPool()
    lobs = TxnLobs(pool, 1)
    dbas = [0x01001000 + n for n in range(14)]
    for n, d in enumerate(dbas):
        lobs.add_page(pool, lob_id, d, 0, -1, 8132, bytes([n]) * 8132)
    lobs.set_pages(lob_id, 12, tuple(dbas[12:]))
    loc = basic_index_locator(1, lob_id, 13 * 8132 + 5, 8132, dbas)
    assert len(loc) == 36 + 48
    value = bytes(LobReader(pool, lobs, None, 1).value(loc))
    assert value == b"".join(bytes([n]) * 8132 for n in range(13)) + b"\x0d" * 5
