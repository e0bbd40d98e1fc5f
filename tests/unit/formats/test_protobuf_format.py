"""The protobuf format decodes to the same events as the JSON format (per column type and option)."""

from __future__ import annotations

import json
import struct
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from olr_test_builders import col, delete, insert, table, transaction, update

from replicator.events import (
    TYPE_BINARY_DOUBLE,
    TYPE_BINARY_FLOAT,
    TYPE_BLOB,
    TYPE_BOOLEAN,
    TYPE_CHAR,
    TYPE_CLOB,
    TYPE_DATE,
    TYPE_INTERVAL_DS,
    TYPE_INTERVAL_YM,
    TYPE_NUMBER,
    TYPE_RAW,
    TYPE_TIMESTAMP,
    TYPE_TIMESTAMP_TZ,
    TYPE_VARCHAR2,
    Checkpoint,
    DdlChange,
)
from replicator.flags import FLAG_DDL
from replicator.formats.base import FormatOptions
from replicator.formats.olr_json import OlrJsonFormat
from replicator.formats.protobuf import ProtobufFormat
from replicator.formats.protobuf_values import number_setter, strtof
from replicator.formats.registry import create_format
from replicator.proto import olr_pb2 as pb
from replicator.values.datetime import encode_timestamp_tz
from replicator.values.floats import binary_double_text, binary_float_text, encode_binary_double, encode_binary_float
from replicator.values.interval import encode_interval_ds, encode_interval_ym
from replicator.values.number import encode_number

N = TYPE_NUMBER
TAB = table(
    "ALLTYPES",
    [
        col("ID", N, precision=10, scale=0, key=True, nullable=False),
        col("SMALL", N, precision=5, scale=2),
        col("MID", N, precision=12, scale=3),
        col("WIDE", N, precision=30, scale=10),
        col("ANY_NUM", N),
        col("NAME", TYPE_VARCHAR2, 40),
        col("CODE", TYPE_CHAR, 4),
        col("NNAME", TYPE_VARCHAR2, 20, form=2),
        col("DOC", TYPE_CLOB),
        col("BIN", TYPE_RAW, 16),
        col("PIC", TYPE_BLOB),
        col("D", TYPE_DATE),
        col("TS", TYPE_TIMESTAMP, 11),
        col("TSTZ", TYPE_TIMESTAMP_TZ, 13),
        col("BF", TYPE_BINARY_FLOAT),
        col("BD", TYPE_BINARY_DOUBLE),
        col("FLAG", TYPE_BOOLEAN),
        col("IYM", TYPE_INTERVAL_YM, 5),
        col("IDS", TYPE_INTERVAL_DS, 11),
    ],
)
TYPES = {c.name: c.type_code for c in TAB.columns}
ROW = {
    "ID": 7,
    "SMALL": "123.45",
    "MID": "-98765.432",
    "WIDE": "12345678901234567890.0123456789",
    "ANY_NUM": "123456789012345678901234567890",
    "NAME": 'zażółć "q" \\ end',
    "CODE": "AB  ",
    "NNAME": "ナマエ",
    "DOC": "long text\nline 2",
    "BIN": "00ff10",
    "PIC": "cafebabe",
    "D": "2024-02-29 13:14:15",
    "TS": "1999-12-31 23:59:59.123456789",
    "BF": 3.14159,
    "BD": -2.5e-300,
    "FLAG": True,
}


def _row(**changes: Any) -> dict[str, Any]:
    row = {**ROW, **changes}
    return row


def _with_raw(change: Any, after: bool = True) -> Any:
    """Add the types the builder cannot encode (TSTZ, intervals) to a change's image."""
    index = {c.name: i for i, c in enumerate(TAB.columns)}
    raw = {
        index["TSTZ"]: encode_timestamp_tz(2020, 1, 2, 3, 4, 5, 600, "+02:00"),
        index["IYM"]: encode_interval_ym(-3, -7),
        index["IDS"]: encode_interval_ds(1, 2, 3, 4, 500000000),
    }
    image = change.after if after else change.before
    image.update(raw)
    return change


def _decimal_of(value: pb.Value) -> Decimal:
    which = value.WhichOneof("datum")
    if which == "value_int":
        return Decimal(value.value_int)
    if which == "value_float":
        return Decimal(str(np.float32(value.value_float)))  # shortest text that round-trips float32
    if which == "value_double":
        return Decimal(repr(value.value_double))
    return Decimal(value.value_string)


def _pb_value(name: str, value: pb.Value, json_value: Any) -> Any:
    """The pb value converted to what the JSON format prints for that column."""
    which = value.WhichOneof("datum")
    if which is None:
        return None
    if which == "value_float":  # OLR's float32 NUMBER typing (BOOLEAN included)
        return Decimal(str(np.float32(value.value_float)))
    kind = TYPES.get(name)
    if kind == TYPE_NUMBER:
        return _decimal_of(value)
    if kind == TYPE_BINARY_FLOAT:
        return Decimal(binary_float_text(encode_binary_float(value.value_double)))
    if kind == TYPE_BINARY_DOUBLE:
        return Decimal(binary_double_text(encode_binary_double(value.value_double)))
    if which == "value_bytes":
        return value.value_bytes.hex()
    if which == "value_int":
        return Decimal(value.value_int)
    return value.value_string


def _json_event(data: bytes) -> dict[str, Any]:
    return json.loads(data, parse_float=Decimal, parse_int=Decimal)


def _pb_event(data: bytes, json_doc: dict[str, Any]) -> dict[str, Any]:
    """A JSON-shaped view of a protobuf message, for equality with the JSON message."""
    response = pb.RedoResponse.FromString(data)
    assert response.code == pb.PAYLOAD
    event: dict[str, Any] = {"c_scn": Decimal(response.c_scn), "c_idx": Decimal(response.c_idx), "payload": []}
    if response.WhichOneof("xid_val") == "xid":
        xid = response.xid
        if len(xid) == 16 and "." not in xid:  # xid 3: the packed value here, LogMiner byte order in JSON
            x = int(xid, 16)
            xid = struct.pack("<HHI", x >> 48, (x >> 32) & 0xFFFF, x & 0xFFFFFFFF).hex()
        event["xid"] = xid
    for index, element in enumerate(response.payload):
        expected = json_doc["payload"][index]
        out: dict[str, Any] = {
            "op": {
                pb.BEGIN: "begin",
                pb.COMMIT: "commit",
                pb.INSERT: "c",
                pb.UPDATE: "u",
                pb.DELETE: "d",
                pb.DDL: "ddl",
                pb.CHKPT: "chkpt",
            }[element.op]
        }
        if element.HasField("schema"):
            out["schema"] = {"owner": element.schema.owner, "table": element.schema.name}
        for side in ("before", "after"):
            values = getattr(element, side)
            if values or side in expected:
                # A nameless Value is a column OLR's builder added but did not print.
                out[side] = {v.name: _pb_value(v.name, v, expected.get(side, {}).get(v.name)) for v in values if v.name}
        if element.ddl:
            out["sql"] = element.ddl
        if element.op == pb.CHKPT:
            out.update(seq=Decimal(element.seq), offset=Decimal(element.offset))
        event["payload"].append(out)
    return event


def _comparable(doc: dict[str, Any], lob_nulls: bool = False) -> dict[str, Any]:
    """The JSON message reduced to what the protobuf view holds (a NULL CLOB/BLOB is a nameless
    Value there unless `unknown-type` is 1: ``lob_nulls``)."""
    event = {"c_scn": doc["c_scn"], "c_idx": doc["c_idx"], "payload": []}
    if "xid" in doc:
        event["xid"] = doc["xid"]
    for element in doc["payload"]:
        out = {"op": element["op"]}
        if "schema" in element:
            out["schema"] = {"owner": element["schema"].get("owner", ""), "table": element["schema"]["table"]}
        for side in ("before", "after"):
            if side in element:
                out[side] = {
                    k: _as_protobuf(k, v)
                    for k, v in element[side].items()
                    if lob_nulls or v is not None or TYPES.get(k) not in (TYPE_CLOB, TYPE_BLOB)
                }
        if "sql" in element:
            out["sql"] = element["sql"]
        if element["op"] == "chkpt":
            out.update(seq=element["seq"], offset=element["offset"])
        event["payload"].append(out)
    return event


_NAME_ONLY = {TYPE_DATE, TYPE_TIMESTAMP, TYPE_TIMESTAMP_TZ}  # OLR sets no datum for these


def _as_protobuf(name: str, value: Any) -> Any:
    """A JSON value as OLR's protobuf encoding carries it (see protobuf_values)."""
    if isinstance(value, bool):
        value = Decimal(1 if value else 0)
    if TYPES.get(name) in _NAME_ONLY:
        return None
    column = next((c for c in TAB.columns if c.name == name), None)
    if (
        value is not None
        and column is not None
        and column.type_code in (TYPE_NUMBER, TYPE_BOOLEAN)
        and column.scale != 0
        and column.precision <= 6
        and column.scale < 38
    ):
        return Decimal(str(np.float32(strtof(str(value)))))
    return value


def _both(options: FormatOptions, txns: list[Any]) -> list[tuple[Any, Any]]:
    json_format, pb_format = OlrJsonFormat(options), ProtobufFormat(options)
    pairs = []
    for txn in txns:
        json_messages, pb_messages = json_format.transaction(txn), pb_format.transaction(txn)
        assert len(json_messages) == len(pb_messages)
        pairs.extend(zip(json_messages, pb_messages))
    return pairs


def _changes() -> list[Any]:
    return [
        _with_raw(insert(TAB, _row())),
        _with_raw(update(TAB, _row(), {"SMALL": "-0.5", "NAME": None, "ANY_NUM": "42", "BF": 0.0}), after=True),
        insert(TAB, {"ID": 8, "ANY_NUM": "-0.000123", "WIDE": "0", "BIN": "", "FLAG": False}),
        delete(TAB, _row(ID=9, MID="0.001")),
    ]


@pytest.mark.parametrize(
    "options",
    [
        FormatOptions(),
        FormatOptions(column=1, schema=1, xid=1, timestamp=4, interval_dts=8, interval_ytm=2),
        FormatOptions(column=2, message=2 | 0x10, rid=1, xid=3, timestamp=8, timestamp_tz=5, interval_dts=3),
        FormatOptions(message=1, xid=2),
        FormatOptions(char=2, timestamp=1, unknown_type=1),
    ],
)
def test_protobuf_and_json_decode_to_the_same_events(options: FormatOptions) -> None:
    txns = [
        transaction("5.6.7", 1000, 1700000000, _changes()),
        transaction("5.6.8", 1000, 1700000001, [insert(TAB, _row(ID=10))]),
    ]
    pairs = _both(options, txns)
    assert pairs
    for json_message, pb_message in pairs:
        assert (json_message.scn, json_message.idx) == (pb_message.scn, pb_message.idx)
        assert json_message.tag == pb_message.tag
        doc = _json_event(json_message.data)
        assert _pb_event(pb_message.data, doc) == _comparable(doc, options.unknown_type == 1)


def test_value_fields_follow_declared_types() -> None:
    ((_, message),) = [
        p
        for p in _both(FormatOptions(), [transaction("1.1.1", 50, 1, [insert(TAB, _row())])])
        if b"ALLTYPES" in p[1].data
    ]
    after = {v.name: v for v in pb.RedoResponse.FromString(message.data).payload[0].after}
    assert after["ID"].WhichOneof("datum") == "value_int"
    assert after["SMALL"].WhichOneof("datum") == "value_float"
    assert after["MID"].WhichOneof("datum") == "value_double"
    assert after["WIDE"].value_string == "12345678901234567890.0123456789"
    # Unconstrained NUMBER (precision and scale -1): float32, as OpenLogReplicator (lossy).
    assert after["ANY_NUM"].value_float == np.float32(1.2345679e29)
    assert after["BIN"].value_bytes == bytes.fromhex("00ff10")  # deliberate: OLR leaves RAW empty
    assert after["D"].WhichOneof("datum") is None and after["TS"].WhichOneof("datum") is None
    assert after["BD"].value_double == -2.5e-300
    assert after["FLAG"].value_float == 1.0  # BOOLEAN through the NUMBER rule with (-1, -1)


def test_number_typing_is_olrs_rule() -> None:
    """BuilderProtobuf::columnNumber on the declared precision/scale (-1 = not declared)."""

    def datum(precision: int, scale: int, text: str) -> tuple[str, Any]:
        value = pb.Value()
        number_setter(precision, scale)(value, encode_number(Decimal(text)))
        which = value.WhichOneof("datum")
        return which, getattr(value, which)

    assert datum(10, 0, "7") == ("value_int", 7)
    assert datum(-1, 0, "123456789012345678901234567890") == ("value_int", (1 << 63) - 1)  # strtol saturates
    assert datum(-1, -1, "16777217") == ("value_float", 16777216.0)  # float32
    assert datum(5, 2, "123.45")[0] == "value_float" and datum(12, 3, "-98765.432") == ("value_double", -98765.432)
    assert datum(30, 10, "1.5") == ("value_string", "1.5") and datum(18, 0, "5") == ("value_string", "5")
    assert datum(126, -127, "0.1") == ("value_string", "0.1")  # FLOAT(126)


def test_strtof_rounds_once() -> None:
    # 1 + 2**-24 + 2**-60 is just above the float32 midpoint; through a double it rounds down twice.
    text = str(Decimal(1) + Decimal(2) ** -24 + Decimal(2) ** -60)
    assert strtof(text) == 1 + 2**-23
    assert strtof("0.1") == float(np.float32(0.1)) and strtof("1e-50") == 0.0


def test_unprinted_columns_are_empty_values() -> None:
    """OLR adds the Value before looking at the column: a NULL BOOLEAN in an UPDATE (a type whose
    NULL JSON hides) and a CLOB in a before image are Values with neither name nor datum."""

    def names(options: FormatOptions) -> tuple[list[str], list[str]]:
        change = update(TAB, {"ID": 1, "FLAG": True, "DOC": "x"}, {"ID": 1, "FLAG": None})
        ((_, message),) = [
            p for p in _both(options, [transaction("1.1.2", 60, 1, [change])]) if b"ALLTYPES" in p[1].data
        ]
        element = pb.RedoResponse.FromString(message.data).payload[0]
        return [v.name for v in element.before], [v.name for v in element.after]

    assert names(FormatOptions()) == (["ID", "FLAG"], ["ID", ""])  # changed columns only
    before, after = names(FormatOptions(column=2))  # everything the redo holds
    assert before[8] == "" and after[8] == "DOC" and after[16] == "" and before[16] == "FLAG"


def test_header_checkpoint_ddl_and_registry() -> None:
    options = FormatOptions(type="protobuf", scn=1, flags=FLAG_DDL, db=3, con_name="PDB1", schema=7)
    fmt = create_format(options)
    assert isinstance(fmt, ProtobufFormat)
    ddl = DdlChange(
        obj=TAB.obj, owner="OLR_TEST", table=TAB, sql="ALTER TABLE X ADD (C NUMBER)", statement_type=15, scn=300, time=5
    )
    messages = fmt.transaction(transaction("1.2.3", 299, 5, [ddl]))
    begin, body, commit = (pb.RedoResponse.FromString(m.data) for m in messages)
    assert begin.scns == f"{299:016x}" and begin.db == "PDB1" and begin.xid == "0x0001.002.00000003"
    assert body.payload[0].ddl == "ALTER TABLE X ADD (C NUMBER)"
    assert len(body.payload[0].schema.column) == len(TAB.columns)  # every column, not only the last
    assert body.payload[0].schema.obj == TAB.obj and commit.payload[0].op == pb.COMMIT
    (chk,) = fmt.checkpoint(Checkpoint(scn=400, time=6, seq=3, offset=1024, redo_switch=True))
    response = pb.RedoResponse.FromString(chk.data)
    assert chk.checkpoint and (chk.scn, chk.idx) == (400, 0) and response.c_idx == 1
    assert (response.payload[0].op, response.payload[0].seq, response.payload[0].redo) == (pb.CHKPT, 3, True)


def test_raw_data_flag_prints_a_lob_locator_not_its_value() -> None:
    """Flag 0x8000 (raw column data): a LOB is its locator, in protobuf as in JSON."""
    from replicator.flags import FLAG_RAW_HEX
    from replicator.values.lob import LobValue

    change = insert(TAB, _row())
    pic = next(i for i, c in enumerate(TAB.columns) if c.name == "PIC")
    locator = bytes(range(40))
    for kept in (True, False):  # even a value the redo could not assemble: its locator is known
        change.after[pic] = LobValue(b"assembled value", locator, complete=kept)
        pairs = _both(FormatOptions(flags=FLAG_RAW_HEX), [transaction("1.1.2", 50, 1, [change])])
        json_msg, pb_msg = next(p for p in pairs if b"ALLTYPES" in p[1].data)
        after = {v.name: v for v in pb.RedoResponse.FromString(pb_msg.data).payload[0].after}
        assert after["PIC"].value_bytes == locator
        assert json.loads(json_msg.data)["payload"][0]["after"]["PIC"] == locator.hex()


def test_char_1_puts_the_unconverted_bytes_in_value_string_as_olr() -> None:
    """`char` 1 (no charset mapping): OLR's field, ``value_string``, for bytes that are UTF-8;
    ``value_bytes`` for the others, which a protobuf string cannot hold (docs/formats.md §8)."""
    ((_, message),) = [
        p
        for p in _both(FormatOptions(char=1), [transaction("1.1.3", 50, 1, [insert(TAB, _row())])])
        if b"ALLTYPES" in p[1].data
    ]
    after = {v.name: v for v in pb.RedoResponse.FromString(message.data).payload[0].after}
    assert after["NAME"].value_string == ROW["NAME"]  # AL32UTF8: the bytes are UTF-8
    assert after["CODE"].value_string == "AB  "
    assert after["DOC"].WhichOneof("datum") == "value_string"
    assert after["NNAME"].value_bytes == "ナマエ".encode("utf-16-be")  # AL16UTF16: not UTF-8
