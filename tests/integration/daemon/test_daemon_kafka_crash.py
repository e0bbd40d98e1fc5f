"""Daemon + Kafka writer SIGKILLed mid-stream (issue 15).

Kafka confirms a message only from its delivery report and the daemon saves the
confirmed position a few times a second, so a SIGKILL re-sends what was delivered after
the last save (at-least-once). Every kill lands mid-stream: a consumer thread counts the
records in the topic and the daemon is killed once the count grew by a random amount;
what it had delivered when it died must lie between the start of its run and the end of
the stream (asserted). With ``broker_stop`` every kill comes while the broker is frozen
(SIGSTOP; its storage is in memory, so a kill+restart would lose the topic): the daemon
is mid-stream with produce requests in flight and a full queue when it dies, then the
broker resumes (SIGCONT) and may still append what the dead producer had sent.
Expected: 0 lost; the topic is the stream in order, each restart re-sending from an
earlier point (never skipping one) that lies after the position the daemon had
confirmed (its ``<name>-chkpt.json`` when it was killed), and re-sending at most
``queue-size + DURABLE_LAG - 1`` messages (the writer has the position saved every
``DURABLE_EVERY`` delivery reports and produces nothing while ``DURABLE_LAG`` are unsaved;
docs/operations.md). The re-sends are counted per restart and printed.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from crash_kills import Kill, assert_all_mid_stream
from daemon_proc import Daemon, wait_for
from fixture_configs import fast_offline_config, write_config
from kafka_broker import Broker

from replicator.redogen import workloads
from replicator.redogen.generate import generate
from replicator.writers.kafka import DURABLE_LAG

QUEUE_SIZE = 100  # the writer's queue-size here: at most this many produced but unconfirmed messages


class TopicReader(threading.Thread):
    """Reads every record of a topic's partition 0 from the start, until stopped."""

    def __init__(self, broker: Broker, topic: str) -> None:
        super().__init__(daemon=True)
        self.broker, self.topic = broker, topic
        self.records: list[bytes] = []
        self.done = threading.Event()

    def run(self) -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": self.broker.bootstrap,
                "group.id": "verify-crash",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            }
        )
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


def _segments(got: list[bytes], expected: list[bytes], floors: Sequence[tuple[int, int]] = ()) -> list[int]:
    """Check ``got`` is ``expected`` with restarts that go back (never forward); returns how many
    messages each restart re-sent (the stream position reached before it minus where it resumed).

    ``floors`` holds (records in the topic when a killed daemon's deliveries settled,
    stream index it had confirmed): a record after that count may go back only to a
    message after the confirmed one.
    """
    where: dict[bytes, list[int]] = {}
    for i, line in enumerate(expected):
        where.setdefault(line, []).append(i)
    pending = sorted(floors)
    p, confirmed = 0, -1
    resent: list[int] = []
    for n, record in enumerate(got):
        while pending and pending[0][0] <= n:
            confirmed = max(confirmed, pending.pop(0)[1])
        if p < len(expected) and record == expected[p]:
            p += 1
            continue
        earlier = [i for i in where.get(record, []) if i < p]
        assert earlier, f"record {n} skips ahead or is not part of the stream (stream position {p})"
        assert earlier[-1] > confirmed, (
            f"record {n} re-sends stream message {earlier[-1]}, at or before the confirmed message {confirmed}"
        )
        resent.append(p - earlier[-1])
        p = earlier[-1] + 1
    assert p == len(expected), f"the topic ends at stream position {p} of {len(expected)}: messages lost"
    return resent


def _confirmed_index(cfg_doc: dict, expected: list[bytes]) -> int:
    """The stream index of the message the daemon's ``<name>-chkpt.json`` confirms (-1: none)."""
    name = cfg_doc["source"][0]["name"]
    path = Path(cfg_doc["state"]["path"]) / f"{name}-chkpt.json"
    if not path.exists():
        return -1
    doc = json.loads(path.read_bytes())
    key = f'"c_scn":{doc["scn"]},"c_idx":{doc["idx"] + 1}'.encode()
    found = [i for i, line in enumerate(expected) if key in line[:200]]
    assert found, f"confirmed position {key!r} names no message of the stream"
    # (c_scn, c_idx) is not unique (transactions that began at one SCN share it): of the
    # messages it names, the earliest is the one re-sends must come after at the least.
    return found[0]


def _settle(reader: TopicReader, high_watermark: Callable[[], int], quiet: float = 1.0, timeout: float = 30.0) -> None:
    """Wait until the reader holds every record of the topic and the topic stopped growing for
    ``quiet`` seconds (what a dead producer sent has landed and was read)."""
    deadline = time.monotonic() + timeout
    high, since = high_watermark(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = high_watermark()
        if now != high:
            high, since = now, time.monotonic()
        elif len(reader.records) >= high and time.monotonic() - since >= quiet:
            return
    raise AssertionError(f"the reader holds {len(reader.records)} of {high} records after {timeout}s")


@pytest.mark.slow
@pytest.mark.parametrize("broker_stop", [False, True], ids=["kill", "kill-during-broker-stop"])
def test_kill_daemon_with_kafka_writer(broker: Broker, tmp_path: Path, broker_stop: bool) -> None:
    rng = random.Random(int(time.time_ns() % 100000))
    grow = (0.01, 0.05)  # of what is still to come: the reader lags the producer by a second or two
    result = generate(workloads.oltp(seed=3, target_bytes=12 << 20), tmp_path / "gen")
    cfg_doc = fast_offline_config(result)
    # A small queue keeps what is in flight (delivered but not yet seen by the reader) small.
    cfg_doc["target"][0]["writer"] = {
        "type": "kafka",
        "topic": "cdc",
        "poll-interval-us": 20_000,
        "queue-size": QUEUE_SIZE,
        "properties": {"bootstrap.servers": broker.bootstrap},
    }
    if broker_stop:  # few messages in flight: a frozen broker stalls the daemon mid-stream, not after the end
        cfg_doc["target"][0]["writer"]["properties"].update(
            {"max.in.flight.requests.per.connection": "1", "batch.num.messages": "20"}
        )
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
        return subprocess.Popen(
            [sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def progress() -> int:
        """How far into the stream the topic reaches (duplicates after restarts do not count)."""
        return _position(list(reader.records), expected)

    def wait_growth(proc: subprocess.Popen, before: int, share: float) -> int:
        target = min(before + max(1, int((total - before) * share)), total - 1)
        deadline = time.monotonic() + 120
        while progress() < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return progress()

    watermarks = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "verify-crash-hw"})

    def high_watermark() -> int:
        return watermarks.get_watermark_offsets(TopicPartition("cdc", 0), timeout=5)[1]

    def wait_broker_growth(proc: subprocess.Popen, before: int, share: float) -> None:
        """The broker (not the reader, which lags) got a random share of the stream beyond ``before``.

        A restart first re-sends what follows the confirmed message, so that much comes on top.
        """
        confirmed = floors[-1][1] if floors else -1
        target = high_watermark() + max(0, before - confirmed - 1) + max(1, int(total * share))
        deadline = time.monotonic() + 120
        while high_watermark() < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)

    kills: list[Kill] = []
    floors: list[tuple[int, int]] = []
    try:
        for i in range(3):
            before = progress()
            proc = start()
            if broker_stop:
                wait_broker_growth(proc, before, rng.uniform(*grow))
                broker.signal(signal.SIGSTOP)
                try:  # hold it down long enough for the daemon to fill its queue and time out nothing
                    time.sleep(1.0)
                    if proc.poll() is not None:
                        pytest.fail(f"the daemon ended while the broker was stopped: {proc.communicate()[1][-3000:]}")
                    proc.kill()
                    _, err = proc.communicate(timeout=30)
                finally:
                    broker.signal(signal.SIGCONT)
            else:
                wait_growth(proc, before, rng.uniform(*grow))
                proc.kill()
                _, err = proc.communicate(timeout=30)
            _settle(reader, high_watermark)  # what the killed daemon delivered reaches the reader
            at = progress()
            floors.append((len(reader.records), _confirmed_index(cfg_doc, expected)))
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
        watermarks.close()
        reader.done.set()
        reader.join(10)
    assert_all_mid_stream(kills)
    got = list(reader.records)
    resent = _segments(got, expected, floors)
    print(
        f"kafka crash test{' with broker stops' if broker_stop else ''}: {total} expected, {len(got)} consumed, "
        f"{len(got) - total} duplicates (all after the confirmed position), re-sent per restart {resent}, "
        f"0 missing after 3 SIGKILLs; (records, confirmed index) at the kills: {floors}"
    )
    bound = QUEUE_SIZE + DURABLE_LAG - 1
    assert all(n <= bound for n in resent), f"a restart re-sent more than queue-size + DURABLE_LAG - 1 = {bound}"


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


def test_sigterm_with_a_full_kafka_queue(broker: Broker, tmp_path: Path) -> None:
    """SIGTERM while the Kafka writer waits for room in a full queue (the broker frozen, no
    delivery report comes): the wait used to ignore the stop, and the daemon hung. It gives up
    the wait now, and once the broker resumes (close() waits for what was produced) exits 0;
    its position is one it had confirmed, and the restarted daemon completes the topic:
    nothing lost, re-sends only after that position."""
    result = generate(workloads.oltp(seed=3, target_bytes=2 << 20), tmp_path / "gen")
    cfg_doc = fast_offline_config(result)
    cfg_doc["target"][0]["writer"] = {
        "type": "kafka",
        "topic": "cdc",
        "poll-interval-us": 20_000,
        "queue-size": QUEUE_SIZE,
        # few messages in flight: a frozen broker stalls the daemon mid-stream
        "properties": {
            "bootstrap.servers": broker.bootstrap,
            "max.in.flight.requests.per.connection": "1",
            "batch.num.messages": "20",
        },
    }
    cfg = write_config(tmp_path, cfg_doc, "kafka.json")
    expected = result.expected.read_bytes().splitlines()
    assert len(expected) > 10 * QUEUE_SIZE
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("cdc", 1, 1)])["cdc"].result(30)
    reader = TopicReader(broker, "cdc")
    reader.start()
    watermarks = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "verify-full-hw"})

    def high_watermark() -> int:
        return watermarks.get_watermark_offsets(TopicPartition("cdc", 0), timeout=5)[1]

    try:
        daemon = Daemon(cfg, tmp_path)
        try:
            assert wait_for(lambda: high_watermark() >= 2 * QUEUE_SIZE or daemon.proc.poll() is not None, 120)
            broker.signal(signal.SIGSTOP)
            try:
                # Frozen: nothing is confirmed any more, the queue fills and the writer waits for room.
                daemon.wait_log("WARN  60031", 60)
                assert daemon.proc.poll() is None, daemon.log()[-3000:]
                daemon.signal(signal.SIGTERM)
                daemon.wait_log("stopping with the Kafka queue full", 60)  # the wait used to ignore it
            finally:
                broker.signal(signal.SIGCONT)  # close() then gets its delivery reports
            rc = daemon.proc.wait(120)
        finally:
            daemon.close()
        err = daemon.log()
        assert rc == 0, err[-3000:]
        assert "Traceback" not in err
        _settle(reader, high_watermark)
        floors = [(len(reader.records), _confirmed_index(cfg_doc, expected))]
        assert 0 <= floors[0][1] < len(expected) - 1, "the stop came after the end of the stream"
        daemon = Daemon(cfg, tmp_path)
        try:
            assert wait_for(lambda: _tail_complete(reader.records, expected), 180)
            rc, err = daemon.stop()
        finally:
            daemon.close()
        assert rc == 0, err[-3000:]
    finally:
        watermarks.close()
        reader.done.set()
        reader.join(10)
    _segments(list(reader.records), expected, floors)  # every message, in order; re-sends after the position
