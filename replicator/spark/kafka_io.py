"""confluent-kafka helpers for the Python data source: find offsets, read offset ranges.

End offsets are *probed by fetching* and also asked with ListOffsets; the larger value
wins. Some Kafka-protocol brokers (tansu) answer ListOffsets(latest) with a too-low value,
while the high watermark in fetch responses is right on every broker.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("replicator.spark")

KAFKA_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp, timestampType int"
)


def consumer(props: dict[str, str]) -> Any:
    """A consumer that never joins a group or commits (offsets live in the Spark checkpoint)."""
    from confluent_kafka import Consumer

    conf = {
        "group.id": "replicator-spark",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
        "log.connection.close": False,
        "fetch.wait.max.ms": 50,
        "log_level": 3,
        **props,
    }
    return Consumer(conf)


def partitions(c: Any, topic: str, timeout: float = 10.0) -> list[int]:
    """Partition ids of ``topic`` (an error if the topic does not exist)."""
    md = c.list_topics(topic, timeout=timeout)
    meta = md.topics.get(topic)
    if meta is None or meta.error is not None:
        raise RuntimeError(f"Kafka topic {topic!r}: {meta.error if meta is not None else 'not found'}")
    return sorted(meta.partitions)


def matching_topics(c: Any, pattern: re.Pattern[str], timeout: float = 10.0) -> list[str]:
    """Topics whose whole name matches ``pattern`` (Kafka's internal topics excluded)."""
    md = c.list_topics(timeout=timeout)
    return sorted(t for t in md.topics if not t.startswith("__") and pattern.fullmatch(t))


TP = tuple[str, int]


def end_offsets(c: Any, parts: list[TP], start: dict[TP, int], timeout: float = 5.0) -> dict[TP, int]:
    """Offset after the last record of each (topic, partition) (at least ``start``)."""
    from confluent_kafka import TopicPartition

    out = {tp: start.get(tp, 0) for tp in parts}
    if not parts:
        return out
    for t, p in parts:
        try:
            _, high = c.get_watermark_offsets(TopicPartition(t, p), timeout=timeout)
            out[(t, p)] = max(out[(t, p)], high)
        except Exception as exc:  # noqa: BLE001 - the fetch probe below still answers
            log.debug("ListOffsets of %s[%d] failed: %s", t, p, exc)
    c.assign([TopicPartition(t, p, max(start.get((t, p), 0), 0)) for t, p in parts])
    deadline = time.monotonic() + timeout
    known: set[TP] = set()
    while len(known) < len(parts) and time.monotonic() < deadline:
        c.poll(0.05)  # each fetch response updates the cached high watermark
        for t, p in parts:
            _, high = c.get_watermark_offsets(TopicPartition(t, p), cached=True)
            if high >= 0:
                out[(t, p)] = max(out[(t, p)], high)
                known.add((t, p))
    c.unassign()
    return out


def low_offsets(c: Any, parts: list[TP], timeout: float = 5.0) -> dict[TP, int]:
    """First available offset of each (topic, partition)."""
    from confluent_kafka import TopicPartition

    out = {}
    for t, p in parts:
        try:
            out[(t, p)] = max(0, c.get_watermark_offsets(TopicPartition(t, p), timeout=timeout)[0])
        except Exception:  # noqa: BLE001 - offset 0 then resets to the earliest one
            out[(t, p)] = 0
    return out


def read_range(
    props: dict[str, str],
    topic: str,
    part: int,
    start: int,
    end: int,
    batch_rows: int = 20000,
    stall_timeout: float = 120.0,
    c: Any = None,
) -> Iterator[Any]:
    """Records ``[start, end)`` of one partition as Arrow record batches (Kafka source columns);
    with ``c`` (a :func:`consumer`) that consumer is used and left open, else one of its own."""
    import pyarrow as pa
    from confluent_kafka import KafkaError, TopicPartition

    schema = pa.schema(
        [
            ("key", pa.binary()),
            ("value", pa.binary()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("offset", pa.int64()),
            ("timestamp", pa.timestamp("us", "UTC")),
            ("timestampType", pa.int32()),
        ]
    )
    own = c is None
    c = consumer(props) if own else c
    try:
        c.assign([TopicPartition(topic, part, start)])
        keys: list[Any] = []
        values: list[Any] = []
        offsets: list[int] = []
        stamps: list[Any] = []
        types: list[int] = []
        position, last_progress = start, time.monotonic()
        eof = KafkaError._PARTITION_EOF
        while position < end:
            msgs = c.consume(min(5000, end - position), 0.5)  # many records per call: less Python per record
            got = False
            for msg in msgs:  # once per record: plain local lists, no dict lookups
                err = msg.error()
                if (err is None or err.code() == eof) and (msg.partition() != part or msg.topic() != topic):
                    continue  # a shared consumer's leftover of its previous range
                if err is not None:
                    if err.code() == eof:
                        if msg.offset() >= end:
                            position = end  # the rest of the range holds no records (markers, compaction)
                        continue
                    raise RuntimeError(f"Kafka {topic}[{part}]: {err}")
                offset = msg.offset()
                if offset >= end:
                    position = end
                    break
                got = True
                position = offset + 1
                ts_type, ts = msg.timestamp()
                keys.append(msg.key())
                values.append(msg.value())
                offsets.append(offset)
                stamps.append(ts * 1000 if ts_type else None)
                types.append(ts_type - 1 if ts_type > 1 else 0)
            if got:
                last_progress = time.monotonic()
            elif position < end and time.monotonic() - last_progress > stall_timeout:
                raise RuntimeError(
                    f"Kafka {topic}[{part}]: no record between offsets {position} and {end} for {stall_timeout:.0f}s"
                )
            if len(offsets) >= batch_rows or (position >= end and offsets):
                n = len(offsets)
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array(keys, pa.binary()),
                        pa.array(values, pa.binary()),
                        pa.array([topic] * n, pa.string()),
                        pa.array([part] * n, pa.int32()),
                        pa.array(offsets, pa.int64()),
                        pa.array(stamps, pa.timestamp("us", "UTC")),
                        pa.array(types, pa.int32()),
                    ],
                    schema=schema,
                )
                keys, values, offsets, stamps, types = [], [], [], [], []
    finally:
        if own:
            c.close()
        else:
            c.unassign()
