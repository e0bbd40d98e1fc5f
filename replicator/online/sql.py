"""Every SQL statement the online reader runs, in one place.

Values travel as bind variables (``:scn``, ``:owner_id``...); only table names, which SQL
cannot bind, are put into the text, and only from a fixed list or after a strict check
(:func:`xdb_statement`). Dictionary statements read ``AS OF SCN :scn`` so that every
table is seen at the same SCN; ROWIDs are converted with ``ROWIDTOCHAR`` so the driver
returns the 18-character text the schema checkpoint stores.

128-bit NUMBER columns (``FLAGS``, ``PROPERTY``, ``SPARE1``, ``FLAGS_STG``) are returned
as two columns, low and high 64 bits, which is how the checkpoint file stores them.

Which views and columns are read follows OpenLogReplicator's online reader
(olr-interfaces.md §5.3, redo-format.md §10.2); the statement text is this project's own.
"""

from __future__ import annotations

import re
from typing import Final

_TWO_64: Final = "18446744073709551616"  # 2**64, exact in an Oracle NUMBER


def _split128(column: str) -> str:
    """Select list text for a 128-bit NUMBER column: low 64 bits, then high 64 bits."""
    return f"MOD({column}, {_TWO_64}), MOD(TRUNC({column} / {_TWO_64}), {_TWO_64})"


# ----------------------------------------------------------------------------- session checks
CHECK_CONNECTION: Final = "SELECT 1 FROM DUAL"

# Views whose SELECT grant is checked before anything else is read.
GRANT_VIEWS: Final = (
    "SYS.V_$ARCHIVED_LOG",
    "SYS.V_$DATABASE",
    "SYS.V_$DATABASE_INCARNATION",
    "SYS.V_$LOG",
    "SYS.V_$LOGFILE",
    "SYS.V_$PARAMETER",
    "SYS.V_$STANDBY_LOG",
    "SYS.V_$TRANSPORTABLE_PLATFORM",
)
# Dictionary tables that must be readable AS OF an SCN (SELECT and FLASHBACK grants).
FLASHBACK_TABLES: Final = (
    "SYS.CCOL$",
    "SYS.CDEF$",
    "SYS.COL$",
    "SYS.DEFERRED_STG$",
    "SYS.ECOL$",
    "SYS.LOB$",
    "SYS.LOBCOMPPART$",
    "SYS.LOBFRAG$",
    "SYS.OBJ$",
    "SYS.TAB$",
    "SYS.TABCOMPART$",
    "SYS.TABSUBPART$",
    "SYS.TS$",
    "SYS.USER$",
    "XDB.XDB$TTSET",
)
_TABLE_NAME: Final = re.compile(r"[A-Z][A-Z0-9_$#]*\.[A-Z][A-Z0-9_$#]*")


def grant_probe(table: str) -> str:
    """A statement that fails with ORA-01031/ORA-00942 when ``table`` may not be read."""
    if not _TABLE_NAME.fullmatch(table):
        raise ValueError(f"not a table name: {table!r}")
    return f"SELECT 1 FROM {table} WHERE 1 = 0"


def flashback_probe(table: str) -> str:
    """As :func:`grant_probe`, reading ``AS OF SCN :scn`` (needs the FLASHBACK grant too)."""
    if not _TABLE_NAME.fullmatch(table):
        raise ValueError(f"not a table name: {table!r}")
    return f"SELECT 1 FROM {table} AS OF SCN :scn WHERE 1 = 0"


# ----------------------------------------------------------------------------- database facts
# One row: log mode, minimal/PK/ALL supplemental logging, endianness, version banner,
# database name, current SCN, DBTIMEZONE, activation number and role.
DATABASE: Final = """
SELECT D.LOG_MODE, D.SUPPLEMENTAL_LOG_DATA_MIN, D.SUPPLEMENTAL_LOG_DATA_PK,
       D.SUPPLEMENTAL_LOG_DATA_ALL, P.ENDIAN_FORMAT,
       (SELECT MIN(V.BANNER) FROM SYS.V_$VERSION V WHERE V.BANNER LIKE 'Oracle%Database%'),
       SYS_CONTEXT('USERENV', 'DB_NAME'), D.CURRENT_SCN, DBTIMEZONE, D.ACTIVATION#, D.DATABASE_ROLE
  FROM SYS.V_$DATABASE D
  LEFT JOIN SYS.V_$TRANSPORTABLE_PLATFORM P ON P.PLATFORM_NAME = D.PLATFORM_NAME
""".strip()

# One row (12c and later): container id, container name, and the CDB name (the context).
CONTAINER: Final = """
SELECT SYS_CONTEXT('USERENV', 'CON_ID'), SYS_CONTEXT('USERENV', 'CON_NAME'),
       COALESCE(SYS_CONTEXT('USERENV', 'CDB_NAME'), SYS_CONTEXT('USERENV', 'DB_NAME'))
  FROM DUAL
""".strip()

PARAMETER: Final = "SELECT VALUE FROM SYS.V_$PARAMETER WHERE NAME = :name"
PROPERTY: Final = "SELECT PROPERTY_VALUE FROM DATABASE_PROPERTIES WHERE PROPERTY_NAME = :name"
CURRENT_SCN: Final = "SELECT CURRENT_SCN FROM SYS.V_$DATABASE"
SCN_AT_TIME: Final = "SELECT TIMESTAMP_TO_SCN(TO_TIMESTAMP(:start_time, 'YYYY-MM-DD HH24:MI:SS')) FROM DUAL"
SCN_SECONDS_AGO: Final = "SELECT TIMESTAMP_TO_SCN(SYSTIMESTAMP - NUMTODSINTERVAL(:seconds, 'SECOND')) FROM DUAL"

# The newest sequence whose log starts at or before the SCN: that log holds it.
SEQUENCE_AT_SCN: Final = """
SELECT MAX(S.SEQUENCE#) FROM (
  SELECT L.SEQUENCE# FROM SYS.V_$LOG L WHERE L.FIRST_CHANGE# <= :scn + 1
  UNION
  SELECT A.SEQUENCE# FROM SYS.V_$ARCHIVED_LOG A
   WHERE A.FIRST_CHANGE# <= :scn + 1 AND A.RESETLOGS_ID = :resetlogs
) S
""".strip()
SEQUENCE_AT_SCN_STANDBY: Final = """
SELECT MAX(S.SEQUENCE#) FROM (
  SELECT L.SEQUENCE# FROM SYS.V_$STANDBY_LOG L WHERE L.FIRST_CHANGE# <= :scn + 1
  UNION
  SELECT A.SEQUENCE# FROM SYS.V_$ARCHIVED_LOG A
   WHERE A.FIRST_CHANGE# <= :scn + 1 AND A.RESETLOGS_ID = :resetlogs
) S
""".strip()

INCARNATIONS: Final = """
SELECT INCARNATION#, RESETLOGS_CHANGE#, PRIOR_RESETLOGS_CHANGE#, STATUS, RESETLOGS_ID, PRIOR_INCARNATION#
  FROM SYS.V_$DATABASE_INCARNATION
 ORDER BY INCARNATION#
""".strip()

# Members of the online (or standby) redo log groups; :log_type is ONLINE or STANDBY.
LOG_FILES: Final = """
SELECT F.GROUP#, F.MEMBER
  FROM SYS.V_$LOGFILE F
 WHERE F.TYPE = :log_type
 ORDER BY F.GROUP#, F.IS_RECOVERY_DEST_FILE DESC, F.MEMBER
""".strip()

ARCHIVED_LOGS: Final = """
SELECT A.NAME, A.SEQUENCE#, A.FIRST_CHANGE#, A.NEXT_CHANGE#
  FROM SYS.V_$ARCHIVED_LOG A
 WHERE A.SEQUENCE# >= :seq AND A.RESETLOGS_ID = :resetlogs AND A.NAME IS NOT NULL
 ORDER BY A.SEQUENCE#, A.DEST_ID, A.IS_RECOVERY_DEST_FILE DESC
""".strip()

# ----------------------------------------------------------------------------- dictionary
# Each statement's select list is the checkpoint array's fields in file order (row-id first,
# 128-bit fields as two columns); the loader maps them by position.
TS: Final = "SELECT ROWIDTOCHAR(T.ROWID), T.TS#, T.NAME, T.BLOCKSIZE FROM SYS.TS$ AS OF SCN :scn T"
XDB_TTSET: Final = "SELECT ROWIDTOCHAR(T.ROWID), T.GUID, T.TOKSUF, T.FLAGS, T.OBJ# FROM XDB.XDB$TTSET AS OF SCN :scn T"

USERS: Final = (
    f"SELECT ROWIDTOCHAR(U.ROWID), U.USER#, U.NAME, {_split128('U.SPARE1')} "
    "FROM SYS.USER$ AS OF SCN :scn U WHERE REGEXP_LIKE(U.NAME, :pattern)"
)

_OBJ_SELECT: Final = (
    f"SELECT ROWIDTOCHAR(O.ROWID), O.OWNER#, O.OBJ#, O.DATAOBJ#, O.NAME, O.TYPE#, "
    f"{_split128('O.FLAGS')} FROM SYS.OBJ$ AS OF SCN :scn O"
)
OBJECTS_OF_USER: Final = f"{_OBJ_SELECT} WHERE O.OWNER# = :owner_id"
OBJECTS_NAMED: Final = f"{_OBJ_SELECT} WHERE O.OWNER# = :owner_id AND REGEXP_LIKE(O.NAME, :pattern)"

# Per dictionary table: (select list with alias X, FROM clause, column of X holding the
# object number that ties it to OBJ$). The "of user" form joins OBJ$ on the owner, the
# "of object" form filters by the object number.
_DETAILS: Final[dict[str, tuple[str, str, str]]] = {
    "sys-ccol": (f"X.CON#, X.INTCOL#, X.OBJ#, {_split128('X.SPARE1')}", "SYS.CCOL$", "OBJ#"),
    "sys-cdef": ("X.CON#, X.OBJ#, X.TYPE#", "SYS.CDEF$", "OBJ#"),
    "sys-col": (
        (
            "X.OBJ#, X.COL#, X.SEGCOL#, X.INTCOL#, X.NAME, X.TYPE#, X.LENGTH, X.PRECISION#, X.SCALE, "
            f"X.CHARSETFORM, X.CHARSETID, X.NULL$, {_split128('X.PROPERTY')}"
        ),
        "SYS.COL$",
        "OBJ#",
    ),
    "sys-deferredstg": (f"X.OBJ#, {_split128('X.FLAGS_STG')}", "SYS.DEFERRED_STG$", "OBJ#"),
    "sys-ecol": ("X.TABOBJ#, X.COLNUM, X.GUARD_ID", "SYS.ECOL$", "TABOBJ#"),
    "sys-lob": ("X.OBJ#, X.COL#, X.INTCOL#, X.LOBJ#, X.TS#", "SYS.LOB$", "OBJ#"),
    "sys-tab": (
        f"X.OBJ#, X.DATAOBJ#, X.TS#, X.CLUCOLS, {_split128('X.FLAGS')}, {_split128('X.PROPERTY')}",
        "SYS.TAB$",
        "OBJ#",
    ),
    "sys-tabcompart": ("X.OBJ#, X.DATAOBJ#, X.BO#", "SYS.TABCOMPART$", "OBJ#"),
    "sys-tabpart": ("X.OBJ#, X.DATAOBJ#, X.BO#", "SYS.TABPART$", "OBJ#"),
    "sys-tabsubpart": ("X.OBJ#, X.DATAOBJ#, X.POBJ#", "SYS.TABSUBPART$", "OBJ#"),
}


def _details_of_user(select: str, table: str, link: str) -> str:
    return (
        f"SELECT ROWIDTOCHAR(X.ROWID), {select} FROM SYS.OBJ$ AS OF SCN :scn O "
        f"JOIN {table} AS OF SCN :scn X ON X.{link} = O.OBJ# WHERE O.OWNER# = :owner_id"
    )


def _details_of_object(select: str, table: str, link: str) -> str:
    return f"SELECT ROWIDTOCHAR(X.ROWID), {select} FROM {table} AS OF SCN :scn X WHERE X.{link} = :obj"


DETAILS_OF_USER: Final[dict[str, str]] = {key: _details_of_user(*spec) for key, spec in _DETAILS.items()}
DETAILS_OF_OBJECT: Final[dict[str, str]] = {key: _details_of_object(*spec) for key, spec in _DETAILS.items()}
# Sub-partitions are found through their parent partition (TABSUBPART$.POBJ#).
DETAILS_OF_OBJECT["sys-tabsubpart"] = _details_of_object(*_DETAILS["sys-tabsubpart"][:2], "POBJ#")
# Oracle 11g has no ECOL$.GUARD_ID: NULL reads as "no guard column" (-1).
ECOL_11_OF_USER: Final = DETAILS_OF_USER["sys-ecol"].replace("X.GUARD_ID", "NULL")
ECOL_11_OF_OBJECT: Final = DETAILS_OF_OBJECT["sys-ecol"].replace("X.GUARD_ID", "NULL")

# LOB partitions hang off LOB$ (LOBCOMPPART$.LOBJ#); LOB fragments off a LOB partition or,
# for a partitioned table without composite LOB partitions, off the LOB itself.
LOB_COMP_PART_OF_USER: Final = """
SELECT ROWIDTOCHAR(X.ROWID), X.PARTOBJ#, X.LOBJ#
  FROM SYS.OBJ$ AS OF SCN :scn O
  JOIN SYS.LOB$ AS OF SCN :scn L ON L.OBJ# = O.OBJ#
  JOIN SYS.LOBCOMPPART$ AS OF SCN :scn X ON X.LOBJ# = L.LOBJ#
 WHERE O.OWNER# = :owner_id
""".strip()
LOB_COMP_PART_OF_OBJECT: Final = """
SELECT ROWIDTOCHAR(X.ROWID), X.PARTOBJ#, X.LOBJ#
  FROM SYS.LOB$ AS OF SCN :scn L
  JOIN SYS.LOBCOMPPART$ AS OF SCN :scn X ON X.LOBJ# = L.LOBJ#
 WHERE L.OBJ# = :obj
""".strip()
LOB_FRAG_OF_USER: Final = """
SELECT ROWIDTOCHAR(X.ROWID), X.FRAGOBJ#, X.PARENTOBJ#, X.TS#
  FROM SYS.OBJ$ AS OF SCN :scn O
  JOIN SYS.LOB$ AS OF SCN :scn L ON L.OBJ# = O.OBJ#
  JOIN SYS.LOBCOMPPART$ AS OF SCN :scn P ON P.LOBJ# = L.LOBJ#
  JOIN SYS.LOBFRAG$ AS OF SCN :scn X ON X.PARENTOBJ# = P.PARTOBJ#
 WHERE O.OWNER# = :owner_id
UNION ALL
SELECT ROWIDTOCHAR(X.ROWID), X.FRAGOBJ#, X.PARENTOBJ#, X.TS#
  FROM SYS.OBJ$ AS OF SCN :scn O
  JOIN SYS.LOB$ AS OF SCN :scn L ON L.OBJ# = O.OBJ#
  JOIN SYS.LOBFRAG$ AS OF SCN :scn X ON X.PARENTOBJ# = L.LOBJ#
 WHERE O.OWNER# = :owner_id
""".strip()
LOB_FRAG_OF_OBJECT: Final = """
SELECT ROWIDTOCHAR(X.ROWID), X.FRAGOBJ#, X.PARENTOBJ#, X.TS#
  FROM SYS.LOB$ AS OF SCN :scn L
  JOIN SYS.LOBCOMPPART$ AS OF SCN :scn P ON P.LOBJ# = L.LOBJ#
  JOIN SYS.LOBFRAG$ AS OF SCN :scn X ON X.PARENTOBJ# = P.PARTOBJ#
 WHERE L.OBJ# = :obj
UNION ALL
SELECT ROWIDTOCHAR(X.ROWID), X.FRAGOBJ#, X.PARENTOBJ#, X.TS#
  FROM SYS.LOB$ AS OF SCN :scn L
  JOIN SYS.LOBFRAG$ AS OF SCN :scn X ON X.PARENTOBJ# = L.LOBJ#
 WHERE L.OBJ# = :obj
""".strip()

DETAILS_OF_USER["sys-lob-comp-part"] = LOB_COMP_PART_OF_USER
DETAILS_OF_USER["sys-lob-frag"] = LOB_FRAG_OF_USER
DETAILS_OF_OBJECT["sys-lob-comp-part"] = LOB_COMP_PART_OF_OBJECT
DETAILS_OF_OBJECT["sys-lob-frag"] = LOB_FRAG_OF_OBJECT

# The order in which the per-user/per-object dictionary arrays are read.
DETAIL_KEYS: Final = (
    "sys-ccol",
    "sys-cdef",
    "sys-col",
    "sys-deferredstg",
    "sys-ecol",
    "sys-lob",
    "sys-lob-comp-part",
    "sys-lob-frag",
    "sys-tab",
    "sys-tabcompart",
    "sys-tabpart",
    "sys-tabsubpart",
)

# XDB token tables: one set of three per XDB$TTSET row, named after its TOKSUF.
_XDB_SELECTS: Final = {
    "xdb-xnm": ("X$NM", "T.NMSPCURI, T.ID"),
    "xdb-xpt": ("X$PT", "T.PATH, T.ID"),
    "xdb-xqn": ("X$QN", "T.NMSPCID, T.LOCALNAME, T.FLAGS, T.ID"),
}
XDB_PREFIXES: Final = tuple(_XDB_SELECTS)
_TOKSUF: Final = re.compile(r"[A-Za-z0-9_]{1,26}")


def xdb_table(prefix: str, toksuf: str) -> str:
    """``XDB.X$NM<toksuf>``... for an array prefix (``xdb-xnm``...); the suffix is checked."""
    if not _TOKSUF.fullmatch(toksuf):
        raise ValueError(f"unexpected XDB token set suffix: {toksuf!r}")
    return f"XDB.{_XDB_SELECTS[prefix][0]}{toksuf}"


def xdb_statement(prefix: str, toksuf: str) -> str:
    """The statement reading the XDB token table ``prefix`` of token set ``toksuf``."""
    columns = _XDB_SELECTS[prefix][1]
    return f"SELECT ROWIDTOCHAR(T.ROWID), {columns} FROM {xdb_table(prefix, toksuf)} AS OF SCN :scn T"
