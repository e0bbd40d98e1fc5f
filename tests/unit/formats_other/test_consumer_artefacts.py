"""Issue 16: each format read the way its real consumer reads it.

* DTS Avro: every message decodes with the official ``Record.avsc`` of Alibaba's DTS demos
  (``../shared/reference/formats/dts``) with nothing left over, and every object type is a
  name of the DTS Java SDK's ``ObjectType`` enum;
* Debezium: the envelope decoded as Kafka Connect's JsonConverter does (schema-driven, base64
  for ``bytes``) gives back the redo's bytes; ``binary-handling-mode`` variants; the
  unavailable-LOB placeholder; tombstones; heartbeats;
* Qlik: 35-character ``changeSequence`` sorting in stream order, 32-hex ``transactionId``;
* full rows: a NULL LOB in an INSERT/DELETE is written as null in every format;
* OMS ``storeDataSequence`` / DataWorks ``scn``: strictly increasing, the same after a restart.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from typing import Any

import fastavro
import pytest
from fastavro.schema import load_schema
from other_formats_decode import AvroStream, strict_json
from other_formats_scenario import CLOCK, SHARED, options, run, transactions

from replicator.events import Message
from replicator.formats.dts_schema import OBJECT_TYPES
from replicator.formats.registry import create_format
from replicator.formats.rowvalues import UNAVAILABLE_PLACEHOLDER

DTS_DIR = SHARED / "reference" / "formats" / "dts"
FULL_ROW_BYTES = {"R": bytes.fromhex("00ff10"), "BL": bytes.fromhex("deadbeef")}
JSON_FORMATS = (
    "canal",
    "dataworks",
    "debezium-envelope",
    "debezium-flatten",
    "debezium-smt",
    "oms-default",
    "oms-extended",
    "qlik",
    "shareplex",
)


def build(name: str, **extra: object) -> Any:
    """The registry's format ``name`` with the fixed test clock."""
    fmt = create_format(options(name, **extra))
    fmt.clock = lambda: CLOCK
    return fmt


def data_messages(name: str, **extra: object) -> list[Message]:
    """The scenario's messages without tombstones (no value to parse)."""
    return [m for m in run(build(name, **extra)) if not m.tombstone]


# -- DTS Avro ------------------------------------------------------------------------------------


def _official_record() -> Any:
    path = DTS_DIR / "com.alibaba.dts.formats.avro.Record.avsc"
    if not path.exists():
        pytest.skip(f"official DTS schema not found: {DTS_DIR} (place shared/ beside the repository)")
    return load_schema(str(path))  # resolves the value records from their sibling .avsc files


def _object_types(value: Any) -> list[str]:
    """Every TextObject/BinaryObject ``type`` in a decoded record (union branches are named)."""
    if isinstance(value, tuple) and value[0].endswith(("TextObject", "BinaryObject")):
        return [value[1]["type"]]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _object_types(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _object_types(item)]
    return []


@pytest.mark.parametrize("unknown_type", [0, 1])
def test_dts_messages_decode_with_the_official_schema(unknown_type: int) -> None:
    schema = _official_record()
    messages = data_messages("dts-avro", unknown_type=unknown_type)
    assert len(messages) >= 15
    for message in messages:
        buffer = io.BytesIO(message.data)
        record = fastavro.schemaless_reader(buffer, schema, schema, return_record_name=True)
        assert buffer.tell() == len(message.data), "bytes left over after the Record"
        assert record["bornTimestamp"] == record["sourceTimestamp"] * 1000
        assert set(_object_types(record)) <= OBJECT_TYPES


def test_dts_java_sdk_record_reads_the_same_prefix() -> None:
    """The Java SDK's Record lacks bornTimestamp: it reads the 14 fields and ignores the rest."""
    official = _official_record()
    sdk = {**official, "fields": [f for f in official["fields"] if f["name"] != "bornTimestamp"]}
    for message in data_messages("dts-avro"):
        full = fastavro.schemaless_reader(io.BytesIO(message.data), official, official)
        short = fastavro.schemaless_reader(io.BytesIO(message.data), sdk, sdk)
        assert short == {k: v for k, v in full.items() if k != "bornTimestamp"}


def test_dts_object_types_are_the_java_sdks() -> None:
    readme = DTS_DIR / "README.md"
    if not readme.exists():
        pytest.skip(f"DTS reference notes not found: {DTS_DIR}")
    listed = re.search(r"ObjectType\.valueOf` over: ([A-Z_, \n]+)\.", readme.read_text())
    assert listed is not None
    assert OBJECT_TYPES == {name.strip() for name in listed.group(1).split(",")}


# -- Debezium ------------------------------------------------------------------------------------

_INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


def connect_value(schema: dict[str, Any], value: Any) -> Any:
    """Decode a JSON value the way Kafka Connect's JsonConverter does with schemas enabled:
    structs field by field (a missing or null non-optional field is an error), ``bytes`` from
    standard base64 (Jackson's binaryValue), integers range-checked."""
    if value is None:
        assert schema.get("optional", False), f"null for non-optional {schema.get('field')}"
        return None
    kind = schema["type"]
    if kind == "struct":
        assert isinstance(value, dict)
        names = {f["field"] for f in schema["fields"]}
        assert set(value) <= names, f"unknown fields {set(value) - names}"
        return {f["field"]: connect_value(f, value.get(f["field"])) for f in schema["fields"]}
    if kind == "array":
        return [connect_value(schema["items"], item) for item in value]
    if kind == "bytes":
        assert isinstance(value, str)
        return base64.b64decode(value, validate=True)
    if kind in _INTS:
        assert isinstance(value, int) and -(1 << (_INTS[kind] - 1)) <= value < 1 << (_INTS[kind] - 1)
        return value
    if kind == "string":
        assert isinstance(value, str)
    elif kind == "boolean":
        assert isinstance(value, bool)
    return value


def _envelopes(**extra: object) -> list[dict[str, Any]]:
    return [
        connect_value(doc["schema"], doc["payload"]) | {"_schema": doc["schema"]}
        for doc in (strict_json(m.data) for m in data_messages("debezium-envelope", **extra))
    ]


def test_debezium_envelope_round_trips_through_jsonconverter() -> None:
    rows = [e for e in _envelopes() if e.get("op") in ("c", "u", "d")]
    first = rows[0]["after"]
    assert first["R"] == FULL_ROW_BYTES["R"] and first["BL"] == FULL_ROW_BYTES["BL"]
    update = rows[3]  # the UPDATE with full supplemental logging
    assert update["before"]["BL"] == FULL_ROW_BYTES["BL"] and update["after"]["BL"] == FULL_ROW_BYTES["BL"]


@pytest.mark.parametrize(
    ("mode", "decode"),
    [
        ("base64", lambda text: base64.b64decode(text, validate=True)),
        ("base64-url-safe", base64.urlsafe_b64decode),
        ("hex", binascii.unhexlify),
    ],
)
def test_debezium_binary_handling_modes(mode: str, decode: Any) -> None:
    envelope = _envelopes(binary_handling_mode=mode)[1]
    fields = {f["field"]: f for f in envelope["_schema"]["fields"][1]["fields"]}
    assert fields["R"]["type"] == fields["BL"]["type"] == "string"
    assert decode(envelope["after"]["R"]) == FULL_ROW_BYTES["R"]
    assert decode(envelope["after"]["BL"]) == FULL_ROW_BYTES["BL"]
    if mode == "hex":
        assert envelope["after"]["BL"] == "deadbeef"  # Debezium's HexConverter: lower case


def test_debezium_url_safe_alphabet() -> None:
    from replicator.formats.debezium_schema import binary_text

    assert binary_text(b"\xfb\xff", "base64-url-safe") == "-_8=" and binary_text(b"\xfb\xff", "bytes") == "+/8="


def test_unchanged_lob_is_the_unavailable_placeholder() -> None:
    minimal_update = [e for e in _envelopes() if e.get("op") == "u"][1]  # minimal logging: LOBs not in redo
    for image in ("before", "after"):
        row = minimal_update[image]
        assert row["CL"] == row["NCL"] == UNAVAILABLE_PLACEHOLDER
        assert row["BL"] == UNAVAILABLE_PLACEHOLDER.encode()
        assert row["N_SMALL"] is None  # a non-LOB column the redo lacks stays absent (read as null)
    for name in ("debezium-flatten", "debezium-smt"):
        texts = [m.data.decode() for m in data_messages(name)]
        assert any(UNAVAILABLE_PLACEHOLDER in t for t in texts)


def test_avro_keeps_the_placeholder_instead_of_null() -> None:
    stream = AvroStream()
    records = [stream.decode(m) for m in data_messages("avro")]
    updates = [r for r in records if r.get("op") == "u" and r["after"].get("ID") == 1]
    after = updates[1]["after"]
    assert after["CL"] == after["NCL"] == UNAVAILABLE_PLACEHOLDER
    assert after["BL"] == UNAVAILABLE_PLACEHOLDER.encode()
    assert after["N_SMALL"] is None


def test_debezium_tombstone_follows_a_keyed_delete() -> None:
    messages = run(build("debezium-envelope"))
    tombstones = [n for n, m in enumerate(messages) if m.tombstone]
    assert len(tombstones) == 1  # the keyed DELETE; the keyless table's DELETE has no key
    tombstone, delete = messages[tombstones[0]], messages[tombstones[0] - 1]
    assert strict_json(delete.data)["payload"]["op"] == "d"
    assert tombstone.data == b"" and tombstone.tag == delete.tag and tombstone.table is delete.table
    assert (tombstone.scn, tombstone.idx) == (delete.scn, delete.idx)
    assert not any(m.tombstone for m in run(build("debezium-envelope", tombstones_on_delete=0)))
    assert not any(m.tombstone for m in run(build("debezium-smt")))  # ExtractNewRecordState drops them


def test_debezium_heartbeat_shape() -> None:
    heartbeat = run(build("debezium-envelope"))[-1]
    doc = strict_json(heartbeat.data)
    assert doc["schema"] == {
        "type": "struct",
        "optional": False,
        "name": "io.debezium.connector.common.Heartbeat",
        "fields": [{"field": "ts_ms", "optional": False, "type": "int64"}],
    }
    assert doc["payload"] == {"ts_ms": int(CLOCK * 1000)}
    assert heartbeat.topic == "__debezium-heartbeat.TEST"
    assert strict_json(heartbeat.tag)["payload"] == {"serverName": "TEST"}
    assert strict_json(run(build("debezium-flatten"))[-1].data) == {"ts_ms": int(CLOCK * 1000)}


# -- Qlik ----------------------------------------------------------------------------------------


def test_qlik_field_lengths_and_order() -> None:
    headers = [
        doc["message"]["headers"] for doc in (strict_json(m.data) for m in data_messages("qlik")) if doc["type"] == "DT"
    ]
    sequences = [h["changeSequence"] for h in headers]
    assert all(len(s) == 35 and s.isdigit() for s in sequences)
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
    assert all(re.fullmatch("[0-9A-F]{32}", h["transactionId"]) for h in headers)
    assert headers[0]["transactionId"] == "0" * 16 + "0A000C003C020000"  # xid 10.12.572, RAW order


# -- full rows -----------------------------------------------------------------------------------


def _images(name: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The row images of one decoded message that should hold ID 2's full row."""
    if name == "qlik":
        return [doc["message"].get("data") or {}]
    if name == "canal":
        return doc.get("data") or []
    if name == "shareplex":
        return [doc.get("data") or {}]
    if name == "dataworks":
        return [(doc["payload"].get(k) or {}).get("data") or {} for k in ("before", "after")]
    if name.startswith("oms"):
        return [doc.get("prevStruct") or {}, doc.get("postStruct") or {}]
    payload = doc.get("payload", doc)
    if name == "debezium-smt":
        return [payload]
    return [payload.get("before") or {}, payload.get("after") or {}]


@pytest.mark.parametrize("name", JSON_FORMATS)
def test_null_lob_is_written_as_null(name: str) -> None:
    seen = 0
    for message in data_messages(name):
        for image in _images(name, strict_json(message.data)):
            if image.get("ID") in (2, "2"):
                assert {"CL", "NCL", "BL"} <= set(image) and image["CL"] is image["BL"] is None
                seen += 1
    assert seen >= (1 if name in ("qlik", "debezium-smt", "shareplex", "canal") else 2)  # INSERT (and DELETE)


def test_null_lob_in_qlik_mask_and_dts_image() -> None:
    from replicator.formats.masks import mask_ordinals

    dt = [strict_json(m.data)["message"] for m in data_messages("qlik")]
    row2 = next(d for d in dt if "headers" in d and d["data"].get("ID") == 2)
    assert {13, 14, 16} <= set(mask_ordinals(row2["headers"]["columnMask"]))  # CL, NCL, BL
    from other_formats_decode import decode_dts

    records = [decode_dts(m.data) for m in data_messages("dts-avro")]
    insert2 = next(r for r in records if r["operation"] == "INSERT" and r["afterImages"][0][1]["value"] == "2")
    assert insert2["afterImages"][12] is None and insert2["afterImages"][15] is None  # not EmptyObject NONE


# -- OMS / DataWorks sequence --------------------------------------------------------------------


def _sequences(name: str, fmt: Any, txns: list[Any]) -> list[int]:
    out = []
    for txn in txns:
        for message in fmt.transaction(txn):
            doc = strict_json(message.data)
            value = doc["allMetaData"]["storeDataSequence"] if name != "dataworks" else int(doc["payload"]["scn"])
            out.append(value)
    return out


@pytest.mark.parametrize("name", ["oms-default", "oms-extended", "dataworks"])
def test_sequence_strictly_increasing_and_restart_stable(name: str) -> None:
    whole = _sequences(name, build(name), transactions())
    assert all(a < b for a, b in zip(whole, whole[1:])), whole
    assert len({s // 100_000 for s in whole}) > 1  # not one transaction's numbers only
    for first in range(1, len(transactions())):  # a restart replays from a transaction boundary
        resumed = _sequences(name, build(name), transactions()[first:])
        assert resumed == whole[len(whole) - len(resumed) :]


def test_sequence_keeps_increasing_past_five_digits() -> None:
    from replicator.formats.framework import StreamSequence

    sequence = StreamSequence()
    values = [sequence.next(100, n) for n in range(100_002)] + [sequence.next(101, 1)]
    assert all(a < b for a, b in zip(values, values[1:]))


def test_debezium_keys_in_the_config() -> None:
    """``binary-handling-mode`` and ``tombstones-on-delete`` come from the format section."""
    from test_other_behaviour import _config

    from replicator.config import ConfigPathError, parse_config

    options_ = parse_config(
        _config({"type": "debezium-envelope", "binary-handling-mode": "hex", "tombstones-on-delete": 0})
    ).format_options()
    assert (options_.binary_handling_mode, options_.tombstones_on_delete) == ("hex", 0)
    defaults = parse_config(_config({"type": "debezium-envelope"})).format_options()
    assert (defaults.binary_handling_mode, defaults.tombstones_on_delete) == ("bytes", 1)
    with pytest.raises(ConfigPathError) as bad:
        parse_config(_config({"type": "debezium-envelope", "binary-handling-mode": "base16"}))
    assert bad.value.code == 30001 and '"base64-url-safe"' in str(bad.value)
