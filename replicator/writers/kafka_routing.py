"""Where a Kafka message goes: its topic and its key (the extensions of the kafka writer).

* Topic: ``topic``, or for row changes of a table ``topic-per-table`` with ``{owner}`` and
  ``{table}`` filled in. Characters Kafka does not allow in topic names (Oracle allows
  ``$`` and ``#``) become ``_``.
* Key: the filter ``tag`` fragment when the format rendered one (OpenLogReplicator's
  behaviour); else, with ``key-by-pk``, the primary key columns of the row, rendered like
  a tag (``"ID":1,"CODE":"x"``) from the message itself (JSON or protobuf); else none.
  Deletes take the key from the before image, everything else from the after image.
  Numbers keep their exact text, so equal keys are byte-identical and distinct keys stay
  distinct (compacted topics depend on that).
"""

from __future__ import annotations

import json
import re

from replicator.events import Message, Table
from replicator.proto import olr_pb2 as pb

_TOPIC_BAD = re.compile(r"[^A-Za-z0-9._-]")


class _Number(str):
    """A JSON number kept as its source text."""


def _loads(data: bytes) -> object:
    return json.loads(data, parse_int=_Number, parse_float=_Number)


def _render(name: str, value: object) -> str:
    if isinstance(value, _Number):
        text = str(value)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(name, ensure_ascii=False) + ":" + text


class Router:
    """Topic and key of each message for one kafka writer configuration."""

    def __init__(self, topic: str, per_table: str | None, key_by_pk: bool) -> None:
        self.topic = topic
        self.per_table = per_table
        self.key_by_pk = key_by_pk
        self._topics: dict[int, str] = {}

    def topic_for(self, message: Message) -> str:
        """The topic of ``message`` (its own ``topic`` first: Debezium heartbeats)."""
        if message.topic is not None:
            return _TOPIC_BAD.sub("_", message.topic)
        return self.table_topic(message.table)

    def table_topic(self, table: Table | None) -> str:
        """The topic of a row change of ``table`` (None: a message of no table, begin/commit)."""
        if self.per_table is None or table is None:
            return self.topic
        topic = self._topics.get(id(table))
        if topic is None:
            topic = _TOPIC_BAD.sub("_", self.per_table.format(owner=table.owner, table=table.name))
            self._topics[id(table)] = topic
        return topic

    def key_for(self, message: Message) -> bytes | None:
        """The key of ``message`` (see the module docstring)."""
        if message.tag is not None:
            return message.tag
        table = message.table
        if not self.key_by_pk or table is None or not table.key_columns:
            return None
        names = [table.columns[i].name for i in table.key_columns if i < len(table.columns)]
        try:
            if message.data[:1] != b"{":  # JSON text starts with "{", protobuf with a field tag
                return _protobuf_key(message.data, names)
            return _json_key(message.data, names)
        except (ValueError, KeyError, TypeError, IndexError):
            return None  # not a single-row message (e.g. FULL mode): no key


def _json_key(data: bytes, names: list[str]) -> bytes | None:
    doc = _loads(data)
    assert isinstance(doc, dict)
    payload = doc["payload"]
    if len(payload) != 1:
        return None
    element = payload[0]
    image = element.get("before") if element.get("op") == "d" else element.get("after")
    if not isinstance(image, dict):
        return None
    parts = [_render(name, image[name]) for name in names if name in image]
    return ",".join(parts).encode("utf-8") if parts else None


def _protobuf_key(data: bytes, names: list[str]) -> bytes | None:
    response = pb.RedoResponse.FromString(data)
    if len(response.payload) != 1:
        return None
    element = response.payload[0]
    values = element.before if element.op == pb.DELETE else element.after
    by_name = {value.name: value for value in values}
    parts = []
    for name in names:
        value = by_name.get(name)
        if value is None:
            continue
        which = value.WhichOneof("datum")
        if which is None:
            parts.append(_render(name, None))
        elif which == "value_bytes":
            parts.append(_render(name, value.value_bytes.hex()))
        elif which in ("value_int", "value_float", "value_double"):
            parts.append(_render(name, _Number(repr(getattr(value, which)))))
        else:
            parts.append(_render(name, value.value_string))
    return ",".join(parts).encode("utf-8") if parts else None


def describe(message: Message) -> str:
    """Transaction, position and table of ``message`` for error messages."""
    xid = message.xid
    text = f"transaction 0x{xid >> 48:04x}.{(xid >> 32) & 0xFFFF:03x}.{xid & 0xFFFFFFFF:08x}" if xid else "message"
    text += f" (scn {message.scn}, idx {message.idx + 1}"
    table: Table | None = message.table
    if table is not None:
        text += f", table {table.owner}.{table.name}"
    return text + ")"
