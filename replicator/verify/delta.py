"""The Spark job's Delta lake as a sink of ``replicator verify`` (``--sink delta:LAKE``).

Two checks, both up to the lake's applied SCN (every transaction committed at or below it
is in the lake, :meth:`~replicator.spark.lake_read.LakeReader.applied_scn`):

* **the change log** (:class:`DeltaSink`, a :class:`~replicator.verify.sinks.SinkReader`):
  every row change and DDL of the redo, change by change, with its identity (c_scn, c_idx,
  elem, xid) and a digest of its content. The job keeps the images as text maps (values as
  the producer printed them: :func:`replicator.spark.jsontext.value_text`), so both sides
  are digested over that text form (:func:`lake_element` for the redo's messages), with the
  table as the job names it (``OWNER.TABLE``). Begin/commit markers are not in a change log.
* **the current-state tables** (:func:`check_state`): the redo folded into the rows each key
  has at the applied SCN, as the job folds it (an insert sets the whole row, an update the
  columns of its before and after images, a delete or a key change removes the key; DDL as
  replicator.spark.ddl applies it: TRUNCATE/DROP empties the table, RENAME COLUMN renames), converted to the column types the job stores
  (:func:`replicator.spark.arrowconv.convert`), against the lake's rows read batch by batch:
  per table the rows missing, extra and differing, each with its key.

The folded redo state is held in memory (a table's live rows as text); the lake is streamed.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from replicator.errors import RuntimeFailure
from replicator.formats.olr_digest import KIND_DDL, KIND_ROW, KIND_TXN, Change, ChangeId, change_digest, is_checkpoint
from replicator.spark.tableschema import POSITION, split_table_name, table_name
from replicator.verify.sinks import UNREADABLE, UNSUPPORTED, ChangeOut, Located, SinkStats

LAKE_KINDS = frozenset({KIND_ROW, KIND_DDL})  # what a change log holds
_ROW_OPS = ("c", "u", "d")
MISSING, EXTRA, DIFFERS = "missing", "extra", "differs"


lake_table = split_table_name  # (owner, table) of a table name of the job


def element_table(el: dict[str, Any]) -> tuple[str, str, str]:
    """(owner, table, the job's name for it) of a redo payload element."""
    schema = el.get("schema") or {}
    owner, table = str(schema.get("owner") or ""), str(schema.get("table", ""))
    return owner, table, table_name(owner, table)


def text_image(image: Any) -> dict[str, str | None] | None:
    """An image as the change log keeps it: every value as its printed text."""
    from replicator.spark.jsontext import value_text

    if not isinstance(image, dict):
        return None
    return {name: value_text(value) for name, value in image.items()}


def lake_digest(
    op: str, table: str, before: dict[str, Any] | None, after: dict[str, Any] | None, sql: str | None
) -> int:
    """The digest of a change in the lake's terms (text images, the job's table name)."""
    return change_digest(op, "", table, before, after, sql)


def lake_element(el: dict[str, Any]) -> tuple[int, str, str, int] | None:
    """(kind, owner, table, digest) of a redo payload element, digested as the lake keeps it
    (for :attr:`replicator.verify.spool.Spool.element`); None for a checkpoint."""
    op = el["op"]
    if op == "chkpt":
        return None
    if op in ("begin", "commit"):
        return KIND_TXN, "", "", change_digest(op, "", "", None, None, None)
    if op not in _ROW_OPS and op != "ddl":
        raise ValueError(f"unknown payload op {op!r}")
    owner, table, name = element_table(el)
    if op == "ddl":
        return KIND_DDL, owner, table, lake_digest("ddl", name, None, None, el.get("sql", el.get("ddl")))
    return (
        KIND_ROW,
        owner,
        table,
        lake_digest(op, name, text_image(el.get("before")), text_image(el.get("after")), None),
    )


def commit_scn(doc: dict[str, Any], scn_is_commit: bool) -> int | None:
    """The commit SCN a message carries (``e_scn``/``e_scns``; ``scn`` with scn-type bit 1)."""
    for name in ("e_scn", "scn") if scn_is_commit else ("e_scn",):
        if name in doc:
            return int(doc[name])
        if name + "s" in doc:
            return int(doc[name + "s"], 16)
    return None


class DeltaSink:
    """The change log of a lake: rows with commit SCN at or below :attr:`through_scn` (the lake's
    applied SCN; lowered to the end of the redo read when the lake is ahead of it)."""

    kinds = LAKE_KINDS
    part_shift = 62  # one part: the change log

    def __init__(self, lake: str, storage_options: dict[str, str] | None = None) -> None:
        try:
            import deltalake  # noqa: F401
            import pyarrow  # noqa: F401
        except ImportError as exc:
            raise RuntimeFailure(
                f"--sink delta: needs deltalake and pyarrow (pip install 'replicator[spark]'): {exc}", UNSUPPORTED
            ) from exc
        from replicator.spark.lake_read import LakeReader

        if "://" not in lake and not os.path.isdir(lake):
            raise RuntimeFailure(f"delta lake {lake}: no such directory", UNREADABLE)
        self.reader = LakeReader(lake, storage_options)
        try:
            self.through_scn = self.reader.applied_scn()
        except Exception as exc:  # noqa: BLE001 - delta-rs, pyarrow and the state's own errors
            raise RuntimeFailure(f"delta lake {lake}: cannot be read: {exc}", UNREADABLE) from exc
        if self.through_scn <= 0:
            raise RuntimeFailure(f"delta lake {lake}: no batch applied yet (no job state)", UNREADABLE)
        self.lake = lake
        self.label = f"delta lake {lake} change log, applied SCN {self.through_scn}"

    def _rows(self) -> Any:
        """(place, change-log row) in the order the change log is read."""
        place = 0
        for batch in self.reader.iter_changes(to_scn=self.through_scn):
            cols = batch.to_pydict()
            size = batch.nbytes // max(batch.num_rows, 1)  # (a row's share of the batch's bytes)
            for i in range(batch.num_rows):
                yield place, {name: values[i] for name, values in cols.items()}, size
                place += 1

    def scan(self, out: ChangeOut) -> SinkStats:
        stats = SinkStats(parts=[f"{self.lake}/changes"])
        started = time.perf_counter()
        for place, row, size in self._rows():
            name, op = row["table"] or "", row["op"]
            owner, table = lake_table(name)
            if op == "ddl":
                kind, digest = KIND_DDL, lake_digest("ddl", name, None, None, row["sql"])
            else:
                kind = KIND_ROW
                before = dict(row["before"]) if row["before"] is not None else None
                after = dict(row["after"]) if row["after"] is not None else None
                digest = lake_digest(op, name, before, after, None)
            out.change(
                Change(
                    ChangeId(int(row["c_scn"]), int(row["c_idx"]), int(row["elem"] or 0), row["xid"] or ""),
                    owner,
                    table,
                    kind,
                    digest,
                ),
                place,
            )
            stats.messages += 1
            stats.bytes += size
        stats.seconds = time.perf_counter() - started
        return stats

    def locate(self, places: set[int]) -> dict[int, Located]:
        found: dict[int, Located] = {}
        last = max(places, default=-1)
        for place, row, _ in self._rows():
            if place in places:
                owner, table = lake_table(row["table"] or "")
                element: dict[str, Any] = {"op": row["op"], "schema": {"owner": owner, "table": table}}
                for image in ("before", "after"):
                    if row[image] is not None:
                        element[image] = dict(row[image])
                if row["sql"] is not None:
                    element["sql"] = row["sql"]
                if row["rid"] is not None:
                    element["rid"] = row["rid"]
                doc = {"c_scn": row["c_scn"], "c_idx": row["c_idx"], "xid": row["xid"], "payload": [element]}
                found[place] = Located(
                    f"change log commit_scn {row['commit_scn']} c_scn {row['c_scn']} "
                    f"c_idx {row['c_idx']} (key {row['key']})",
                    doc,
                )
            if place >= last:
                break
        return found


# -- the current state ------------------------------------------------------------------------


class RedoFold:
    """The redo's messages (in stream order, i.e. commit order) folded into each table's live
    rows at ``through_scn``: OWNER.TABLE -> key texts -> column texts. :attr:`cut` is the
    ordinal of the last message committed at or below it."""

    def __init__(self, through_scn: int, scn_is_commit: bool, keys: dict[str, list[str] | None]) -> None:
        self.through_scn = through_scn
        self.scn_is_commit = scn_is_commit
        self.keys = keys  # the lake's key columns per table (None: ROWID)
        self.rows: dict[str, dict[tuple[str | None, ...], dict[str, str | None]]] = {}
        self.cut = -1
        self.last_commit = 0  # the highest commit SCN of the redo read

    def observe(self, doc: dict[str, Any], ordinal: int) -> None:
        """One redo message (before its changes are spooled)."""
        if is_checkpoint(doc):
            return
        commit = commit_scn(doc, self.scn_is_commit)
        if commit is None:
            raise RuntimeFailure(
                f"message c_scn {doc.get('c_scn')}, c_idx {doc.get('c_idx')} has no commit SCN: the "
                "lake is verified up to its applied SCN, which needs format scn-type 8 (e_scn) or "
                "bit 1 (as the Spark job does)",
                UNSUPPORTED,
            )
        self.last_commit = max(self.last_commit, commit)
        if commit > self.through_scn:
            return
        self.cut = ordinal
        for el in doc["payload"]:
            op = el.get("op")
            if op in _ROW_OPS:
                self._row(op, el)
            elif op == "ddl":
                self._ddl(el)

    def _ddl(self, el: dict[str, Any]) -> None:
        """A DDL as the job applies it (replicator.spark.ddl): TRUNCATE/DROP TABLE empties the
        table, RENAME COLUMN moves the values to the new name."""
        from replicator.spark.ddl import apply_ddl
        from replicator.spark.tableschema import TableSchema

        name = element_table(el)[2]
        rows = self.rows.get(name)
        if not rows:
            return
        known = list(dict.fromkeys(column for row in rows.values() for column in row))
        view = TableSchema(name, [{"name": column} for column in known])
        result = apply_ddl(view, str(el.get("sql", el.get("ddl")) or ""))
        if result.truncate:
            self.rows[name] = {}
            return
        renamed = {old: new for old, new in zip(known, view.names) if old != new}
        if renamed:
            for row in rows.values():
                for old, new in renamed.items():
                    if old in row:
                        row[new] = row.pop(old)

    def _key(self, names: list[str] | None, el: dict[str, Any], first: Any, second: Any) -> tuple[str | None, ...]:
        from replicator.spark.jsontext import value_text

        if names is None:
            return (el.get("rid"),)
        a, b = first or {}, second or {}
        return tuple(value_text(a[n]) if n in a else value_text(b.get(n)) for n in names)

    def _row(self, op: str, el: dict[str, Any]) -> None:
        name = element_table(el)[2]
        rows = self.rows.setdefault(name, {})
        names = self.keys.get(name)  # a table the lake does not hold: by ROWID
        before, after = text_image(el.get("before")), text_image(el.get("after"))
        if op == "c":
            rows[self._key(names, el, after, before)] = dict(after or {})
            return
        old = self._key(names, el, before, after)
        if op == "d":
            rows.pop(old, None)
            return
        new = self._key(names, el, after, before)
        row = rows.pop(old, None) if old != new else rows.get(old)
        row = dict(row) if row is not None else {}
        for column in {**(before or {}), **(after or {})}:
            row[column] = (after or {}).get(column)
        rows[new] = row


def _plain(value: Any) -> Any:
    """A stored value in one form whatever reader produced it (time zones, decimals, bytes)."""
    if isinstance(value, datetime):
        return ("ts", value.replace(tzinfo=None).isoformat(), value.utcoffset() is not None)
    if isinstance(value, date):
        return ("date", value.isoformat())
    if isinstance(value, Decimal):
        return ("dec", str(value))
    if isinstance(value, (bytes, bytearray)):
        return ("bin", bytes(value).hex())
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, float):
        return ("f", repr(value))
    return value


def _digest(values: tuple[Any, ...]) -> int:
    return int.from_bytes(hashlib.blake2b(repr(values).encode(), digest_size=8).digest(), "little")


@dataclass
class StateDifference:
    """A row of a current-state table that is not what the redo folds to."""

    kind: str  # missing, extra, differs
    table: str
    key: dict[str, Any]
    columns: list[str] = field(default_factory=list)  # differs: the columns not equal
    position: list[int] | None = None  # the lake row's (_commit_scn, _c_scn, _c_idx, _elem)

    def as_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": self.kind, "table": self.table, "key": self.key}
        if self.columns:
            doc["differs_in"] = self.columns
        if self.position is not None:
            doc["lake_position"] = self.position
        return doc


@dataclass
class StateResult:
    """The current-state check: per table the rows of each side and the differences."""

    applied_scn: int
    tables: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {MISSING: 0, EXTRA: 0, DIFFERS: 0})
    differences: list[StateDifference] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_json(self) -> dict[str, Any]:
        return {
            "applied_scn": self.applied_scn,
            "tables": self.tables,
            "counts": dict(self.counts),
            "differences": [d.as_json() for d in self.differences],
            "seconds": round(self.seconds, 3),
        }

    def text(self) -> list[str]:
        lines = [f"current-state tables at applied SCN {self.applied_scn} ({self.seconds:.2f} s):"]
        width = max([len(t["table"]) for t in self.tables] + [5])
        lines.append(f"  {'table':<{width}}  {'redo rows':>10}  {'lake rows':>10}  missing  extra  differ")
        for t in self.tables:
            lines.append(
                f"  {t['table']:<{width}}  {t['redo_rows']:>10,}  {t['lake_rows']:>10,}  {t['missing']:>7,}  "
                f"{t['extra']:>5,}  {t['differs']:>6,}"
            )
        for d in self.differences:
            cols = f"  in {', '.join(d.columns)}" if d.columns else ""
            pos = f"  lake position {d.position}" if d.position is not None else ""
            lines.append(f"  {d.kind:<10} {d.table} key {d.key}{cols}{pos}")
        if self.total > len(self.differences):
            lines.append(f"  ... {self.total - len(self.differences):,} more (--max-report)")
        return lines


def _unbounded(specs: list[dict[str, Any]], stored: Any) -> str:
    """The job's --unbounded-number, read off the type a NUMBER without precision is stored as."""
    from replicator.spark.coltypes import sql_type

    for spec in specs:
        if (
            sql_type(spec, "string") == "string"
            and sql_type(spec, "double") == "double"
            and spec["name"] in stored.names
        ):
            t = str(stored.field(spec["name"]).type)
            return "double" if t == "double" else "decimal" if t.startswith("decimal") else "string"
    return "string"


def _typed_keys(
    texts: list[list[str | None]], specs: list[dict[str, Any]], hints: Any, unbounded: str, typed: bool
) -> list[str | None]:
    from replicator.spark.arrowconv import convert
    from replicator.spark.layout import canonical

    arrays = [
        convert(column, spec, hints.timestamp, unbounded, typed, hints.timestamp_tz)
        for column, spec in zip(texts, specs)
    ]
    return canonical(arrays).to_pylist() if arrays else []


def _check_table(name: str, reader: Any, fold: RedoFold, hints: Any, result: StateResult, max_report: int) -> None:
    import pyarrow as pa

    from replicator.spark.arrowconv import convert
    from replicator.spark.layout import canonical
    from replicator.spark.tableschema import ROWID

    schema = reader.schema(name)
    redo_rows = fold.rows.get(name, {})
    stored = reader.arrow_schema(name) if schema is not None else None
    entry: dict[str, Any] = {
        "table": name,
        "redo_rows": len(redo_rows),
        "lake_rows": 0,
        MISSING: 0,
        EXTRA: 0,
        DIFFERS: 0,
    }
    result.tables.append(entry)

    def note(
        kind: str, key: dict[str, Any], columns: list[str] | None = None, position: list[int] | None = None
    ) -> None:
        entry[kind] += 1
        result.counts[kind] += 1
        if len(result.differences) < max_report:
            result.differences.append(StateDifference(kind, name, key, columns or [], position))

    if schema is None or stored is None:
        for key in redo_rows:
            note(MISSING, {"key": list(key)})
        return
    specs = [c for c in schema.columns if c["name"] in stored.names]
    names = [c["name"] for c in specs]
    unbounded = _unbounded(specs, stored)
    key_names = schema.key_names
    by_name = {c["name"]: c for c in schema.columns}
    key_specs = [
        by_name.get(k, {"name": k, "type": "varchar2"}) if k != ROWID else {"name": ROWID, "type": "varchar2"}
        for k in key_names
    ]
    redo_keys = list(redo_rows)
    canon = _typed_keys(
        [[k[i] for k in redo_keys] for i in range(len(key_names))], key_specs, hints, unbounded, schema.typed
    )
    values = [
        convert(
            [redo_rows[k].get(n) for k in redo_keys], spec, hints.timestamp, unbounded, schema.typed, hints.timestamp_tz
        ).to_pylist()
        for n, spec in zip(names, specs)
    ]
    want: dict[str | None, int] = {}  # canonical key -> row number in ``values``
    for i, canon_key in enumerate(canon):
        want[canon_key] = i
    digests = [_digest(tuple(_plain(col[i]) for col in values)) for i in range(len(redo_keys))]
    seen: set[str | None] = set()
    for batch in reader.iter_current_rows(name):
        table = pa.Table.from_batches([batch])
        entry["lake_rows"] += table.num_rows
        keys = canonical([table[k] for k in key_names]).to_pylist()
        cols = [table[n].to_pylist() if n in table.column_names else [None] * table.num_rows for n in names]
        where = [table[p].to_pylist() for p in POSITION] if all(p in table.column_names for p in POSITION) else None
        for j, lake_key in enumerate(keys):
            pos = [w[j] for w in where] if where is not None else None
            row = tuple(_plain(col[j]) for col in cols)
            mine_at = want.get(lake_key)
            if mine_at is None or lake_key in seen:
                note(EXTRA, dict(zip(key_names, (table[k][j].as_py() for k in key_names))), position=pos)
                continue
            seen.add(lake_key)
            if _digest(row) != digests[mine_at]:
                differing = [n for n, col, mine in zip(names, values, row) if _plain(col[mine_at]) != mine]
                note(DIFFERS, dict(zip(key_names, redo_keys[mine_at])), differing, pos)
    for canon_key, i in want.items():
        if canon_key not in seen:
            note(MISSING, dict(zip(key_names, redo_keys[i])))


def check_state(sink: DeltaSink, fold: RedoFold, hints: Any, max_report: int) -> StateResult:
    """Compare the lake's current-state tables with the redo folded to its applied SCN."""
    started = time.perf_counter()
    result = StateResult(sink.through_scn)
    for name in sorted(set(sink.reader.tables()) | set(fold.rows)):
        _check_table(name, sink.reader, fold, hints, result, max_report)
    result.seconds = time.perf_counter() - started
    return result


def lake_keys(sink: DeltaSink) -> dict[str, list[str] | None]:
    """The key columns of every table the lake holds (None: ROWID)."""
    out: dict[str, list[str] | None] = {}
    for name in sink.reader.tables():
        schema = sink.reader.schema(name)
        out[name] = list(schema.key) if schema.key is not None else None
    return out
