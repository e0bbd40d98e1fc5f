"""The parts of a batch that run in the executors: projection, routing, the fold of each group.

A micro-batch's events stay in the executors (the batch DataFrame is persisted there). Three
functions run over them, each in the executors' Python workers:

* :func:`project` (``mapInArrow``) -> what the driver needs to order transactions and plan
  the tables: kind, table, position, xid, column lists, DDL text, key hints; no images.
* :func:`route` (``mapInArrow``), after the driver's :class:`~.assemble.Decision`: the ready
  row changes of each table keyed (typed keys, :mod:`.layout`) and cut into one Arrow blob
  per (table, bucket); the events that wait for the rest of their transaction as one more.
* :func:`fold_partition` (``repartition(table, bucket).mapInArrow``): each (table, bucket) group --
  or the whole table, when the batch moves primary keys or rewrites it (DDL) -- folded over
  the stored rows of that bucket's files that can hold its keys (:func:`.tablefold.fold_table`);
  the files holding a changed key are rewritten with their other rows, tombstones go to the
  tombstone table, the group's share of the change log is written; it returns the Delta add
  and remove actions, which the driver commits (:mod:`.commit`).

Nothing is visible before the driver commits: files written by a batch that fails or is
killed are never referenced, and vacuum removes them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from replicator.spark.assemble import Decision
from replicator.spark.eventpack import pack
from replicator.spark.layout import DataFile, buckets_of, canonical, filesystem, keys_json, write_files
from replicator.spark.tableschema import BUCKET, ROWID, TableSchema

WHOLE: Final = -2  # the group of a table folded in one task (key moves, rewrites)
PENDING: Final = -1  # the group of the events kept for the next batch
TOMB_FILES: Final = 4  # tombstone files of a bucket at which a batch with deletes merges them into one
ROUTED_SCHEMA: Final = "tbl string, bucket int, rows bigint, events binary"
ACTIONS_SCHEMA: Final = (
    "kind string, target string, tbl string, path string, size bigint, part string, "
    "stats string, rows bigint, info string"
)
PROJECTED: Final = (
    "kind",
    "fmt",
    "tbl",
    "op",
    "commit_scn",
    "c_scn",
    "c_idx",
    "elem",
    "xid",
    "commit_ts",
    "rid",
    "key_cols",
    "columns",
    "sql",
    "full",
    "error",
    "k_partition",
    "k_offset",
    "k_ts",
    "seen",
    "digest",
    "check",
)
# The event columns a fold reads (:func:`_fold`, :func:`.tablefold.change_rows`): routing only
# these keeps the other columns (column lists, digests, the Kafka timestamp...) out of the shuffle.
FOLDED: Final = (
    "kind",
    "op",
    "commit_scn",
    "c_scn",
    "c_idx",
    "elem",
    "xid",
    "commit_ts",
    "rid",
    "before",
    "after",
    "sql",
    "k_partition",
    "k_offset",
)
# What the projection reads of a table's row changes (the images only for their names and keys).
PROJECT_READS: Final = ("op", "key_cols", "before", "after")


@dataclass(slots=True)
class TableTask:
    """What the executors know of one table for a batch."""

    name: str
    schema: TableSchema  # after the batch's DDL
    arrow: Any  # the current-state table's Arrow schema (with _bucket)
    tomb_arrow: Any  # the tombstone table's Arrow schema (with _bucket)
    uri: str
    tomb_uri: str
    files: list[DataFile] = field(default_factory=list)  # the batch-start snapshot of the table
    tomb_files: list[DataFile] = field(default_factory=list)
    renames: dict[str, str] = field(default_factory=dict)
    rewrite: bool = False
    truncated_now: bool = False
    whole: bool = False  # one group for the whole table (key moves or a rewrite in this batch)
    recent_uri: str = ""  # merge-on-read: where the batch's records go (:mod:`.mor`)
    recent_arrow: Any = None


@dataclass(slots=True)
class BatchTask:
    """What the executors know of a batch (shipped with the functions)."""

    batch: int
    decision: Decision
    tables: dict[str, TableTask]
    changes_uri: str
    pending_uri: str
    storage_options: dict[str, str] | None
    timestamp_code: int = 0
    tz_code: int = 0
    unbounded: str = "string"
    write_log: bool = True  # False when the change log already holds this batch (a replay)
    want_lags: bool = False  # report the commit times of the applied changes (latency benchmark)


def _events(batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    for b in batches:
        for blob in b.column("events").to_pylist():
            if blob:
                yield pa.ipc.open_stream(blob).read_all()


# ---------------------------------------------------------------------------------- projection


def project(batches: Iterator[Any], keys: dict[str, list[str] | None], resolver: Any) -> Iterator[Any]:
    """Packed events -> packed projections (:data:`PROJECTED` plus ``names`` and ``move``).

    ``names``: on the first row change of each table in a blob, the column names its images
    hold (for tables without column types). ``move``: the update changes a key column's text
    (with ``keys``, the key columns known to the driver, else those the resolver would pick)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for ev in _events(batches):
        n = ev.num_rows
        names: list[Any] = [None] * n
        move = [False] * n
        first_key: list[Any] = [None] * n
        dml = pc.equal(ev["kind"], "dml")
        tbls = ev["tbl"]
        for t in pc.unique(pc.filter(tbls, dml)).to_pylist():
            idx = pc.indices_nonzero(pc.and_(dml, pc.equal(tbls, t))).to_pylist()
            sub = ev.select(list(PROJECT_READS)).take(pa.array(idx, pa.int64()))
            before, after = sub["before"].combine_chunks(), sub["after"].combine_chunks()
            found: set[str] = set()
            for image in (before, after):
                found.update(x for x in pc.unique(image.keys).to_pylist() if x)
            names[idx[0]] = sorted(found)
            kc = sub["key_cols"].to_pylist()
            first_key[idx[0]] = next((k for k in kc if k), None)
            if t in keys:
                cols = keys[t]
            else:
                cols, _ = resolver.decide(t, first_key[idx[0]], False)
            if not cols:
                continue
            ops = sub["op"]
            differs = pa.array([False] * len(idx))
            for c in cols:
                b, a = pc.map_lookup(before, c, "last"), pc.map_lookup(after, c, "last")
                differs = pc.or_(differs, pc.fill_null(pc.not_equal(a, b), False))
            for j in pc.indices_nonzero(pc.and_(differs, pc.equal(ops, "u"))).to_pylist():
                move[idx[j]] = True
        out = ev.select(list(PROJECTED)).set_column(
            PROJECTED.index("key_cols"), "key_cols", pa.array(first_key, pa.list_(pa.string()))
        )
        out = out.append_column("names", pa.array(names, pa.list_(pa.string())))
        out = out.append_column("move", pa.array(move, pa.bool_()))
        for batch in out.combine_chunks().to_batches():
            yield pack(batch)


# ---------------------------------------------------------------------------------- routing


def _key_texts(sub: Any, schema: TableSchema, renames: dict[str, str]) -> tuple[list[Any], list[Any]]:
    """(new, old) text of each key column for the row changes ``sub``."""
    import pyarrow.compute as pc

    before, after = sub["before"].combine_chunks(), sub["after"].combine_chunks()
    olds = {new: old for old, new in renames.items()}
    new, old = [], []
    for c in schema.key or []:
        b, a = pc.map_lookup(before, c, "last"), pc.map_lookup(after, c, "last")
        if c in olds:  # an image from before a rename of the key column in this batch
            b = pc.coalesce(b, pc.map_lookup(before, olds[c], "last"))
            a = pc.coalesce(a, pc.map_lookup(after, olds[c], "last"))
        new.append(pc.coalesce(a, b))
        old.append(pc.coalesce(b, a))
    return new, old


def typed_keys(sub: Any, task: TableTask, bt: BatchTask) -> tuple[Any, Any]:
    """Canonical (new key, old key) Arrow string arrays of the row changes ``sub``."""
    from replicator.spark.arrowconv import convert

    schema = task.schema
    key = schema.key
    if key is None:
        rid = sub["rid"].combine_chunks()
        return rid, rid
    specs = {c["name"]: c for c in schema.columns}
    new_t, old_t = _key_texts(sub, schema, task.renames)

    def typed(texts: list[Any]) -> list[Any]:
        return [
            convert(
                t,
                specs.get(c, {"name": c, "type": "varchar2"}),
                bt.timestamp_code,
                bt.unbounded,
                schema.typed,
                bt.tz_code,
            )
            for c, t in zip(key, texts)
        ]

    return canonical(typed(new_t)), canonical(typed(old_t))


def route(batches: Iterator[Any], bt: BatchTask) -> Iterator[Any]:
    """Packed events -> :data:`ROUTED_SCHEMA` rows: per blob, one per (table, bucket) of ready
    row changes (with their canonical keys ``_nk``/``_ok``), one of the waiting events."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for ev in _events(batches):
        ready, held = bt.decision.masks(ev)
        if held is not None and pc.any(held).as_py():
            yield _routed("", PENDING, bt.decision.held(ev, held))
        # Each table's ready row changes are taken from the blob once (the fold sorts its group).
        dml = pc.fill_null(pc.and_(ready, pc.equal(ev["kind"], "dml")), False)
        tbls = ev["tbl"]
        for t in pc.unique(pc.filter(tbls, dml)).to_pylist():
            task = bt.tables.get(t)
            if task is None:  # committed before a restart
                continue
            mine = pc.indices_nonzero(pc.and_(dml, pc.fill_null(pc.equal(tbls, t), False)))
            sub = ev.select(list(FOLDED)).take(mine)
            nk, ok = typed_keys(sub, task, bt)
            deletes = pc.equal(sub["op"], "d")
            missing = pc.sum(pc.cast(pc.is_null(pc.if_else(deletes, ok, nk)), pa.int64())).as_py() or 0
            if missing:
                yield pa.RecordBatch.from_pydict(
                    {"tbl": [t], "bucket": [-3], "rows": [missing], "events": [None]}, schema=routed_arrow_schema()
                )
                continue
            sub = sub.append_column("_nk", nk).append_column("_ok", ok)
            if task.whole:
                yield _routed(t, WHOLE, sub)
                continue
            home = buckets_of(pc.if_else(deletes, ok, nk).to_pylist(), task.schema.buckets)
            for b in sorted(set(home.tolist())):
                yield _routed(t, b, sub.filter(pa.array(home == b)))


def routed_arrow_schema() -> Any:
    """:data:`ROUTED_SCHEMA` as an Arrow schema."""
    import pyarrow as pa

    return pa.schema([("tbl", pa.string()), ("bucket", pa.int32()), ("rows", pa.int64()), ("events", pa.binary())])


def _routed(tbl: str, bucket: int, events: Any) -> Any:
    import pyarrow as pa

    blob = pack(_one_batch(events))
    return pa.RecordBatch.from_arrays(
        [pa.array([tbl]), pa.array([bucket], pa.int32()), pa.array([events.num_rows], pa.int64()), blob.column(0)],
        schema=routed_arrow_schema(),
    )


def _one_batch(table: Any) -> Any:
    import pyarrow as pa

    table = table.combine_chunks()
    batches = table.to_batches()
    return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)


# ---------------------------------------------------------------------------------- the fold


def _read(fs: Any, files: list[DataFile], schema: Any, renames: dict[str, str]) -> list[tuple[DataFile, Any]]:
    import pyarrow.parquet as pq

    from replicator.spark.lakestore import conform

    out = []
    for f in files:
        with fs.open_input_file(f.path) as handle:  # a ParquetFile: no dataset discovery per file
            t = pq.ParquetFile(handle).read()
        if renames:
            t = t.rename_columns([renames.get(c, c) for c in t.column_names])
        out.append((f, conform(t, schema)))
    return out


def _first_values(keys: list[str], arrow_type: Any) -> list[Any] | None:
    """The first key column's values of canonical keys, comparable with the files' statistics."""
    import pyarrow as pa

    from replicator.spark.layout import SEP

    firsts = sorted({k.split(SEP, 1)[0] for k in keys})
    if pa.types.is_integer(arrow_type):
        return sorted(int(v) for v in firsts)
    if pa.types.is_string(arrow_type):
        return firsts
    return None


def fold_partition(batches: Iterator[Any], bt: BatchTask) -> Iterator[Any]:
    """A fold task: the routed rows of its (table, bucket) groups -> their actions
    (:data:`ACTIONS_SCHEMA`). Each group is folded on its own; the task writes one change-log
    file per table for all its groups (not one per bucket)."""
    import pyarrow as pa

    groups: dict[tuple[str, int], list[Any]] = {}
    missing: dict[str, int] = {}
    for b in batches:
        for tbl, bucket, rows, blob in zip(*(b.column(i).to_pylist() for i in range(4))):
            if bucket == -3:
                missing[tbl] = missing.get(tbl, 0) + rows
                continue
            group = groups.setdefault((tbl, bucket), [])  # a rewrite's group may come without events
            if blob:
                group.append(blob)
    actions: list[dict[str, Any]] = [{"kind": "error", "tbl": t, "rows": n} for t, n in sorted(missing.items())]
    logs: dict[str, list[Any]] = {}
    for (tbl, bucket), blobs in sorted(groups.items()):
        events = pa.concat_tables([pa.ipc.open_stream(blob).read_all() for blob in blobs]) if blobs else _no_events()
        if bucket == PENDING:
            actions.append(_write_pending(events, bt))
            continue
        done, log = _fold(tbl, bucket, events, bt)
        actions += done
        if log is not None:
            logs.setdefault(tbl, []).append(log)
    if bt.write_log and logs:
        from replicator.spark.lakestore import dir_name

        cfs = filesystem(bt.changes_uri, bt.storage_options)
        for tbl, parts in sorted(logs.items()):
            for a in write_files(
                cfs,
                pa.concat_tables(parts),
                ["commit_scn", "c_scn", "c_idx", "elem"],
                None,
                prefix=f"table={dir_name(tbl)}/",
            ):
                actions.append(
                    {
                        "kind": "add",
                        "target": "changes",
                        "tbl": tbl,
                        "path": a["path"],
                        "size": a["size"],
                        "part": json.dumps({"table": tbl}),
                        "stats": a["stats"],
                        "rows": a["rows"],
                    }
                )
    yield from _actions(actions).to_batches()


def _no_events() -> Any:
    """An empty routed events table (the group of a table rewritten by DDL alone)."""
    import pyarrow as pa

    from replicator.spark.parse import event_arrow_schema

    events = event_arrow_schema()
    folded = [events.field(name) for name in FOLDED]
    return pa.schema([*folded, pa.field("_nk", pa.string()), pa.field("_ok", pa.string())]).empty_table()


def rewrite_groups(bt: BatchTask) -> list[tuple[str, int, int, bytes | None]]:
    """Routed rows (:data:`ROUTED_SCHEMA`) that give each table rewritten by the batch's DDL its
    whole-table group even when the batch holds no row change of it (a RENAME alone)."""
    return [(name, WHOLE, 0, None) for name, task in sorted(bt.tables.items()) if task.rewrite]


def _write_pending(events: Any, bt: BatchTask) -> dict[str, Any]:
    import pyarrow as pa

    fs = filesystem(bt.pending_uri, bt.storage_options)
    path = f"batch-{bt.batch}-{uuid.uuid4()}.arrows"
    with fs.open_output_stream(path) as out, pa.ipc.new_stream(out, events.schema) as w:
        w.write_table(events)
    return {"kind": "pending", "target": "pending", "path": path, "rows": events.num_rows}


class _Scalars(dict[str, Any]):
    """The per-row scalars :func:`.tablefold.fold_table` reads as Python lists (commit times as
    microseconds), each made on first use: the fold's vectorised pass reads the Arrow columns
    (``_ready``) and needs none of them."""

    def __init__(self, events: Any) -> None:
        super().__init__(_ready=events)
        self._events = events

    def __missing__(self, name: str) -> list[Any]:
        import pyarrow as pa

        column = self._events.column(name)
        values: list[Any] = (column.cast(pa.int64()) if name == "commit_ts" else column).to_pylist()
        self[name] = values
        return values


def _ev(events: Any) -> dict[str, Any]:
    """The events of a group as :func:`.tablefold.fold_table` reads them."""
    return _Scalars(events)


def _records(tbl: str, bucket: int, events: Any, bt: BatchTask) -> tuple[list[dict[str, Any]], Any]:
    """Merge-on-read: fold the group's changes among themselves; write one record per key moved."""
    import pyarrow as pa

    from replicator.spark.lakestore import conform
    from replicator.spark.tablefold import TablePlan, change_rows, fold_table

    task = bt.tables[tbl]
    ev = _ev(events)
    plan = TablePlan(
        task.schema,
        rows=list(range(events.num_rows)),
        renames=task.renames,
        keys=list(zip(events["_nk"].to_pylist(), events["_ok"].to_pylist())),
    )
    folded = fold_table(ev, plan, None, bt.timestamp_code, bt.unbounded, bt.tz_code, chains=True)
    out = folded.rows
    if task.schema.key is None:
        out = out.append_column("_rowid", out["_key"])
    out = out.append_column("_batch", pa.array([bt.batch] * out.num_rows, pa.int64()))
    sch = pa.schema([f for f in task.recent_arrow if f.name != BUCKET])
    fs = filesystem(task.recent_uri, bt.storage_options)
    actions: list[dict[str, Any]] = []
    homes = buckets_of(out["_key"].to_pylist(), task.schema.buckets) if bucket == WHOLE else None
    for b in sorted(set(homes.tolist())) if homes is not None else [bucket]:
        part = out.filter(pa.array(homes == b)) if homes is not None else out
        for a in write_files(fs, conform(part, sch), ["_key"], b):
            actions.append(
                {
                    "kind": "add",
                    "target": "recent",
                    "tbl": tbl,
                    "path": a["path"],
                    "size": a["size"],
                    "part": json.dumps(a["partition"]),
                    "stats": a["stats"],
                    "rows": a["rows"],
                }
            )
    info: dict[str, object] = {  # the task's report to the driver (JSON)
        "applied": len(folded.changes),
        "stale": folded.stale,
        "files_read": 0,
        "bytes_read": 0,
        "files_removed": 0,
        "files_added": len(actions),
        "bytes_added": sum(a["size"] for a in actions),
    }
    if bt.want_lags:
        info["commit_ts"] = [ev["commit_ts"][i] for i in folded.changes if ev["commit_ts"][i] is not None]
    actions.append({"kind": "info", "tbl": tbl, "info": json.dumps(info)})
    log = None
    if bt.write_log and folded.changes:
        log = change_rows(ev, tbl, folded.changes, keys_json(folded.change_keys), [])
    return actions, log


def _fold(tbl: str, bucket: int, events: Any, bt: BatchTask) -> tuple[list[dict[str, Any]], Any]:
    """Fold one group; its actions and its change-log rows (None when it logs nothing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from replicator.spark.assemble import SORT
    from replicator.spark.lakestore import conform
    from replicator.spark.tablefold import TablePlan, change_rows, conform_stored, fold_table

    task = bt.tables[tbl]
    schema = task.schema
    order = pc.sort_indices(events, SORT)
    if task.recent_uri:
        return _records(tbl, bucket, events.take(order), bt)
    ev = _ev(events)
    nks, oks = events["_nk"], events["_ok"]
    rows = order.to_pylist()  # the fold takes the events in position order (no sorted copy of the group)
    plan = TablePlan(
        schema,
        rows=rows,
        renames=task.renames,
        rewrite=task.rewrite,
        truncated_now=task.truncated_now,
        key_arrays=(nks.take(order), oks.take(order)),  # the loop makes its lists from them if it runs
    )
    whole = bucket == WHOLE
    data_schema = pa.schema([f for f in task.arrow if f.name != BUCKET])
    fs = filesystem(task.uri, bt.storage_options)
    tfs = filesystem(task.tomb_uri, bt.storage_options)
    key_names = schema.key_names
    # The stored rows that can hold the batch's keys: the bucket's files (every file of the table
    # when it is folded whole) whose first-key range holds one of them; all of them on a rewrite.
    keys = pc.unique(pa.concat_arrays([a.combine_chunks() for a in (nks, oks)]).drop_null()).to_pylist()
    first = _first_values(keys, data_schema.field(key_names[0]).type) if key_names[0] in data_schema.names else None
    read_keys: list[Any] = []

    def candidates(files: list[DataFile], values: list[Any] | None) -> list[DataFile]:
        mine = [f for f in files if whole or f.bucket == bucket]
        if plan.rewrite or values is None:
            return mine
        return [f for f in mine if f.may_hold(values)]

    read = _read(fs, candidates(task.files, first), data_schema, task.renames if plan.rewrite else {})
    for _, t in read:
        read_keys.append(canonical([t[k] for k in key_names]))
    tomb_schema = pa.schema([f for f in task.tomb_arrow if f.name != BUCKET])
    tomb_read = _read(tfs, candidates(task.tomb_files, sorted(keys)), tomb_schema, {})
    read_keys += [t["_key"] for _, t in tomb_read]
    parts = [t.append_column("_key", k) for (_, t), k in zip(read, read_keys)]
    parts += [conform(t, pa.schema([*data_schema, pa.field("_key", pa.string())])) for _, t in tomb_read]
    stored = None
    if parts:
        stored = pa.concat_tables(parts)
        if not plan.rewrite:
            stored = stored.filter(pc.is_in(stored["_key"], pa.array(keys, pa.string())))
        stored = conform_stored(stored, plan)
    folded = fold_table(ev, plan, stored, bt.timestamp_code, bt.unbounded, bt.tz_code)
    out = folded.rows
    info: dict[str, object] = {  # the task's report to the driver (JSON)
        "applied": len(folded.changes),
        "stale": folded.stale,
        "files_read": len(read) + len(tomb_read),
        "bytes_read": sum(f.size for f, _ in read + tomb_read),
    }
    if bt.want_lags:
        info["commit_ts"] = [ev["commit_ts"][i] for i in folded.changes if ev["commit_ts"][i] is not None]
    actions: list[dict[str, Any]] = []
    changed = pa.array(out["_key"].to_pylist() if not plan.rewrite else [], pa.string())

    live = out.filter(pc.not_equal(out["_op"], "d"))
    dead = out.filter(pc.equal(out["_op"], "d"))

    def rewrite(files: list[tuple[DataFile, Any]], keyed: list[Any], target: str, merge: bool = False) -> list[Any]:
        """Remove the files holding a changed key (every file on a rewrite; with ``merge``, every
        file read); their other rows."""
        rest = []
        for (f, t), k in zip(files, keyed):
            if plan.rewrite:
                hit = True
            else:
                mask = pc.is_in(k, changed)
                hit = merge or pc.any(mask).as_py()
                if hit:
                    rest.append(t.filter(pc.invert(mask)))
            if hit:
                actions.append(
                    {
                        "kind": "remove",
                        "target": target,
                        "tbl": tbl,
                        "path": f.path,
                        "size": f.size,
                        "part": json.dumps({BUCKET: str(f.bucket)}),
                    }
                )
        return rest

    rest = rewrite(read, read_keys[: len(read)], "table")
    # A batch's new tombstones are files of their own, until a bucket holds TOMB_FILES of them: then
    # they take the tombstone files read with them into one file per bucket. Appended for ever, a
    # bucket's tombstones grew by a file per batch with deletes, and every later batch read them all
    # (their key ranges span the bucket); merged every batch, each batch with deletes rewrote them.
    per_bucket: dict[int, int] = {}
    for f, _ in tomb_read:
        per_bucket[f.bucket] = per_bucket.get(f.bucket, 0) + 1
    merge = dead.num_rows > 0 and max(per_bucket.values(), default=0) >= TOMB_FILES
    tomb_rest = rewrite(tomb_read, read_keys[len(read) :], "tombstones", merge=merge)
    if schema.key is None:
        live = live.append_column(ROWID, live["_key"])
    for target, new, kept, sch, tfs_, sort in (
        ("table", live, rest, data_schema, fs, key_names),
        ("tombstones", dead, tomb_rest, tomb_schema, tfs, ["_key"]),
    ):
        data = pa.concat_tables([conform(t, sch) for t in [*kept, new]]) if kept or new.num_rows else None
        if data is None or not data.num_rows:
            continue
        keyed = data["_key"] if target == "tombstones" else canonical([data[k] for k in key_names])
        homes = buckets_of(keyed.to_pylist(), schema.buckets) if whole else None
        for b in sorted(set(homes.tolist())) if homes is not None else [bucket]:
            part = data.filter(pa.array(homes == b)) if homes is not None else data
            for a in write_files(tfs_, part, sort, b):
                actions.append(
                    {
                        "kind": "add",
                        "target": target,
                        "tbl": tbl,
                        "path": a["path"],
                        "size": a["size"],
                        "part": json.dumps(a["partition"]),
                        "stats": a["stats"],
                        "rows": a["rows"],
                    }
                )
    log = None
    if bt.write_log and folded.changes:
        log = change_rows(ev, tbl, folded.changes, keys_json(folded.change_keys), [])
    info["files_removed"] = sum(1 for a in actions if a["kind"] == "remove")
    info["files_added"] = sum(1 for a in actions if a["kind"] == "add" and a["target"] != "changes")
    info["bytes_added"] = sum(a["size"] for a in actions if a["kind"] == "add" and a["target"] != "changes")
    actions.append({"kind": "info", "tbl": tbl, "info": json.dumps(info)})
    return actions, log


def actions_arrow_schema() -> Any:
    """:data:`ACTIONS_SCHEMA` as an Arrow schema."""
    import pyarrow as pa

    return pa.schema(
        [(n, pa.int64() if t == "bigint" else pa.string()) for n, t in (f.split() for f in ACTIONS_SCHEMA.split(", "))]
    )


def _actions(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    schema = actions_arrow_schema()
    return pa.table({f.name: pa.array([r.get(f.name) for r in rows], f.type) for f in schema}, schema=schema)


def read_pending(batches: Iterator[Any], pending_uri: str, storage_options: dict[str, str] | None) -> Iterator[Any]:
    """Rows of pending file paths -> packed events (the events a batch kept for the next one)."""
    import pyarrow as pa

    fs = filesystem(pending_uri, storage_options)
    for b in batches:
        for path in b.column("path").to_pylist():
            with fs.open_input_stream(path) as f:
                events = _current_columns(pa.ipc.open_stream(f).read_all())
            if events.num_rows:
                yield pack(_one_batch(events))


def _current_columns(events: Any) -> Any:
    """Pending events as this version lays them out: event columns a file written by an older
    job lacks (``digest``, ``check``) are added as NULL in their place."""
    import pyarrow as pa

    from replicator.spark.parse import event_arrow_schema

    base = event_arrow_schema()
    if all(name in events.column_names for name in base.names):
        return events
    fields = [*base, *(f for f in events.schema if f.name not in base.names)]
    return pa.Table.from_arrays(
        [events[f.name] if f.name in events.column_names else pa.nulls(events.num_rows, f.type) for f in fields],
        schema=pa.schema(fields),
    )
