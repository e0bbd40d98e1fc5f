"""Client requests checked against what the daemon sent and can do (issue 31, items 1 and 7).

A real daemon (offline reader, generated redo) with a network or zeromq writer, real sockets:

* CONTINUE from a position never sent -- c_scn 2^63, from any process, before replication
  started or while it runs -- is refused (INVALID_COMMAND) and marks nothing delivered: the
  real client then receives every message. It used to confirm the whole queue and every
  later message at or below the position (0 of 9,446 delivered).
* START at an SCN starts there, as OpenLogReplicator's own daemon does (its output for
  ``scn:2266683`` on this workload is the tail from the first transaction at or after that
  SCN); a START the daemon cannot honour (an SCN beyond the redo, one below every schema
  checkpoint, a time) is FAILED_START with the error logged, and the client may START again.
  The START used to be ignored (the stream began at ``start-scn`` whatever it asked).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from daemon_proc import Daemon
from fixture_configs import fast_offline_config, write_config
from kafka_broker import free_port
from stream_harness import read_data

from replicator.proto import olr_pb2 as pb
from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate
from replicator.tools.stream_client import StreamClient, position_of

HOSTILE = 1 << 63


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> GenerationResult:
    """About 2,100 messages of ``oltp`` (seed 7: the workload the reference was run on)."""
    return generate(workloads.oltp(seed=7, target_bytes=1 << 20), tmp_path_factory.mktemp("oltp"))


def _daemon(generated: GenerationResult, tmp_path: Path, kind: str) -> tuple[Daemon, str]:
    import shutil

    arch = tmp_path / "arch"
    shutil.copytree(generated.logs[0].path.parent, arch)
    doc = fast_offline_config(generated, arch)
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(generated.checkpoint, state)
    doc["state"]["path"] = str(state)
    port = free_port()
    uri = f"127.0.0.1:{port}" if kind == "network" else f"tcp://127.0.0.1:{port}"
    doc["target"][0]["writer"] = {"type": kind, "uri": uri, "poll-interval-us": 20_000}
    daemon = Daemon(write_config(tmp_path, doc, f"{kind}.json"), tmp_path)
    daemon.wait_log("waiting for a client")
    return daemon, uri


def _client(kind: str, uri: str) -> StreamClient:
    stream = StreamClient(kind, uri, "TEST", "json", 10.0)
    stream.open()
    return stream


def _read(stream: StreamClient, count: int, confirm_every: int = 0) -> list[bytes]:
    return read_data(stream, count, confirm_every, timeout=10.0)


def _hostile_continue(kind: str, uri: str, expect_info: int, *positions: tuple[int, int]) -> None:
    """Another process asks to continue from positions it was never sent: each is refused."""
    hostile = _client(kind, uri)
    try:
        assert hostile.request(pb.INFO).code == expect_info
        for c_scn, c_idx in positions:
            reply = hostile.request(pb.CONTINUE, c_scn=c_scn, c_idx=c_idx)
            assert reply.code == pb.INVALID_COMMAND, pb.ResponseCode.Name(reply.code)
    finally:
        hostile.close()


@pytest.mark.parametrize("kind", ["network", "zeromq"])
def test_continue_from_a_position_never_sent_loses_nothing(
    generated: GenerationResult, tmp_path: Path, kind: str
) -> None:
    expected = generated.expected.read_bytes().splitlines()
    daemon, uri = _daemon(generated, tmp_path, kind)
    try:
        _hostile_continue(kind, uri, pb.READY, (HOSTILE, 5))  # before replication started
        real = _client(kind, uri)
        assert real.start("now").code == pb.REPLICATE
        first = _read(real, 100)
        real.confirm(position_of(first[49], "json"))  # it processed 50, then went away
        assert real.request(pb.INFO).code == pb.REPLICATE  # answered after the CONFIRM: it arrived
        real.close()  # (closing with unread data resets the connection: a CONFIRM still in flight is lost)
        beyond = position_of(first[-1], "json")[0] + 1_000_000
        _hostile_continue(kind, uri, pb.REPLICATE, (HOSTILE, 5), (beyond, 1))  # while replicating
        real = _client(kind, uri)
        info = real.request(pb.INFO)
        assert info.code == pb.REPLICATE and (info.c_scn, info.c_idx) == position_of(first[49], "json")
        assert real.start("next", position_of(first[49], "json")).code == pb.REPLICATE
        rest = _read(real, len(expected) - 50, confirm_every=200)
        real.close()
        assert first[:50] + rest == expected  # every message, once, in order
        rc, err = daemon.stop()
    finally:
        daemon.close()
    assert rc == 0, err[-3000:]
    assert err.count("WARN  60085") == 3 and "Traceback" not in err


def test_start_scn_is_honoured_or_refused(generated: GenerationResult, tmp_path: Path) -> None:
    lines = generated.expected.read_bytes().splitlines()
    start = 2266683  # a transaction's SCN in the middle of the stream
    begins = [i for i, line in enumerate(lines) if b'"scns"' in line and int(json.loads(line)["scns"], 16) >= start]
    expected = lines[begins[0] :]
    assert 0 < len(expected) < len(lines)
    daemon, uri = _daemon(generated, tmp_path, "network")
    try:
        stream = _client("network", uri)
        for mode in ("scn:18446744073709551614", "scn:2266800", "scn:2266000", "time:2026-01-01 00:00:00"):
            reply = stream.start(mode)
            assert reply.code == pb.FAILED_START, (mode, pb.ResponseCode.Name(reply.code))
        reply = stream.start(f"scn:{start}")
        assert reply.code == pb.REPLICATE and reply.scn == start
        got = _read(stream, len(expected), confirm_every=200)
        assert stream.receive(1.0) is None  # nothing after the end of the redo
        stream.close()
        rc, err = daemon.stop()
    finally:
        daemon.close()
    assert got == expected  # the tail OpenLogReplicator streams for the same START
    assert rc == 0, err[-3000:]
    assert "ERROR 10093 starting replication failed: START at scn 18446744073709551614: no Oracle SCN" in err
    assert "ERROR 10093 starting replication failed: START at scn 2266800: the redo logs on disk end" in err
    assert "ERROR 10040 starting replication failed: START at scn 2266000" in err
    assert "ERROR 10093 starting replication failed: the offline reader cannot start at a time" in err
