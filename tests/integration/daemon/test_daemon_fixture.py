"""The offline daemon on the real 23ai fixture: tail, stop on SIGTERM, restart without duplicates."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from daemon_proc import Daemon, wait_for
from kafka_broker import free_port

SEQ_FILES = ("arch1_15_1224959854.dbf", "arch1_16_1224959854.dbf")


def _setup(free23: Path, tmp_path: Path) -> Path:
    arch, state = tmp_path / "arch", tmp_path / "state"
    arch.mkdir()
    state.mkdir()
    for name in SEQ_FILES:
        shutil.copy(free23 / name, arch / name)
    cp = json.loads((free23 / "TEST-chkpt-2266634.json").read_text())
    cp["log-archive-dest"] = str(arch)
    cp["log-archive-format"] = "arch%t_%s_%r.dbf"
    (state / "TEST-chkpt-2266634.json").write_text(json.dumps(cp))
    cfg = json.loads((free23 / "olr-config.json").read_text())
    cfg["state"]["path"] = str(state)
    reader = cfg["source"][0]["reader"]
    reader["type"] = "offline"
    del reader["redo-log"]
    reader["host-timezone"] = "+00:00"
    cfg["source"][0]["arch-read-sleep-us"] = 100000
    cfg["source"][0]["arch-read-tries"] = 100000
    cfg["source"][0]["redo-read-sleep-us"] = 20000
    cfg["target"][0]["writer"]["output"] = str(tmp_path / "out.json")
    cfg["target"][0]["writer"]["poll-interval-us"] = 20000
    path = tmp_path / "OpenLogReplicator.json"
    path.write_text(json.dumps(cfg))
    return path


def _start(cfg: Path) -> Daemon:
    return Daemon(cfg, cfg.parent)


def _wait_for(predicate, timeout: float = 60.0) -> bool:
    return wait_for(predicate, timeout)


def _stop(proc: Daemon) -> str:
    """SIGTERM once the daemon said READY; it must exit 0."""
    rc, err = proc.stop()
    assert rc == 0, err
    return err


def test_tail_stop_restart_no_duplicates(free23: Path, tmp_path: Path) -> None:
    cfg = _setup(free23, tmp_path)
    out = tmp_path / "out.json"
    expected = (free23 / "expected-output.json").read_bytes()
    proc = _start(cfg)
    try:
        assert _wait_for(lambda: out.exists() and out.read_bytes() == expected), "output never completed"
        assert _wait_for(lambda: (tmp_path / "state" / "TEST-chkpt.json").exists())
    finally:
        err = _stop(proc)
    assert "Traceback" not in err
    position = json.loads((tmp_path / "state" / "TEST-chkpt.json").read_text())
    assert position["database"] == "TEST" and position["scn"] == 2267707 and len(position["pos"]) == 4
    assert len(list((tmp_path / "state").glob("TEST-chkpt-*.json"))) >= 2

    proc = _start(cfg)
    try:
        proc.wait_ready()
        # Caught up: the restart read on to the end of what the fixture holds.
        proc.wait_status(lambda st: st[1] >= position["scn"])
        assert proc.proc.poll() is None
    finally:
        _stop(proc)
    assert out.read_bytes() == expected  # nothing replayed


def test_second_instance_refused(free23: Path, tmp_path: Path) -> None:
    cfg = _setup(free23, tmp_path)
    proc = _start(cfg)
    try:
        assert _wait_for(lambda: (tmp_path / "out.json").exists())
        second = subprocess.run(
            [sys.executable, "-m", "replicator", "run", "-f", str(cfg)], capture_output=True, text=True, timeout=30
        )
        assert second.returncode != 0 and "10002" in second.stderr and "Traceback" not in second.stderr
    finally:
        _stop(proc)


def test_broken_reload_keeps_running(free23: Path, tmp_path: Path) -> None:
    cfg = _setup(free23, tmp_path)
    proc = _start(cfg)
    try:
        assert _wait_for(lambda: (tmp_path / "out.json").exists())
        data = json.loads(cfg.read_text())
        data["source"][0]["filter"]["table"][0]["unknown-key"] = 1
        cfg.write_text(json.dumps(data))
        later = time.time() + 2  # a visibly newer mtime: some file systems keep whole seconds
        os.utime(cfg, (later, later))
        proc.wait_log("config reload rejected")
        assert proc.proc.poll() is None
    finally:
        err = _stop(proc)
    assert "config reload rejected" in err and "20003" in err


def _network_setup(free23: Path, tmp_path: Path) -> tuple[Path, int]:
    """The fixture config with the network writer on a free port: (config path, port)."""
    cfg = _setup(free23, tmp_path)
    data = json.loads(cfg.read_text())
    port = free_port()
    data["target"][0]["writer"] = {"type": "network", "uri": f"127.0.0.1:{port}"}
    cfg.write_text(json.dumps(data))
    return cfg, port


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _first_three(port: int) -> subprocess.CompletedProcess:
    """``replicator client`` from SCN 0: the first 3 messages, confirming each."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "replicator",
            "client",
            "network",
            f"127.0.0.1:{port}",
            "TEST",
            "--start",
            "scn:0",
            "--count",
            "3",
            "--confirm-every",
            "1",
            "--timeout",
            "20",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_daemon_streams_to_a_network_client(free23: Path, tmp_path: Path) -> None:
    """The daemon with the TCP writer: waits for a client, streams, stops cleanly."""
    cfg, port = _network_setup(free23, tmp_path)
    proc = _start(cfg)

    try:
        assert _wait_for(lambda: _listening(port)), "the network writer never listened"
        client = _first_three(port)
    finally:
        err = _stop(proc)
    assert client.returncode == 0, client.stderr
    assert "Traceback" not in err
    got = [line for line in client.stdout.splitlines() if line.startswith("{")]
    assert got == (free23 / "expected-output.json").read_text().splitlines()


def test_stream_restart_answers_replicate(free23: Path, tmp_path: Path) -> None:
    """After a restart with a writer checkpoint, INFO answers REPLICATE with the confirmed
    position (OLR's WriterStream state after Writer::readCheckpoint), so a client resumes with
    CONTINUE (StreamClient ``next``, Debezium's adapter) instead of being asked to START."""
    from replicator.proto import olr_pb2 as pb
    from replicator.tools.stream_client import NO_SCN, StreamClient

    cfg, port = _network_setup(free23, tmp_path)
    saved = tmp_path / "state" / "TEST-chkpt.json"

    proc = _start(cfg)
    try:
        assert _wait_for(lambda: _listening(port)), "the network writer never listened"
        first = _first_three(port)
        assert first.returncode == 0, first.stderr
        assert _wait_for(lambda: saved.exists() and json.loads(saved.read_text())["scn"] == 2267707)
    finally:
        _stop(proc)
    position = json.loads(saved.read_text())

    proc = _start(cfg)
    try:
        assert _wait_for(lambda: _listening(port)), "the network writer never listened after the restart"
        stream = StreamClient("network", f"127.0.0.1:{port}", "TEST", timeout=10)
        stream.open()
        try:
            info = stream.request(pb.INFO)
            assert info.code == pb.REPLICATE, pb.ResponseCode.Name(info.code)
            assert (info.c_scn, info.c_idx) == (position["scn"], position["idx"] + 1)
            assert info.scn == position["scn"]  # first data SCN: where the writer resumed
            resumed = stream.request(pb.CONTINUE, c_scn=NO_SCN, c_idx=0)  # StreamClient `next`
            assert resumed.code == pb.REPLICATE
        finally:
            stream.close()
    finally:
        err = _stop(proc)
    assert "Traceback" not in err
