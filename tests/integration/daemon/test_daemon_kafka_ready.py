"""READY and "replicating" only when the Kafka writer can deliver (issue 31, item 8).

The daemon said READY=1 and "replicating" while the broker was unreachable. Now it waits
for the broker before READY (WARN 60120 once, STATUS "waiting for the kafka broker"), and
while a broker it reached goes away with messages waiting, STATUS reads "degraded: ...".
The broker is a real tansu process on 127.0.0.1, started late and killed mid-run.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_proc import Daemon, wait_for
from fixture_configs import fast_offline_config, write_config
from kafka_broker import Broker, tansu_binary

from replicator.redogen import workloads
from replicator.redogen.generate import generate


@pytest.fixture
def late_broker() -> Iterator[Broker]:
    """A tansu broker with its port chosen but not started yet."""
    broker = Broker(tansu_binary())
    try:
        yield broker
    finally:
        broker.stop()


def _statuses(daemon: Daemon) -> list[str]:
    with daemon._lock:  # (the harness appends from its receiving thread)
        return [m["STATUS"] for m in daemon.messages if "STATUS" in m]


def test_ready_waits_for_the_broker_and_status_says_degraded(late_broker: Broker, tmp_path: Path) -> None:
    sc = workloads.oltp(seed=51, target_bytes=1 << 20)
    sc.log_blocks = 512  # logs of 256 KiB, each read 5 s after the one before at --read-limit 0.05
    result = generate(sc, tmp_path / "gen")
    doc = fast_offline_config(result)
    doc["target"][0]["writer"] = {
        "type": "kafka",
        "topic": "cdc",
        "poll-interval-us": 20_000,
        "properties": {"bootstrap.servers": late_broker.bootstrap},
    }
    cfg = write_config(tmp_path, doc, "kafka.json")
    daemon = Daemon(cfg, tmp_path, "--read-limit", "0.05")
    try:
        daemon.wait_log("WARN  60120", 60)
        assert wait_for(lambda: any("waiting for the kafka broker" in s for s in _statuses(daemon)), 30)
        assert not daemon.has("READY"), "READY while the broker cannot be reached"
        late_broker.start()
        daemon.wait_ready(60)
        assert "the kafka writer reaches its broker now" in daemon.log()
        daemon.wait_status(lambda st: st[3] > 0, 60)
        assert not daemon.status()[3] >= len(result.expected.read_bytes().splitlines())
        late_broker.kill()  # mid-run: the messages produced from now on wait
        assert wait_for(
            lambda: any(s.startswith("degraded: ") and "Kafka broker unreachable" in s for s in _statuses(daemon)), 60
        ), _statuses(daemon)[-3:]
        daemon.signal(signal.SIGKILL)  # (a soft stop would wait for the deliveries)
        daemon.proc.wait(30)
    finally:
        daemon.close()
    replicating = [s for s in _statuses(daemon) if s.startswith("replicating: ")]
    assert replicating, "no replicating STATUS once the broker answered"
