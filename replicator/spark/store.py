"""Current-state tables as plain parquet, committed by atomic symlink swaps.

Layout under the lake directory::

    tables -> _snapshots/<snap>/tables              the only pointer a reader follows
    _snapshots/<snap>/manifest.json                 schemas, bucket versions, pending, batch id
    _snapshots/<snap>/tables/<T>/bucket=<n> -> ../../../../_data/<T>/<version>/bucket=<n>/_deleted=false
    _data/<T>/<version>/bucket=<n>/_deleted=true    tombstones: deleted keys and their position

Each table is hash-partitioned into buckets by key. A batch rewrites only the buckets its
changes touch, into a new version directory; unchanged buckets keep their old version.
The batch becomes visible in one step: a new snapshot directory (manifest + symlinks) is
written and ``tables`` is renamed over to it, so readers see every table either before or
after the batch, never half a transaction. ``spark.read.parquet("<lake>/tables/OWNER.T")``
works for any reader (Spark follows the symlinks); tombstones sit outside the linked
directories. Old snapshots and unreferenced versions are removed, keeping the newest
``keep_snapshots`` for readers still on them. Needs a POSIX file system (symlinks).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

from replicator.spark.manifest import Manifest, TableEntry, swap_symlink, write_atomic

log = logging.getLogger("replicator.spark")


def dir_name(table: str) -> str:
    """A file-system-safe directory name for OWNER.TABLE (quoted Oracle names may hold ``/``)."""
    return re.sub(r"[^\w$#.\-]", lambda m: f"%{ord(m[0]):02X}", table).lstrip(".") or "_"


class ParquetStore:
    """Reads and writes bucket versions and commits snapshots of a lake directory."""

    kind = "parquet"

    def __init__(self, spark: Any, lake: str, keep_snapshots: int = 3):
        self.spark = spark
        self.root = Path(lake).resolve()
        self.keep = max(1, keep_snapshots)
        self.root.mkdir(parents=True, exist_ok=True)

    # -- reading -----------------------------------------------------------------------
    def load(self, buckets: int) -> Manifest:
        """The manifest of the current snapshot, or an empty one for a new lake."""
        link = self.root / "tables"
        if not link.is_symlink():
            return Manifest(buckets=buckets)
        return Manifest.from_json((link.resolve().parent / "manifest.json").read_text(encoding="utf-8"))

    def version_dir(self, table: str, version: str) -> Path:
        """Directory of one data version of a table."""
        return self.root / "_data" / dir_name(table) / version

    def read_rows(self, table: str, entry: TableEntry, ddl: str, buckets: list[int]) -> Any:
        """Stored rows (live and tombstones) of ``buckets``, or None when nothing is stored."""
        paths = []
        for b in buckets:
            version = entry.buckets.get(b)
            if version is None:
                continue
            for deleted in ("false", "true"):
                p = self.version_dir(table, version) / f"bucket={b}" / f"_deleted={deleted}"
                if p.is_dir() and any(n.endswith(".parquet") for n in os.listdir(p)):
                    paths.append(str(p))
        if not paths:
            return None
        return self.spark.read.schema(ddl).parquet(*paths)

    # -- writing -----------------------------------------------------------------------
    def write_rows(self, table: str, version: str, df: Any, buckets: list[int], spark_schema: Any,
                   complete: bool = False) -> list[int]:
        """Write new bucket contents (rows carry ``bucket``; tombstones have ``_op='d'``).

        Returns the buckets written: those holding rows, plus ``buckets`` (rewritten even if
        they end up empty). ``complete`` needs nothing special here: every written bucket
        gets a new version directory anyway.
        """
        from pyspark.sql import functions as F

        out = self.version_dir(table, version)
        (df.withColumn("_deleted", F.col("_op") == F.lit("d"))
           .write.mode("overwrite").partitionBy("bucket", "_deleted").parquet(str(out)))
        found = {int(p.name.split("=", 1)[1]) for p in out.glob("bucket=*") if p.is_dir()} if out.is_dir() else set()
        written = sorted(found | set(buckets))
        for b in written:  # a bucket left with no live row still needs a readable file
            live = out / f"bucket={b}" / "_deleted=false"
            if not (live.is_dir() and any(n.endswith(".parquet") for n in os.listdir(live))):
                _empty_parquet(live, spark_schema)
        return written

    def pending_path(self, manifest: Manifest) -> str:
        """Where the pending buffer of ``manifest`` is stored."""
        return self.pending_path_for(manifest.pending or "")

    def pending_path_for(self, version: str) -> str:
        """Where a batch writes its pending buffer."""
        return str(self.root / "_data" / "_pending" / version)

    def staging_path(self, version: str) -> Path:
        """Where a batch stages its change log."""
        return self.root / "_data" / "_staging" / version

    def rewrite_manifest(self, manifest: Manifest) -> None:
        """Update the current snapshot's manifest in place (bookkeeping that readers ignore)."""
        write_atomic(self.root / "_snapshots" / manifest.snapshot / "manifest.json", manifest.to_json())

    def new_version(self, batch: int) -> str:
        """A fresh, unique version name (a retried batch never reuses a directory)."""
        return f"b{batch:012d}-{uuid.uuid4().hex[:8]}"

    # -- committing --------------------------------------------------------------------
    def commit(self, manifest: Manifest) -> None:
        """Publish ``manifest`` (tables, pending, batch) as the current snapshot, atomically."""
        snap = self.root / "_snapshots" / manifest.snapshot
        tables_dir = snap / "tables"
        tables_dir.mkdir(parents=True, exist_ok=True)
        for name, entry in manifest.tables.items():
            tdir = tables_dir / dir_name(name)
            tdir.mkdir(exist_ok=True)
            for b, version in sorted(entry.buckets.items()):
                target = f"../../../../_data/{dir_name(name)}/{version}/bucket={b}/_deleted=false"
                os.symlink(target, tdir / f"bucket={b}")
        write_atomic(snap / "manifest.json", manifest.to_json())
        swap_symlink(self.root / "tables", f"_snapshots/{manifest.snapshot}/tables")
        self.collect_garbage(manifest.snapshot)

    def collect_garbage(self, current: str) -> None:
        """Drop snapshots beyond the newest ``keep`` and data versions none of them uses."""
        snaps_dir = self.root / "_snapshots"
        snaps = sorted(p.name for p in snaps_dir.iterdir() if p.is_dir())
        keep = [s for s in snaps if s <= current][-self.keep:]
        used: set[str] = set()
        for s in keep:
            try:
                used |= Manifest.from_json((snaps_dir / s / "manifest.json").read_text(encoding="utf-8")).versions()
            except (OSError, ValueError):
                continue
        for s in snaps:
            if s not in keep:
                shutil.rmtree(snaps_dir / s, ignore_errors=True)
        data = self.root / "_data"
        for tdir in data.iterdir() if data.is_dir() else []:
            for vdir in tdir.iterdir():
                if tdir.name == "_staging":  # left by a failed attempt (a committed one is moved away)
                    if vdir.name < current:
                        shutil.rmtree(vdir, ignore_errors=True)
                    continue
                if vdir.name not in used and vdir.name < current:
                    shutil.rmtree(vdir, ignore_errors=True)


def _empty_parquet(path: Path, spark_schema: Any) -> None:
    """One empty parquet file carrying the table schema (readers can infer it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.pandas.types import to_arrow_schema

    path.mkdir(parents=True, exist_ok=True)
    schema = to_arrow_schema(spark_schema, timezone="UTC")
    pq.write_table(pa.Table.from_batches([], schema=schema), str(path / "part-00000-empty.parquet"))
