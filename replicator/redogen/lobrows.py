"""The dictionary rows of generated LOB columns: SYS.LOB$, the OBJ$ rows of their segments and
indexes, and the LOB flag in COL$ (kept apart from :mod:`replicator.redogen.lobs`, which the
column types import, because numbering the rows needs the column types' INTCOL#s)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replicator import events as ev
from replicator.redogen.coltypes import intcols
from replicator.redogen.ids import dba, rowid
from replicator.redogen.lobs import lob_columns

if TYPE_CHECKING:
    from replicator.redogen.rows import TableState


def add_dictionary_rows(doc: dict[str, Any], tables: list[TableState]) -> None:
    """Add SYS.LOB$ and the OBJ$ rows of LOB segments (type 21) and LOB indexes (type 1) to a
    schema checkpoint document, and mark LOB columns in COL$ (PROPERTY 0x80, as Oracle does)."""
    owners = {u["name"]: u["user"] for u in doc.get("sys-user", [])}
    # (OBJ#, SEGCOL#): an XMLTYPE's virtual column shares the COL# of its hidden CLOB.
    lob_cols = {(ts.obj, lob.column + 1) for ts in tables for lob in lob_columns(ts)}
    if not lob_cols:
        return
    # Copies: the lists and rows may be shared with the engine's catalog.
    doc["sys-lob"], doc["sys-obj"] = list(doc.get("sys-lob", [])), list(doc.get("sys-obj", []))
    known = {row["l-obj"] for row in doc["sys-lob"]}
    doc["sys-col"] = [
        dict(row, property=[row["property"][0] | ev.COL_PROPERTY_STORED_AS_LOB, row["property"][1]])
        if (row["obj"], row["seg-col"]) in lob_cols
        else row
        for row in doc.get("sys-col", [])
    ]
    n = 0
    for ts in tables:
        numbers = intcols(ts.ctypes)
        for lob in lob_columns(ts):
            n += 1
            if lob.segment in known or ts.spec.owner not in owners:
                continue
            col, intcol = lob.column + 1, numbers[lob.column]
            doc["sys-lob"].append(
                {
                    "row-id": rowid(2, dba(1, 0x7A00 + n // 64), n % 64),
                    "obj": ts.obj,
                    "col": col,
                    "int-col": intcol,
                    "l-obj": lob.segment,
                    "ts": ts.spec.ts,
                }
            )
            for k, (obj, name, kind) in enumerate(
                (
                    (lob.segment, f"SYS_LOB{ts.obj:010d}C{intcol:05d}$$", 21),
                    (lob.index, f"SYS_IL{ts.obj:010d}C{intcol:05d}$$", 1),
                )
            ):
                m = 2 * n + k
                doc["sys-obj"].append(
                    {
                        "row-id": rowid(18, dba(1, 0x7C00 + m // 64), m % 64),
                        "owner": owners[ts.spec.owner],
                        "obj": obj,
                        "data-obj": obj,
                        "name": name,
                        "type": kind,
                        "flags": [4, 0],
                        "single": 0,
                    }
                )
