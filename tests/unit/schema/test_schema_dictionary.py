"""Dictionary rows -> tables: real fixtures, column order, skip rules and row tracking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicator.errors import DataError
from replicator.events import TYPE_CLOB, TYPE_NUMBER, TYPE_VARCHAR2
from replicator.schema.dictionary import Dictionary, column_charset
from replicator.schema.filter import TableRule, build_table_map
from replicator.schema.store import load_schema_checkpoint, parse_schema_checkpoint

SYSTEM_NAMES = {
    "CCOL$",
    "CDEF$",
    "COL$",
    "DEFERRED_STG$",
    "ECOL$",
    "LOB$",
    "LOBCOMPPART$",
    "LOBFRAG$",
    "OBJ$",
    "TAB$",
    "TABPART$",
    "TABCOMPART$",
    "TABSUBPART$",
    "TS$",
    "USER$",
    "XDB$TTSET",
}


def _dictionary(doc: dict[str, Any]) -> Dictionary:
    return Dictionary.from_checkpoint(parse_schema_checkpoint(doc, "t"))


def test_free23_test_cdc(shared: Path) -> None:
    cp = load_schema_checkpoint(shared / "fixtures/redo/free23-basic/TEST-chkpt-2266634.json")
    table_map = build_table_map(
        Dictionary.from_checkpoint(cp),
        [TableRule("OLR_TEST", ".*")],
        charset=cp.nls_character_set,
        ncharset=cp.nls_nchar_character_set,
    )
    table = table_map[72726]
    assert (table.owner, table.name, table.obj, table.data_obj, table.system) == (
        "OLR_TEST",
        "TEST_CDC",
        72726,
        72726,
        False,
    )
    (col_id, col_name) = table.columns
    assert (col_id.name, col_id.type_code, col_id.segcol, col_id.key, col_id.nullable) == (
        "ID",
        TYPE_NUMBER,
        1,
        True,
        False,
    )
    assert (col_name.name, col_name.type_code, col_name.length, col_name.key, col_name.nullable) == (
        "NAME",
        TYPE_VARCHAR2,
        100,
        False,
        True,
    )
    assert table.key_columns == (0,) and (table.charset, table.ncharset) == ("AL32UTF8", "AL16UTF16")
    assert column_charset(col_name, table) == "AL32UTF8"
    system = {t.name for t in table_map.values() if t.system}
    assert SYSTEM_NAMES <= system and all(t.owner in ("SYS", "XDB") for t in table_map.values() if t.system)
    assert {t.name for t in table_map.values() if not t.system} == {"TEST_CDC"}


def _expected_key_orders(expected_dir: Path) -> dict[str, list[str]]:
    # The longest image per table shows the full column order (OLR prints SEGCOL# order).
    orders: dict[str, list[str]] = {}
    for line in (expected_dir / "output.json").read_text().splitlines():
        for payload in json.loads(line)["payload"]:
            image = payload.get("after") or payload.get("before")
            if "schema" in payload and image:
                name = payload["schema"]["table"]
                if len(image) > len(orders.get(name, [])):
                    orders[name] = list(image)
    return orders


def test_reference_schemas_column_order(shared: Path) -> None:
    reference = shared / "reference/olr-real-outputs"
    checked = 0
    for expected_dir in sorted((reference / "expected").iterdir()):
        schema_files = sorted((reference / "schema" / expected_dir.name).glob("*.json"))
        cp = load_schema_checkpoint(schema_files[-1], "TEST")
        table_map = build_table_map(Dictionary.from_checkpoint(cp), [TableRule("OLR_TEST", ".*")])
        tables = {t.name: t for t in table_map.values() if not t.system}
        assert len(tables) == 26, expected_dir.name
        if expected_dir.name == "ddl-add-column":
            continue  # its schema predates the ALTER TABLE ADD that the output shows
        for name, keys in _expected_key_orders(expected_dir).items():
            names = [c.name for c in tables[name].columns]
            assert [n for n in names if n in keys] == keys, (expected_dir.name, name)
            checked += 1
    assert checked >= 20
    types = {t.name: t for t in table_map.values()}["TEST_TYPES"]
    assert [c.name for c in types.columns] == [
        "ID",
        "COL_VARCHAR2",
        "COL_CHAR",
        "COL_NVARCHAR2",
        "COL_NUMBER",
        "COL_FLOAT",
        "COL_DOUBLE",
        "COL_DATE",
        "COL_TIMESTAMP",
        "COL_RAW",
        "COL_INTEGER",
    ]
    assert column_charset(types.columns[3], types) == "AL16UTF16"  # NVARCHAR2: form 2


def test_reference_counts_and_partitions(shared: Path) -> None:
    path = next((shared / "reference/olr-real-outputs/schema/partitioned-table").glob("*.json"))
    cp = load_schema_checkpoint(path)
    table_map = build_table_map(Dictionary.from_checkpoint(cp), [TableRule("OLR_TEST", ".*")])
    user_tables = {id(t): t for t in table_map.values() if not t.system}
    assert sum(len(t.columns) for t in user_tables.values()) == 163
    many = next(t for t in user_tables.values() if t.name == "TEST_MANY_COLS")
    assert len(many.columns) == 61
    for name in ("TEST_RANGE_PART", "TEST_LIST_PART"):
        table = next(t for t in user_tables.values() if t.name == name)
        parts = [r["obj"] for r in cp.rows["sys-tabpart"] if r["bo"] == table.obj]
        assert len(parts) == 3 and table.data_obj == 0
        assert all(table_map[p] is table for p in parts)


def test_skip_rules(builder: Any) -> None:
    builder.table(501, "PLAIN", [("ID", 2)])
    builder.table(502, "BIN", [("ID", 2)], tab_property=0x1)
    builder.table(503, "IOT", [("ID", 2)], tab_property=0x40)
    builder.table(504, "IOT_MAP", [("ID", 2)], tab_flags=1 << 29)
    builder.table(505, "TEMP", [("ID", 2)], obj_flags=0x10)
    builder.table(506, "NESTED", [("ID", 2)], tab_property=0x2000)
    builder.table(507, "COMPRESSED", [("ID", 2)], tab_flags=1 << 34)
    builder.table(508, "DEFERRED", [("ID", 2)], tab_flags=1 << 34)
    builder.table(509, "DROPPED", [("ID", 2)], obj_flags=0x80)
    builder.table(510, "AN_INDEX", [("ID", 2)], obj_type=1)
    builder.table(511, "PART_COMPRESSED", [("ID", 2)], tab_flags=1 << 34, tab_property=0x20)
    builder.table(512, "NO_TAB", [("ID", 2)])
    doc = builder.build()
    doc["sys-tab"] = [r for r in doc["sys-tab"] if r["obj"] != 512]
    doc["sys-deferredstg"] = [
        {"row-id": builder.rid(81), "obj": o, "flags-stg": [f, 0]} for o, f in ((507, 4), (508, 8), (511, 4))
    ]
    d = _dictionary(doc)
    reasons = {o: d.skip_reason(o) for o in range(501, 513)}
    assert reasons == {
        501: None,
        502: "binary",
        503: "IOT",
        504: "IOT",
        505: "temporary table",
        506: "nested table",
        507: "compressed table",
        508: None,
        509: None,
        510: None,
        511: None,
        512: "SYS.TAB$ entry missing",
    }
    names = {t.name for t in build_table_map(d, [TableRule("APP", ".*")]).values()}
    assert names == {"PLAIN", "DEFERRED", "PART_COMPRESSED"}


def test_columns_virtual_system_generated_and_flags(builder: Any) -> None:
    builder.table(600, "T", [("ID", 2)], pk=("ID",))
    builder.column(600, "XMLCOL", 58, col=2, seg_col=0)  # virtual: never stored
    builder.column(600, "SYS_NC00003$", 112, col=2, seg_col=2, int_col=3, prop=0x100 | 0x20)
    builder.column(600, "G", 1, col=3, seg_col=3, int_col=4, prop=(1 << 39) | 0x8000, null=1, charset_form=1)
    builder.column(600, "C", TYPE_CLOB, col=4, seg_col=4, int_col=5, prop=0x400, charset_form=1)
    table = _dictionary(builder.build()).build_table(600)
    assert [c.name for c in table.columns] == ["ID", "XMLCOL", "G", "C"]
    xml, guard, clob = table.columns[1:]
    assert xml.hidden and not xml.key and xml.segcol == 2
    assert guard.guard and guard.unused and not guard.nullable and not guard.hidden
    assert clob.nested and column_charset(clob, table) == "AL16UTF16"  # OLR reads CLOB as NCHAR
    assert column_charset(guard, table) == "AL32UTF8" and table.key_columns == (0,)


def test_segcol_gap_is_error_50002(builder: Any) -> None:
    builder.table(700, "GAP", [("A", 2)])
    builder.column(700, "C", 2, col=3, seg_col=3)
    with pytest.raises(DataError) as info:
        _dictionary(builder.build()).build_table(700)
    assert info.value.code == 50002


def test_apply_row_by_rowid(builder: Any) -> None:
    builder.table(800, "T", [("ID", 2)])
    d = _dictionary(builder.build())
    assert [c.name for c in d.build_table(800).columns] == ["ID"]
    rid = builder.rid(2)
    d.apply_row(
        "SYS.COL$",
        "insert",
        rid,
        {
            "obj": 800,
            "col": 2,
            "seg-col": 2,
            "int-col": 2,
            "name": "NEW",
            "type": 1,
            "length": 10,
            "precision": -1,
            "scale": -1,
            "charset-form": 1,
            "charset-id": 873,
            "null": 0,
            "property": [0, 0],
        },
    )
    assert [c.name for c in d.build_table(800).columns] == ["ID", "NEW"]
    d.apply_row("sys-col", "u", rid, {"name": "RENAMED", "null": 1})
    assert d.build_table(800).columns[1].name == "RENAMED" and not d.build_table(800).columns[1].nullable
    d.apply_row("sys-col", "update", builder.rid(2), {"name": "PARTIAL"})  # unknown ROWID: ignored
    d.apply_row("sys-col", "d", rid)
    assert [c.name for c in d.build_table(800).columns] == ["ID"]
    obj_rid = next(r["row-id"] for r in d.rows("sys-obj") if r["obj"] == 800)
    d.apply_row("SYS.OBJ$", "u", obj_rid, {"flags": [0x80, 0]})  # dropped
    assert all(r["obj"] != 800 for r in d.tables())
    snapshot = d.snapshot()
    assert sum(1 for r in snapshot["sys-col"] if r["obj"] == 800) == 1
    col_rid = next(r["row-id"] for r in d.rows("sys-col") if r["obj"] == 800)
    with pytest.raises(DataError):
        d.apply_row("sys-col", "u", col_rid, {"seg-col": "x"})
    with pytest.raises(KeyError):
        d.apply_row("SYS.NOPE$", "d", rid)
