"""Dictionary tracking: committed SYS DML keeps the dictionary and the table map current."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicator.errors import DataError
from replicator.events import OP_DELETE, OP_INSERT, OP_UPDATE, RowChange, Table
from replicator.redo.parser import Parser, ParserOptions
from replicator.redo.reader import read_lwns
from replicator.redogen import Scenario
from replicator.redogen.encode import encode_number
from replicator.redogen.generator import RedoGenerator
from replicator.redogen.schema import schema_checkpoint
from replicator.schema.dictionary import Dictionary
from replicator.schema.document import parse_schema_checkpoint
from replicator.schema.filter import TableRule, build_table_map
from replicator.schema.store import load_schema_checkpoint
from replicator.schema.tracking import DictionaryTracker, decode_fields, default_row

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
FREE23 = SHARED / "fixtures" / "redo" / "free23-basic"
RULES = [TableRule("OLR_TEST", ".*")]

DDL_SCENARIO: dict[str, Any] = {
    "name": "TEST",
    "version": "23",
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
    "timeline": [
        {"insert": "T1", "values": {"ID": 1, "NAME": "a", "VAL": 1, "EXTRA": "x"}},
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
        {"rename_column": "T1", "column": "VAL", "to": "AMOUNT"},
        {"add_column": "T1", "column": "EMAIL VARCHAR2(50)"},
        {"drop_column": "T1", "column": "EXTRA"},
        {"set_unused_column": "T1", "column": "NAME"},
        {"truncate": "T2"},
        {"add_partition": "TP", "partition": {"name": "P3"}},
        {"insert": "TP:P3", "values": {"ID": 3, "NAME": "p3"}},
        {"commit": 1},
        {"drop_table": "T2"},
    ],
}


def _text(value: str) -> bytes:
    return value.encode("utf-8")


def _sys_table(d: Dictionary, name: str) -> Table:
    obj = next(r["obj"] for r in d.tables() if r["name"] == name and r["owner"] == 0)
    return d.build_table(obj, owner="SYS", system=True)


def _generated(tmp_path: Path, doc: dict[str, Any]) -> tuple[Any, Any, Dictionary]:
    sc = Scenario.from_dict(json.loads(json.dumps(doc)))
    gen = RedoGenerator(sc, tmp_path).run()
    cp = parse_schema_checkpoint(json.loads(json.dumps(schema_checkpoint(sc, gen))), "generated")
    return sc, gen, Dictionary.from_checkpoint(cp)


def _parse(logs: list[Path], opts: ParserOptions) -> list[Any]:
    seen: list[Any] = []
    parser = Parser(opts, seen.append)
    for path in logs:
        headers: list[Any] = []
        started = False
        for lwn in read_lwns(str(path), True, header_out=headers):
            if not started:
                parser.start_file(headers[0])
                started = True
            parser.process_lwn(lwn)
    return seen


def test_decode_fields_and_olr_null_rules(tmp_path: Path) -> None:
    _, _, d = _generated(tmp_path, {"tables": DDL_SCENARIO["tables"][:1]})
    col = _sys_table(d, "COL$")
    pos = {c.name: i for i, c in enumerate(col.columns)}
    image = {
        pos["OBJ#"]: encode_number(77),
        pos["NAME"]: _text("EMAIL"),
        pos["PRECISION#"]: None,
        pos["PROPERTY"]: encode_number(1 << 70),
        pos["SPARE1"]: encode_number(5),
    }
    fields = decode_fields("sys-col", col, image, present=[pos["SCALE"], pos["CHARSETID"]])
    # NULL precision/scale mean -1, other NULL numbers 0; unknown columns (SPARE1) are ignored.
    assert fields == {"obj": 77, "name": "EMAIL", "precision": -1, "scale": -1, "charset-id": 0, "property": 1 << 70}
    assert default_row("sys-col")["precision"] == -1 and default_row("sys-obj")["name"] == ""
    with pytest.raises(DataError) as err:
        decode_fields("sys-col", col, {pos["OBJ#"]: encode_number(-1)})
    assert err.value.code == 50020
    with pytest.raises(DataError) as err:
        decode_fields("sys-col", col, {pos["OBJ#"]: encode_number(1.5)})
    assert err.value.code == 50020
    with pytest.raises(DataError) as err:
        decode_fields("sys-col", col, {pos["NAME"]: encode_number(1)} | {pos["OBJ#"]: _text("x")})
    assert err.value.code in (50019, 50020)


def test_insert_update_delete_by_rowid(tmp_path: Path) -> None:
    _, _, d = _generated(tmp_path, {"tables": DDL_SCENARIO["tables"][:1]})
    obj_table = _sys_table(d, "OBJ$")
    pos = {c.name: i for i, c in enumerate(obj_table.columns)}
    tracker = DictionaryTracker(d, lambda dd: build_table_map(dd, RULES), users=["OLR_TEST"])
    owner = next(r["user"] for r in d.rows("sys-user") if r["name"] == "OLR_TEST")

    def change(op: str, slot: int, after: dict[str, Any] | None) -> RowChange:
        image = {pos[k]: v for k, v in (after or {}).items()}
        return RowChange(
            op=op,
            obj=18,
            data_obj=18,
            table=obj_table,
            before=None if op == OP_INSERT else image,
            after=image if op != OP_DELETE else None,
            scn=1,
            time=0,
            bdba=0x7777,
            slot=slot,
        )

    new = {
        "OBJ#": encode_number(99000),
        "DATAOBJ#": encode_number(99000),
        "OWNER#": encode_number(owner),
        "NAME": _text("NEWT"),
        "TYPE#": encode_number(2),
    }
    tables = build_table_map(d, RULES)
    assert tracker.apply([change(OP_INSERT, 1, new)], 10, tables) is not None
    row = next(r for r in d.rows("sys-obj") if r["obj"] == 99000)
    assert row["name"] == "NEWT" and row["flags"] == 0 and tracker.schema_scn == 10 and tracker.pending
    with pytest.raises(DataError) as err:
        tracker.apply([change(OP_INSERT, 1, new)], 11, tables)
    assert err.value.code == 50022
    tracker.apply([change(OP_UPDATE, 1, {"NAME": _text("RENAMED")})], 12, tables)
    assert next(r for r in d.rows("sys-obj") if r["obj"] == 99000)["name"] == "RENAMED"
    # An update of an unknown ROWID is skipped (OLR without adaptive schema).
    assert tracker.apply([change(OP_UPDATE, 2, {"NAME": _text("X")})], 13, tables) is None
    # Another ROWID taking OBJ# 99000: OLR's unique key check (50024), located by offset.
    clash = RowChange(
        op=OP_INSERT,
        obj=18,
        data_obj=18,
        table=obj_table,
        before=None,
        after={pos[k]: v for k, v in {**new, "NAME": _text("OTHER")}.items()},
        scn=1,
        time=0,
        bdba=0x7777,
        slot=3,
        offset=4096,
    )
    with pytest.raises(DataError, match=r"duplicate SYS\.OBJ\$ value for unique .*\)2 at offset: 4096") as err:
        tracker.apply([clash], 14, tables)
    assert err.value.code == 50024
    tracker.apply([change(OP_DELETE, 1, None)], 14, tables)
    assert all(r["obj"] != 99000 for r in d.rows("sys-obj"))
    # An object of an owner outside the dictionary is pruned, as OLR does.
    stranger = dict(new, **{"OWNER#": encode_number(4242)})
    tracker.apply([change(OP_INSERT, 3, stranger)], 15, tables)
    assert all(r["obj"] != 99000 for r in d.rows("sys-obj"))


def test_tracked_dictionary_equals_the_generated_one(tmp_path: Path) -> None:
    """Every DDL of the timeline, replayed from redo, leaves exactly the simulated dictionary."""
    sc, gen, d = _generated(tmp_path, DDL_SCENARIO)
    rebuild = lambda dd: build_table_map(dd, RULES)
    tracker = DictionaryTracker(d, rebuild, users=["OLR_TEST"])
    _parse(
        [log.path for log in gen.logs], ParserOptions(tables=rebuild(d), first_data_scn=sc.start_scn, tracker=tracker)
    )
    simulated = gen.catalog.checkpoint_rows()
    # COL$.LENGTH is not tracked from redo (as OLR): columns created in redo have length 0.
    initial = {r["row-id"] for r in gen.catalog.initial["sys-col"]}
    simulated["sys-col"] = [r if r["row-id"] in initial else {**r, "length": 0} for r in simulated["sys-col"]]
    want = {
        key: sorted(json.dumps(r, sort_keys=True) for r in rows)
        for key, rows in parse_schema_checkpoint(
            json.loads(json.dumps({**schema_checkpoint(sc, gen), **simulated})), "w"
        ).rows.items()
    }
    got = {key: sorted(json.dumps(r, sort_keys=True) for r in d.snapshot().get(key, [])) for key in want}
    assert got == want
    t1 = next(t for t in rebuild(d).values() if t.name == "T1")
    assert [(c.name[:11], c.unused) for c in t1.columns] == [
        ("ID", False),
        ("SYS_C00002_", True),
        ("AMOUNT", False),
        ("EMAIL", False),
    ]
    part_objs = {obj for obj, t in rebuild(d).items() if t.name == "TP"}
    assert len(part_objs) == 4  # the table and its three partitions
    assert all(t.name != "T2" for t in rebuild(d).values())


def test_dictionary_position_skips_applied_transactions(tmp_path: Path) -> None:
    sc, gen, d = _generated(tmp_path, DDL_SCENARIO)
    rebuild = lambda dd: build_table_map(dd, RULES)
    tracker = DictionaryTracker(d, rebuild, users=["OLR_TEST"])
    # The dictionary claims to be current past the end of the redo: nothing is applied again.
    opts = ParserOptions(tables=rebuild(d), first_data_scn=sc.start_scn, tracker=tracker, dictionary_pos=(99, 0))
    before = d.snapshot()
    _parse([log.path for log in gen.logs], opts)
    assert d.snapshot() == before and not tracker.pending


def test_real_dictionary_transaction_of_the_fixture() -> None:
    """The 23ai fixture's recursive transaction (deferred segment creation) updates TAB$ and
    deletes DEFERRED_STG$ rows: ROWIDs formed from the clustered redo match the real ones."""
    if not FREE23.is_dir():
        pytest.skip(f"shared fixtures not found at {FREE23}")
    cp = load_schema_checkpoint(FREE23 / "TEST-chkpt-2266634.json", "TEST")
    d = Dictionary.from_checkpoint(cp)
    rebuild = lambda dd: build_table_map(dd, RULES)
    tracker = DictionaryTracker(d, rebuild, users=cp.users)
    tab_before = next(r for r in d.rows("sys-tab") if r["obj"] == 72726)
    assert {r["obj"] for r in d.rows("sys-deferredstg")} >= {72726, 72727}
    seen = _parse(
        [FREE23 / "arch1_15_1224959854.dbf"],
        ParserOptions(tables=rebuild(d), flags=0x400, first_data_scn=cp.scn, tracker=tracker),
    )
    tab_after = next(r for r in d.rows("sys-tab") if r["obj"] == 72726)
    assert tab_after["row-id"] == tab_before["row-id"] == "AAAAACAAAAAAFQ+AAD"
    assert tab_before["property"] == 17716740096 and tab_after["property"] == 536870912
    assert {r["obj"] for r in d.rows("sys-deferredstg")} == {983}
    rows = [c for t in seen for c in t.changes]
    assert [(c.op, c.table.name) for c in rows] == [("c", "TEST_CDC")]  # SYS rows stay hidden
