"""Reading the formats back with their standard tools, and the golden-file rendering.

JSON formats are parsed with a strict ``json.loads`` (NaN/Infinity rejected); the Avro
formats with fastavro: DTS Avro with the fixed Record schema, ``avro`` with the schemas its
schema messages announce (Confluent framing: 0x00, 4-byte id, body).
"""

from __future__ import annotations

import datetime
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro

from replicator.events import Message
from replicator.formats.dts_schema import PARSED_RECORD

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "formats"
AVRO_FORMATS = ("dts-avro", "avro")


def _reject(name: str) -> None:
    raise ValueError(f"not JSON: {name}")


def strict_json(data: bytes) -> Any:
    """Parse one message as standard JSON (UTF-8, no NaN/Infinity, exact decimals)."""
    return json.loads(data.decode("utf-8"), parse_constant=_reject, parse_float=Decimal)


def decode_dts(data: bytes) -> dict[str, Any]:
    """One DTS Avro record, union branches as ``(record name, value)``."""
    return fastavro.schemaless_reader(io.BytesIO(data), PARSED_RECORD, PARSED_RECORD, return_record_name=True)


class AvroStream:
    """Decodes an ``avro`` message stream: learns schemas from schema messages."""

    def __init__(self) -> None:
        self.schemas: dict[int, Any] = {}

    def learn(self, schema_id: int, schema: dict[str, Any]) -> None:
        """Register a schema (from a schema message or a schema file)."""
        self.schemas[schema_id] = fastavro.parse_schema(schema)

    def decode(self, message: Message) -> dict[str, Any]:
        """A schema message as parsed JSON, a data message as its decoded record."""
        kind = dict(message.headers or []).get("replicator.avro")
        if kind == b"schema":
            body = json.loads(message.data)
            self.learn(body["schemaId"], body["schema"])
            return {"schema message": body["subject"], "schemaId": body["schemaId"]}
        assert message.data[0] == 0, "Confluent magic byte"
        schema = self.schemas[int.from_bytes(message.data[1:5], "big")]
        return fastavro.schemaless_reader(io.BytesIO(message.data[5:]), schema, schema)


def _plain(value: Any) -> Any:
    """JSON-able view of decoded Avro values for golden files."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, (Decimal, datetime.datetime)):
        return f"{type(value).__name__}({value.isoformat() if isinstance(value, datetime.datetime) else value})"
    return value


def golden_text(name: str, messages: list[Message]) -> str:
    """Golden rendering: a ``#`` line with position, key and headers, then the message."""
    stream = AvroStream()
    lines = []
    for m in messages:
        key = m.tag.decode() if m.tag is not None else "-"
        headers = json.dumps([[k, v.decode()] for k, v in m.headers]) if m.headers else "-"
        extra = (" tombstone=true" if m.tombstone else "") + (f" topic={m.topic}" if m.topic else "")
        lines.append(
            f"# c_scn={m.scn} c_idx={m.idx + 1} checkpoint={str(m.checkpoint).lower()} "
            f"key={key} headers={headers}{extra}"
        )
        if m.tombstone:
            lines.append("(null value)")
        elif name == "dts-avro":
            lines.append(json.dumps(_plain(decode_dts(m.data)), ensure_ascii=False))
        elif name == "avro":
            lines.append(json.dumps(_plain(stream.decode(m)), ensure_ascii=False))
        else:
            lines.append(m.data.decode("utf-8"))
    return "\n".join(lines) + "\n"
