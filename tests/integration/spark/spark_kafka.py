"""Kafka helpers of the Spark tests (a unique module name: ``conftest`` is ambiguous when
several test folders are collected in one run)."""

from __future__ import annotations


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    """Create ``topic`` with ``partitions`` partitions."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(10)


def produce_lines(
    bootstrap: str, topic: str, lines: list[tuple[bytes | None, bytes]], partition: int | None = None
) -> None:
    """Produce (key, value) pairs in order."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for key, value in lines:
        if partition is None:
            producer.produce(topic, value=value, key=key)
        else:
            producer.produce(topic, value=value, key=key, partition=partition)
    assert producer.flush(30) == 0
