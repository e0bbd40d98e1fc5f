"""``replicator run`` selects every format from the config, on the real free23-basic fixture.

The fixture holds one transaction: INSERT INTO OLR_TEST.TEST_CDC VALUES (1, 'hello world').
The writer and the pipeline are the ones OpenLogReplicator JSON uses; only format.type changes.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pytest
from fixture_configs import free23_batch_config, write_config
from other_formats_decode import strict_json
from other_formats_scenario import SHARED

from replicator.cli import main
from replicator.formats.dts_schema import PARSED_RECORD
from replicator.formats.registry import _OTHER_FORMATS

FREE23 = SHARED / "fixtures" / "redo" / "free23-basic"
JSON_FORMATS = sorted(n for n in _OTHER_FORMATS if "avro" not in n)


@pytest.fixture
def fixture_dir() -> Path:
    if not FREE23.exists():
        pytest.skip(f"shared test data not found: {FREE23} (place the shared/ folder beside the repository)")
    return FREE23


def _run(fixture: Path, tmp_path: Path, fmt: dict, new_line: int = 1) -> bytes:
    cfg = free23_batch_config(fixture, tmp_path)
    cfg["source"][0]["format"] = fmt
    writer = cfg["target"][0]["writer"]
    writer["output"] = str(tmp_path / "output.bin")
    writer["new-line"] = new_line
    path = write_config(tmp_path, cfg)
    assert main(["run", "-f", str(path)]) == 0
    return (tmp_path / "output.bin").read_bytes()


@pytest.mark.parametrize("name", JSON_FORMATS)
def test_run_json_formats(fixture_dir: Path, tmp_path: Path, name: str) -> None:
    lines = _run(fixture_dir, tmp_path, {"type": name}).splitlines()
    messages = [strict_json(line) for line in lines]
    text = json.dumps(messages, default=str)
    assert "hello world" in text
    assert "TEST_CDC" in text or name == "debezium-smt"  # SMT names the table in Kafka headers only


def test_run_dts_avro(fixture_dir: Path, tmp_path: Path) -> None:
    # Without a separator the file is a plain concatenation of schemaless records.
    stream = io.BytesIO(_run(fixture_dir, tmp_path, {"type": "dts-avro"}, new_line=0))
    records = []
    while stream.tell() < len(stream.getbuffer()):
        records.append(fastavro.schemaless_reader(stream, PARSED_RECORD, PARSED_RECORD))
    assert [r["operation"] for r in records] == ["BEGIN", "INSERT", "COMMIT"]
    assert records[1]["objectName"] == "OLR_TEST.TEST_CDC"
    assert records[1]["afterImages"][1]["value"] == b"hello world"


def test_run_avro_with_schema_files(fixture_dir: Path, tmp_path: Path) -> None:
    schemas = tmp_path / "schemas"
    data = _run(fixture_dir, tmp_path, {"type": "avro", "avro-schema-path": str(schemas)}, new_line=0)
    parsed = {
        int(p.stem.rsplit("-", 1)[1]): fastavro.parse_schema(json.loads(p.read_text())) for p in schemas.glob("*.avsc")
    }
    stream = io.BytesIO(data)
    records = []
    while stream.tell() < len(data):
        assert stream.read(1) == b"\x00"
        schema = parsed[int.from_bytes(stream.read(4), "big")]
        records.append(fastavro.schemaless_reader(stream, schema, schema))
    assert [r["op"] for r in records] == ["begin", "c", "commit"]
    assert records[1]["after"] == {"ID": "1", "NAME": "hello world"}


def test_shareplex_userid_is_the_logon_user_number(fixture_dir: Path, tmp_path: Path) -> None:
    """meta.userid: the USER# the redo's begin-transaction undo names (DTS's example is a number)."""
    [line] = _run(fixture_dir, tmp_path, {"type": "shareplex"}).splitlines()
    checkpoint = json.loads((fixture_dir / "TEST-chkpt-2266634.json").read_text())
    user = next(u["user"] for u in checkpoint["sys-user"] if u["name"] == "OLR_TEST")
    assert strict_json(line)["meta"]["userid"] == user == 136
