"""The unique keys of the dictionary tables, enforced the way OpenLogReplicator enforces them.

OLR keeps every SYS/XDB table it mirrors in a map by ROWID plus one or two unique key maps
(an ordered one and a hashed one). Loading a schema checkpoint adds each row to all of
them: a second row with the same ROWID is error 50022, a second row with the same key
is error 50024 (the hashed key's message ends in ``)2``). Dictionary tracking re-adds
the keys of every row it inserts or updates, with the same 50024.
Oracle's dictionary never holds such rows, so they mean a damaged or invented
checkpoint (e.g. one object number given to two objects).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from replicator.errors import DataError
from replicator.schema.rows import SYS_TABLE_NAMES, XDB_TOKSUF_FIELDS, Row

# Array -> its unique keys as (fields, message suffix): OLR's ordered key first (suffix ""),
# then its hashed key (suffix "2"). COL$'s ordered key holds the ROWID, so it never clashes.
UNIQUE_KEYS: Final[dict[str, tuple[tuple[tuple[str, ...], str], ...]]] = {
    "sys-ccol": ((("obj", "con", "int-col"), ""),),
    "sys-cdef": ((("obj", "con"), ""), (("con",), "2")),
    "sys-col": (),
    "sys-deferredstg": ((("obj",), "2"),),
    "sys-ecol": ((("tab-obj", "col-num"), "2"),),
    "sys-lob": ((("obj", "int-col"), ""), (("l-obj",), "2")),
    "sys-lob-comp-part": ((("l-obj", "part-obj"), ""), (("part-obj",), "2")),
    "sys-lob-frag": ((("parent-obj", "frag-obj"), ""),),
    "sys-obj": ((("owner", "name", "obj", "data-obj"), ""), (("obj",), "2")),
    "sys-tab": ((("obj",), "2"),),
    "sys-tabcompart": ((("bo", "obj"), ""), (("obj",), "2")),
    "sys-tabpart": ((("bo", "obj"), ""),),
    "sys-tabsubpart": ((("p-obj", "obj"), ""),),
    "sys-ts": ((("ts",), "2"),),
    "sys-user": ((("user",), "2"),),
    "xdb-ttset": ((("toksuf",), "2"),),
}
_XDB_KEYS: Final = ((("id",), "2"),)
_XDB_NAMES: Final = {"xdb-xnm": "XDB.X$NM", "xdb-xpt": "XDB.X$PT", "xdb-xqn": "XDB.X$QN"}
# The order OLR loads the arrays of a checkpoint in (the token-set arrays follow, per set).
LOAD_ORDER: Final = (
    "sys-user",
    "sys-obj",
    "sys-col",
    "sys-ccol",
    "sys-cdef",
    "sys-deferredstg",
    "sys-ecol",
    "sys-lob",
    "sys-lob-comp-part",
    "sys-lob-frag",
    "sys-tab",
    "sys-tabpart",
    "sys-tabcompart",
    "sys-tabsubpart",
    "sys-ts",
    "xdb-ttset",
)


def unique_keys(key: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    """The unique keys of array ``key`` (``sys-obj``, ``xdb-xnm<toksuf>``...)."""
    found = UNIQUE_KEYS.get(key)
    if found is not None:
        return found
    return _XDB_KEYS if key[:7] in XDB_TOKSUF_FIELDS else ()


def table_name(key: str) -> str:
    """OLR's name for the table behind array ``key``: ``SYS.OBJ$``, ``XDB.X$NM``..."""
    names = SYS_TABLE_NAMES.get(key)
    return ".".join(names) if names is not None else _XDB_NAMES.get(key[:7], key)


def describe(row: Row) -> str:
    """A row for an error message: ``ROWID: ..., obj: 5, ...`` (checkpoint field names)."""
    return ", ".join(
        f"ROWID: {v}" if k == "row-id" else f"{k}: {v!r}" if isinstance(v, str) else f"{k}: {v}" for k, v in row.items()
    )


def duplicate_key_error(key: str, row: Row, suffix: str, where: str = "") -> DataError:
    """OLR's error 50024 for ``row`` of array ``key`` clashing on a unique key."""
    prefix = f"{where} - " if where else ""
    return DataError(f"{prefix}duplicate {table_name(key)} value for unique ({describe(row)}){suffix}", 50024)


def check_rows(rows: Mapping[str, Iterable[Row]], where: str) -> None:
    """Raise 50022 / 50024 for the first duplicate ROWID or unique key, in OLR's load order."""
    order = [k for k in LOAD_ORDER if k in rows]
    order += [k for k in rows if k not in order]  # token-set arrays, in document order
    for key in order:
        seen_rowids: set[str] = set()
        keys = unique_keys(key)
        seen: list[set[tuple]] = [set() for _ in keys]
        for row in rows[key]:
            rowid = row["row-id"]
            if rowid in seen_rowids:
                raise DataError(f"{where} - duplicate {table_name(key)} ({describe(row)}) for insert", 50022)
            seen_rowids.add(rowid)
            for (fields, suffix), taken in zip(keys, seen):
                value = tuple(row[f] for f in fields)
                if value in taken:
                    raise duplicate_key_error(key, row, suffix, where)
                taken.add(value)


class KeyIndex:
    """The unique keys of one array's rows, kept up to date as rows change (dictionary tracking)."""

    def __init__(self, key: str, rows: Iterable[Row]):
        self.key = key
        self.keys = unique_keys(key)
        self.maps: list[dict[tuple, str]] = [{} for _ in self.keys]
        for row in rows:  # rows already loaded were checked then: the first holder keeps a key
            for (fields, _), taken in zip(self.keys, self.maps):
                taken.setdefault(tuple(row[f] for f in fields), row["row-id"])

    def drop(self, row: Row) -> None:
        """Forget the keys of ``row`` (deleted, or about to change)."""
        rowid = row["row-id"]
        for (fields, _), taken in zip(self.keys, self.maps):
            value = tuple(row[f] for f in fields)
            if taken.get(value) == rowid:
                del taken[value]

    def add(self, row: Row) -> None:
        """Record the keys of ``row``; 50024 when another row holds one of them."""
        rowid = row["row-id"]
        for (fields, suffix), taken in zip(self.keys, self.maps):
            value = tuple(row[f] for f in fields)
            holder = taken.get(value)
            if holder is not None and holder != rowid:
                raise duplicate_key_error(self.key, row, suffix)
        for (fields, _), taken in zip(self.keys, self.maps):
            taken[tuple(row[f] for f in fields)] = rowid
