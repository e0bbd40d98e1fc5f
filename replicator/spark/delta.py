"""Current-state tables as Delta Lake tables, updated with MERGE (when delta-spark is present).

Chosen automatically when the ``delta`` Python package and the Delta jars are available
(e.g. ``pip install delta-spark`` and ``--packages io.delta:delta-spark_2.13:<ver>`` with the
Delta SQL extension configured). Tables live in ``<lake>/delta/<OWNER.TABLE>``,
partitioned by ``bucket``; the manifest (schemas, keys, pending buffer, batch id) in
``<lake>/_replicator/manifest.json``.

The fold is the same as for parquet, restricted to the keys a batch changes; its result
is merged on ``_key``. Deleted keys stay as rows with ``_op = 'd'`` (the tombstones that
keep replays from resurrecting them): read through :func:`replicator.spark.read_table`,
or filter ``_op <> 'd'``. Each table commits on its own MERGE, so unlike the parquet
store a reader may see one table of a batch before another. A column rename or a
TRUNCATE rewrites the table (overwrite with the folded rows). Not exercised by the test
suite here: no Delta jars are available on these machines.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from replicator.spark.manifest import Manifest, write_atomic
from replicator.spark.store import ParquetStore, dir_name

log = logging.getLogger("replicator.spark")


class DeltaStore(ParquetStore):
    """Same interface as :class:`ParquetStore`; data in Delta tables."""

    kind = "delta"
    row_level = True  # fold only the stored rows whose keys change (MERGE touches just those)

    def __init__(self, spark: Any, lake: str, keep_snapshots: int = 3):
        super().__init__(spark, lake, keep_snapshots)
        self.meta = self.root / "_replicator" / "manifest.json"
        spark.conf.set("spark.databricks.delta.schema.autoMerge.enabled", "true")  # ADD COLUMN

    def table_path(self, table: str) -> Path:
        """Delta table directory."""
        return self.root / "delta" / dir_name(table)

    def load(self, buckets: int) -> Manifest:
        """The manifest of the last batch, or an empty one."""
        if not self.meta.is_file():
            return Manifest(buckets=buckets)
        return Manifest.from_json(self.meta.read_text(encoding="utf-8"))

    def read_rows(self, table: str, entry: Any, ddl: str, buckets: list[int]) -> Any:
        """Stored rows of ``buckets`` in the layout ``ddl`` describes."""
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        path = self.table_path(table)
        if not (path / "_delta_log").is_dir():
            return None
        df = self.spark.read.format("delta").load(str(path)).where(F.col("bucket").isin(buckets))
        wanted: Any = T._parse_datatype_string(ddl)  # a StructType (private but stable helper)
        have = set(df.columns)
        return df.select(*[F.col(f"`{f.name}`") if f.name in have else F.lit(None).cast(f.dataType).alias(f.name)
                           for f in wanted.fields])

    def write_rows(self, table: str, version: str, df: Any, buckets: list[int], spark_schema: Any,
                   complete: bool = False) -> list[int]:
        """MERGE the folded rows on ``_key`` (overwrite when ``complete``); no bucket versions."""
        from delta.tables import DeltaTable

        path = str(self.table_path(table))
        if complete or not (self.table_path(table) / "_delta_log").is_dir():
            (df.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
               .partitionBy("bucket").save(path))
            return []
        target = DeltaTable.forPath(self.spark, path)
        (target.alias("t").merge(df.alias("s"), "t.bucket = s.bucket AND t._key = s._key")
         .whenMatchedUpdateAll().whenNotMatchedInsertAll().execute())
        return []

    def commit(self, manifest: Manifest) -> None:
        """Record the batch (tables are already committed by their MERGEs)."""
        self.meta.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.meta, manifest.to_json())
        pending = self.root / "_data" / "_pending"
        for old in pending.iterdir() if pending.is_dir() else []:
            if old.name != manifest.pending:
                import shutil

                shutil.rmtree(old, ignore_errors=True)

    def rewrite_manifest(self, manifest: Manifest) -> None:
        """Update the manifest in place."""
        write_atomic(self.meta, manifest.to_json())
