"""Where a batch's executor-side steps (:mod:`.distfold`) run: Spark, or this process.

:class:`SparkBatch` runs them on the micro-batch DataFrame (persisted in the executors for the
two passes): the projection is one Spark job whose result the driver collects, the routing and
the fold one more (``mapInArrow`` -> ``repartition(tbl, bucket)`` -> ``mapInArrow``) whose
result is the list of actions. :class:`LocalBatch` runs the same functions in this process over
an Arrow table of events (the batch logic without Spark, for tests and tools).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from replicator.spark.distfold import (
    ACTIONS_SCHEMA,
    ROUTED_SCHEMA,
    BatchTask,
    actions_arrow_schema,
    fold_partition,
    project,
    read_pending,
    rewrite_groups,
    route,
    routed_arrow_schema,
)
from replicator.spark.eventpack import PACKED_SCHEMA, pack, unpack


class BatchExecutors(Protocol):
    """The executor side of one batch."""

    def project(self, keys: dict[str, list[str] | None], resolver: Any) -> Any:
        """The batch's projection (:func:`.distfold.project`), collected as one Arrow table."""

    def fold(self, bt: BatchTask) -> Any:
        """Route and fold the batch; the actions (:data:`.distfold.ACTIONS_SCHEMA`) as an Arrow table."""

    def close(self) -> None:
        """Release what the batch holds in the executors."""


class SparkBatch:
    """A micro-batch DataFrame of packed events, plus the pending files of the batch before."""

    def __init__(
        self,
        spark: Any,
        batch: Any,
        pending: list[str],
        pending_uri: str,
        storage_options: dict[str, str] | None,
        partitions: int,
    ):
        from pyspark import StorageLevel

        if pending:
            paths = spark.createDataFrame([(p,) for p in pending], "path string")
            batch = batch.unionByName(
                paths.mapInArrow(lambda it: read_pending(it, pending_uri, storage_options), PACKED_SCHEMA)
            )
        self.df = batch.persist(StorageLevel.MEMORY_AND_DISK)
        self.partitions = partitions or max(2, 2 * spark.sparkContext.defaultParallelism)

    def project(self, keys: dict[str, list[str] | None], resolver: Any) -> Any:
        return unpack(self.df.mapInArrow(lambda it: project(it, keys, resolver), PACKED_SCHEMA).toArrow())

    def fold(self, bt: BatchTask) -> Any:
        routed = self.df.mapInArrow(lambda it: route(it, bt), ROUTED_SCHEMA)
        extra = rewrite_groups(bt)
        if extra:
            routed = routed.unionByName(self.df.sparkSession.createDataFrame(extra, ROUTED_SCHEMA))
        return (
            routed.repartition(self.partitions, "tbl", "bucket")
            .mapInArrow(lambda it: fold_partition(it, bt), ACTIONS_SCHEMA)
            .toArrow()
        )

    def close(self) -> None:
        self.df.unpersist()


class LocalBatch:
    """The same steps over an Arrow table of events, in this process."""

    def __init__(self, events: Any, pending: list[str], pending_uri: str, storage_options: dict[str, str] | None):
        import pyarrow as pa

        self.packed = [pack(b) for b in events.combine_chunks().to_batches() if b.num_rows]
        if pending:
            paths = pa.RecordBatch.from_pydict({"path": pending})
            self.packed += list(read_pending(iter([paths]), pending_uri, storage_options))

    def _input(self) -> Iterator[Any]:
        return iter(self.packed)

    def project(self, keys: dict[str, list[str] | None], resolver: Any) -> Any:
        import pyarrow as pa

        return unpack(
            pa.Table.from_batches(list(project(self._input(), keys, resolver)))
            if self.packed
            else pa.table({"events": pa.array([], pa.binary())})
        )

    def fold(self, bt: BatchTask) -> Any:
        import pyarrow as pa

        extra = rewrite_groups(bt)
        routed = [
            *route(self._input(), bt),
            *(
                [
                    pa.RecordBatch.from_pylist(
                        [dict(zip(("tbl", "bucket", "rows", "events"), r)) for r in extra], schema=routed_arrow_schema()
                    )
                ]
                if extra
                else []
            ),
        ]
        return pa.Table.from_batches(list(fold_partition(iter(routed), bt)), schema=actions_arrow_schema())

    def close(self) -> None:
        self.packed = []
