"""Daemon + Kafka writer SIGKILLed mid-stream (issue 15).

Kafka confirms a message only from its delivery report and the daemon saves the
confirmed position a few times a second, so a SIGKILL re-sends what was delivered after
the last save (at-least-once). Every kill lands mid-stream: a consumer thread counts the
records in the topic and the daemon is killed once the count grew by a random amount;
what it had delivered when it died must lie between the start of its run and the end of
the stream (asserted). (A broker stop is not covered here: after a SIGSTOP/SIGCONT the daemon
delivered the rest of this stream before the reader saw growth, so no kill landed
mid-stream; tests/integration/test_kafka_writer.py kills and restarts the broker.)
Expected: 0 lost; the topic is the stream in order, each restart re-sending from an
earlier point (never skipping one); the duplicates this gives are counted and printed.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from crash_kills import Kill, assert_all_mid_stream
from fixture_configs import fast_offline_config, write_config
from kafka_broker import Broker

from replicator.redogen import workloads
from replicator.redogen.generate import generate


class TopicReader(threading.Thread):
    """Reads every record of a topic's partition 0 from the start, until stopped."""

    def __init__(self, broker: Broker, topic: str) -> None:
        super().__init__(daemon=True)
        self.broker, self.topic = broker, topic
        self.records: list[bytes] = []
        self.done = threading.Event()

    def run(self) -> None:
        consumer = Consumer({"bootstrap.servers": self.broker.bootstrap, "group.id": "verify-crash",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        try:
            while not self.done.is_set():
                topics = consumer.list_topics(self.topic, timeout=5).topics
                if self.topic in topics and topics[self.topic].partitions:
                    break
                time.sleep(0.1)
            consumer.assign([TopicPartition(self.topic, 0, 0)])
            while not self.done.is_set():
                record = consumer.poll(0.1)
                if record is not None and not record.error():
                    self.records.append(record.value())
        finally:
            consumer.close()


def _segments(got: list[bytes], expected: list[bytes]) -> int:
    """Check ``got`` is ``expected`` with restarts that go back (never forward); returns the restarts."""
    where: dict[bytes, list[int]] = {}
    for i, line in enumerate(expected):
        where.setdefault(line, []).append(i)
    p, restarts = 0, 0
    for n, record in enumerate(got):
        if p < len(expected) and record == expected[p]:
            p += 1
            continue
        earlier = [i for i in where.get(record, []) if i < p]
        assert earlier, f"record {n} skips ahead or is not part of the stream (stream position {p})"
        p = earlier[-1] + 1
        restarts += 1
    assert p == len(expected), f"the topic ends at stream position {p} of {len(expected)}: messages lost"
    return restarts


@pytest.mark.slow
def test_kill_daemon_with_kafka_writer(broker: Broker, tmp_path: Path) -> None:
    rng = random.Random(int(time.time_ns() % 100000))
    grow = (0.01, 0.05)  # of what is still to come: the reader lags the producer by a second or two
    result = generate(workloads.oltp(seed=3, target_bytes=12 << 20), tmp_path / "gen")
    cfg_doc = fast_offline_config(result)
    # A small queue keeps what is in flight (delivered but not yet seen by the reader) small.
    cfg_doc["target"][0]["writer"] = {"type": "kafka", "topic": "cdc", "poll-interval-us": 20_000, "queue-size": 100,
                                      "properties": {"bootstrap.servers": broker.bootstrap}}
    cfg = write_config(tmp_path, cfg_doc, "kafka.json")
    expected = result.expected.read_bytes().splitlines()
    total = len(expected)
    # One partition: the test checks the order of the stream (librdkafka's partitioner
    # would spread the messages of each producer instance over a topic's partitions).
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("cdc", 1, 1)])["cdc"].result(30)
    reader = TopicReader(broker, "cdc")
    reader.start()

    def start() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def progress() -> int:
        """How far into the stream the topic reaches (duplicates after restarts do not count)."""
        return _position(list(reader.records), expected)

    def wait_growth(proc: subprocess.Popen, before: int, share: float) -> int:
        target = min(before + max(1, int((total - before) * share)), total - 1)
        deadline = time.monotonic() + 120
        while progress() < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return progress()

    kills: list[Kill] = []
    try:
        for i in range(3):
            before = progress()
            proc = start()
            at = wait_growth(proc, before, rng.uniform(*grow))
            proc.kill()
            _, err = proc.communicate(timeout=30)
            time.sleep(1.0)  # what the killed daemon delivered reaches the reader
            at = progress()
            assert "Traceback" not in err, err[-3000:]
            if at == before:
                print(f"run {i} made no progress: {err[-3000:]}")
            kills.append(Kill(before, at, total))
        proc = start()
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                if len(reader.records) >= total and _tail_complete(reader.records, expected):
                    break
                time.sleep(0.2)
            time.sleep(1.0)
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err[-2000:]
    finally:
        reader.done.set()
        reader.join(10)
    assert_all_mid_stream(kills)
    got = list(reader.records)
    restarts = _segments(got, expected)
    print(f"kafka crash test: {total} expected, {len(got)} consumed, {len(got) - total} duplicates "
          f"(re-sent after the last confirmed position) over {restarts} restarts, 0 missing after 3 SIGKILLs")


def _position(got: list[bytes], expected: list[bytes]) -> int:
    """The stream position the records reach, following restarts back (tolerant: no assertions)."""
    p = 0
    first_at: dict[bytes, int] = {}
    for i, line in enumerate(expected):
        first_at.setdefault(line, i)
    best = 0
    for record in got:
        if p < len(expected) and record == expected[p]:
            p += 1
        else:
            p = first_at.get(record, p) + 1
        best = max(best, p)
    return best


def _tail_complete(got: list[bytes], expected: list[bytes]) -> bool:
    return bool(got) and got[-1] == expected[-1]
