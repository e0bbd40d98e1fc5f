"""The kafka writer's pure parts with a fake producer: confirmation order, failures, routing."""

from __future__ import annotations

from typing import Any, ClassVar

import orjson
import pytest
from confluent_kafka import KafkaError

from replicator.config.writer import KafkaWriterConfig
from replicator.errors import RuntimeFailure
from replicator.events import Column, Message, Table
from replicator.proto import olr_pb2 as pb
from replicator.writers import kafka as kafka_module
from replicator.writers.kafka import KafkaWriter
from replicator.writers.kafka_routing import Router, describe


class FakeProducer:
    """Records produce calls; poll() delivers the reports the test queued."""

    instances: ClassVar[list[FakeProducer]] = []

    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.produced: list[tuple[str, bytes, bytes | None, Any]] = []
        self.reports: list[tuple[int, KafkaError | None]] = []
        FakeProducer.instances.append(self)

    def produce(self, topic: str, value: bytes, key: bytes | None, headers: Any, on_delivery: Any) -> None:
        self.produced.append((topic, value, key, on_delivery))

    def poll(self, timeout: float) -> int:
        reports, self.reports = self.reports, []
        for index, error in reports:
            self.produced[index][3](error, None)
        return len(reports)

    def purge(self, *args: Any) -> None:
        """Nothing is really in flight."""

    def flush(self, timeout: float) -> int:
        return 0


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> type[FakeProducer]:
    FakeProducer.instances = []
    monkeypatch.setattr(kafka_module, "Producer", FakeProducer)
    return FakeProducer


def _writer(confirmed: list[tuple[int, int]], **keys: Any) -> KafkaWriter:
    config = KafkaWriterConfig.model_validate(
        {"type": "kafka", "topic": "t", "queue-size": 4, "properties": {"bootstrap.servers": "127.0.0.1:1"}, **keys}
    )
    writer = KafkaWriter(config, lambda scn, idx: confirmed.append((scn, idx)), max_backoff_s=0.0)
    writer.connect()
    return writer


def test_defaults_and_user_properties(fake: type[FakeProducer]) -> None:
    writer = _writer([], properties={"bootstrap.servers": "h:1", "acks": "1", "client.id": "x"})
    conf = fake.instances[0].conf
    assert conf["enable.idempotence"] == "true" and conf["acks"] == "1" and conf["message.timeout.ms"] == "0"
    assert conf["client.id"] == "OpenLogReplicator" and conf["message.max.bytes"] == str(100 * 1024 * 1024)
    assert writer.producer_config()["queue.buffering.max.messages"] == "100000"


def test_missing_bootstrap_servers(fake: type[FakeProducer]) -> None:
    config = KafkaWriterConfig.model_validate({"type": "kafka", "topic": "t"})
    with pytest.raises(RuntimeFailure) as info:
        KafkaWriter(config, lambda s, i: None).connect()
    assert info.value.code == 10058


def test_confirms_in_order_from_delivery_reports(fake: type[FakeProducer]) -> None:
    confirmed: list[tuple[int, int]] = []
    writer = _writer(confirmed)
    writer.show_checkpoints = False
    writer.write([Message(b"a", 1, 0), Message(b"chk", 1, 1, checkpoint=True), Message(b"b", 2, 0)])
    producer = fake.instances[0]
    assert [p[1] for p in producer.produced] == [b"a", b"b"]  # the checkpoint is not sent
    producer.reports = [(1, None)]
    writer.flush()
    assert confirmed == []  # b is delivered, but a is not yet
    producer.reports = [(0, None)]
    writer.flush()
    assert confirmed == [(1, 0), (1, 1), (2, 0)]


def test_retriable_failure_rebuilds_and_resends_in_order(fake: type[FakeProducer]) -> None:
    confirmed: list[tuple[int, int]] = []
    writer = _writer(confirmed)
    writer.write([Message(b"a", 1, 0), Message(b"b", 1, 1)])
    old = fake.instances[0]
    old.reports = [(0, KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART)), (1, KafkaError(KafkaError._MSG_TIMED_OUT))]
    writer.flush()
    assert len(fake.instances) == 2 and writer.rebuilds == 1
    new = fake.instances[1]
    assert [p[1] for p in new.produced] == [b"a", b"b"]
    new.reports = [(0, None), (1, None)]
    writer.flush()
    assert confirmed == [(1, 0), (1, 1)]


def test_too_large_names_the_transaction(fake: type[FakeProducer]) -> None:
    writer = _writer([])
    xid = (0x1 << 48) | (0x2 << 32) | 0x3
    writer.write([Message(b"x" * 10, 9, 4, xid=xid)])
    fake.instances[0].reports = [(0, KafkaError(KafkaError.MSG_SIZE_TOO_LARGE))]
    with pytest.raises(RuntimeFailure) as info:
        writer.flush()
    assert info.value.code == 10092 and "transaction 0x0001.002.00000003 (scn 9, idx 5)" in info.value.message


def test_queue_size_applies_backpressure(fake: type[FakeProducer]) -> None:
    confirmed: list[tuple[int, int]] = []
    writer = _writer(confirmed, **{"poll-interval-us": 100})
    producer = fake.instances[0]
    original = producer.poll

    def poll(timeout: float) -> int:  # the "broker" delivers everything produced so far
        producer.reports = [(i, None) for i in range(len(producer.produced)) if (i, None) not in done]
        done.update(producer.reports)
        return original(timeout)

    done: set[tuple[int, None]] = set()
    producer.poll = poll  # type: ignore[method-assign]
    writer.write([Message(b"%d" % n, 1, n) for n in range(10)])  # queue-size is 4
    writer.flush()
    assert confirmed == [(1, n) for n in range(10)]


def test_durable_position_bounds_the_messages_a_crash_resends(fake: type[FakeProducer]) -> None:
    """With ``persist_confirmed`` set, the saved position is never more than queue-size +
    DURABLE_LAG - 1 produced messages behind (what a SIGKILL can re-send)."""
    confirmed: list[tuple[int, int]] = []
    writer = _writer(confirmed, **{"poll-interval-us": 100})
    producer = fake.instances[0]
    saved = [0]  # messages covered by the last save
    beyond: list[int] = []

    def persist() -> bool:  # runs on the writer's saver thread, as the daemon's does
        saved[0] = len(confirmed)
        return True

    original_produce, original_poll = producer.produce, producer.poll

    def produce(*args: Any, **kwargs: Any) -> None:
        original_produce(*args, **kwargs)
        beyond.append(len(producer.produced) - saved[0])

    def poll(timeout: float) -> int:  # the "broker" acknowledges everything produced so far
        producer.reports = [(i, None) for i in range(acked[0], len(producer.produced))]
        acked[0] = len(producer.produced)
        return original_poll(timeout)

    acked = [0]
    producer.produce, producer.poll = produce, poll  # type: ignore[method-assign]
    writer.persist_confirmed = persist
    total = 3 * kafka_module.DURABLE_LAG
    writer.write([Message(b"%d" % n, 1, n) for n in range(total)])  # queue-size is 4
    writer.flush()
    assert len(confirmed) == total and writer.saves >= 2
    writer.close()
    assert max(beyond) <= 4 + kafka_module.DURABLE_LAG - 1
    assert saved[0] == total  # close() saves what was confirmed after the last save


def _table() -> Table:
    columns = [Column("ID", 2, 22, -1, -1, 0, 0, False, 1, key=True), Column("NAME", 1, 9, -1, -1, 1, 873, True, 2)]
    return Table(obj=1, data_obj=1, owner="HR", name="EMP#1", columns=columns, key_columns=(0,))


def test_router_topics_and_keys() -> None:
    table = _table()
    router = Router("main", "cdc.{owner}.{table}", True)
    row = Message(
        orjson.dumps({"payload": [{"op": "c", "after": {"ID": 12345678901234567890, "NAME": "x"}}]}), 1, 0, table=table
    )
    assert router.topic_for(row) == "cdc.HR.EMP_1" and router.topic_for(Message(b"{}", 1, 1)) == "main"
    assert router.key_for(row) == b'"ID":12345678901234567890'
    deleted = Message(b'{"payload":[{"op":"d","before":{"ID":1.50}}]}', 1, 0, table=table)
    assert router.key_for(deleted) == b'"ID":1.50'  # number text kept exactly
    assert router.key_for(Message(b"{}", 1, 0, table=table, tag=b"T")) == b"T"  # the filter tag wins
    response = pb.RedoResponse(code=pb.PAYLOAD)
    response.payload.add(op=pb.UPDATE).after.add(name="ID", value_int=7)
    assert router.key_for(Message(response.SerializeToString(), 1, 0, table=table)) == b'"ID":7'
    assert Router("main", None, False).key_for(row) is None
    assert describe(row) == "message (scn 1, idx 1, table HR.EMP#1)"
