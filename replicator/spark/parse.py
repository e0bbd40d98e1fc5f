"""Kafka messages -> normalized change events (one row per payload element).

Both formats end up in the same row layout (:data:`EVENT_COLUMNS`). Column values stay
the exact text the producer printed (numbers are never turned into floats on the way):
the typed conversion happens later in Spark, when the table's column types are known.

OpenLogReplicator JSON needs, for ordering, the commit SCN in every message: format
``scn-type`` bit 8 (``e_scn``/``e_scns``) or bit 1 (``scn`` is the commit SCN; add bit 4
so every message carries it). A message without it becomes an ``error`` event, which the
job turns into a clear failure.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any, Final

from replicator.spark.debezium import is_debezium, parse_debezium
from replicator.spark.jsontext import decode_message, value_text
from replicator.spark.options import FormatHints
from replicator.spark.tableschema import table_name
from replicator.spark.timeparse import header_time_us

# (name, kind) in row order; kinds are mapped to Arrow and Spark types below.
EVENT_COLUMNS: Final[tuple[tuple[str, str], ...]] = (
    ("kind", "str"),
    ("fmt", "str"),
    ("tbl", "str"),
    ("op", "str"),
    ("commit_scn", "long"),
    ("c_scn", "long"),
    ("c_idx", "long"),
    ("elem", "int"),
    ("xid", "str"),
    ("commit_ts", "ts"),
    ("rid", "str"),
    ("key_cols", "list"),
    ("before", "map"),
    ("after", "map"),
    ("columns", "str"),
    ("sql", "str"),
    ("full", "bool"),
    ("error", "str"),
    ("k_partition", "int"),
    ("k_offset", "long"),
    ("k_ts", "ts"),
    ("seen", "ts"),
    ("digest", "long"),
    ("check", "str"),
)
# digest/check: with format.checkpoint-digests (FormatHints.checkpoint_digests), each change's digest
# (formats.olr_digest, signed 64-bit) and each checkpoint's payload element as JSON (its digests).
_NAMES: Final = [n for n, _ in EVENT_COLUMNS]
_SCN_HINT: Final = (
    "set the replicator's format option scn-type to 8 (adds e_scn, the commit SCN) "
    "or to 5 (scn = commit SCN in every message) and tell the job with --olr-config"
)


def event_spark_schema():  # type: ignore[no-untyped-def]
    """The Spark StructType of event rows."""
    from pyspark.sql import types as T

    kinds = {
        "str": T.StringType(),
        "long": T.LongType(),
        "int": T.IntegerType(),
        "bool": T.BooleanType(),
        "ts": T.TimestampType(),
        "list": T.ArrayType(T.StringType()),
        "map": T.MapType(T.StringType(), T.StringType()),
    }
    return T.StructType([T.StructField(n, kinds[k]) for n, k in EVENT_COLUMNS])


def event_arrow_schema():  # type: ignore[no-untyped-def]
    """The Arrow schema of event rows (what :func:`parse_batches` yields)."""
    import pyarrow as pa

    kinds = {
        "str": pa.string(),
        "long": pa.int64(),
        "int": pa.int32(),
        "bool": pa.bool_(),
        "ts": pa.timestamp("us", tz="UTC"),
        "list": pa.list_(pa.string()),
        "map": pa.map_(pa.string(), pa.string()),
    }
    return pa.schema([(n, kinds[k]) for n, k in EVENT_COLUMNS])


def key_columns(key: bytes | None) -> list[str] | None:
    """Column names in a Kafka key: an OLR tag fragment (``"ID":1``) or a JSON object."""
    if not key:
        return None
    try:
        text = key.strip()
        doc = decode_message(text if text.startswith(b"{") else b"{" + text + b"}")
    except (UnicodeDecodeError, ValueError):
        return None
    if isinstance(doc, dict) and isinstance(doc.get("payload"), dict) and "schema" in doc:
        doc = doc["payload"]  # Debezium with the JSON converter's schemas enabled
    return [str(k) for k in doc] if isinstance(doc, dict) else None


def _scn(doc: dict[str, Any], name: str) -> int | None:
    if name in doc:
        return int(doc[name])
    hexed = doc.get(name + "s")
    return int(hexed, 16) if hexed is not None else None


def parse_olr(doc: dict[str, Any], hints: FormatHints, meta: dict[str, Any]) -> list[dict[str, Any]]:
    """One OpenLogReplicator JSON message -> event rows (``meta`` holds the Kafka fields)."""
    commit_scn = _scn(doc, "e_scn")
    if commit_scn is None and hints.scn_is_commit:
        commit_scn = _scn(doc, "scn")
    commit_us = header_time_us(doc.get("e_tm", doc.get("e_tms")), hints.timestamp_metadata)
    if commit_us is None and hints.tm_is_commit:
        commit_us = header_time_us(doc.get("tm", doc.get("tms")), hints.timestamp_metadata)
    xid = doc.get("xid", doc.get("xidn"))
    payload = doc.get("payload") or []
    full = bool(hints.message & 1) or len(payload) > 1
    base = {
        **meta,
        "fmt": "olr",
        "commit_scn": commit_scn,
        "c_scn": int(doc["c_scn"]),
        "c_idx": int(doc["c_idx"]),
        "xid": None if xid is None else str(xid),
        "commit_ts": commit_us,
        "full": full,
    }
    rows: list[dict[str, Any]] = []
    for i, el in enumerate(payload):
        op = el.get("op")
        row = dict(base, elem=i, op=op)
        if op in ("begin", "commit"):
            row["kind"] = op
        elif op == "chkpt":
            row.update(kind="chkpt", commit_scn=_scn(doc, "scn") or int(doc["c_scn"]))
            rows.append(row)
            continue
        else:
            schema = el.get("schema") or {}
            owner, table = schema.get("owner"), schema.get("table")
            row["tbl"] = table_name(owner, table)
            if "columns" in schema:
                row["columns"] = json.dumps(schema["columns"], separators=(",", ":"))
            if op == "ddl":
                row.update(kind="ddl", sql=el.get("sql", el.get("ddl")))
            elif op in ("c", "u", "d"):
                # Images stay dicts (values are text, or int for integers msgspec decoded); the
                # other values become text when parse_batch builds the map arrays (image_array).
                before, after = el.get("before"), el.get("after")
                row.update(
                    kind="dml",
                    rid=el.get("rid"),
                    before=before if isinstance(before, dict) else None,
                    after=after if isinstance(after, dict) else None,
                )
            else:
                row.update(kind="error", error=f"unknown payload op {op!r}")
        if commit_scn is None and row["kind"] != "error":
            row.update(
                kind="error",
                error=f"message has no commit SCN (c_scn {doc['c_scn']}, c_idx {doc['c_idx']}): " + _SCN_HINT,
            )
        rows.append(row)
    return rows


def parse_message(
    value: bytes | None, key: bytes | None, hints: FormatHints, meta: dict[str, Any], doc: Any = None
) -> list[dict[str, Any]]:
    """Any supported message -> event rows; an unusable message -> one ``error`` row (``doc``:
    the message already decoded, when the caller has it)."""
    if value is None:
        return []  # a Kafka tombstone (Debezium sends one after each delete)
    if doc is None:
        try:
            doc = decode_message(value)
        except (UnicodeDecodeError, ValueError) as exc:
            where = f"partition {meta.get('k_partition')} offset {meta.get('k_offset')}"
            return [dict(meta, kind="error", error=f"{where}: not JSON ({exc})")]
    meta = dict(meta, key_cols=key_columns(key))
    try:
        if isinstance(doc, dict) and isinstance(doc.get("payload"), list) and "c_scn" in doc:
            rows = parse_olr(doc, hints, meta)
            if hints.checkpoint_digests:
                _digested(value, rows)
            return rows
        if is_debezium(doc):
            return parse_debezium(doc, meta, hints.binary_handling_mode)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        where = f"partition {meta.get('k_partition')} offset {meta.get('k_offset')}"
        return [dict(meta, kind="error", error=f"{where}: cannot read the message ({type(exc).__name__}: {exc})")]
    where = f"partition {meta.get('k_partition')} offset {meta.get('k_offset')}"
    return [
        dict(
            meta,
            kind="error",
            error=f"{where}: neither OpenLogReplicator JSON (payload, c_scn) "
            "nor a Debezium change event (op, source, before/after)",
        )
    ]


def _digested(value: bytes, rows: list[dict[str, Any]]) -> None:
    """Each element's change digest, or a checkpoint's element, as formats.olr_digest reads the
    message (its own decoding: integers as JSON integers), for the driver's stream check."""
    from replicator.formats.olr_digest import decode, element_change

    for row, el in zip(rows, decode(value)["payload"]):
        found = element_change(el)
        if found is None:
            row["check"] = json.dumps(el, separators=(",", ":"))
        else:
            digest = found[3]
            row["digest"] = digest - (1 << 64) if digest >= 1 << 63 else digest


def parse_batches(batches: Iterator[Any], hints_json: str) -> Iterator[Any]:
    """Kafka rows (key, value, partition, offset, timestamp) -> events, one Arrow batch per input batch."""
    hints = FormatHints(**json.loads(hints_json))
    schema = event_arrow_schema()
    for batch in batches:
        yield parse_batch(batch, hints, schema)


class _General(Exception):
    """A message the column-wise OLR parse leaves to :func:`parse_message` (DDL, checkpoints,
    unknown operations, a missing commit SCN, anything malformed)."""


_FAST_OPS: Final = frozenset(("c", "u", "d", "begin", "commit"))
# The event columns parse_batch fills for every event, and those it fills for a few only (by row).
_KAFKA: Final = ("k_partition", "k_offset", "k_ts", "seen")
_SPARSE: Final = ("key_cols", "columns", "sql", "error", "digest", "check")
_DENSE: Final = tuple(n for n in _NAMES if n not in _KAFKA and n not in _SPARSE)


def _olr_fields(doc: dict[str, Any], hints: FormatHints) -> tuple[int, int, int, Any, Any]:
    """(commit SCN, c_scn, c_idx, xid, commit time in us) of a message the column-wise parse takes;
    :class:`_General` when :func:`parse_olr` has to read it."""
    for el in doc["payload"]:
        if el.__class__ is not dict:
            raise _General
        op = el.get("op")
        if op not in _FAST_OPS:
            raise _General
        sch = el.get("schema")
        if sch and sch.__class__ is not dict:
            raise _General
    commit_scn = _scn(doc, "e_scn")
    if commit_scn is None and hints.scn_is_commit:
        commit_scn = _scn(doc, "scn")
    if commit_scn is None:
        raise _General
    commit_us = header_time_us(doc.get("e_tm", doc.get("e_tms")), hints.timestamp_metadata)
    if commit_us is None and hints.tm_is_commit:
        commit_us = header_time_us(doc.get("tm", doc.get("tms")), hints.timestamp_metadata)
    xid = doc.get("xid", doc.get("xidn"))
    if xid is not None and xid.__class__ is not str:
        xid = str(xid)
    return commit_scn, int(doc["c_scn"]), int(doc["c_idx"]), xid, commit_us


def parse_batch(batch: Any, hints: FormatHints, schema: Any) -> Any:
    """One Arrow batch of Kafka rows -> one Arrow batch of events.

    Columns are built straight from the messages, with no dict per event: the elements of a plain
    OpenLogReplicator message (row changes, begin, commit) go to the column lists as they are
    read, every other message through :func:`parse_message` (the same rows). The Kafka fields
    are taken from the input columns by the index of each event's message.
    """

    if not hints.checkpoint_digests:
        from replicator.native import spark_events

        compiled = spark_events()
        if compiled is not None:
            return _compiled_batch(compiled, batch, hints, schema)
    keys, values = batch.column("key").to_pylist(), batch.column("value").to_pylist()
    parts, offsets = batch.column("partition").to_pylist(), batch.column("offset").to_pylist()
    dense: dict[str, list[Any]] = {name: [] for name in _DENSE}
    sparse: dict[str, dict[int, Any]] = {name: {} for name in _SPARSE}
    kind, tbl, op_, commit, elem_, rid_, before_, after_ = (
        dense[n] for n in ("kind", "tbl", "op", "commit_scn", "elem", "rid", "before", "after")
    )
    fmt, c_scn_, c_idx_, xid_, ts_, full_ = (dense[n] for n in ("fmt", "c_scn", "c_idx", "xid", "commit_ts", "full"))
    key_cols_, columns_ = sparse["key_cols"], sparse["columns"]
    parent: list[int] = []
    seen: set[tuple[Any, Any, str]] = set()
    # The Kafka key's column names are read for the first row change of each table and transaction
    # only: the driver takes the first of a table's (distfold.project), and a transaction is applied,
    # kept or dropped whole. Decoding every message's key was 6 % of the parse.
    keyed: set[tuple[Any, Any, Any]] = set()
    fast = not hints.checkpoint_digests
    every_full = bool(hints.message & 1)
    dumps = json.dumps
    for j, (key, value) in enumerate(zip(keys, values)):
        doc: Any = None
        if fast and value is not None:
            try:
                doc = decode_message(value)
            except (UnicodeDecodeError, ValueError):
                doc = None  # parse_message says why
        if doc.__class__ is dict and doc.get("payload").__class__ is list and "c_scn" in doc:
            try:
                commit_scn, c_scn, c_idx, xid, commit_us = _olr_fields(doc, hints)
            except (_General, KeyError, TypeError, ValueError, AttributeError):
                pass
            else:
                payload = doc["payload"]
                full = every_full or len(payload) > 1
                found: Any = None
                looked = False
                for i, el in enumerate(payload):
                    op = el.get("op")
                    if op == "begin" or op == "commit":
                        kind.append(op)
                        tbl.append(None)
                        rid_.append(None)
                        before_.append(None)
                        after_.append(None)
                    else:
                        sch = el.get("schema") or {}
                        owner, table = sch.get("owner"), sch.get("table")
                        name = f"{owner}.{table}" if owner else str(table)
                        r = len(kind)
                        if "columns" in sch:  # one copy of a column list per table and transaction is enough
                            text = dumps(sch["columns"], separators=(",", ":"))
                            mark: tuple[Any, Any, Any] = (name, commit_scn, text)
                            if mark not in seen:
                                columns_[r] = text
                                seen.add(mark)
                        if key:
                            mark_key: tuple[Any, Any, Any] = (name, commit_scn, xid)
                            if mark_key not in keyed:
                                if not looked:
                                    found, looked = key_columns(key), True
                                if found:
                                    key_cols_[r] = found
                                    keyed.add(mark_key)
                        b, a = el.get("before"), el.get("after")
                        kind.append("dml")
                        tbl.append(name)
                        rid_.append(el.get("rid"))
                        before_.append(b if isinstance(b, dict) else None)
                        after_.append(a if isinstance(a, dict) else None)
                    op_.append(op)
                    elem_.append(i)
                    fmt.append("olr")
                    commit.append(commit_scn)
                    c_scn_.append(c_scn)
                    c_idx_.append(c_idx)
                    xid_.append(xid)
                    ts_.append(commit_us)
                    full_.append(full)
                    parent.append(j)
                continue
        for row in _general_rows(
            value, key, hints, {"k_partition": parts[j], "k_offset": offsets[j]}, doc, seen, keyed
        ):
            r = len(kind)
            for name, col in dense.items():
                col.append(row.get(name))
            for name, at in sparse.items():
                v = row.get(name)
                if v is not None:
                    at[r] = v
            parent.append(j)
    return _assembled(batch, schema, parent, sparse, lambda name: image_array(dense[name]), dense.__getitem__)


def _general_rows(
    value: bytes | None,
    key: bytes | None,
    hints: FormatHints,
    meta: dict[str, Any],
    doc: Any,
    seen: set[tuple[Any, Any, Any]],
    keyed: set[tuple[Any, Any, Any]],
) -> list[dict[str, Any]]:
    """A message the column-wise parse does not take, by :func:`parse_message`, with the batch's
    marks: the Kafka key's columns on the first row change of each table and transaction, one
    copy of a column list per table and transaction."""
    found = None
    looked = False
    rows = parse_message(value, None, hints, meta, doc)
    for row in rows:
        if key and row.get("kind") == "dml":
            mark_key = (row.get("tbl"), row.get("commit_scn"), row.get("xid"))
            if mark_key not in keyed:
                if not looked:
                    found, looked = key_columns(key), True
                if found:
                    row["key_cols"] = found
                    keyed.add(mark_key)
        cols = row.get("columns")
        if cols is not None:  # one copy of a column list per table and transaction is enough
            mark = (row.get("tbl"), row.get("commit_scn"), cols)
            if mark in seen and row.get("kind") == "dml":
                row["columns"] = None
            seen.add(mark)
    return rows


def _assembled(
    batch: Any, schema: Any, parent: list[int], sparse: dict[str, dict[int, Any]], image: Any, dense: Any
) -> Any:
    """The event batch: ``image(name)`` the before/after arrays, ``dense(name)`` the other
    columns' values, ``sparse`` the columns set on a few rows; the Kafka fields taken from the
    input by each event's record (``parent``)."""
    import pyarrow as pa

    n = len(parent)
    taken = pa.array(parent, pa.int64())
    arrays = []
    for f in schema:
        name = f.name
        if name in ("k_partition", "k_offset", "k_ts"):
            arrays.append(
                batch.column({"k_partition": "partition", "k_offset": "offset", "k_ts": "timestamp"}[name])
                .take(taken)
                .cast(f.type)
            )
        elif name == "seen":
            arrays.append(pa.nulls(n, f.type))
        elif name in ("before", "after"):
            arrays.append(image(name))
        elif name in sparse:
            at = sparse[name]
            if at:
                full_col: list[Any] = [None] * n
                for r, v in at.items():
                    full_col[r] = v
                arrays.append(pa.array(full_col, f.type))
            else:
                arrays.append(pa.nulls(n, f.type))
        else:
            values = dense(name)
            arrays.append(values if isinstance(values, pa.Array) else pa.array(values, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _compiled_batch(compiled: Any, batch: Any, hints: FormatHints, schema: Any) -> Any:
    """:func:`parse_batch` by the compiled parse (:mod:`replicator.spark._parse`): the
    same events, the images' texts read from the message bytes into Arrow buffers, no dict per
    message or element; what it does not take goes through :func:`_general_rows`."""
    import numpy as np
    import pyarrow as pa

    keys, values = batch.column("key").to_pylist(), batch.column("value").to_pylist()
    parts, offsets = batch.column("partition").to_pylist(), batch.column("offset").to_pylist()
    code = hints.timestamp_metadata

    def times(e_tm: Any, tm: Any) -> int | None:
        us = header_time_us(e_tm, code)
        return header_time_us(tm, code) if us is None and tm is not None else us

    def columns_text(raw: bytes) -> str:  # as the python parse prints a decoded list
        return json.dumps(decode_message(raw), separators=(",", ":"))

    b = compiled.EventBuilder(
        hints.scn_is_commit,
        hints.tm_is_commit,
        bool(hints.message & 1),
        key_columns,
        times,
        value_text,
        columns_text,
        _SPARSE,
    )

    def general(j: int) -> None:
        meta = {"k_partition": parts[j], "k_offset": offsets[j]}
        for row in _general_rows(values[j], keys[j], hints, meta, None, b.seen, b.keyed):
            b.add_row(row, j)

    # The builder makes a few container objects per message (marks, lists) and none of them is
    # garbage: the collections they would trigger were a third of the parse's CPU.
    collecting = gc.isenabled()
    gc.disable()
    try:
        b.add_batch(keys, values, general)
    finally:
        if collecting:
            gc.enable()
    cols = b.finish()
    n = len(cols["parent"])

    def bitmap(valid: bytes) -> Any:
        flags = np.frombuffer(valid, np.bool_)
        return None if flags.all() else pa.array(flags, pa.bool_()).buffers()[1]

    def strings(data: bytes, offs: bytes, valid: bytes) -> Any:
        count = len(offs) // 4 - 1
        return pa.Array.from_buffers(pa.string(), count, [bitmap(valid), pa.py_buffer(offs), pa.py_buffer(data)])

    def image(name: str) -> Any:
        offs, valid, names, name_offs, items, item_offs, item_valid = cols[name]
        return pa.MapArray.from_arrays(
            pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(offs)]),
            strings(names, name_offs, b"\x01" * (len(name_offs) // 4 - 1)),
            strings(items, item_offs, item_valid),
            pa.map_(pa.string(), pa.string()),
            mask=pa.array(~np.frombuffer(valid, np.bool_)),
        )

    def dense(name: str) -> Any:
        return strings(*cols["rid"]) if name == "rid" else cols[name]

    return _assembled(batch, schema, cols["parent"], b.sparse, image, dense)


def image_array(images: list[Any]) -> Any:
    """before/after images (dicts, or lists of (name, text) pairs) -> an Arrow map<string, string> array."""
    import pyarrow as pa

    offsets = [0]
    names: list[Any] = []
    texts: list[Any] = []
    valid: list[bool] = []
    for image in images:
        if image is None:
            valid.append(False)
        elif isinstance(image, dict):
            names.extend(image)
            texts.extend(image.values())
            valid.append(True)
        else:
            for name, text in image:
                names.append(name)
                texts.append(text)
            valid.append(True)
        offsets.append(len(names))
    try:
        items = pa.array(texts, pa.string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):  # integers, true/false, nested JSON
        items = pa.array(
            [t if t.__class__ is str or t is None else str(t) if t.__class__ is int else value_text(t) for t in texts],
            pa.string(),
        )
    mask = pa.array([not v for v in valid], pa.bool_())
    return pa.MapArray.from_arrays(
        pa.array(offsets, pa.int32()), pa.array(names, pa.string()), items, pa.map_(pa.string(), pa.string()), mask=mask
    )
