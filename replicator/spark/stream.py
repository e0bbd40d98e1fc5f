"""The input stream: Kafka records from the native ``kafka`` format or the Python source.

``--source auto`` (the default) uses Spark's own Kafka source when the spark-sql-kafka
jar is on the classpath (``--packages org.apache.spark:spark-sql-kafka-0-10_2.13:<ver>``
or ``--jars``), and the confluent-kafka Python data source otherwise; the choice is
logged. Both produce the same columns, and the records are parsed into events the same
way (:func:`replicator.spark.eventpack.pack_batches`: in ``mapInArrow`` after the native
source, inside the Python source's readers otherwise) and reach the driver as Arrow IPC blobs.
"""

from __future__ import annotations

import logging
from typing import Any

from replicator.errors import ConfigError
from replicator.spark.options import JobOptions

log = logging.getLogger("replicator.spark")
KAFKA_PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"


def kafka_jar_available(spark: Any) -> bool:
    """True when Spark's Kafka connector classes can be loaded."""
    try:
        jvm = spark.sparkContext._jvm
        jvm.java.lang.Class.forName(KAFKA_PROVIDER, False, jvm.Thread.currentThread().getContextClassLoader())
        return True
    except Exception:  # noqa: BLE001 - ClassNotFoundException arrives as a Py4J error; Connect has no JVM
        return False


def choose_source(spark: Any, opts: JobOptions) -> str:
    """``kafka`` or ``python``, as asked or as available (logged)."""
    has_jar = kafka_jar_available(spark)
    if opts.source == "kafka" and not has_jar:
        raise ConfigError(
            "--source kafka: the spark-sql-kafka jar is not on the classpath (add it with "
            "--packages or --jars, or use --source python)",
            30002,
        )
    chosen = opts.source if opts.source != "auto" else ("kafka" if has_jar else "python")
    why = (
        "asked for"
        if opts.source != "auto"
        else ("spark-sql-kafka jar found" if has_jar else "no spark-sql-kafka jar on the classpath")
    )
    log.info(
        "source: %s (%s)",
        "Spark's native kafka format" if chosen == "kafka" else "Python data source (confluent-kafka)",
        why,
    )
    return chosen


def kafka_records(spark: Any, opts: JobOptions, kind: str) -> Any:
    """The streaming DataFrame of raw Kafka records."""
    opts.require_kafka()
    if kind == "python":
        from replicator.spark.source import HINTS, NAME, register

        register(spark)
        reader = spark.readStream.format(NAME).option(HINTS, opts.hints.to_json())
    else:
        reader = spark.readStream.format("kafka").option("failOnDataLoss", "true")
    reader = reader.option("kafka.bootstrap.servers", opts.bootstrap_servers)
    reader = (
        reader.option("subscribePattern", opts.topic_pattern)
        if opts.topic_pattern
        else reader.option("subscribe", opts.topic)
    ).option("startingOffsets", opts.starting_offsets)
    if opts.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(opts.max_offsets_per_trigger))
    for key, value in opts.kafka_properties.items():
        reader = reader.option(f"kafka.{key}", value)
    return reader.load()


def parse_events(records: Any, opts: JobOptions) -> Any:
    """Kafka records -> packed events (:mod:`.eventpack`), with observed metrics named ``replicator``."""
    from pyspark.sql import functions as F

    from replicator.spark.eventpack import PACKED_SCHEMA, pack_batches

    if "events" in records.columns:  # the Python source parsed them already
        events = records
    else:
        hints = opts.hints.to_json()
        events = records.select("key", "value", "partition", "offset", "timestamp").mapInArrow(
            lambda it: pack_batches(it, hints), PACKED_SCHEMA
        )
    return events.observe(
        "replicator",
        F.coalesce(F.sum("rows"), F.lit(0)).alias("events"),
        F.max("max_commit_scn").alias("max_commit_scn"),
        F.coalesce(F.sum("errors"), F.lit(0)).alias("errors"),
    )


def open_events(spark: Any, opts: JobOptions) -> tuple[Any, str]:
    """The parsed event stream and the source kind that feeds it."""
    kind = choose_source(spark, opts)
    return parse_events(kafka_records(spark, opts, kind), opts), kind
