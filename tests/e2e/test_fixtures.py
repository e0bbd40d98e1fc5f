"""End to end on the real fixtures: ``replicator run`` with OpenLogReplicator's configs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_configs import free23_batch_config, write_config

from replicator.cli import main


def _free23_config(free23: Path, tmp_path: Path, fmt: dict | None = None) -> Path:
    cfg = free23_batch_config(free23, tmp_path, utc_host=False)
    if fmt is not None:
        cfg["source"][0]["format"] = fmt
    return write_config(tmp_path, cfg)


def test_free23_output_is_byte_identical(free23: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")  # the fixture was made on a host whose time zone is UTC
    cfg = _free23_config(free23, tmp_path)
    assert main(["run", "-f", str(cfg)]) == 0
    assert (tmp_path / "output.json").read_bytes() == (free23 / "expected-output.json").read_bytes()


def test_free23_via_console_script(free23: Path, tmp_path: Path) -> None:
    cfg = _free23_config(free23, tmp_path)
    cfg_data = json.loads(cfg.read_text())
    cfg_data["source"][0]["reader"]["host-timezone"] = "+00:00"
    cfg.write_text(json.dumps(cfg_data))
    proc = subprocess.run([sys.executable, "-m", "replicator", "run", "-f", str(cfg)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "output.json").read_bytes() == (free23 / "expected-output.json").read_bytes()


def test_ora19_schemaless(ora19: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    cfg = {
        "version": "1.9.0",
        "source": [
            {
                "alias": "S1",
                "name": "FST",
                "flags": 2,
                "reader": {
                    "type": "batch",
                    "redo-log": [str(ora19 / "o1_mf_1_117_mflqx1vl_.arc")],
                    "log-archive-format": "o1_mf_%t_%s_%h_.arc",
                },
                "format": {"type": "json", "scn": 1, "timestamp": 7, "timestamp-metadata": 7, "xid": 1},
            }
        ],
        "target": [{"alias": "T1", "source": "S1", "writer": {"type": "file", "output": str(out)}}],
    }
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(cfg))
    proc = subprocess.run([sys.executable, "-m", "replicator", "run", "-f", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "ERROR" not in proc.stderr and "60040" not in proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    xids = [m["xid"] for m in lines if m["payload"][0]["op"] == "begin"]
    assert xids == ["5.1.3042", "8.1.3046", "10.1.3010", "7.25.3017"]
    ops = [p["op"] for m in lines for p in m["payload"]]
    assert ops.count("c") == 3 and ops.count("u") == 2 and ops.count("d") == 2
    first_dml = next(m for m in lines if m["payload"][0]["op"] == "c")
    assert first_dml["payload"][0]["schema"]["table"] == "OBJ_77449"
    # Its 230 LOB page vectors (26.6) pass without a warning; schemaless, as OLR, the LOB
    # column is the raw locator (no SYS.LOB$ ties the pages to the table).
    assert "WARN" not in proc.stderr
    inserts = [p for m in lines for p in m["payload"] if p["op"] == "c" and p["schema"]["table"] == "OBJ_78233"]
    assert [p["after"]["COL_5"][:20] for p in inserts] == ["00700001010c00800001"] * 2


def _run_cli(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "replicator", *args], capture_output=True, text=True)


def test_bad_inputs_give_codes_not_tracebacks(free23: Path, tmp_path: Path) -> None:
    cfg = _free23_config(free23, tmp_path)
    data = json.loads(cfg.read_text())
    data["source"][0]["reader"]["bogus-key"] = 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    proc = _run_cli(["run", "-f", str(bad)])
    assert proc.returncode != 0 and "20003" in proc.stderr and "bogus-key" in proc.stderr
    assert "Traceback" not in proc.stderr

    data = json.loads(cfg.read_text())
    data["source"][0]["format"]["xid"] = 9
    bad.write_text(json.dumps(data))
    proc = _run_cli(["run", "-f", str(bad)])
    assert proc.returncode != 0 and "30001" in proc.stderr and "Traceback" not in proc.stderr

    (tmp_path / "state" / "TEST-chkpt-2266634.json").unlink()
    proc = _run_cli(["run", "-f", str(cfg)])
    assert proc.returncode != 0 and "10052" in proc.stderr and "Traceback" not in proc.stderr


def test_corrupt_redo_names_file_and_block(free23: Path, tmp_path: Path) -> None:
    cfg = _free23_config(free23, tmp_path)
    data = json.loads(cfg.read_text())
    damaged = tmp_path / "arch1_15_1224959854.dbf"
    raw = bytearray((free23 / damaged.name).read_bytes())
    raw[579 * 512 + 200] ^= 0x01
    damaged.write_bytes(bytes(raw))
    data["source"][0]["reader"]["redo-log"][0] = str(damaged)
    cfg.write_text(json.dumps(data))
    proc = _run_cli(["run", "-f", str(cfg)])
    assert proc.returncode != 0 and "40006" in proc.stderr and "block 579" in proc.stderr
    assert "Traceback" not in proc.stderr
