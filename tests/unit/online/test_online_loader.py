"""The online reader's dictionary loader against OpenLogReplicator's real schema checkpoints.

For every reference checkpoint, the rows Oracle would have returned are derived at test
time (recorded_db.py) and replayed to the loader; the checkpoint it builds must be the
reference, field for field and row for row (compared as the file text we write).
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from recorded_db import recorded_from_checkpoint

from replicator.online import sql
from replicator.online.loader import (
    DEFAULT_LOG_ARCHIVE_FORMAT,
    DictionaryReader,
    StartRequest,
    build_schema_checkpoint,
    dictionary_row,
    to_int,
)
from replicator.schema.dictionary import Dictionary
from replicator.schema.document import format_schema_checkpoint, parse_schema_checkpoint

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
FREE23 = SHARED / "fixtures" / "redo" / "free23-basic"
SCHEMA_DIR = SHARED / "reference" / "olr-real-outputs" / "schema"
REFERENCES = sorted(SCHEMA_DIR.glob("*/*-chkpt-*.json")) + [FREE23 / "TEST-chkpt-2266634.json"]
SEQUENCE = 42


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _load(path: Path) -> dict:
    if not path.is_file():
        pytest.skip(f"shared test data not found: {path} (place the shared/ folder beside the repository)")
    return json.loads(path.read_text())


def _request(doc: dict) -> StartRequest:
    custom_format = (
        doc["log-archive-format"]
        if doc["db-recovery-file-dest"] and doc["log-archive-format"] != DEFAULT_LOG_ARCHIVE_FORMAT
        else None
    )
    return StartRequest(database=doc["database"], owners=list(doc["users"]), log_archive_format=custom_format)


def _expected(doc: dict):
    """The reference as the loader should rebuild it: a first checkpoint at its SCN.

    A checkpoint OLR wrote while running has a redo position (time, seq, offset, min-tran)
    and may hold an older schema-scn; the loader's first checkpoint starts the log holding
    the SCN (the recorded sequence) at offset 0, with the schema read at that SCN.
    """
    ref = parse_schema_checkpoint(doc, "reference")
    return replace(ref, time=0, seq=SEQUENCE, offset=0, min_tran=None, schema_scn=ref.scn)


@pytest.mark.parametrize("path", REFERENCES, ids=_id)
def test_loader_rebuilds_reference_checkpoint(path: Path) -> None:
    doc = _load(path)
    db = recorded_from_checkpoint(doc, sequence=SEQUENCE)
    built = build_schema_checkpoint(db, _request(doc), user="C##OLR")
    expected = _expected(doc)
    assert format_schema_checkpoint(built) == format_schema_checkpoint(expected)
    # The same dictionary, hence the same tables.
    ours, theirs = Dictionary.from_checkpoint(built), Dictionary.from_checkpoint(expected)
    for key in expected.rows:
        assert sorted(r["row-id"] for r in ours.rows(key)) == sorted(r["row-id"] for r in theirs.rows(key)), key
    # Every dictionary statement read AS OF the start SCN.
    for statement, binds in db.asked:
        if "AS OF SCN" in statement:
            assert binds["scn"] == doc["scn"]


@pytest.mark.parametrize("path", REFERENCES[:1], ids=_id)
def test_loader_is_order_independent_and_reads_each_system_object_once(path: Path) -> None:
    doc = _load(path)
    db = recorded_from_checkpoint(doc)
    build_schema_checkpoint(db, _request(doc))
    by_object = [b["obj"] for s, b in db.asked if s == sql.DETAILS_OF_OBJECT["sys-col"]]
    assert len(by_object) == len(set(by_object))  # each SYS/XDB table's columns read once
    by_user = [b["owner_id"] for s, b in db.asked if s == sql.DETAILS_OF_USER["sys-col"]]
    assert by_user == [next(u["user"] for u in doc["sys-user"] if u["name"] == "OLR_TEST")]


def test_two_rules_for_one_owner_read_it_once() -> None:
    doc = _load(REFERENCES[0])
    db = recorded_from_checkpoint(doc)
    request = replace(_request(doc), owners=["OLR_TEST", "OLR_TEST", "OLR_T.*"])
    built = build_schema_checkpoint(db, request)
    assert built.users == ["OLR_TEST", "OLR_T.*"] or sorted(built.users) == ["OLR_T.*", "OLR_TEST"]
    assert len([s for s, _ in db.asked if s == sql.OBJECTS_OF_USER]) == 1
    assert format_schema_checkpoint(replace(built, users=["OLR_TEST"])) == format_schema_checkpoint(_expected(doc))


def test_start_time_and_sequence() -> None:
    doc = _load(REFERENCES[0])
    db = recorded_from_checkpoint(doc)
    db.on(sql.SCN_AT_TIME, lambda b: [(Decimal(doc["scn"]),)] if b["start_time"] == "2026-01-02 03:04:05" else [])
    built = build_schema_checkpoint(db, replace(_request(doc), start_time="2026-01-02 03:04:05", start_seq=7))
    assert (built.scn, built.seq, built.schema_scn) == (doc["scn"], 7, doc["scn"])
    assert not any(s == sql.CURRENT_SCN for s, _ in db.asked)
    assert not any(s == sql.SEQUENCE_AT_SCN for s, _ in db.asked)


def test_row_mapping_of_nulls_raw_and_128_bit_numbers() -> None:
    row = dictionary_row(
        "sys-col",
        (
            "AAAAACAAAAAAFQ+AAH",
            Decimal(7),
            1,
            1,
            1,
            "ID",
            2,
            22,
            None,
            None,
            None,
            None,
            Decimal(1),
            Decimal(5),
            Decimal(1),
        ),
    )
    assert (row["precision"], row["scale"], row["charset-form"], row["property"]) == (-1, -1, 0, 5 | 1 << 64)
    qn = dictionary_row("xdb-xqn28IKGI9555TUFE0OPPJDF69FIJ", ("AAAGisAAAAAAD1VAAA", b"\x01", "lang", b"\x01", b"\x1a"))
    assert (qn["nmspcid"], qn["flags"], qn["id"]) == ("01", "01", "1A")
    obj = dictionary_row("sys-obj", ("AAAAASAAAAAAHh9AAw", 138, 73145, None, "V", 4, 0, 0), single=True)
    assert (obj["data-obj"], obj["single"]) == (0, 1)
    assert to_int(Decimal(18446744073709551615)) == (1 << 64) - 1
    assert to_int("3") == 3
    with pytest.raises(Exception) as error:
        to_int(1.5e20)  # a float cannot carry an exact SCN
    assert getattr(error.value, "code", None) == 20003
    with pytest.raises(Exception) as error:
        dictionary_row("sys-ts", ("AAAAAGAAAAAAACxAAA", 0, "SYSTEM"))
    assert getattr(error.value, "code", None) == 20003


def test_eleven_g_reads_ecol_without_guard_id() -> None:
    doc = _load(REFERENCES[0])
    db = recorded_from_checkpoint(doc)
    db.on(sql.ECOL_11_OF_OBJECT, [])
    db.on(sql.ECOL_11_OF_USER, [])
    DictionaryReader(db, doc["scn"], version12=False).read(["OLR_TEST"])
    asked = {s for s, _ in db.asked}
    assert sql.ECOL_11_OF_USER in asked and sql.DETAILS_OF_USER["sys-ecol"] not in asked
