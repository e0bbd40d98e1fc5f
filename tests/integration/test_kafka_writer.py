"""The kafka writer against a real broker (tansu on 127.0.0.1): exactly once, in order, through restarts.

Every test runs on both producers: confluent-kafka's (the fallback) and the native one
(replicator/writers/kafka_runs.py) that the registry builds where the native core is built."""

from __future__ import annotations

import signal
import time
from collections import defaultdict
from typing import Any

import orjson
import pytest
from confluent_kafka import Consumer, TopicPartition
from kafka_broker import Broker

from replicator.config.writer import KafkaWriterConfig
from replicator.errors import RuntimeFailure
from replicator.events import Column, Message, Table
from replicator.writers.kafka import KafkaWriter
from replicator.writers.kafka_runs import KafkaRunWriter, native_producer

WRITERS: dict[str, type[KafkaWriter]] = {"confluent-kafka": KafkaWriter, "native": KafkaRunWriter}
_writer_type: list[type[KafkaWriter]] = [KafkaWriter]  # the class _writer builds (set per test)


@pytest.fixture(autouse=True, params=list(WRITERS))
def writer_type(request: pytest.FixtureRequest) -> type[KafkaWriter]:
    """Run the test with each producer (the native one only where it can run)."""
    if request.param == "native" and native_producer() is None:
        pytest.skip("the native producer needs the native core and confluent-kafka's librdkafka")
    _writer_type[0] = WRITERS[request.param]
    return _writer_type[0]


def _writer(broker: Broker, confirmed: list[tuple[int, int]], **keys: Any) -> KafkaWriter:
    extra = {k: keys.pop(k) for k in ("stall_timeout_s", "close_timeout_s", "max_backoff_s") if k in keys}
    config = KafkaWriterConfig.model_validate(
        {
            "type": "kafka",
            "topic": "cdc",
            "queue-size": 20000,
            "properties": {"bootstrap.servers": broker.bootstrap, "linger.ms": "2"},
            **keys,
        }
    )
    writer = _writer_type[0](config, lambda scn, idx: confirmed.append((scn, idx)), **extra)
    assert isinstance(writer, KafkaRunWriter) == (_writer_type[0] is KafkaRunWriter)
    writer.connect()
    return writer


def _message(n: int) -> Message:
    return Message(data=b"%d" % n, scn=5000 + n // 3, idx=n % 3, tag=b'"ID":%d' % (n % 11), xid=(7 << 48) | n)


def _wait_confirmed(writer: KafkaWriter, confirmed: list[Any], count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(confirmed) < count and time.monotonic() < deadline:
        writer.flush()
        time.sleep(0.01)
    assert len(confirmed) == count, f"{len(confirmed)} of {count} confirmed"


def _consume(broker: Broker, topics: list[str], count: int, timeout: float = 20) -> dict[tuple[str, int], list[Any]]:
    """Every record of ``topics`` from the start: (topic, partition) -> [(key, value)] in offset order."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "verify",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        parts = []
        for topic in topics:
            metadata = consumer.list_topics(topic, timeout=10).topics[topic]
            parts += [TopicPartition(topic, p, 0) for p in metadata.partitions]
        consumer.assign(parts)
        records: dict[tuple[str, int], list[Any]] = defaultdict(list)
        got, deadline = 0, time.monotonic() + timeout
        while got < count and time.monotonic() < deadline:
            record = consumer.poll(0.2)
            if record is None or record.error():
                continue
            records[(record.topic(), record.partition())].append((record.key(), record.value()))
            got += 1
        extra = consumer.poll(0.5)  # nothing beyond the expected count (no duplicates)
        assert extra is None or extra.error(), "more records than produced"
        return records
    finally:
        consumer.close()


def _check(records: dict[tuple[str, int], list[Any]], expected: list[int]) -> None:
    values = [int(v) for part in records.values() for _, v in part]
    assert sorted(values) == expected  # exactly once
    for part in records.values():
        numbers = [int(v) for _, v in part]
        assert numbers == sorted(numbers)  # in order within each partition
        for key, value in part:
            assert key == b'"ID":%d' % (int(value) % 11)  # tag = key: one key, one partition


def test_exactly_once_in_order_per_partition(broker: Broker) -> None:
    confirmed: list[tuple[int, int]] = []
    writer = _writer(broker, confirmed)
    messages = [_message(n) for n in range(3000)]
    for first in range(0, 3000, 500):
        writer.write(messages[first : first + 500])
    _wait_confirmed(writer, confirmed, 3000, 30)
    writer.close()
    assert confirmed == [(m.scn, m.idx) for m in messages]
    _check(_consume(broker, ["cdc"], 3000), list(range(3000)))


@pytest.mark.slow
def test_broker_killed_and_restarted_mid_stream_loses_nothing(broker: Broker) -> None:
    confirmed: list[tuple[int, int]] = []
    writer = _writer(broker, confirmed, stall_timeout_s=2, max_backoff_s=2)
    writer.write([_message(n) for n in range(1000)])
    _wait_confirmed(writer, confirmed, 1000, 30)
    _check(_consume(broker, ["cdc"], 1000), list(range(1000)))
    # Mid-stream: the broker freezes with messages in flight, dies, and comes back empty.
    broker.signal(signal.SIGSTOP)
    writer.write([_message(n) for n in range(1000, 2000)])
    time.sleep(0.3)
    broker.kill()
    writer.write([_message(n) for n in range(2000, 2500)])  # produced while the broker is down
    time.sleep(1.0)
    broker.start()
    _wait_confirmed(writer, confirmed, 2500, 60)
    assert confirmed == [(m.scn, m.idx) for m in map(_message, range(2500))]
    assert writer.rebuilds >= 1  # the outage replaced the producer: its id died with the broker
    _check(_consume(broker, ["cdc"], 1500), list(range(1000, 2500)))  # the new broker holds the rest
    # Killed while idle: the producer id it knew is gone too; delivery resumes after the restart.
    broker.kill()
    writer.write([_message(n) for n in range(2500, 2600)])
    time.sleep(0.5)
    broker.start()
    _wait_confirmed(writer, confirmed, 2600, 60)
    writer.close()
    _check(_consume(broker, ["cdc"], 100), list(range(2500, 2600)))
    assert writer.rebuilds >= 1


def test_topic_per_table_and_key_by_primary_key(broker: Broker) -> None:
    def table(name: str) -> Table:
        columns = [Column("ID", 2, 22, -1, -1, 0, 0, False, 1, key=True), Column("V", 1, 10, -1, -1, 1, 873, True, 2)]
        return Table(obj=1, data_obj=1, owner="APP", name=name, columns=columns, key_columns=(0,))

    tables = [table("ORDERS"), table("ITEM$S")]
    confirmed: list[tuple[int, int]] = []
    writer = _writer(broker, confirmed, **{"topic-per-table": "cdc.{owner}.{table}", "key-by-pk": 1})
    messages = []
    for n in range(400):
        op = "d" if n % 5 == 4 else "c"
        image = {"ID": n % 13, "V": f"v{n}"}
        element = {
            "op": op,
            "schema": {"owner": "APP", "table": tables[n % 2].name},
            ("before" if op == "d" else "after"): image,
        }
        data = orjson.dumps({"c_scn": 9000 + n, "c_idx": 1, "n": n, "payload": [element]})
        messages.append(Message(data=data, scn=9000 + n, idx=0, table=tables[n % 2]))
    messages.append(Message(data=b'{"c_scn":9400,"c_idx":1,"payload":[{"op":"commit"}]}', scn=9400, idx=0))
    writer.write(messages)
    _wait_confirmed(writer, confirmed, 401, 30)
    writer.close()
    records = _consume(broker, ["cdc.APP.ORDERS", "cdc.APP.ITEM_S", "cdc"], 401)
    assert sum(len(v) for (topic, _), v in records.items() if topic == "cdc") == 1
    for (topic, _), part in records.items():
        numbers = [orjson.loads(value).get("n", -1) for _, value in part]
        assert numbers == sorted(numbers)
        for key, value in part:
            n = orjson.loads(value).get("n")
            if n is not None:
                assert topic == ("cdc.APP.ORDERS" if n % 2 == 0 else "cdc.APP.ITEM_S")
                assert key == b'"ID":%d' % (n % 13)


def test_message_larger_than_the_limit_names_the_transaction(broker: Broker) -> None:
    writer = _writer(broker, [], **{"max-message-mb": 1})
    big = Message(data=b"x" * (2 * 1024 * 1024), scn=77, idx=0, xid=(0x12 << 48) | (3 << 32) | 0x456)
    with pytest.raises(RuntimeFailure) as info:
        writer.write([big])
    assert info.value.code == 10092
    assert "transaction 0x0012.003.00000456" in info.value.message and "2097152 bytes" in info.value.message


def test_debezium_tombstone_and_heartbeat_topic(broker: Broker) -> None:
    """issue 16: a DELETE is followed by a tombstone (same key, null value) in the table's
    topic and partition; a heartbeat goes to __debezium-heartbeat.<source name>."""
    from replicator.events import OP_DELETE, Checkpoint, RowChange, Transaction
    from replicator.formats.base import FormatOptions
    from replicator.formats.registry import create_format
    from replicator.values.number import encode_number

    columns = [Column("ID", 2, 22, 10, 0, 0, 0, False, 1, key=True), Column("V", 1, 10, -1, -1, 1, 873, True, 2)]
    table = Table(obj=7, data_obj=7, owner="APP", name="ORDERS", columns=columns, key_columns=(0,))
    fmt = create_format(FormatOptions(type="debezium-envelope", database="SRC", flags=0x1000))
    changes = [
        RowChange(
            op=OP_DELETE,
            obj=7,
            data_obj=7,
            table=table,
            before={0: encode_number(n), 1: b"v"},
            after=None,
            scn=7000 + n,
            time=1700000000,
            bdba=0,
            slot=n,
        )
        for n in range(3)
    ]
    messages = fmt.transaction(
        Transaction(
            xid=(1 << 48) | 5,
            begin_scn=6999,
            begin_time=1700000000,
            commit_scn=7010,
            commit_time=1700000001,
            changes=changes,
        )
    )
    messages += fmt.checkpoint(Checkpoint(scn=7020, time=1700000002, seq=1, offset=512))
    confirmed: list[tuple[int, int]] = []
    writer = _writer(broker, confirmed, **{"topic-per-table": "dbz.{owner}.{table}"})
    writer.write(messages)
    _wait_confirmed(writer, confirmed, len(messages), 30)
    writer.close()
    records = _consume(broker, ["dbz.APP.ORDERS", "cdc", "__debezium-heartbeat.SRC"], len(messages))
    table_records = [r for (topic, _), part in records.items() if topic == "dbz.APP.ORDERS" for r in part]
    assert len(table_records) == 6
    for n in range(3):
        [part] = [
            p
            for (topic, _), p in records.items()
            if topic == "dbz.APP.ORDERS" and any(orjson.loads(k)["payload"] == {"ID": n} for k, _ in p)
        ]
        delete, tombstone = [r for r in part if orjson.loads(r[0])["payload"] == {"ID": n}]  # offset order
        assert orjson.loads(delete[1])["payload"]["op"] == "d" and tombstone[1] is None
    [(key, value)] = [r for (topic, _), part in records.items() if topic == "__debezium-heartbeat.SRC" for r in part]
    assert orjson.loads(key)["payload"] == {"serverName": "SRC"} and set(orjson.loads(value)["payload"]) == {"ts_ms"}
