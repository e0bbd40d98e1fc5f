"""Done-when 5: check-config accepts every example config and explains broken ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ops_helpers import REPO

from replicator.cli import main

EXAMPLES = sorted((REPO / "config").glob("*.json")) + [
    REPO / "OpenLogReplicator.json.example",
    REPO / "deploy" / "compose" / "OpenLogReplicator.json",
]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_pass(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Written for another machine (its state folder, redo files): the keys and values only.
    assert main(["check-config", "--config-only", "-f", str(path)]) == 0
    assert capsys.readouterr().out.strip().endswith(": OK")


# (change to the batch-file example, the key path, the value, the allowed range) per line.
BROKEN = [
    (lambda c: c.update({"log-level": 9}), "log-level", "9", "{0 .. 4}"),
    (lambda c: c["memory"].update({"min-mb": 8}), "memory.min-mb", "8", "at least 32"),
    (
        lambda c: c.update({"metrics": {"type": "prometheus", "bind": "localhost"}}),
        "metrics.bind",
        "localhost",
        '"host:port"',
    ),
    (
        lambda c: c["source"][0]["reader"].update({"disable-checks": 99}),
        "source[0].reader.disable-checks",
        "99",
        "{0 .. 15}",
    ),
    (lambda c: c["source"][0]["format"].update({"xid": 7}), "source[0].format.xid", "7", "{0 .. 3}"),
    (
        lambda c: c["target"][0]["writer"].update({"poll-interval-us": 5}),
        "target[0].writer.poll-interval-us",
        "5",
        "{100 .. 3600000000}",
    ),
    (
        lambda c: c["source"][0]["format"].update({"type": "xml"}),
        "source[0].format.type",
        "xml",
        '"protobuf", "json", "debezium"',
    ),
]


def test_broken_config_names_key_value_and_range(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = json.loads((REPO / "config" / "batch-file.json").read_text())
    for change, *_ in BROKEN:
        change(config)
    config["source"][0]["bogus"] = 1
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(config))
    assert main(["check-config", "-f", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    for _, key, value, allowed in BROKEN:
        line = next((ln for ln in lines if f": {key}: " in ln), None)
        assert line is not None, f"{key} not reported in:\n" + "\n".join(lines)
        assert f"value: {value}" in line and allowed in line and "[30001]" in line
    unknown = next(ln for ln in lines if "source[0].bogus" in ln)
    assert "not expected" in unknown and "allowed:" in unknown and "[20003]" in unknown


def test_unreadable_and_malformed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", "-f", str(tmp_path / "absent.json")]) == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": "1.9.0",')
    assert main(["check-config", "-f", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "[10001]" in out and "[20001]" in out
