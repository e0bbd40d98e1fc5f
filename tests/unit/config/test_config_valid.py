"""Valid configurations are accepted with OLR's meaning and code-side defaults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicator.config import (
    DEBEZIUM_PRESET,
    Config,
    FileWriterConfig,
    KafkaWriterConfig,
    NetworkWriterConfig,
    load_config,
    parse_config,
    parse_xid,
)
from replicator.formats.base import FormatOptions

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((REPO / "config").glob("*.json")) + [REPO / "OpenLogReplicator.json.example"]


def test_fixture_config_with_placeholder_path(free23: Path) -> None:
    data = json.loads((free23 / "olr-config.json").read_text())
    config = parse_config(data)
    assert config.source[0].name == "TEST"
    assert config.source[0].reader.type == "batch"
    assert config.source[0].reader.start_scn == 2266634
    assert config.source[0].reader.log_archive_format == "arch%t_%s_%r.dbf"
    assert config.state.path.startswith("<state-dir")
    assert [r.owner for r in config.source[0].filter.table] == ["OLR_TEST"]
    options = config.format_options()
    assert (options.scn, options.timestamp, options.timestamp_metadata, options.xid) == (1, 7, 7, 1)
    assert isinstance(config.writer, FileWriterConfig) and config.writer.output == "output.json"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_load(path: Path) -> None:
    config = load_config(path)
    assert isinstance(config, Config)


def test_defaults(doc: dict[str, Any]) -> None:
    config = parse_config(doc)
    assert (config.log_level, config.trace, config.dump_redo_log) == (3, 0, 0)
    m = config.memory
    assert (m.min_mb, m.max_mb, m.read_buffer_max_mb, m.write_buffer_max_mb, m.swap_mb, m.swap_path) == (
        32,
        2048,
        128,
        2048,
        1536,
        ".",
    )
    s = config.state
    assert (s.type, s.path, s.interval_s, s.interval_mb, s.keep_checkpoints, s.schema_force_interval) == (
        "disk",
        "checkpoint",
        600,
        500,
        100,
        20,
    )
    src = config.source[0]
    assert (src.flags, src.redo_read_sleep_us, src.arch_read_sleep_us, src.arch_read_tries) == (0, 50000, 10000000, 10)
    assert (src.redo_verify_delay_us, src.refresh_interval_us, src.transaction_max_mb) == (0, 10000000, 0)
    assert src.filter.separator == ","
    w = config.writer
    assert isinstance(w, FileWriterConfig)
    assert (w.new_line, w.append, w.max_file_size, w.timestamp_format) == (1, 1, 0, "%F_%T")
    assert (w.poll_interval_us, w.queue_size, w.write_buffer_flush_size) == (100000, 65536, 1048576)
    assert not config.metrics.enabled
    assert config.format_options() == FormatOptions(type="json", database="TEST")


def test_memory_defaults_follow_max_mb(doc: dict[str, Any]) -> None:
    doc["memory"] = {"max-mb": 256}
    m = parse_config(doc).memory
    assert (m.read_buffer_max_mb, m.write_buffer_max_mb, m.swap_mb) == (32, 256, 192)


def test_memory_quirk_default_read_max_not_checked(doc: dict[str, Any]) -> None:
    # OLR range-checks read-buffer-max-mb only when it is given.
    doc["memory"] = {"max-mb": 32, "read-buffer-min-mb": 8, "swap-mb": 0, "swap-path": 5}
    m = parse_config(doc).memory
    assert (m.read_buffer_min_mb, m.read_buffer_max_mb, m.swap_path) == (8, 4, ".")


def test_debezium_preset_and_explicit_override(doc: dict[str, Any]) -> None:
    doc["source"][0]["format"] = {"type": "debezium", "xid": 1, "schema": 0}
    fmt = parse_config(doc).source[0].format
    options = parse_config(doc).format_options()
    assert options.xid == 1 and options.schema == 0
    assert options.column == DEBEZIUM_PRESET["column"] == 2
    assert (options.db, options.scn_type, options.timestamp_type, options.user_type) == (3, 14, 14, 15)
    assert fmt.explicit_keys == {"type", "xid", "schema_"}


def test_debezium_column_preset_allowed_when_schemaless(doc: dict[str, Any]) -> None:
    doc["source"][0]["flags"] = 2
    doc["source"][0]["format"] = {"type": "debezium"}
    assert parse_config(doc).source[0].format.column == 2


def test_disable_checks_bit_8_relaxes_later_sections(doc: dict[str, Any]) -> None:
    src = doc["source"][0]
    src["reader"]["disable-checks"] = 8
    src["format"]["json-number-type"] = 1  # the fork's key
    src["filter"]["extra"] = 1
    src["filter"]["table"][0]["x"] = 1
    src["debug"] = {"y": 1}
    doc["target"][0]["writer"]["brokers"] = "x"
    config = parse_config(doc)
    assert not config.source[0].reader.json_key_checks


def test_xdb_prefixed_keys_always_accepted(doc: dict[str, Any]) -> None:
    doc["source"][0]["format"]["xdb-xnm123"] = 1
    parse_config(doc)


def test_target_keys_not_checked_and_ignored_source_keys(doc: dict[str, Any]) -> None:
    doc["target"][0]["anything"] = 1
    doc["source"][0]["memory"] = {"bogus": 1}
    doc["source"][0]["state"] = 7
    parse_config(doc)


def test_keys_not_read_are_not_validated(doc: dict[str, Any]) -> None:
    doc["dump-path"] = 5  # only read with dump-redo-log > 0
    doc["state"] = {"path": 5}  # [quirk] only read when type is given
    doc["source"][0]["arch"] = "list"  # only read by the online reader
    doc["source"][0]["reader"]["path-mapping"] = ["odd"]  # not applied in batch mode
    doc["source"][0]["reader"]["user"] = 5
    doc["metrics"] = {"bind": 5}  # metrics off without type
    config = parse_config(doc)
    assert config.state.path == "checkpoint" and config.source[0].arch is None


def test_schemaless_ignores_table_rules_and_debug_table(doc: dict[str, Any]) -> None:
    doc["source"][0]["flags"] = 2
    doc["source"][0]["filter"]["table"] = [{"bad": 1}]
    doc["source"][0]["debug"] = {"owner": "X"}
    config = parse_config(doc)
    assert config.source[0].filter.table == [] and config.source[0].schemaless


def test_redo_verify_delay_follows_flag_8(doc: dict[str, Any]) -> None:
    doc["source"][0]["flags"] = 8
    assert parse_config(doc).source[0].redo_verify_delay_us == 500000
    doc["source"][0]["redo-verify-delay-us"] = 7
    assert parse_config(doc).source[0].redo_verify_delay_us == 7


def test_filter_helpers(doc: dict[str, Any]) -> None:
    doc["source"][0]["filter"] = {
        "separator": ";",
        "table": [
            {"owner": "A", "table": "T", "key": "C1;C2", "tag": "C1;C3"},
            {"owner": "B", "table": "U", "tag": "[pk]"},
        ],
        "skip-xid": ["0x000a.00c.0000023c", "000A000C0000023C"],
        "dump-xid": ["000a.000c.0000023c"],
    }
    doc["source"][0]["debug"] = {"owner": "DBG", "table": "T"}
    src = parse_config(doc).source[0]
    rule = src.filter.table[0]
    assert rule.key_columns(";") == ["C1", "C2"]
    assert rule.tag_spec(";") == ("list", ["C1", "C3"])
    assert src.filter.table[1].tag_spec(";") == ("pk", [])
    assert src.filter.skip_xid_values() == {0x000A_000C_0000023C}
    assert src.filter.dump_xid_values() == {0x000A_000C_0000023C}
    assert src.owners == {"A", "B", "DBG"}


def test_online_reader_and_timezones(doc: dict[str, Any]) -> None:
    doc["source"][0]["reader"] = {
        "type": "online",
        "user": "u",
        "password": "p",
        "server": "//h:1521/S",
        "db-timezone": "-05:30",
        "host-timezone": "UTC",
        "start-time-rel": 60,
    }
    doc["source"][0]["arch"] = "online-keep"
    config = parse_config(doc)
    reader = config.source[0].reader
    assert reader.db_timezone == -(5 * 3600 + 1800) == reader.timezone_offset("db")
    assert reader.host_timezone == 0 and reader.log_timezone is None
    assert config.format_options().db_timezone == -19800
    assert config.source[0].arch == "online-keep"


def test_writer_types(doc: dict[str, Any]) -> None:
    doc["target"][0]["writer"] = {
        "type": "kafka",
        "topic": "t",
        "max-message-mb": 5,
        "properties": {"bootstrap.servers": "x:9092", "client.id": "me"},
    }
    w = parse_config(doc).writer
    assert isinstance(w, KafkaWriterConfig)
    assert w.librdkafka_config() == {
        "bootstrap.servers": "x:9092",
        "client.id": "OpenLogReplicator",
        "message.max.bytes": str(5 * 1048576),
    }
    doc["target"][0]["writer"] = {"type": "network", "uri": "0.0.0.0:5000", "topic": 5}
    n = parse_config(doc).writer
    assert isinstance(n, NetworkWriterConfig) and (n.host, n.port) == ("0.0.0.0", "5000")


@pytest.mark.parametrize(
    ("output", "mode", "prefix", "suffix", "fill", "directory"),
    [
        ("out.json", "fixed", "out.json", "", 0, "."),
        ("/tmp/x/o-%i.json", "num", "o-", ".json", 0, "/tmp/x"),
        ("o-%5i-%t.json", "num", "o-", "-%t.json", 5, "."),
        ("d/o-%t.json", "timestamp", "o-", ".json", 0, "d"),
        ("o-%s.json", "sequence", "o-", ".json", 0, "."),
    ],
)
def test_output_patterns(
    doc: dict[str, Any], output: str, mode: str, prefix: str, suffix: str, fill: int, directory: str
) -> None:
    doc["target"][0]["writer"] = {"type": "file", "output": output, "max-file-size": 100}
    pattern = parse_config(doc).writer.pattern  # type: ignore[union-attr]
    assert pattern is not None
    assert (pattern.mode, pattern.prefix, pattern.suffix, pattern.fill, pattern.directory) == (
        mode,
        prefix,
        suffix,
        fill,
        directory,
    )


def test_empty_output_is_stdout_even_with_max_size(doc: dict[str, Any]) -> None:
    doc["target"][0]["writer"] = {"type": "file", "output": "", "max-file-size": 10}
    assert parse_config(doc).writer.pattern is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    ["000A000C0000023C", "000a.00c.0000023c", "000a.000c.0000023c", "0x000a.00c.0000023c", "0x000A.000C.0000023C"],
)
def test_parse_xid_forms(text: str) -> None:
    assert parse_xid(text) == 0x000A_000C_0000023C


@pytest.mark.parametrize("text", ["", "10.12.572", "0X000a.00c.0000023c", "000a-00c-0000023c", "000G000C0000023C"])
def test_parse_xid_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="bad XID value"):
        parse_xid(text)
