"""Daemon + Kafka writer killed mid-stream: after restarts nothing is lost; duplicates are counted.

Kafka confirms a message only from its delivery report, and the daemon saves the
confirmed position about once a second, so a SIGKILL can re-send what was delivered
after the last save (at-least-once): those duplicates are measured and printed.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from daemon_proc import Daemon
from fixture_configs import fast_offline_config, write_config
from kafka_broker import Broker

from replicator.redogen import workloads
from replicator.redogen.generate import generate


def _consume_all(broker: Broker, topic: str, idle: float = 3.0) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "verify-crash",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        values: list[bytes] = []
        last = time.monotonic()
        while time.monotonic() - last < idle:
            record = consumer.poll(0.2)
            if record is None or record.error():
                continue
            values.append(record.value())
            last = time.monotonic()
        return values
    finally:
        consumer.close()


@pytest.mark.slow
def test_kill_daemon_with_kafka_writer(broker: Broker, tmp_path: Path) -> None:
    rng = random.Random(4)
    result = generate(workloads.oltp(seed=3, target_bytes=6 << 20), tmp_path / "gen")
    cfg = fast_offline_config(result)
    cfg["target"][0]["writer"] = {"type": "kafka", "topic": "cdc", "poll-interval-us": 20_000,
                                  "properties": {"bootstrap.servers": broker.bootstrap}}
    path = write_config(tmp_path, cfg, "kafka.json")
    expected = result.expected.read_bytes().splitlines()

    kills_mid_stream = 0
    for _ in range(3):
        proc = Daemon(path, tmp_path)
        try:
            proc.wait_ready(120)
            # Kill once this run has parsed some transactions, well before the end of the stream.
            at_least = rng.randint(1, max(1, len(expected) // 8))
            proc.wait_status(lambda st: st[2] >= at_least or proc.proc.poll() is not None, 120)
            assert proc.proc.poll() is None, f"exited early: {proc.log()[-2000:]}"
            proc.kill()
            kills_mid_stream += (proc.status() or (0, 0, 0, 0))[3] < len(expected)
        finally:
            proc.close()
    assert kills_mid_stream == 3
    proc = Daemon(path, tmp_path)
    try:
        proc.wait_ready(120)
        deadline = time.monotonic() + 120
        got: list[bytes] = []
        while time.monotonic() < deadline:
            got = _consume_all(broker, "cdc")
            if not Counter(expected) - Counter(got):
                break
        rc, err = proc.stop()
    finally:
        proc.close()
    assert rc == 0, err[-2000:]
    missing = Counter(expected) - Counter(got)
    duplicates = sum((Counter(got) - Counter(expected)).values())
    print(f"kafka crash test: {len(expected)} expected, {len(got)} consumed, {duplicates} duplicates, "
          f"{sum(missing.values())} missing after 3 SIGKILLs")
    assert not missing, "messages lost"
    assert set(got) <= set(expected), "records that are not part of the stream"
