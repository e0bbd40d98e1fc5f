"""Reading a lake the job wrote, without Spark: the public read API.

>>> lake = LakeReader("/data/lake")
>>> lake.applied_scn()                      # every change committed at or below it is in the lake
>>> lake.table_applied_scn("SHOP.ORDERS")   # what that table's last commit brought it to
>>> lake.current_rows("SHOP.ORDERS")        # pyarrow Table of the live rows (typed columns)
>>> for batch in lake.iter_changes("SHOP.ORDERS", to_scn=lake.applied_scn()): ...

A crash between two commits of a batch can leave a table one batch ahead of the state;
``table_applied_scn`` tells (the state's ``applied_scn`` is never ahead of any table). The
change log holds each applied change once, with its position (``commit_scn``, ``c_scn``,
``c_idx``, ``elem``), ``op``, ``key`` (JSON array of the key values) and the before/after
images as text; tombstones (keys deleted, kept apart from the current rows) are read with
:meth:`LakeReader.tombstones`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from replicator.spark.lakestore import APPLIED_KEY, DeltaLake
from replicator.spark.layout import data_files


class LakeReader:
    """Read-only access to a lake (a directory or a URI delta-rs opens)."""

    def __init__(self, lake: str, storage_options: dict[str, str] | None = None):
        self.store = DeltaLake(lake, storage_options)

    def applied_scn(self) -> int:
        """The highest commit SCN the lake has applied as a whole (0 before the first batch)."""
        return self.store.load_state().applied_scn

    def tables(self) -> list[str]:
        """The source tables the lake holds (OWNER.TABLE)."""
        return sorted(self.store.load_state().tables)

    def key_columns(self, table: str) -> list[str]:
        """The columns identifying a row of ``table`` (``_rowid`` for a table keyed by ROWID)."""
        return self.store.load_state().tables[table].key_names

    def schema(self, table: str) -> Any:
        """The job's view of ``table`` (:class:`~replicator.spark.tableschema.TableSchema`:
        columns as OLR describes them, key, mode), or None when the lake does not hold it."""
        return self.store.load_state().tables.get(table)

    def arrow_schema(self, table: str) -> Any:
        """The pyarrow schema the current rows of ``table`` are stored with (None before its
        first commit)."""
        dt = self.store.open_table(self.store.table_uri(table))
        return None if dt is None else dt.schema().to_arrow()

    def table_applied_scn(self, table: str) -> int:
        """The applied SCN of the batch that made the table's last commit (the state's when none)."""
        dt = self.store.open_table(self.store.table_uri(table))
        if dt is not None:
            for entry in dt.history(20):
                if APPLIED_KEY in entry:
                    return int(entry[APPLIED_KEY])
        return self.applied_scn()

    def _rows(self, uri: str, columns: list[str] | None, with_metadata: bool) -> Any:
        dt = self.store.open_table(uri)
        if dt is None:
            return None
        rows = dt.to_pyarrow_table(columns=columns)
        if with_metadata or columns is not None:
            return rows
        return rows.select([c for c in rows.column_names if not c.startswith("_")])

    def current_rows(self, table: str, columns: list[str] | None = None, with_metadata: bool = False) -> Any:
        """The live rows of ``table`` (pyarrow Table; data columns only unless ``with_metadata``);
        None before its first commit. A merge-on-read table's records are merged in (:mod:`.mor`)."""
        schema = self.store.load_state().tables.get(table)
        if schema is not None and schema.merge_on_read:
            from replicator.spark.mor import current_rows

            rows = current_rows(self.store, table, schema, with_metadata=with_metadata or columns is not None)
            return rows if rows is None or columns is None else rows.select(columns)
        return self._rows(self.store.table_uri(table), columns, with_metadata)

    def iter_current_rows(self, table: str, batch_size: int = 65536) -> Iterator[Any]:
        """The live rows of ``table`` as record batches with their metadata columns, file by file
        (bounded memory; a merge-on-read table is merged as a whole first)."""
        schema = self.store.load_state().tables.get(table)
        if schema is not None and schema.merge_on_read:
            rows = self.current_rows(table, with_metadata=True)
            if rows is not None:
                yield from rows.to_batches(max_chunksize=batch_size)
            return
        dt = self.store.open_table(self.store.table_uri(table))
        if dt is None:
            return
        yield from dt.to_pyarrow_dataset().to_batches(batch_size=batch_size)

    def tombstones(self, table: str) -> Any:
        """The deleted keys of ``table`` with the position of their delete (pyarrow Table), or None."""
        return self._rows(self.store.tomb_uri(table), None, True)

    def iter_changes(
        self, table: str | None = None, from_scn: int | None = None, to_scn: int | None = None
    ) -> Iterator[Any]:
        """Change-log rows (record batches, each sorted by position) of ``table`` (all tables when
        None) with ``from_scn <= commit_scn <= to_scn``; only the files whose commit SCN range meets
        the bounds are read."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        dt = self.store.open_table(self.store.changes_uri)
        if dt is None:
            return
        actions = pa.table(dt.get_add_actions(flatten=True))
        parts = actions["partition.table"].to_pylist() if "partition.table" in actions.column_names else None
        fs = dt.to_pyarrow_dataset().filesystem
        schema = dt.schema().to_arrow()
        for i, f in enumerate(data_files(actions, "commit_scn")):
            if table is not None and parts is not None and parts[i] != table:
                continue
            if f.low is not None and (
                (to_scn is not None and f.low > to_scn) or (from_scn is not None and f.high < from_scn)
            ):
                continue
            rows = _without_views(pq.read_table(f.path, filesystem=fs))
            if "table" not in rows.column_names:
                rows = rows.append_column("table", pa.array([parts[i] if parts else None] * rows.num_rows, pa.string()))
            mask = None
            if from_scn is not None:
                mask = pc.greater_equal(rows["commit_scn"], from_scn)
            if to_scn is not None:
                upper = pc.less_equal(rows["commit_scn"], to_scn)
                mask = upper if mask is None else pc.and_(mask, upper)
            if mask is not None:
                rows = rows.filter(mask)
            if rows.num_rows:
                names = [n for n in pa.schema(schema).names if n in rows.column_names]
                yield from (
                    rows.select(names)
                    .sort_by([(c, "ascending") for c in ("commit_scn", "c_scn", "c_idx", "elem")])
                    .to_batches()
                )


def _view_free(t: Any) -> Any:
    """``t`` with string/binary views (other Delta writers, delta-rs among them, write them)
    as plain strings/binaries, nested types too: pyarrow's filter and sort lack view kernels."""
    import pyarrow as pa

    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_map(t):
        return pa.map_(_view_free(t.key_type), _view_free(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_view_free(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _view_free(f.type), f.nullable) for f in t])
    return t


def _without_views(rows: Any) -> Any:
    import pyarrow as pa

    schema = pa.schema([pa.field(f.name, _view_free(f.type), f.nullable) for f in rows.schema])
    return rows if schema.equals(rows.schema) else rows.cast(schema)
