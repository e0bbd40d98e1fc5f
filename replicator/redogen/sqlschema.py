"""Table definitions from an OpenLogReplicator schema checkpoint, for SQL scripts.

``replicator redogen script.sql --schema DIR`` takes each table the script creates from the
checkpoint the database wrote (``<name>-chkpt-<scn>.json``): OBJ#, tablespace, columns with
their COL$ types, lengths, precision and scale, the primary key (CDEF$ type 2) and the
supplemental log groups (CDEF$ type 14 = primary key, 17 = all columns), partition OBJ#s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from replicator.redogen.sqlexpr import SCHEMA, SqlError

_HIDDEN: Final = 0x20  # COL$.PROPERTY: hidden column


@dataclass(slots=True)
class CheckpointTable:
    """One table of a checkpoint, in scenario terms."""

    owner: str
    name: str
    obj: int
    data_obj: int
    ts: int
    columns: list[tuple[str, str, bool]]  # (name, type text, nullable)
    primary_key: list[str]
    supplemental: str
    partition_objs: list[int] = field(default_factory=list)


@dataclass(slots=True)
class SqlCheckpoint:
    """What a SQL script needs from a schema checkpoint."""

    database: str  # OLR source name (checkpoint file prefix)
    context: str  # DB_NAME
    con_name: str
    log_archive_format: str
    nls_charset: str
    nls_ncharset: str
    tables: dict[str, CheckpointTable]  # by NAME (the newest OBJ# when a name repeats)


def column_type(c: dict[str, Any]) -> str:
    """COL$ fields -> the SQL type text redogen's scenarios declare."""
    t, length, p, s, form = c["type"], c["length"], c["precision"], c["scale"], c["charset-form"]
    if t == 1:
        return f"NVARCHAR2({length // 2})" if form == 2 else f"VARCHAR2({length})"
    if t == 96:
        return f"NCHAR({length // 2})" if form == 2 else f"CHAR({length})"
    if t == 2:
        if p in (-1, None) and s in (-1, None):
            return "NUMBER"
        if p in (-1, None):
            return "INTEGER" if s == 0 else "NUMBER"
        if s == -127:
            return f"FLOAT({p})"
        return f"NUMBER({p},{s or 0})"
    simple = {12: "DATE", 100: "BINARY_FLOAT", 101: "BINARY_DOUBLE", 113: "BLOB", 252: "BOOLEAN"}
    if t in simple:
        return simple[t]
    if t == 112:
        return "NCLOB" if form == 2 else "CLOB"
    if t == 23:
        return f"RAW({length})"
    if t == 180:
        return f"TIMESTAMP({s})"
    if t == 181:
        return f"TIMESTAMP({s}) WITH TIME ZONE"
    if t == 231:
        return f"TIMESTAMP({s}) WITH LOCAL TIME ZONE"
    if t == 182:
        return f"INTERVAL YEAR({p}) TO MONTH"
    if t == 183:
        return f"INTERVAL DAY({p}) TO SECOND({s})"
    raise SqlError(f"schema checkpoint: column {c.get('name')} has COL$ type {t}, which redogen does not write", SCHEMA)


def load_checkpoint(path: str | Path) -> SqlCheckpoint:
    """Read a checkpoint file, or the one ``*-chkpt-*.json`` of a directory (the lowest SCN if several)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(
            p.glob("*-chkpt-*.json"),
            key=lambda f: int(f.stem.rsplit("-", 1)[-1]) if f.stem.rsplit("-", 1)[-1].isdigit() else 0,
        )
        if not files:
            raise SqlError(f"schema directory {p}: no *-chkpt-*.json checkpoint in it", SCHEMA)
        p = files[0]
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SqlError(f"schema checkpoint {p}: cannot be read: {exc}", SCHEMA) from None
    try:
        return _parse(doc)
    except (KeyError, TypeError) as exc:
        raise SqlError(f"schema checkpoint {p}: missing or malformed field {exc}", SCHEMA) from None


def _parse(doc: dict[str, Any]) -> SqlCheckpoint:
    users = {u["user"]: u["name"] for u in doc.get("sys-user", [])}
    tabs = {t["obj"]: t for t in doc.get("sys-tab", [])}
    tables: dict[str, CheckpointTable] = {}
    cols_by_obj: dict[int, list[dict[str, Any]]] = {}
    for c in doc.get("sys-col", []):
        cols_by_obj.setdefault(c["obj"], []).append(c)
    owner_ts: dict[int, int] = {}
    for o in doc.get("sys-obj", []):
        if o["type"] == 2 and tabs.get(o["obj"], {}).get("ts"):
            owner_ts.setdefault(o["owner"], tabs[o["obj"]]["ts"])
    for o in sorted(doc.get("sys-obj", []), key=lambda o: o["obj"]):
        if o["type"] != 2:
            continue
        no = o["obj"]
        raw = sorted(
            (c for c in cols_by_obj.get(no, []) if c["seg-col"] > 0 and not _prop(c.get("property")) & _HIDDEN),
            key=lambda c: c["seg-col"],
        )
        if not raw:
            continue
        cdefs = [c for c in doc.get("sys-cdef", []) if c["obj"] == no]
        pk_cons = {c["con"] for c in cdefs if c["type"] == 2}
        by_intcol = {c["int-col"]: c["name"] for c in cols_by_obj.get(no, [])}
        pk = [
            by_intcol[c["int-col"]]
            for c in sorted(
                (c for c in doc.get("sys-ccol", []) if c["con"] in pk_cons), key=lambda c: c.get("pos", c["int-col"])
            )
        ]
        types = {c["type"] for c in cdefs}
        supplemental = "all" if 17 in types else "pk" if 14 in types else "none"
        parts = sorted(p["obj"] for p in doc.get("sys-tabpart", []) if p["bo"] == no)
        ts = tabs.get(no, {}).get("ts") or owner_ts.get(o["owner"], 6)
        try:
            columns = [(c["name"], column_type(c), c["null"] == 0) for c in raw]
        except SqlError:
            continue  # a table of another test with a type redogen cannot write; fails only if used
        tables[o["name"]] = CheckpointTable(
            users.get(o["owner"], "UNKNOWN"),
            o["name"],
            no,
            o.get("data-obj") or no,
            ts,
            columns,
            pk,
            supplemental,
            parts,
        )
    return SqlCheckpoint(
        doc.get("database", "TEST"),
        doc.get("context", "ORCLCDB"),
        doc.get("con-name", ""),
        doc.get("log-archive-format", ""),
        doc.get("nls-character-set", "AL32UTF8"),
        doc.get("nls-nchar-character-set", "AL16UTF16"),
        tables,
    )


def _prop(value: Any) -> int:
    if isinstance(value, list):
        return int(value[0]) if value else 0
    return int(value or 0)
