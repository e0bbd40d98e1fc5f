"""Per table: schema and key of a batch, and the fold of its changes into current rows.

:func:`plan_tables` runs on the driver over the batch's projection; :func:`fold_table` runs in
an executor over one (table, bucket) group's events (:mod:`.distfold`; numpy, or a Python
loop when keys move, over the rows; Arrow for the typed columns). Position of a change = (commit SCN, c_scn, c_idx, elem): commit order
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

from replicator.errors import ConfigError, InternalError
from replicator.spark.arrowconv import column_type, convert, metadata_schema
from replicator.spark.ddl import apply_ddl
from replicator.spark.keys import KeyResolver
from replicator.spark.tableschema import TableSchema

log = logging.getLogger("replicator.spark")
Pos = tuple[int, int, int, int]


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
    key_arrays: tuple[Any, Any] | None = None  # the same as Arrow strings (then ``keys`` may be left empty)


def _names_in(ev: dict[str, Any], rows: list[int]) -> list[str]:
    """Column names the images of ``rows`` hold (the projection lists them per table and task)."""
    names: set[str] = set()
    for i in rows:
        names.update(ev["names"][i] or ())
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
                log.warning(
                    "table %s: messages carry no column types (format option schema 0): values are "
                    "stored as text; set schema to 1 for typed columns",
                    name,
                )
            schema.merge_columns([{"name": n, "type": "varchar2"} for n in _names_in(ev, plan.rows)])
        if not schema.key_origin and plan.rows:
            key_cols = next((ev["key_cols"][i] for i in plan.rows if ev["key_cols"][i]), None)
            has_rid = any(ev["rid"][i] for i in plan.rows)
            cols, origin = keys.decide(name, key_cols, has_rid)
            if not origin:
                unkeyed.append(name)
                continue
            schema.key, schema.key_origin = cols, origin
            log.info(
                "table %s: rows are identified by %s (%s)", name, "ROWID" if cols is None else ", ".join(cols), origin
            )
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
                old_name, new_name = result.note[len("renamed ") :].split(" to ")
                for k, v in list(plan.renames.items()):
                    if v == old_name:
                        plan.renames[k] = new_name
                plan.renames.setdefault(old_name, new_name)
    if unkeyed:
        raise ConfigError(
            f"no primary key is known for table(s) {', '.join(unkeyed)} and their messages carry no "
            "ROWID; pass --key OWNER.TABLE=COLUMNS, --olr-config (schema checkpoint), or set the "
            "replicator's format option rid to 1",
            30001,
        )
    return plans


def images(ev: dict[str, Any], rows: list[int]) -> tuple[Any, Any]:
    """The before and after maps (Arrow) of the events ``rows``, in that order."""
    import pyarrow as pa

    ready = ev["_ready"]
    idx = pa.array(rows, pa.int64())
    return ready["before"].take(idx).combine_chunks(), ready["after"].take(idx).combine_chunks()


def _lookup(image: Any, name: str) -> Any:  # the key columns only: few columns
    """Value of column ``name`` in each image (null when absent or NULL); the last one when repeated."""
    import pyarrow.compute as pc

    return pc.map_lookup(image, name, "last")


def _image_index(image: Any, names: list[str], renames: dict[str, str]) -> tuple[Any, Any, Any]:
    """Where each image holds each column: ``(entry, items)``-like arrays for every event and column.

    Returns ``present`` (numpy bool, events x columns), ``entry`` (numpy int64: index into
    ``items`` of the column's value in the event's image, -1 when absent) and ``items``
    (the images' values, flat). Names an image holds from before a rename in the batch
    count as the new name; a repeated name counts once, its last value.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    m, width = len(image), len(names)
    aliases = [*names, *renames]
    column_of = np.asarray([*range(width), *(names.index(r) if r in names else -1 for r in renames.values())], np.int64)
    code = pc.index_in(image.keys, value_set=pa.array(aliases, pa.string())).to_numpy(zero_copy_only=False)
    offsets = image.offsets.to_numpy()
    parent = np.repeat(np.arange(m, dtype=np.int64), np.diff(offsets))
    # Entries of null images (none: a null map has no entries here) and of unknown names are dropped.
    known = ~np.isnan(code) if code.dtype.kind == "f" else np.ones(len(code), bool)
    at = np.nonzero(known)[0]
    cols = column_of[code[known].astype(np.int64)]
    keep = cols >= 0
    at, cols = at[keep], cols[keep]
    entry = np.full((m, width), -1, np.int64)
    entry[parent[at], cols] = at - offsets[0]
    return entry >= 0, entry, image.items


@dataclass(slots=True)
class Folded:
    """Result of folding one table's batch."""

    rows: Any  # pyarrow Table: the new image (or tombstone) of every key the batch moved (every row on a rewrite)
    changes: list[int]  # indices of fresh changes (for the change log)
    change_keys: list[str | None]
    stale: int
    fast: bool = False  # decided by the vectorised pass (:func:`_fast_pass`), not the loop


@dataclass(slots=True)
class _Chains:
    """What a pass over the changes decides; :func:`_assemble` makes the rows from it.

    Row ``r`` of the result is key ``keys[r]``: the keys the batch moves, in the order of their
    first fresh change, then (on a rewrite) the untouched stored keys."""

    keys: Any  # Arrow strings
    meta: dict[str, Any]  # the metadata columns (Arrow, :func:`.arrowconv.metadata_schema`) by name
    base_idx: Any  # Arrow int64: the stored row under each row (null: none)
    owner_idx: Any  # numpy: the rows whose chain is not empty
    flat: Any  # numpy: their chains (local row numbers, oldest first) laid end to end
    starts: Any  # numpy: where each owner's chain starts in ``flat``
    fresh: list[int]
    fresh_keys: list[str | None]
    stale: int
    entries: list[Any] | None = None  # the loop's entry per row (for :func:`_with_chains`)


def fold_table(
    ev: dict[str, Any],
    plan: TablePlan,
    stored: Any,
    timestamp_code: int,
    unbounded: str,
    tz_code: int = 0,
    chains: bool = False,
) -> Folded:
    """Fold a table's changes over its stored rows (``stored``: the rows of touched keys, or
    every row when the table is rewritten; None when the table does not exist yet).

    A pass over the changes' positions and keys decides, for every key the batch leaves,
    its *chain*: the changes whose images make its row, oldest first, and the stored row
    (*base*) under them -- :func:`_fast_pass` (numpy, the common case) or :func:`_loop_pass`
    (Python, every case). The values are then assembled column by column in Arrow: each
    column takes the newest change of the chain that sets it (an insert sets every column,
    an update the columns of its ``before`` and ``after``), else the base.

    ``chains`` (merge-on-read, :mod:`.mor`, folded without stored rows): each row also says what
    its chain is made of: ``_set`` (the columns it sets; NULL for a tombstone), ``_base`` (the
    key whose row it lies over; NULL when it is a whole image) and ``_first_*`` (the position
    of its first change).
    """
    decided = None if chains else _fast_pass(ev, plan, stored)
    fast = decided is not None
    if decided is None:
        decided = _loop_pass(ev, plan, stored)
    rows, set_matrix = _assemble(ev, plan, stored, decided, timestamp_code, unbounded, tz_code)
    if chains:
        if decided.entries is None:
            raise InternalError("the chains of a fold are the loop's")
        rows = _with_chains(rows, decided.entries, set_matrix, plan.schema.names, plan.rows, ev)
    return Folded(rows, decided.fresh, decided.fresh_keys, decided.stale, fast)


def _key_pairs(plan: TablePlan) -> list[tuple[str | None, str | None]]:
    """(new key, old key) of each row change: ``plan.keys``, else made from ``plan.key_arrays``."""
    if plan.keys or plan.key_arrays is None:
        return plan.keys
    return list(zip(plan.key_arrays[0].to_pylist(), plan.key_arrays[1].to_pylist()))


def _loop_pass(ev: dict[str, Any], plan: TablePlan, stored: Any) -> _Chains:
    """The chains of every key, change by change in position order (every case: key moves,
    truncates, rewrites, merge-on-read chains)."""
    import numpy as np
    import pyarrow as pa

    schema = plan.schema
    stored_pos: dict[str, Pos] = {}
    stored_idx: dict[str, int] = {}
    if stored is not None and stored.num_rows:
        cols = stored.select(["_key", "_commit_scn", "_c_scn", "_c_idx", "_elem"]).to_pydict()
        # A key held twice (a data file and a tombstone) keeps its last row, as a loop would.
        stored_pos = dict(zip(cols["_key"], zip(cols["_commit_scn"], cols["_c_scn"], cols["_c_idx"], cols["_elem"])))
        stored_idx = dict(zip(cols["_key"], range(len(cols["_key"]))))
    trunc = tuple(schema.truncated_at) if schema.truncated_at is not None else None
    # key -> [chain (local row numbers) or None for a tombstone, pos, op, xid, commit_ts (us), base key]
    cur: dict[str, list[Any]] = {}
    fresh: list[int] = []
    fresh_keys: list[str | None] = []
    stale = 0
    commit_scn, c_scn, c_idx, elem = ev["commit_scn"], ev["c_scn"], ev["c_idx"], ev["elem"]
    ops, xids, tss = ev["op"], ev["xid"], ev["commit_ts"]

    cur_get, stored_get = cur.get, stored_pos.get

    for j, (i, (new, old)) in enumerate(zip(plan.rows, _key_pairs(plan))):
        pos = (commit_scn[i], c_scn[i], c_idx[i], elem[i])
        if trunc is not None and pos <= trunc:
            stale += 1
            continue
        op = ops[i]
        key = old if op == "d" else new  # the key whose row (or tombstone) the change leaves
        if key is None:  # distfold.route() holds back the changes that lack it
            raise InternalError(f"table {schema.name}: a row change reached the fold without its key")
        e = cur_get(key)
        lp = e[1] if e is not None else stored_get(key)  # the key's last position
        if op == "c" or op == "d":
            if lp is not None and pos <= lp:
                stale += 1
                continue
            cur[key] = [[j] if op == "c" else None, pos, op, xids[i], tss[i], None]
            fresh.append(i)
            fresh_keys.append(key)
            continue
        src = old if old is not None else key
        prev = e if src == key else cur_get(src)
        lp_src = lp if src == key else (prev[1] if prev is not None else stored_get(src))
        if not (lp is None or pos > lp) or (src != key and not (lp_src is None or pos > lp_src)):
            stale += 1
            continue
        if prev is None:
            chain, base = [j], src  # over the stored row of the source key
        elif prev[0] is not None:
            chain, base = prev[0], prev[5]  # the source's chain moves on (its entry is replaced below)
            chain.append(j)
        else:
            chain, base = [j], None  # updated after a delete: nothing to start from
        if src != key:
            cur[src] = [None, pos, "d", xids[i], tss[i], None]
        cur[key] = [chain, pos, "u", xids[i], tss[i], base]
        fresh.append(i)
        fresh_keys.append(key)

    keys = list(cur)
    if plan.rewrite and stored is not None:  # the untouched stored rows are written again
        keys += [k for k in stored_idx if k not in cur]
    entries = [cur.get(k) for k in keys]
    base_idx = pa.array(
        [
            stored_idx.get(e[5]) if e is not None and e[5] is not None else (stored_idx[k] if e is None else None)
            for k, e in zip(keys, entries)
        ],
        pa.int64(),
    )
    # The non-empty chains laid end to end: owner_idx[c]'s chain is flat[starts[c]:starts[c + 1]].
    owned = [(o, e[0]) for o, e in enumerate(entries) if e is not None and e[0]]
    flat = np.fromiter((j for _, chain in owned for j in chain), np.int64)
    lengths = np.fromiter((len(chain) for _, chain in owned), np.int64, len(owned))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(owned) else np.zeros(0, np.int64)
    owner_idx = np.asarray([o for o, _ in owned], np.int64)
    # The metadata columns: the batch's for the keys it moved, the stored row's for the untouched
    # rows a rewrite writes again (the last keys, after every key of ``cur``).
    moved = len(cur)
    columns = metadata_schema()
    names = [name for name, _ in columns]
    head = list(cur.values())  # in the order of keys; an entry: (chain, position, op, xid, commit time)
    positions = [e[1] for e in head]
    meta: dict[str, list[Any]] = {
        name: [p[i] for p in positions] for i, name in enumerate(("_commit_scn", "_c_scn", "_c_idx", "_elem"))
    }
    meta.update(_op=[e[2] for e in head], _xid=[e[3] for e in head], _commit_ts=[e[4] for e in head])
    if len(keys) > moved:  # microseconds, as ev's commit times
        kept = stored.select(names).take(pa.array([stored_idx[k] for k in keys[moved:]], pa.int64()))
        kept = kept.set_column(names.index("_commit_ts"), "_commit_ts", kept["_commit_ts"].cast(pa.int64()))
        for c, values in kept.to_pydict().items():
            meta[c] = meta[c] + values
    arrays = {name: pa.array(meta[name], typ) for name, typ in columns}
    return _Chains(
        pa.array(keys, pa.string()), arrays, base_idx, owner_idx, flat, starts, fresh, fresh_keys, stale, entries
    )


def _lex_le(a: list[Any], b: list[Any]) -> Any:
    """``a <= b`` for positions given as columns (numpy arrays or scalars), compared as tuples."""
    import numpy as np

    less = np.zeros(np.broadcast(*a, *b).shape, bool)
    same = np.ones_like(less)
    for x, y in zip(a, b):
        less |= same & (x < y)
        same &= x == y
    return less | same


def _fast_pass(ev: dict[str, Any], plan: TablePlan, stored: Any) -> _Chains | None:
    """The chains of :func:`_loop_pass`, in numpy, when no change moves a key and the batch has
    no DDL for the table; None otherwise (and when the inputs are not what this pass proves
    equal for: changes out of position order, NULL positions, no Arrow columns).

    Without key moves every change acts on its own key only, so per key (its changes in
    position order, ``sp`` its stored position) the loop's decisions are:

    * a change is stale when ``pos <= sp`` or ``pos`` equals its predecessor's (the first of
      equal positions above ``sp`` is fresh; every fresh change is above all earlier ones);
    * the key's row is its last fresh change's (position, op, xid, commit time); its chain is
      the fresh changes from its last fresh insert, or after its last fresh delete, or all of
      them (then over the stored row of the key) when neither is fresh;
    * rows are ordered by their key's first fresh change.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    ready = ev.get("_ready")
    schema = plan.schema
    if ready is None or plan.rewrite or plan.truncated_now or plan.renames or not plan.rows:
        return None
    if plan.key_arrays is not None:
        new, old = (a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in plan.key_arrays)
    else:
        pairs = _key_pairs(plan)
        new, old = pa.array([p[0] for p in pairs], pa.string()), pa.array([p[1] for p in pairs], pa.string())
    idx = np.asarray(plan.rows, np.int64)
    at = pa.array(idx)
    cols = [ready[c] for c in ("commit_scn", "c_scn", "c_idx", "elem")]
    if any(c.null_count for c in cols):
        return None
    pos = [c.to_numpy()[idx].astype(np.int64) for c in cols]
    if not _lex_le([p[:-1] for p in pos], [p[1:] for p in pos]).all():
        return None  # not in position order
    trunc = schema.truncated_at
    if trunc is not None and (len(trunc) != 4 or _lex_le(pos, [int(t) for t in trunc]).any()):
        return None
    op = ready["op"].take(at).combine_chunks()
    if not pc.all(pc.is_in(op, value_set=pa.array(["c", "u", "d"]))).as_py():
        return None  # the loop takes any other op for an update, and logs it as "u"
    is_c = pc.equal(op, "c").to_numpy(zero_copy_only=False)
    is_d = pc.equal(op, "d").to_numpy(zero_copy_only=False)
    key = pc.if_else(pa.array(is_d), old, new)
    if key.null_count:
        return None  # the loop says which change lacks its key
    moves = pc.fill_null(pc.and_(pc.is_valid(old), pc.not_equal(old, new)), False).to_numpy(zero_copy_only=False)
    if (moves & ~is_c & ~is_d).any():
        return None  # an update that moves its key
    enc = key.dictionary_encode()
    codes = enc.indices.to_numpy().astype(np.int64)
    uniq = enc.dictionary
    # Each distinct key's stored row: the last one holding it, as the loop's dicts keep.
    srow_u = np.full(len(uniq), -1, np.int64)
    spos: list[Any] = []
    if stored is not None and stored.num_rows:
        scols = [stored[c] for c in ("_commit_scn", "_c_scn", "_c_idx", "_elem")]
        if any(c.null_count for c in scols):
            return None
        n = stored.num_rows
        backwards = stored["_key"].take(pa.array(np.arange(n - 1, -1, -1, dtype=np.int64)))
        found = pc.index_in(uniq, value_set=backwards.combine_chunks())
        srow_u = np.where(found.is_valid().to_numpy(zero_copy_only=False), n - 1 - found.fill_null(0).to_numpy(), -1)
        spos = [c.to_numpy().astype(np.int64) for c in scols]
    srow = srow_u[codes]
    stale = np.zeros(len(idx), bool)
    if spos:
        has = srow >= 0
        under = np.maximum(srow, 0)
        stale = has & _lex_le(pos, [p[under] for p in spos])
    order = np.argsort(codes, kind="stable")  # by key, then position (rows are in position order)
    oc = codes[order]
    same = oc[1:] == oc[:-1]
    for p in pos:
        same &= p[order][1:] == p[order][:-1]
    stale[order[1:][same]] = True
    fresh_j = np.nonzero(~stale)[0]
    a = order[~stale[order]]  # the fresh changes, by key then position
    m = len(a)
    ca = codes[a]
    group_start = np.ones(m, bool)
    group_start[1:] = ca[1:] != ca[:-1]
    firsts = np.nonzero(group_start)[0]
    lasts = np.append(firsts[1:] - 1, m - 1) if m else firsts  # none when every change is stale
    resets = is_c[a] | is_d[a]
    mark = np.maximum.accumulate(np.where(resets | group_start, np.arange(m), 0)) if m else np.zeros(0, np.int64)
    head = mark[lasts]  # per key: its last fresh insert or delete, else its first fresh change
    head_d, head_c = is_d[a[head]], is_c[a[head]]
    lo = head + head_d  # a delete starts an empty chain (its key's tombstone, or updates after it)
    out = np.argsort(a[firsts], kind="stable")  # keys by their first fresh change
    lo, hi, head_d, head_c = lo[out], lasts[out] + 1, head_d[out], head_c[out]
    key_codes = ca[firsts][out]
    base = np.where(head_c | head_d, -1, srow_u[key_codes])
    lengths = hi - lo
    owners = np.nonzero(lengths > 0)[0]
    owned = lengths[owners]
    total = int(owned.sum())
    starts = np.concatenate(([0], np.cumsum(owned)[:-1])).astype(np.int64) if len(owners) else np.zeros(0, np.int64)
    flat = a[np.repeat(lo[owners] - starts, owned) + np.arange(total, dtype=np.int64)]
    last_at = pa.array(idx[a[lasts[out]]])
    meta = {}
    for name, typ in metadata_schema():
        meta[name] = ready[name[1:]].take(last_at).combine_chunks().cast(typ)
    return _Chains(
        keys=uniq.take(pa.array(key_codes)).cast(pa.string()),
        meta=meta,
        base_idx=pa.array(base, pa.int64(), mask=base < 0),
        owner_idx=owners.astype(np.int64),
        flat=flat.astype(np.int64),
        starts=starts,
        fresh=idx[fresh_j].tolist(),
        fresh_keys=key.take(pa.array(fresh_j)).to_pylist(),
        stale=int(stale.sum()),
    )


def _assemble(
    ev: dict[str, Any],
    plan: TablePlan,
    stored: Any,
    c: _Chains,
    timestamp_code: int,
    unbounded: str,
    tz_code: int,
) -> tuple[Any, Any]:
    """The rows of the chains ``c`` (Arrow) and which columns each row's chain sets (numpy)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = plan.schema
    n = len(c.keys)
    flat, owner_idx, starts = c.flat, c.owner_idx, c.starts
    names = schema.names
    if len(flat):
        # Only the chains' changes are read: stale changes and tombstones hold no value of a row.
        steps = np.asarray(plan.rows, np.int64)[flat]
        before, after = images(ev, steps.tolist())
        ops = ev["_ready"]["op"].take(pa.array(steps)).combine_chunks()
        inserts = pc.fill_null(pc.equal(ops, "c"), False).to_numpy(zero_copy_only=False)
        in_before, _, _ = _image_index(before, names, plan.renames)
        in_after, after_entry, after_items = _image_index(after, names, plan.renames)
        chain_sets = in_before | in_after  # chain steps x columns
        chain_sets[inserts] = True  # an insert is a whole row: a column it leaves out is NULL
    positions = np.arange(len(flat), dtype=np.int64)
    arrays, fields = [], []
    set_matrix = np.zeros((n, len(schema.columns)), bool)
    for col, spec in enumerate(schema.columns):
        name = spec["name"]
        target = column_type(spec, unbounded) if schema.typed else pa.string()
        chain_sets_it = np.zeros(n, bool)  # a change of the row's chain sets the column (else: the base's value)
        text = pa.nulls(n, pa.string())
        if len(flat):
            newest = np.maximum.reduceat(np.where(chain_sets[:, col], positions, -1), starts)  # per chain
            chain_sets_it[owner_idx] = newest >= 0
            set_matrix[:, col] = chain_sets_it
            entry = np.full(n, -1, np.int64)  # the value in after_items; -1 = NULL (not in that after)
            entry[owner_idx] = np.where(newest >= 0, after_entry[np.maximum(newest, 0), col], -1)
            text = after_items.take(pa.array(np.maximum(entry, 0), mask=entry < 0))
        values = convert(text, spec, timestamp_code, unbounded, schema.typed, tz_code)
        if stored is not None and stored.num_rows and name in stored.column_names and n:
            old_values = stored[name].take(c.base_idx)
            if old_values.type != target:
                old_values = old_values.cast(target)
            values = pc.if_else(pa.array(chain_sets_it), values, old_values.combine_chunks())
        arrays.append(values)
        fields.append(pa.field(name, target))
    arrays.append(c.keys)
    fields.append(pa.field("_key", pa.string()))
    for name, typ in metadata_schema():
        arrays.append(c.meta[name])
        fields.append(pa.field(name, typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)), set_matrix


def _with_chains(
    rows: Any, entries: list[Any], set_matrix: Any, names: list[str], idx: list[int], ev: dict[str, Any]
) -> Any:
    """``rows`` with the chain columns of :func:`fold_table` (``chains``)."""
    import pyarrow as pa

    sets: list[list[str] | None] = []
    bases: list[str | None] = []
    first: list[tuple[Any, ...]] = []
    for r, e in enumerate(entries):
        if e is None or e[0] is None:  # a tombstone: the change's own position
            sets.append(None)
            bases.append(None)
            first.append(e[1] if e is not None else (None,) * 4)
            continue
        i = idx[e[0][0]]
        first.append((ev["commit_scn"][i], ev["c_scn"][i], ev["c_idx"][i], ev["elem"][i]))
        bases.append(e[5])
        sets.append(list(names) if e[5] is None else [n for n, on in zip(names, set_matrix[r]) if on])
    rows = rows.append_column("_set", pa.array(sets, pa.list_(pa.string())))
    rows = rows.append_column("_base", pa.array(bases, pa.string()))
    for k, (name, typ) in enumerate(
        (
            ("_first_commit_scn", pa.int64()),
            ("_first_c_scn", pa.int64()),
            ("_first_c_idx", pa.int64()),
            ("_first_elem", pa.int32()),
        )
    ):
        rows = rows.append_column(name, pa.array([f[k] for f in first], typ))
    return rows


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


def change_rows(ev: dict[str, Any], table: str, fresh: list[int], keys: Any, ddl: list[int]) -> Any:
    """Change-log rows (Arrow, :func:`change_schema`) of a table's fresh changes and its DDL events
    (``keys``: the change log's key of each fresh change, a list or Arrow strings)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = keys.cast(pa.string()) if isinstance(keys, pa.Array) else pa.array(keys, pa.string())
    keys = pa.concat_arrays([keys, pa.nulls(len(ddl), pa.string())])  # none for the DDL events
    idx = pa.array([*fresh, *ddl], pa.int64())
    picked = ev["_ready"].take(idx)
    n = len(idx)
    op = pc.if_else(pc.equal(picked["kind"], "dml"), picked["op"], pa.scalar("ddl"))
    out = {
        "table": pa.array([table] * n, pa.string()),
        "op": op,
        "key": keys,
    }
    schema = change_schema()
    return pa.Table.from_arrays(
        [
            out[f.name]
            if f.name in out
            else picked[f.name].cast(f.type)
            if f.name in picked.column_names
            else pa.nulls(n, f.type)
            for f in schema
        ],
        schema=schema,
    )


def change_schema() -> Any:
    """Arrow schema of the change log."""
    import pyarrow as pa

    m = pa.map_(pa.string(), pa.string())
    return pa.schema(
        [
            ("table", pa.string()),
            ("op", pa.string()),
            ("commit_scn", pa.int64()),
            ("c_scn", pa.int64()),
            ("c_idx", pa.int64()),
            ("elem", pa.int32()),
            ("xid", pa.string()),
            ("commit_ts", pa.timestamp("us", tz="UTC")),
            ("rid", pa.string()),
            ("key", pa.string()),
            ("before", m),
            ("after", m),
            ("sql", pa.string()),
            ("k_partition", pa.int32()),
            ("k_offset", pa.int64()),
        ]
    )
