"""Format registry, the debezium preset, and OLR's string escaping."""

from __future__ import annotations

import pytest

from replicator.config.format import DEBEZIUM_PRESET, apply_format_preset
from replicator.errors import ConfigError
from replicator.formats.base import FormatOptions
from replicator.formats.escape import escape_bytes, escape_str, quoted
from replicator.formats.olr_json import OlrJsonFormat
from replicator.formats.registry import create_format, format_names, register_format


def test_escaping_quirks() -> None:
    assert escape_bytes(b'a"b\\c/d') == b'a\\"b\\\\c\\/d'
    assert escape_bytes(b"\t\r\n\x0c\x08") == b"\\t\\r\\n\\f\\b"
    # Two *decimal* digits after \u00; 31, DEL and non-ASCII bytes are copied.
    assert escape_bytes(b"\x00\x07\x0b\x0e\x1b\x1e") == b"\\u0000\\u0007\\u0011\\u0014\\u0027\\u0030"
    assert escape_bytes(b"\x1f\x7f\xc3\xa9") == b"\x1f\x7f\xc3\xa9"
    plain = b"nothing to escape"
    assert escape_bytes(plain) is plain
    assert escape_str("żółw/") == "żółw\\/".encode()
    assert quoted('"') == b'"\\""'


def test_registry() -> None:
    assert isinstance(create_format(FormatOptions(type="json")), OlrJsonFormat)
    assert isinstance(create_format(FormatOptions(type="debezium")), OlrJsonFormat)
    with pytest.raises(ConfigError) as error:
        create_format(FormatOptions(type="no-such-format"))
    assert error.value.code == 30001 and '"json"' in error.value.message
    register_format("custom-test", OlrJsonFormat)
    assert "custom-test" in format_names()


def test_invalid_combinations() -> None:
    with pytest.raises(ConfigError):
        create_format(FormatOptions(message=1 | 4))
    with pytest.raises(ConfigError):
        create_format(FormatOptions(column=1, flags=0x2))


def test_debezium_preset_respects_explicit_keys() -> None:
    values = {"xid": 1, "column": 0, "interval_dts": 0}
    preset = apply_format_preset("debezium", values, {"xid", "column"})
    assert preset["xid"] == 1 and preset["column"] == 0
    assert preset["interval_dts"] == 9 and preset["scn_type"] == 14 and preset["timestamp_metadata"] == 2
    assert values["interval_dts"] == 0  # the input is left alone
    assert apply_format_preset("json", values, set()) == values
    assert preset["schema_"] == DEBEZIUM_PRESET["schema_"]
