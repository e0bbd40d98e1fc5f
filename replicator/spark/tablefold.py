"""Per table: schema and key of a batch, and the fold of its changes into current rows.

Runs on the driver over the ready events of a batch (Python over the rows, Arrow for
the typed columns). Position of a change = (commit SCN, c_scn, c_idx, elem): commit order
first, then the order inside the transaction. For every key the fold keeps the image as
of its highest position:

* an insert or a delete is a full image (a delete leaves a tombstone, ``_op = 'd'``);
* an update's ``after`` is laid over the key's current image (OpenLogReplicator's default
  ``column: 0`` prints only changed columns; a column only in ``before`` became NULL);
* an update that moves the primary key starts the new key's row from the old key's
  current image -- the one folded earlier in the batch, else the stored row -- and leaves
  a tombstone on the old key.

A change at or below the position stored for its key (or the batch's image of it) is
stale -- a replay or a duplicate -- and neither moves the row nor enters the change log.
Images that still lack columns are completed from the stored row of their *base* key,
column by column, when the Arrow rows are built.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from replicator.errors import ConfigError, DataError
from replicator.spark.arrowconv import column_type, convert, metadata_schema
from replicator.spark.ddl import apply_ddl
from replicator.spark.keys import KeyResolver
from replicator.spark.tableschema import TableSchema

log = logging.getLogger("replicator.spark")
Pos = tuple[int, int, int, int]
CHANGE_COLUMNS = ("table", "op", "commit_scn", "c_scn", "c_idx", "elem", "xid", "commit_ts", "rid", "key", "before",
                  "after", "sql", "k_partition", "k_offset")


@dataclass(slots=True)
class TablePlan:
    """What a batch does to one table."""

    schema: TableSchema  # after the batch
    rows: list[int] = field(default_factory=list)  # indices of its dml events in the ready columns
    ddl: list[int] = field(default_factory=list)  # indices of its DDL events
    renames: dict[str, str] = field(default_factory=dict)  # old name -> new name, this batch
    rewrite: bool = False  # overwrite the table (rename, drop, truncate)
    truncated_now: bool = False
    keys: list[tuple[str | None, str | None]] = field(default_factory=list)  # (new key, old key) per row


def _names_in(ev: dict[str, list[Any]], rows: list[int]) -> list[str]:
    names: set[str] = set()
    for i in rows:
        for image in (ev["after"][i], ev["before"][i]):
            names.update(k for k, _ in image or ())
    return sorted(names)


def plan_tables(ev: dict[str, list[Any]], tables: dict[str, TableSchema], keys: KeyResolver) -> dict[str, TablePlan]:
    """Schemas (merged column lists, DDL, keys decided on first sight) of every table in the batch."""
    plans: dict[str, TablePlan] = {}
    for i, (kind, tbl) in enumerate(zip(ev["kind"], ev["tbl"])):
        if tbl is None:
            continue
        plan = plans.get(tbl)
        if plan is None:
            old = tables.get(tbl)
            plan = plans[tbl] = TablePlan(old.copy() if old else TableSchema(tbl))
        (plan.rows if kind == "dml" else plan.ddl).append(i)
    unkeyed = []
    for name, plan in sorted(plans.items()):
        schema = plan.schema
        ddl_scn = schema.ddl_at[0] if schema.ddl_at else -1
        lists: dict[str, int] = {}
        for i in plan.rows + plan.ddl:
            text = ev["columns"][i]
            if text:
                lists[text] = max(lists.get(text, 0), ev["commit_scn"][i])
        for text, scn in sorted(lists.items(), key=lambda kv: kv[1]):
            if scn > ddl_scn:  # lists from before the last DDL (replays) describe an older layout
                schema.merge_columns(json.loads(text))
        if not schema.columns or not schema.typed:
            if not schema.columns:
                schema.typed = False
                log.warning("table %s: messages carry no column types (format option schema 0): values are "
                            "stored as text; set schema to 1 for typed columns", name)
            schema.merge_columns([{"name": n, "type": "varchar2"} for n in _names_in(ev, plan.rows)])
        if not schema.key_origin and plan.rows:
            key_cols = next((ev["key_cols"][i] for i in plan.rows if ev["key_cols"][i]), None)
            has_rid = any(ev["rid"][i] for i in plan.rows)
            cols, origin = keys.decide(name, key_cols, has_rid)
            if not origin:
                unkeyed.append(name)
                continue
            schema.key, schema.key_origin = cols, origin
            log.info("table %s: rows are identified by %s (%s)", name,
                     "ROWID" if cols is None else ", ".join(cols), origin)
        for i in plan.ddl:  # in stream order
            pos = [ev["commit_scn"][i], ev["c_scn"][i], ev["c_idx"][i], ev["elem"][i]]
            if schema.ddl_at is not None and pos <= schema.ddl_at:
                continue  # applied before: a replay
            result = apply_ddl(schema, ev["sql"][i] or "")
            schema.ddl_at = pos
            log.info("table %s: DDL at SCN %s: %s", name, pos[0], result.note)
            plan.rewrite = plan.rewrite or result.rewrite or (result.changed and result.note.startswith("dropped"))
            if result.truncate:
                schema.truncated_at = pos
                plan.truncated_now = True
            if result.changed and result.note.startswith("renamed"):
                old_name, new_name = result.note[len("renamed "):].split(" to ")
                for k, v in list(plan.renames.items()):
                    if v == old_name:
                        plan.renames[k] = new_name
                plan.renames.setdefault(old_name, new_name)
    if unkeyed:
        raise ConfigError(f"no primary key is known for table(s) {', '.join(unkeyed)} and their messages carry no "
                          "ROWID; pass --key OWNER.TABLE=COLUMNS, --olr-config (schema checkpoint), or set the "
                          "replicator's format option rid to 1", 30001)
    return plans


def _key(image: dict[str, Any] | None, other: dict[str, Any] | None, cols: list[str]) -> str | None:
    values = []
    for c in cols:
        v = image.get(c) if image else None
        if v is None and other:
            v = other.get(c)
        if v is None:
            return None
        values.append(v)
    return json.dumps(values, separators=(",", ":"))


def key_rows(ev: dict[str, list[Any]], plans: dict[str, TablePlan]) -> None:
    """Key every row change; fail listing every table with changes lacking key values."""
    missing: dict[str, int] = {}
    for name, plan in plans.items():
        schema, out = plan.schema, plan.keys
        bad = 0
        for i in plan.rows:
            if schema.key is None:
                rid = ev["rid"][i]
                out.append((rid, rid))
                bad += rid is None
                continue
            before = ev["_before"][i]
            after = ev["_after"][i]
            new, old = _key(after, before, schema.key), _key(before, after, schema.key)
            out.append((new, old))
            op = ev["op"][i]
            bad += (new if op != "d" else old) is None
        if bad:
            missing[name] = bad
    if missing:
        detail = "; ".join(f"{n}: {c} change(s) without "
                           f"{'ROWID (rid)' if plans[n].schema.key is None else 'key columns ' + str(plans[n].schema.key)}"
                           for n, c in sorted(missing.items()))
        raise DataError(f"{len(missing)} table(s) have changes without their key values ({detail}); enable "
                        "supplemental logging of the key, or use ROWID keys (--rowid-table, format rid 1)", 20003)


@dataclass(slots=True)
class Folded:
    """Result of folding one table's batch."""

    rows: Any  # pyarrow Table of current rows to MERGE (or the whole table when rewritten)
    changes: list[int]  # indices of fresh changes (for the change log)
    change_keys: list[str | None]
    stale: int


def _renamed(image: dict[str, Any] | None, renames: dict[str, str]) -> dict[str, Any] | None:
    if image is None or not renames:
        return image
    return {renames.get(k, k): v for k, v in image.items()}


def fold_table(ev: dict[str, list[Any]], plan: TablePlan, stored: Any, timestamp_code: int,
               unbounded: str) -> Folded:
    """Fold a table's changes over its stored rows (``stored``: the rows of touched keys, or
    every row when the table is rewritten; None when the table does not exist yet)."""
    import pyarrow as pa

    schema = plan.schema
    names = schema.names
    stored_pos: dict[str, Pos] = {}
    stored_idx: dict[str, int] = {}
    if stored is not None and stored.num_rows:
        cols = stored.select(["_key", "_commit_scn", "_c_scn", "_c_idx", "_elem"]).to_pydict()
        for i, (k, a, b, c, d) in enumerate(zip(cols["_key"], cols["_commit_scn"], cols["_c_scn"], cols["_c_idx"],
                                                cols["_elem"])):
            stored_pos[k] = (a, b, c, d)
            stored_idx[k] = i
    trunc = tuple(schema.truncated_at) if schema.truncated_at is not None else None
    cur: dict[str, list[Any]] = {}  # key -> [values or None, pos, op, xid, commit_ts, base key]
    fresh: list[int] = []
    fresh_keys: list[str | None] = []
    stale = 0
    all_names = set(names)

    def last(k: str) -> Pos | None:
        e = cur.get(k)
        return e[1] if e is not None else stored_pos.get(k)

    for i, (new, old) in zip(plan.rows, plan.keys):
        pos = (ev["commit_scn"][i], ev["c_scn"][i], ev["c_idx"][i], ev["elem"][i])
        if trunc is not None and pos <= trunc:
            stale += 1
            continue
        op, xid, ts = ev["op"][i], ev["xid"][i], ev["commit_ts"][i]
        if op == "c":
            lp = last(new)
            if lp is not None and pos <= lp:
                stale += 1
                continue
            cur[new] = [_renamed(ev["_after"][i], plan.renames) or {}, pos, "c", xid, ts, None]
            fresh.append(i)
            fresh_keys.append(new)
            continue
        if op == "d":
            lp = last(old)
            if lp is not None and pos <= lp:
                stale += 1
                continue
            cur[old] = [None, pos, "d", xid, ts, None]
            fresh.append(i)
            fresh_keys.append(old)
            continue
        before = _renamed(ev["_before"][i], plan.renames) or {}
        delta = {k: None for k in before}
        delta.update(_renamed(ev["_after"][i], plan.renames) or {})
        src = old if old is not None else new
        lp_new, lp_src = last(new), last(src)
        new_fresh = lp_new is None or pos > lp_new
        src_fresh = lp_src is None or pos > lp_src
        if not new_fresh or (src != new and not src_fresh):
            stale += 1
            continue
        prev = cur.get(src)
        if prev is None:
            values, base = delta, src  # over the stored row of the source key
        elif prev[0] is not None:
            values, base = {**prev[0], **delta}, prev[5]
        else:
            values, base = delta, None  # updated after a delete: nothing to start from
        if base is not None and all_names.issubset(values):
            base = None
        if src != new:
            cur[src] = [None, pos, "d", xid, ts, None]
        cur[new] = [values, pos, "u", xid, ts, base]
        fresh.append(i)
        fresh_keys.append(new)

    keys = list(cur)
    if plan.rewrite and stored is not None:  # the untouched stored rows are written again
        keys += [k for k in stored_idx if k not in cur]
    n = len(keys)
    entries = [cur.get(k) for k in keys]
    base_idx = pa.array([stored_idx.get(e[5]) if e is not None and e[5] is not None else
                         (stored_idx[k] if e is None else None) for k, e in zip(keys, entries)], pa.int64())
    arrays, fields = [], []
    import pyarrow.compute as pc

    for spec in schema.columns:
        name = spec["name"]
        target = column_type(spec, unbounded) if schema.typed else pa.string()
        texts = [None if e is None or e[0] is None else e[0].get(name) for e in entries]
        present = pa.array([e is not None and e[0] is not None and name in e[0] for e in entries], pa.bool_())
        values = convert(texts, spec, timestamp_code, unbounded, schema.typed)
        if stored is not None and stored.num_rows and name in stored.column_names and n:
            old_values = stored[name].take(base_idx)
            if old_values.type != target:
                old_values = old_values.cast(target)
            values = pc.if_else(present, values, old_values.combine_chunks())
        arrays.append(values)
        fields.append(pa.field(name, target))
    meta = {"_key": keys, "_commit_scn": [], "_c_scn": [], "_c_idx": [], "_elem": [], "_op": [], "_xid": [],
            "_commit_ts": []}
    for k, e in zip(keys, entries):
        if e is None:
            row = stored_idx[k]
            for c in ("_commit_scn", "_c_scn", "_c_idx", "_elem", "_op", "_xid", "_commit_ts"):
                meta[c].append(stored[c][row].as_py())
            continue
        p = e[1]
        meta["_commit_scn"].append(p[0])
        meta["_c_scn"].append(p[1])
        meta["_c_idx"].append(p[2])
        meta["_elem"].append(p[3])
        meta["_op"].append(e[2])
        meta["_xid"].append(e[3])
        meta["_commit_ts"].append(e[4])
    for name, typ in metadata_schema():
        arrays.append(pa.array(meta[name], typ))
        fields.append(pa.field(name, typ))
    rows = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    return Folded(rows, fresh, fresh_keys, stale)


def conform_stored(stored: Any, plan: TablePlan) -> Any:
    """Stored rows under this batch's names (renames applied), rows before a TRUNCATE removed."""
    if stored is None:
        return None
    if plan.renames:
        stored = stored.rename_columns([plan.renames.get(c, c) for c in stored.column_names])
    if plan.truncated_now:
        stored = stored.slice(0, 0)
    keep = [c for c in stored.column_names if c in set(plan.schema.names) or c.startswith("_")]
    return stored.select(keep)


def change_rows(ev: dict[str, list[Any]], table: str, fresh: list[int], keys: list[str | None],
                ddl: list[int]) -> dict[str, list[Any]]:
    """Change-log columns of a table's fresh changes and its DDL events."""
    out: dict[str, list[Any]] = {c: [] for c in CHANGE_COLUMNS}
    for i, k in [*zip(fresh, keys), *((j, None) for j in ddl)]:
        out["table"].append(table)
        out["op"].append(ev["op"][i] if ev["kind"][i] == "dml" else "ddl")
        out["key"].append(k)
        for c in ("commit_scn", "c_scn", "c_idx", "elem", "xid", "commit_ts", "rid", "before", "after", "sql",
                  "k_partition", "k_offset"):
            out[c].append(ev[c][i])
    return out


def change_schema() -> Any:
    """Arrow schema of the change log."""
    import pyarrow as pa

    m = pa.map_(pa.string(), pa.string())
    return pa.schema([("table", pa.string()), ("op", pa.string()), ("commit_scn", pa.int64()), ("c_scn", pa.int64()),
                      ("c_idx", pa.int64()), ("elem", pa.int32()), ("xid", pa.string()),
                      ("commit_ts", pa.timestamp("us", tz="UTC")), ("rid", pa.string()), ("key", pa.string()),
                      ("before", m), ("after", m), ("sql", pa.string()), ("k_partition", pa.int32()),
                      ("k_offset", pa.int64())])
