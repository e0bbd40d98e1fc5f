"""The schema checkpoint document: its dataclasses and its JSON text (olr-interfaces.md §5.2 b).

:func:`parse_schema_checkpoint` validates a decoded document with OLR's error codes (its
dictionary rows too: duplicate ROWIDs and unique keys, :mod:`.keys`) and
:func:`format_schema_checkpoint` writes one in OLR's key order with a newline before every
array element, as OLR does. File handling lives in :mod:`replicator.schema.store`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

from replicator.errors import DataError
from replicator.schema.keys import check_rows
from replicator.schema.rows import (
    SYS_ROW_FIELDS,
    XDB_TOKSUF_FIELDS,
    Kind,
    Row,
    check_value,
    dump_row,
    parse_row,
    rowid_sort_key,
)

# Time zone names OLR accepts besides ±HH:MM, with the offset it gives them. OLR maps the
# Etc/GMT±N names with the sign as written (the POSIX names mean the opposite); kept as is.
_TZ_ALIASES: Final[dict[str, int]] = {
    **{f"Etc/GMT-{n}": -n * 3600 for n in range(1, 15)},
    **{f"Etc/GMT+{n}": n * 3600 for n in range(1, 13)},
    **dict.fromkeys(
        (
            "GMT",
            "Etc/GMT",
            "Greenwich",
            "Etc/Greenwich",
            "GMT0",
            "Etc/GMT0",
            "GMT+0",
            "Etc/GMT-0",
            "Etc/GMT+0",
            "UTC",
            "Etc/UTC",
            "UCT",
            "Etc/UCT",
            "Universal",
            "Etc/Universal",
            "WET",
        ),
        0,
    ),
    "HST": -36000,
    "PST": -28800,
    "PST8PDT": -28800,
    "MST": -25200,
    "MST7MDT": -25200,
    "CST": -21600,
    "CST6CDT": -21600,
    "EST": -18000,
    "EST5EDT": -18000,
    "MET": 3600,
    "CET": 3600,
    "EET": 7200,
    "PRC": 28800,
    "ROC": 28800,
}
_TZ_RE: Final = re.compile(r"([+-])(\d{1,2}):(\d\d)")


def parse_timezone(text: str) -> int | None:
    """``+05:30`` (or a name OLR knows) -> offset in seconds; None if not understood.

    OLR's own parser miscomputes hours ≥ 10 and the minutes; this one is arithmetic-correct.
    """
    if text in _TZ_ALIASES:
        return _TZ_ALIASES[text]
    match = _TZ_RE.fullmatch(text)
    if match is None:
        return None
    seconds = int(match[2]) * 3600 + int(match[3]) * 60
    return -seconds if match[1] == "-" else seconds


@dataclass(slots=True)
class MinTran:
    """Position of the oldest transaction open at the checkpoint (the restart low watermark)."""

    seq: int
    offset: int
    xid: str  # as written by OLR: 0xUUUU.SSS.QQQQQQQQ


@dataclass(slots=True)
class OnlineRedo:
    """One online redo log group and its member paths."""

    group: int
    paths: list[str]


@dataclass(slots=True)
class Incarnation:
    """One row of V$DATABASE_INCARNATION."""

    incarnation: int
    resetlogs_scn: int
    prior_resetlogs_scn: int
    status: str
    resetlogs: int
    prior_incarnation: int


@dataclass(slots=True)
class SchemaCheckpoint:
    """A ``<name>-chkpt-<scn>.json`` file: redo position, database facts and dictionary rows.

    ``rows`` maps each array key (``sys-col``, ``xdb-xnm<toksuf>``...) to its rows; it is
    empty when the file only refers to another one through ``schema_ref_scn``.
    """

    database: str
    scn: int
    resetlogs: int = 0
    activation: int = 0
    time: int = 0  # raw redo time; written, never read back by OLR
    seq: int = 0
    offset: int = 0
    min_tran: MinTran | None = None
    big_endian: bool = False
    context: str = ""
    con_id: int = 0
    con_name: str = ""
    db_timezone: str = "+00:00"
    db_recovery_file_dest: str = ""
    db_block_checksum: str = "TYPICAL"
    log_archive_dest: str = ""
    log_archive_format: str = ""
    nls_character_set: str = "AL32UTF8"
    nls_nchar_character_set: str = "AL16UTF16"
    supp_log_db_primary: bool = False
    supp_log_db_all: bool = False
    online_redo: list[OnlineRedo] = field(default_factory=list)
    incarnations: list[Incarnation] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    schema_scn: int | None = None
    schema_ref_scn: int | None = None
    rows: dict[str, list[Row]] = field(default_factory=dict)
    # RAC (docs/rac.md): per redo thread (thread, seq, offset, lwn-scn) to restart from, as the
    # fork rophy/olr writes them ("threads":[{"thread":1,"seq":..,"offset":..,"lwn-scn":..}]).
    threads: list[tuple[int, int, int, int]] = field(default_factory=list)

    @property
    def db_timezone_offset(self) -> int:
        """``db_timezone`` in seconds east of UTC (0 if it cannot be parsed)."""
        return parse_timezone(self.db_timezone) or 0

    @property
    def restart_position(self) -> tuple[int, int]:
        """(sequence, offset) where parsing resumes: ``min-tran`` if present, else seq/offset."""
        if self.min_tran is not None:
            return self.min_tran.seq, self.min_tran.offset
        return self.seq, self.offset


class _Reader:
    """Typed field access on one JSON object, raising OLR's 20003 with the file name."""

    def __init__(self, where: str):
        self.where = where

    def get(self, obj: dict[str, Any], key: str, kind: Kind, default: Any = ...) -> Any:
        if key not in obj:
            if default is not ...:
                return default
            raise DataError(f"{self.where} - parse error, field {key} not found", 20003)
        return check_value(kind, obj[key], key, self.where)

    def objects(self, obj: dict[str, Any], key: str) -> list[Any]:
        value = obj.get(key)
        if key not in obj or not isinstance(value, list):
            raise DataError(f"{self.where} - parse error, field {key} is not an array", 20003)
        for element in value:
            if not isinstance(element, dict):
                raise DataError(f"{self.where} - parse error, element of {key} is not an object", 20003)
        return value


def parse_schema_checkpoint(doc: Any, where: str) -> SchemaCheckpoint:
    """Validate a decoded checkpoint document; unknown keys (``db-id``, ``thread``) are ignored."""
    if not isinstance(doc, dict):
        raise DataError(f"{where} - parse error, the document is not an object", 20001)
    r = _Reader(where)
    cp = SchemaCheckpoint(database=r.get(doc, "database", Kind.STR), scn=r.get(doc, "scn", Kind.U64))
    cp.resetlogs = r.get(doc, "resetlogs", Kind.U32)
    cp.activation = r.get(doc, "activation", Kind.U32)
    time = doc.get("time", 0)
    cp.time = time if isinstance(time, int) and not isinstance(time, bool) else 0
    cp.seq = r.get(doc, "seq", Kind.U32)
    cp.offset = r.get(doc, "offset", Kind.U64)
    if "min-tran" in doc:
        tran = doc["min-tran"]
        if not isinstance(tran, dict):
            raise DataError(f"{where} - parse error, field min-tran is not an object", 20003)
        cp.min_tran = MinTran(
            r.get(tran, "seq", Kind.U32), r.get(tran, "offset", Kind.U64), r.get(tran, "xid", Kind.STR)
        )
    if "threads" in doc:
        cp.threads = [
            (
                r.get(t, "thread", Kind.U32),
                r.get(t, "seq", Kind.U32),
                r.get(t, "offset", Kind.U64),
                r.get(t, "lwn-scn", Kind.U64, 0),
            )
            for t in r.objects(doc, "threads")
        ]
    if cp.restart_position[1] % 512:
        raise DataError(f"{where} - invalid offset: {cp.restart_position[1]} is not a multiplication of 512", 20006)
    cp.big_endian = r.get(doc, "big-endian", Kind.I32) == 1
    for attr, key in (
        ("context", "context"),
        ("con_name", "con-name"),
        ("db_recovery_file_dest", "db-recovery-file-dest"),
        ("db_block_checksum", "db-block-checksum"),
        ("log_archive_dest", "log-archive-dest"),
        ("log_archive_format", "log-archive-format"),
        ("nls_character_set", "nls-character-set"),
        ("nls_nchar_character_set", "nls-nchar-character-set"),
    ):
        setattr(cp, attr, r.get(doc, key, Kind.STR))
    cp.con_id = r.get(doc, "con-id", Kind.I16)
    cp.db_timezone = r.get(doc, "db-timezone", Kind.STR, "+00:00")
    if parse_timezone(cp.db_timezone) is None:
        raise DataError(f'{where} - parse error of field "db-timezone", invalid value: {cp.db_timezone}', 20001)
    cp.supp_log_db_primary = r.get(doc, "supp-log-db-primary", Kind.U64) != 0
    cp.supp_log_db_all = r.get(doc, "supp-log-db-all", Kind.U64) != 0
    for group in r.objects(doc, "online-redo"):
        paths = group.get("path")
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise DataError(f"{where} - parse error, field path is not an array of strings", 20003)
        cp.online_redo.append(OnlineRedo(r.get(group, "group", Kind.I32), list(paths)))
    for inc in r.objects(doc, "incarnations"):
        cp.incarnations.append(
            Incarnation(
                r.get(inc, "incarnation", Kind.U32),
                r.get(inc, "resetlogs-scn", Kind.U64),
                r.get(inc, "prior-resetlogs-scn", Kind.U64),
                r.get(inc, "status", Kind.STR),
                r.get(inc, "resetlogs", Kind.U32),
                r.get(inc, "prior-incarnation", Kind.U32),
            )
        )
    users = doc.get("users")
    if not isinstance(users, list) or not all(isinstance(u, str) for u in users):
        raise DataError(f"{where} - parse error, field users is not an array of strings", 20003)
    cp.users = list(users)
    if "schema-ref-scn" in doc:
        cp.schema_ref_scn = r.get(doc, "schema-ref-scn", Kind.U64)
        return cp
    cp.schema_scn = r.get(doc, "schema-scn", Kind.U64)
    for key in SYS_ROW_FIELDS:
        if key == "xdb-ttset" and key not in doc:
            cp.rows[key] = []  # OLR tolerates a file without XDB arrays
            continue
        cp.rows[key] = [parse_row(key, raw, where) for raw in r.objects(doc, key)]
    for ttset in cp.rows["xdb-ttset"]:
        for prefix in XDB_TOKSUF_FIELDS:
            key = prefix + ttset["toksuf"]
            cp.rows[key] = [parse_row(key, raw, where) for raw in r.objects(doc, key)]
    check_rows(cp.rows, where)  # duplicate ROWIDs (50022) and unique keys (50024), as OLR loads them
    return cp


def _text(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _array(key: str, elements: list[str]) -> str:
    # OLR puts a newline before each element and after the `],` that closes an array.
    return f'"{key}":[' + ",".join("\n" + e for e in elements) + "]"


def format_schema_checkpoint(cp: SchemaCheckpoint) -> str:
    """The file text OLR would write for ``cp`` (rows in ROWID order, as OLR keeps them).

    With ``schema_ref_scn`` set only the reference is written, not the rows; otherwise
    ``schema_scn`` (default: ``scn``) and every dictionary array follow.
    """
    head = [
        f'"database":{_text(cp.database)}',
        f'"scn":{cp.scn}',
        f'"resetlogs":{cp.resetlogs}',
        f'"activation":{cp.activation}',
        f'"time":{cp.time}',
        f'"seq":{cp.seq}',
        f'"offset":{cp.offset}',
    ]
    if cp.min_tran is not None:
        t = cp.min_tran
        head.append(f'"min-tran":{{"seq":{t.seq},"offset":{t.offset},"xid":{_text(t.xid)}}}')
    if cp.threads:
        head.append(
            '"threads":['
            + ",".join(f'{{"thread":{t},"seq":{q},"offset":{o},"lwn-scn":{w}}}' for t, q, o, w in cp.threads)
            + "]"
        )
    head += [
        f'"big-endian":{int(cp.big_endian)}',
        f'"context":{_text(cp.context)}',
        f'"con-id":{cp.con_id}',
        f'"con-name":{_text(cp.con_name)}',
    ]
    for key, value in (
        ("db-timezone", cp.db_timezone),
        ("db-recovery-file-dest", cp.db_recovery_file_dest),
        ("db-block-checksum", cp.db_block_checksum),
        ("log-archive-dest", cp.log_archive_dest),
        ("log-archive-format", cp.log_archive_format),
        ("nls-character-set", cp.nls_character_set),
        ("nls-nchar-character-set", cp.nls_nchar_character_set),
    ):
        head.append(f'"{key}":{_text(value)}')
    head += [f'"supp-log-db-primary":{int(cp.supp_log_db_primary)}', f'"supp-log-db-all":{int(cp.supp_log_db_all)}']
    redo = [
        f'{{"group":{g.group},"path":[{",".join(_text(p) for p in g.paths)}]}}' for g in cp.online_redo if g.group != 0
    ]  # OLR never writes group 0
    incarnations = [
        f'{{"incarnation":{i.incarnation},"resetlogs-scn":{i.resetlogs_scn},'
        f'"prior-resetlogs-scn":{i.prior_resetlogs_scn},"status":{_text(i.status)},'
        f'"resetlogs":{i.resetlogs},"prior-incarnation":{i.prior_incarnation}}}'
        for i in cp.incarnations
    ]
    parts = [
        ",".join(head),
        _array("online-redo", redo),
        _array("incarnations", incarnations),
        _array("users", [_text(u) for u in sorted(set(cp.users))]),
    ]  # OLR keeps a std::set
    if cp.schema_ref_scn is not None:
        return "{" + ",\n".join(parts) + f',\n"schema-ref-scn":{cp.schema_ref_scn}}}'
    parts.append(f'"schema-scn":{cp.schema_scn if cp.schema_scn is not None else cp.scn}')
    keys = list(SYS_ROW_FIELDS)
    for toksuf in sorted(row["toksuf"] for row in cp.rows.get("xdb-ttset", [])):
        keys += [prefix + toksuf for prefix in XDB_TOKSUF_FIELDS]
    for key in keys:
        rows = sorted(cp.rows.get(key, []), key=lambda row: rowid_sort_key(row["row-id"]))
        parts.append(_array(key, [dump_row(key, row) for row in rows]))
    return "{" + ",\n".join(parts) + "}"
