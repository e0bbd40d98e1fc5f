"""A replay database for the online reader: result rows keyed by SQL statement.

:func:`recorded_from_checkpoint` turns a schema checkpoint (a decoded JSON document) into
the rows Oracle would return for every statement in :mod:`replicator.online.sql`, shaped
as python-oracledb returns them: NUMBER as ``Decimal`` (the reader's output handler),
NULL where Oracle stores NULL (views' DATAOBJ#, PRECISION#/SCALE of types without them),
RAW as ``bytes``, ``SYS_CONTEXT`` values as text. A few rows that the reader must *not*
pick up (another user's objects, SYS tables the filter does not name) are added, so a
reader that reads too much fails the comparison too.

Statements not recorded raise, so a test also proves the reader asks only what it should.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from replicator.online import sql
from replicator.online.connection import DatabaseQueryError
from replicator.schema.rows import SYS_ROW_FIELDS, XDB_TOKSUF_FIELDS, Kind, row_fields

Handler = Callable[[dict[str, Any]], list[tuple[Any, ...]]]
MASK64 = (1 << 64) - 1
# Fields Oracle stores as NULL when the checkpoint holds the reader's default.
NULL_WHEN = {
    ("sys-col", "precision"): -1,
    ("sys-col", "scale"): -1,
    ("sys-ecol", "guard-id"): -1,
    ("sys-obj", "data-obj"): 0,
}
# XDB fields that are RAW columns (hex text in the checkpoint).
RAW_FIELDS = {
    ("xdb-ttset", "guid"),
    ("xdb-xnm", "id"),
    ("xdb-xpt", "path"),
    ("xdb-xpt", "id"),
    ("xdb-xqn", "nmspcid"),
    ("xdb-xqn", "flags"),
    ("xdb-xqn", "id"),
}
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


class OraError(Exception):
    """Stands in for python-oracledb's error: ``args[0]`` has code, full_code and message."""

    class Detail:
        def __init__(self, code: int, message: str):
            self.code = code
            self.full_code = f"ORA-{code:05d}"
            self.message = f"{self.full_code}: {message}"
            self.isrecoverable = False

    def __init__(self, code: int, message: str = "error"):
        super().__init__(OraError.Detail(code, message))


def rowid(data_obj: int, block: int, slot: int, afn: int = 1) -> str:
    def enc(value: int, width: int) -> str:
        return "".join(_ALPHABET[(value >> (6 * i)) & 63] for i in reversed(range(width)))

    return enc(data_obj, 6) + enc(afn, 3) + enc(block, 6) + enc(slot, 3)


def _x128(value: Any) -> int:
    return value[0] | value[1] << 64 if isinstance(value, list) else value


class RecordedDatabase:
    """Answers the reader's statements from recorded rows; records what was asked."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}
        self.failures: dict[str, OraError] = {}
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.closed = False

    def on(self, statement: str, handler: Handler | list[tuple[Any, ...]]) -> None:
        """Record the answer to ``statement``: fixed rows, or a function of the binds."""
        self.handlers[statement] = handler if callable(handler) else (lambda _binds, rows=handler: list(rows))

    def fail(self, statement: str, code: int, message: str = "error") -> None:
        """Make ``statement`` fail with ORA-``code``."""
        self.failures[statement] = OraError(code, message)

    def query(self, statement: str, binds: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        binds = dict(binds or {})
        self.asked.append((statement, binds))
        if statement in self.failures:
            raise DatabaseQueryError(self.failures[statement], statement)
        handler = self.handlers.get(statement)
        if handler is None:
            raise AssertionError(f"statement not recorded: {statement}")
        return handler(binds)

    def close(self) -> None:
        self.closed = True


def _oracle_value(key: str, name: str, kind: Kind, value: Any) -> list[Any]:
    """A checkpoint field as the column value(s) the driver returns."""
    prefix = key[:7] if key.startswith("xdb-x") else key
    if kind is Kind.X128:
        number = _x128(value)
        return [Decimal(number & MASK64), Decimal(number >> 64)]
    if (key, name) in NULL_WHEN and value == NULL_WHEN[key, name]:
        return [None]
    if (prefix, name) in RAW_FIELDS:
        return [bytes.fromhex(value)]
    if kind in (Kind.STR, Kind.ROWID):
        return [value]
    return [Decimal(value)]


def result_row(key: str, row: dict[str, Any]) -> tuple[Any, ...]:
    """The result row a dictionary statement returns for checkpoint row ``row`` of ``key``."""
    values: list[Any] = []
    for name, kind in row_fields(key):
        if name != "single":
            values += _oracle_value(key, name, kind, row[name])
    return tuple(values)


class DictionaryTables:
    """The dictionary as tables (checkpoint rows, 128-bit fields as ints) with join helpers."""

    def __init__(self, doc: dict[str, Any]):
        self.arrays: dict[str, list[dict[str, Any]]] = {}
        for key, value in doc.items():
            if key in SYS_ROW_FIELDS or key[:7] in XDB_TOKSUF_FIELDS:
                self.arrays[key] = [
                    {**r, **{f: _x128(r[f]) for f, k in row_fields(key) if k is Kind.X128}} for r in value
                ]
        self.arrays.setdefault("xdb-ttset", [])

    def rows(self, key: str) -> list[dict[str, Any]]:
        return self.arrays.get(key, [])

    def owned(self, owner_id: int) -> set[int]:
        return {o["obj"] for o in self.rows("sys-obj") if o["owner"] == owner_id}

    def lobs(self, objs: set[int]) -> set[int]:
        return {lob["l-obj"] for lob in self.rows("sys-lob") if lob["obj"] in objs}

    def lob_parts(self, lobs: set[int]) -> set[int]:
        return {p["part-obj"] for p in self.rows("sys-lob-comp-part") if p["l-obj"] in lobs}

    def details(self, key: str, objs: set[int], by_user: bool) -> list[dict[str, Any]]:
        """Rows of ``key`` tied to the objects ``objs`` (the user's objects, or one object)."""
        if key == "sys-lob-comp-part":
            lobs = self.lobs(objs)
            return [r for r in self.rows(key) if r["l-obj"] in lobs]
        if key == "sys-lob-frag":
            lobs = self.lobs(objs)
            parents = self.lob_parts(lobs)
            # The reader's UNION ALL: fragments of LOB partitions, then fragments of LOBs.
            return [r for r in self.rows(key) if r["parent-obj"] in parents] + [
                r for r in self.rows(key) if r["parent-obj"] in lobs
            ]
        link = {"sys-ecol": "tab-obj"}.get(key, "obj")
        if key == "sys-tabsubpart" and not by_user:
            link = "p-obj"
        return [r for r in self.rows(key) if r[link] in objs]


def add_distractors(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` with rows the reader must skip: another user, unrelated SYS tables."""
    doc = copy.deepcopy(doc)
    other, obj, slot = 999, 999_000, iter(range(1, 1000))

    def rid() -> str:
        return rowid(999_999, 7, next(slot))

    doc["sys-user"].append({"row-id": rid(), "user": other, "name": "NOT_REPLICATED", "spare1": [0, 0], "single": 0})
    sys_id = next(u["user"] for u in doc["sys-user"] if u["name"] == "SYS")
    for owner, name in ((other, "T1"), (sys_id, "COLTYPE$"), (sys_id, "XCOL$"), (sys_id, "OBJ$_AUX")):
        obj += 1
        doc["sys-obj"].append(
            {
                "row-id": rid(),
                "owner": owner,
                "obj": obj,
                "data-obj": obj,
                "name": name,
                "type": 2,
                "flags": [0, 0],
                "single": 0,
            }
        )
        doc["sys-tab"].append(
            {"row-id": rid(), "obj": obj, "data-obj": obj, "ts": 0, "clu-cols": 0, "flags": [1, 0], "property": [0, 0]}
        )
        doc["sys-col"].append(
            {
                "row-id": rid(),
                "obj": obj,
                "col": 1,
                "seg-col": 1,
                "int-col": 1,
                "name": "C1",
                "type": 2,
                "length": 22,
                "precision": -1,
                "scale": -1,
                "charset-form": 0,
                "charset-id": 0,
                "null": 0,
                "property": [0, 0],
            }
        )
    return doc


def recorded_from_checkpoint(
    doc: dict[str, Any], *, sequence: int = 42, banner: str | None = None, distractors: bool = True
) -> RecordedDatabase:
    """A RecordedDatabase answering as the database the checkpoint ``doc`` was taken from."""
    doc = add_distractors(doc) if distractors else doc
    tables = DictionaryTables(doc)
    db = RecordedDatabase()
    scn = doc["scn"]
    fra = doc["db-recovery-file-dest"]
    db.on(
        sql.DATABASE,
        [
            (
                "ARCHIVELOG",
                "YES",
                "YES" if doc["supp-log-db-primary"] else "NO",
                "YES" if doc["supp-log-db-all"] else "NO",
                "Big" if doc["big-endian"] else "Little",
                banner or "Oracle Database 23ai Enterprise Edition Release 23.0.0.0.0 - Production",
                doc["con-name"] or doc["context"],
                Decimal(scn),
                doc["db-timezone"],
                Decimal(doc["activation"]),
                "PRIMARY",
            )
        ],
    )
    db.on(sql.CONTAINER, [(str(doc["con-id"]), doc["con-name"], doc["context"])])
    parameters = {
        "db_recovery_file_dest": fra or None,
        "log_archive_dest": doc["log-archive-dest"] or None,
        "db_block_checksum": doc["db-block-checksum"].lower(),
        "log_archive_format": doc["log-archive-format"],
    }
    properties = {
        "NLS_CHARACTERSET": doc["nls-character-set"],
        "NLS_NCHAR_CHARACTERSET": doc["nls-nchar-character-set"],
    }
    db.on(sql.PARAMETER, lambda b: [(parameters[b["name"]],)] if b["name"] in parameters else [])
    db.on(sql.PROPERTY, lambda b: [(properties[b["name"]],)] if b["name"] in properties else [])
    db.on(sql.CURRENT_SCN, [(Decimal(scn),)])
    db.on(sql.SEQUENCE_AT_SCN, [(Decimal(sequence),)])
    db.on(
        sql.INCARNATIONS,
        [
            (
                Decimal(i["incarnation"]),
                Decimal(i["resetlogs-scn"]),
                Decimal(i["prior-resetlogs-scn"]),
                i["status"],
                Decimal(i["resetlogs"]),
                Decimal(i["prior-incarnation"]),
            )
            for i in doc["incarnations"]
        ],
    )
    db.on(
        sql.LOG_FILES,
        lambda b: (
            [(Decimal(g["group"]), path) for g in doc["online-redo"] for path in g["path"]]
            if b["log_type"] == "ONLINE"
            else []
        ),
    )
    for table in sql.GRANT_VIEWS:
        db.on(sql.grant_probe(table), [])
    for table in sql.FLASHBACK_TABLES:
        db.on(sql.flashback_probe(table), [])

    def dictionary(key: str, rows: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> Handler:
        def handler(binds: dict[str, Any]) -> list[tuple[Any, ...]]:
            assert binds.get("scn") == scn, f"{key} read AS OF {binds.get('scn')}, expected {scn}"
            return [result_row(key, r) for r in rows(binds)]

        return handler

    db.on(sql.TS, dictionary("sys-ts", lambda b: tables.rows("sys-ts")))
    db.on(sql.XDB_TTSET, dictionary("xdb-ttset", lambda b: tables.rows("xdb-ttset")))
    for ttset in tables.rows("xdb-ttset"):
        for prefix in sql.XDB_PREFIXES:
            key = prefix + ttset["toksuf"]
            db.on(sql.xdb_statement(prefix, ttset["toksuf"]), dictionary(key, lambda b, k=key: tables.rows(k)))
            db.on(sql.flashback_probe(sql.xdb_table(prefix, ttset["toksuf"])), [])

    def like(pattern: str, text: str) -> bool:
        return re.search(pattern, text) is not None  # REGEXP_LIKE: a match anywhere (the reader anchors)

    db.on(
        sql.USERS,
        dictionary("sys-user", lambda b: [u for u in tables.rows("sys-user") if like(b["pattern"], u["name"])]),
    )
    db.on(
        sql.OBJECTS_OF_USER,
        dictionary("sys-obj", lambda b: [o for o in tables.rows("sys-obj") if o["owner"] == b["owner_id"]]),
    )
    db.on(
        sql.OBJECTS_NAMED,
        dictionary(
            "sys-obj",
            lambda b: [
                o for o in tables.rows("sys-obj") if o["owner"] == b["owner_id"] and like(b["pattern"], o["name"])
            ],
        ),
    )
    for key in sql.DETAIL_KEYS:
        db.on(
            sql.DETAILS_OF_USER[key],
            dictionary(key, lambda b, k=key: tables.details(k, tables.owned(b["owner_id"]), True)),
        )
        db.on(sql.DETAILS_OF_OBJECT[key], dictionary(key, lambda b, k=key: tables.details(k, {b["obj"]}, False)))
    return db
