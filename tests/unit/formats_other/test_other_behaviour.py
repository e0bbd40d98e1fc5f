"""Format selection, positions, options and edge cases shared by the non-OLR formats."""

from __future__ import annotations

import json
import logging

import pytest
from other_formats_decode import AvroStream, strict_json
from other_formats_scenario import ALL_TYPES, CLOCK, NO_PK, options, run, transactions

from replicator.config import ConfigPathError, parse_config
from replicator.config.format import FORMAT_TYPES
from replicator.errors import ConfigError
from replicator.events import OP_INSERT, RowChange, Transaction
from replicator.flags import FLAG_SCHEMALESS, FLAG_SHOW_HIDDEN
from replicator.formats.avro import AvroFormat
from replicator.formats.base import FormatOptions
from replicator.formats.canal import CanalFormat
from replicator.formats.debezium import DebeziumFormat
from replicator.formats.oms_default import OmsDefaultFormat
from replicator.formats.registry import create_format, format_names
from replicator.formats.rowvalues import TableView

MINIMAL = {
    "version": "1.9.0",
    "source": [
        {
            "alias": "S1",
            "name": "TEST",
            "format": {"type": "json"},
            "reader": {
                "type": "batch",
                "redo-log": ["a.dbf"],
                "start-scn": 1,
                "log-archive-format": "arch%t_%s_%r.dbf",
            },
        }
    ],
    "target": [{"alias": "T1", "source": "S1", "writer": {"type": "file", "output": "out.json"}}],
}


def _config(fmt: dict) -> dict:
    doc = json.loads(json.dumps(MINIMAL))
    doc["source"][0]["format"] = fmt
    return doc


@pytest.mark.parametrize("name", [n for n in FORMAT_TYPES if n != "protobuf"])
def test_config_selects_every_format(name: str) -> None:
    options_ = parse_config(_config({"type": name})).format_options()
    assert options_.type == name
    assert create_format(options_) is not None
    assert name in format_names()


def test_unknown_format_lists_valid_names() -> None:
    with pytest.raises(ConfigPathError) as caught:
        parse_config(_config({"type": "maxwell"}))
    assert caught.value.code == 30001
    for name in FORMAT_TYPES:
        assert f'"{name}"' in str(caught.value)
    with pytest.raises(ConfigError) as direct:
        create_format(FormatOptions(type="maxwell"))
    assert direct.value.code == 30001 and '"canal"' in str(direct.value)


def test_avro_schema_path_key(tmp_path) -> None:
    options_ = parse_config(_config({"type": "avro", "avro-schema-path": str(tmp_path)})).format_options()
    assert options_.avro_schema_path == str(tmp_path)
    fmt = create_format(options_)
    messages = run(fmt)
    assert all(dict(m.headers or [])["replicator.avro"] == b"data" for m in messages)
    files = sorted(p.name for p in tmp_path.glob("*.avsc"))
    assert len(files) == 3 and any(f.startswith("OLR_TEST.ALL_TYPES-value-") for f in files)
    stream = AvroStream()
    for path in tmp_path.glob("*.avsc"):
        stream.learn(int(path.stem.rsplit("-", 1)[1]), json.loads(path.read_text()))
    assert [stream.decode(m)["op"] for m in messages][1:4] == ["c", "c", "c"]


def test_avro_schema_id_is_stable_and_changes_with_structure() -> None:
    first = [m for m in run(AvroFormat(options("avro"))) if dict(m.headers or [])["replicator.avro"] == b"schema"]
    again = [m for m in run(AvroFormat(options("avro"))) if dict(m.headers or [])["replicator.avro"] == b"schema"]
    assert [m.data for m in first] == [m.data for m in again]
    ids = {json.loads(m.data)["subject"]: json.loads(m.data)["schemaId"] for m in first}
    assert len(set(ids.values())) == 3


@pytest.mark.parametrize("bits", [4, 8, 12])
def test_skip_begin_commit_keeps_olr_positions(bits: int) -> None:
    olr = [(m.scn, m.idx) for m in run(create_format(options("json", message=bits)))]
    for fmt in (DebeziumFormat(options("x", message=bits)), CanalFormat(options("x", message=bits))):
        positions = [(m.scn, m.idx) for m in run(fmt)]
        assert set(positions) <= set(olr)
    statuses = [
        strict_json(m.data)["payload"].get("status")
        for m in run(DebeziumFormat(options("x", message=bits)))
        if not m.tombstone
    ]
    assert ("BEGIN" in statuses) == (not bits & 4) and ("END" in statuses) == (not bits & 8)


def test_aux_messages_take_the_previous_position() -> None:
    qlik = create_format(options("qlik"))
    messages = run(qlik)
    kinds = [(strict_json(m.data)["type"], m.scn, m.idx) for m in messages]
    assert kinds[0] == ("MD", 2267707, 0)  # the (silent) begin's position, not the row's
    assert kinds[1] == ("DT", 2267707, 1)
    assert ("MD", 2267707, 2) in kinds and ("DT", 2267707, 3) in kinds


def test_ddl_changing_a_table_makes_a_new_qlik_version() -> None:
    md = [
        strict_json(m.data)["message"]
        for m in run(create_format(options("qlik")))
        if strict_json(m.data)["type"] == "MD"
    ]
    versions = [(x["lineage"]["table"], x["lineage"]["tableVersion"]) for x in md]
    assert versions == [("ALL_TYPES", 1), ("NO_PK", 1), ("NO_PK", 2)]
    assert "EXTRA" in md[-1]["tableStructure"]["tableColumns"]


def test_without_ddl_flag_no_ddl_messages() -> None:
    messages = run(OmsDefaultFormat(options("oms-default", flags=0)))
    assert "DDL" not in [strict_json(m.data)["recordType"] for m in messages]


def _single(change: RowChange) -> Transaction:
    return Transaction(xid=1 << 48, begin_scn=10, begin_time=0, commit_scn=11, commit_time=0, changes=[change])


def test_unknown_table_in_schemaless_mode() -> None:
    change = RowChange(
        op=OP_INSERT,
        obj=99,
        data_obj=99,
        table=None,
        before=None,
        after={0: b"\x01", 2: b"\xff"},
        scn=10,
        time=0,
        bdba=0,
        slot=0,
    )
    assert CanalFormat(options("canal")).transaction(_single(change)) == []
    data = strict_json(CanalFormat(options("canal", flags=FLAG_SCHEMALESS)).transaction(_single(change))[0].data)
    assert data["table"] == "OBJ_99" and data["data"] == [{"COL_0": "AQ==", "COL_1": None, "COL_2": "/w=="}]


def test_compressed_row_is_one_raw_column() -> None:
    change = RowChange(
        op=OP_INSERT,
        obj=NO_PK.obj,
        data_obj=NO_PK.obj,
        table=NO_PK,
        before=None,
        after={},
        scn=10,
        time=0,
        bdba=0,
        slot=0,
        compressed=b"\xab\xcd",
    )
    data = strict_json(DebeziumFormat(options("x"), mode="flatten").transaction(_single(change))[1].data)
    assert data["after"] == {"COMPRESSED": "q80="} and data["source"]["table"] == "NO_PK"  # base64


def test_hidden_and_unsupported_columns() -> None:
    import copy

    table = copy.deepcopy(ALL_TYPES)
    table.columns[1].hidden = True
    names = [c.name for c in TableView(table, FormatOptions()).columns]
    assert "N_SMALL" not in names and "LNG" not in names
    shown = [c.name for c in TableView(table, FormatOptions(flags=FLAG_SHOW_HIDDEN, unknown_type=1)).columns]
    assert "N_SMALL" in shown and "LNG" in shown


def test_undecodable_value_is_null_with_warning(caplog: pytest.LogCaptureFixture) -> None:
    change = RowChange(
        op=OP_INSERT,
        obj=ALL_TYPES.obj,
        data_obj=ALL_TYPES.obj,
        table=ALL_TYPES,
        before=None,
        after={0: b"\xc1\x02", 16: b"\x00\x00"},
        scn=10,
        time=0,
        bdba=0,
        slot=0,
    )
    with caplog.at_level(logging.WARNING):
        messages = CanalFormat(options("canal", unknown=1)).transaction(_single(change))
    assert strict_json(messages[0].data)["data"][0]["D"] is None
    assert "60002" in caplog.text


def test_tag_columns_become_the_kafka_key() -> None:
    import copy

    txns = transactions()
    first = txns[0].changes[0]
    assert isinstance(first, RowChange) and first.table is not None
    table = copy.deepcopy(first.table)
    table.tag_columns = (0, 9)
    first.table = table
    message = CanalFormat(options("canal")).transaction(txns[0])[0]
    assert strict_json(message.tag or b"") == {"ID": "1", "VC": 'zażółć "q" /'}


def test_processing_time_comes_from_the_clock() -> None:
    fmt = CanalFormat(options("canal"), clock=lambda: CLOCK)
    assert strict_json(run(fmt)[0].data)["ts"] == 1772847900123
