"""Schema checkpoint files: loading the real fixtures, round trips, selection and error codes."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from replicator.errors import DataError, RuntimeFailure
from replicator.schema.rows import rowid_sort_key
from replicator.schema.store import (
    MinTran,
    SchemaCheckpoint,
    find_schema_checkpoint,
    format_schema_checkpoint,
    list_schema_checkpoints,
    load_best_schema_checkpoint,
    load_schema_checkpoint,
    parse_schema_checkpoint,
    parse_timezone,
    write_schema_checkpoint,
)


def _sorted_rows(cp: SchemaCheckpoint) -> dict[str, list[dict[str, Any]]]:
    return {k: sorted(v, key=lambda r: rowid_sort_key(r["row-id"])) for k, v in cp.rows.items()}


def _write_doc(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def test_free23_fixture_loads(shared: Path) -> None:
    cp = load_schema_checkpoint(shared / "fixtures/redo/free23-basic/TEST-chkpt-2266634.json", "TEST")
    assert (cp.database, cp.scn, cp.resetlogs, cp.activation) == ("TEST", 2266634, 1224959854, 1496992686)
    assert (cp.context, cp.con_id, cp.con_name) == ("FREE", 3, "FREEPDB1")
    assert cp.restart_position == (0, 0) and cp.min_tran is None
    assert (cp.nls_character_set, cp.nls_nchar_character_set) == ("AL32UTF8", "AL16UTF16")
    assert cp.db_timezone_offset == 0 and cp.log_archive_format == "o1_mf_%t_%s_%h_.arc"
    assert [g.paths for g in cp.online_redo] == [
        ["/opt/oracle/oradata/FREE/redo01.log"],
        ["/opt/oracle/oradata/FREE/redo02.log"],
    ]
    assert [i.status for i in cp.incarnations] == ["PARENT", "CURRENT"]
    assert cp.users == ["OLR_TEST"] and cp.schema_scn == 2266634 and cp.schema_ref_scn is None
    counts = {k: len(v) for k, v in cp.rows.items()}
    assert counts["sys-col"] == 411 and counts["sys-obj"] == 21 and counts["sys-tab"] == 20
    assert counts["sys-ccol"] == 143 and counts["sys-cdef"] == 144 and counts["sys-user"] == 3
    assert counts["xdb-xqn28IKF5O20KT14E0OPPJDF68MK2"] == 696
    sys_user = next(r for r in cp.rows["sys-user"] if r["name"] == "SYS")
    assert sys_user["spare1"] == 384  # [384, 0] became one int


def test_every_reference_schema_loads(shared: Path) -> None:
    files = sorted((shared / "reference/olr-real-outputs/schema").glob("*/*.json"))
    assert len(files) >= 22
    for path in files:
        cp = load_schema_checkpoint(path, "TEST")
        raw = json.loads(path.read_text())
        for key, rows in cp.rows.items():
            assert len(rows) == len(raw[key]), (path, key)
        assert cp.schema_scn == raw["schema-scn"]


def test_min_tran_gives_restart_position(shared: Path) -> None:
    path = shared / "reference/olr-real-outputs/schema/rac-ddl-cross-node/TEST-chkpt-3409256.json"
    cp = load_schema_checkpoint(path)
    assert cp.min_tran == MinTran(49, 10752, "0x0014.01f.000000c8")
    assert cp.restart_position == (49, 10752) and (cp.seq, cp.offset) == (49, 14848)


def test_round_trip_real_fixture(shared: Path, tmp_path: Path) -> None:
    cp = load_schema_checkpoint(shared / "fixtures/redo/free23-basic/TEST-chkpt-2266634.json")
    written = write_schema_checkpoint(tmp_path, cp)
    assert written.name == "TEST-chkpt-2266634.json"
    assert [p.name for p in tmp_path.iterdir()] == [written.name]  # no temp file left
    again = load_schema_checkpoint(written, "TEST")
    assert _sorted_rows(again) == _sorted_rows(cp)
    cp.rows, again.rows = {}, {}
    assert again == cp
    # Writing what was read reproduces the same bytes (rows are kept in ROWID order).
    assert format_schema_checkpoint(load_schema_checkpoint(written)) == written.read_text()


def test_written_layout_matches_olr(builder: Any) -> None:
    doc = builder.build()
    doc["min-tran"] = {"seq": 3, "offset": 512, "xid": "0x0001.002.00000003"}
    text = format_schema_checkpoint(parse_schema_checkpoint(doc, "t"))
    lines = text.split("\n")
    assert lines[0].startswith(
        '{"database":"DB1","scn":1000,"resetlogs":7,"activation":9,"time":0,'
        '"seq":3,"offset":1024,"min-tran":{"seq":3,"offset":512,'
    )
    assert lines[0].endswith('"supp-log-db-all":0,') and lines[1] == '"online-redo":['
    assert lines[2] == '{"group":1,"path":["/redo/r1.log"]}],'
    assert '"users":[' in lines and '"APP"],' in lines and '"schema-scn":1000,' in lines
    assert lines[-1].endswith("]}")
    keys = list(json.loads(text))
    assert keys[keys.index("schema-scn") + 1 :] == [
        "sys-ccol",
        "sys-cdef",
        "sys-col",
        "sys-deferredstg",
        "sys-ecol",
        "sys-lob",
        "sys-lob-comp-part",
        "sys-lob-frag",
        "sys-obj",
        "sys-tab",
        "sys-tabcompart",
        "sys-tabpart",
        "sys-tabsubpart",
        "sys-ts",
        "sys-user",
        "xdb-ttset",
    ]


def test_reference_only_file(builder: Any, tmp_path: Path) -> None:
    cp = parse_schema_checkpoint(builder.build(), "t")
    cp.schema_ref_scn, cp.schema_scn, cp.rows = 900, None, {}
    text = format_schema_checkpoint(cp)
    assert text.endswith('"users":[\n"APP"],\n"schema-ref-scn":900}')
    assert parse_schema_checkpoint(json.loads(text), "t") == cp


def test_unknown_keys_are_accepted(builder: Any) -> None:
    doc = builder.build()
    doc["db-id"] = 1385559638
    doc["online-redo"][0]["thread"] = 2
    doc["sys-user"][0]["extra"] = 1
    assert parse_schema_checkpoint(doc, "t").online_redo[0].group == 1


def test_list_and_find(tmp_path: Path, builder: Any) -> None:
    for name in (
        "DB1-chkpt-100.json",
        "DB1-chkpt-250.json",
        "DB1-chkpt-90.json",
        "DB1-chkpt.json",
        "DB1-chkpt-12abc.json",
        "DB2-chkpt-50.json",
        "DB1-chkpt-300.json.tmp",
    ):
        (tmp_path / name).write_text("{}")
    (tmp_path / "DB1-chkpt-500.json").mkdir()  # not a regular file
    assert [scn for scn, _ in list_schema_checkpoints(tmp_path, "DB1")] == [90, 100, 250]
    assert find_schema_checkpoint(tmp_path, "DB1", 249).name == "DB1-chkpt-100.json"
    assert find_schema_checkpoint(tmp_path, "DB1", 250).name == "DB1-chkpt-250.json"
    assert find_schema_checkpoint(tmp_path, "DB1", 89) is None
    assert find_schema_checkpoint(tmp_path, "DB1", 0) is None
    with pytest.raises(RuntimeFailure) as info:
        list_schema_checkpoints(tmp_path / "missing", "DB1")
    assert info.value.code == 10012


def test_load_best_falls_back_and_resolves_reference(
    tmp_path: Path, builder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    full = parse_schema_checkpoint(builder.build(), "t")
    full.scn = full.schema_scn = 100
    write_schema_checkpoint(tmp_path, full)
    ref = parse_schema_checkpoint(builder.build(), "t")
    ref.scn, ref.schema_scn, ref.schema_ref_scn, ref.rows = 200, None, 100, {}
    write_schema_checkpoint(tmp_path, ref)
    (tmp_path / "DB1-chkpt-300.json").write_text("{broken")
    best = load_best_schema_checkpoint(tmp_path, "DB1", 1000)
    assert best is not None and best.scn == 200 and best.schema_scn == 100
    assert best.rows["sys-user"] == full.rows["sys-user"]
    assert "20001" in caplog.text
    # A reference to a missing file: WARN 60019, then the next lower checkpoint.
    ref.scn, ref.schema_ref_scn = 250, 150
    write_schema_checkpoint(tmp_path, ref)
    with caplog.at_level(logging.WARNING):
        best = load_best_schema_checkpoint(tmp_path, "DB1", 260)
    assert best is not None and best.scn == 200 and "60019" in caplog.text
    assert load_best_schema_checkpoint(tmp_path, "DB1", 99) is None


def test_database_mismatch_and_bad_json(tmp_path: Path, builder: Any) -> None:
    path = _write_doc(tmp_path / "DB1-chkpt-1000.json", builder.build())
    with pytest.raises(DataError) as info:
        load_schema_checkpoint(path, "OTHER")
    assert info.value.code == 20001
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(DataError) as info:
        load_schema_checkpoint(tmp_path / "bad.json")
    assert info.value.code == 20001
    with pytest.raises(RuntimeFailure) as info:
        load_schema_checkpoint(tmp_path / "absent.json")
    assert info.value.code == 10001


@pytest.mark.parametrize(
    "mutate, code",
    [
        (lambda d: d.pop("resetlogs"), 20003),
        (lambda d: d.update(scn="1000"), 20003),
        (lambda d: d.update({"con-id": 70000}), 20003),
        (lambda d: d.pop("sys-col"), 20003),
        (lambda d: d.update(users=[1]), 20003),
        (lambda d: d["sys-user"][0].pop("name"), 20003),
        (lambda d: d["sys-user"][0].update(spare1=[1, 0, 0]), 20005),
        (lambda d: d["sys-user"][0].update(spare1=[1]), 20005),
        (lambda d: d["sys-user"][0].update(spare1=5), 20003),
        (lambda d: d["sys-user"][0].update({"row-id": "short"}), 20008),
        (lambda d: d.update(offset=100), 20006),
        (lambda d: d.update({"min-tran": {"seq": 1, "offset": 700, "xid": "x"}}), 20006),
        (lambda d: d.update({"db-timezone": "bogus"}), 20001),
    ],
)
def test_error_codes(builder: Any, mutate: Any, code: int) -> None:
    doc = builder.build()
    mutate(doc)
    with pytest.raises(DataError) as info:
        parse_schema_checkpoint(doc, "t")
    assert info.value.code == code


def test_optional_fields(builder: Any) -> None:
    doc = builder.build()
    del doc["db-timezone"], doc["time"], doc["xdb-ttset"]
    builder.table(500, "T", [("ID", 2)])
    doc["sys-tab"] = builder.build()["sys-tab"]
    del doc["sys-tab"][0]["ts"]
    cp = parse_schema_checkpoint(doc, "t")
    assert cp.db_timezone == "+00:00" and cp.time == 0 and cp.rows["xdb-ttset"] == []
    assert cp.rows["sys-tab"][0]["ts"] == 0
    doc["offset"] = 100  # a misaligned offset is fine when min-tran gives the position
    doc["min-tran"] = {"seq": 2, "offset": 512, "xid": "0x0001.002.00000003"}
    assert parse_schema_checkpoint(doc, "t").restart_position == (2, 512)


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("+00:00", 0),
        ("+05:30", 19800),
        ("-10:00", -36000),
        ("+1:00", 3600),
        ("UTC", 0),
        ("CET", 3600),
        ("EST", -18000),
        ("Etc/GMT-3", -10800),
        ("nonsense", None),
        ("+5:3", None),
    ],
)
def test_parse_timezone(text: str, seconds: int | None) -> None:
    assert parse_timezone(text) == seconds
