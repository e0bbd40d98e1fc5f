"""An in-memory mirror of the SYS/XDB dictionary rows, and the tables built from it.

Rows are kept per dictionary table and keyed by ROWID, because that is how redo changes
them later: dictionary tracking (redo-format.md §10.2) applies each committed insert,
update or delete of SYS.COL$, SYS.OBJ$... through :meth:`Dictionary.apply_row`. Lookup
indexes are rebuilt lazily after a change. :meth:`Dictionary.build_table` turns the rows
of one OBJ# into an :class:`~replicator.events.Table` the way OLR's Schema does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from replicator.errors import DataError
from replicator.events import (
    COL_PROPERTY_GUARD,
    COL_PROPERTY_HIDDEN,
    COL_PROPERTY_NESTED,
    COL_PROPERTY_UNUSED,
    TYPE_CLOB,
    Column,
    Table,
)
from replicator.schema.document import SchemaCheckpoint
from replicator.schema.keys import KeyIndex, unique_keys
from replicator.schema.lobs import table_lobs
from replicator.schema.rows import Row, dictionary_key, parse_row, row_fields, rowid_sort_key

OBJ_TYPE_TABLE: Final = 2
OBJ_FLAGS_TEMPORARY: Final = 0x02 | 0x10 | 0x20  # temporary, secondary, in-memory temp
OBJ_FLAGS_DROPPED: Final = 0x80
TAB_PROPERTY_BINARY: Final = 0x1
TAB_PROPERTY_PARTITIONED: Final = 0x20
TAB_PROPERTY_IOT: Final = 0x40 | 0x80  # index-only, row overflow
TAB_PROPERTY_NESTED: Final = 0x2000
TAB_FLAGS_IOT_MAPPING: Final = 1 << 29
TAB_FLAGS_DELAYED_SEGMENT: Final = 1 << 34
DEFERRED_STG_COMPRESSED: Final = 0x4
COL_PROPERTY_SYSTEM_GENERATED: Final = 0x100
CDEF_TYPE_PK: Final = 2
# The four tables whose change marks a transaction as a schema change in OLR.
SCHEMA_TABLES: Final = frozenset({("SYS", "CCOL$"), ("SYS", "CDEF$"), ("SYS", "COL$"), ("SYS", "ECOL$")})

_OPS: Final = {"c": "c", "i": "c", "insert": "c", "u": "u", "update": "u", "d": "d", "delete": "d"}


class Dictionary:
    """The mirrored dictionary rows (array key -> ROWID -> row) plus derived lookups."""

    def __init__(self, rows: Mapping[str, Iterable[Row]] | None = None):
        self._rows: dict[str, dict[str, Row]] = defaultdict(dict)
        for key, table_rows in (rows or {}).items():
            row_fields(key)  # reject unknown array names early
            self._rows[key].update((row["row-id"], dict(row)) for row in table_rows)
        self._index: DictionaryIndex | None = None
        self._keys: dict[str, KeyIndex] = {}  # unique keys per array, built when first changed

    @classmethod
    def from_checkpoint(cls, checkpoint: SchemaCheckpoint) -> Dictionary:
        """The dictionary held by a loaded checkpoint (its ``rows``)."""
        return cls(checkpoint.rows)

    def apply_row(self, table_name: str, op: str, rowid: str, fields: Mapping[str, Any] | None = None) -> None:
        """Apply one committed change of a dictionary table, keyed by ROWID.

        ``table_name`` is an array key (``sys-col``) or ``OWNER.TABLE`` (``SYS.COL$``);
        ``op`` is ``c``/``u``/``d`` (or insert/update/delete). Insert replaces a row with
        the same ROWID; update merges ``fields`` into the row (a complete row is inserted
        when the ROWID is unknown, a partial one ignored); delete of an unknown ROWID is a
        no-op. Fields use the checkpoint JSON names and are validated (20003/20005);
        128-bit fields may be ints or ``[low64, high64]``. A row taking a unique key another
        row holds (two objects with one OBJ#...) is error 50024, as in OLR.
        """
        key = table_name if "." not in table_name else dictionary_key(*table_name.split(".", 1))
        if key is None:
            raise KeyError(f"not a tracked dictionary table: {table_name}")
        spec = row_fields(key)  # KeyError for an unknown array name
        kind = _OPS[op.lower()]
        table = self._rows[key]
        keys = self._key_index(key)
        old = table.get(rowid)
        if kind == "d":
            if old is not None:
                if keys is not None:
                    keys.drop(old)
                del table[rowid]
        else:
            merged = {**(old or {}), **(fields or {}), "row-id": rowid}
            if kind == "u" and old is None and any(f not in merged for f, _ in spec):
                return
            row = parse_row(key, merged, f"dictionary {key} row {rowid}", native=True)
            if keys is not None:
                if old is not None:
                    keys.drop(old)
                keys.add(row)
            table[rowid] = row
        self._index = None

    def _key_index(self, key: str) -> KeyIndex | None:
        index = self._keys.get(key)
        if index is None and unique_keys(key):
            index = self._keys[key] = KeyIndex(key, self._rows[key].values())
        return index

    def has_row(self, key: str, rowid: str) -> bool:
        """Whether array ``key`` holds a row with this ROWID."""
        return rowid in self._rows.get(key, {})

    def row(self, key: str, rowid: str) -> Row | None:
        """A copy of the row of array ``key`` with this ROWID, or None."""
        found = self._rows.get(key, {}).get(rowid)
        return dict(found) if found is not None else None

    def rows(self, key: str) -> list[Row]:
        """The rows of array ``key`` in ROWID order."""
        return sorted(self._rows.get(key, {}).values(), key=lambda r: rowid_sort_key(r["row-id"]))

    def snapshot(self) -> dict[str, list[Row]]:
        """Every array's rows, ready to be stored in a :class:`SchemaCheckpoint`."""
        return {key: self.rows(key) for key in self._rows}

    @property
    def index(self) -> DictionaryIndex:
        """The lookup indexes for the current rows."""
        if self._index is None:
            self._index = DictionaryIndex(self._rows)
        return self._index

    def user_name(self, user: int) -> str | None:
        """SYS.USER$ name of USER#, or None."""
        row = self.index.users.get(user)
        return row["name"] if row else None

    def tables(self) -> Iterator[Row]:
        """OBJ$ rows of tables (type 2) that are not dropped."""
        for row in self.index.objects.values():
            if row["type"] == OBJ_TYPE_TABLE and not row["flags"] & OBJ_FLAGS_DROPPED:
                yield row

    def skip_reason(self, obj: int) -> str | None:
        """Why OLR would not track table ``obj`` (no TAB$, binary, IOT...), or None."""
        idx = self.index
        tab, sys_obj = idx.tabs.get(obj), idx.objects.get(obj)
        if tab is None or sys_obj is None:
            return "SYS.TAB$ entry missing"
        if tab["property"] & TAB_PROPERTY_BINARY:
            return "binary"
        if tab["property"] & TAB_PROPERTY_IOT or tab["flags"] & TAB_FLAGS_IOT_MAPPING:
            return "IOT"
        if sys_obj["flags"] & OBJ_FLAGS_TEMPORARY:
            return "temporary table"
        if tab["property"] & TAB_PROPERTY_NESTED:
            return "nested table"
        delayed = tab["flags"] & TAB_FLAGS_DELAYED_SEGMENT
        if delayed and not tab["property"] & TAB_PROPERTY_PARTITIONED:
            stg = idx.deferred_stg.get(obj)
            if stg is not None and stg["flags-stg"] & DEFERRED_STG_COMPRESSED:
                return "compressed table"
        return None

    def partitions(self, obj: int) -> list[tuple[int, int]]:
        """(OBJ#, DATAOBJ#) of every partition and subpartition of a partitioned table."""
        idx = self.index
        tab = idx.tabs.get(obj)
        if tab is None or not tab["property"] & TAB_PROPERTY_PARTITIONED:
            return []
        found = [(p["obj"], p["data-obj"]) for p in idx.tabpart.get(obj, [])]
        for compart in idx.tabcompart.get(obj, []):
            found += [(s["obj"], s["data-obj"]) for s in idx.tabsubpart.get(compart["obj"], [])]
        return found

    def build_table(
        self,
        obj: int,
        *,
        owner: str | None = None,
        system: bool = False,
        charset: str = "AL32UTF8",
        ncharset: str = "AL16UTF16",
    ) -> Table:
        """The table for OBJ# ``obj`` (callers check :meth:`skip_reason` first).

        Columns come from COL$ in SEGCOL# order (SEGCOL# 0 is virtual and skipped); a
        system-generated column takes the name of the virtual column with the same COL#
        (and is marked ``xml_type``, as OLR marks it);
        a column is a key column when a CCOL$ row ties it to a CDEF$ PK (type 2). A gap in
        the SEGCOL# sequence is error 50002, as in OLR.
        """
        idx = self.index
        sys_obj, tab = idx.objects[obj], idx.tabs[obj]
        owner = owner if owner is not None else (self.user_name(sys_obj["owner"]) or f"USER_{obj}")
        all_cols = idx.columns.get(obj, [])
        virtual_names = {c["col"]: c["name"] for c in all_cols if c["seg-col"] == 0}
        columns: list[Column] = []
        for col in all_cols:
            if col["seg-col"] <= 0:
                continue
            if col["seg-col"] != len(columns) + 1:
                raise DataError(
                    f"table {owner}.{sys_obj['name']} (obj: {obj}) column "
                    f"{col['name']} (segcol#: {col['seg-col']}) on position "
                    f"{len(columns) + 1}",
                    50002,
                )
            prop = col["property"]
            name = col["name"]
            xml_type = bool(prop & COL_PROPERTY_SYSTEM_GENERATED) and col["col"] in virtual_names
            if xml_type:
                name = virtual_names[col["col"]]
            columns.append(
                Column(
                    name=name,
                    type_code=col["type"],
                    length=col["length"],
                    precision=col["precision"],
                    scale=col["scale"],
                    charset_form=col["charset-form"],
                    charset_id=col["charset-id"],
                    nullable=col["null"] == 0,
                    segcol=col["seg-col"],
                    property=prop,
                    key=self._is_pk(obj, col["int-col"]),
                    guard=bool(prop & COL_PROPERTY_GUARD),
                    hidden=bool(prop & COL_PROPERTY_HIDDEN),
                    nested=bool(prop & COL_PROPERTY_NESTED),
                    unused=bool(prop & COL_PROPERTY_UNUSED),
                    xml_type=xml_type,
                )
            )
        return Table(
            obj=obj,
            data_obj=tab["data-obj"],
            owner=owner,
            name=sys_obj["name"],
            columns=columns,
            key_columns=tuple(i for i, c in enumerate(columns) if c.key),
            system=system,
            charset=charset,
            ncharset=ncharset,
            clu_cols=tab["clu-cols"],
            lobs=() if system else table_lobs(self, obj),
        )

    def _is_pk(self, obj: int, int_col: int) -> bool:
        # A CCOL$ row without its CDEF$ is skipped (OLR warns 70005 and goes on).
        cdefs = self.index.cdefs
        return any(
            cdefs.get(cc["con"], {}).get("type") == CDEF_TYPE_PK for cc in self.index.ccols.get((obj, int_col), ())
        )


class DictionaryIndex:
    """Lookups derived from the rows (by USER#, OBJ#, CON#...); rebuilt after any change.

    Maps hold rows; lists are in ROWID order (columns: SEGCOL#, then ROWID).
    """

    def __init__(self, rows: Mapping[str, Mapping[str, Row]]):
        def by(key: str, field: str) -> dict[Any, Row]:
            return {row[field]: row for row in _ordered(rows.get(key, {}))}

        def group(key: str, field: str) -> dict[Any, list[Row]]:
            out: dict[Any, list[Row]] = defaultdict(list)
            for row in sorted(rows.get(key, {}).values(), key=lambda r: r["obj"]):
                out[row[field]].append(row)
            return out

        self.users = by("sys-user", "user")
        self.objects = by("sys-obj", "obj")
        self.tabs = by("sys-tab", "obj")
        self.cdefs = by("sys-cdef", "con")
        self.deferred_stg = by("sys-deferredstg", "obj")
        self.tabpart = group("sys-tabpart", "bo")
        self.tabcompart = group("sys-tabcompart", "bo")
        self.tabsubpart = group("sys-tabsubpart", "p-obj")
        self.columns: dict[int, list[Row]] = defaultdict(list)
        for col in _ordered(rows.get("sys-col", {})):
            self.columns[col["obj"]].append(col)
        for cols in self.columns.values():
            cols.sort(key=lambda c: c["seg-col"])  # stable: ROWID order among equal SEGCOL#
        self.ccols: dict[tuple[int, int], list[Row]] = defaultdict(list)
        for cc in _ordered(rows.get("sys-ccol", {})):
            self.ccols[cc["obj"], cc["int-col"]].append(cc)


def _ordered(table: Mapping[str, Row]) -> list[Row]:
    return sorted(table.values(), key=lambda r: rowid_sort_key(r["row-id"]))


def column_charset(column: Column, table: Table) -> str | int:
    """The character set of a character column, as OLR picks it (redo-format.md §8.8).

    CHARSETFORM 1 is the database set, except CLOB, which OLR decodes with the national
    set; form 2 is the national set; anything else returns the numeric CHARSETID.
    """
    if column.charset_form == 1:
        return table.ncharset if column.type_code == TYPE_CLOB else table.charset
    if column.charset_form == 2:
        return table.ncharset
    return column.charset_id
