"""Compare scenario values (as redogen takes them) with values read back from the lake.

Both sides are turned into one canonical form per Oracle type. Where the pipeline is
lossy by design the comparison says so: BINARY_FLOAT/DOUBLE go through OpenLogReplicator's
6-significant-digit ``%g`` output, and Spark timestamps keep microseconds.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

_TS = re.compile(r"(-?\d+)-(\d+)-(\d+)(?:[ T](\d+):(\d+):(\d+)(?:\.(\d+))?)?\s*(Z|[+-]\d\d:?\d\d)?$")
_EPOCH = datetime(1970, 1, 1)


def _wall(text: str) -> tuple[datetime, int, int | None]:
    """'YYYY-MM-DD HH:MM:SS.ffffff +HH:MM' -> (naive wall clock to the us, nanos, offset minutes)."""
    m = _TS.match(str(text).strip())
    assert m, text
    frac = (m[7] or "").ljust(9, "0")
    wall = datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4] or 0), int(m[5] or 0), int(m[6] or 0))
    offset = None
    if m[8]:
        offset = 0 if m[8] == "Z" else (1 if m[8][0] == "+" else -1) * (int(m[8][1:3]) * 60 + int(m[8][-2:]))
    return wall, int(frac), offset


def _scale(sql: str, default: int = 6) -> int:
    m = re.search(r"TIMESTAMP\s*\((\d)\)", sql.upper())
    return int(m[1]) if m else default


def expected(sql: str, value: Any) -> Any:
    """Canonical form of a scenario value of SQL type ``sql``."""
    t = sql.upper()
    if value is None or value == "":
        return None
    if t.startswith(("NUMBER", "FLOAT", "INTEGER")):
        return Decimal(str(value))
    if t.startswith(("CHAR", "NCHAR")):
        return str(value).rstrip(" ")
    if t.startswith(("VARCHAR", "NVARCHAR", "CLOB", "NCLOB")):
        return str(value)
    if t.startswith("DATE"):
        return _wall(value)[0]
    if t.startswith("TIMESTAMP") and "TIME ZONE" in t:
        wall, nanos, offset = _wall(value)
        step = 10 ** (9 - _scale(t))
        nanos = nanos // step * step
        if "LOCAL" in t:  # stored in the database time zone (+00:00 in these scenarios)
            return wall + timedelta(microseconds=nanos // 1000) - timedelta(minutes=offset or 0)
        epoch = int((wall - timedelta(minutes=offset or 0) - _EPOCH).total_seconds()) * 10**9 + nanos
        return epoch // 1000, offset or 0  # the lake keeps microseconds
    if t.startswith("TIMESTAMP"):
        wall, nanos, _ = _wall(value)
        step = 10 ** (9 - _scale(t))
        return wall + timedelta(microseconds=(nanos // step * step) // 1000)
    if t.startswith("INTERVAL YEAR"):
        sign = -1 if str(value).startswith("-") else 1
        years, months = str(value).lstrip("+-").split("-")
        return sign * (int(years) * 12 + int(months))
    if t.startswith("INTERVAL DAY"):
        m = re.match(r"([+-]?)(\d+) (\d+):(\d+):(\d+)(?:\.(\d+))?", str(value))
        assert m, value
        step = 10 ** (9 - (int(re.search(r"SECOND\s*\((\d)\)", t)[1]) if "SECOND(" in t else 6))
        ns = (((int(m[2]) * 24 + int(m[3])) * 60 + int(m[4])) * 60 + int(m[5])) * 10**9
        ns += int((m[6] or "").ljust(9, "0")) // step * step
        return -ns if m[1] == "-" else ns
    if t.startswith(("BINARY_FLOAT", "BINARY_DOUBLE")):
        return float(value)
    if t.startswith(("RAW", "BLOB")):
        return bytes.fromhex(value) if isinstance(value, str) else bytes(value)
    if t.startswith("BOOLEAN"):
        return value in (True, 1, "1", "true", "TRUE")
    return value


def actual(sql: str, value: Any) -> Any:
    """Canonical form of a value read from the lake for a column of SQL type ``sql``."""
    t = sql.upper()
    if value is None:
        return None
    if t.startswith(("NUMBER", "FLOAT", "INTEGER")):
        return Decimal(str(value))
    if t.startswith(("CHAR", "NCHAR")):
        return str(value).rstrip(" ")
    if t.startswith("TIMESTAMP") and "TIME ZONE" in t:
        if "LOCAL" in t:
            return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        utc, zone = value["utc"], value["zone"] or ""  # struct<utc: timestamp, zone: string>
        us = (utc.astimezone(UTC).replace(tzinfo=None) - _EPOCH) // timedelta(microseconds=1)
        sign = -1 if zone.startswith("-") else 1
        return us, sign * (int(zone[1:3]) * 60 + int(zone[4:6])) if zone[:1] in "+-" and zone else 0
    if t.startswith(("INTERVAL YEAR", "INTERVAL DAY")):
        return int(value)
    if t.startswith(("BINARY_FLOAT", "BINARY_DOUBLE")):
        return float(value)
    if t.startswith(("RAW", "BLOB")):
        return bytes(value)
    return value


def same(sql: str, want: Any, got: Any) -> bool:
    """Equal in canonical form (floats within OLR's 6 significant digits)."""
    if want is None or got is None:
        return want is None and got is None
    if sql.upper().startswith(("BINARY_FLOAT", "BINARY_DOUBLE")):
        return abs(want - got) <= 1e-5 * max(abs(want), abs(got), 1e-30)
    return bool(want == got)
