"""Column values as the producer printed them (text) -> typed Arrow arrays.

The Arrow counterpart of :mod:`.coltypes`: the same type mapping (``sql_type``), done on
the driver with pyarrow compute kernels (numbers, booleans, floats) and small Python
loops only where Arrow has no kernel (hex bytes, timestamps in a unit or ISO text).
"""

from __future__ import annotations

import re
from typing import Any, Final

from replicator.spark.coltypes import TSTZ_SQL, sql_type
from replicator.spark.tableschema import METADATA
from replicator.spark.timeparse import iso_to_us

_UNIT_US: Final = {"ns": (1000, 1), "us": (1, 1), "ms": (1, 1000), "s": (1, 1_000_000), "days": (1, 86_400_000_000)}
_UNITS: Final = {0: "ns", 1: "us", 2: "ms", 3: "s"}
_DECIMAL: Final = re.compile(r"^decimal\((\d+),(-?\d+)\)$")


def arrow_type(sql: str) -> Any:
    """The Arrow type of a Spark SQL type name the job uses."""
    import pyarrow as pa

    m = _DECIMAL.match(sql)
    if m:
        return pa.decimal128(int(m[1]), int(m[2]))
    if sql == TSTZ_SQL:
        return pa.struct([("utc", pa.timestamp("us", tz="UTC")), ("zone", pa.string())])
    return {
        "bigint": pa.int64(),
        "int": pa.int32(),
        "string": pa.string(),
        "binary": pa.binary(),
        "float": pa.float32(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
        "timestamp_ntz": pa.timestamp("us"),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }[sql]


def column_type(spec: dict[str, Any], unbounded: str) -> Any:
    """The Arrow type a column is stored as."""
    return arrow_type(sql_type(spec, unbounded))


def metadata_schema() -> list[tuple[str, Any]]:
    """(name, Arrow type) of the metadata columns of a current-state row."""
    return [(n, arrow_type(t)) for n, t in METADATA]


_ZONE: Final = re.compile(r"^(.*\d)([+-])(\d\d):?(\d\d)$")


def _timestamp_us(text: str, unit: str) -> int:
    t = text.strip()
    if t.lstrip("-").isdigit():
        div, mul = _UNIT_US.get(unit, _UNIT_US["ns"])
        return int(t) // div * mul
    zone = _ZONE.match(t) if "T" in t or " " in t else None
    if zone:  # an offset (Debezium ZonedTimestamp): the instant in UTC
        offset = (int(zone[3]) * 60 + int(zone[4])) * 60_000_000
        return iso_to_us(zone[1]) - (offset if zone[2] == "+" else -offset)
    return iso_to_us(t)


def _epoch_us(text: Any, unit: str) -> Any:
    """Epoch numbers in ``unit`` (an Arrow string array of plain ASCII integers) -> int64
    microseconds, floored as :func:`_timestamp_us` does; None when a value is anything else
    (ISO text, spaces, a number beyond int64): the caller takes them one by one."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if unit not in _UNIT_US or not len(text):
        return None
    # 19 digits: nanoseconds since 2001 (the cast refuses what int64 cannot hold)
    if not pc.all(pc.match_substring_regex(text, r"^-?[0-9]{1,19}$")).as_py():  # all NULL: True
        return None
    div, mul = _UNIT_US[unit]
    try:
        numbers = text.cast(pa.int64())
    except pa.ArrowInvalid:
        return None
    if div == 1 and mul == 1:
        return numbers
    values = numbers.to_numpy(zero_copy_only=False) if numbers.null_count == 0 else pc.fill_null(numbers, 0).to_numpy()
    if mul != 1 and np.abs(values // div).max(initial=0) > np.iinfo(np.int64).max // mul:
        return None  # beyond int64 microseconds: the Python path says so
    out = values // div * mul
    return pa.array(
        out, pa.int64(), mask=numbers.is_null().to_numpy(zero_copy_only=False) if numbers.null_count else None
    )


def _epoch_tstz(text: Any, target: Any, tz_code: int) -> Any:
    """OpenLogReplicator's ``<epoch>,<zone>`` TIMESTAMP WITH TIME ZONE values (an Arrow string
    array) as :func:`_tstz` reads them, in Arrow; None when a value has another form (the caller
    takes them one by one)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(text) or not pc.all(pc.match_substring_regex(text, r"^-?[0-9]{1,19},[^\s]*$")).as_py():
        return None
    parts = pc.extract_regex(text, r"^(?P<n>-?[0-9]+),(?P<z>.*)$")
    utc = _epoch_us(pc.struct_field(parts, "n"), _UNITS[tz_code % 4] if tz_code < 4 else "ns")
    if utc is None:
        return None
    zone = pc.struct_field(parts, "z")
    zone = pc.if_else(pc.equal(zone, ""), pa.scalar(None, pa.string()), zone)  # an empty zone: None
    return pa.StructArray.from_arrays(
        [utc.cast(target.field("utc").type), zone], fields=list(target), mask=pc.is_null(text)
    )


def _tstz(text: str, tz_code: int) -> tuple[int, str | None]:
    """A TIMESTAMP WITH TIME ZONE as printed -> (UTC microseconds, zone text).

    OpenLogReplicator prints the instant in UTC and the zone (an offset or a region name):
    ``<epoch in the timestamp-tz unit>,<zone>`` (codes 0-3) or ``<ISO UTC>[Z] <zone>`` (4-11);
    Debezium's ZonedTimestamp is ISO local time with its offset (``...+02:00``, ``...Z``)."""
    t = text.strip()
    number, comma, zone = t.partition(",")
    if comma and number.lstrip("-").isdigit():
        div, mul = _UNIT_US[_UNITS.get(tz_code % 4 if tz_code < 4 else 0, "ns")]
        return int(number) // div * mul, zone or None
    clock, space, zone = t.rpartition(" ")
    if space and ("T" in clock or ":" in clock) and not zone[:1].isdigit():
        return iso_to_us(clock), zone
    m = _ZONE.match(t)
    if m:
        return _timestamp_us(t, "iso"), f"{m[2]}{m[3]}:{m[4]}"
    return iso_to_us(t), "Z" if t.endswith("Z") else None


def _decimal(text: Any, target: Any) -> Any:
    """Number text -> decimal128; extra fraction digits rounded half-even, a value too large for
    the type NULL (the caller counts them; the change log keeps the exact text)."""
    import decimal

    import pyarrow as pa

    try:
        return text.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    quantum = decimal.Decimal(1).scaleb(-target.scale)
    limit = decimal.Decimal(10) ** (target.precision - target.scale)
    out = []
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        for v in text.to_pylist():
            try:
                d = None if v is None else decimal.Decimal(v).quantize(quantum, decimal.ROUND_HALF_EVEN)
            except (decimal.InvalidOperation, ValueError):
                d = None
            out.append(d if d is not None and d.is_finite() and abs(d) < limit else None)
    return pa.array(out, target)


def convert(
    values: Any, spec: dict[str, Any], timestamp_code: int, unbounded: str, typed: bool = True, tz_code: int = 0
) -> Any:
    """Text values of one column (a list, or an Arrow string array) -> an Arrow array of the column's type.

    Never fails on a value the type cannot hold: a number beyond a ``decimal`` column's range
    becomes NULL (see :data:`replicator.spark.coltypes.UNBOUNDED_DECIMAL`)."""
    import pyarrow as pa

    text = values if isinstance(values, pa.Array) else pa.array(values, pa.string())
    if not typed:
        return text
    sql = sql_type(spec, unbounded)
    target = arrow_type(sql)
    if sql == "string":
        return text
    if sql == TSTZ_SQL:
        fast = _epoch_tstz(text, target, tz_code)
        if fast is not None:
            return fast
        parsed = [None if v is None else _tstz(v, tz_code) for v in text.to_pylist()]
        utc = pa.array([None if p is None else p[0] for p in parsed], pa.int64()).cast(target.field("utc").type)
        zone = pa.array([None if p is None else p[1] for p in parsed], pa.string())
        missing = pa.array([p is None for p in parsed], pa.bool_())
        return pa.StructArray.from_arrays([utc, zone], fields=list(target), mask=missing)
    if sql.startswith("decimal"):
        return _decimal(text, target)
    if sql == "binary":
        return pa.array([None if v is None else bytes.fromhex(v) for v in text.to_pylist()], pa.binary())
    if sql in ("timestamp", "timestamp_ntz"):
        unit = spec.get("unit") or _UNITS.get(timestamp_code % 4 if timestamp_code < 8 else -1, "iso")
        fast = _epoch_us(text, unit)
        if fast is not None:
            return fast.cast(target)
        micros = [None if v is None else _timestamp_us(v, unit) for v in text.to_pylist()]
        return pa.array(micros, pa.int64()).cast(target)
    if sql == "boolean":
        import pyarrow.compute as pc

        text = pc.utf8_lower(text)
    return text.cast(target)
