"""load_config's file rules (size, syntax, duplicates) and explain_config's problem list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicator.config import ConfigError, explain_config, load_config
from replicator.errors import ReplicatorError


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "OpenLogReplicator.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_load_ok(tmp_path: Path, doc: dict[str, Any]) -> None:
    assert load_config(write(tmp_path, json.dumps(doc))).source[0].name == "TEST"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ReplicatorError) as info:
        load_config(tmp_path / "nope.json")
    assert info.value.code == 10001


@pytest.mark.parametrize("size", [0, 1048577])
def test_bad_size(tmp_path: Path, size: int) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, b" " * size))
    assert info.value.code == 10004 and f"wrong size: {size}" in info.value.message


def test_max_size_accepted(tmp_path: Path, doc: dict[str, Any]) -> None:
    text = json.dumps(doc)
    assert load_config(write(tmp_path, text + " " * (1048576 - len(text)))).version == "1.9.0"


def test_syntax_error_has_offset(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, '{"version": "1.9.0",,}'))
    assert info.value.code == 20001
    assert "offset: 20 - parse error" in info.value.message


@pytest.mark.parametrize("text", ['{"version": NaN}', b'{"version": "\xff"}', "{} {}"])
def test_not_strict_json(tmp_path: Path, text: str | bytes) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert info.value.code == 20001


def test_duplicate_kafka_property(tmp_path: Path, doc: dict[str, Any]) -> None:
    text = json.dumps(doc).replace(
        '{"type": "file", "output": "out.json"}', '{"type": "kafka", "topic": "t", "properties": {"a": "1", "a": "2"}}'
    )
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert (info.value.code, info.value.message) == (30009, "Kafka property 'a' is defined multiple times")


def test_duplicate_key_keeps_first(tmp_path: Path, doc: dict[str, Any]) -> None:
    text = json.dumps(doc).replace('"name": "TEST"', '"name": "TEST", "name": "OTHER"')
    assert load_config(write(tmp_path, text)).source[0].name == "TEST"


def test_explain_valid(tmp_path: Path, doc: dict[str, Any]) -> None:
    assert explain_config(write(tmp_path, json.dumps(doc))) == []


def test_explain_lists_every_problem(tmp_path: Path, doc: dict[str, Any]) -> None:
    doc["bogus"] = 1
    doc["log-level"] = 9
    doc["source"][0]["format"]["xid"] = 5
    doc["source"][0]["format"]["nope"] = 1
    doc["target"][0]["writer"]["new-line"] = "x"
    problems = explain_config(write(tmp_path, json.dumps(doc)))
    text = "\n".join(problems)
    assert len(problems) == 5, text
    assert any(p.startswith("bogus: attribute(s) not expected: bogus; allowed: dump-path") for p in problems)
    assert any(p.startswith("source[0].format.nope:") and "[20003]" in p for p in problems)
    assert 'log-level: bad JSON, invalid "log-level" value: 9, expected: one of {0 .. 4} [30001]' in problems
    assert 'source[0].format.xid: bad JSON, invalid "xid" value: 5, expected: one of {0 .. 3} [30001]' in problems
    assert any(p.startswith("target[0].writer.new-line:") and '(value: "x")' in p for p in problems)


def test_explain_file_problem(tmp_path: Path) -> None:
    assert explain_config(write(tmp_path, "")) == [
        f"(file): file: {tmp_path / 'OpenLogReplicator.json'} - wrong size: 0 [10004]"
    ]
