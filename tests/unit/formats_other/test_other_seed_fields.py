"""Every field the seed documents list is present in the messages of its kind.

The field lists are transcribed from ../shared/seeds (oms-kafka-message-formats.txt,
qlik-replicate-msk-data-messages.txt, dts-kafka-data-formats.txt); a second test checks
each listed name really occurs in its document, so the lists cannot drift from the seeds.
Paths: ``a.b`` nested keys, ``*`` any key (a column), ``[]`` every list item.
"""

from __future__ import annotations

import pytest
from other_formats_decode import decode_dts, strict_json
from other_formats_scenario import CLOCK, SEEDS, options, run

from replicator.formats.registry import create_format

OMS, QLIK, DTS = "oms-kafka-message-formats.txt", "qlik-replicate-msk-data-messages.txt", "dts-kafka-data-formats.txt"
_OMS_META = [
    "checkpoint",
    "record_primary_key",
    "record_primary_value",
    "source_identity",
    "dbType",
    "storeDataSequence",
    "table_name",
    "db",
    "timestamp",
    "uniqueId",
    "transId",
]
_OMS_TOP = ["prevStruct", "postStruct", "allMetaData", "recordType"]
_DBZ_SOURCE = [f"source.{n}" for n in ("version", "connector", "name", "ts_ms", "db", "table", "pos", "server_id")]
_QLIK_HEADERS = [
    "operation",
    "changeSequence",
    "timestamp",
    "streamPosition",
    "transactionId",
    "changeMask",
    "columnMask",
    "externalSchemaId",
    "transactionEventCounter",
    "transactionLastEvent",
]

# format -> kind -> (seed document, paths). Kinds: c/u/d rows, ddl, begin, commit, heartbeat.
FIELDS: dict[str, dict[str, tuple[str, list[str]]]] = {
    "oms-default": {
        "cud": (OMS, _OMS_TOP + [f"allMetaData.{n}" for n in _OMS_META]),
        "ddl": (OMS, _OMS_TOP + ["postStruct.ddl", "allMetaData.ddlType"]),
        "heartbeat": (OMS, ["recordType", "allMetaData.checkpoint"]),
    },
    "oms-extended": {
        "c": (OMS, _OMS_TOP + ["postStruct.__light_type.*.schemaType"]),
        "ddl": (OMS, ["postStruct.ddl", "postStruct.__light_type.ddl.schemaType"]),
    },
    "canal": {
        "cud": (
            OMS,
            ["database", "sqlType", "data", "pkNames", "old", "mysqlType", "type", "table", "es", "isDdl", "ts", "sql"],
        ),
        "ddl": (DTS, ["database", "es", "id", "isDdl", "sql", "table", "ts", "type"]),
    },
    "dataworks": {
        "cud": (
            OMS,
            [
                "version",
                "schema.source.dbType",
                "schema.source.dbVersion",
                "schema.source.dbName",
                "schema.source.schema",
                "schema.source.table",
                "schema.column[].name",
                "schema.column[].type",
                "payload.before",
                "payload.after",
                "payload.op",
                "payload.timestamp.eventTime",
                "payload.timestamp.systemTime",
                "payload.timestamp.checkpointTime",
                "payload.ddl",
                "payload.scn",
                "extend",
            ],
        ),
        "u": (OMS, ["payload.before.data", "payload.after.data"]),
        "ddl": (OMS, ["payload.ddl.text", "payload.op"]),
        "begin": (OMS, ["payload.op"]),
        "commit": (OMS, ["payload.op"]),
        "heartbeat": (OMS, ["version", "payload.timestamp.eventTime", "payload.op"]),
    },
    "shareplex": {
        "cud": (
            OMS,
            ["data"]
            + [f"meta.{n}" for n in ("time", "op", "posttime", "idx", "size", "seq", "table", "rowid", "trans", "scn")],
        ),
        "u": (OMS, ["key"]),
        "ddl": (OMS, ["data", "meta.op", "sql.ddl"]),
    },
    "debezium-envelope": {
        "cud": (
            OMS,
            [
                "schema.type",
                "schema.optional",
                "schema.fields[].field",
                "schema.fields[].type",
                "schema.fields[].optional",
                "payload.op",
                "payload.before",
                "payload.after",
                "payload.ts_ms",
            ]
            + [f"payload.{p}" for p in _DBZ_SOURCE],
        ),
        "heartbeat": (OMS, ["payload.ts_ms"]),  # Debezium's heartbeat: ts_ms only (issue 16)
    },
    "debezium-flatten": {"cud": (OMS, ["op", "before", "after", "ts_ms", *_DBZ_SOURCE])},
    "debezium-smt": {"cud": (OMS, ["__deleted"])},
    "qlik": {
        "cud": (QLIK, ["message.data", *(f"message.headers.{n}" for n in _QLIK_HEADERS)]),
        "u": (QLIK, ["message.beforeData"]),
    },
    "dts-avro": {
        "cud": (
            OMS,
            [
                "version",
                "id",
                "sourceTimestamp",
                "sourcePosition",
                "safeSourcePosition",
                "sourceTxid",
                "source.sourceType",
                "source.version",
                "operation",
                "objectName",
                "processTimestamps",
                "tags",
                "fields[].name",
                "fields[].dataTypeNumber",
                "beforeImages",
                "afterImages",
            ],
        ),
        "ddl": (OMS, ["afterImages"]),
    },
}
_KINDS = {
    "INSERT": "c",
    "UPDATE": "u",
    "DELETE": "d",
    "upd": "u",
    "ins": "c",
    "del": "d",
    "c": "c",
    "u": "u",
    "d": "d",
    "DDL": "ddl",
    "ddl": "ddl",
    "HEARTBEAT": "heartbeat",
    "BEGIN": "begin",
    "COMMIT": "commit",
    "TRANSACTION_BEGIN": "begin",
    "TRANSACTION_END": "commit",
}


def _kind(name: str, message: dict) -> str:
    """The event kind of a decoded message, format by format."""
    if name == "debezium-smt":
        return "cud"
    if name.startswith("debezium") and set(message.get("payload", message)) == {"ts_ms"}:
        return "heartbeat"
    for path in (
        "message.headers.operation",
        "recordType",
        "type",
        "operation",
        "meta.op",
        "payload.op",
        "op",
        "payload.status",
    ):
        value: object = message
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str):
            if name == "canal" and message.get("isDdl"):
                return "ddl"
            if name == "dataworks" and message.get("payload", {}).get("ddl"):
                return "ddl"
            return _KINDS.get(value, "other")
    return "other"


def present(value: object, path: list[str]) -> bool:
    """True when ``path`` exists in ``value`` (see the module docstring for the notation)."""
    if not path:
        return True
    head, rest = path[0], path[1:]
    if head.endswith("[]"):
        items = value.get(head[:-2]) if isinstance(value, dict) else None
        return isinstance(items, list) and bool(items) and all(present(i, rest) for i in items)
    if head == "*":
        return isinstance(value, dict) and bool(value) and all(present(v, rest) for v in value.values())
    return isinstance(value, dict) and head in value and present(value[head], rest)


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_every_seed_field_is_present(name: str) -> None:
    fmt = create_format(options(name))
    fmt.clock = lambda: CLOCK  # type: ignore[attr-defined]
    decoded = [decode_dts(m.data) if name == "dts-avro" else strict_json(m.data) for m in run(fmt) if not m.tombstone]
    checked = set()
    for message in decoded:
        kind = _kind(name, message)
        for selector, (_, paths) in FIELDS[name].items():
            if kind == selector or (selector == "cud" and kind in "cud" and len(kind) == 1):
                for path in paths:
                    assert present(message, path.split(".")), f"{name} {kind}: {path} missing"
                checked.add(selector)
    assert checked == set(FIELDS[name]), f"{name}: no message of kinds {set(FIELDS[name]) - checked}"


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_field_lists_come_from_the_seeds(name: str) -> None:
    for document, paths in FIELDS[name].values():
        text = (SEEDS / document).read_text(encoding="utf-8") if SEEDS.exists() else None
        if text is None:
            pytest.skip(f"seed documents not found: {SEEDS} (place shared/ beside the repository)")
        for path in paths:
            leaf = [p for p in path.replace("[]", "").split(".") if p != "*"][-1]
            assert leaf in text, f"{leaf} is not in {document}"
