"""The schema checkpoint ``<name>-chkpt-<scn>.json`` and a ready ``OpenLogReplicator.json``.

The checkpoint holds the database facts OLR reads in batch mode and the dictionary rows
(olr-interfaces.md §5.2 b): those of the dictionary tables themselves (SYS.OBJ$, TAB$,
COL$... as a real database has them, so their redo DML can be decoded) and of the
scenario's tables: SYS.USER$, OBJ$ (table and primary key index), TAB$, COL$, CDEF$/CCOL$
(primary key and supplemental log groups), TS$ and DEFERRED_STG$. They come from the
engine's :class:`~replicator.redogen.ddl.Catalog`, whose rows the timeline's DDL changes;
:func:`check_unique` refuses a dictionary with a key OLR keeps unique twice.
Values the parser does not interpret (TAB$ flags/property, DEFERRED_STG$) copy those of
the table in the 23ai fixture checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from replicator.errors import ConfigError
from replicator.redogen import byteorder
from replicator.redogen.ids import redo_time
from replicator.redogen.lobrows import add_dictionary_rows as add_lob_rows
from replicator.redogen.scenario import ContainerSpec, Scenario
from replicator.redogen.writer import ArchivedLog

if TYPE_CHECKING:
    from replicator.redogen.ddl import Catalog
    from replicator.redogen.rows import TableState


FLAG_EXPERIMENTAL_XMLTYPE = 0x10000
XDB_TTSET: dict[str, Any] = {
    "row-id": "AAAGUhAAAAAAD2mAAA",
    "guid": "48951E5C0814E048E063399B5E645A82",
    "toksuf": "28IKF5O20KT14E0OPPJDF68MK2",
    "flags": 0,
    "obj": 1,
}


class DictionarySource(Protocol):
    """What a schema checkpoint is written from: a run's generator.Generated, or the engine
    (generator.RedoGenerator) while it runs (online)."""

    @property
    def tables(self) -> list[TableState]: ...

    @property
    def catalog(self) -> Catalog: ...

    @property
    def catalogs(self) -> dict[str, Catalog]: ...


def schema_checkpoint(sc: Scenario, gen: DictionarySource, container: ContainerSpec | None = None) -> dict[str, Any]:
    """The whole checkpoint document, keys in OLR's order. In a multitenant scenario, the
    checkpoint of one ``container`` (the first by default): its CON_ID and name, its users
    and its own dictionary, as OLR 1.9 reads one PDB per checkpoint."""
    if container is None and sc.containers:
        container = sc.containers[0]
    tables = [t for t in gen.tables if container is None or t.spec.container == container.name]
    catalog = gen.catalogs[container.name] if container is not None else gen.catalog
    owners = sorted({t.spec.owner for t in tables})
    doc: dict[str, Any] = {
        "database": sc.name,
        "scn": sc.start_scn,
        "resetlogs": sc.effective_resetlogs,
        "activation": sc.activation,
        "time": redo_time(sc.start_epoch),
        "seq": 0,
        "offset": 0,
        "big-endian": int(byteorder.is_big()),
        "context": sc.database,
        "con-id": container.con_id if container is not None else sc.effective_con_id,
        "con-name": container.name if container is not None else sc.effective_con_name,
        "db-timezone": sc.db_timezone,
        "db-recovery-file-dest": "",
        "db-block-checksum": "TYPICAL",
        "log-archive-dest": "",
        "log-archive-format": sc.log_archive_format,
        "nls-character-set": sc.nls_charset,
        "nls-nchar-character-set": sc.nls_ncharset,
        "supp-log-db-primary": 0,
        "supp-log-db-all": 0,
        "online-redo": [],
        "incarnations": [
            {
                "incarnation": 1,
                "resetlogs-scn": 1,
                "prior-resetlogs-scn": 0,
                "status": "PARENT",
                "resetlogs": sc.effective_resetlogs - 86400 * 30,
                "prior-incarnation": 0,
            },
            {
                "incarnation": 2,
                "resetlogs-scn": sc.effective_resetlogs_scn,
                "prior-resetlogs-scn": 1,
                "status": "CURRENT",
                "resetlogs": sc.effective_resetlogs,
                "prior-incarnation": 1,
            },
        ],
        "users": owners,
        "schema-scn": sc.start_scn,
    }
    # The catalog's rows as they were before the timeline ran: the redo changes them later.
    doc.update(catalog.initial)
    add_lob_rows(doc, tables)  # SYS.LOB$ and the LOB segment/index objects (redogen.lobs)
    if sc.xdb_ttset if sc.xdb_ttset is not None else sc.flags & FLAG_EXPERIMENTAL_XMLTYPE:
        add_xdb_rows(doc)
    check_unique(doc)
    return doc


# The unique keys OLR keeps per dictionary array (a duplicate stops it with error 50024).
UNIQUE_KEYS: dict[str, tuple[tuple[str, ...], ...]] = {
    "sys-ccol": (("obj", "con", "int-col"),),
    "sys-cdef": (("obj", "con"), ("con",)),
    "sys-deferredstg": (("obj",),),
    "sys-ecol": (("tab-obj", "col-num"),),
    "sys-lob": (("obj", "int-col"), ("l-obj",)),
    "sys-lob-comp-part": (("l-obj", "part-obj"), ("part-obj",)),
    "sys-lob-frag": (("parent-obj", "frag-obj"),),
    "sys-obj": (("obj",),),
    "sys-tab": (("obj",),),
    "sys-tabcompart": (("obj",),),
    "sys-tabpart": (("bo", "obj"),),
    "sys-tabsubpart": (("p-obj", "obj"),),
    "sys-ts": (("ts",),),
    "sys-user": (("user",),),
}


def check_unique(doc: dict[str, Any]) -> None:
    """Refuse a checkpoint whose dictionary repeats a unique key or a ROWID (as a database
    never would): every OBJ# once in OBJ$, one TAB$ row per table, and so on."""
    for array, keys in UNIQUE_KEYS.items():
        rows = doc.get(array, [])
        for names in (("row-id",), *keys):
            seen: set[tuple] = set()
            for row in rows:
                key = tuple(row.get(n) for n in names)
                if key in seen:
                    raise ConfigError(f"generated dictionary: duplicate {array} {dict(zip(names, key))}", 30001)
                seen.add(key)


def add_xdb_rows(doc: dict[str, Any]) -> None:
    """The XDB.XDB$TTSET row of the 23ai fixture (the default token set, flags 0) with its
    empty token arrays: what OLR needs to start with flag 0x10000 (else error 50069)."""
    doc["xdb-ttset"] = [dict(XDB_TTSET)]
    for prefix in ("xdb-xnm", "xdb-xpt", "xdb-xqn"):
        doc[prefix + XDB_TTSET["toksuf"]] = []


def olr_config(
    sc: Scenario, logs: list[ArchivedLog], state_dir: Path, output: Path, container: ContainerSpec | None = None
) -> dict[str, Any]:
    """OpenLogReplicator.json: batch reader over ``logs``, file writer to ``output`` (the
    filter of one ``container``'s tables in a multitenant scenario, the first by default)."""
    if container is None and sc.containers:
        container = sc.containers[0]
    owners = sorted({t.owner for t in sc.tables if container is None or sc.container_of(t) == container})
    source: dict[str, Any] = {
        "alias": "S1",
        "name": sc.name,
        "reader": {
            "type": "batch",
            "redo-log": [str(log.path) for log in logs],
            "log-archive-format": sc.log_archive_format,
            "start-scn": sc.start_scn,
            "host-timezone": "+00:00",
        },
        "format": dict(sc.format),
        "filter": {"table": [{"owner": o, "table": ".*"} for o in owners]},
    }
    if sc.flags:
        source["flags"] = sc.flags
    return {
        "version": "1.9.0",
        "memory": {"min-mb": 32, "max-mb": 256},
        "state": {"type": "disk", "path": str(state_dir)},
        "source": [source],
        "target": [
            {
                "alias": "T1",
                "source": "S1",
                "writer": {"type": "file", "output": str(output), "new-line": 1, "append": 1},
            }
        ],
    }


def write_json(path: Path, doc: dict[str, Any]) -> None:
    """Write a JSON document (compact, one line, as the fixture checkpoint)."""
    path.write_text(json.dumps(doc, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
