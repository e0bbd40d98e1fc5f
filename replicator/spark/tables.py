"""Per-table work of a batch: schemas and keys, DDL, and folding changes into buckets."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from replicator.errors import ConfigError, DataError
from replicator.spark.ddl import apply_ddl
from replicator.spark.fold import (
    change_events,
    fold,
    fresh_changes,
    keyed_changes,
    later_than,
    stored_events,
    stored_rows,
)
from replicator.spark.keys import KeyResolver
from replicator.spark.manifest import TableEntry
from replicator.spark.options import JobOptions
from replicator.spark.tableschema import TableSchema
from replicator.spark.txn import TableInfo

log = logging.getLogger("replicator.spark")


@dataclass(slots=True)
class TablePlan:
    """What a batch does to one table: the schema after the batch and DDL effects."""

    entry: TableEntry  # new entry (schema after this batch; buckets updated when written)
    before: TableEntry | None  # entry of the committed snapshot (layout of the stored files)
    renames: dict[str, str] = field(default_factory=dict)  # new name -> old name, this batch
    rewrite: bool = False  # rewrite every bucket (rename, truncate)
    has_rows: bool = False
    changes: Any = None  # keyed change rows (DataFrame)
    touched: list[int] = field(default_factory=list)  # stored buckets the changes fall into


def _infer_names(ready: Any, name: str) -> list[str]:
    from pyspark.sql import functions as F

    rows = (ready.where(F.col("tbl") == name)
            .select(F.explode(F.map_keys(F.coalesce("after", "before"))).alias("n")).distinct().collect())
    return sorted(r["n"] for r in rows)


def plan_tables(ready: Any, info: dict[str, TableInfo], ddl: list[Any], tables: dict[str, TableEntry],
                keys: KeyResolver) -> dict[str, TablePlan]:
    """Schemas (merged column lists, keys decided on first sight) and DDL of this batch."""
    plans: dict[str, TablePlan] = {}
    for name, ti in sorted(info.items()):
        old = tables.get(name)
        entry = TableEntry(old.schema.copy(), dict(old.buckets)) if old else TableEntry(TableSchema(name))
        schema = entry.schema
        ddl_scn = schema.ddl_at[0] if schema.ddl_at else -1
        for text, scn in sorted(ti.columns.items(), key=lambda kv: kv[1]):
            if scn > ddl_scn:  # lists from before the last DDL (replays) describe an older layout
                schema.merge_columns(json.loads(text))
        if not schema.columns or not schema.typed:
            if not schema.columns:  # format.schema 0: only the names in the images are known
                schema.typed = False
                log.warning("table %s: messages carry no column types (format option schema 0): values are "
                            "stored as text; set schema to 1 for typed columns", name)
            schema.merge_columns([{"name": n, "type": "varchar2"} for n in _infer_names(ready, name)])
        if not schema.key_origin and ti.rows:
            cols, origin = keys.decide(name, ti.key_cols, ti.has_rid)
            if not origin:
                raise ConfigError(f"table {name}: no primary key is known and its messages carry no ROWID; "
                                  "pass --key OWNER.TABLE=COLUMNS, --olr-config (schema checkpoint), "
                                  "or set the replicator's format option rid to 1", 30001)
            schema.key, schema.key_origin = cols, origin
            log.info("table %s: rows are identified by %s (%s)", name,
                     "ROWID" if cols is None else ", ".join(cols), origin)
        plans[name] = TablePlan(entry, old, has_rows=bool(ti.rows))
    for row in ddl:  # in stream order
        plan = plans.get(row["tbl"])
        if plan is None:
            continue
        pos = [row["commit_scn"], row["c_scn"], row["c_idx"], row["elem"]]
        schema = plan.entry.schema
        if schema.ddl_at is not None and pos <= schema.ddl_at:
            continue  # applied before: a replay
        result = apply_ddl(schema, row["sql"] or "")
        schema.ddl_at = pos
        log.info("table %s: DDL at SCN %s: %s", row["tbl"], row["commit_scn"], result.note)
        plan.rewrite = plan.rewrite or result.rewrite
        if result.truncate:
            schema.truncated_at = pos
        if result.changed and result.note.startswith("renamed"):
            old_name, new_name = result.note[len("renamed "):].split(" to ")
            plan.renames[new_name] = plan.renames.pop(old_name, old_name)
    return plans


def key_changes(ready: Any, plans: dict[str, TablePlan], buckets: int) -> Any:
    """Key the changes of every table at once; note the buckets each table touches.

    Returns the keyed rows, cached and clustered by table (the in-memory scan then skips
    other tables' batches when a table's rows are read), or None without row changes.
    Release it with ``unpersist`` after the batch.
    """
    from pyspark.sql import functions as F

    schemas = {name: plan.entry.schema for name, plan in plans.items() if plan.has_rows}
    if not schemas:
        return None
    keyed = keyed_changes(ready, schemas, buckets).repartition("tbl").sortWithinPartitions("tbl").persist()
    for r in keyed.groupBy("tbl").agg(F.collect_set("bucket").alias("buckets"),
                                      F.count(F.when(F.col("_key").isNull(), 1)).alias("nokey")).collect():
        plan = plans[r["tbl"]]
        _no_key(r["tbl"], plan.entry.schema, r["nokey"])
        plan.touched = sorted(b for b in r["buckets"] if b is not None)
    for name in schemas:
        plans[name].changes = keyed.where(F.col("tbl") == name)
    return keyed


def _no_key(name: str, schema: TableSchema, count: int) -> None:
    if count:
        what = "ROWID (rid)" if schema.key is None else f"key columns {schema.key}"
        raise DataError(f"table {name}: {count} change(s) without {what}; for missing key values enable "
                        "supplemental logging of the key or use ROWID keys (--rowid-table, format rid 1)", 20003)


def apply_table(store: Any, name: str, plan: TablePlan, version: str, opts: JobOptions, buckets: int) -> Any:
    """Fold this batch's changes of ``name`` into its buckets (written as ``version``).

    Returns the change-log rows of the table (a DataFrame) or None; the plan's entry gets
    the new version of every bucket written.
    """
    from pyspark.sql import functions as F

    schema, before = plan.entry.schema, plan.before
    touched = sorted(set(plan.touched) | (set(before.buckets) if plan.rewrite and before else set()))
    stored = None
    if before is not None and touched:
        stored = store.read_rows(name, before, before.schema.ddl_columns(opts.unbounded_number), touched)
    changes = plan.changes
    if changes is None:  # DDL only (TRUNCATE, RENAME): no rows, but buckets are rewritten
        from replicator.spark.parse import event_spark_schema

        changes = keyed_changes(store.spark.createDataFrame([], event_spark_schema()), {name: schema}, buckets)
    if schema.truncated_at is not None:
        changes = changes.where(later_than(schema.truncated_at))
    # The fold needs no staleness filter: an older change never wins over a stored row.
    events = change_events(changes, plan.renames)
    keep = None
    if stored is not None:
        if schema.truncated_at is not None:
            stored = stored.where(later_than(schema.truncated_at))
        changed = F.broadcast(changes.select("_key").distinct())  # few keys against a whole bucket
        events = events.unionByName(stored_events(stored.join(changed, "_key", "left_semi"), schema,
                                                  plan.renames, opts.unbounded_number))
        if not getattr(store, "row_level", False):  # parquet rewrites whole buckets: keep the rest
            keep = stored_rows(stored.join(changed, "_key", "left_anti"), schema, plan.renames, buckets)
    rows = fold(events, schema, opts.hints.timestamp, opts.unbounded_number, buckets)
    if keep is not None:
        rows = rows.unionByName(keep)
    written = store.write_rows(name, version, rows, touched if plan.rewrite else [], fold_schema(schema, opts),
                               complete=plan.rewrite)
    plan.entry.buckets.update({b: version for b in written})
    if plan.changes is None:
        return None
    from replicator.spark.changelog import changelog_rows

    return changelog_rows(fresh_changes(changes, stored, None), name)


def fold_schema(schema: TableSchema, opts: JobOptions) -> Any:
    """StructType of a stored row (for empty bucket files)."""
    from pyspark.sql import types as T

    return T._parse_datatype_string(schema.ddl_columns(opts.unbounded_number))
