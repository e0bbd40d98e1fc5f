"""``replicator verify`` against a real Kafka topic (tansu on 127.0.0.1): every partition, keyed
or not; a record deleted and a record duplicated (copies of the topic) are found at their position."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from kafka_broker import Broker
from verify_fixtures import check, config_with, generated, replicate, reported

from replicator.redogen.generate import GenerationResult


@pytest.fixture(scope="module")
def redo(tmp_path_factory: pytest.TempPathFactory) -> GenerationResult:
    return generated(tmp_path_factory.mktemp("verify-kafka"), seed=22)


def _records(broker: Broker, topic: str) -> list[tuple[int, bytes | None, bytes]]:
    """(partition, key, value) of every record of ``topic``, each partition in offset order."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "copy",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        parts = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
        consumer.assign([TopicPartition(topic, p, 0) for p in parts])
        out: list[tuple[int, bytes | None, bytes]] = []
        done: set[int] = set()
        while len(done) < len(parts):
            record = consumer.poll(5)
            assert record is not None, f"{topic}: no end of partition within 5 s"
            if record.error() is not None:
                assert record.error().code() == KafkaError._PARTITION_EOF
                done.add(record.partition())
                continue
            out.append((record.partition(), record.key(), record.value()))
        return out
    finally:
        consumer.close()


def _copy(broker: Broker, records: list[tuple[int, bytes | None, bytes]], topic: str) -> None:
    """Produce ``records`` to ``topic``, each to its partition (tansu creates topics with 4)."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for partition, key, value in records:
        producer.produce(topic, value, key, partition=partition)
    assert producer.flush(30) == 0


def _config(
    redo: GenerationResult, broker: Broker, name: str, properties: dict[str, str] | None = None, **writer: Any
) -> Path:
    props = {"bootstrap.servers": broker.bootstrap, "linger.ms": "2", **(properties or {})}
    return config_with(redo, name, {"type": "kafka", "topic": name.split(".")[0], **writer, "properties": props})


def test_a_keyed_topic_a_deleted_and_a_duplicated_record(redo: GenerationResult, broker: Broker) -> None:
    config = _config(redo, broker, "keyed.json", **{"key-by-pk": 1})
    replicate(config)
    records = _records(broker, "keyed")
    assert len({p for p, _, _ in records}) == 4 and all(k for _, k, v in records if b'"schema"' in v)
    clean = check(config)
    assert clean.ok and clean.result.redo_changes == len(records) and len(clean.sink.parts) == 4
    victim = next(n for n in range(len(records) // 3, len(records)) if b'"op":"d"' in records[n][2])
    _copy(broker, records[:victim] + records[victim + 1 :], "minus-one")
    doc = json.loads(records[victim][2])
    deleted = check(config, "--sink", "kafka:minus-one")
    assert deleted.result.counts == {"missing": 1, "duplicated": 0, "differs": 0, "extra": 0}
    assert reported(deleted, "missing") == {(doc["c_scn"], doc["c_idx"], doc["xid"])}
    [d] = deleted.details
    assert d.key == {"ID": doc["payload"][0]["before"]["ID"]} and d.table.startswith("APP.")
    twice = records[: victim + 1] + [records[victim]] + records[victim + 1 :]
    _copy(broker, twice, "plus-one")
    duplicated = check(config, "--sink", "kafka:plus-one")
    assert duplicated.result.counts == {"missing": 0, "duplicated": 1, "differs": 0, "extra": 0}
    [d] = duplicated.details
    assert (d.c_scn, d.c_idx, d.xid) == (doc["c_scn"], doc["c_idx"], doc["xid"])
    partition = records[victim][0]
    assert len(d.sink) == 2 and all(f"topic plus-one partition {partition} offset" in w for w in d.sink)


def test_an_unkeyed_topic_over_every_partition(redo: GenerationResult, broker: Broker) -> None:
    # librdkafka's sticky partitioner may put a short run of unkeyed records in one partition:
    # without it each record takes a random one, so the topic surely spans several.
    config = _config(
        redo,
        broker,
        "unkeyed.json",
        {"sticky.partitioning.linger.ms": "0"},
        **{"topic-per-table": "unkeyed.{owner}.{table}"},
    )
    replicate(config)
    report = check(config)
    assert report.ok, report.text()
    assert len(report.sink.parts) > 4  # the main topic (begin/commit) and one topic per table, 4 partitions each
    per_table = _records(broker, "unkeyed.APP.T00")
    assert len({p for p, _, _ in per_table}) > 1, "the table's records landed in one partition"
