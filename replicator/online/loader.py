"""Result rows -> the first schema checkpoint: database facts and dictionary rows.

:func:`read_facts` reads what the checkpoint header holds (V$DATABASE, parameters,
properties, incarnations, online log groups) and stops with OpenLogReplicator's codes
when the database cannot be replicated (not in ARCHIVELOG mode 10021, minimal
supplemental logging off 10022). :class:`DictionaryReader` reads the mirrored SYS/XDB
tables AS OF one SCN in OpenLogReplicator's order and with its rules:

* the dictionary tables themselves (SYS.COL$, SYS.OBJ$..., XDB.X$NM...) are read object
  by object and marked ``single`` in ``sys-user``/``sys-obj``;
* every object of a user named in ``filter.table`` (or ``debug.owner``) is read, whatever
  the table pattern (the pattern selects tables later, when the table map is built);
* TS$ and XDB$TTSET are read whole, and for each token set its three X$ tables.

:func:`build_schema_checkpoint` puts both together. Values come as python-oracledb returns
them: NUMBER as ``int`` or ``Decimal`` (turned into ``int``), NULL as ``None`` (the default
OLR uses for that column), RAW as ``bytes`` (upper-case hex, as OCI converts it).
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from replicator import log
from replicator.errors import DataError, RuntimeFailure
from replicator.online import sql
from replicator.online.connection import Database, ResultRow, check_grants
from replicator.schema.document import (
    Incarnation,
    OnlineRedo,
    SchemaCheckpoint,
    parse_timezone,
)
from replicator.schema.rows import (
    SYS_ROW_FIELDS,
    Kind,
    Row,
    parse_row,
    row_fields,
    rowid_sort_key,
)

DEFAULT_LOG_ARCHIVE_FORMAT: Final = "o1_mf_%t_%s_%h_.arc"  # OLR's default when the FRA is used
# What a NULL column reads as (OLR's defaults); anything else NULL reads as 0 or "".
NULL_DEFAULTS: Final[dict[tuple[str, str], int]] = {
    ("sys-col", "precision"): -1,
    ("sys-col", "scale"): -1,
    ("sys-ecol", "guard-id"): -1,
}
# The dictionary tables OLR mirrors, as (owner, name pattern) read object by object. The
# patterns are regular expressions anchored by the reader (^...$).
SYSTEM_ELEMENTS: Final[tuple[tuple[str, str], ...]] = (
    ("SYS", r"CCOL\$"),
    ("SYS", r"CDEF\$"),
    ("SYS", r"COL\$"),
    ("SYS", r"ECOL\$"),
    ("SYS", r"DEFERRED_STG\$"),
    ("SYS", r"LOB\$"),
    ("SYS", r"LOBCOMPPART\$"),
    ("SYS", r"LOBFRAG\$"),
    ("SYS", r"OBJ\$"),
    ("SYS", r"TAB\$"),
    ("SYS", r"TABPART\$"),
    ("SYS", r"TABCOMPART\$"),
    ("SYS", r"TABSUBPART\$"),
    ("SYS", r"TS\$"),
    ("SYS", r"USER\$"),
    ("XDB", r"XDB\$TTSET"),
    ("XDB", r"X\$NM.*"),
    ("XDB", r"X\$PT.*"),
    ("XDB", r"X\$QN.*"),
)


# ----------------------------------------------------------------------------- value mapping
def to_int(value: Any, default: int = 0, what: str = "value") -> int:
    """A NUMBER as python-oracledb returns it (int, Decimal, or text) as an exact int."""
    if value is None:
        return default
    if isinstance(value, bool):
        raise DataError(f"{what}: expected a number, got {value!r}", 20003)
    if isinstance(value, int):
        return value
    if isinstance(value, decimal.Decimal):
        if value != value.to_integral_value():
            raise DataError(f"{what}: expected a whole number, got {value}", 20003)
        return int(value)
    if isinstance(value, float):
        # A float has lost digits above 2**53; refuse rather than store a wrong SCN or flag.
        if not value.is_integer() or abs(value) > 2**53:
            raise DataError(f"{what}: number {value!r} was not fetched exactly", 20003)
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    raise DataError(f"{what}: expected a number, got {value!r}", 20003)


def to_text(value: Any) -> str:
    """A VARCHAR2 (None -> ""), or a RAW as upper-case hex, as OCI's string conversion gives it."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex().upper()
    return str(value)


def dictionary_row(key: str, values: Sequence[Any], single: bool | None = None) -> Row:
    """One result row of a dictionary statement as a checkpoint row of array ``key``.

    ``values`` are in the array's field order, 128-bit fields as (low, high) column pairs;
    ``single`` (sys-user, sys-obj) is not a column but how the row was read.
    """
    where = f"dictionary row of {key}"
    raw: dict[str, Any] = {}
    it = iter(values)
    for name, kind in row_fields(key):
        if name == "single":
            raw[name] = int(bool(single))
            continue
        try:
            if kind is Kind.X128:
                low, high = to_int(next(it), 0, name), to_int(next(it), 0, name)
                raw[name] = low | high << 64
            elif kind in (Kind.STR, Kind.ROWID):
                raw[name] = to_text(next(it))
            else:
                raw[name] = to_int(next(it), NULL_DEFAULTS.get((key, name), 0), f"{key}.{name}")
        except StopIteration:
            raise DataError(f"{where}: {len(values)} columns are too few", 20003) from None
    if next(it, _END) is not _END:
        raise DataError(f"{where}: {len(values)} columns are too many", 20003)
    return parse_row(key, raw, where, native=True)


_END: Final = object()


# ----------------------------------------------------------------------------- database facts
@dataclass
class DatabaseFacts:
    """What the checkpoint header and the start position need from the database."""

    current_scn: int
    banner: str
    context: str
    con_id: int
    con_name: str
    big_endian: bool
    db_timezone: str
    activation: int
    standby: bool
    supp_log_db_primary: bool
    supp_log_db_all: bool
    db_recovery_file_dest: str = ""
    log_archive_dest: str = ""
    db_block_checksum: str = ""
    log_archive_format: str = DEFAULT_LOG_ARCHIVE_FORMAT
    nls_character_set: str = ""
    nls_nchar_character_set: str = ""
    incarnations: list[Incarnation] = field(default_factory=list)
    online_redo: list[OnlineRedo] = field(default_factory=list)

    @property
    def version12(self) -> bool:
        """True from 12c on (containers, ECOL$.GUARD_ID)."""
        return not self.banner.startswith("Oracle Database 11g")

    @property
    def resetlogs(self) -> int:
        """RESETLOGS_ID of the current incarnation (0 when none is marked CURRENT)."""
        current = [i for i in self.incarnations if i.status == "CURRENT"]
        return current[0].resetlogs if current else 0


def _one(db: Database, statement: str, binds: dict[str, Any] | None = None) -> ResultRow | None:
    rows = db.query(statement, binds)
    return rows[0] if rows else None


def _setting(db: Database, statement: str, name: str, code: int, what: str) -> str:
    row = _one(db, statement, {"name": name})
    if row is None:
        raise RuntimeFailure(f"can't get {what} value for {name}", code)
    return to_text(row[0])


def _directory(db: Database, name: str) -> str:
    value = _setting(db, sql.PARAMETER, name, 10032, "parameter")
    stripped = value.rstrip("/")
    if stripped != value:
        log.warning(60026, f"stripping trailing '/' from {name} parameter; new value: {stripped}")
    return stripped


def read_facts(db: Database, log_archive_format: str | None = None, db_timezone_set: bool = False) -> DatabaseFacts:
    """V$DATABASE and friends; 10021 (no ARCHIVELOG), 10022 (no minimal supplemental log).

    ``log_archive_format`` is the config's ``reader.log-archive-format`` (it wins over the
    database parameter); with ``db_timezone_set`` a DBTIMEZONE that is not ±HH:MM is
    accepted because the config's ``db-timezone`` replaces it (else 10068).
    """
    row = _one(db, sql.DATABASE)
    if row is None:
        raise RuntimeFailure("no data in SYS.V_$DATABASE", 10023)
    log_mode, supp_min, supp_pk, supp_all, endian, banner, db_name, scn, tz, activation, role = row
    if log_mode != "ARCHIVELOG":
        raise RuntimeFailure(
            "database not in ARCHIVELOG mode (hint: run: SHUTDOWN IMMEDIATE; STARTUP MOUNT; "
            "ALTER DATABASE ARCHIVELOG; ALTER DATABASE OPEN;)",
            10021,
        )
    if supp_min in (None, "NO"):
        raise RuntimeFailure(
            "SUPPLEMENTAL_LOG_DATA_MIN missing (hint: run: ALTER DATABASE ADD SUPPLEMENTAL LOG "
            "DATA; ALTER SYSTEM ARCHIVE LOG CURRENT;)",
            10022,
        )
    if role not in ("PRIMARY", "PHYSICAL STANDBY"):
        raise RuntimeFailure(f"unknown database role: {role}", 10038)
    facts = DatabaseFacts(
        current_scn=to_int(scn, what="CURRENT_SCN"),
        banner=to_text(banner),
        context=to_text(db_name),
        con_id=0,
        con_name="",
        big_endian=endian == "Big",
        db_timezone=to_text(tz),
        activation=to_int(activation),
        standby=role != "PRIMARY",
        supp_log_db_primary=supp_pk == "YES",
        supp_log_db_all=supp_all == "YES",
    )
    if not db_timezone_set and parse_timezone(facts.db_timezone) is None:
        raise RuntimeFailure(f"invalid DBTIMEZONE value: {facts.db_timezone} (hint: set reader.db-timezone)", 10068)
    if facts.version12:
        con = _one(db, sql.CONTAINER)
        if con is not None:
            facts.con_id, facts.con_name, facts.context = to_int(con[0]), to_text(con[1]), to_text(con[2])
    facts.db_recovery_file_dest = _directory(db, "db_recovery_file_dest")
    facts.log_archive_dest = _directory(db, "log_archive_dest")
    facts.db_block_checksum = _setting(db, sql.PARAMETER, "db_block_checksum", 10032, "parameter").upper()
    if log_archive_format:
        facts.log_archive_format = log_archive_format
    elif not facts.db_recovery_file_dest:  # archives in the FRA are named o1_mf_..., whatever the parameter
        facts.log_archive_format = _setting(db, sql.PARAMETER, "log_archive_format", 10032, "parameter")
    facts.nls_character_set = _setting(db, sql.PROPERTY, "NLS_CHARACTERSET", 10033, "property")
    facts.nls_nchar_character_set = _setting(db, sql.PROPERTY, "NLS_NCHAR_CHARACTERSET", 10033, "property")
    facts.incarnations = read_incarnations(db)
    facts.online_redo = read_log_groups(db, facts.standby)
    return facts


def read_incarnations(db: Database) -> list[Incarnation]:
    """V$DATABASE_INCARNATION as checkpoint ``incarnations``."""
    return [
        Incarnation(to_int(inc), to_int(scn), to_int(prior_scn), to_text(status), to_int(resetlogs), to_int(prior))
        for inc, scn, prior_scn, status, resetlogs, prior in db.query(sql.INCARNATIONS)
    ]


def read_log_groups(db: Database, standby: bool = False) -> list[OnlineRedo]:
    """V$LOGFILE members grouped by GROUP# (10037, or 10036 on a standby, when there are none)."""
    groups: list[OnlineRedo] = []
    for group, member in db.query(sql.LOG_FILES, {"log_type": "STANDBY" if standby else "ONLINE"}):
        number = to_int(group)
        if not groups or groups[-1].group != number:
            groups.append(OnlineRedo(number, []))
        groups[-1].paths.append(to_text(member))
    if not groups:
        if standby:
            raise RuntimeFailure("failed to find standby redo log files", 10036)
        raise RuntimeFailure("failed to find online redo log files", 10037)
    return groups


# ----------------------------------------------------------------------------- the dictionary
class DictionaryReader:
    """Reads the mirrored dictionary rows AS OF ``scn`` into checkpoint arrays.

    Rows are kept by ROWID: a row met twice (two rules naming the same owner, a system
    owner named in the filter) is stored once. OLR stops with 50022 in that case; the
    rows are the same rows read at the same SCN, so keeping one loses nothing.
    """

    def __init__(self, db: Database, scn: int, version12: bool = True, probe_user: str | None = None):
        self.db = db
        self.scn = scn
        self.version12 = version12
        self.probe_user = probe_user  # probe the XDB token tables' grants for this user (None: don't)
        self.arrays: dict[str, dict[str, Row]] = {key: {} for key in SYS_ROW_FIELDS}

    def _add(self, key: str, row: Row) -> Row:
        return self.arrays.setdefault(key, {}).setdefault(row["row-id"], row)

    def _read(self, key: str, statement: str, binds: dict[str, Any]) -> list[Row]:
        return [self._add(key, dictionary_row(key, values)) for values in self.db.query(statement, binds)]

    def read(self, user_owners: Iterable[str]) -> dict[str, list[Row]]:
        """Every array for the system tables plus every object of the ``user_owners`` patterns.

        The result has each array's rows in ROWID order (the order OLR keeps and writes).
        """
        self._read_metadata()
        for owner, table in SYSTEM_ELEMENTS:
            self._read_element(owner, table, single=True)
        for owner in user_owners:
            self._read_element(owner, ".*", single=False)
        return {
            key: sorted(rows.values(), key=lambda row: rowid_sort_key(row["row-id"]))
            for key, rows in self.arrays.items()
        }

    def _read_metadata(self) -> None:
        binds = {"scn": self.scn}
        self._read("sys-ts", sql.TS, binds)
        for ttset in self._read("xdb-ttset", sql.XDB_TTSET, binds):
            toksuf = ttset["toksuf"]
            if self.probe_user is not None:
                tables = [sql.xdb_table(prefix, toksuf) for prefix in sql.XDB_PREFIXES]
                check_grants(self.db, self.probe_user, "", tables, self.scn)
            for prefix in sql.XDB_PREFIXES:
                self.arrays[prefix + toksuf] = {}
                self._read(prefix + toksuf, sql.xdb_statement(prefix, toksuf), binds)

    def _read_element(self, owner: str, table: str, single: bool) -> None:
        """One (owner, table) element: OLR's readSystemDictionaries rules."""
        users = self.arrays["sys-user"]
        for values in self.db.query(sql.USERS, {"scn": self.scn, "pattern": f"^{owner}$"}):
            row = dictionary_row("sys-user", values, single)
            known = users.get(row["row-id"])
            if known is not None and not single:
                if not known["single"]:
                    continue  # every object of this user is already read
                known["single"] = 0
            elif known is None:
                users[row["row-id"]] = row
            user_id = row["user"]
            if single:
                statement, binds = sql.OBJECTS_NAMED, {"scn": self.scn, "owner_id": user_id, "pattern": f"^{table}$"}
            else:
                statement, binds = sql.OBJECTS_OF_USER, {"scn": self.scn, "owner_id": user_id}
            objects = self.arrays["sys-obj"]
            for obj_values in self.db.query(statement, binds):
                obj = dictionary_row("sys-obj", obj_values, single)
                seen = objects.get(obj["row-id"])
                if seen is not None:
                    if seen["single"] and not single:
                        seen["single"] = 0
                    continue
                objects[obj["row-id"]] = obj
                if single:
                    self._read_details(sql.DETAILS_OF_OBJECT, {"scn": self.scn, "obj": obj["obj"]}, by_user=False)
            if not single:
                self._read_details(sql.DETAILS_OF_USER, {"scn": self.scn, "owner_id": user_id}, by_user=True)

    def _read_details(self, statements: dict[str, str], binds: dict[str, Any], by_user: bool) -> None:
        for key in sql.DETAIL_KEYS:
            statement = statements[key]
            if key == "sys-ecol" and not self.version12:
                statement = sql.ECOL_11_OF_USER if by_user else sql.ECOL_11_OF_OBJECT
            self._read(key, statement, binds)


# ----------------------------------------------------------------------------- the checkpoint
@dataclass
class StartRequest:
    """What the config asks for: source name, owners, and where to start."""

    database: str
    owners: list[str]
    start_scn: int = 0
    start_seq: int = 0
    start_time: str | None = None
    start_time_rel: int = 0
    log_archive_format: str | None = None
    db_timezone_set: bool = False
    check_grants: bool = True  # reader.disable-checks bit 1 turns the grant probes off


def start_scn(db: Database, request: StartRequest, facts: DatabaseFacts) -> int:
    """The SCN replication starts at: ``start-scn``, ``start-time``, ``start-time-rel`` or now."""
    if request.start_time is not None:
        if facts.standby:
            raise RuntimeFailure("can't position by time for standby database", 10024)
        return _scn_query(
            db, sql.SCN_AT_TIME, {"start_time": request.start_time}, f"can't find scn for: {request.start_time}", 10025
        )
    if request.start_time_rel > 0:
        if facts.standby:
            raise RuntimeFailure("can't position by relative time for standby database", 10026)
        return _scn_query(
            db,
            sql.SCN_SECONDS_AGO,
            {"seconds": request.start_time_rel},
            f"can't find scn for {request.start_time_rel} seconds ago",
            10025,
        )
    if request.start_scn:
        return request.start_scn
    return _scn_query(db, sql.CURRENT_SCN, None, "can't find database current scn", 10029)


def _scn_query(db: Database, query: str, params: dict[str, Any] | None, missing: str, code: int) -> int:
    """The SCN in the first column of ``query``'s row; RuntimeFailure ``code`` when there is none."""
    row = _one(db, query, params)
    if row is None or row[0] is None:
        raise RuntimeFailure(missing, code)
    return to_int(row[0])


def start_sequence(db: Database, scn: int, resetlogs: int, standby: bool) -> int:
    """The sequence of the log holding ``scn`` (10030 when the database knows none)."""
    statement = sql.SEQUENCE_AT_SCN_STANDBY if standby else sql.SEQUENCE_AT_SCN
    row = _one(db, statement, {"scn": scn, "resetlogs": resetlogs})
    if row is None or row[0] is None:
        raise RuntimeFailure(f"getting database sequence for scn: {scn}", 10030)
    return to_int(row[0])


def build_schema_checkpoint(db: Database, request: StartRequest, user: str = "") -> SchemaCheckpoint:
    """Connect-time work of the online reader: facts, start position and dictionary.

    The checkpoint's ``scn`` and ``schema-scn`` are the start SCN, ``seq`` the sequence
    holding it (``start-seq`` when given), ``offset`` 0: parsing starts at that log's first
    LWN and drops transactions committed at or before the SCN.
    """
    if request.check_grants:
        check_grants(db, user, "", sql.GRANT_VIEWS)
    facts = read_facts(db, request.log_archive_format, request.db_timezone_set)
    scn = start_scn(db, request, facts)
    if request.check_grants and not facts.standby:
        check_grants(db, user, facts.con_name, sql.FLASHBACK_TABLES, scn)
    seq = request.start_seq or start_sequence(db, scn, facts.resetlogs, facts.standby)
    log.info(f"reading dictionaries for scn: {scn}")
    probe_user = user if request.check_grants else None
    rows = DictionaryReader(db, scn, facts.version12, probe_user).read(sorted(set(request.owners)))
    return SchemaCheckpoint(
        database=request.database,
        scn=scn,
        resetlogs=facts.resetlogs,
        activation=facts.activation,
        seq=seq,
        big_endian=facts.big_endian,
        context=facts.context,
        con_id=facts.con_id,
        con_name=facts.con_name,
        db_timezone=facts.db_timezone,
        db_recovery_file_dest=facts.db_recovery_file_dest,
        db_block_checksum=facts.db_block_checksum,
        log_archive_dest=facts.log_archive_dest,
        log_archive_format=facts.log_archive_format,
        nls_character_set=facts.nls_character_set,
        nls_nchar_character_set=facts.nls_nchar_character_set,
        supp_log_db_primary=facts.supp_log_db_primary,
        supp_log_db_all=facts.supp_log_db_all,
        online_redo=facts.online_redo,
        incarnations=facts.incarnations,
        users=sorted(set(request.owners)),
        schema_scn=scn,
        rows=rows,
    )
