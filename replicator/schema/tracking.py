"""Dictionary tracking: committed DML on the mirrored SYS tables updates the dictionary.

OpenLogReplicator does not parse DDL text for metadata (redo-format.md §10.2). It decodes
the redo DML of SYS.OBJ$, COL$, TAB$... like any other row change and, at the commit of
the transaction, applies every row to its mirror keyed by ROWID, in redo order; then it
rebuilds the table definitions. :class:`DictionaryTracker` does the same:

* :func:`decode_fields` turns one row image of a SYS table into checkpoint fields by
  column name (``COL$.SEGCOL#`` -> ``seg-col``), with OLR's NULL rules: a column present
  in the change but NULL takes the field's default (0, ``""``, or -1 for PRECISION#,
  SCALE and GUARD_ID); a column absent from the change keeps its value.
* :meth:`DictionaryTracker.apply` applies a transaction's rows (insert: a new row from the
  defaults, a duplicate ROWID is error 50022 unless adaptive schema; update: merges, an
  unknown ROWID is skipped unless adaptive; delete: drops), prunes rows OLR would not keep,
  rebuilds the table map with the same filter rules and reports what changed. A row
  taking a unique key another row holds is error 50024 (:mod:`.keys`), as in OLR.

The ROWID of a change is (DATAOBJ# of its 5.1, block address, slot), exactly what the
checkpoint's ``row-id`` holds; for clustered tables (COL$, TAB$... in C_OBJ#) the data
object is the cluster's, so rows of different member tables share one ROWID space.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from replicator import log
from replicator.errors import DataError
from replicator.events import (
    OP_DELETE,
    OP_INSERT,
    TYPE_CHAR,
    TYPE_NUMBER,
    TYPE_RAW,
    TYPE_VARCHAR2,
    RowChange,
    Table,
)
from replicator.schema.dictionary import SCHEMA_TABLES, Dictionary
from replicator.schema.rows import Kind, Row, dictionary_key, row_fields
from replicator.values.charset import get_charset
from replicator.values.number import NumberError, number_text
from replicator.values.rowid import rowid_text

# SYS/XDB column name -> checkpoint field, per array (prefix for the XDB token-set arrays).
COLUMN_FIELDS: Final[dict[str, dict[str, str]]] = {
    "sys-ccol": {"CON#": "con", "INTCOL#": "int-col", "OBJ#": "obj", "SPARE1": "spare1"},
    "sys-cdef": {"CON#": "con", "OBJ#": "obj", "TYPE#": "type"},
    "sys-col": {
        "OBJ#": "obj",
        "COL#": "col",
        "SEGCOL#": "seg-col",
        "INTCOL#": "int-col",
        "NAME": "name",
        "TYPE#": "type",
        "LENGTH": "length",
        "PRECISION#": "precision",
        "SCALE": "scale",
        "CHARSETFORM": "charset-form",
        "CHARSETID": "charset-id",
        "NULL$": "null",
        "PROPERTY": "property",
    },
    "sys-deferredstg": {"OBJ#": "obj", "FLAGS_STG": "flags-stg"},
    "sys-ecol": {"TABOBJ#": "tab-obj", "COLNUM": "col-num", "GUARD_ID": "guard-id"},
    "sys-lob": {"OBJ#": "obj", "COL#": "col", "INTCOL#": "int-col", "LOBJ#": "l-obj", "TS#": "ts"},
    "sys-lob-comp-part": {"PARTOBJ#": "part-obj", "LOBJ#": "l-obj"},
    "sys-lob-frag": {"FRAGOBJ#": "frag-obj", "PARENTOBJ#": "parent-obj", "TS#": "ts"},
    "sys-obj": {
        "OWNER#": "owner",
        "OBJ#": "obj",
        "DATAOBJ#": "data-obj",
        "NAME": "name",
        "TYPE#": "type",
        "FLAGS": "flags",
    },
    "sys-tab": {
        "OBJ#": "obj",
        "DATAOBJ#": "data-obj",
        "TS#": "ts",
        "CLUCOLS": "clu-cols",
        "FLAGS": "flags",
        "PROPERTY": "property",
    },
    "sys-tabcompart": {"OBJ#": "obj", "DATAOBJ#": "data-obj", "BO#": "bo"},
    "sys-tabpart": {"OBJ#": "obj", "DATAOBJ#": "data-obj", "BO#": "bo"},
    "sys-tabsubpart": {"OBJ#": "obj", "DATAOBJ#": "data-obj", "POBJ#": "p-obj"},
    "sys-ts": {"TS#": "ts", "NAME": "name", "BLOCKSIZE": "block-size"},
    "sys-user": {"USER#": "user", "NAME": "name", "SPARE1": "spare1"},
    "xdb-ttset": {"GUID": "guid", "TOKSUF": "toksuf", "FLAGS": "flags", "OBJ#": "obj"},
    "xdb-xnm": {"NMSPCURI": "nmspcuri", "ID": "id"},
    "xdb-xpt": {"PATH": "path", "ID": "id"},
    "xdb-xqn": {"NMSPCID": "nmspcid", "LOCALNAME": "localname", "FLAGS": "flags", "ID": "id"},
}
# Fields whose NULL means -1 rather than 0 (OLR's "NULL" markers).
MINUS_ONE_WHEN_NULL: Final = frozenset({("sys-col", "precision"), ("sys-col", "scale"), ("sys-ecol", "guard-id")})
# Rows OLR keeps only while their object exists: array -> field holding the OBJ#.
DEPENDENT_ON_OBJ: Final = {
    "sys-ccol": "obj",
    "sys-cdef": "obj",
    "sys-col": "obj",
    "sys-deferredstg": "obj",
    "sys-ecol": "tab-obj",
    "sys-lob": "obj",
    "sys-tab": "obj",
    "sys-tabcompart": "obj",
    "sys-tabpart": "bo",
    "sys-tabsubpart": "p-obj",
}
# Owners whose USER$ rows are always kept: the tracked dictionary tables belong to them.
# (OLR drops a touched USER$ row of an owner outside the filter, SYS included, which would
# lose the owner of its own dictionary tables; that is not reproduced.)
DICTIONARY_OWNERS: Final = frozenset({"SYS", "XDB"})


# Columns OLR does not take from redo. It looks for a COL$ column named SIZE, which does not
# exist, so it never tracks LENGTH: a column created in redo has length 0 (in the `schema`
# columns output and the checkpoint files), an altered one keeps its old length. Copied, so
# both match OLR's.
NOT_TRACKED: Final = frozenset({("sys-col", "LENGTH")})


def default_row(key: str) -> Row:
    """A new dictionary row before any column is set (OLR's row constructors)."""
    row: Row = {}
    for name, kind in row_fields(key):
        if name == "row-id":
            continue
        if kind in (Kind.STR, Kind.ROWID):
            row[name] = ""
        else:
            row[name] = -1 if (key, name) in MINUS_ONE_WHEN_NULL else 0
    return row


def _array_fields(key: str) -> dict[str, str]:
    fields = COLUMN_FIELDS.get(key)
    if fields is None:
        fields = COLUMN_FIELDS[key[:7]]  # xdb-xnm<toksuf>...
    return fields


def decode_fields(
    key: str, table: Table, image: Mapping[int, bytes | None], present: Iterable[int] = ()
) -> dict[str, Any]:
    """Checkpoint fields of one row image of dictionary table ``table`` (array ``key``).

    ``image`` maps column positions to raw bytes (None = NULL); ``present`` lists columns
    the change carries without a value in ``image`` (NULL for OLR's rule). Raises DataError
    50019 for a column whose type is not the one expected and 50020 for a bad value.
    """
    fields = _array_fields(key)
    kinds = dict(row_fields(key))
    out: dict[str, Any] = {}
    for col in set(image) | set(present):
        if col >= len(table.columns):
            continue
        column = table.columns[col]
        name = fields.get(column.name)
        if name is None or (key, column.name) in NOT_TRACKED:
            continue
        value = image.get(col)
        if not value:
            out[name] = "" if kinds[name] is Kind.STR else (-1 if (key, name) in MINUS_ONE_WHEN_NULL else 0)
            continue
        out[name] = _decode(key, table, column.name, column.type_code, kinds[name], value)
    return out


def _decode(key: str, table: Table, column: str, type_code: int, kind: Kind, value: bytes) -> Any:
    where = f"ddl: {table.owner}.{table.name}: column {column}"
    if kind is Kind.STR:
        if type_code == TYPE_RAW:
            return value.hex().upper()
        if type_code not in (TYPE_VARCHAR2, TYPE_CHAR):
            raise DataError(f"{where} type found {type_code}", 50019)
        return get_charset(table.charset).to_utf8(value).decode("utf-8", "replace")
    if type_code != TYPE_NUMBER:
        raise DataError(f"{where} type found {type_code}", 50019)
    try:
        text = number_text(value)
    except NumberError as exc:  # not a NUMBER at all
        raise DataError(f"{where} value found {value.hex()}", 50020) from exc
    if text is None or "." in text or "e" in text.lower():
        raise DataError(f"{where} value found {text}", 50020)
    number = int(text)
    if number < 0 and kind not in (Kind.I16, Kind.I32):
        raise DataError(f"{where} value found {text}", 50020)
    return number


@dataclass
class TrackResult:
    """The replicated tables one committed transaction redefined or dropped (for the log)."""

    updated: list[str] = field(default_factory=list)  # OWNER.NAME (dataobj, obj), new or changed
    dropped: list[str] = field(default_factory=list)  # no longer replicated


class DictionaryTracker:
    """Keeps a :class:`Dictionary` and its table map current from committed SYS DML.

    ``rebuild(dictionary)`` returns the table map for the current rows (the same filter
    rules the run started with; replaced on a config reload). ``users`` are the configured
    owner names (a checkpoint's ``users``), used to prune USER$ rows as OLR does.
    """

    def __init__(
        self,
        dictionary: Dictionary,
        rebuild: Callable[[Dictionary], dict[int, Table]],
        *,
        users: Iterable[str] = (),
        adaptive: bool = False,
        schema_scn: int = 0,
    ):
        self.dictionary = dictionary
        self.rebuild = rebuild
        self.users = set(users)
        self.adaptive = adaptive
        self.schema_scn = schema_scn  # commit SCN of the last applied change
        self.pending = False  # changed since the last schema checkpoint was written

    @staticmethod
    def is_schema_table(table: Table) -> bool:
        """CCOL$/CDEF$/COL$/ECOL$: user DML in a transaction touching them is not output (OLR)."""
        return (table.owner, table.name) in SCHEMA_TABLES

    def apply(self, changes: Iterable[RowChange], scn: int, tables: dict[int, Table]) -> dict[int, Table] | None:
        """Apply the SYS row changes of one transaction committed at ``scn``.

        Returns the new table map, or None when no dictionary row changed. ``tables`` is the
        map in use, compared with the new one for the ``updated``/``dropped`` log lines.
        """
        touched: dict[str, set[str]] = {}
        count = 0
        for change in changes:
            table = change.table
            if table is None or not table.system:
                continue
            key = dictionary_key(table.owner, table.name)
            if key is None:
                continue
            rowid = rowid_text(change.data_obj, change.bdba, change.slot)
            if self._apply_one(key, change, table, rowid):
                touched.setdefault(key, set()).add(rowid)
                count += 1
        if not count:
            return None
        self._prune(touched)
        self.schema_scn = scn
        self.pending = True
        new_tables = self.rebuild(self.dictionary)
        result = _compare(tables, new_tables)
        for name in result.dropped:
            log.info(f"dropped metadata: {name}")
        for name in result.updated:
            log.info(f"updated metadata: {name}")
        return new_tables

    def object_name(self, obj: int, pending: Iterable[RowChange] = ()) -> tuple[str, str] | None:
        """(owner, name) of OBJ# ``obj`` in SYS.OBJ$ and USER$ as a transaction has written them
        so far (``pending``: its SYS row changes, not yet applied), or None when either row is
        missing: OLR's lookup for a DDL on a table it does not replicate (yet)."""
        objects: dict[str, dict[str, Any] | None] = {}  # ROWID -> fields (None: deleted)
        users: dict[int, str] = {}
        for change in pending:
            table = change.table
            key = dictionary_key(table.owner, table.name) if table is not None else None
            if key not in ("sys-obj", "sys-user") or table is None:
                continue
            rowid = rowid_text(change.data_obj, change.bdba, change.slot)
            if change.op == OP_DELETE:
                if key == "sys-obj":
                    objects[rowid] = None
                continue
            fields = decode_fields(key, table, change.after or {})
            if key == "sys-user":
                if "user" in fields and "name" in fields:
                    users[fields["user"]] = fields["name"]
            else:
                base = objects.get(rowid) or dict(self.dictionary.row(key, rowid) or {})
                objects[rowid] = {**base, **fields}
        row = next((r for r in objects.values() if r is not None and r.get("obj") == obj), None)
        if row is None:
            row = self.dictionary.index.objects.get(obj)
            if row is None or objects.get(row.get("row-id", ""), row) is None:
                return None
        owner = users.get(row.get("owner", -1)) or self.dictionary.user_name(row.get("owner", -1))
        if owner is None or "name" not in row:
            return None
        return owner, row["name"]

    def _apply_one(self, key: str, change: RowChange, table: Table, rowid: str) -> bool:
        d = self.dictionary
        exists = d.has_row(key, rowid)
        if change.op == OP_DELETE:
            if not exists:
                return False
            d.apply_row(key, "d", rowid)
            return True
        after = change.after or {}
        present = set(change.before or {}) - set(after)
        fields = decode_fields(key, table, after, present)
        if change.op == OP_INSERT:
            if exists and not self.adaptive:
                raise DataError(
                    f"duplicate {table.owner}.{table.name} (ROWID: {rowid}) for insert at offset: {change.offset}",
                    50022,
                )
        elif not exists and not self.adaptive:
            return False
        base = d.row(key, rowid) if exists else None
        try:
            d.apply_row(key, "c", rowid, {**(base if base is not None else default_row(key)), **fields})
        except DataError as exc:
            if exc.code != 50024:
                raise
            raise DataError(f"{exc.message} at offset: {change.offset}", 50024) from None
        return True

    def _prune(self, touched: dict[str, set[str]]) -> None:
        """Drop touched rows OLR would not keep (unknown owners, objects that are gone)."""
        d = self.dictionary
        for rowid in touched.get("sys-user", ()):
            row = d.row("sys-user", rowid)
            if row is not None and row["name"] not in self.users and row["name"] not in DICTIONARY_OWNERS:
                d.apply_row("sys-user", "d", rowid)
        if not self.adaptive:
            for rowid in touched.get("sys-obj", ()):
                row = d.row("sys-obj", rowid)
                if row is not None and d.user_name(row["owner"]) is None:
                    d.apply_row("sys-obj", "d", rowid)
        for key, obj_field in DEPENDENT_ON_OBJ.items():
            for rowid in touched.get(key, ()):
                row = d.row(key, rowid)
                if row is not None and row[obj_field] not in d.index.objects:
                    d.apply_row(key, "d", rowid)


def _describe(table: Table) -> str:
    return f"{table.owner}.{table.name} (dataobj: {table.data_obj}, obj: {table.obj})"


def _compare(old: Mapping[int, Table], new: Mapping[int, Table]) -> TrackResult:
    result = TrackResult()
    old_tables = {t.obj: t for t in old.values() if not t.system}
    new_tables = {t.obj: t for t in new.values() if not t.system}
    for obj, table in new_tables.items():
        before = old_tables.get(obj)
        if before is None or _signature(before) != _signature(table):
            result.updated.append(_describe(table))
    for obj, table in old_tables.items():
        if obj not in new_tables:
            result.dropped.append(_describe(table))
    return result


def _signature(table: Table) -> tuple[Any, ...]:
    return (
        table.owner,
        table.name,
        table.data_obj,
        tuple(
            (c.name, c.type_code, c.length, c.precision, c.scale, c.nullable, c.segcol, c.property, c.key)
            for c in table.columns
        ),
    )
