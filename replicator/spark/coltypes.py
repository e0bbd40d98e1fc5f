"""Oracle column types (as OLR's ``schema.columns`` describes them) -> Spark SQL types.

Values arrive as the producer's text (see :mod:`.parse`). The mapping keeps every value
exact; where Spark has no exact type the text is kept:

=============================================  ======================================
NUMBER(p,s), 0<p<=38                           LongType when s=0 and p<=18, else Decimal(p,s)
NUMBER / FLOAT without precision               ``--unbounded-number``: string (default),
                                               decimal(38,10) or double
VARCHAR2, CHAR, NVARCHAR2, NCHAR, CLOB, LONG   StringType (CHAR keeps its blank padding)
DATE, TIMESTAMP                                TimestampNTZType (Oracle wall clock)
TIMESTAMP WITH LOCAL TIME ZONE                 TimestampType (UTC instant)
TIMESTAMP WITH TIME ZONE                       struct<utc: TimestampType, zone: StringType>
                                               (the instant in UTC and the zone as printed)
INTERVAL ...                                   StringType, as printed
RAW, BLOB, LONG RAW                            BinaryType
BINARY_FLOAT / BINARY_DOUBLE                   FloatType / DoubleType
BOOLEAN                                        BooleanType
=============================================  ======================================

DATE/TIMESTAMP numbers are read in the unit of the producer's ``timestamp`` option
(0/4 ns, 1/5 us, 2/6 ms, 3/7 s); ISO text (8-15) is recognised by its shape. Spark keeps
microseconds, so nanosecond digits are cut.
"""

from __future__ import annotations

from typing import Any, Final

_BINARY_TYPES: Final = frozenset({"raw", "blob", "long raw"})
# --unbounded-number decimal: values with more integer digits than this type holds are stored as
# NULL (their exact text stays in the change log), extra fraction digits are rounded half-even.
UNBOUNDED_DECIMAL: Final = "decimal(38,10)"
TSTZ_SQL: Final = "struct<utc:timestamp,zone:string>"  # TIMESTAMP WITH TIME ZONE


def _number_type(spec: dict[str, Any], unbounded: str) -> str:
    p, s = int(spec.get("precision", -1) or -1), int(spec.get("scale", -1) if spec.get("scale") is not None else -1)
    if 0 < p <= 38 and -84 <= s <= p:
        if s <= 0 and p - s <= 18:
            return "bigint"
        if s < 0:
            return f"decimal({min(38, p - s)},0)"
        return f"decimal({p},{s})"
    if p <= 0 and s == 0:  # NUMBER(*,0): any integer of up to 38 digits
        return "decimal(38,0)"
    return {"string": "string", "decimal": UNBOUNDED_DECIMAL, "double": "double"}[unbounded]


def sql_type(spec: dict[str, Any], unbounded: str = "string") -> str:
    """The Spark SQL type name of a column spec (``{"type": "number", "precision": 10, ...}``)."""
    t = str(spec.get("type", "varchar2")).lower()
    if t in ("number", "float"):
        return _number_type(spec, unbounded)
    if t == "integer":
        return "bigint"
    if t in _BINARY_TYPES:
        return "binary"
    if t == "binary_float":
        return "float"
    if t == "binary_double":
        return "double"
    if t == "boolean":
        return "boolean"
    if t in ("date", "timestamp"):
        return "timestamp_ntz"
    if t == "timestamp with local time zone":
        return "timestamp"
    if t == "timestamp with time zone":
        return TSTZ_SQL
    return "string"
