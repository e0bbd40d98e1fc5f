"""The JSON formats validate against JSON Schemas of the documented message shapes.

The schemas pin the types the seed documents give (Canal's string values and integer type
codes, Qlik's hex masks, OMS's string timestamps, DataWorks' millisecond integers, …);
messages are parsed with a strict standard JSON parser first.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from other_formats_decode import strict_json
from other_formats_scenario import CLOCK, options, run

from replicator.formats.registry import create_format

STR, INT, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
OBJ, ARR = {"type": "object"}, {"type": "array"}
NULL_STR, NULL_OBJ, NULL_ARR = {"type": ["string", "null"]}, {"type": ["object", "null"]}, {"type": ["array", "null"]}


def obj(required: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object schema whose listed properties are all required."""
    return {"type": "object", "required": list(required), "properties": required, **extra}


HEX_MASK = {"type": "string", "pattern": "^([0-9A-F]{2})+$"}
SOURCE = obj(
    {
        "version": STR,
        "connector": {"const": "oracle"},
        "name": STR,
        "ts_ms": INT,
        "db": STR,
        "table": STR,
        "pos": {"type": "string", "pattern": r"^\d+:\d+$"},
    }
)
ROW = {"type": ["object", "null"]}
SCHEMAS: dict[str, dict[str, Any]] = {
    "canal": obj(
        {
            "database": STR,
            "table": STR,
            "type": STR,
            "es": INT,
            "ts": INT,
            "isDdl": BOOL,
            "sql": STR,
            "id": INT,
            "gtid": STR,
            "pkNames": NULL_ARR,
            "old": NULL_ARR,
            "data": {"type": ["array", "null"], "items": {"type": "object", "additionalProperties": NULL_STR}},
            "sqlType": {"type": ["object", "null"], "additionalProperties": INT},
            "mysqlType": {"type": ["object", "null"], "additionalProperties": STR},
        }
    ),
    "oms-default": obj(
        {
            "prevStruct": ROW,
            "postStruct": ROW,
            "recordType": {"enum": ["INSERT", "UPDATE", "DELETE", "DDL", "HEARTBEAT"]},
            "allMetaData": obj(
                {
                    "checkpoint": STR,
                    "dbType": {"const": "ORACLE"},
                    "timestamp": STR,
                    "uniqueId": STR,
                    "record_primary_key": NULL_STR,
                    "record_primary_value": NULL_STR,
                    "storeDataSequence": {"type": ["integer", "null"]},
                    "table_name": NULL_STR,
                    "db": NULL_STR,
                    "transId": NULL_STR,
                }
            ),
        }
    ),
    "dataworks": {
        "oneOf": [
            obj(
                {
                    "version": {"const": "2.0"},
                    "payload": obj({"op": {"const": "HEARTBEAT"}, "timestamp": obj({"eventTime": INT})}),
                },
                additionalProperties=False,
            ),
            obj(
                {
                    "version": {"const": "2.0"},
                    "extend": OBJ,
                    "schema": obj(
                        {
                            "source": obj(
                                {
                                    "dbType": STR,
                                    "dbVersion": {"type": "null"},
                                    "dbName": STR,
                                    "schema": NULL_STR,
                                    "table": NULL_STR,
                                }
                            ),
                            "column": {"type": ["array", "null"], "items": obj({"name": STR, "type": STR})},
                        }
                    ),
                    "payload": obj(
                        {
                            "op": STR,
                            "scn": STR,
                            "before": NULL_OBJ,
                            "after": NULL_OBJ,
                            "ddl": NULL_OBJ,
                            "timestamp": obj({"eventTime": INT, "systemTime": INT, "checkpointTime": INT}),
                        }
                    ),
                }
            ),
        ]
    },
    "shareplex": obj(
        {
            "data": OBJ,
            "meta": obj(
                {
                    "time": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$"},
                    "op": {"enum": ["ins", "upd", "del", "ddl"]},
                    "scn": STR,
                    "rowid": STR,
                    "trans": STR,
                    "seq": INT,
                    "size": INT,
                    "idx": {"type": "string", "pattern": r"^\d+/\d+$"},
                    "table": STR,
                    "posttime": STR,
                    "userid": {"type": ["integer", "null"]},
                }
            ),
        }
    ),
    "debezium-flatten": {
        "oneOf": [
            obj(
                {
                    "op": {"enum": ["c", "u", "d"]},
                    "source": SOURCE,
                    "before": ROW,
                    "after": ROW,
                    "ts_ms": INT,
                    "transaction": obj({"id": STR, "total_order": INT, "data_collection_order": INT}),
                }
            ),
            obj(
                {
                    "status": {"enum": ["BEGIN", "END"]},
                    "id": STR,
                    "ts_ms": INT,
                    "event_count": {"type": ["integer", "null"]},
                    "data_collections": NULL_ARR,
                }
            ),
            obj(
                {
                    "source": SOURCE,
                    "ts_ms": INT,
                    "ddl": STR,
                    "databaseName": STR,
                    "schemaName": STR,
                    "tableChanges": ARR,
                }
            ),
            {**obj({"ts_ms": INT}), "additionalProperties": False},  # Debezium's heartbeat
        ]
    },
    "debezium-envelope": obj(
        {"schema": obj({"type": {"const": "struct"}, "fields": ARR, "optional": BOOL}), "payload": OBJ}
    ),
    "debezium-smt": obj({"__deleted": {"enum": ["true", "false"]}}),
    "qlik": obj(
        {
            "magic": {"const": "atMSG"},
            "type": {"enum": ["DT", "MD"]},
            "headers": {"type": "null"},
            "messageSchemaId": {"type": "null"},
            "messageSchema": {"type": "null"},
            "message": {
                "oneOf": [
                    obj(
                        {
                            "data": OBJ,
                            "beforeData": NULL_OBJ,
                            "headers": obj(
                                {
                                    "operation": {"enum": ["INSERT", "UPDATE", "DELETE"]},
                                    "changeSequence": {"type": "string", "pattern": r"^\d{35}$"},
                                    "timestamp": STR,
                                    "streamPosition": STR,
                                    "transactionId": {"type": "string", "pattern": "^[0-9A-F]{32}$"},
                                    "changeMask": HEX_MASK,
                                    "columnMask": HEX_MASK,
                                    "externalSchemaId": STR,
                                    "transactionEventCounter": INT,
                                    "transactionLastEvent": BOOL,
                                }
                            ),
                        }
                    ),
                    obj(
                        {
                            "schemaId": STR,
                            "lineage": obj(
                                {
                                    "server": STR,
                                    "task": STR,
                                    "schema": STR,
                                    "table": STR,
                                    "tableVersion": INT,
                                    "timestamp": STR,
                                }
                            ),
                            "tableStructure": obj(
                                {
                                    "tableColumns": {
                                        "type": "object",
                                        "additionalProperties": obj(
                                            {
                                                "ordinal": INT,
                                                "type": STR,
                                                "length": INT,
                                                "precision": INT,
                                                "scale": INT,
                                                "primaryKeyPosition": INT,
                                            }
                                        ),
                                    }
                                }
                            ),
                            "dataSchema": {"type": "null"},
                        }
                    ),
                ]
            },
        }
    ),
}
SCHEMAS["oms-extended"] = SCHEMAS["oms-default"]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_messages_validate(name: str) -> None:
    Draft202012Validator.check_schema(SCHEMAS[name])
    validator = Draft202012Validator(SCHEMAS[name])
    fmt = create_format(options(name))
    fmt.clock = lambda: CLOCK  # type: ignore[attr-defined]
    for message in run(fmt):
        if message.tombstone:
            assert message.data == b"" and message.tag is not None
            continue
        errors = sorted(validator.iter_errors(strict_json(message.data)), key=str)
        assert not errors, f"{name}: {errors[0].message} in {message.data[:300]!r}"
