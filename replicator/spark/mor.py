"""Merge-on-read tables (``--mode merge-on-read``): a batch writes what it changed, nothing more.

A batch folds each (table, bucket) group over its own changes only -- no stored file is
read -- and appends one *record* per key it moved to ``<lake>/_replicator/recent/<TABLE>``
(a Delta table partitioned by ``_bucket``): the key's image as the batch leaves it, with
``_set`` (the columns the batch's changes set; all of them for an image that starts with an
insert), ``_base`` (the key whose row the partial image lies over: the key itself, or the
old key of a primary-key update; NULL for a whole image), ``_first_*`` (the position of the
first change), ``_batch``, and ``_op = 'd'`` for a delete. The per-batch work is the batch's.

The current rows are the current-state table (``tables/<TABLE>``, as of the last
compaction) with the records laid over it, batch by batch: a record whose position is not
newer than the key's row or tombstone is a replay and is skipped; a partial image takes
the other columns from its ``_base`` row as the batch before left it. :func:`resolve` does
that; :class:`replicator.spark.lake_read.LakeReader` returns the merged rows, and
compaction (:func:`compact_table`, ``replicator spark compact``, ``--compact-every``) writes
them into the current-state table -- rewriting only the buckets the records touch -- and
removes the records it merged (positions make a repeated merge harmless).

Replays: a change at or below the lake's applied SCN whose position the change log already
holds is dropped by the driver before the fold (the change log is read only where its
commit SCN ranges meet the batch's), so nothing is logged or recorded twice.
"""

from __future__ import annotations

import json
from typing import Any, Final

from replicator.spark.tableschema import BUCKET, TableSchema

MODES: Final = ("copy-on-write", "merge-on-read")
CHAIN_COLUMNS: Final = ("_set", "_base", "_first_commit_scn", "_first_c_scn", "_first_c_idx", "_first_elem")
POS: Final = ("_commit_scn", "_c_scn", "_c_idx", "_elem")


def recent_arrow(schema: TableSchema, unbounded: str) -> Any:
    """The Arrow schema of a table's records (the table's columns, ``_key``, the chain columns)."""
    import pyarrow as pa

    from replicator.spark.layout import table_arrow

    base = [f for f in table_arrow(schema, unbounded) if f.name != BUCKET]
    extra = [
        pa.field("_key", pa.string()),
        pa.field("_set", pa.list_(pa.string())),
        pa.field("_base", pa.string()),
        pa.field("_first_commit_scn", pa.int64()),
        pa.field("_first_c_scn", pa.int64()),
        pa.field("_first_c_idx", pa.int64()),
        pa.field("_first_elem", pa.int32()),
        pa.field("_batch", pa.int64()),
        pa.field(BUCKET, pa.int32()),
    ]
    return pa.schema([*base, *extra])


def resolve(stored: Any, tombs: dict[str, tuple[int, ...]], records: Any, data: list[str]) -> tuple[dict, dict]:
    """Lay ``records`` over the stored rows of the keys they touch.

    ``stored``: those rows (pyarrow, with ``_key``); ``tombs``: key -> position of its
    tombstone; ``data``: the data and metadata columns of a row. Returns (key -> row dict for
    the keys left live, key -> tombstone dict for the keys left deleted)."""
    state: dict[str, dict[str, Any] | None] = {}
    pos: dict[str, tuple[int, ...]] = dict(tombs)
    for row in stored.to_pylist() if stored is not None else []:
        state[row["_key"]] = row
        pos[row["_key"]] = tuple(row[c] for c in POS)
    for k in tombs:
        state.setdefault(k, None)
    recs = (
        records.sort_by(
            [
                ("_batch", "ascending"),
                ("_commit_scn", "ascending"),
                ("_c_scn", "ascending"),
                ("_c_idx", "ascending"),
                ("_elem", "ascending"),
            ]
        ).to_pylist()
        if records is not None
        else []
    )
    i = 0
    while i < len(recs):
        batch = recs[i]["_batch"]
        before = dict(state)  # what the batch before left: the base of a partial image
        while i < len(recs) and recs[i]["_batch"] == batch:
            r = recs[i]
            i += 1
            k = r["_key"]
            p = tuple(r[c] for c in POS)
            if k in pos and p <= pos[k]:
                continue  # a replay, or merged before
            pos[k] = p
            if r["_op"] == "d":
                state[k] = None
                continue
            if r["_base"] is None:
                row = {c: r.get(c) for c in data}
            else:
                base = before.get(r["_base"])
                row = {c: (base or {}).get(c) for c in data}
                for c in r["_set"] or ():
                    row[c] = r.get(c)
            for c in (*POS, "_op", "_xid", "_commit_ts"):
                row[c] = r[c]
            row["_key"] = k
            state[k] = row
    live = {k: v for k, v in state.items() if v is not None}
    dead = {k: {"_key": k, **dict(zip(POS, pos[k]))} for k, v in state.items() if v is None and k in pos}
    return live, dead


def _records(lake: Any, table: str) -> tuple[Any, list[Any]]:
    """All records of a table (pyarrow, or None) and the add actions of their files."""
    import pyarrow as pa

    dt = lake.open_table(lake.recent_uri(table))
    if dt is None:
        return None, []
    rows = dt.to_pyarrow_table()
    return rows, pa.table(dt.get_add_actions(flatten=True)).to_pylist()


def current_rows(lake: Any, table: str, schema: TableSchema, with_metadata: bool = False) -> Any:
    """The live rows of a merge-on-read table: its stored rows with its records laid over them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from replicator.spark.layout import canonical

    dt = lake.open_table(lake.table_uri(table))
    if dt is None:
        return None
    records, _ = _records(lake, table)  # first: a compaction between the two reads is then harmless
    lake.forget(lake.table_uri(table))
    dt = lake.open_table(lake.table_uri(table))
    rows = dt.to_pyarrow_table()
    if records is not None and records.num_rows:
        keys = canonical([rows[k] for k in schema.key_names])
        touched = set(records["_key"].to_pylist()) | {b for b in records["_base"].to_pylist() if b is not None}
        hit = pc.is_in(keys, pa.array(sorted(touched), pa.string()))
        stored = rows.filter(hit).append_column("_key", keys.filter(hit))
        tombs = _tombstones(lake, table, touched)
        data = [f.name for f in rows.schema if f.name != BUCKET and not f.name.startswith("_")] + (
            [] if schema.key is not None else ["_rowid"]
        )
        live, _ = resolve(stored, tombs, records, data)
        merged = pa.Table.from_pylist(
            list(live.values()),
            schema=pa.schema([f for f in rows.schema if f.name != BUCKET] + [pa.field("_key", pa.string())]),
        )
        if schema.key is None:
            merged = merged.set_column(merged.schema.get_field_index("_rowid"), "_rowid", merged["_key"])
        merged = merged.drop_columns(["_key"]).append_column(BUCKET, pa.nulls(merged.num_rows, pa.int32()))
        rows = pa.concat_tables([rows.filter(pc.invert(hit)), merged.cast(rows.schema)])
    if with_metadata:
        return rows
    return rows.select([c for c in rows.column_names if not c.startswith("_")])


def _tombstones(lake: Any, table: str, keys: set[str]) -> dict[str, tuple[int, ...]]:
    import pyarrow as pa
    import pyarrow.compute as pc

    dt = lake.open_table(lake.tomb_uri(table))
    if dt is None:
        return {}
    t = dt.to_pyarrow_table(columns=["_key", *POS])
    t = t.filter(pc.is_in(t["_key"], pa.array(sorted(keys), pa.string())))
    return {r["_key"]: tuple(r[c] for c in POS) for r in t.to_pylist()}


def compact_table(lake: Any, table: str, schema: TableSchema, unbounded: str = "string") -> int:
    """Merge a table's records into its current-state and tombstone tables; returns the records merged.

    Per bucket the records touch: the files holding one of their keys are rewritten with the
    merged rows; then the records merged are removed (a crash between the commits leaves
    records the next merge skips by position)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from replicator.spark.lakestore import conform
    from replicator.spark.layout import (
        buckets_of,
        canonical,
        data_files,
        filesystem,
        table_arrow,
        tomb_arrow,
        write_files,
    )

    records, rec_files = _records(lake, table)
    if records is None or not records.num_rows:
        return 0
    arrow, tomb = table_arrow(schema, unbounded), tomb_arrow(schema, unbounded)
    data_schema = pa.schema([f for f in arrow if f.name != BUCKET])
    tomb_schema = pa.schema([f for f in tomb if f.name != BUCKET])
    uri, tomb_uri = lake.table_uri(table), lake.tomb_uri(table)
    lake.ensure(uri, arrow, [BUCKET])
    lake.ensure(tomb_uri, tomb, [BUCKET])
    touched = set(records["_key"].to_pylist()) | {b for b in records["_base"].to_pylist() if b is not None}
    buckets = {int(b) for b in buckets_of(sorted(touched), schema.buckets)}
    fs, tfs = filesystem(uri, lake.storage_options), filesystem(tomb_uri, lake.storage_options)
    key_names = schema.key_names
    want = pa.array(sorted(touched), pa.string())

    def read(path_uri: str, first: str, target_fs: Any, target_schema: Any) -> list[tuple[Any, Any, Any]]:
        lake.forget(path_uri)
        dt = lake.open_table(path_uri)
        out = []
        for f in data_files(pa.table(dt.get_add_actions(flatten=True)), first):
            if f.bucket not in buckets:
                continue
            with target_fs.open_input_file(f.path) as h:
                t = conform(pq.ParquetFile(h).read(), target_schema)
            keyed = t["_key"] if "_key" in t.column_names else canonical([t[k] for k in key_names])
            out.append((f, t, keyed))
        return out

    live_files = read(uri, key_names[0], fs, data_schema)
    tomb_files = read(tomb_uri, "_key", tfs, tomb_schema)
    stored = [t.filter(pc.is_in(k, want)).append_column("_key", k.filter(pc.is_in(k, want))) for _, t, k in live_files]
    stored_t = pa.concat_tables(stored) if stored else None
    tombs: dict[str, tuple[int, ...]] = {}
    for _, t, k in tomb_files:
        for r in t.filter(pc.is_in(k, want)).to_pylist():
            tombs[r["_key"]] = tuple(r[c] for c in POS)
    data = [f.name for f in data_schema if not f.name.startswith("_")] + ([] if schema.key is not None else ["_rowid"])
    live, dead = resolve(stored_t, tombs, records, data)
    adds: dict[str, list[dict[str, Any]]] = {"table": [], "tombstones": []}
    removes: dict[str, list[dict[str, Any]]] = {"table": [], "tombstones": []}
    for target, files, new_rows, sch, tfs_, sort in (
        ("table", live_files, live, data_schema, fs, key_names),
        ("tombstones", tomb_files, dead, tomb_schema, tfs, ["_key"]),
    ):
        keep = []
        for f, t, k in files:
            hit = pc.is_in(k, want)
            if pc.any(hit).as_py():
                removes[target].append({"path": f.path, "size": f.size, "part": json.dumps({BUCKET: str(f.bucket)})})
                keep.append(t.filter(pc.invert(hit)))
        rows = list(new_rows.values())
        fresh = (
            pa.Table.from_pylist(
                rows, schema=pa.schema([*sch, pa.field("_key", pa.string())]) if "_key" not in sch.names else sch
            )
            if rows
            else None
        )
        parts = [conform(t, sch) for t in keep] + ([conform(fresh, sch)] if fresh is not None else [])
        if not parts:
            continue
        merged = pa.concat_tables(parts)
        keyed = merged["_key"] if target == "tombstones" else canonical([merged[c] for c in key_names])
        homes = buckets_of(keyed.to_pylist(), schema.buckets)
        for b in sorted(set(homes.tolist())):
            for a in write_files(tfs_, merged.filter(pa.array(homes == b)), sort, b):
                adds[target].append(
                    {"path": a["path"], "size": a["size"], "part": json.dumps(a["partition"]), "stats": a["stats"]}
                )
    app = "replicator-compaction"
    version = int(pa.compute.max(records["_batch"]).as_py())
    for target, u, sch in (("tombstones", tomb_uri, tomb), ("table", uri, arrow)):
        if adds[target] or removes[target]:
            lake.commit(u, adds[target], removes[target], sch, [BUCKET], app, version)
    rec_uri = lake.recent_uri(table)
    lake.commit(
        rec_uri,
        [],
        [
            {
                "path": a["path"],
                "size": a["size_bytes"],
                "part": json.dumps({BUCKET: str(a.get(f"partition.{BUCKET}"))}),
            }
            for a in rec_files
        ],
        recent_arrow(schema, unbounded),
        [BUCKET],
        app,
        version,
    )
    return records.num_rows
