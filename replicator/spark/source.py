"""A PySpark Python data source reading Kafka with confluent-kafka (``replicator_kafka``).

Used when Spark's own ``kafka`` format (the spark-sql-kafka jar) is not on the classpath.
Rows have the native format's columns (key, value, topic, partition, offset, timestamp,
timestampType), so the rest of the job does not care which source ran.

Offsets are ``{"topics": {T: {"<partition>": next offset}}}``; Spark keeps them in
its checkpoint (offset log + commit log), so a restarted query resumes exactly where the
last committed batch ended and re-reads the same range for a batch it had not committed.
Options (Spark lower-cases option names): ``kafka.bootstrap.servers``, ``subscribe`` (topics,
comma-separated) or ``subscribePattern`` (a regular expression; new topics are picked up
from their first offset), ``startingOffsets`` (earliest | latest), ``maxOffsetsPerTrigger``, and any other
``kafka.<librdkafka property>``, and ``replicator.hints`` (the job's format hints as JSON:
the rows are then parsed events packed as Arrow IPC blobs, :func:`replicator.spark.eventpack.pack_batches`,
made in the worker that read them). Supports ``Trigger.AvailableNow``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from replicator.spark import kafka_io

NAME = "replicator_kafka"
# Records per task: the ranges of several partitions share a task up to this many, and a larger
# range is split. Each task costs the JVM and a Python worker a fixed amount (and the first batch
# a worker process per task slot, with its imports): a 15k-record batch of three partitions ran
# at 0.30 CPU-s per 1,000 rows as three tasks and 0.25 as one.
TASK_ROWS = 50_000
TASK_ROWS_OPTION = "replicator.taskrecords"  # option (Spark lower-cases option names)
HINTS = "replicator.hints"  # option: parse the records into events (the job's format hints, JSON)


Range = tuple[str, int, int, int]  # topic, partition, start, end


class KafkaRanges(InputPartition):
    """Offsets ``[start, end)`` of one or more Kafka topic partitions, read one after the other by one task."""

    def __init__(self, ranges: list[Range]):
        super().__init__(tuple(ranges))
        self.ranges = ranges


TP = tuple[str, int]


def _props(options: dict[str, str]) -> dict[str, str]:
    props = {k[len("kafka.") :]: v for k, v in options.items() if k.startswith("kafka.")}
    if "bootstrap.servers" not in props:
        raise ValueError(f"{NAME}: option kafka.bootstrap.servers is required")
    return props


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batch planning on the driver side; :meth:`read` runs in the executors."""

    def __init__(self, options: dict[str, str]):
        self.props = _props(options)
        self.topics = [t.strip() for t in options.get("subscribe", "").split(",") if t.strip()]
        pattern = options.get("subscribepattern", "")
        self.pattern = re.compile(pattern) if pattern else None
        if bool(self.topics) == bool(self.pattern):
            raise ValueError(f"{NAME}: give exactly one of the options subscribe (topics) and subscribePattern")
        self.starting = options.get("startingoffsets", "earliest")
        self.max_rows = int(options.get("maxoffsetspertrigger", "0") or 0)
        self.hints = options.get(HINTS)
        self.task_rows = max(1, int(options.get(TASK_ROWS_OPTION, "") or TASK_ROWS))
        self._consumer: Any = None
        self._target: dict[TP, int] | None = None  # Trigger.AvailableNow end

    def _c(self) -> Any:
        if self._consumer is None:
            self._consumer = kafka_io.consumer(self.props)
        return self._consumer

    def _parts(self) -> list[TP]:
        topics = self.topics or kafka_io.matching_topics(self._c(), self.pattern)  # type: ignore[arg-type]
        return [(t, p) for t in topics for p in kafka_io.partitions(self._c(), t)]

    @staticmethod
    def _offsets(offset: dict[str, Any]) -> dict[TP, int]:
        return {(t, int(p)): int(o) for t, parts in offset.get("topics", {}).items() for p, o in parts.items()}

    @staticmethod
    def _wrap(offsets: dict[TP, int]) -> dict[str, Any]:
        out: dict[str, dict[str, int]] = {}
        for (t, p), o in sorted(offsets.items()):
            out.setdefault(t, {})[str(p)] = o
        return {"topics": out}

    def initialOffset(self) -> dict[str, Any]:
        """Earliest (or latest) offsets of every partition."""
        parts = self._parts()
        low = kafka_io.low_offsets(self._c(), parts)
        if self.starting == "latest":
            return self._wrap(kafka_io.end_offsets(self._c(), parts, low))
        return self._wrap(low)

    def getDefaultReadLimit(self) -> ReadLimit:
        """``maxOffsetsPerTrigger`` as a row limit."""
        return ReadMaxRows(self.max_rows) if self.max_rows > 0 else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Remember today's end offsets; the query stops there."""
        self._target = kafka_io.end_offsets(self._c(), self._parts(), {})

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """End offsets for the next batch, spread fairly when a row limit applies."""
        begin = self._offsets(start)
        parts = self._parts()
        begin.update({tp: 0 for tp in parts if tp not in begin})  # a new partition (or topic) starts at 0
        if self._target is not None:
            end = {tp: max(begin[tp], self._target.get(tp, begin[tp])) for tp in begin}
        else:
            end = kafka_io.end_offsets(self._c(), parts, begin)
            end.update({tp: o for tp, o in begin.items() if tp not in end})
        if isinstance(limit, ReadMaxRows):
            end = _limit(begin, end, limit.max_rows)
        return self._wrap(end)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[KafkaRanges]:
        """Tasks of up to ``task_rows`` records: small ranges of several partitions together, large ones split."""
        return _tasks(self._offsets(start), self._offsets(end), self.task_rows)

    def read(self, partition: KafkaRanges) -> Iterator[Any]:  # type: ignore[override]
        """The records of a task's ranges (runs in a Python worker), with one consumer."""
        c = kafka_io.consumer(self.props)
        try:
            for topic, part, start, end in partition.ranges:
                records = kafka_io.read_range(self.props, topic, part, start, end, c=c)
                if self.hints is None:
                    yield from records
                else:  # parsed where they are read: no second Python worker, no map columns through the JVM twice
                    from replicator.spark.eventpack import pack_batches

                    yield from pack_batches(records, self.hints)
        finally:
            c.close()

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: offsets live in the Spark checkpoint, not in Kafka."""

    def stop(self) -> None:
        """Close the planning consumer."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


def _tasks(begin: dict[TP, int], stop: dict[TP, int], task_rows: int) -> list[KafkaRanges]:
    """The ranges ``begin..stop`` packed in order into as few tasks of at most ``task_rows`` records
    as hold them, of equal size (a range is cut where a task is full)."""
    total = sum(max(0, e - begin.get(tp, 0)) for tp, e in stop.items())
    if total:
        count = -(-total // task_rows)
        task_rows = -(-total // count)  # equal shares: the tasks run side by side
    tasks: list[list[Range]] = []
    size = task_rows  # records in the last task: start a new one first
    for (t, p), e in sorted(stop.items()):
        s = begin.get((t, p), 0)
        while s < e:
            if size >= task_rows:
                tasks.append([])
                size = 0
            n = min(e - s, task_rows - size)
            tasks[-1].append((t, p, s, s + n))
            size, s = size + n, s + n
    return [KafkaRanges(ranges) for ranges in tasks]


def _limit(begin: dict[TP, int], end: dict[TP, int], max_rows: int) -> dict[TP, int]:
    """Cap the total range at ``max_rows``, in proportion to what each partition has."""
    avail = {tp: end[tp] - begin.get(tp, 0) for tp in end}
    total = sum(avail.values())
    if total <= max_rows:
        return end
    out = {}
    for tp, n in avail.items():
        share = max(1, n * max_rows // total) if n else 0
        out[tp] = begin.get(tp, 0) + min(n, share)
    return out


class KafkaDataSource(DataSource):
    """``spark.readStream.format("replicator_kafka")`` (register it first)."""

    @classmethod
    def name(cls) -> str:
        """The format name."""
        return NAME

    def schema(self) -> Any:
        """The native Kafka source's columns, or packed parsed events with the ``replicator.hints`` option."""
        if HINTS in self.options:
            from replicator.spark.eventpack import PACKED_SCHEMA

            return PACKED_SCHEMA
        return kafka_io.KAFKA_SCHEMA

    def streamReader(self, schema: Any) -> KafkaStreamReader:
        """The micro-batch reader."""
        return KafkaStreamReader(dict(self.options))


def register(spark: Any) -> None:
    """Make ``format("replicator_kafka")`` available in ``spark``."""
    spark.dataSource.register(KafkaDataSource)
