"""Column types of a scenario: SQL type text -> SYS.COL$ fields, and Python value -> bytes.

A scenario declares columns the way SQL does (``NUMBER(10,2)``, ``VARCHAR2(40 CHAR)``,
``TIMESTAMP(6) WITH TIME ZONE``...). :func:`parse_type` turns that into the COL$ values
the schema checkpoint needs; :func:`encode_value` turns a scenario value (JSON-friendly:
numbers, strings, booleans, ``datetime``) into the raw bytes written into redo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Final

from replicator import events as ev
from replicator.errors import ConfigError, DataError
from replicator.redogen import encode as enc
from replicator.redogen.lobvalues import MULTIBYTE_CHARSETS, LobData, encode_lob, parse_lob_type

# Declared sizes above which a column is an extended data type stored as a LOB (Oracle's
# MAX_STRING_SIZE=EXTENDED rule: VARCHAR2/NVARCHAR2 over 4000 bytes, RAW over 2000 bytes).
EXTENDED_VARCHAR_BYTES: Final = 4000
EXTENDED_RAW_BYTES: Final = 2000

_TYPE_RE: Final = re.compile(
    r"\s*(?P<base>[A-Z][A-Z0-9_ ]*?)\s*(?:\(\s*(?P<a>\d+)\s*(?:,\s*(?P<b>-?\d+))?\s*(?P<sem>BYTE|CHAR)?\s*\))?"
    r"\s*(?P<tail>WITH LOCAL TIME ZONE|WITH TIME ZONE|TO MONTH|TO SECOND(?:\s*\(\s*(?P<f>\d+)\s*\))?)?\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class ColumnType:
    """COL$ view of one declared type plus what the encoder needs."""

    sql: str
    type_code: int
    length: int
    precision: int = -1
    scale: int = -1
    charset_form: int = 0  # 1 database charset, 2 national charset
    char_length: int = 0  # CHAR/NCHAR blank-padding width in characters (0 = none)
    lob_storage: int = 0  # LOB columns: redogen.lobvalues.SECUREFILE, BASICFILE or BASICFILE_OUT_OF_ROW
    # XMLTYPE stored as CLOB: the fields describe the hidden CLOB column that holds the data;
    # COL$ also gets the virtual type-58 column (see :func:`xmltype_col_rows`).
    xmltype: bool = False
    # An extended VARCHAR2/NVARCHAR2 (over 4000 bytes) or RAW (over 2000 bytes) of a database
    # with MAX_STRING_SIZE=EXTENDED: Oracle stores it as a SecureFile LOB (COL$ PROPERTY 0x80),
    # the row holding a LOB locator, as for a CLOB/BLOB.
    stored_as_lob: bool = False

    @property
    def is_char(self) -> bool:
        """VARCHAR2/CHAR and their national forms."""
        return self.type_code in (ev.TYPE_VARCHAR2, ev.TYPE_CHAR)


def parse_type(text: str, *, varchar_max: int = 32767) -> ColumnType:
    """Parse an Oracle column type declaration (BOOLEAN needs a 23 database, checked later)."""
    m = _TYPE_RE.fullmatch(text.upper())
    if m is None:
        raise ConfigError(f"cannot parse column type {text!r}")
    base = " ".join(m["base"].split())
    a = int(m["a"]) if m["a"] else None
    b = int(m["b"]) if m["b"] is not None else None
    tail = " ".join((m["tail"] or "").split()).upper()
    char_sem = m["sem"] == "CHAR"
    if base in ("NUMBER", "INTEGER", "INT", "SMALLINT", "DECIMAL", "NUMERIC"):
        if base in ("INTEGER", "INT", "SMALLINT"):  # NUMBER(*,0): precision NULL, scale 0
            return ColumnType(text, ev.TYPE_NUMBER, 22, -1, 0)
        if base != "NUMBER":
            return ColumnType(text, ev.TYPE_NUMBER, 22, a if a is not None else 38, b or 0)
        return ColumnType(text, ev.TYPE_NUMBER, 22, a if a is not None else -1, (b or 0) if a is not None else -1)
    if base == "FLOAT":
        return ColumnType(text, ev.TYPE_NUMBER, 22, a if a is not None else 126, -127)
    if base in ("VARCHAR2", "VARCHAR", "NVARCHAR2", "CHAR", "NCHAR"):
        national = base.startswith("N")
        size = a if a is not None else 1
        if size > varchar_max or (base in ("CHAR", "NCHAR") and size > 2000):
            raise ConfigError(f"{text!r}: size too large")
        code = ev.TYPE_CHAR if base in ("CHAR", "NCHAR") else ev.TYPE_VARCHAR2
        nbytes = size * 2 if national else (size * 4 if char_sem else size)
        pad = size if code == ev.TYPE_CHAR else 0
        return ColumnType(
            text,
            code,
            nbytes,
            charset_form=2 if national else 1,
            char_length=pad,
            stored_as_lob=code == ev.TYPE_VARCHAR2 and nbytes > EXTENDED_VARCHAR_BYTES,
        )
    simple = {
        "DATE": (ev.TYPE_DATE, 7),
        "BINARY_FLOAT": (ev.TYPE_BINARY_FLOAT, 4),
        "BINARY_DOUBLE": (ev.TYPE_BINARY_DOUBLE, 8),
        "BOOLEAN": (ev.TYPE_BOOLEAN, 1),
    }
    if base in simple and not tail:
        return ColumnType(text, *simple[base])
    if base == "RAW":
        size = a if a is not None else 1
        if size > varchar_max:
            raise ConfigError(f"{text!r}: size too large")
        return ColumnType(text, ev.TYPE_RAW, size, stored_as_lob=size > EXTENDED_RAW_BYTES)
    if base.split(" ", 1)[0] == "XMLTYPE" and a is None and not tail:
        return _xmltype(base, text)
    lob = parse_lob_type(base, text)
    if lob is not None and a is None and not tail:
        return ColumnType(text, lob[0], lob[1], charset_form=lob[2], lob_storage=lob[3])
    if base == "TIMESTAMP":
        frac = a if a is not None else 6
        if tail == "WITH TIME ZONE":
            return ColumnType(text, ev.TYPE_TIMESTAMP_TZ, 13, scale=frac)
        if tail == "WITH LOCAL TIME ZONE":
            return ColumnType(text, ev.TYPE_TIMESTAMP_LTZ, 11, scale=frac)
        # No fraction is stored at precision 0, so COL$.LENGTH is the DATE-sized 7 (real 23ai checkpoint).
        return ColumnType(text, ev.TYPE_TIMESTAMP, 7 if frac == 0 else 11, scale=frac)
    if base == "INTERVAL YEAR" and tail == "TO MONTH":
        return ColumnType(text, ev.TYPE_INTERVAL_YM, 5, a if a is not None else 2, 0)
    if base == "INTERVAL DAY" and tail.startswith("TO SECOND"):
        return ColumnType(text, ev.TYPE_INTERVAL_DS, 11, a if a is not None else 2, int(m["f"]) if m["f"] else 6)
    raise ConfigError(f"column type {text!r} is not supported by redogen")


# COL$.PROPERTY of the CLOB column Oracle adds for an XMLTYPE column: hidden, system-generated.
XMLTYPE_CLOB_PROPERTY: Final = ev.COL_PROPERTY_HIDDEN | 0x100


def _xmltype(base: str, text: str) -> ColumnType:
    """``XMLTYPE STORE AS [SECUREFILE|BASICFILE] CLOB``: the hidden CLOB.

    A bare ``XMLTYPE`` is binary XML (Oracle's default storage since 11.2.0.2), which, like
    ``STORE AS BINARY XML``, redogen does not write: decoding it needs the XDB token tables.
    """
    rest = base[len("XMLTYPE") :].strip()
    words = rest[len("STORE AS ") :].split() if rest.startswith("STORE AS ") else []
    if words[-1:] != ["CLOB"]:
        raise ConfigError(
            f"{text!r}: redogen writes only XMLTYPE STORE AS [SECUREFILE|BASICFILE] CLOB "
            "(binary XML, the default storage, needs the XDB token tables)"
        )
    lob = parse_lob_type(" ".join(["CLOB", *words[:-1]]), text)
    if lob is None:
        raise ConfigError(f"{text!r}: unknown CLOB storage")
    return ColumnType(text, lob[0], lob[1], charset_form=lob[2], lob_storage=lob[3], xmltype=True)


def intcols(ctypes: list[ColumnType]) -> list[int]:
    """COL$.INTCOL# of each stored column: an XMLTYPE's virtual column takes one number
    before its hidden CLOB, so the columns after it are shifted."""
    out, n = [], 0
    for ct in ctypes:
        n += 2 if ct.xmltype else 1
        out.append(n)
    return out


def xmltype_virtual_row(intcol: int, name: str) -> dict[str, Any]:
    """The COL$ fields (besides OBJ#, COL#, NULL$) of an XMLTYPE's virtual column: TYPE# 58,
    SEGCOL# 0, nothing stored. Its hidden CLOB is named ``SYS_NC<INTCOL#:05>$``."""
    return {
        "SEGCOL#": 0,
        "INTCOL#": intcol,
        "NAME": name,
        "TYPE#": ev.TYPE_XMLTYPE,
        "LENGTH": 2000,
        "SEGCOLLENGTH": 0,
        "PRECISION#": None,
        "SCALE": None,
        "CHARSETFORM": None,
        "CHARSETID": None,
        "PROPERTY": 0,
    }


_DT_RE: Final = re.compile(
    r"(?P<y>-?\d{1,4})-(?P<mo>\d\d)-(?P<d>\d\d)(?:[ T](?P<h>\d\d):(?P<mi>\d\d)(?::(?P<s>\d\d)(?:\.(?P<f>\d{1,9}))?)?)?"
    r"\s*(?P<tz>Z|[+-]\d\d:?\d\d)?"
)
_DS_RE: Final = re.compile(r"(?P<sign>[+-])?(?P<d>\d+)[ ,-](?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)(?:\.(?P<f>\d{1,9}))?")
_YM_RE: Final = re.compile(r"(?P<sign>[+-])?(?P<y>\d+)-(?P<m>\d+)")


def parse_datetime(value: Any) -> tuple[enc.OraDateTime, int | None]:
    """A scenario date/time -> (wall clock, offset in minutes or None when none was given)."""
    if isinstance(value, datetime):
        off = value.utcoffset()
        return enc.OraDateTime.from_datetime(value), None if off is None else int(off.total_seconds() // 60)
    if isinstance(value, date):
        return enc.OraDateTime.from_datetime(value), None
    m = _DT_RE.fullmatch(str(value).strip())
    if m is None:
        raise DataError(f"cannot parse date/time {value!r}", 60002)
    frac = (m["f"] or "").ljust(9, "0")
    wall = enc.OraDateTime(
        int(m["y"]), int(m["mo"]), int(m["d"]), int(m["h"] or 0), int(m["mi"] or 0), int(m["s"] or 0), int(frac)
    )
    tz = m["tz"]
    if tz is None:
        return wall, None
    if tz == "Z":
        return wall, 0
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    return wall, sign * (int(digits[:2]) * 60 + int(digits[2:]))


def _round_nanos(wall: enc.OraDateTime, digits: int) -> enc.OraDateTime:
    """Truncate the fraction to the column's fractional precision (as the database stores it)."""
    step = 10 ** (9 - digits)
    return enc.OraDateTime(
        wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second, wall.nanos // step * step
    )


def encode_value(ctype: ColumnType, value: Any, charset_ids: tuple[int, int], db_tz_minutes: int = 0) -> bytes | None:
    """Scenario value -> stored bytes, or None for NULL (including '' and b'', as in Oracle).

    ``charset_ids`` is (database charset id, national charset id).
    """
    if value is None:
        return None
    code = ctype.type_code
    if code == ev.TYPE_NUMBER:
        if isinstance(value, bool):
            value = int(value)
        return enc.encode_number(value if isinstance(value, (int, float, Decimal)) else Decimal(str(value)))
    if code in (ev.TYPE_VARCHAR2, ev.TYPE_CHAR):
        text = str(value)
        if text == "":
            return None
        if ctype.char_length and len(text) < ctype.char_length:
            text = text.ljust(ctype.char_length)
        data = enc.encode_text(text, charset_ids[1] if ctype.charset_form == 2 else charset_ids[0])
        return LobData(data) if ctype.stored_as_lob else data  # the DML turns LobData into a locator
    if code == ev.TYPE_RAW:
        raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value)
        return (LobData(raw) if ctype.stored_as_lob else raw) if raw else None
    if code in (ev.TYPE_CLOB, ev.TYPE_BLOB):  # the data; the DML turns it into a locator (redogen.lobs)
        return encode_lob(ctype.type_code, ctype.charset_form, value, charset_ids, charset_ids[0] in MULTIBYTE_CHARSETS)
    if code == ev.TYPE_BINARY_FLOAT:
        return enc.encode_binary_float(float(value))
    if code == ev.TYPE_BINARY_DOUBLE:
        return enc.encode_binary_double(float(value))
    if code == ev.TYPE_BOOLEAN:
        return b"\x01" if value in (True, 1, "1", "true", "TRUE") else b"\x00"
    if code == ev.TYPE_DATE:
        return enc.encode_date(parse_datetime(value)[0])
    if code in (ev.TYPE_TIMESTAMP, ev.TYPE_TIMESTAMP_LTZ):
        wall, offset = parse_datetime(value)
        if code == ev.TYPE_TIMESTAMP_LTZ and offset is not None and offset != db_tz_minutes:
            wall = wall.shifted((db_tz_minutes - offset) * 60)  # stored in the database time zone
        return enc.encode_timestamp(_round_nanos(wall, max(ctype.scale, 0)))
    if code == ev.TYPE_TIMESTAMP_TZ:
        wall, offset = parse_datetime(value)
        return enc.encode_timestamp_tz(_round_nanos(wall, max(ctype.scale, 0)), offset or 0)
    if code == ev.TYPE_INTERVAL_YM:
        if isinstance(value, (list, tuple)):
            return enc.encode_interval_ym(int(value[0]), int(value[1]))
        m = _YM_RE.fullmatch(str(value).strip())
        if m is None:
            raise DataError(f"cannot parse INTERVAL YEAR TO MONTH {value!r}", 60002)
        sign = -1 if m["sign"] == "-" else 1
        return enc.encode_interval_ym(sign * int(m["y"]), sign * int(m["m"]))
    if code == ev.TYPE_INTERVAL_DS:
        m = _DS_RE.fullmatch(str(value).strip())
        if m is None:
            raise DataError(f"cannot parse INTERVAL DAY TO SECOND {value!r}", 60002)
        sign = -1 if m["sign"] == "-" else 1
        nanos = int((m["f"] or "").ljust(9, "0"))
        step = 10 ** (9 - max(ctype.scale, 0))
        days, hours, minutes, seconds = (sign * int(m[k]) for k in "dhms")
        return enc.encode_interval_ds(days, hours, minutes, seconds, sign * (nanos // step * step))
    raise DataError(f"redogen cannot encode type {ctype.sql}", 60002)


def make_column(
    name: str, ctype: ColumnType, *, nullable: bool, segcol: int, key: bool, charset_ids: tuple[int, int]
) -> ev.Column:
    """The shared-model :class:`~replicator.events.Column` of a scenario column."""
    charset_id = 0
    if ctype.charset_form == 1:
        charset_id = charset_ids[0]
    elif ctype.charset_form == 2:
        charset_id = charset_ids[1]
    xml = ctype.xmltype  # the hidden CLOB, named after the XMLTYPE as OLR's schema names it
    return ev.Column(
        name=name,
        type_code=ctype.type_code,
        length=ctype.length,
        precision=ctype.precision,
        scale=ctype.scale,
        charset_form=ctype.charset_form,
        charset_id=charset_id,
        nullable=nullable,
        segcol=segcol,
        key=key,
        property=XMLTYPE_CLOB_PROPERTY if xml else ev.COL_PROPERTY_STORED_AS_LOB if ctype.stored_as_lob else 0,
        hidden=xml,
        xml_type=xml,
    )
