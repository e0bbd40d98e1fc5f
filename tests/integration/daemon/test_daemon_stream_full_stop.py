"""SIGTERM while the stream writer waits for room in a full queue (issue 28).

A real daemon (offline reader, generated redo, ``queue-size`` 200) with a network or zeromq
writer and a real client on 127.0.0.1 that confirms its 50th message and then reads on
without confirming: once it has 250 messages the queue holds 200 unconfirmed ones and the
writer waits for room. The wait did not watch the stop: SIGTERM then hung the daemon. Now
it exits 0 at once (after the bounded drain), its durable position is the client's
confirmed message, and a restarted daemon streams every message after it, none lost.
"""

from __future__ import annotations

import shutil
import signal
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

QUEUE_SIZE = 200


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> GenerationResult:
    """About 2,100 messages of ``oltp``: ten times the queue."""
    return generate(workloads.oltp(seed=7, target_bytes=1 << 20), tmp_path_factory.mktemp("oltp"))


def _config(generated: GenerationResult, tmp_path: Path, kind: str) -> Path:
    arch = tmp_path / "arch"
    shutil.copytree(generated.logs[0].path.parent, arch)
    doc = fast_offline_config(generated, arch)
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(generated.checkpoint, state)
    doc["state"]["path"] = str(state)
    port = free_port()
    uri = f"127.0.0.1:{port}" if kind == "network" else f"tcp://127.0.0.1:{port}"
    doc["target"][0]["writer"] = {"type": kind, "uri": uri, "queue-size": QUEUE_SIZE, "poll-interval-us": 20_000}
    return write_config(tmp_path, doc, f"{kind}.json")


def _client(kind: str, cfg: Path) -> StreamClient:
    import json

    stream = StreamClient(kind, json.loads(cfg.read_text())["target"][0]["writer"]["uri"], "TEST", "json", 10.0)
    stream.open()
    return stream


def _read(stream: StreamClient, count: int, confirm_every: int = 0) -> list[bytes]:
    return read_data(stream, count, confirm_every, timeout=30.0)


@pytest.mark.parametrize("kind", ["network", "zeromq"])
def test_sigterm_with_a_full_queue(generated: GenerationResult, tmp_path: Path, kind: str) -> None:
    expected = generated.expected.read_bytes().splitlines()
    assert len(expected) > 5 * QUEUE_SIZE
    cfg = _config(generated, tmp_path, kind)
    daemon = Daemon(cfg, tmp_path)
    try:
        daemon.wait_log("waiting for a client")
        stream = _client(kind, cfg)
        assert stream.start("now").code == pb.REPLICATE
        first = _read(stream, 50)
        stream.confirm(position_of(first[-1], "json"))
        # 250 messages arrive only once that CONFIRM made room: then 200 wait unconfirmed, the
        # queue is full and the writer waits for room (the redo holds ten times more).
        more = _read(stream, QUEUE_SIZE)
        assert first + more == expected[: 50 + QUEUE_SIZE]
        daemon.signal(signal.SIGTERM)
        rc = daemon.proc.wait(60)  # it hung here: the wait for room never saw the stop
        stream.close()
    finally:
        daemon.close()
    err = daemon.log()
    assert rc == 0, err[-3000:]
    assert "Traceback" not in err
    assert "stopping with the output queue full" in err

    daemon = Daemon(cfg, tmp_path)  # from the durable position: the client's 50th message
    try:
        daemon.wait_log("waiting for a client")
        stream = _client(kind, cfg)
        info = stream.request(pb.INFO)
        assert info.code == pb.REPLICATE and (info.c_scn, info.c_idx) == position_of(first[-1], "json")
        assert stream.start("next", position_of(first[-1], "json")).code == pb.REPLICATE
        rest = _read(stream, len(expected) - 50, confirm_every=100)
        stream.close()
        rc, err = daemon.stop()
    finally:
        daemon.close()
    assert rc == 0, err[-3000:]
    assert first + rest == expected  # every message, once, in order: nothing confirmed was lost
