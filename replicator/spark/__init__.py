"""The Spark consumer: the replicator's Kafka topic -> analytic tables as Delta Lake tables.

A PySpark Structured Streaming job (``replicator spark run``) reads the change stream
(OpenLogReplicator JSON or Debezium), assembles whole transactions, and in each
micro-batch appends a change log and folds the changes into current-state tables, in
commit order and idempotently: the executors fold and write, the driver decides and
commits. Layout of the package:

* :mod:`.options`, :mod:`.keys`   job options, producer format facts, row keys
* :mod:`.parse`, :mod:`.debezium`, :mod:`.timeparse`   messages -> normalized events
* :mod:`.source`, :mod:`.kafka_io`   a Python data source reading Kafka with confluent-kafka
* :mod:`.stream`    picks the native ``kafka`` format or the Python source
* :mod:`.coltypes`, :mod:`.tableschema`, :mod:`.ddl`   Oracle columns -> Spark columns, DDL
* :mod:`.assemble`, :mod:`.tablefold`, :mod:`.arrowconv`   transactions, fold per key, typed Arrow
* :mod:`.layout`, :mod:`.distfold`, :mod:`.executors`   buckets and files; what the executors run
* :mod:`.lakestore`, :mod:`.state`, :mod:`.mor`   Delta tables committed with delta-rs, job state, merge-on-read
* :mod:`.apply`, :mod:`.metrics`, :mod:`.job`, :mod:`.cli`, :mod:`.housekeeping`
* :mod:`.lake_read`, :mod:`.reader`   reading the lake (without Spark; with Spark)
* :mod:`.bench`, :mod:`.scalebench`, :mod:`.standalone`   benchmarks; a standalone cluster on 127.0.0.1

See docs/spark.md.

PySpark is an optional dependency (``pip install 'replicator[spark]'``); nothing here is
imported by the rest of the replicator.
"""

from __future__ import annotations

__all__ = ["read_table"]


def read_table(spark, lake: str, table: str, *, with_metadata: bool = False):  # type: ignore[no-untyped-def]
    """The current state of ``OWNER.TABLE`` from a lake written by the job (a DataFrame)."""
    from replicator.spark.reader import read_table as _read

    return _read(spark, lake, table, with_metadata=with_metadata)
