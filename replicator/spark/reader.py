"""Reading the lake with Spark, and the table list (the Spark-free API is :mod:`.lake_read`).

The tables are ordinary Delta Lake tables (``<lake>/tables/<OWNER.TABLE>``), holding the live
rows only (deleted keys are kept apart, under ``_replicator/tombstones``): any Delta reader
works -- Spark with delta-spark (``spark.read.format("delta")``), delta-rs / ``deltalake``,
DuckDB (``delta_scan``), Polars (``read_delta``), Trino.
"""

from __future__ import annotations

from typing import Any

from replicator.errors import ConfigError
from replicator.spark.lake_read import LakeReader
from replicator.spark.lakestore import DeltaLake


def read_arrow(
    lake: str, table: str, *, with_metadata: bool = False, storage_options: dict[str, str] | None = None
) -> Any:
    """Current rows of ``OWNER.TABLE`` as a pyarrow Table (None before its first commit)."""
    return LakeReader(lake, storage_options).current_rows(table, with_metadata=with_metadata)


def read_table(spark: Any, lake: str, table: str, *, with_metadata: bool = False) -> Any:
    """Current rows of ``OWNER.TABLE`` as a Spark DataFrame (data columns only unless ``with_metadata``).

    Through Spark's Delta reader when delta-spark is present, else from the Delta table's
    current files (one snapshot) with Spark's parquet reader.
    """
    from pyspark.sql import functions as F

    from replicator.spark.job import delta_spark_available

    store = DeltaLake(lake)
    uri = store.table_uri(table)
    dt = store.open_table(uri)
    if dt is None:
        raise ConfigError(f"{lake}: no table {table} (known: {', '.join(sorted(list_tables(lake))) or 'none'})", 30002)
    if delta_spark_available(spark):
        df = spark.read.format("delta").load(uri)
    else:
        files = dt.file_uris()
        df = (
            spark.read.option("basePath", uri).parquet(*files)
            if files
            else spark.createDataFrame(dt.to_pyarrow_table())
        )
    if with_metadata:
        return df
    return df.select(*[F.col(f"`{c}`") for c in df.columns if not c.startswith("_")])


def read_rows_arrow(lake: str, table: str) -> list[dict[str, Any]]:
    """Current rows of a table as dicts (with metadata), read with delta-rs; [] before its first commit."""
    rows = read_arrow(lake, table, with_metadata=True)
    return [] if rows is None else rows.to_pylist()


def list_tables(lake: str) -> dict[str, dict[str, Any]]:
    """Table name -> key columns, key origin and column count, from the job state."""
    st = DeltaLake(lake).load_state()
    if st.batch < 0:
        raise ConfigError(f"{lake}: no committed batch yet", 30002)
    return {
        name: {"key": s.key, "key_origin": s.key_origin, "columns": len(s.columns), "buckets": s.buckets}
        for name, s in sorted(st.tables.items())
    }
