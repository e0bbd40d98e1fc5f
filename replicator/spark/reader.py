"""Reading the lake the job writes: current-state tables and the table list.

:func:`read_table` resolves the ``tables`` link once, so every table read through it
comes from one snapshot (one committed batch), even while the job keeps committing.
Plain ``spark.read.parquet("<lake>/tables/OWNER.TABLE")`` works too; it then also shows
the metadata columns (``_key``, ``_commit_scn``...) and the ``bucket`` partition column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replicator.errors import ConfigError
from replicator.spark.manifest import Manifest
from replicator.spark.store import dir_name


def snapshot_dir(lake: str) -> Path:
    """The directory of the current snapshot (``<lake>/_snapshots/<id>``)."""
    link = Path(lake) / "tables"
    if link.is_symlink():
        return link.resolve().parent
    delta_manifest = Path(lake) / "_replicator" / "manifest.json"
    if delta_manifest.is_file():
        return delta_manifest.parent
    raise ConfigError(f"{lake}: no committed batch yet (no tables link)", 30002)


def manifest(lake: str) -> Manifest:
    """The manifest of the current snapshot."""
    return Manifest.from_json((snapshot_dir(lake) / "manifest.json").read_text(encoding="utf-8"))


def read_table(spark: Any, lake: str, table: str, *, with_metadata: bool = False) -> Any:
    """Current rows of ``OWNER.TABLE`` (data columns only unless ``with_metadata``)."""
    from pyspark.sql import functions as F

    from replicator.spark.tableschema import METADATA

    snap = snapshot_dir(lake)
    m = Manifest.from_json((snap / "manifest.json").read_text(encoding="utf-8"))
    entry = m.tables.get(table)
    if entry is None:
        raise ConfigError(f"{lake}: no table {table} (known: {', '.join(sorted(m.tables)) or 'none'})", 30002)
    if (snap / "tables").is_dir():
        # Types come from the files (they depend on the job's --unbounded-number).
        df = spark.read.parquet(str(snap / "tables" / dir_name(table)))
    else:
        df = spark.read.format("delta").load(str(Path(lake) / "delta" / dir_name(table)))
        df = df.where(F.col("_op") != "d")
    names = [c["name"] for c in entry.schema.columns]
    if with_metadata:
        return df.select(*[F.col(f"`{n}`") for n in names], *[F.col(n) for n, _ in METADATA])
    return df.select(*[F.col(f"`{n}`") for n in names])


def read_rows_arrow(lake: str, table: str) -> list[dict[str, Any]]:
    """Current rows of a parquet-store table as dicts, read with pyarrow (no Spark needed).

    Empty when no batch has committed the table yet.
    """
    import pyarrow.parquet as pq

    try:
        tdir = snapshot_dir(lake) / "tables" / dir_name(table)
    except ConfigError:
        return []
    rows: list[dict[str, Any]] = []
    for bucket in sorted(tdir.iterdir()) if tdir.is_dir() else []:
        for f in sorted(bucket.resolve().glob("*.parquet")):  # resolve once: a later swap cannot mix
            rows += pq.read_table(f).to_pylist()
    return rows


def list_tables(lake: str) -> dict[str, dict[str, Any]]:
    """Table name -> key columns, key origin and column count, from the current manifest."""
    m = manifest(lake)
    return {name: {"key": e.schema.key, "key_origin": e.schema.key_origin, "columns": len(e.schema.columns),
                   "buckets": len(e.buckets)} for name, e in sorted(m.tables.items())}
