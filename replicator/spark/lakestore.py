"""The lake as Delta Lake tables: current-state tables, the change log, the job state.

Layout under the lake URI (a local path or a URI delta-rs opens: ``file:``, ``s3:``,
``abfss:``, ``gs:``; reads go through delta-rs with either writer):

* ``tables/<OWNER.TABLE>``   one Delta table per source table, updated by MERGE on ``_key``;
* ``changes``                the change log, an append-only Delta table partitioned by ``table``;
* ``_replicator/state``      the job state (:mod:`.state`), replaced by each batch.

Every commit of a batch carries the Delta *application transaction* ``(app id, batch id)``
(``txn`` action, the mechanism Spark's own Delta sink uses for idempotent writes), so a
batch replayed after a crash skips each table it had already committed, table by table.

Two writers produce the same tables: :class:`DeltaLake` through delta-rs (``deltalake``
on PyPI, no JVM; the default), and :class:`SparkDeltaLake` through Spark's own Delta
(``MERGE INTO`` with ``spark.databricks.delta.write.txnAppId/txnVersion``) when the
delta-spark jars are on the classpath (``--store spark-delta``).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import Any

from replicator.spark.state import JobState, from_ipc, to_ipc

log = logging.getLogger("replicator.spark")
FILE_ROWS = 1 << 18  # rows per data file the job writes itself (sorted by _key)
POSITION_NEWER = ("(s._commit_scn > t._commit_scn) OR (s._commit_scn = t._commit_scn AND (s._c_scn > t._c_scn OR "
                  "(s._c_scn = t._c_scn AND (s._c_idx > t._c_idx OR (s._c_idx = t._c_idx AND s._elem > t._elem)))))")


@dataclass(slots=True)
class Stored:
    """What a table stores for a batch's keys (:meth:`DeltaLake.read_stored`)."""

    rows: Any  # pyarrow Table: the rows of the keys (tombstones too), in the table's schema
    files: list[tuple[str, int]] | None  # (path, size) of the files holding them; None: not known
    rest: Any  # the other rows of those files (kept when they are rewritten)
    schema: Any  # the table's Arrow schema


def _candidate_files(actions: Any, keys: list[str]) -> list[tuple[str, int]]:
    """(path, size) of the files whose ``_key`` range (statistics; none: any) holds one of ``keys`` (sorted)."""
    from bisect import bisect_left

    paths, sizes = actions["path"].to_pylist(), actions["size_bytes"].to_pylist()
    names = actions.column_names
    lows = actions["min._key"].to_pylist() if "min._key" in names else [None] * len(paths)
    highs = actions["max._key"].to_pylist() if "max._key" in names else [None] * len(paths)
    out = []
    for path, size, low, high in zip(paths, sizes, lows, highs):
        if low is not None and high is not None:
            at = bisect_left(keys, low)
            if at == len(keys) or keys[at] > high:
                continue
        out.append((path, size))
    return out


def _conform(rows: Any, schema: Any) -> Any:
    """``rows`` with ``schema``'s columns, order and types (columns it lacks are NULL)."""
    import pyarrow as pa

    if rows.schema.equals(schema):
        return rows
    cols = [rows[f.name].cast(f.type) if f.name in rows.column_names else pa.nulls(rows.num_rows, f.type)
            for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def dir_name(table: str) -> str:
    """A path-safe directory name for OWNER.TABLE (quoted Oracle names may hold ``/``)."""
    return re.sub(r"[^\w$#.\-]", lambda m: f"%{ord(m[0]):02X}", table).lstrip(".") or "_"


def lake_uri(lake: str) -> str:
    """The lake's base URI: URIs as given, local paths made absolute."""
    if re.match(r"^[A-Za-z][\w+.-]*://", lake):
        return lake.rstrip("/")
    return os.path.abspath(lake)


class DeltaLake:
    """Reads and commits the lake's Delta tables with delta-rs."""

    kind = "delta-rs"

    def __init__(self, lake: str, storage_options: dict[str, str] | None = None):
        self.root = lake_uri(lake)
        self.storage_options = storage_options or None
        # Open tables by URI. The job is the lake's only writer and brings each handle up to
        # date after its own commits, so a table's log is read in full once per process, not
        # three times per table and batch (done, read, merge) from its last checkpoint on.
        self._tables: dict[str, Any] = {}
        # Per table since the last take_io(): [files read, bytes read, files removed, files added, bytes added]
        # (each table is read and committed by one thread at a time: no lock needed).
        self.io: dict[str, list[int]] = {}

    def take_io(self) -> dict[str, list[int]]:
        """The data files read and rewritten per table since the last call (for the batch metrics)."""
        io, self.io = self.io, {}
        return io

    def _count(self, table: str, read: list[tuple[str, int]] = (), removed: int = 0, added: list[int] = ()) -> None:
        n = self.io.setdefault(table, [0, 0, 0, 0, 0])
        n[0] += len(read)
        n[1] += sum(size for _, size in read)
        n[2] += removed
        n[3] += len(added)
        n[4] += sum(added)

    def table_uri(self, table: str) -> str:
        """URI of a current-state table."""
        return f"{self.root}/tables/{dir_name(table)}"

    @property
    def changes_uri(self) -> str:
        """URI of the change log."""
        return f"{self.root}/changes"

    @property
    def state_uri(self) -> str:
        """URI of the job state table."""
        return f"{self.root}/_replicator/state"

    def open_table(self, uri: str) -> Any:
        """The Delta table at ``uri`` (delta-rs), or None when there is none yet."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        dt = self._tables.get(uri)
        if dt is None:
            try:
                dt = DeltaTable(uri, storage_options=self.storage_options)
            except TableNotFoundError:
                return None
            self._tables[uri] = dt
        return dt

    def _written(self, uri: str) -> None:
        """After a commit to ``uri``: read the new log entries into its open handle."""
        dt = self._tables.get(uri)
        if dt is not None:
            dt.update_incremental()

    def _target(self, uri: str) -> Any:
        """What ``write_deltalake`` writes to: the open handle (updated by the write), else the URI."""
        return self._tables.get(uri) or uri

    def done(self, uri: str, app: str, batch: int) -> bool:
        """True when ``uri`` already holds the commit of ``batch`` (application transaction)."""
        dt = self.open_table(uri)
        version = dt.transaction_version(app) if dt is not None else None
        return version is not None and version >= batch

    @staticmethod
    def _txn(app: str, batch: int) -> Any:
        from deltalake import CommitProperties, Transaction

        return CommitProperties(app_transactions=[Transaction(app, batch)])

    def load_state(self) -> JobState:
        """The state the last committed batch left (an empty state before the first)."""
        dt = self.open_table(self.state_uri)
        if dt is None:
            return JobState()
        rows = dt.to_pyarrow_table().to_pylist()
        if not rows:
            return JobState()
        row = rows[0]
        return JobState.from_json(row["state"], from_ipc(row["pending"]) if row["pending"] else None)

    def commit_state(self, state: JobState, app: str, batch: int) -> None:
        """Replace the state (the batch's last commit)."""
        import pyarrow as pa
        from deltalake import write_deltalake

        pending = to_ipc(state.pending) if state.pending is not None and state.pending.num_rows else None
        row = pa.table({"batch": pa.array([state.batch], pa.int64()), "state": [state.to_json()],
                        "pending": pa.array([pending], pa.binary())})
        write_deltalake(self._target(self.state_uri), row, mode="overwrite", commit_properties=self._txn(app, batch),
                        storage_options=self.storage_options)
        self._written(self.state_uri)

    def read_rows(self, table: str, keys: list[str] | None = None) -> Any:
        """The stored rows of a table (tombstones too) as a pyarrow Table, only those of ``keys`` when
        given; None when the table is absent."""
        if keys is not None:
            stored = self.read_stored(table, keys)
            return None if stored is None else stored.rows
        dt = self.open_table(self.table_uri(table))
        return None if dt is None else dt.to_pyarrow_table()

    def read_stored(self, table: str, keys: list[str]) -> Stored | None:
        """The stored rows of ``keys`` and the files that hold them (None when the table is absent).

        Only the files whose ``_key`` statistics (min/max) can hold one of the keys are read,
        so a batch whose keys are new or clustered reads a few files, not the whole table. The
        keys are matched after the read, file by file: delta-rs writes string_view columns
        while its dataset schema says string, and pyarrow then cannot compare a pushed-down
        filter with the files' statistics.
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        dt = self.open_table(self.table_uri(table))
        if dt is None:
            return None
        dataset = dt.to_pyarrow_dataset()
        want = sorted(set(keys))
        files = _candidate_files(pa.table(dt.get_add_actions(flatten=True)), want)
        fragments = {f.path: f for f in dataset.get_fragments()}
        if any(path not in fragments for path, _ in files):  # paths spelled differently: read it all, keep nothing
            rows = dataset.to_table()
            return Stored(rows.filter(pc.is_in(rows["_key"], pa.array(want, pa.string()))), None, None, dataset.schema)
        wanted = pa.array(want, pa.string())
        self._count(table, read=files)
        hit_parts, rest_parts, hit_files = [], [], []
        for path, size in files:
            part = fragments[path].to_table(schema=dataset.schema)
            mask = pc.is_in(part["_key"], wanted)
            if not pc.any(mask).as_py():
                continue
            hit_files.append((path, size))
            hit_parts.append(part.filter(mask))
            rest_parts.append(part.filter(pc.invert(mask)))
        empty = dataset.schema.empty_table()
        return Stored(pa.concat_tables(hit_parts) if hit_parts else empty, hit_files,
                      pa.concat_tables(rest_parts) if rest_parts else empty, dataset.schema)

    def merge(self, table: str, rows: Any, app: str, batch: int, new_keys: bool = False,
              stored: Stored | None = None) -> None:
        """Replace the stored rows of the keys of ``rows`` (newer images: the fold dropped stale
        changes) and insert the new keys, in one commit.

        With ``stored`` (what :meth:`read_stored` read for exactly these keys) the job rewrites
        the files holding those keys itself: one commit that removes them and adds their other
        rows plus ``rows``, sorted by ``_key`` (:meth:`_rewrite`). That reads nothing more and
        joins nothing: a delta-rs MERGE would scan the whole table again. Without it (or when
        ``rows`` add columns to the table) it is a delta-rs MERGE on ``_key`` where newer
        positions win. ``new_keys``: no key of ``rows`` is stored, an append.
        """
        from deltalake import write_deltalake

        uri = self.table_uri(table)
        dt = self.open_table(uri)
        if dt is None:  # created empty, so that the job writes (with _key statistics) every data file
            write_deltalake(uri, rows.schema.empty_table(), mode="append", storage_options=self.storage_options)
            dt = self.open_table(uri)
            stored = Stored(None, [], None, dt.to_pyarrow_dataset().schema)
        if (stored is not None and stored.files is not None
              and set(rows.column_names) <= set(stored.schema.names)):
            self._rewrite(dt, rows, stored, app, batch, table)
        elif new_keys:
            write_deltalake(dt, rows, mode="append", schema_mode="merge", commit_properties=self._txn(app, batch),
                            storage_options=self.storage_options)
        else:
            (dt.merge(rows, "t._key = s._key", source_alias="s", target_alias="t", merge_schema=True,
                      commit_properties=self._txn(app, batch))
             .when_matched_update_all(predicate=POSITION_NEWER).when_not_matched_insert_all().execute())
        self._written(uri)

    def _rewrite(self, dt: Any, rows: Any, stored: Stored, app: str, batch: int, table: str = "") -> None:
        """One commit: remove ``stored.files``, add their untouched rows and ``rows`` as new files."""
        import json
        import time
        import uuid

        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
        from deltalake.transaction import AddAction, RemoveAction

        schema = stored.schema
        parts = [rows] if stored.rest is None else [stored.rest, rows]
        data = pa.concat_tables([_conform(part, schema) for part in parts])
        data = data.take(pc.sort_indices(data["_key"]))  # files with narrow key ranges: fewer read next time
        fs = dt.to_pyarrow_dataset().filesystem
        now = int(time.time() * 1000)
        actions: list[Any] = []
        for lo in range(0, data.num_rows, FILE_ROWS):
            part = data.slice(lo, FILE_ROWS)
            name = f"part-{uuid.uuid4()}-c000.snappy.parquet"
            pq.write_table(part, name, filesystem=fs, compression="snappy")
            size = fs.get_file_info(name).size
            keys = part["_key"]
            stats = {"numRecords": part.num_rows, "minValues": {"_key": keys[0].as_py()},
                     "maxValues": {"_key": keys[-1].as_py()}, "nullCount": {"_key": 0}}
            actions.append(AddAction(name, size, {}, now, True, json.dumps(stats)))
        actions += [RemoveAction(path, True, now, size, {}) for path, size in stored.files]
        self._count(table, removed=len(stored.files), added=[a.size for a in actions if isinstance(a, AddAction)])
        dt.create_write_transaction(actions, "append", schema, commit_properties=self._txn(app, batch))

    def overwrite(self, table: str, rows: Any, app: str, batch: int) -> None:
        """Replace a table's rows and schema (after a RENAME, DROP COLUMN or TRUNCATE)."""
        from deltalake import write_deltalake

        uri = self.table_uri(table)
        write_deltalake(self._target(uri), rows, mode="overwrite", schema_mode="overwrite",
                        commit_properties=self._txn(app, batch), storage_options=self.storage_options)
        self._written(uri)

    def append_changes(self, rows: Any, app: str, batch: int) -> None:
        """Append a batch's change-log rows."""
        from deltalake import write_deltalake

        write_deltalake(self._target(self.changes_uri), rows, mode="append", partition_by=["table"],
                        schema_mode="merge", commit_properties=self._txn(app, batch),
                        storage_options=self.storage_options)
        self._written(self.changes_uri)

    def applied_transactions(self, candidates: set[tuple[int, str | None]]) -> set[tuple[int, str | None]]:
        """The (commit SCN, xid) pairs of ``candidates`` the change log holds rows of."""
        import pyarrow as pa
        import pyarrow.compute as pc

        dt = self.open_table(self.changes_uri) if candidates else None
        if dt is None:
            return set()
        scns = pa.array(sorted({s for s, _ in candidates}), pa.int64())
        logged = dt.to_pyarrow_table(columns=["commit_scn", "xid"])
        logged = logged.filter(pc.is_in(logged["commit_scn"], scns))
        found = set(zip(logged["commit_scn"].to_pylist(), logged["xid"].to_pylist()))
        return candidates & found


class SparkDeltaLake(DeltaLake):
    """The same tables written by Spark's own Delta Lake (delta-spark jars on the classpath).

    Reads (state, stored rows, application transactions) go through delta-rs, which reads
    any Delta table; writes go through Spark so the cluster's file systems and Delta
    configuration apply. Not exercised by the tests here: the delta-spark jars cannot be
    downloaded on the development machines.
    """

    kind = "spark-delta"

    def __init__(self, spark: Any, lake: str, storage_options: dict[str, str] | None = None):
        super().__init__(lake, storage_options)
        self.spark = spark
        spark.conf.set("spark.databricks.delta.schema.autoMerge.enabled", "true")  # ADD COLUMN

    def open_table(self, uri: str) -> Any:
        """The table as Spark's last write left it (Spark's commits do not update delta-rs handles)."""
        self._tables.pop(uri, None)
        return super().open_table(uri)

    def _df(self, rows: Any) -> Any:
        return self.spark.createDataFrame(rows)

    def _txn_conf(self, app: str, batch: int) -> None:
        self.spark.conf.set("spark.databricks.delta.write.txnAppId", app)
        self.spark.conf.set("spark.databricks.delta.write.txnVersion", str(batch))

    def merge(self, table: str, rows: Any, app: str, batch: int, new_keys: bool = False,
              stored: Stored | None = None) -> None:
        """``MERGE INTO`` through delta-spark, idempotent by txnAppId/txnVersion (always a MERGE)."""
        from delta.tables import DeltaTable

        uri = self.table_uri(table)
        df = self._df(rows)
        if self.open_table(uri) is None:
            df.write.format("delta").mode("append").option("txnAppId", app).option("txnVersion", batch).save(uri)
            return
        self._txn_conf(app, batch)
        try:
            (DeltaTable.forPath(self.spark, uri).alias("t").merge(df.alias("s"), "t._key = s._key")
             .whenMatchedUpdateAll(condition=POSITION_NEWER).whenNotMatchedInsertAll().execute())
        finally:
            self.spark.conf.unset("spark.databricks.delta.write.txnAppId")
            self.spark.conf.unset("spark.databricks.delta.write.txnVersion")

    def overwrite(self, table: str, rows: Any, app: str, batch: int) -> None:
        """Overwrite rows and schema through delta-spark."""
        (self._df(rows).write.format("delta").mode("overwrite").option("overwriteSchema", "true")
         .option("txnAppId", app).option("txnVersion", batch).save(self.table_uri(table)))

    def append_changes(self, rows: Any, app: str, batch: int) -> None:
        """Append change-log rows through delta-spark."""
        (self._df(rows).write.format("delta").mode("append").option("mergeSchema", "true").partitionBy("table")
         .option("txnAppId", app).option("txnVersion", batch).save(self.changes_uri))

    def commit_state(self, state: JobState, app: str, batch: int) -> None:
        """Replace the state through delta-spark."""
        import pyarrow as pa

        pending = to_ipc(state.pending) if state.pending is not None and state.pending.num_rows else None
        row = pa.table({"batch": pa.array([state.batch], pa.int64()), "state": [state.to_json()],
                        "pending": pa.array([pending], pa.binary())})
        (self._df(row).write.format("delta").mode("overwrite").option("txnAppId", app).option("txnVersion", batch)
         .save(self.state_uri))
