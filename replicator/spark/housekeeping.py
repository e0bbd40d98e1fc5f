"""Housekeeping of the lake: compaction and vacuum, on a schedule in the job or as commands.

* **compaction** (``replicator spark compact``, ``--compact-every N`` batches): in each bucket of
  a current-state or tombstone table that has gathered at least ``min_files`` data files, the
  files are rewritten as few, sorted by the key (delta-rs ``optimize.z_order`` on the key
  columns, limited to that bucket): the files a batch reads stay few and narrow.
* **vacuum** (``replicator spark vacuum``, ``--vacuum-every N`` batches): files no table
  version within ``retention_hours`` references are deleted (also the data files of a batch
  that was killed before its commit), the Delta logs are cleaned the same way, pending-event
  files the state no longer names are deleted, and with ``tombstone_retention_scn`` the
  tombstones of deletes more than that many SCNs below the applied SCN are dropped (a producer
  replay older than that could then bring such a row back).

In the job both run between two batches, so they never race its commits. As commands they
are for a stopped job: a compaction committing while the job rewrites the same bucket makes
one of the two commits fail (Delta's conflict check); the job then stops with an error and
resumes on its next start.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replicator.spark.lakestore import DeltaLake
from replicator.spark.options import JobOptions
from replicator.spark.tableschema import BUCKET

log = logging.getLogger("replicator.spark")


@dataclass(slots=True)
class Report:
    """What one housekeeping run did."""

    buckets_compacted: int = 0
    files_compacted: int = 0
    files_vacuumed: int = 0
    tombstones_dropped: int = 0
    pending_removed: int = 0
    records_merged: int = 0
    tables: list[str] = field(default_factory=list)

    def line(self) -> str:
        """One log line."""
        return (
            f"housekeeping: {self.records_merged} merge-on-read record(s) merged, "
            f"{self.buckets_compacted} bucket(s) compacted ({self.files_compacted} files), "
            f"{self.files_vacuumed} file(s) vacuumed, {self.tombstones_dropped} tombstone(s) dropped, "
            f"{self.pending_removed} pending file(s) removed, over {len(self.tables)} table(s)"
        )


def _table_uris(lake: DeltaLake) -> list[tuple[str, list[str]]]:
    """(URI, key columns) of every current-state and tombstone table, from the job state."""
    st = lake.load_state()
    out = []
    for name, schema in sorted(st.tables.items()):
        out += [(lake.table_uri(name), schema.key_names), (lake.tomb_uri(name), schema.key_names)]
    return out


def compact(lake: DeltaLake, min_files: int = 8, tables: list[str] | None = None) -> Report:
    """Rewrite the buckets that hold ``min_files`` data files or more, sorted by the key."""
    import pyarrow as pa

    from replicator.spark.mor import compact_table

    rep = Report()
    st = lake.load_state()
    for name, schema in sorted(st.tables.items()):
        if schema.merge_on_read and (tables is None or name in tables):
            rep.records_merged += compact_table(lake, name, schema)
    for uri, keys in _table_uris(lake):
        if tables is not None and not any(uri.endswith(t) for t in tables):
            continue
        lake.forget(uri)
        dt = lake.open_table(uri)
        if dt is None:
            continue
        actions = pa.table(dt.get_add_actions(flatten=True)).to_pydict()
        counts: dict[Any, int] = {}
        for b in actions.get(f"partition.{BUCKET}", []):
            counts[b] = counts.get(b, 0) + 1
        for b, n in sorted(counts.items()):
            if n < min_files:
                continue
            dt.optimize.z_order(keys, partition_filters=[(BUCKET, "=", str(b))])
            rep.buckets_compacted += 1
            rep.files_compacted += n
        rep.tables.append(uri)
        lake.forget(uri)
    return rep


def vacuum(lake: DeltaLake, retention_hours: float = 168.0, tombstone_retention_scn: int = 0) -> Report:
    """Delete unreferenced files older than ``retention_hours``; drop old tombstones if asked."""
    from replicator.spark.layout import filesystem

    rep = Report()
    st = lake.load_state()
    if tombstone_retention_scn and st.applied_scn > tombstone_retention_scn:
        limit = st.applied_scn - tombstone_retention_scn
        for name in sorted(st.tables):
            uri = lake.tomb_uri(name)
            lake.forget(uri)
            dt = lake.open_table(uri)
            if dt is not None:
                metrics = dt.delete(f"_commit_scn < {limit}")
                rep.tombstones_dropped += int(metrics.get("num_deleted_rows", 0) or 0)
                lake.forget(uri)
    uris = [u for u, _ in _table_uris(lake)] + [lake.recent_uri(n) for n in sorted(st.tables)]
    uris += [lake.changes_uri, lake.state_uri]
    for uri in uris:
        lake.forget(uri)
        dt = lake.open_table(uri)
        if dt is None:
            continue
        removed = dt.vacuum(
            retention_hours=int(retention_hours), dry_run=False, enforce_retention_duration=False, full=True
        )
        rep.files_vacuumed += len(removed)
        dt.cleanup_metadata()
        rep.tables.append(uri)
        lake.forget(uri)
    fs = filesystem(lake.pending_uri, lake.storage_options)
    import pyarrow.fs as pafs

    named = set(st.pending_files)
    for info in fs.get_file_info(pafs.FileSelector("", allow_not_found=True)):
        if info.type == pafs.FileType.File and info.path.lstrip("/") not in named:
            fs.delete_file(info.path)
            rep.pending_removed += 1
    return rep


def scheduled_housekeeping(opts: JobOptions) -> Callable[[Any], None] | None:
    """The job's between-batches hook (``--compact-every``, ``--vacuum-every``), or None."""
    if not (opts.compact_every or opts.vacuum_every):
        return None

    def run(applier: Any) -> None:
        """After a batch: compaction and vacuum when their batch counts come round."""
        batch = applier.state.batch
        if opts.compact_every and batch > 0 and batch % opts.compact_every == 0:
            log.info("%s", compact(applier.lake).line())
        if opts.vacuum_every and batch > 0 and batch % opts.vacuum_every == 0:
            log.info("%s", vacuum(applier.lake, tombstone_retention_scn=opts.tombstone_retention_scn).line())

    return run
