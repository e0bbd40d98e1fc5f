"""OpenLogReplicator's own ``StreamClient`` against the daemon's network and ZeroMQ writers.

A development check with a real third-party client of the stream protocol (never required by
CI): skipped unless ``REPLICATOR_OLR_BINARY`` names an OpenLogReplicator build whose directory
also holds ``StreamClient`` (or ``REPLICATOR_OLR_STREAM_CLIENT`` names it). The client starts
the stream at an SCN, prints every message, and confirms every 1,001 messages; the daemon must
deliver the whole generated stream to it and save the position it confirmed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_proc import Daemon, wait_for
from kafka_broker import free_port

_BINARY = os.environ.get("REPLICATOR_OLR_BINARY", "")
CLIENT = Path(
    os.environ.get("REPLICATOR_OLR_STREAM_CLIENT", "")
    or (str(Path(_BINARY).parent / "StreamClient") if _BINARY else "")
)

pytestmark = pytest.mark.skipif(
    not CLIENT.name or not CLIENT.is_file(),
    reason="OpenLogReplicator's StreamClient not configured: set REPLICATOR_OLR_BINARY "
    "(StreamClient beside it) or REPLICATOR_OLR_STREAM_CLIENT to run this check",
)

START_SCN = 2266634
CONFIRM_EVERY = 1001  # StreamClient confirms after this many messages (or 10 s after the last confirm)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small ``oltp`` stream (about 2,000 messages) with its expected JSON output."""
    out = tmp_path_factory.mktemp("oltp")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "replicator",
            "redogen",
            "oltp",
            "--size",
            "1MB",
            "--seed",
            "7",
            "--progress",
            "off",
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


def _config(generated: Path, tmp_path: Path, writer: dict, fmt: str) -> Path:
    """The generated config as a daemon (offline reader) with ``writer`` and format ``fmt``."""
    arch, state = tmp_path / "arch", tmp_path / "state"
    shutil.copytree(generated / "redo", arch)
    state.mkdir()
    (checkpoint,) = (generated / "checkpoint").glob("*-chkpt-*.json")
    schema = json.loads(checkpoint.read_text())
    schema["log-archive-dest"] = str(arch)
    schema["log-archive-format"] = "arch%t_%s_%r.dbf"
    (state / checkpoint.name).write_text(json.dumps(schema))
    cfg = json.loads((generated / "OpenLogReplicator.json").read_text())
    cfg["state"]["path"] = str(state)
    source = cfg["source"][0]
    source["reader"] = {"type": "offline", "start-scn": START_SCN, "host-timezone": "+00:00"}
    source["arch-read-sleep-us"] = 100000
    source["arch-read-tries"] = 100000
    source["format"]["type"] = fmt
    cfg["target"][0]["writer"] = writer
    path = tmp_path / "OpenLogReplicator.json"
    path.write_text(json.dumps(cfg))
    return path


def _client(kind: str, uri: str, fmt: str, log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [str(CLIENT), kind, uri, "TEST", fmt, f"scn:{START_SCN}"], stdout=out, stderr=subprocess.STDOUT
        )


def _confirmed(state: Path) -> dict | None:
    saved = state / "TEST-chkpt.json"
    try:
        return json.loads(saved.read_text())
    except (OSError, ValueError):
        return None


def _run(generated: Path, tmp_path: Path, kind: str, fmt: str, count: re.Pattern[str], expected_count: int) -> str:
    """Daemon plus StreamClient until every message arrived and a confirmation was saved."""
    port = free_port()
    uri = f"127.0.0.1:{port}" if kind == "network" else f"tcp://127.0.0.1:{port}"
    cfg = _config(generated, tmp_path, {"type": kind, "uri": uri}, fmt)
    log = tmp_path / "client.log"
    daemon = Daemon(cfg, tmp_path)
    client = None
    try:
        daemon.wait_log("waiting for a client")  # READY follows the client's START
        client = _client(kind, uri, fmt, log)
        got = lambda: len(count.findall(log.read_text(errors="replace")))  # noqa: E731
        assert wait_for(lambda: got() >= expected_count or client.poll() is not None, 120), (
            f"{got()} of {expected_count} messages: {log.read_text(errors='replace')[-2000:]}"
        )
        assert got() == expected_count, log.read_text(errors="replace")[-2000:]
        assert wait_for(lambda: (_confirmed(tmp_path / "state") or {}).get("scn", 0) > 0, 60), (
            f"no confirmed position saved: {daemon.log()[-2000:]}"
        )
        text = log.read_text(errors="replace")
        assert "ERROR" not in text, text[-2000:]
        return text
    finally:
        if client is not None and client.poll() is None:
            client.kill()
            client.wait(10)
        rc, err = daemon.stop()
        assert rc == 0, err
        assert "Traceback" not in err


def test_json_over_tcp(generated: Path, tmp_path: Path) -> None:
    """Every JSON message StreamClient prints equals the expected output, line for line."""
    expected = (generated / "expected.json").read_text().splitlines()
    text = _run(generated, tmp_path, "network", "json", re.compile(r"^.* message: \{", re.M), len(expected))
    got = [line.split(" message: ", 1)[1] for line in text.splitlines() if " message: {" in line]
    assert got == expected
    assert "CONFIRM scn:" in text


def test_protobuf_over_zeromq(generated: Path, tmp_path: Path) -> None:
    """Protobuf over ZeroMQ: StreamClient decodes every message, one per expected operation."""
    expected = [json.loads(line) for line in (generated / "expected.json").read_text().splitlines()]
    ops = {"begin": "BEGIN", "commit": "COMMIT", "c": "- INSERT", "u": "- UPDATE", "d": "- DELETE"}
    want = [ops[message["payload"][0]["op"]] for message in expected]
    text = _run(generated, tmp_path, "zeromq", "protobuf", re.compile(r", op: ", re.M), len(want))
    got = [line.split(", op: ", 1)[1] for line in text.splitlines() if ", op: " in line]
    assert got == want
    assert "CONFIRM scn:" in text
