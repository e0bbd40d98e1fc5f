"""The SQL compiler's table model: definitions, current rows, and values stored into columns.

:class:`SqlTable` keeps a table's columns (from the ``CREATE TABLE`` text or the schema checkpoint)
and its rows, keyed by primary key, in row order; :func:`coerce` turns an expression value into
what the column stores (rounded, padded, length-checked), :func:`scenario_value` into the form
scenario files use.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

from replicator import events as ev
from replicator.redogen.coltypes import ColumnType, parse_type
from replicator.redogen.encode import convert_text, decode_text
from replicator.redogen.scenario import ColumnSpec, TableSpec
from replicator.redogen.sqlexpr import (
    DB_CHARSET,
    EXPRESSION,
    RUNTIME,
    EmptyLob,
    Interval,
    Node,
    OraTime,
    SqlError,
    compare,
    evaluate,
    to_number,
    to_text,
)

_ESCAPED = re.compile("[\udc80-\udcff]")  # bytes passed through (encode.decode_text)

# ---------------------------------------------------------------------------------------------
# tables


@dataclass(slots=True)
class SqlColumn:
    """A column of the compiler's table model."""

    name: str
    type: str
    nullable: bool = True
    default: Node | None = None
    ctype: ColumnType | None = None
    identity: tuple[str, int, int, int] | None = None  # (ALWAYS | BY DEFAULT | ON NULL, start, step, cache)

    def __post_init__(self) -> None:
        if self.ctype is None:
            self.ctype = parse_type(self.type)


@dataclass(slots=True)
class SqlTable:
    """A table: definition plus current rows (key -> column values) in row order."""

    owner: str
    name: str
    columns: list[SqlColumn]
    primary_key: list[str] = field(default_factory=list)
    supplemental: str = "none"
    obj: int = 0
    data_obj: int = 0
    ts: int = 6
    partition_kind: str = ""  # RANGE | LIST
    partition_col: str = ""
    partitions: list[tuple[str, list[Any]]] = field(default_factory=list)  # (name, bound values)
    partition_objs: list[int] = field(default_factory=list)
    rows: dict[Any, dict[str, Any]] = field(default_factory=dict)
    unique: list[list[str]] = field(default_factory=list)  # UNIQUE constraints and unique indexes
    checks: list[Node] = field(default_factory=list)  # CHECK constraints
    _serial: int = 0
    # identity sequence: each instance takes CACHE values at a time (RAC NOORDER), node -> (next, end)
    _seq_next: int = 0
    _seq_cache: dict[int, tuple[int, int]] = field(default_factory=dict)

    def next_identity(self, col: SqlColumn, node: int) -> Decimal:
        """The next identity value for a row inserted on instance ``node``."""
        assert col.identity is not None
        _, start, step, cache = col.identity
        nxt, end = self._seq_cache.get(node, (0, 0))
        if nxt >= end:
            nxt = self._seq_next or 0
            end = nxt + max(cache, 1)
            self._seq_next = end
        self._seq_cache[node] = (nxt + 1, end)
        return Decimal(start + nxt * step)

    def column(self, name: str, line: int) -> SqlColumn:
        for c in self.columns:
            if c.name == name:
                return c
        raise SqlError(f"ORA-00904: {self.name} has no column {name}", RUNTIME, line)

    def key_of(self, row: dict[str, Any]) -> Any:
        """Primary key values, or a row serial for a table without one."""
        if self.primary_key:
            return tuple(cmp_key(row.get(k)) for k in self.primary_key)
        self._serial += 1
        return ("#", self._serial)

    def put(self, key: Any, row: dict[str, Any], *, replacing: Any = None, at: int | None = None) -> None:
        """Store ``row`` under ``key`` keeping the table's row order (a full scan's order): in
        place of the row keyed ``replacing`` (an update of the key), at position ``at`` (a
        deleted row restored by a rollback), else at the end (a new row)."""
        if replacing is not None and replacing != key:
            self.rows = {(key if k == replacing else k): (row if k == replacing else v) for k, v in self.rows.items()}
        elif at is not None and key not in self.rows and at < len(self.rows):
            items = list(self.rows.items())
            items.insert(at, (key, row))
            self.rows = dict(items)
        else:
            self.rows[key] = row

    def check_row(self, row: dict[str, Any], key: Any, lookup: Any, line: int) -> None:
        """ORA-00001 when ``row`` repeats another row's UNIQUE columns, ORA-02290 when a CHECK fails."""
        for cols in self.unique:
            values = [cmp_key(row.get(c)) for c in cols]
            if all(row.get(c) is None for c in cols):
                continue
            for k, other in self.rows.items():
                if k != key and [cmp_key(other.get(c)) for c in cols] == values:
                    raise SqlError(
                        f"ORA-00001: unique constraint violated: {self.name} ({', '.join(cols)})", RUNTIME, line
                    )
        for cond in self.checks:
            if evaluate(cond, lookup) is False:
                raise SqlError(f"ORA-02290: check constraint violated on {self.name}", RUNTIME, line)

    def spec(self) -> TableSpec:
        """The scenario table."""
        return TableSpec(
            owner=self.owner,
            name=self.name,
            columns=[ColumnSpec(c.name, c.type, c.nullable) for c in self.columns],
            primary_key=list(self.primary_key),
            supplemental=self.supplemental,
            obj=self.obj,
            data_obj=self.data_obj if self.data_obj != self.obj else 0,
            ts=self.ts,
            partitions=[
                {"name": p[0], "obj": o}
                for p, o in zip(self.partitions, self.partition_objs or [0] * len(self.partitions), strict=True)
            ],
        )

    def partition_of(self, row: dict[str, Any], line: int) -> str:
        """The partition Oracle puts ``row`` in (``TABLE:PARTITION`` of the event)."""
        if not self.partitions:
            return self.name
        value = row.get(self.partition_col)
        for name, bounds in self.partitions:
            if self.partition_kind == "RANGE":
                bound = bounds[0]
                if bound == "MAXVALUE" or (value is not None and compare("<", value, bound, line)):
                    return f"{self.name}:{name}"
            elif (
                "DEFAULT" in bounds
                or any(compare("=", value, b, line) for b in bounds)
                or (value is None and None in bounds)
            ):
                return f"{self.name}:{name}"
        raise SqlError(
            f"ORA-14400: no partition of {self.name} takes {self.partition_col} = {to_text(value)!r}", RUNTIME, line
        )


def cmp_key(v: Any) -> Any:
    """A comparable key of a column value for the uniqueness checks: numbers by value (Decimal and float alike), times by their key."""
    if isinstance(v, Decimal):
        return ("n", v.normalize())
    if isinstance(v, float):
        return ("n", Decimal(repr(v)).normalize())
    if isinstance(v, OraTime):
        return ("t", v.key())
    return (type(v).__name__, v)


# ---------------------------------------------------------------------------------------------
# values into columns


def coerce(col: SqlColumn, value: Any, line: int) -> Any:
    """A value stored into ``col``: converted, rounded to the column's scale, length-checked."""
    ct = col.ctype
    assert ct is not None
    if value is None or value == "" or value == b"":
        return None
    code = ct.type_code
    if isinstance(value, EmptyLob):
        if code not in (ev.TYPE_CLOB, ev.TYPE_BLOB):
            raise SqlError(
                f"ORA-00932: inconsistent datatypes: {col.name} {col.type} takes no {value.marker}", RUNTIME, line
            )
        return value
    if code == ev.TYPE_NUMBER:
        n = to_number(value.text(0) if isinstance(value, OraTime) else value, line)
        assert n is not None
        if ct.scale >= 0 and ct.scale != -127 and (ct.precision != -1 or ct.scale == 0):
            with localcontext() as ctx:
                ctx.prec = 80
                n = n.quantize(Decimal(1).scaleb(-ct.scale), rounding=ROUND_HALF_UP)
            if ct.precision > 0 and n != 0 and n.adjusted() + 1 > ct.precision - ct.scale:
                raise SqlError(f"ORA-01438: {to_text(n)} is larger than {col.name} {col.type} allows", RUNTIME, line)
        return n
    if code in (ev.TYPE_BINARY_FLOAT, ev.TYPE_BINARY_DOUBLE):
        f = value if isinstance(value, float) else float(to_number(value, line) or 0)
        return struct.unpack("<f", struct.pack("<f", f))[0] if code == ev.TYPE_BINARY_FLOAT else f
    if code in (ev.TYPE_VARCHAR2, ev.TYPE_CHAR, ev.TYPE_CLOB):
        text = to_text(value)
        if not text:
            return None
        if code != ev.TYPE_CLOB:
            if ct.charset_form == 2:  # bytes that are no character become U+FFFD in the national set
                text = _ESCAPED.sub("\ufffd", text)
                size = len(text.encode("utf-16-be"))
            else:  # the client's conversion: '?' for a character the database set does not have
                data = convert_text(text, DB_CHARSET.get())
                text, size = decode_text(data, DB_CHARSET.get()), len(data)
            if size > ct.length:
                raise SqlError(
                    f"ORA-12899: value too large for column {col.name} (actual: {size}, maximum: {ct.length})",
                    RUNTIME,
                    line,
                )
            if ct.char_length and len(text) < ct.char_length:
                text = text.ljust(ct.char_length)
        return text
    if code in (ev.TYPE_RAW, ev.TYPE_BLOB):
        raw = value if isinstance(value, bytes) else bytes.fromhex(to_text(value) or "")
        if code == ev.TYPE_RAW and len(raw) > ct.length:
            raise SqlError(
                f"ORA-12899: value too large for column {col.name} (actual: {len(raw)}, maximum: {ct.length})",
                RUNTIME,
                line,
            )
        return raw or None
    if code == ev.TYPE_BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return value.strip().upper() in ("TRUE", "T", "YES", "Y", "1", "ON")
        return to_number(value, line) != 0
    if code == ev.TYPE_DATE:
        t = _as_time(value, line)
        return OraTime(t.wall, 0, None, "DATE")
    if code in (ev.TYPE_TIMESTAMP, ev.TYPE_TIMESTAMP_TZ, ev.TYPE_TIMESTAMP_LTZ):
        t = _as_time(value, line)
        digits = max(ct.scale, 0)
        step = 10 ** (9 - digits)
        nanos = (t.nanos + step // 2) // step * step if digits < 9 else t.nanos  # Oracle rounds
        wall = t.wall
        if nanos >= 10**9:
            from datetime import timedelta

            wall, nanos = wall + timedelta(seconds=1), nanos - 10**9
        kind = "TIMESTAMP" if code == ev.TYPE_TIMESTAMP else "TIMESTAMP_TZ"
        tz = None if code == ev.TYPE_TIMESTAMP else (t.tz if t.tz is not None else 0)
        return OraTime(wall, nanos, tz, kind)
    if code in (ev.TYPE_INTERVAL_YM, ev.TYPE_INTERVAL_DS):
        if not isinstance(value, Interval):
            raise SqlError(f"{col.name}: an INTERVAL value is needed, got {to_text(value)!r}", RUNTIME, line)
        return value
    raise SqlError(f"{col.name}: values of type {col.type} are not supported", EXPRESSION, line)


def _as_time(value: Any, line: int) -> OraTime:
    if isinstance(value, OraTime):
        return value
    if isinstance(value, str):
        from replicator.redogen.sqlexpr import parse_datetime

        return parse_datetime(value, None, "TIMESTAMP", line)
    raise SqlError(f"cannot convert {to_text(value)!r} to a date", RUNTIME, line)


def scenario_value(col: SqlColumn, v: Any) -> Any:
    """A stored value in the form scenario files use (what :mod:`coltypes` encodes)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, Decimal):
        if v == v.to_integral_value() and abs(v) < 2**63:
            return int(v)
        return format(v, "f")
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bytes):
        return v.hex().upper()
    if isinstance(v, OraTime):
        return v.text(0 if v.kind == "DATE" else 9)
    if isinstance(v, Interval):
        return v.text()
    if isinstance(v, EmptyLob):
        return v.marker
    raise SqlError(f"{col.name}: cannot write {v!r}", EXPRESSION)


def logged_supplemental(t: SqlTable) -> str:
    """The supplemental logging the table's redo carries. The real Oracle 23ai redo of a table
    with BOOLEAN columns (reference ``boolean-type``) held no supplemental columns although its
    checkpoint lists the ALL COLUMNS group, and OLR's output follows the redo."""
    if any(c.ctype is not None and c.ctype.type_code == ev.TYPE_BOOLEAN for c in t.columns):
        return "none"
    return t.supplemental


def copy_table(t: SqlTable) -> SqlTable:
    """The table's definition without its rows (the scenario's initial tables)."""
    return SqlTable(
        t.owner,
        t.name,
        [SqlColumn(c.name, c.type, c.nullable, c.default, c.ctype, c.identity) for c in t.columns],
        list(t.primary_key),
        t.supplemental,
        t.obj,
        t.data_obj,
        t.ts,
        t.partition_kind,
        t.partition_col,
        list(t.partitions),
        list(t.partition_objs),
    )


def definition(t: SqlTable) -> dict[str, Any]:
    """A ``create_table`` event's definition of ``t``."""
    spec = t.spec()
    return {
        "owner": spec.owner,
        "name": spec.name,
        "primary-key": spec.primary_key,
        "supplemental": spec.supplemental,
        "columns": [f"{c.name} {c.type}{'' if c.nullable else ' NOT NULL'}" for c in spec.columns],
        "partitions": spec.partitions,
    }
