"""Pruning never deletes what the next start needs (issue 31, item 3), for each writer kind.

Pruning used to keep the newest ``keep-checkpoints`` schema checkpoints whatever the saved
position said, and deleted the user's start checkpoint too: with a client that had not
confirmed, or Kafka deliveries held up, every later start failed with 10040; with
``interval-s`` 0 a file-writer kill loop died after a few kills. Now the checkpoint a restart
from the saved position starts from, the start checkpoint and their schema files stay
(runner/pruning.py). Each test writes a checkpoint per LWN (``interval-s`` 0) with
``keep-checkpoints`` 2, checks that pruning did delete files, SIGKILLs the daemon and
restarts it: it must start, and deliver everything.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from crash_kills import assert_all_mid_stream, kill_mid_stream, run_to_end
from daemon_proc import Daemon, wait_for
from fixture_configs import fast_offline_config, write_config
from kafka_broker import Broker, free_port

from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate
from replicator.tools.stream_client import StreamClient, is_data

KEEP = 2


def _generated(tmp_path: Path, mb: float = 1.0) -> GenerationResult:
    sc = workloads.oltp(seed=21, target_bytes=int(mb * (1 << 20)))
    sc.log_blocks = 1024
    return generate(sc, tmp_path / "gen")


def _pruning_config(result: GenerationResult) -> dict[str, Any]:
    cfg = fast_offline_config(result)
    cfg["state"].update({"keep-checkpoints": KEEP, "interval-s": 0})
    return cfg


def _schema_checkpoints(result: GenerationResult) -> list[str]:
    return sorted(p.name for p in result.checkpoint.parent.glob("TEST-chkpt-*.json"))


def _assert_pruned_but_kept_start(result: GenerationResult) -> None:
    """Pruning ran and kept the start checkpoint. Kept at most: the newest ``KEEP``, the restart
    and the start checkpoints, and the full-schema file of each (8), where one was written per
    LWN (a hundred and more here)."""
    files = _schema_checkpoints(result)
    assert result.checkpoint.name in files, f"the start checkpoint was deleted: {files}"
    assert len(files) <= 2 * (KEEP + 2), f"pruning deleted nothing: {files}"


def _run_to_the_end(cfg: Path, logs: int) -> subprocess.CompletedProcess:
    """The daemon once more, stopping after ``logs`` logs (debug.stop-log-switches)."""
    doc = json.loads(cfg.read_text())
    doc["source"][0]["debug"] = {"stop-log-switches": logs}
    cfg.write_text(json.dumps(doc))
    return subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg)], capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_file_writer_kill_loop_with_a_checkpoint_per_lwn(tmp_path: Path) -> None:
    result = _generated(tmp_path, 3.0)
    doc = _pruning_config(result)
    doc["target"][0]["writer"]["write-buffer-flush-size"] = 64 * 1024  # kills land mid-stream (crash tests)
    cfg = write_config(tmp_path, doc, "offline.json")
    expected = result.expected.read_bytes()

    def size() -> int:
        return result.output.stat().st_size if result.output.exists() else 0

    rng = random.Random(7)
    kills = [kill_mid_stream(cfg, size, len(expected), rng) for _ in range(6)]
    _assert_pruned_but_kept_start(result)
    run_to_end(cfg, size, len(expected))
    assert_all_mid_stream(kills)
    assert result.output.read_bytes() == expected


class Receiver(threading.Thread):
    """A stream client that STARTs from ``start-scn`` and reads, never confirming."""

    def __init__(self, port: int, start_scn: int) -> None:
        super().__init__(daemon=True)
        self.client = StreamClient("network", f"127.0.0.1:{port}", "TEST", timeout=20)
        self.start_scn = start_scn
        self.frames: list[bytes] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.client.open()
            self.client.start(f"scn:{self.start_scn}")
            while True:
                frame = self.client.receive(30)
                if frame is None:
                    return
                if is_data(frame):
                    self.frames.append(frame)
        except BaseException as e:  # noqa: BLE001 - the daemon's end closes the connection
            self.error = e
        finally:
            self.client.close()


def test_network_client_that_never_confirmed(tmp_path: Path) -> None:
    result = _generated(tmp_path)
    expected = result.expected.read_bytes().splitlines()
    port = free_port()
    doc = _pruning_config(result)
    doc["target"][0]["writer"] = {"type": "network", "uri": f"127.0.0.1:{port}", "poll-interval-us": 20_000}
    cfg = write_config(tmp_path, doc, "network.json")
    start_scn = doc["source"][0]["reader"]["start-scn"]
    daemon = Daemon(cfg, tmp_path)
    try:
        assert wait_for(lambda: daemon.log().count("waiting for a client") or daemon.proc.poll() is not None, 60)
        first = Receiver(port, start_scn)
        first.start()
        daemon.wait_status(lambda st: st[3] >= len(expected), 120)  # everything sent, nothing confirmed
        assert wait_for(lambda: len(first.frames) >= len(expected), 60), len(first.frames)
        _assert_pruned_but_kept_start(result)
        daemon.kill()
    finally:
        daemon.close()
    first.join(60)
    # The restart: from the start checkpoint again, and the client gets the whole stream.
    second = Receiver(port, start_scn)
    doc["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    cfg.write_text(json.dumps(doc))
    daemon = Daemon(cfg, tmp_path)
    try:
        assert wait_for(lambda: "waiting for a client" in daemon.log() or daemon.proc.poll() is not None, 60)
        assert daemon.proc.poll() is None, daemon.log()[-3000:]
        second.start()
        assert wait_for(lambda: daemon.proc.poll() is not None, 120), daemon.log()[-3000:]
        assert daemon.proc.returncode == 0, daemon.log()[-3000:]
    finally:
        daemon.close()
    second.join(60)
    assert second.frames == expected


def _topic(broker: Broker, topic: str, expected: list[bytes]) -> list[bytes]:
    """The records of partition 0 of ``topic``, read until every expected one came or none came
    for 3 s (tansu's watermarks are too low to say where the topic ends)."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "verify-pruning",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    records: list[bytes] = []
    missing = set(expected)
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        while missing:
            record = consumer.poll(3)
            if record is None:
                break
            if not record.error():
                records.append(record.value())
                missing.discard(record.value())
    finally:
        consumer.close()
    return records


def test_kafka_deliveries_held_up(broker: Broker, tmp_path: Path) -> None:
    result = _generated(tmp_path)
    expected = result.expected.read_bytes().splitlines()
    doc = _pruning_config(result)
    # Few messages in flight: while the broker is frozen the rest stays in the producer.
    doc["target"][0]["writer"] = {
        "type": "kafka",
        "topic": "cdc",
        "poll-interval-us": 20_000,
        "queue-size": 100_000,
        "properties": {
            "bootstrap.servers": broker.bootstrap,
            "max.in.flight.requests.per.connection": "1",
            "batch.num.messages": "20",
        },
    }
    cfg = write_config(tmp_path, doc, "kafka.json")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # (kept: the result needs the client alive)
    admin.create_topics([NewTopic("cdc", 1, 1)])["cdc"].result(30)
    daemon = Daemon(cfg, tmp_path)
    frozen = False
    try:
        daemon.wait_ready()
        broker.signal(signal.SIGSTOP)
        frozen = True
        daemon.wait_status(lambda st: st[3] >= len(expected), 120)  # all produced, hardly any delivered
        _assert_pruned_but_kept_start(result)
        daemon.kill()
    finally:
        daemon.close()
        if frozen:
            broker.signal(signal.SIGCONT)
    proc = _run_to_the_end(cfg, len(result.logs))
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = _topic(broker, "cdc", expected)
    assert set(expected) <= set(records), f"{len(set(expected) - set(records))} messages never reached the topic"
