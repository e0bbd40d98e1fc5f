"""Every configuration error path gives OLR's code, message and the key path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from replicator.config import ConfigError, ConfigPathError, parse_config

Doc = dict[str, Any]


def src(d: Doc) -> Doc:
    return d["source"][0]


def reader(d: Doc) -> Doc:
    return d["source"][0]["reader"]


def fmt(d: Doc) -> Doc:
    return d["source"][0]["format"]


def writer(d: Doc) -> Doc:
    return d["target"][0]["writer"]


CASES: list[tuple[str, Callable[[Doc], Any], int, str, str]] = [
    # (id, mutation, code, message fragment, key path)
    ("top-unknown", lambda d: d.update(foo=1), 20003, "parse error, attribute foo not expected", "foo"),
    (
        "top-unknown-not-relaxed",
        lambda d: (d.update(foo=1), reader(d).update({"disable-checks": 8})),
        20003,
        "attribute foo not expected",
        "foo",
    ),
    (
        "reader-unknown-not-relaxed",
        lambda d: reader(d).update({"foo": 1, "disable-checks": 15}),
        20003,
        "attribute source[0].reader.foo not expected",
        "source[0].reader.foo",
    ),
    ("source-unknown", lambda d: src(d).update(bar=1), 20003, "attribute source[0].bar not expected", "source[0].bar"),
    ("memory-unknown", lambda d: d.update(memory={"x": 1}), 20003, "attribute memory.x not expected", "memory.x"),
    (
        "format-unknown",
        lambda d: fmt(d).update({"timestamp-all": 1}),
        20003,
        "attribute source[0].format.timestamp-all not expected",
        "source[0].format.timestamp-all",
    ),
    (
        "table-unknown",
        lambda d: src(d)["filter"]["table"][0].update(x=1),
        20003,
        "attribute source[0].filter.table[0].x not expected",
        "source[0].filter.table[0].x",
    ),
    (
        "writer-unknown",
        lambda d: writer(d).update(brokers="h:1"),
        20003,
        "attribute target[0].writer.brokers not expected",
        "target[0].writer.brokers",
    ),
    (
        "version",
        lambda d: d.update(version="1.8.5"),
        30001,
        'bad JSON, invalid "version" value: 1.8.5, expected: 1.9.0 or 2.0.0',
        "version",
    ),
    ("version-missing", lambda d: d.pop("version"), 20003, "field version not found", "version"),
    (
        "two-sources",
        lambda d: d["source"].append(d["source"][0]),
        30001,
        'invalid "source" value: 2 elements, expected: 1 element',
        "source",
    ),
    (
        "no-target",
        lambda d: d.update(target=[]),
        30001,
        'invalid "target" value: 0 elements, expected: 1 element',
        "target",
    ),
    ("source-not-array", lambda d: d.update(source={}), 20003, "field source is not an array", "source"),
    (
        "target-source-mismatch",
        lambda d: d["target"][0].update(source="S2"),
        30001,
        'invalid "source" value: S2, expected: value used earlier in "source" field',
        "target[0].source",
    ),
    (
        "log-level",
        lambda d: d.update({"log-level": 5}),
        30001,
        'invalid "log-level" value: 5, expected: one of {0 .. 4}',
        "log-level",
    ),
    (
        "log-level-bool",
        lambda d: d.update({"log-level": True}),
        20003,
        "field log-level is not an unsigned 64-bit number",
        "log-level",
    ),
    ("trace", lambda d: d.update(trace=1048576), 30001, "expected: one of {0 .. 1048575}", "trace"),
    ("dump-redo-log", lambda d: d.update({"dump-redo-log": 3}), 30001, "one of {0 .. 2}", "dump-redo-log"),
    (
        "dump-raw-data",
        lambda d: d.update({"dump-redo-log": 1, "dump-raw-data": 2}),
        30001,
        'invalid "dump-raw-data" value: 2, expected: one of {0, 1}',
        "dump-raw-data",
    ),
    ("flags", lambda d: src(d).update(flags=524288), 30001, "one of {0 .. 524287}", "source[0].flags"),
    (
        "disable-checks",
        lambda d: reader(d).update({"disable-checks": 16}),
        30001,
        "one of {0 .. 15}",
        "source[0].reader.disable-checks",
    ),
    (
        "arch-read-tries",
        lambda d: src(d).update({"arch-read-tries": 0}),
        30001,
        "expected: one of: {1 .. 1000000000}",
        "source[0].arch-read-tries",
    ),
    (
        "name-too-long",
        lambda d: src(d).update(name="N" * 257),
        20003,
        "field name is too long (257, max: 256)",
        "source[0].name",
    ),
    ("alias-not-string", lambda d: src(d).update(alias=1), 20003, "field alias is not a string", "source[0].alias"),
    (
        "reader-type",
        lambda d: reader(d).update(type="logminer"),
        30001,
        'invalid "type" value: logminer, expected: one of {"online", "offline", "batch"}',
        "source[0].reader.type",
    ),
    ("reader-missing", lambda d: src(d).pop("reader"), 20003, "field reader not found", "source[0].reader"),
    (
        "online-needs-user",
        lambda d: reader(d).update(type="online"),
        20003,
        "field user not found",
        "source[0].reader.user",
    ),
    (
        "batch-needs-redo-log",
        lambda d: reader(d).pop("redo-log"),
        20003,
        "field redo-log not found",
        "source[0].reader.redo-log",
    ),
    (
        "redo-log-item",
        lambda d: reader(d).update({"redo-log": ["a", 2]}),
        20003,
        "field redo-log[1] is not a string",
        "source[0].reader.redo-log[1]",
    ),
    (
        "path-mapping-odd",
        lambda d: reader(d).update({"type": "offline", "path-mapping": ["a", "b", "c"]}),
        30001,
        'invalid "path-mapping" value: 3 elements, expected: even number of elements',
        "source[0].reader.path-mapping",
    ),
    (
        "start-seq-u32",
        lambda d: reader(d).update({"start-seq": 2**32}),
        20003,
        "field start-seq is too big",
        "source[0].reader.start-seq",
    ),
    (
        "start-scn-negative",
        lambda d: reader(d).update({"start-scn": -1}),
        20003,
        "field start-scn is not an unsigned 64-bit number",
        "source[0].reader.start-scn",
    ),
    (
        "start-time-rel-with-scn",
        lambda d: reader(d).update({"start-time-rel": 10}),
        30001,
        'invalid "start-time-rel" value: 10, expected: unset when "start-scn" is set (1)',
        "source[0].reader.start-time-rel",
    ),
    (
        "start-time-with-scn",
        lambda d: reader(d).update({"start-time": "2024-01-01 00:00:00"}),
        30001,
        'expected: unset when "start-scn" is set (1)',
        "source[0].reader.start-time",
    ),
    (
        "start-time-with-rel",
        lambda d: (reader(d).pop("start-scn"), reader(d).update({"start-time": "x", "start-time-rel": 5})),
        30001,
        'invalid "start-time" value: x, expected: unset when "start-time-rel" is set (5)',
        "source[0].reader.start-time",
    ),
    (
        "timezone",
        lambda d: reader(d).update({"host-timezone": "+5"}),
        30001,
        'invalid "host-timezone" value: +5, expected value: {"+/-HH:MM"}',
        "source[0].reader.host-timezone",
    ),
    (
        "log-archive-format-long",
        lambda d: reader(d).update({"log-archive-format": "x" * 4001}),
        20003,
        "too long (4001, max: 4000)",
        "source[0].reader.log-archive-format",
    ),
    (
        "arch",
        lambda d: (reader(d).update(type="online", user="u", password="p", server="s"), src(d).update(arch="list")),
        30001,
        'invalid "arch" value: list, expected: one of {"path", "online", "online-keep"}',
        "source[0].arch",
    ),
    (
        "transaction-max-mb",
        lambda d: (d.update(memory={"max-mb": 64}), src(d).update({"transaction-max-mb": 65})),
        30001,
        'invalid "transaction-max-mb" value: 65, expected: smaller than "max-mb" (64)',
        "source[0].transaction-max-mb",
    ),
    (
        "format-type",
        lambda d: fmt(d).update(type="xml"),
        30001,
        'invalid "format" value: xml, expected: "protobuf", "json", "debezium", "debezium-envelope", ',
        "source[0].format.type",
    ),
    ("format-missing", lambda d: src(d).pop("format"), 20003, "field format not found", "source[0].format"),
    (
        "format-xid",
        lambda d: fmt(d).update(xid=4),
        30001,
        'invalid "xid" value: 4, expected: one of {0 .. 3}',
        "source[0].format.xid",
    ),
    (
        "format-scn-type",
        lambda d: fmt(d).update({"scn-type": 16}),
        30001,
        "expected: one of {0, 15}",
        "source[0].format.scn-type",
    ),
    ("format-rid", lambda d: fmt(d).update(rid=2), 30001, "expected: one of {0, 1}", "source[0].format.rid"),
    (
        "format-timestamp-tz",
        lambda d: fmt(d).update({"timestamp-tz": 12}),
        30001,
        "one of {0 .. 11}",
        "source[0].format.timestamp-tz",
    ),
    (
        "format-message-full-skip",
        lambda d: fmt(d).update(message=9),
        30001,
        "expected: BEGIN/COMMIT flag is unset (4/8) together with FULL mode (1)",
        "source[0].format.message",
    ),
    (
        "format-uint",
        lambda d: fmt(d).update(xid=2**32),
        20003,
        "field xid is not an unsigned number",
        "source[0].format.xid",
    ),
    (
        "format-column-schemaless",
        lambda d: (src(d).update(flags=2), fmt(d).update(column=1)),
        30001,
        "expected: not used when flags has set schemaless mode (flags: 2)",
        "source[0].format.column",
    ),
    (
        "debug-pair",
        lambda d: src(d).update(debug={"table": "T"}),
        20003,
        "field owner not found",
        "source[0].debug.owner",
    ),
    (
        "skip-xid",
        lambda d: src(d)["filter"].update({"skip-xid": ["12.3.4"]}),
        20002,
        "bad XID value: 12.3.4",
        "source[0].filter.skip-xid[0]",
    ),
    (
        "table-owner-missing",
        lambda d: src(d)["filter"]["table"][0].pop("owner"),
        20003,
        "field owner not found",
        "source[0].filter.table[0].owner",
    ),
    (
        "separator-empty",
        lambda d: src(d)["filter"].update(separator="", table=[{"owner": "A", "table": "B", "key": "K"}]),
        30001,
        'invalid "separator" value: ',
        "source[0].filter.separator",
    ),
    (
        "memory-min",
        lambda d: d.update(memory={"min-mb": 31}),
        30001,
        'invalid "min-mb" value: 31, expected: at least 32',
        "memory.min-mb",
    ),
    (
        "memory-max",
        lambda d: d.update(memory={"min-mb": 64, "max-mb": 48}),
        30001,
        'invalid "max-mb" value: 48, expected: at least like "min-mb" value (64)',
        "memory.max-mb",
    ),
    (
        "memory-swap",
        lambda d: d.update(memory={"max-mb": 64, "swap-mb": 61}),
        30001,
        'invalid "swap-mb" value: 61, expected maximum "max-mb"-1 value (60)',
        "memory.swap-mb",
    ),
    (
        "memory-read-min-low",
        lambda d: d.update(memory={"read-buffer-min-mb": 3}),
        30001,
        'invalid "read-buffer-min-mb" value: 3, expected: at least: 4',
        "memory.read-buffer-min-mb",
    ),
    (
        "memory-write-max-high",
        lambda d: d.update(memory={"max-mb": 64, "write-buffer-max-mb": 65}),
        30001,
        'invalid "write-buffer-max-mb" value: 65, expected: not greater than "max-mb" value (64)',
        "memory.write-buffer-max-mb",
    ),
    (
        "memory-sum",
        lambda d: d.update(memory={"max-mb": 32, "unswap-buffer-min-mb": 21}),
        30001,
        '(21 + 4 + 4 + 4) is greater than "max-mb" value (32)',
        "memory.unswap-buffer-min-mb",
    ),
    (
        "state-type",
        lambda d: d.update(state={"type": "db"}),
        30001,
        'invalid "type" value: db, expected: one of {"disk"}',
        "state.type",
    ),
    (
        "state-path-long",
        lambda d: d.update(state={"type": "disk", "path": "p" * 2049}),
        20003,
        "field path is too long",
        "state.path",
    ),
    (
        "metrics-type",
        lambda d: d.update(metrics={"type": "statsd", "bind": "x:1"}),
        30001,
        'invalid "type" value: "statsd", expected: one of {"prometheus"}',
        "metrics.type",
    ),
    ("metrics-bind", lambda d: d.update(metrics={"type": "prometheus"}), 20003, "field bind not found", "metrics.bind"),
    (
        "metrics-tag-names",
        lambda d: d.update(metrics={"type": "prometheus", "bind": "x:1", "tag-names": "schema"}),
        30001,
        'invalid "tag-names" value: schema, expected: one of {"all", "filter", "none", "sys"}',
        "metrics.tag-names",
    ),
    ("writer-missing", lambda d: d["target"][0].pop("writer"), 20003, "field writer not found", "target[0].writer"),
    ("writer-type-missing", lambda d: writer(d).pop("type"), 20003, "field type not found", "target[0].writer.type"),
    (
        "writer-type",
        lambda d: writer(d).update(type="s3"),
        30001,
        'invalid "type" value: s3, expected: one of {"file", "kafka", "zeromq", "network", "discard"}',
        "target[0].writer.type",
    ),
    (
        "poll-interval",
        lambda d: writer(d).update({"poll-interval-us": 99}),
        30001,
        "one of {100 .. 3600000000}",
        "target[0].writer.poll-interval-us",
    ),
    (
        "queue-size",
        lambda d: writer(d).update({"queue-size": 0}),
        30001,
        "one of {1 .. 1000000}",
        "target[0].writer.queue-size",
    ),
    ("new-line", lambda d: writer(d).update({"new-line": 3}), 30001, "one of {0 .. 2}", "target[0].writer.new-line"),
    ("append", lambda d: writer(d).update(append=2), 30001, "one of {0, 1}", "target[0].writer.append"),
    (
        "flush-size",
        lambda d: writer(d).update({"write-buffer-flush-size": 1048577}),
        30001,
        "one of {0 .. 1048576}",
        "target[0].writer.write-buffer-flush-size",
    ),
    (
        "output-needed",
        lambda d: (writer(d).pop("output"), writer(d).update({"max-file-size": 10})),
        30001,
        'invalid "output" value: , expected: to be set when "max-file-size" is set (10)',
        "target[0].writer.output",
    ),
    (
        "output-percent",
        lambda d: writer(d).update(output="out-%d.json"),
        30005,
        "invalid value for 'output': out-%d.json",
        "target[0].writer.output",
    ),
    (
        "output-fixed-append0",
        lambda d: writer(d).update(append=0),
        30006,
        "output file is with no rotation: out.json - 'append' must be set to 1",
        "target[0].writer.append",
    ),
    (
        "output-rotation-size",
        lambda d: writer(d).update(output="out-%t.json"),
        30007,
        "'max-file-size' must be defined for output with rotation",
        "target[0].writer.max-file-size",
    ),
    (
        "kafka-topic",
        lambda d: d["target"][0].update(writer={"type": "kafka"}),
        20003,
        "field topic not found",
        "target[0].writer.topic",
    ),
    (
        "kafka-max-message",
        lambda d: d["target"][0].update(writer={"type": "kafka", "topic": "t", "max-message-mb": 954}),
        30001,
        "one of {1 .. 953}",
        "target[0].writer.max-message-mb",
    ),
    (
        "kafka-message-max-bytes",
        lambda d: d["target"][0].update(
            writer={"type": "kafka", "topic": "t", "properties": {"message.max.bytes": "1"}}
        ),
        30010,
        "Kafka property 'message.max.bytes' is defined, but it is not allowed to be set by user",
        "target[0].writer.properties",
    ),
    (
        "kafka-property-type",
        lambda d: d["target"][0].update(writer={"type": "kafka", "topic": "t", "properties": {"linger.ms": 5}}),
        20003,
        "field linger.ms is not a string",
        "target[0].writer.properties.linger.ms",
    ),
    (
        "network-uri",
        lambda d: d["target"][0].update(writer={"type": "network", "uri": "5000"}),
        30008,
        "uri is missing ':' in parameter: 5000",
        "target[0].writer.uri",
    ),
    (
        "zeromq-uri",
        lambda d: d["target"][0].update(writer={"type": "zeromq"}),
        20003,
        "field uri not found",
        "target[0].writer.uri",
    ),
]


@pytest.mark.parametrize(("mutate", "code", "fragment", "path"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error(doc: Doc, mutate: Callable[[Doc], Any], code: int, fragment: str, path: str) -> None:
    mutate(doc)
    with pytest.raises(ConfigPathError) as info:
        parse_config(doc)
    err = info.value
    assert (err.code, err.path) == (code, path)
    assert fragment in err.message
    assert "pydantic" not in err.message and "validation error" not in err.message


def test_20003_messages_name_the_file(doc: Doc) -> None:
    doc["foo"] = 1
    with pytest.raises(ConfigError, match=r"^20003 file: my.json - parse error, attribute foo not expected$"):
        parse_config(doc, filename="my.json")


def test_document_not_object() -> None:
    with pytest.raises(ConfigPathError) as info:
        parse_config([1, 2])
    assert info.value.code == 20003 and "not a JSON object" in info.value.message
