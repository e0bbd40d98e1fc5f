"""OpenLogReplicator JSON: column selection, value options, flags, DDL, tags."""

from __future__ import annotations

import logging

import pytest
from olr_test_builders import change, col, delete, insert, table, transaction, update

from replicator.events import (
    COL_PROPERTY_STORED_AS_LOB,
    TYPE_BLOB,
    TYPE_BOOLEAN,
    TYPE_CLOB,
    TYPE_DATE,
    TYPE_LONG,
    TYPE_NUMBER,
    TYPE_TIMESTAMP_LTZ,
    TYPE_TIMESTAMP_TZ,
    TYPE_VARCHAR2,
    DdlChange,
    Transaction,
)
from replicator.formats.base import FormatOptions
from replicator.formats.olr_json import OlrJsonFormat
from replicator.values.datetime import encode_timestamp, encode_timestamp_tz

N, V = TYPE_NUMBER, TYPE_VARCHAR2
TAB = table("T", [col("ID", N, key=True, nullable=False), col("A", V, 10), col("B", N)])


def _payload(options: FormatOptions, *changes, index: int = 1) -> str:
    txn = transaction("1.2.3", 100, 1000, list(changes))
    message = OlrJsonFormat(options).transaction(txn)[index].data.decode()
    return message[message.index('"payload":[') + 11 : -2]


def _images(options: FormatOptions, *changes) -> str:
    payload = _payload(options, *changes)
    return payload[payload.index("},") + 2 : -1]


def test_column_0_insert_delete_drop_nulls_keep_key() -> None:
    assert _images(FormatOptions(), insert(TAB, {"A": "x"})) == '"after":{"ID":null,"A":"x"}'
    assert _images(FormatOptions(), delete(TAB, {"ID": 1})) == '"before":{"ID":1}'


def test_column_1_prints_every_column() -> None:
    row = change("c", TAB, None, {0: b"\xc1\x02"})
    assert _images(FormatOptions(column=1), row) == '"after":{"ID":1,"A":null,"B":null}'
    assert _images(FormatOptions(column=1), delete(TAB, {"ID": 1})) == '"before":{"ID":1,"A":null,"B":null}'


def test_update_reduction_by_column_mode() -> None:
    upd = update(TAB, {"ID": 1, "A": "x", "B": 5}, {"B": 6})
    assert _images(FormatOptions(), upd) == '"before":{"ID":1,"B":5},"after":{"ID":1,"B":6}'
    assert _images(FormatOptions(column=1), upd) == '"before":{"ID":1,"B":5},"after":{"ID":1,"B":6}'
    assert _images(FormatOptions(column=2), upd) == '"before":{"ID":1,"A":"x","B":5},"after":{"ID":1,"A":"x","B":6}'
    # NULL on one side and not logged on the other: dropped unless key; missing side -> NULL.
    sparse = change("u", TAB, {0: None, 1: None, 2: b"\xc1\x06"}, {2: b"\xc1\x07"})
    assert _images(FormatOptions(), sparse) == '"before":{"ID":null,"B":5},"after":{"ID":null,"B":6}'


def test_not_null_warning_and_copy_flag(caplog: pytest.LogCaptureFixture) -> None:
    tab = table("W", [col("ID", N, key=True), col("C", N, nullable=False)])
    upd = change("u", tab, {0: b"\xc1\x02", 1: None}, {0: b"\xc1\x02", 1: b"\xc1\x03"})
    with caplog.at_level(logging.WARNING):
        assert _images(FormatOptions(), upd) == '"before":{"ID":1,"C":null},"after":{"ID":1,"C":2}'
    assert "60034" in caplog.text
    assert _images(FormatOptions(flags=0x40000), upd) == '"before":{"ID":1},"after":{"ID":1}'


def test_null_visibility_and_unknown_type() -> None:
    tab = table(
        "U",
        [
            col("ID", N, key=True),
            col("F", TYPE_BOOLEAN, 1),
            col("Z", TYPE_TIMESTAMP_TZ, 13),
            col("L", TYPE_LONG, 0),
            col("C", TYPE_CLOB, 4000),
        ],
    )
    before = {0: b"\xc1\x02", 1: b"\x01", 2: encode_timestamp_tz(2024, 1, 1, 0, 0, 0, 0, "+01:00"), 3: b"long", 4: None}
    after = {0: b"\xc1\x02", 1: None, 2: None, 3: None, 4: "ab".encode("utf-16-be")}
    upd = change("u", tab, before, after)
    assert _images(FormatOptions(), upd) == (
        '"before":{"ID":1,"F":1,"Z":"1704067200000000000,+01:00"},"after":{"ID":1,"C":"ab"}'
    )
    assert _images(FormatOptions(unknown_type=1), upd) == (
        '"before":{"ID":1,"F":1,"Z":"1704067200000000000,+01:00","L":"?","C":null},'
        '"after":{"ID":1,"F":null,"Z":null,"L":null,"C":"ab"}'
    )


def test_hidden_columns_and_raw_hex_flag() -> None:
    tab = table("H", [col("ID", N, key=True), col("SYS_X", N, hidden=True), col("G", N, guard=True)])
    row = change("c", tab, None, {0: b"\xc1\x02", 1: b"\xc1\x03", 2: b"\xc1\x04"})
    assert _images(FormatOptions(), row) == '"after":{"ID":1}'
    assert _images(FormatOptions(flags=0x40 | 0x80), row) == '"after":{"ID":1,"SYS_X":2,"G":3}'
    assert _images(FormatOptions(flags=0x8000), row) == '"after":{"ID":"c102","SYS_X":"c103","G":"c104"}'


def test_lobs_print_only_in_after() -> None:
    tab = table(
        "L",
        [
            col("ID", N, key=True),
            col("C", TYPE_CLOB, 4000),
            col("B", TYPE_BLOB, 4000),
            col("X", V, 32767, property=COL_PROPERTY_STORED_AS_LOB),
        ],
    )
    # A CLOB is read as AL16UTF16, an extended VARCHAR2 stored as LOB in the database set.
    row = {0: b"\xc1\x02", 1: "é".encode("utf-16-be"), 2: b"\xaa\xbb", 3: b"big"}
    assert _images(FormatOptions(), change("c", tab, None, row)) == '"after":{"ID":1,"C":"\u00e9","B":"aabb","X":"big"}'
    assert _images(FormatOptions(), change("d", tab, row, None)) == '"before":{"ID":1}'


def test_char_option_and_system_tables() -> None:
    tab = table("S", [col("ID", N, key=True), col("A", V, 10), col("NA", V, 20, form=2)])
    row = change("c", tab, None, {0: b"\xc1\x02", 1: "ż/".encode(), 2: "ż".encode("utf-16-be")})
    assert _images(FormatOptions(), row) == '"after":{"ID":1,"A":"ż\\/","NA":"ż"}'
    assert _images(FormatOptions(char=1), row) == '"after":{"ID":1,"A":"ż\\/","NA":"\\u0001|"}'
    assert _images(FormatOptions(char=2), row) == '"after":{"ID":1,"A":"c5bc2f","NA":"c5bc"}'
    assert _images(FormatOptions(char=3), row) == '"after":{"ID":1,"A":"c5bc2f","NA":"017c"}'
    tab.system = True
    assert _images(FormatOptions(char=2, flags=0x800), row) == '"after":{"ID":1,"A":"ż\\/","NA":"ż"}'


def test_date_options_ltz_and_unknown_values(caplog: pytest.LogCaptureFixture) -> None:
    tab = table("D", [col("ID", N, key=True), col("D", TYPE_DATE, 7), col("L", TYPE_TIMESTAMP_LTZ, 11)])
    value = encode_timestamp(2025, 6, 15, 12, 30, 0)
    row = change("c", tab, None, {0: b"\xc1\x02", 1: value, 2: value})
    assert (
        _images(FormatOptions(timestamp=15, db_timezone=7200), row)
        == '"after":{"ID":1,"D":"2025-06-15 12:30:00","L":"2025-06-15 10:30:00"}'
    )
    bad = change("c", tab, None, {0: b"\xc1\x02", 1: bytes.fromhex("787e0d07022d26")})
    with caplog.at_level(logging.WARNING):
        assert _images(FormatOptions(unknown=1), bad) == '"after":{"ID":1,"D":"?"}'
    assert "60002" in caplog.text and "78 7e 0d" in caplog.text


def test_escaped_names_and_compressed_rows() -> None:
    tab = table('Q"/', [col("ID", N, key=True), col("A\tB", V, 5)], owner="O\\")
    payload = _payload(FormatOptions(), change("c", tab, None, {0: b"\xc1\x02", 1: b"x"}))
    assert payload == '{"op":"c","schema":{"owner":"O\\\\","table":"Q\\"\\/"},"after":{"ID":1,"A\\tB":"x"}}'
    row = change("c", TAB, None, None)
    row.compressed = b"\x01\x02"
    assert _images(FormatOptions(), row) == '"after":{"COMPRESSED":"0102"}'


def test_ddl_messages() -> None:
    ddl = DdlChange(
        obj=72726,
        owner="OLR_TEST",
        table=TAB,
        sql='ALTER TABLE "T" ADD (C NUMBER)',
        statement_type=15,
        scn=101,
        time=1001,
    )
    unknown = DdlChange(obj=9, owner="OLR_TEST", table=None, sql="DROP TABLE X", statement_type=12, scn=102, time=1001)
    txn = transaction("1.2.3", 100, 1000, [ddl, unknown])
    assert OlrJsonFormat(FormatOptions()).transaction(txn) == []
    lines = [m.data.decode() for m in OlrJsonFormat(FormatOptions(flags=0x20, db=2, con_name="PDB")).transaction(txn)]
    assert lines[1].endswith(
        '"db":"PDB","payload":[{"op":"ddl","schema":{"owner":"OLR_TEST",'
        '"table":"T"},"sql":"ALTER TABLE \\"T\\" ADD (C NUMBER)"}]}'
    )
    assert lines[2].endswith(
        '"payload":[{"op":"ddl","schema":{"owner":"OLR_TEST","table":"OBJ_9"},"sql":"DROP TABLE X"}]}'
    )
    assert '"db"' not in lines[0]


def test_tag_columns() -> None:
    tab = table("T", [col("ID", N, key=True), col("A", V, 10), col("B", N)])
    tab.tag_columns = (0, 2)
    txn: Transaction = transaction(
        "1.2.3",
        100,
        1000,
        [
            insert(tab, {"ID": 1, "A": "x"}),
            update(tab, {"ID": 1, "A": "x", "B": 1}, {"B": 2}),
            delete(tab, {"ID": 1, "A": "x", "B": 2}),
        ],
    )
    messages = OlrJsonFormat(FormatOptions()).transaction(txn)
    assert [m.tag for m in messages] == [None, b'"ID":1', b'"ID":1,"B":2', b'"ID":1,"B":2', None]
    assert messages[1].table is tab


def test_xmltype_hidden_lob_columns(caplog: pytest.LogCaptureFixture) -> None:
    """The hidden LOB of an XMLTYPE prints with 0x40 or 0x10000; other hidden columns only with
    0x40. Binary XML (BLOB) with 0x10000 is not decoded: hex and warning 60036, once."""
    from replicator import log

    tab = table(
        "X",
        [
            col("ID", N, key=True),
            col("DOC", TYPE_CLOB, 4000, hidden=True, xml_type=True),
            col("BIN", TYPE_BLOB, 4000, hidden=True, xml_type=True),
            col("H", N, hidden=True),
        ],
    )
    row = change("c", tab, None, {0: b"\xc1\x02", 1: "<a>".encode("utf-16-be"), 2: b"\x9e\x01", 3: b"\xc1\x03"})
    assert _images(FormatOptions(), row) == '"after":{"ID":1}'
    assert _images(FormatOptions(flags=0x40), row) == '"after":{"ID":1,"DOC":"<a>","BIN":"9e01","H":2}'
    log.reset_once()
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            assert _images(FormatOptions(flags=0x10000), row) == '"after":{"ID":1,"DOC":"<a>","BIN":"9e01"}'
    assert [r.getMessage() for r in caplog.records].count(
        "incorrect XML data: binary XMLTYPE is not decoded, printed as hex (column: OLR_TEST.X.BIN)"
    ) == 1
