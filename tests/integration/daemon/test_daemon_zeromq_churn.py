"""Hundreds of second ZeroMQ clients connect while one streams from the daemon (issue 31, item 2).

A second client used to abort the daemon about every other run: libzmq's PAIR socket left
each later peer's connection open with nowhere to put its messages, and with heartbeats on,
the next error on such a connection let a heartbeat timer write to it: ``Assertion failed:
!_io_error (src/stream_engine_base.cpp:310)``, SIGABRT, no final checkpoint. Here threads
keep connecting PAIR sockets (real libzmq, asking INFO; some leave at once, some stay
seconds, as ``replicator client`` does while it waits for a reply), raw TCP peers and two
``replicator client`` processes, while a slow client reads and confirms the whole stream.
The daemon must stay up, turn every intruder away unanswered, and the client's output must
be the expected stream exactly, then a soft stop exits 0 with the position saved.
"""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from daemon_proc import Daemon
from fixture_configs import fast_offline_config, write_config
from kafka_broker import free_port

from replicator.errors import RuntimeFailure
from replicator.proto import olr_pb2 as pb
from replicator.redogen import workloads
from replicator.redogen.generate import generate
from replicator.tools.stream_client import StreamClient, ZmqChannel, is_data, position_of

INTRUDER_THREADS = 5
MIN_INTRUDERS = 200


class Intruders:
    """Threads connecting second clients until stopped; counts them and any answer they got."""

    def __init__(self, uri: str, database: str) -> None:
        self.uri, self.database = uri, database
        self.connected = 0
        self.answered: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(n,), daemon=True) for n in range(INTRUDER_THREADS)]
        self._threads.append(threading.Thread(target=self._clients, daemon=True))

    def start(self) -> Intruders:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _run(self, n: int) -> None:
        rng = random.Random(n)
        while not self._stop.is_set():
            if n == 0 and rng.random() < 0.3:  # a raw TCP peer that never speaks ZMTP
                host, port = self.uri.removeprefix("tcp://").rsplit(":", 1)
                with socket.create_connection((host, int(port)), timeout=5):
                    self._stop.wait(rng.uniform(0, 0.2))
                self._count()
                continue
            # thread 1 stays the way a waiting client does (longer than libzmq's heartbeat interval)
            linger = rng.uniform(5.5, 8.0) if n == 1 else rng.uniform(0.0, 0.15)
            channel = ZmqChannel(self.uri, 1.0)
            try:
                channel.send(pb.RedoRequest(code=pb.INFO, database_name=self.database).SerializeToString())
                deadline = time.monotonic() + linger
                while not self._stop.is_set() and time.monotonic() < deadline:
                    try:
                        frame = channel.recv(min(0.5, max(0.0, deadline - time.monotonic())))
                    except RuntimeFailure:
                        frame = None  # turned away; its libzmq reconnects while it lingers
                    if frame is not None:
                        with self._lock:
                            self.answered.append(f"intruder {n} got {frame[:60]!r}")
            finally:
                channel.close()
            self._count()

    def _clients(self) -> None:
        """``replicator client zeromq`` processes, as in the report: each must give up, unanswered."""
        for _ in range(2):
            if self._stop.is_set():
                return
            run = subprocess.run(
                [sys.executable, "-m", "replicator", "client", "zeromq", self.uri, self.database, "--timeout", "3"],
                capture_output=True,
                timeout=60,
                check=False,
            )
            if run.returncode == 0 or run.stdout:
                with self._lock:
                    self.answered.append(f"replicator client rc {run.returncode}: {run.stdout[:200]!r}")
            self._count()

    def _count(self) -> None:
        with self._lock:
            self.connected += 1


@pytest.mark.slow
def test_second_zeromq_clients_never_abort_the_daemon(tmp_path: Path) -> None:
    result = generate(workloads.oltp(seed=11, target_bytes=1 << 20), tmp_path / "gen")
    expected = result.expected.read_bytes().splitlines()
    uri = f"tcp://127.0.0.1:{free_port()}"
    doc = fast_offline_config(result)
    doc["target"][0]["writer"] = {"type": "zeromq", "uri": uri, "queue-size": 100, "poll-interval-us": 20_000}
    database = doc["source"][0]["name"]
    daemon = Daemon(write_config(tmp_path, doc, "zeromq.json"), tmp_path)
    intruders = None
    got: list[bytes] = []
    try:
        daemon.wait_log("waiting for a client")
        stream = StreamClient("zeromq", uri, database, "json", 10.0)
        stream.open()
        assert stream.start("now").code == pb.REPLICATE
        intruders = Intruders(uri, database).start()
        try:
            while len(got) < len(expected):  # about 20 s: slow enough for the intruders to overlap it
                frame = stream.receive(10.0)
                assert frame is not None, f"stream stalled after {len(got)} messages: {daemon.log()[-2000:]}"
                assert is_data(frame), pb.RedoResponse.FromString(frame)
                got.append(frame)
                if len(got) % 20 == 0 or len(got) == len(expected):
                    stream.confirm(position_of(frame, "json"))
                    time.sleep(0.2)
                assert daemon.proc.poll() is None, daemon.log()[-3000:]
            while intruders.connected < MIN_INTRUDERS and daemon.proc.poll() is None:
                time.sleep(0.1)  # keep streaming nothing while the last intruders come
        finally:
            intruders.stop()
            stream.close()
        alive = daemon.proc.poll() is None
        rc, err = daemon.stop()
    finally:
        daemon.close()
    assert alive and rc == 0, err[-3000:]
    assert "Assertion" not in err and "Traceback" not in err
    assert intruders.connected >= MIN_INTRUDERS
    assert intruders.answered == []
    assert got == expected  # exact: nothing lost, nothing twice, in order
    saved = json.loads((Path(doc["state"]["path"]) / f"{database}-chkpt.json").read_text())
    assert saved["scn"] >= position_of(expected[-1], "json")[0]  # the last message's LWN or later
    print(f"{intruders.connected} second clients while {len(got)} messages streamed; the daemon stayed up")
