"""The change log: every applied change, appended as parquet partitioned by table and date.

``<lake>/changes/table=OWNER.TABLE/date=YYYY-MM-DD/part-b<batch>-<spark part>.parquet`` with the
columns op, commit_scn, c_scn, c_idx, elem, xid, commit_ts, rid, key, before, after
(maps of column name -> value text as the producer printed it), sql (DDL), and the Kafka
partition and offset. Only changes that moved a row forward are logged, so replays and
duplicates do not repeat in the log.

A batch first writes its log into a staging directory named in the manifest it commits;
after the commit the files are renamed into place with names derived from the batch id.
A crash in between is finished by the next run, so the log matches the tables.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

COLUMNS = ("op", "commit_scn", "c_scn", "c_idx", "elem", "xid", "commit_ts", "rid", "key", "before", "after",
           "sql", "k_partition", "k_offset")


def changelog_rows(fresh: Any, table: str) -> Any:
    """Change-log rows of one table's fresh changes (``fresh`` as fold.keyed_changes names it)."""
    from pyspark.sql import functions as F

    src = fresh.where(~F.col("_synthetic"))
    return src.select(F.lit(table).alias("table"),
                      F.date_format(F.coalesce(F.col("commit_ts"), F.col("k_ts")), "yyyy-MM-dd").alias("date"),
                      "op", F.col("_commit_scn").alias("commit_scn"), F.col("_c_scn").alias("c_scn"),
                      F.col("_c_idx").alias("c_idx"), F.col("_elem").alias("elem"), "xid", "commit_ts", "rid",
                      F.col("_key").alias("key"), "before", "after", "sql", "k_partition", "k_offset"
                      ).dropDuplicates(["key", "commit_scn", "c_scn", "c_idx", "elem"])  # a duplicate in the batch


def ddl_rows(ddl_events: Any) -> Any:
    """Change-log rows for DDL events."""
    from pyspark.sql import functions as F

    return ddl_events.select(F.col("tbl").alias("table"),
                             F.date_format(F.coalesce(F.col("commit_ts"), F.col("k_ts")), "yyyy-MM-dd").alias("date"),
                             F.lit("ddl").alias("op"), "commit_scn", "c_scn", "c_idx", "elem", "xid", "commit_ts", "rid",
                             F.lit(None).cast("string").alias("key"), "before", "after", "sql", "k_partition",
                             "k_offset")


def stage(rows: Any, staging: Path) -> None:
    """Write one batch's log rows into ``staging`` (replaced if a retry left one)."""
    rows.write.mode("overwrite").partitionBy("table", "date").parquet(str(staging))


def publish(staging: Path, changes: Path, batch: int) -> int:
    """Move staged files into the log under batch-derived names; returns files moved.

    Idempotent: a retry after a crash moves whatever is left, and names never collide
    with other batches.
    """
    if not staging.is_dir():
        return 0
    moved = 0
    prefix = f"part-b{batch:012d}-"
    for table_dir in sorted(p for p in staging.iterdir() if p.is_dir() and "=" in p.name):
        for date_dir in sorted(p for p in table_dir.iterdir() if p.is_dir() and "=" in p.name):
            target = changes / table_dir.name / date_dir.name
            target.mkdir(parents=True, exist_ok=True)
            files = sorted(f for f in os.listdir(date_dir) if f.endswith(".parquet"))
            for name in files:  # Spark's part names are unique: prefixing keeps them so
                os.replace(date_dir / name, target / f"{prefix}{name}")
                moved += 1
    shutil.rmtree(staging, ignore_errors=True)
    return moved
