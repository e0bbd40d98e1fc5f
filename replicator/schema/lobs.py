"""LOB storage of a table from the dictionary rows: SYS.LOB$, LOBFRAG$, LOBCOMPPART$, OBJ$, TS$.

For every LOB column OpenLogReplicator needs the DATAOBJ# of the LOB segment (and of its
partitions and subpartitions) to recognise 19.1/26.6 page vectors, the page size of their
tablespace, and the DATAOBJ#s of the LOB index ``SYS_IL<obj:010>C<intcol:05>$$`` to read
BasicFile page order from 10.x leaf changes (redo-format.md §11.2).
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol

from replicator import log
from replicator.events import TableLob


class DictionaryIndex(Protocol):
    """What the LOB lookups read of a dictionary's index (schema.dictionary.DictionaryIndex)."""

    @property
    def objects(self) -> Mapping[int, dict[str, Any]]: ...

    @property
    def columns(self) -> Mapping[int, list[dict[str, Any]]]: ...


class Dictionary(Protocol):
    """What the LOB lookups read of a dictionary (schema.dictionary.Dictionary): its rows and
    its index (a port, so that this module does not import the dictionary that uses it)."""

    @property
    def index(self) -> DictionaryIndex: ...

    def rows(self, key: str) -> Iterable[dict[str, Any]]: ...


# Tablespace block size -> usable LOB page size (§11.2); anything else uses 8132 (warning 60022).
PAGE_SIZES: Final = {8192: 8132, 16384: 16264, 32768: 32528}
DEFAULT_PAGE_SIZE: Final = 8132


class _LobRows:
    """SYS.LOB$ and friends grouped for lookups (built once per dictionary index)."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.lobs: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dictionary.rows("sys-lob"):
            self.lobs[row["obj"]].append(row)
        self.frags: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dictionary.rows("sys-lob-frag"):
            self.frags[row["parent-obj"]].append(row)
        self.comp_parts: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for row in dictionary.rows("sys-lob-comp-part"):
            self.comp_parts[row["l-obj"]].append(row)
        self.block_sizes = {row["ts"]: row["block-size"] for row in dictionary.rows("sys-ts")}
        self.by_name: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
        for row in dictionary.rows("sys-obj"):
            if row["name"].startswith("SYS_IL"):
                self.by_name[row["owner"], row["name"]].append(row)


_CACHE: weakref.WeakKeyDictionary[DictionaryIndex, _LobRows] = weakref.WeakKeyDictionary()


def _rows(dictionary: Dictionary) -> _LobRows:
    index = dictionary.index
    found = _CACHE.get(index)
    if found is None:
        found = _CACHE[index] = _LobRows(dictionary)
    return found


def _page_size(rows: _LobRows, ts: int) -> int:
    block = rows.block_sizes.get(ts)
    size = PAGE_SIZES.get(block or 0)
    if size is None:
        detail = f", BLOCKSIZE: {block}" if block is not None else ""
        log.warning(60022, f"missing TS#: {ts}{detail})")
        return DEFAULT_PAGE_SIZE
    return size


def table_lobs(dictionary: Dictionary, obj: int) -> tuple[TableLob, ...]:
    """The LOB columns of table ``obj`` with their segments and LOB indexes (OLR's DbLob)."""
    rows = _rows(dictionary)
    lob_rows = rows.lobs.get(obj)
    if not lob_rows:
        return ()
    idx = dictionary.index
    sys_obj = idx.objects.get(obj)
    if sys_obj is None:
        return ()
    segcols = {c["col"]: c["seg-col"] for c in idx.columns.get(obj, []) if c["seg-col"] > 0}
    out: list[TableLob] = []
    for lob in lob_rows:
        seg = idx.objects.get(lob["l-obj"])
        segcol = segcols.get(lob["col"])
        if seg is None or segcol is None:
            continue  # OLR stops with 50027 here; a LOB we cannot place is simply not assembled
        name = f"SYS_IL{obj:010d}C{lob['int-col']:05d}$$"
        indexes = tuple(o["data-obj"] for o in rows.by_name.get((sys_obj["owner"], name), []) if o["data-obj"])
        if not indexes:
            log.warning(
                60021, f"missing LOB index for LOB (OBJ#: {obj}, DATAOBJ#: {lob['l-obj']}, COL#: {lob['int-col']})"
            )
        segments: dict[int, int] = {}
        frags = list(rows.frags.get(lob["l-obj"], []))
        for part in rows.comp_parts.get(lob["l-obj"], []):
            frags += rows.frags.get(part["part-obj"], [])
        for frag in frags:
            frag_obj = idx.objects.get(frag["frag-obj"])
            if frag_obj is not None:
                segments[frag_obj["data-obj"]] = _page_size(rows, frag["ts"])
        segments[seg["data-obj"]] = _page_size(rows, lob["ts"])
        out.append(TableLob(segcol - 1, segments, indexes))
    return tuple(out)
