"""Oracle column types in the type vocabularies of the other CDC formats (docs/formats.md §2).

:func:`classify` reduces a dictionary column to a *family* (``int32``, ``decimal``,
``nvarchar``, ``timestamp_tz`` ...) once per table; each format then looks its own name up
in one of the tables below. NUMBER is split the way Debezium and Qlik split it: a NUMBER(p,0)
with p < 19 is an integer of the narrowest fitting width, anything else is exact decimal
text; FLOAT(b) (scale -127) is a decimal too, because Oracle stores it as a NUMBER.

Types OpenLogReplicator does not decode (LONG, LONG RAW, XMLTYPE, JSON, unknown codes) are
the ``unsupported`` family: formats leave them out unless ``unknown-type`` is 1, and then
carry their raw bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from replicator.events import (
    TYPE_BINARY_DOUBLE,
    TYPE_BINARY_FLOAT,
    TYPE_BLOB,
    TYPE_BOOLEAN,
    TYPE_CHAR,
    TYPE_CLOB,
    TYPE_DATE,
    TYPE_INTERVAL_DS,
    TYPE_INTERVAL_YM,
    TYPE_NUMBER,
    TYPE_RAW,
    TYPE_TIMESTAMP,
    TYPE_TIMESTAMP_LTZ,
    TYPE_TIMESTAMP_TZ,
    TYPE_UROWID,
    TYPE_VARCHAR2,
    Column,
)
from replicator.formats.olr_columns import effective_type

INTEGER_FAMILIES: Final = frozenset({"int8", "int16", "int32", "int64"})
NUMERIC_FAMILIES: Final = INTEGER_FAMILIES | {"decimal", "number", "float"}
TEXT_FAMILIES: Final = frozenset({"char", "nchar", "varchar", "nvarchar", "clob", "nclob"})
BINARY_FAMILIES: Final = frozenset({"raw", "blob", "unsupported"})
LOB_FAMILIES: Final = frozenset({"clob", "nclob", "blob"})
_FLOAT_SCALE: Final = -127  # SYS.COL$.SCALE of FLOAT(b)
_DEFAULT_FRACTION: Final = 6  # TIMESTAMP without a precision is TIMESTAMP(6)


@dataclass(frozen=True, slots=True)
class OracleType:
    """A column's type as the formats see it: family, Oracle spelling, precision and scale."""

    family: str
    name: str  # the Oracle type name, e.g. "NUMBER", "NVARCHAR2", "TIMESTAMP WITH TIME ZONE"
    code: int  # SYS.COL$.TYPE# as declared (DTS dataTypeNumber)
    precision: int  # NUMBER digits or fractional-second digits; -1 when unspecified
    scale: int

    @property
    def lob(self) -> bool:
        """CLOB, NCLOB and BLOB: left out of Qlik's changeMask; unavailable when not in an image."""
        return self.family in LOB_FAMILIES


def _integer_family(precision: int) -> str:
    """The narrowest integer holding NUMBER(precision, 0) (Debezium's and Qlik's rule)."""
    for limit, family in ((3, "int8"), (5, "int16"), (10, "int32"), (19, "int64")):
        if precision < limit:
            return family
    return "decimal"


def _number(column: Column) -> OracleType:
    p, s = column.precision, column.scale
    if s == _FLOAT_SCALE:
        return OracleType("float", "FLOAT", TYPE_NUMBER, p, s)
    if p > 0:
        family = _integer_family(p) if s == 0 else "decimal"
        return OracleType(family, "NUMBER", TYPE_NUMBER, p, s)
    if s == 0:  # INTEGER: NUMBER(*,0), up to 38 digits
        return OracleType("decimal", "INTEGER", TYPE_NUMBER, 38, 0)
    return OracleType("number", "NUMBER", TYPE_NUMBER, -1, -1)


_SIMPLE: Final[dict[int, tuple[str, str]]] = {
    TYPE_BINARY_FLOAT: ("binary_float", "BINARY_FLOAT"),
    TYPE_BINARY_DOUBLE: ("binary_double", "BINARY_DOUBLE"),
    TYPE_RAW: ("raw", "RAW"),
    TYPE_BLOB: ("blob", "BLOB"),
    TYPE_DATE: ("date", "DATE"),
    TYPE_TIMESTAMP_TZ: ("timestamp_tz", "TIMESTAMP WITH TIME ZONE"),
    TYPE_TIMESTAMP_LTZ: ("timestamp_ltz", "TIMESTAMP WITH LOCAL TIME ZONE"),
    TYPE_INTERVAL_YM: ("interval_ym", "INTERVAL YEAR TO MONTH"),
    TYPE_INTERVAL_DS: ("interval_ds", "INTERVAL DAY TO SECOND"),
    TYPE_UROWID: ("urowid", "UROWID"),
    TYPE_BOOLEAN: ("boolean", "BOOLEAN"),
    TYPE_TIMESTAMP: ("timestamp", "TIMESTAMP"),
}
_CHARACTER: Final[dict[tuple[int, bool], tuple[str, str]]] = {
    (TYPE_VARCHAR2, False): ("varchar", "VARCHAR2"),
    (TYPE_VARCHAR2, True): ("nvarchar", "NVARCHAR2"),
    (TYPE_CHAR, False): ("char", "CHAR"),
    (TYPE_CHAR, True): ("nchar", "NCHAR"),
    (TYPE_CLOB, False): ("clob", "CLOB"),
    (TYPE_CLOB, True): ("nclob", "NCLOB"),
}
_TEMPORAL: Final = frozenset({TYPE_TIMESTAMP, TYPE_TIMESTAMP_TZ, TYPE_TIMESTAMP_LTZ})


def classify(column: Column) -> OracleType:
    """The :class:`OracleType` of a dictionary column (extended VARCHAR2/RAW count as LOBs)."""
    code = effective_type(column)
    if code == TYPE_NUMBER:
        return _number(column)
    character = _CHARACTER.get((code, column.charset_form == 2))
    if character is not None:
        return OracleType(character[0], character[1], column.type_code, -1, -1)
    simple = _SIMPLE.get(code)
    if simple is None:
        return OracleType("unsupported", f"TYPE#{column.type_code}", column.type_code, -1, -1)
    # Fractional-second precision sits in SYS.COL$.SCALE for the TIMESTAMP types.
    fraction = column.scale if column.scale >= 0 else _DEFAULT_FRACTION
    precision = fraction if code in _TEMPORAL else -1
    return OracleType(simple[0], simple[1], column.type_code, precision, -1)


# Canal: java.sql.Types code and mysqlType (bare names, as OMS and DTS print them).
CANAL_TYPES: Final[dict[str, tuple[int, str]]] = {
    "int8": (-6, "tinyint"),
    "int16": (5, "smallint"),
    "int32": (4, "int"),
    "int64": (-5, "bigint"),
    "decimal": (3, "decimal"),
    "number": (2, "decimal"),
    "float": (3, "decimal"),
    "binary_float": (6, "float"),
    "binary_double": (8, "double"),
    "char": (1, "char"),
    "nchar": (-15, "char"),
    "varchar": (12, "varchar"),
    "nvarchar": (-9, "varchar"),
    "clob": (2005, "longtext"),
    "nclob": (2011, "longtext"),
    "raw": (-3, "varbinary"),
    "blob": (2004, "longblob"),
    "unsupported": (-3, "varbinary"),
    "date": (93, "datetime"),
    "timestamp": (93, "datetime"),
    "timestamp_tz": (2014, "timestamp"),
    "timestamp_ltz": (93, "timestamp"),
    "interval_ym": (12, "varchar"),
    "interval_ds": (12, "varchar"),
    "urowid": (-8, "varchar"),
    "boolean": (16, "tinyint"),
}

# OMS "light types": DataWorks 2.0 column types and DefaultExtendColumnType's schemaType.
OMS_TYPES: Final[dict[str, str]] = {
    "int8": "TINYINT",
    "int16": "SMALLINT",
    "int32": "INT",
    "int64": "INT64",
    "decimal": "DECIMAL",
    "number": "DECIMAL",
    "float": "DECIMAL",
    "binary_float": "FLOAT",
    "binary_double": "DOUBLE",
    **dict.fromkeys(("char", "nchar", "varchar", "nvarchar", "clob", "nclob", "urowid"), "VARCHAR"),
    **dict.fromkeys(("raw", "blob", "unsupported"), "BLOB"),
    "date": "DATETIME",
    "timestamp": "DATETIME",
    "timestamp_tz": "ZONED_DATETIME",
    "timestamp_ltz": "TIMESTAMP",
    "interval_ym": "INTERVAL_YEAR_TO_MONTH",
    "interval_ds": "INTERVAL_DAY_TO_SECOND",
    "boolean": "BOOLEAN",
}

# Qlik Replicate data types (its Oracle source mapping).
QLIK_TYPES: Final[dict[str, str]] = {
    "int8": "INT1",
    "int16": "INT2",
    "int32": "INT4",
    "int64": "INT8",
    "decimal": "NUMERIC",
    "number": "NUMERIC",
    "float": "NUMERIC",
    "binary_float": "REAL4",
    "binary_double": "REAL8",
    "char": "STRING",
    "varchar": "STRING",
    "nchar": "WSTRING",
    "nvarchar": "WSTRING",
    "clob": "CLOB",
    "nclob": "NCLOB",
    "raw": "BYTES",
    "blob": "BLOB",
    "unsupported": "BYTES",
    "date": "DATETIME",
    "timestamp": "DATETIME",
    "timestamp_tz": "STRING",
    "timestamp_ltz": "DATETIME",
    "interval_ym": "STRING",
    "interval_ds": "STRING",
    "urowid": "STRING",
    "boolean": "BOOLEAN",
}


def debezium_type(otype: OracleType) -> tuple[str, str | None]:
    """Kafka Connect schema type and semantic name (OMS's Debezium mapping, applied to Oracle).

    Decimals are strings (OMS: "DECIMAL ... STRING"), binary is ``bytes`` holding base16
    text, DATE and TIMESTAMP are epoch integers in the unit their precision needs.
    """
    family = otype.family
    if family in INTEGER_FAMILIES:
        return family, None
    if family in ("binary_float", "binary_double"):
        return ("float32" if family == "binary_float" else "float64"), None
    if family in BINARY_FAMILIES:
        return "bytes", None
    if family == "boolean":
        return "boolean", None
    if family == "date" or (family == "timestamp" and otype.precision <= 3):
        return "int64", "io.debezium.time.Timestamp"
    if family == "timestamp":
        return "int64", (
            "io.debezium.time.MicroTimestamp" if otype.precision <= 6 else "io.debezium.time.NanoTimestamp"
        )
    if family in ("timestamp_tz", "timestamp_ltz"):
        return "string", "io.debezium.time.ZonedTimestamp"
    if family in ("interval_ym", "interval_ds"):
        return "string", "io.debezium.time.Interval"
    return "string", None  # character data, decimals, UROWID


@dataclass(frozen=True, slots=True)
class DdlKind:
    """A DDL statement's type in Canal/DataWorks (``type``/``op``) and OMS (``ddlType``)."""

    canal: str
    oms: str


_DDL_RULES: Final = (
    (
        re.compile(r"CREATE\s+(OR\s+REPLACE\s+)?((GLOBAL|PRIVATE)\s+TEMPORARY\s+)?TABLE\b"),
        DdlKind("CREATE", "CREATE_TABLE"),
    ),
    (re.compile(r"CREATE\s+((UNIQUE|BITMAP)\s+)?INDEX\b"), DdlKind("CINDEX", "CREATE_INDEX")),
    (re.compile(r"ALTER\s+TABLE\s+\S+\s+RENAME\s+TO\b"), DdlKind("RENAME", "RENAME_TABLE")),
    (re.compile(r"ALTER\s+TABLE\b"), DdlKind("ALTER", "ALTER_TABLE")),
    (re.compile(r"RENAME\b"), DdlKind("RENAME", "RENAME_TABLE")),
    (re.compile(r"DROP\s+TABLE\b"), DdlKind("ERASE", "DROP_TABLE")),
    (re.compile(r"DROP\s+INDEX\b"), DdlKind("DINDEX", "DROP_INDEX")),
    (re.compile(r"TRUNCATE\s+TABLE\b"), DdlKind("TRUNCATE", "TRUNCATE_TABLE")),
)
_OTHER_DDL: Final = DdlKind("QUERY", "OTHER")


def ddl_kind(sql: str) -> DdlKind:
    """Classify a DDL statement by its leading keywords (anything else is QUERY/OTHER)."""
    text = sql.lstrip().upper()
    for pattern, kind in _DDL_RULES:
        if pattern.match(text):
            return kind
    return _OTHER_DDL
