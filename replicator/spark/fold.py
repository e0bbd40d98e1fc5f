"""Per table: key the changes, and fold them into the stored rows.

Position of a change = (commit SCN, c_scn, c_idx, elem): commit order first, then the
order inside the transaction. The fold keeps, for every key, the row as of its highest
position. Rows are folded as maps of column -> value text: a stored row, an insert and a
delete are full images that replace the map; an update's ``after`` is merged into it
(OpenLogReplicator's default ``column: 0`` leaves unchanged columns out). Events are
applied in position order, and a stored row carries its own position, so a change older
than the stored row can never win: that is the guard that keeps replays and duplicates
from moving a row backwards. Deleted keys stay as tombstones with their position for the
same reason.

Only stored rows whose key changes go through the fold; the others of a rewritten bucket
pass through as they are. Working on maps keeps the plan small whatever the width of the
table (one aggregate instead of one per column).
"""

from __future__ import annotations

from typing import Any

from replicator.spark.coltypes import convert_expr, quote_ident, quote_key, sql_type
from replicator.spark.tableschema import METADATA, POSITION, TableSchema


def key_expr(schema: TableSchema, first: str = "after", second: str = "before") -> Any:
    """JSON array of the key values (``first`` image preferred), or the ROWID."""
    from pyspark.sql import functions as F

    if schema.key is None:
        return F.col("rid")
    values = [F.coalesce(F.col(first)[k], F.col(second)[k]) for k in schema.key]
    complete = values[0].isNotNull()
    for v in values[1:]:
        complete = complete & v.isNotNull()
    return F.when(complete, F.to_json(F.array(*values)))  # NULL when a key value is missing


def keyed_changes(ready: Any, schemas: dict[str, TableSchema], buckets: int) -> Any:
    """Row events of the ``schemas`` tables with ``_key``, ``bucket`` and the position columns.

    One projection for every table (a CASE on the table name), so the batch's events are
    scanned once, not once per table. An update that changes the primary key also yields
    a delete of the old key (``_synthetic``).
    """
    from pyspark.sql import functions as F

    new_key = old_key = None
    for name, schema in schemas.items():
        cond = F.col("tbl") == name
        new = key_expr(schema)
        old = key_expr(schema, "before", "after") if schema.key is not None else F.lit(None).cast("string")
        new_key = F.when(cond, new) if new_key is None else new_key.when(cond, new)
        old_key = F.when(cond, old) if old_key is None else old_key.when(cond, old)
    rows = ready.where((F.col("kind") == "dml") & F.col("tbl").isin(list(schemas)))
    rows = rows.select("*", (new_key if new_key is not None else F.lit(None)).alias("_key"),
                       (old_key if old_key is not None else F.lit(None)).alias("_old"))
    moved = (F.col("op") == "u") & F.col("_old").isNotNull() & (F.col("_old") != F.coalesce(F.col("_key"), F.lit("")))
    pick = F.when(moved, F.array(F.struct(F.col("_key").alias("k"), F.lit(False).alias("s")),
                                 F.struct(F.col("_old").alias("k"), F.lit(True).alias("s"))))\
        .otherwise(F.array(F.struct(F.col("_key").alias("k"), F.lit(False).alias("s"))))
    rows = rows.select("*", F.explode(pick).alias("_pick")).drop("_key", "_old")
    rows = rows.select("*", F.col("_pick.k").alias("_key"), F.col("_pick.s").alias("_synthetic")).drop("_pick")
    rows = rows.withColumn("op", F.when(F.col("_synthetic"), F.lit("d")).otherwise(F.col("op")))
    return (rows.withColumn("bucket", bucket_of(F.col("_key"), buckets))
            .withColumnRenamed("commit_scn", "_commit_scn").withColumnRenamed("c_scn", "_c_scn")
            .withColumnRenamed("c_idx", "_c_idx").withColumnRenamed("elem", "_elem"))


def bucket_of(key: Any, buckets: int) -> Any:
    """The bucket a key belongs to."""
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(key), F.lit(buckets)).cast("int")


def position() -> Any:
    """The ordering struct of a row or change."""
    from pyspark.sql import functions as F

    return F.struct(*[F.col(c) for c in POSITION])


def later_than(pos: list[int]) -> Any:
    """Condition: the row's position is after ``pos`` (e.g. the last TRUNCATE)."""
    from pyspark.sql import functions as F

    types = ("bigint", "bigint", "bigint", "int")
    other = ", ".join(f"'{n}', CAST({int(v)} AS {t})" for n, v, t in zip(POSITION, pos, types))
    return F.expr(f"struct({', '.join(POSITION)}) > named_struct({other})")


def fresh_changes(changes: Any, stored: Any | None, truncated_at: list[int] | None) -> Any:
    """Changes newer than the stored row of their key (and than the last TRUNCATE)."""
    from pyspark.sql import functions as F

    if truncated_at is not None:
        changes = changes.where(later_than(truncated_at))
    if stored is None:
        return changes
    known = stored.select(F.col("_key").alias("_skey"), position().alias("_spos"))
    joined = changes.join(known, changes["_key"] == known["_skey"], "left")
    return joined.where(F.col("_spos").isNull() | (position() > F.col("_spos"))).drop("_skey", "_spos")


def _text_of(spec: dict[str, Any], unbounded: str, name: str) -> str:
    """SQL giving the text form of a stored typed value, the inverse of :func:`convert_expr`."""
    col = quote_ident(name)
    return f"hex({col})" if sql_type(spec, unbounded) == "binary" else f"CAST({col} AS string)"


def change_events(changes: Any, renames: dict[str, str]) -> Any:
    """Change rows as fold events: position, op, and the image map (renamed columns mapped)."""
    # An UPDATE prints each column on both sides, except NULLs OLR hides (types outside its
    # NULL-visible list, e.g. TIMESTAMP WITH TIME ZONE with unknown-type 0): a column only in
    # ``before`` was set to NULL.
    img = ("CASE WHEN op = 'u' AND before IS NOT NULL THEN map_concat(transform_values(map_filter(before, "
           "(k, v) -> NOT coalesce(map_contains_key(after, k), false)), (k, v) -> CAST(NULL AS string)), "
           "coalesce(after, map())) ELSE coalesce(after, map()) END")
    if renames:  # changes from before a rename in this batch still use the old name
        cases = " ".join(f"WHEN {quote_key(old)} THEN {quote_key(new)}" for new, old in renames.items())
        img = f"transform_keys({img}, (k, v) -> CASE k {cases} ELSE k END)"
    return changes.selectExpr("_key", "bucket", *POSITION, "op AS _op", "xid AS _xid", "commit_ts AS _commit_ts",
                              "'C' AS _src", f"{img} AS _img")


def stored_events(stored: Any, schema: TableSchema, renames: dict[str, str], unbounded: str) -> Any:
    """Stored rows as fold events (full images in text form, under this batch's names)."""
    back = {new: old for new, old in renames.items()}
    names = ", ".join(quote_key(c["name"]) for c in schema.columns)
    values = ", ".join(_text_of(c, unbounded, back.get(c["name"], c["name"])) for c in schema.columns)
    img = f"map_from_arrays(array({names}), array({values}))" if schema.columns else "map()"
    return stored.selectExpr("_key", "CAST(NULL AS int) AS bucket", *POSITION, "_op", "_xid", "_commit_ts",
                             "'S' AS _src", f"{img} AS _img")


def stored_rows(stored: Any, schema: TableSchema, renames: dict[str, str], buckets: int) -> Any:
    """Stored rows unchanged by the batch, in the output layout."""
    back = {new: old for new, old in renames.items()}
    data = [f"{quote_ident(back.get(c['name'], c['name']))} AS {quote_ident(c['name'])}" for c in schema.columns]
    return stored.selectExpr(*data, *[n for n, _ in METADATA],
                             f"CAST(pmod(xxhash64(_key), {buckets}) AS int) AS bucket")


def fold(events: Any, schema: TableSchema, timestamp_code: int, unbounded: str, buckets: int) -> Any:
    """Latest row per key from fold events; typed columns, metadata and ``bucket``."""
    pos = "struct(" + ", ".join(POSITION) + ")"
    ev = f"struct({pos} AS p, _src, _op, _img)"
    order = "(l, r) -> CASE WHEN l.p < r.p THEN -1 WHEN l.p > r.p THEN 1 ELSE 0 END"
    merged = (f"aggregate(array_sort(_evs, {order}), CAST(NULL AS map<string,string>), (acc, e) -> "
              "CASE WHEN e._src = 'S' OR e._op IN ('c', 'd') THEN e._img "
              "ELSE map_concat(coalesce(acc, map()), e._img) END)")
    out = events.groupBy("_key").agg(*[_agg(e) for e in (
        f"collect_list({ev}) AS _evs", f"max({pos}) AS _pos", f"max_by(_op, {pos}) AS _op",
        f"max_by(_xid, {pos}) AS _xid", f"max_by(_commit_ts, {pos}) AS _commit_ts")])
    out = out.selectExpr("_key", "_pos", "_op", "_xid", "_commit_ts",
                         f"CASE WHEN _op = 'd' THEN NULL ELSE {merged} END AS _m")
    data = []
    for spec in schema.columns:
        raw = f"_m[{quote_key(spec['name'])}]"
        conv = convert_expr(raw, spec, timestamp_code, unbounded) if schema.typed else raw
        data.append(f"{conv} AS {quote_ident(spec['name'])}")
    return out.selectExpr(*data, "_key", *[f"_pos.{c} AS {c}" for c in POSITION], "_op", "_xid", "_commit_ts",
                          f"CAST(pmod(xxhash64(_key), {buckets}) AS int) AS bucket")


def _agg(sql: str) -> Any:
    from pyspark.sql import functions as F

    expr, _, alias = sql.rpartition(" AS ")
    return F.expr(expr).alias(alias)
