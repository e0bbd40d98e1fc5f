"""The kafka writer's run path against tansu on 127.0.0.1 (issue 28).

The same redo goes through ``replicator run`` twice: with the native producer, which takes
the native engine's MessageRuns whole, and with the confluent-kafka fallback (the native
producer made unavailable), which takes them message by message. Both topics must hold the
same records, byte for byte and in order, equal to the expected output; the same with a
topic per table. The run path's own failure and bound paths are checked on runs built here.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka_broker import Broker

from replicator.cli import main
from replicator.config.writer import KafkaWriterConfig
from replicator.errors import RuntimeFailure
from replicator.events import Message
from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate
from replicator.writers import kafka, kafka_runs
from replicator.writers.base import Writer, create_writer
from replicator.writers.kafka import KafkaWriter
from replicator.writers.kafka_runs import KafkaRunWriter, native_producer

pytestmark = pytest.mark.skipif(native_producer() is None, reason="needs the native core and librdkafka")


@pytest.fixture(scope="module")
def redo(tmp_path_factory: pytest.TempPathFactory) -> GenerationResult:
    return generate(workloads.oltp(seed=9, target_bytes=1 << 20), tmp_path_factory.mktemp("kafka-runs"))


def _table_topic(line: bytes, prefix: str) -> str | None:
    """``prefix.OWNER.TABLE`` of a row message, None for begin/commit."""
    schema = orjson.loads(line)["payload"][0].get("schema")
    return f"{prefix}.{schema['owner']}.{schema['table']}".replace("$", "_").replace("#", "_") if schema else None


def _run(redo: GenerationResult, tmp_path: Path, name: str, writer: dict[str, Any]) -> None:
    """``replicator run`` (batch, native engine) of ``redo`` to ``writer``, with a state of its own."""
    cfg = json.loads(redo.config.read_text())
    state = tmp_path / f"state-{name}"
    shutil.copytree(redo.checkpoint.parent, state)
    cfg["state"]["path"] = str(state)
    cfg["target"][0]["writer"] = writer
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(cfg))
    assert main(["run", "-f", str(path), "--engine", "native"]) == 0


def _consume(broker: Broker, topics: list[str], count: int, timeout: float = 30) -> dict[str, list[tuple[Any, bytes]]]:
    """Every record of partition 0 of ``topics``: topic -> [(key, value)] in offset order."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "runs", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0) for topic in topics])
        records: dict[str, list[tuple[Any, bytes]]] = {topic: [] for topic in topics}
        got, deadline = 0, time.monotonic() + timeout
        while got < count and time.monotonic() < deadline:
            record = consumer.poll(0.2)
            if record is None or record.error():
                continue
            records[record.topic()].append((record.key(), record.value()))
            got += 1
        extra = consumer.poll(0.5)
        assert extra is None or extra.error(), "more records than produced"
        assert got == count, f"{got} of {count} records"
        return records
    finally:
        consumer.close()


def _create(broker: Broker, topics: list[str]) -> None:
    """One partition each: the order of the records is the order of the stream."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(topic, 1, 1) for topic in topics]).values():
        future.result(30)


@pytest.mark.parametrize("per_table", [False, True], ids=["one-topic", "topic-per-table"])
def test_run_path_and_message_path_write_the_same_records(
    broker: Broker, redo: GenerationResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_table: bool
) -> None:
    assert redo.expected is not None
    expected = redo.expected.read_bytes().splitlines()
    runs: list[int] = []  # confirm_run calls (of either writer class): the runs the writer took whole
    confirm_run = Writer.confirm_run

    def counted(self: Writer, run: Any) -> None:
        runs.append(len(run))
        confirm_run(self, run)

    monkeypatch.setattr(Writer, "confirm_run", counted)
    records = {}
    for path in ("native", "fallback"):
        topics = {path} | ({t for t in (_table_topic(line, path) for line in expected) if t} if per_table else set())
        _create(broker, sorted(topics))
        writer: dict[str, Any] = {"type": "kafka", "topic": path, "properties": {"bootstrap.servers": broker.bootstrap}}
        if per_table:
            writer["topic-per-table"] = path + ".{owner}.{table}"
        runs.clear()
        with monkeypatch.context() as patch:
            if path == "fallback":
                patch.setattr(kafka_runs, "native_producer", lambda: None)
            _run(redo, tmp_path, path, writer)
        if path == "native":
            assert runs and sum(runs) > len(expected) // 2, "the native path took no runs whole"
        else:
            assert not runs, "the fallback took runs whole"
        records[path] = _consume(broker, sorted(topics), len(expected))
    native, fallback = records["native"], records["fallback"]
    assert {t.replace("native", "fallback", 1): r for t, r in native.items()} == fallback  # byte for byte
    for topic, got in native.items():
        want = [
            line for line in expected if ((_table_topic(line, "native") if per_table else None) or "native") == topic
        ]
        assert [value for _, value in got] == want, f"{topic}: not the expected records"
        assert all(key is None for key, _ in got)


def _writer(broker: Broker, confirmed: list[tuple[int, int]], **keys: Any) -> KafkaRunWriter:
    config = KafkaWriterConfig.model_validate(
        {"type": "kafka", "topic": "runs", "properties": {"bootstrap.servers": broker.bootstrap}, **keys}
    )
    writer = create_writer(config, lambda scn, idx: confirmed.append((scn, idx)))
    assert isinstance(writer, KafkaRunWriter)
    writer.connect()
    return writer


def _wait(writer: KafkaRunWriter, confirmed: list[Any], count: int) -> None:
    deadline = time.monotonic() + 30
    while len(confirmed) < count and time.monotonic() < deadline:
        writer.flush()
        time.sleep(0.01)
    assert len(confirmed) == count


def test_runs_are_confirmed_once_each_in_order(broker: Broker) -> None:
    from replicator.native import runframes

    confirmed: list[tuple[int, int]] = []
    writer = _writer(broker, confirmed, **{"queue-size": 10})
    assert writer.writes_runs_whole
    runs = [runframes().make_run([Message(b"%d.%d" % (n, i), 100 + n, i) for i in range(n + 1)]) for n in range(4)]
    big = runframes().make_run([Message(b"big.%d" % i, 200, i) for i in range(25)])  # longer than queue-size
    writer.write_runs([*runs, big])
    _wait(writer, confirmed, 4 + 25)
    writer.close()
    # one confirmation per run at its last message; the long run message by message (the bound holds)
    assert confirmed == [(100 + n, n) for n in range(4)] + [(200, i) for i in range(25)]
    assert writer.messages_confirmed == 10 + 25 and writer.undelivered == 0


def test_message_of_a_run_too_large_names_the_transaction(broker: Broker) -> None:
    from replicator.native import runframes

    writer = _writer(broker, [], **{"max-message-mb": 1})
    xid = (0x12 << 48) | (3 << 32) | 0x456
    run = runframes().make_run([Message(b"small", 77, 0, xid=xid), Message(b"x" * (2 * 1024 * 1024), 77, 1, xid=xid)])
    with pytest.raises(RuntimeFailure) as info:
        writer.write_runs([run])
    assert info.value.code == 10092
    assert "transaction 0x0012.003.00000456 (scn 77, idx 2" in info.value.message
    assert "2097152 bytes" in info.value.message


def test_keys_by_primary_key_take_runs_message_by_message(broker: Broker) -> None:
    writer = _writer(broker, [], **{"key-by-pk": 1})
    assert not writer.writes_runs_whole
    writer.close()


def test_fallback_without_the_native_producer(broker: Broker, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kafka_runs, "native_producer", lambda: None)
    config = KafkaWriterConfig.model_validate(
        {"type": "kafka", "topic": "runs", "properties": {"bootstrap.servers": broker.bootstrap}}
    )
    writer = create_writer(config, lambda scn, idx: None)
    assert type(writer) is KafkaWriter and not writer.writes_runs_whole  # chosen once, at build time
    assert "compression.codec" not in writer.producer_config()  # today's configuration, unchanged


@pytest.mark.parametrize("producer", ["native", "confluent-kafka"])
@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "not-idempotent"])
def test_the_producer_id_is_asked_for_until_the_first_delivery(
    broker: Broker, monkeypatch: pytest.MonkeyPatch, idempotent: bool, producer: str
) -> None:
    """An idempotent producer's metadata requests (PID_KICK_S) run until the first confirmation
    and stop there, on both producers; a producer without idempotence never makes them."""
    asked: list[int] = []
    real = KafkaWriter._ask_producer_id

    def counted(self: KafkaWriter, metadata: Any) -> None:
        asked.append(self.messages_confirmed)
        real(self, metadata)

    monkeypatch.setattr(KafkaWriter, "_ask_producer_id", counted)
    if producer != "native":
        monkeypatch.setattr(kafka_runs, "native_producer", lambda: None)
    confirmed: list[tuple[int, int]] = []
    properties = {"bootstrap.servers": broker.bootstrap, "enable.idempotence": "true" if idempotent else "false"}
    config = KafkaWriterConfig.model_validate({"type": "kafka", "topic": "kicks", "properties": properties})
    writer = create_writer(config, lambda scn, idx: confirmed.append((scn, idx)))
    assert isinstance(writer, KafkaRunWriter) == (producer == "native")
    writer.connect()
    try:
        writer.write([Message(b"first", 100, 0)])
        _wait(writer, confirmed, 1)
        writer.write([Message(b"second", 101, 0)])  # serviced: sees the confirmation, stops asking
        _wait(writer, confirmed, 2)
        writer._pid_kick_at = 0.0  # as if the next interval had passed: no request may follow
        writer.write([Message(b"third", 102, 0)])
        _wait(writer, confirmed, 3)
    finally:
        writer.close()
    if idempotent:
        requests = [seen for seen in asked if seen == 0]
        assert 1 <= len(requests) <= kafka.PID_KICKS
        assert asked[: len(requests)] == requests  # every request came before the first confirmation
        assert len(asked) - len(requests) <= 1  # then one call that saw it and stopped, nothing after
    else:
        assert asked == []
