"""The real FREE23 fixture through ``replicator run`` with a network/zeromq writer and ``replicator client``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kafka_broker import free_port


@pytest.mark.parametrize("kind", ["network", "zeromq"])
def test_fixture_streamed_byte_identical(free23: Path, tmp_path: Path, kind: str) -> None:
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(free23 / "TEST-chkpt-2266634.json", state)
    cfg = json.loads((free23 / "olr-config.json").read_text())
    cfg["state"]["path"] = str(state)
    source = cfg["source"][0]
    source["reader"]["redo-log"] = [str(free23 / name) for name in source["reader"]["redo-log"]]
    port = free_port()
    uri = f"127.0.0.1:{port}" if kind == "network" else f"tcp://127.0.0.1:{port}"
    cfg["target"][0]["writer"] = {"type": kind, "uri": uri}
    path = tmp_path / "OpenLogReplicator.json"
    path.write_text(json.dumps(cfg))
    env = {**os.environ, "TZ": "UTC"}  # the fixture was made on a host whose time zone is UTC
    server = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        client = subprocess.run(
            [
                sys.executable,
                "-m",
                "replicator",
                "client",
                kind,
                uri,
                source["name"],
                "--start",
                "scn:2266634",
                "--reconnect",
                "--count",
                "3",
            ],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert client.returncode == 0, client.stderr.decode()
        assert client.stdout == (free23 / "expected-output.json").read_bytes()
        assert server.wait(30) == 0  # the batch ends once the client confirmed everything
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
