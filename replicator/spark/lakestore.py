"""The lake as Delta Lake tables, committed by the driver with delta-rs.

Layout under the lake URI (a local path or a URI delta-rs opens: ``file:``, ``s3:``,
``abfss:``, ``gs:``):

* ``tables/<OWNER.TABLE>``        the current rows of a source table (no tombstones),
  partitioned by ``_bucket`` (:mod:`.layout`);
* ``_replicator/tombstones/<OWNER.TABLE>``   the keys deleted, with the position of the delete
  (they keep a replayed older change from bringing a row back), laid out the same way;
* ``changes``                     the change log, append-only, partitioned by ``table``;
* ``_replicator/state``           the job state (:mod:`.state`), replaced by each batch;
* ``_replicator/pending/``        Arrow IPC files of the events kept for the next batch.

The executors write the data files (:mod:`.distfold`); the driver commits them with
``create_write_transaction``. Every commit carries the Delta *application transaction*
``(app id, batch id)`` and the batch in its commit info, in a fixed order per batch: the
change log, then per table its tombstones and its rows, then the state. A batch replayed
after a crash skips each commit it finds made, and folds over each table as it was when the
batch first started (the version before a commit it made, :meth:`DeltaLake.snapshot_files`),
so what it writes again is what it wrote the first time.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from typing import Any

from replicator.spark.layout import DataFile, data_files
from replicator.spark.state import JobState

log = logging.getLogger("replicator.spark")
# Commit info of the job's commits: the application, the batch, the applied SCN after the batch.
APP_KEY, BATCH_KEY, APPLIED_KEY = "replicator.app", "replicator.batch", "replicator.applied_scn"


def conform(rows: Any, schema: Any) -> Any:
    """``rows`` with ``schema``'s columns, order and types (columns it lacks are NULL)."""
    import pyarrow as pa

    if rows.schema.equals(schema):
        return rows
    cols = [
        rows[f.name].cast(f.type) if f.name in rows.column_names else pa.nulls(rows.num_rows, f.type) for f in schema
    ]
    return pa.Table.from_arrays(cols, schema=schema)


def dir_name(table: str) -> str:
    """A path-safe directory name for OWNER.TABLE (quoted Oracle names may hold ``/``)."""
    return re.sub(r"[^\w$#.\-]", lambda m: f"%{ord(m[0]):02X}", table).lstrip(".") or "_"


def lake_uri(lake: str) -> str:
    """The lake's base URI: URIs as given, local paths made absolute."""
    if re.match(r"^[A-Za-z][\w+.-]*://", lake):
        return lake.rstrip("/")
    return os.path.abspath(lake)


def _delta_fields(schema: Any) -> list[Any]:
    from deltalake import Schema

    return list(Schema.from_arrow(schema).fields)


class DeltaLake:
    """Reads and commits the lake's Delta tables with delta-rs (the driver's side)."""

    kind = "delta-rs"

    def __init__(self, lake: str, storage_options: dict[str, str] | None = None):
        self.root = lake_uri(lake)
        self.storage_options = storage_options or None
        # Open tables by URI: the job is the lake's only writer and brings each handle up to date
        # after its own commits, so a table's log is read in full once per process.
        self._tables: dict[str, Any] = {}

    def table_uri(self, table: str) -> str:
        """URI of a current-state table."""
        return f"{self.root}/tables/{dir_name(table)}"

    def tomb_uri(self, table: str) -> str:
        """URI of a table's tombstones."""
        return f"{self.root}/_replicator/tombstones/{dir_name(table)}"

    def recent_uri(self, table: str) -> str:
        """URI of a merge-on-read table's records (:mod:`.mor`)."""
        return f"{self.root}/_replicator/recent/{dir_name(table)}"

    @property
    def changes_uri(self) -> str:
        """URI of the change log."""
        return f"{self.root}/changes"

    @property
    def state_uri(self) -> str:
        """URI of the job state table."""
        return f"{self.root}/_replicator/state"

    @property
    def pending_uri(self) -> str:
        """URI of the folder of pending-event files."""
        return f"{self.root}/_replicator/pending"

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

    def forget(self, uri: str) -> None:
        """Drop an open handle (another process wrote the table: housekeeping)."""
        self._tables.pop(uri, None)

    def done(self, uri: str, app: str, batch: int) -> bool:
        """True when ``uri`` already holds the commit of ``batch`` (application transaction)."""
        dt = self.open_table(uri)
        version = dt.transaction_version(app) if dt is not None else None
        return version is not None and version >= batch

    def _props(self, app: str, batch: int, applied_scn: int | None = None) -> Any:
        from deltalake import CommitProperties, Transaction

        meta = {APP_KEY: app, BATCH_KEY: str(batch)}
        if applied_scn is not None:
            meta[APPLIED_KEY] = str(applied_scn)
        return CommitProperties(app_transactions=[Transaction(app, batch)], custom_metadata=meta)

    def ensure(self, uri: str, schema: Any, partition_by: list[str]) -> Any:
        """The table at ``uri``, created empty with ``schema`` when absent; columns of ``schema`` it
        lacks are added (ALTER TABLE ADD COLUMNS: no data commit, safe to repeat)."""
        from deltalake import write_deltalake

        dt = self.open_table(uri)
        if dt is None:
            write_deltalake(
                uri,
                schema.empty_table(),
                mode="append",
                partition_by=partition_by or None,
                storage_options=self.storage_options,
            )
            return self.open_table(uri)
        have = set(dt.schema().to_arrow().names) if hasattr(dt.schema(), "to_arrow") else set()
        missing = [f for f in schema if f.name not in have]
        if missing:
            import pyarrow as pa

            dt.alter.add_columns(_delta_fields(pa.schema(missing)))
            dt.update_incremental()
        return dt

    def snapshot_files(self, uri: str, app: str, batch: int, first_key: str) -> list[DataFile]:
        """The data files of ``uri`` as the batch found them when it first started: the version
        before the batch's own commit when that commit was made (a replay), else the current one."""
        import pyarrow as pa
        from deltalake import DeltaTable

        dt = self.open_table(uri)
        if dt is None:
            return []
        if self.done(uri, app, batch):
            version = self._version_of(dt, app, batch)
            if version is not None and version > 0:
                dt = DeltaTable(uri, version=version - 1, storage_options=self.storage_options)
        return data_files(pa.table(dt.get_add_actions(flatten=True)), first_key)

    @staticmethod
    def _version_of(dt: Any, app: str, batch: int) -> int | None:
        for entry in dt.history(50):
            if entry.get(APP_KEY) == app and entry.get(BATCH_KEY) == str(batch):
                return int(entry["version"])
        return None

    def commit(
        self,
        uri: str,
        adds: list[dict[str, Any]],
        removes: list[dict[str, Any]],
        schema: Any,
        partition_by: list[str],
        app: str,
        batch: int,
        overwrite: bool = False,
        applied_scn: int | None = None,
    ) -> None:
        """One commit of files the executors wrote (add and remove actions) with the batch's
        application transaction; ``overwrite`` replaces every file and the schema."""
        from deltalake.transaction import AddAction, RemoveAction

        dt = self.open_table(uri)
        now = int(time.time() * 1000)
        actions: list[Any] = [
            AddAction(a["path"], a["size"], json.loads(a["part"] or "{}"), now, True, a.get("stats") or "{}")
            for a in adds
        ]
        if not overwrite:
            actions += [RemoveAction(r["path"], True, now, r["size"], json.loads(r["part"] or "{}")) for r in removes]
        dt.create_write_transaction(
            actions,
            "overwrite" if overwrite else "append",
            schema,
            partition_by=partition_by or None,
            commit_properties=self._props(app, batch, applied_scn),
        )
        dt.update_incremental()

    def load_state(self) -> JobState:
        """The state the last committed batch left (an empty state before the first)."""
        dt = self.open_table(self.state_uri)
        if dt is None:
            return JobState()
        rows = dt.to_pyarrow_table().to_pylist()
        if not rows:
            return JobState()
        try:
            return JobState.from_json(rows[0]["state"])
        except ValueError as exc:
            from replicator.errors import ConfigError

            raise ConfigError(
                f"{self.root}: the lake was written by another version of the job ({exc}); its "
                "layout cannot be continued: start a new lake (and a new checkpoint)",
                30002,
            ) from None

    def commit_state(self, state: JobState, app: str, batch: int) -> None:
        """Replace the state (the batch's last commit)."""
        import pyarrow as pa
        from deltalake import write_deltalake

        row = pa.table({"batch": pa.array([state.batch], pa.int64()), "state": [state.to_json()]})
        dt = self.open_table(self.state_uri)
        write_deltalake(
            dt if dt is not None else self.state_uri,
            row,
            mode="overwrite",
            schema_mode="overwrite",
            commit_properties=self._props(app, batch),
            storage_options=self.storage_options,
        )
        if dt is not None:
            dt.update_incremental()

    def _logged(self, scns: list[int], columns: list[str], table: str | None = None) -> Any:
        """Change-log rows (``columns``) of commit SCNs ``scns``, from the files whose commit SCN
        range holds one of them (and of partition ``table`` when given)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.dataset as ds

        dt = self.open_table(self.changes_uri) if scns else None
        if dt is None:
            return None
        actions = pa.table(dt.get_add_actions(flatten=True))
        parts = actions["partition.table"].to_pylist() if "partition.table" in actions.column_names else None
        files = data_files(actions, "commit_scn")
        wanted = [
            f.path
            for i, f in enumerate(files)
            if f.may_hold(scns) and (table is None or parts is None or parts[i] == table)
        ]
        if not wanted:
            return None
        fs = dt.to_pyarrow_dataset().filesystem
        logged = ds.dataset(wanted, format="parquet", filesystem=fs).to_table(columns=columns)
        return logged.filter(pc.is_in(logged["commit_scn"], pa.array(scns, pa.int64())))

    def logged_positions(
        self, table: str, candidates: set[tuple[int, int, int, int]]
    ) -> set[tuple[int, int, int, int]]:
        """The positions of ``candidates`` (changes of ``table``) the change log holds."""
        logged = self._logged(sorted({c[0] for c in candidates}), ["commit_scn", "c_scn", "c_idx", "elem"], table)
        if logged is None:
            return set()
        d = logged.to_pydict()
        return candidates & set(zip(d["commit_scn"], d["c_scn"], d["c_idx"], d["elem"]))

    def applied_transactions(self, candidates: set[tuple[int, str | None]]) -> set[tuple[int, str | None]]:
        """The (commit SCN, xid) pairs of ``candidates`` the change log holds rows of.

        Only the change-log files whose commit SCN range (statistics) holds a candidate are
        read, two columns of them: a leftover of an old transaction costs the files of its
        SCNs, not a scan of the whole history."""
        logged = self._logged(sorted({s for s, _ in candidates}), ["commit_scn", "xid"])
        if logged is None:
            return set()
        found = set(zip(logged["commit_scn"].to_pylist(), logged["xid"].to_pylist()))
        return candidates & found
