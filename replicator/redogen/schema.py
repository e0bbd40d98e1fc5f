"""The schema checkpoint ``<name>-chkpt-<scn>.json`` and a ready ``OpenLogReplicator.json``.

The checkpoint holds the database facts OLR reads in batch mode and the dictionary rows
(olr-interfaces.md §5.2 b): those of the dictionary tables themselves (SYS.OBJ$, TAB$,
COL$... as a real database has them, so their redo DML can be decoded) and of the
scenario's tables: SYS.USER$, OBJ$ (table and primary key index), TAB$, COL$, CDEF$/CCOL$
(primary key and supplemental log groups), TS$ and DEFERRED_STG$. They come from the
engine's :class:`~replicator.redogen.ddl.Catalog`, whose rows the timeline's DDL changes;
:func:`dictionary` is the short form (user tables only) for callers without an engine run.
Values the parser does not interpret (TAB$ flags/property, DEFERRED_STG$) copy those of
the table in the 23ai fixture checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replicator.redogen import byteorder
from replicator.redogen.coltypes import intcols, xmltype_virtual_row
from replicator.redogen.engine import Generated
from replicator.redogen.ids import dba, redo_time, rowid
from replicator.redogen.lobs import add_dictionary_rows as add_lob_rows
from replicator.redogen.rows import TableState
from replicator.redogen.scenario import Scenario
from replicator.redogen.writer import ArchivedLog

# Data object numbers of the dictionary tables, used to mint their rows' ROWIDs.
_DICT_OBJ = {"sys-obj": 18, "sys-col": 2, "sys-tab": 2, "sys-user": 10, "sys-cdef": 29, "sys-ccol": 29,
             "sys-ts": 6, "sys-deferredstg": 81}
ARRAYS = ("sys-ccol", "sys-cdef", "sys-col", "sys-deferredstg", "sys-ecol", "sys-lob", "sys-lob-comp-part",
          "sys-lob-frag", "sys-obj", "sys-tab", "sys-tabcompart", "sys-tabpart", "sys-tabsubpart", "sys-ts",
          "sys-user", "xdb-ttset")
SUPP_CDEF = {"pk": 14, "all": 17}
FLAG_EXPERIMENTAL_XMLTYPE = 0x10000
XDB_TTSET: dict[str, Any] = {"row-id": "AAAGUhAAAAAAD2mAAA", "guid": "48951E5C0814E048E063399B5E645A82",
                             "toksuf": "28IKF5O20KT14E0OPPJDF68MK2", "flags": 0, "obj": 1}


class _RowIds:
    """Unique, well-formed ROWIDs per dictionary table."""

    def __init__(self) -> None:
        self._n: dict[str, int] = {}

    def __call__(self, array: str) -> str:
        n = self._n.get(array, 0)
        self._n[array] = n + 1
        return rowid(_DICT_OBJ[array], dba(1, 0x7000 + n // 64), n % 64)


def dictionary(sc: Scenario, tables: list[TableState]) -> dict[str, list[dict[str, Any]]]:
    """The dictionary arrays describing ``tables``."""
    rid = _RowIds()
    rows: dict[str, list[dict[str, Any]]] = {a: [] for a in ARRAYS}
    owners: dict[str, int] = {}
    for ts in tables:
        owners.setdefault(ts.spec.owner, 136 + len(owners))
    rows["sys-user"].append({"row-id": rid("sys-user"), "user": 0, "name": "SYS", "spare1": [384, 0], "single": 1})
    for name, user in owners.items():
        rows["sys-user"].append({"row-id": rid("sys-user"), "user": user, "name": name, "spare1": [0, 0],
                                 "single": 0})
    for ts_no, name in ((0, "SYSTEM"), (1, "SYSAUX"), (2, "UNDOTBS1"), (3, "TEMP"), (6, "USERS")):
        rows["sys-ts"].append({"row-id": rid("sys-ts"), "ts": ts_no, "name": name, "block-size": sc.db_block_size})
    con = 8586
    for ts in tables:
        spec, obj = ts.spec, ts.obj
        rows["sys-obj"].append({"row-id": rid("sys-obj"), "owner": owners[spec.owner], "obj": obj,
                                "data-obj": ts.data_obj, "name": spec.name, "type": 2, "flags": [0, 0], "single": 0})
        rows["sys-tab"].append({"row-id": rid("sys-tab"), "obj": obj, "data-obj": ts.data_obj, "ts": spec.ts,
                                "clu-cols": 0, "flags": [1073741825, 0], "property": [17716740096, 0]})
        rows["sys-deferredstg"].append({"row-id": rid("sys-deferredstg"), "obj": obj, "flags-stg": [8, 0]})
        numbers = intcols(ts.ctypes)
        for n, (col, ct, intcol) in enumerate(zip(ts.table.columns, ts.ctypes, numbers), start=1):
            null = 0 if col.nullable else 1
            name = col.name
            if ct.xmltype:  # the virtual XMLTYPE column, then its hidden CLOB
                virtual = xmltype_virtual_row(intcol - 1, col.name)
                rows["sys-col"].append({"row-id": rid("sys-col"), "obj": obj, "col": n, "seg-col": 0,
                                        "int-col": intcol - 1, "name": col.name, "type": virtual["TYPE#"],
                                        "length": virtual["LENGTH"], "precision": -1, "scale": -1,
                                        "charset-form": 0, "charset-id": 0, "null": null, "property": [0, 0]})
                name = f"SYS_NC{intcol:05d}$"
            rows["sys-col"].append({"row-id": rid("sys-col"), "obj": obj, "col": n, "seg-col": n, "int-col": intcol,
                                    "name": name, "type": ct.type_code, "length": ct.length,
                                    "precision": ct.precision, "scale": ct.scale, "charset-form": ct.charset_form,
                                    "charset-id": col.charset_id, "null": null, "property": [col.property, 0]})
        if spec.primary_key:
            rows["sys-obj"].append({"row-id": rid("sys-obj"), "owner": owners[spec.owner], "obj": obj + 1,
                                    "data-obj": obj + 1, "name": f"SYS_C{con:07d}", "type": 1, "flags": [4, 0],
                                    "single": 0})
            rows["sys-cdef"].append({"row-id": rid("sys-cdef"), "con": con, "obj": obj, "type": 2})
            for i in ts.key_cols:
                rows["sys-ccol"].append({"row-id": rid("sys-ccol"), "con": con, "int-col": numbers[i], "obj": obj,
                                         "spare1": [0, 0]})
            con += 1
        if spec.supplemental in SUPP_CDEF:
            rows["sys-cdef"].append({"row-id": rid("sys-cdef"), "con": con, "obj": obj,
                                     "type": SUPP_CDEF[spec.supplemental]})
            con += 1
    return rows


def schema_checkpoint(sc: Scenario, gen: Generated) -> dict[str, Any]:
    """The whole checkpoint document, keys in OLR's order."""
    owners = sorted({t.spec.owner for t in gen.tables})
    doc: dict[str, Any] = {
        "database": sc.name, "scn": sc.start_scn, "resetlogs": sc.effective_resetlogs, "activation": sc.activation,
        "time": redo_time(sc.start_epoch), "seq": 0, "offset": 0, "big-endian": int(byteorder.is_big()), "context": sc.database,
        "con-id": sc.effective_con_id, "con-name": sc.effective_con_name, "db-timezone": sc.db_timezone,
        "db-recovery-file-dest": "", "db-block-checksum": "TYPICAL", "log-archive-dest": "",
        "log-archive-format": sc.log_archive_format, "nls-character-set": sc.nls_charset,
        "nls-nchar-character-set": sc.nls_ncharset, "supp-log-db-primary": 0, "supp-log-db-all": 0,
        "online-redo": [],
        "incarnations": [
            {"incarnation": 1, "resetlogs-scn": 1, "prior-resetlogs-scn": 0, "status": "PARENT",
             "resetlogs": sc.effective_resetlogs - 86400 * 30, "prior-incarnation": 0},
            {"incarnation": 2, "resetlogs-scn": sc.effective_resetlogs_scn, "prior-resetlogs-scn": 1,
             "status": "CURRENT", "resetlogs": sc.effective_resetlogs, "prior-incarnation": 1}],
        "users": owners, "schema-scn": sc.start_scn}
    catalog = getattr(gen, "catalog", None)
    # The catalog's rows as they were before the timeline ran: the redo changes them later.
    doc.update(catalog.initial if catalog is not None else dictionary(sc, gen.tables))
    add_lob_rows(doc, gen.tables)  # SYS.LOB$ and the LOB segment/index objects (redogen.lobs)
    if sc.xdb_ttset if sc.xdb_ttset is not None else sc.flags & FLAG_EXPERIMENTAL_XMLTYPE:
        add_xdb_rows(doc)
    return doc


def add_xdb_rows(doc: dict[str, Any]) -> None:
    """The XDB.XDB$TTSET row of the 23ai fixture (the default token set, flags 0) with its
    empty token arrays: what OLR needs to start with flag 0x10000 (else error 50069)."""
    doc["xdb-ttset"] = [dict(XDB_TTSET)]
    for prefix in ("xdb-xnm", "xdb-xpt", "xdb-xqn"):
        doc[prefix + XDB_TTSET["toksuf"]] = []


def olr_config(sc: Scenario, logs: list[ArchivedLog], state_dir: Path, output: Path) -> dict[str, Any]:
    """OpenLogReplicator.json: batch reader over ``logs``, file writer to ``output``."""
    owners = sorted({t.owner for t in sc.tables})
    source: dict[str, Any] = {
        "alias": "S1", "name": sc.name,
        "reader": {"type": "batch", "redo-log": [str(log.path) for log in logs],
                   "log-archive-format": sc.log_archive_format, "start-scn": sc.start_scn,
                   "host-timezone": "+00:00"},
        "format": dict(sc.format),
        "filter": {"table": [{"owner": o, "table": ".*"} for o in owners]},
    }
    if sc.flags:
        source["flags"] = sc.flags
    return {"version": "1.9.0", "memory": {"min-mb": 32, "max-mb": 256},
            "state": {"type": "disk", "path": str(state_dir)}, "source": [source],
            "target": [{"alias": "T1", "source": "S1",
                        "writer": {"type": "file", "output": str(output), "new-line": 1, "append": 1}}]}


def write_json(path: Path, doc: dict[str, Any]) -> None:
    """Write a JSON document (compact, one line, as the fixture checkpoint)."""
    path.write_text(json.dumps(doc, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
