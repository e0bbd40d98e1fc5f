"""The 1.9 and 2.0 config dialects: each validated by its own rules, and `config upgrade`.

The facts come from OpenLogReplicator's documentation at the 2.0.0 tag (cited per test);
see replicator.config.dialect for why the two dialects share every format key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicator.cli import main
from replicator.config import explain_config, parse_config
from replicator.config.upgrade import upgrade_config
from replicator.errors import ConfigPathError

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((REPO / "config").glob("*.json")) + [REPO / "OpenLogReplicator.json.example"]


def as_20(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "version": "2.0.0"}


def test_both_versions_are_accepted_with_their_dialect(doc: dict[str, Any]) -> None:
    # documentation/json/json.adoc:44 (2.0.0): "Current required value: "2.0.0"".
    assert parse_config(doc).dialect == "1.9"
    assert parse_config(as_20(doc)).dialect == "2.0"
    with pytest.raises(ConfigPathError) as err:
        parse_config({**doc, "version": "1.8.5"})
    assert err.value.code == 30001 and "expected: 1.9.0 or 2.0.0" in err.value.message


@pytest.mark.parametrize("key", ["memory", "state"])
def test_source_sections_ignored_by_19_are_refused_by_20(doc: dict[str, Any], key: str) -> None:
    # release-notes.adoc:22 (2.0.0): memory, metrics, state move to the top level; 2.0 would
    # ignore them in source[0], we refuse them so a setting is never silently dropped.
    doc["source"][0][key] = {"type": "disk"} if key == "state" else {"max-mb": 1024}
    parse_config(doc)  # 1.9: accepted (and ignored, as OLR's master does)
    with pytest.raises(ConfigPathError) as err:
        parse_config(as_20(doc))
    assert err.value.code == 30150 and err.value.path == f"source[0].{key}"
    assert "config upgrade" in err.value.message


def test_dialect_key_is_refused_even_with_relaxed_key_checks(doc: dict[str, Any]) -> None:
    doc = as_20(doc)
    doc["source"][0]["reader"]["disable-checks"] = 8  # unknown keys accepted...
    doc["source"][0]["memory"] = {}
    with pytest.raises(ConfigPathError) as err:  # ...but a misplaced section is not a typo
        parse_config(doc)
    assert err.value.code == 30150


def test_check_config_lists_the_dialect_error(doc: dict[str, Any], tmp_path: Path) -> None:
    doc = as_20(doc)
    doc["source"][0]["state"] = {}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    assert any("source[0].state" in line and "[30150]" in line for line in explain_config(path))


def test_check_config_names_the_dialect_and_the_changes(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc["source"][0]["memory"] = {"max-mb": 1024}
    doc["source"][0]["format"] = {"type": "json", "xid": 3, "redo-thread": 1}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    assert main(["check-config", "--config-only", "-f", str(path)]) == 0
    out = capsys.readouterr().out
    assert 'dialect: OpenLogReplicator 1.9 ("version": "1.9.0")' in out
    changes = [line for line in out.splitlines() if ": 1.9 -> 2.0: " in line]
    assert len(changes) == 10, out
    moved = next(line for line in changes if "top level" in line)
    assert "source[0].memory" in moved and "30150" in moved and "config upgrade" in moved
    assert any("xid=3" in line and "this config" in line for line in changes)
    assert any("redo-thread" in line and "(this config: redo-thread)" in line for line in changes)
    path.write_text(json.dumps(upgrade_config(json.loads(path.read_text()))[0]))
    assert main(["check-config", "--config-only", "-f", str(path)]) == 0
    out = capsys.readouterr().out
    assert 'dialect: OpenLogReplicator 2.0 ("version": "2.0.0")' in out and "1.9 -> 2.0" not in out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_upgrades_and_comes_back(path: Path) -> None:
    original = json.loads(path.read_text())
    upgraded, notes = upgrade_config(original)
    assert upgraded["version"] == "2.0.0" and notes
    assert parse_config(upgraded).dialect == "2.0"
    back, _ = upgrade_config(upgraded, "1.9")
    if not any(note.startswith(("moved", "dropped")) for note in notes):
        assert back == {**original, "version": "1.9.0"}
        assert list(back) == list(original)  # key order kept


def test_upgrade_moves_source_sections_to_the_top(doc: dict[str, Any]) -> None:
    doc["source"][0]["memory"] = {"max-mb": 1024}
    doc["source"][0]["metrics"] = {"type": "prometheus", "bind": "127.0.0.1:9161"}  # v1.9.0 release form
    doc["state"] = {"type": "disk", "path": "cp"}
    doc["source"][0]["state"] = {"type": "disk", "path": "cp"}  # the same: dropped
    upgraded, notes = upgrade_config(doc)
    assert list(upgraded) == ["version", "memory", "metrics", "source", "target", "state"]
    assert upgraded["memory"] == {"max-mb": 1024} and upgraded["metrics"]["bind"] == "127.0.0.1:9161"
    assert not {"memory", "metrics", "state"} & set(upgraded["source"][0])
    assert any("moved source[0].memory" in n for n in notes) and any("dropped source[0].state" in n for n in notes)
    config = parse_config(upgraded)
    assert config.memory.max_mb == 1024 and config.metrics.enabled


def test_upgrade_refuses_what_20_cannot_express(doc: dict[str, Any]) -> None:
    doc["memory"] = {"max-mb": 2048}
    doc["source"][0]["memory"] = {"max-mb": 1024}
    with pytest.raises(ConfigPathError) as err:
        upgrade_config(doc)
    assert err.value.code == 30151 and err.value.path == "source[0].memory" and "differ" in err.value.message
    bad = {**doc, "log-level": 9}
    del bad["source"][0]["memory"]
    with pytest.raises(ConfigPathError) as err:
        upgrade_config(bad, "1.9")
    assert err.value.code == 30151 and "log-level" in err.value.message


def test_upgrade_mends_a_20_file_and_refuses_an_unknown_version(doc: dict[str, Any]) -> None:
    doc = as_20(doc)
    doc["source"][0]["state"] = {"type": "disk", "path": "cp"}
    upgraded, _ = upgrade_config(doc)
    assert upgraded["state"] == {"type": "disk", "path": "cp"}
    with pytest.raises(Exception) as err:
        upgrade_config({**doc, "version": "1.8.5"})
    assert getattr(err.value, "code", None) == 30151


def test_cli_upgrade_writes_the_file_and_back(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, out = tmp_path / "in.json", tmp_path / "out.json"
    doc["source"][0]["memory"] = {"max-mb": 1024}
    src.write_text(json.dumps(doc))
    assert main(["config", "upgrade", "-f", str(src), "-o", str(out)]) == 0
    assert "moved source[0].memory" in capsys.readouterr().err
    assert json.loads(out.read_text())["version"] == "2.0.0"
    assert main(["config", "upgrade", "-f", str(out), "--to", "1.9"]) == 0
    back = json.loads(capsys.readouterr().out)
    assert back["version"] == "1.9.0" and back["memory"] == {"max-mb": 1024}
    doc["memory"] = {"max-mb": 512}
    src.write_text(json.dumps(doc))
    assert main(["config", "upgrade", "-f", str(src), "-o", str(out)]) == 1
    assert json.loads(out.read_text())["memory"] == {"max-mb": 1024}  # nothing written on refusal


FORMAT_DOC = "documentation/json/4.format.adoc"
# (key, the line of 4.format.adoc (2.0.0) giving its range, the largest value a 2.0 config
# takes, a deviation from the line when OLR's reader differs).
FORMAT_RANGES = [
    ("attributes", 39, 7, "the doc says max 15; OLR's reader refuses above 7 (only bits 1, 2, 4 exist)"),
    ("char", 48, 3, ""),
    ("column", 59, 2, ""),
    ("db", 70, 3, ""),
    ("interval-dts", 85, 10, ""),
    ("interval-ytm", 103, 4, ""),
    ("message", 114, 30, "31 passes the range but sets 4/8 with 1, refused (30001)"),
    ("rid", 130, 1, ""),
    ("redo-thread", 134, 1, ""),
    ("schema", 138, 7, ""),
    ("scn", 163, 1, ""),
    ("scn-type", 170, 15, ""),
    ("timestamp", 179, 15, ""),
    ("timestamp-metadata", 203, 15, ""),
    ("timestamp-tz", 208, 11, ""),
    ("timestamp-type", 226, 15, ""),
    ("user-type", 235, 15, ""),
    ("xid", 258, 3, ""),
]


@pytest.mark.parametrize(("key", "line", "top", "deviation"), FORMAT_RANGES, ids=[r[0] for r in FORMAT_RANGES])
def test_20_format_ranges(doc: dict[str, Any], key: str, line: int, top: int, deviation: str) -> None:
    doc = as_20(doc)
    doc["source"][0]["format"] = {"type": "json", key: top}
    assert getattr(parse_config(doc).source[0].format, key.replace("-", "_").replace("schema", "schema_")) == top
    doc["source"][0]["format"][key] = top + 1
    with pytest.raises(ConfigPathError) as err:
        parse_config(doc)
    assert err.value.code == 30001, f"{FORMAT_DOC}:{line} {deviation}"
