"""Column values of the protobuf format: raw Oracle bytes -> the ``Value.datum`` oneof.

Decoding reuses :mod:`replicator.values` (the JSON format's decoders), so both formats carry
the same value. Which field a column type uses (one per column, chosen at plan time):

* VARCHAR2, CHAR, CLOB -> ``value_string`` (UTF-8); with `char` 1 (no mapping) the raw
  bytes in ``value_string`` as OpenLogReplicator, or in ``value_bytes`` when they are not
  UTF-8 (a protobuf string must be: a deliberate difference, docs/formats.md); with `char`
  2/3 the hex text, as JSON prints it.
* NUMBER -> exactly as OpenLogReplicator (BuilderProtobuf::columnNumber), from the declared
  precision and scale as the dictionary holds them (-1 when not declared): ``value_int``
  (strtol of the text: the integer part, saturated to 64 bits) for scale 0 and precision
  <= 17, else ``value_float`` (float32, correctly rounded as strtof) for precision <= 6 and
  scale < 38, else ``value_double`` for precision <= 15 and scale <= 307, else the decimal
  text in ``value_string``. An unconstrained NUMBER (-1, -1) is therefore a float32, as
  with OpenLogReplicator (only 24 bits of mantissa: use JSON for exact values).
* BINARY_FLOAT / BINARY_DOUBLE -> ``value_double`` (the exact IEEE value).
* RAW, BLOB, JSON (flag 0x20000), schemaless and raw-hex (flag 0x8000) columns ->
  ``value_bytes``; OpenLogReplicator leaves these empty (a deliberate difference: the bytes
  have one natural encoding, docs/formats.md).
* DATE, TIMESTAMP, WITH TIME ZONE, WITH LOCAL TIME ZONE -> the name alone, no datum, as
  OpenLogReplicator (its encoding of these is not implemented; inventing one here would
  break the day it is).
* BOOLEAN -> ``1``/``0`` through the NUMBER rule with the column's precision and scale, as
  OpenLogReplicator does.
* INTERVAL, UROWID -> the JSON rendering under the same options, as OpenLogReplicator: a
  bare integer as ``value_int``, any other text as ``value_string``.
* A value that cannot be decoded -> ``value_string`` ``"?"``, as JSON prints it.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
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
    TYPE_JSON,
    TYPE_NUMBER,
    TYPE_RAW,
    TYPE_TIMESTAMP,
    TYPE_TIMESTAMP_LTZ,
    TYPE_TIMESTAMP_TZ,
    TYPE_UROWID,
    TYPE_VARCHAR2,
    Column,
    Table,
)
from replicator.formats.base import FormatOptions
from replicator.proto import olr_pb2 as pb
from replicator.values.charset import CharsetError, column_charset_name, get_charset
from replicator.values.floats import decode_binary_double, decode_binary_float
from replicator.values.interval import interval_ds_renderer, interval_ym_renderer
from replicator.values.number import number_text
from replicator.values.rowid import urowid_text

Setter = Callable[[pb.Value, bytes], None]
_FLAG_JSON_HEX: Final = 0x20000
_INTEGER = re.compile(r"-?\d+")
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _unknown(value: pb.Value, data: bytes) -> None:
    value.value_string = "?"


def set_bytes(value: pb.Value, data: bytes) -> None:
    """``value_bytes`` with the raw bytes."""
    value.value_bytes = data


def set_raw_string(value: pb.Value, data: bytes) -> None:
    """`char` 1: the unconverted bytes in ``value_string`` (OpenLogReplicator's field), or in
    ``value_bytes`` when they are not UTF-8: OpenLogReplicator writes them into the string all
    the same, a message that protobuf parsers refuse ("invalid UTF-8")."""
    try:
        value.value_string = data.decode("utf-8")
    except UnicodeDecodeError:
        value.value_bytes = data


def set_literal(value: pb.Value, literal: str) -> None:
    """A JSON literal from a :mod:`replicator.values` renderer: integer or (unquoted) text."""
    if literal[:1] == '"':
        value.value_string = literal[1:-1]
    elif _INTEGER.fullmatch(literal) and _INT64[0] <= int(literal) <= _INT64[1]:
        value.value_int = int(literal)
    else:
        value.value_string = literal


def _from_text(decode: Callable[[bytes], str | None]) -> Setter:
    def setter(value: pb.Value, data: bytes) -> None:
        literal = decode(data)
        if literal is None:
            _unknown(value, data)
        else:
            set_literal(value, literal)

    return setter


_LEADING_INTEGER = re.compile(r"\s*([+-]?\d*)")
_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")


def strtol(text: str) -> int:
    """C ``strtol(text, …, 10)``: the leading integer, 0 if none, saturated to int64."""
    digits = _LEADING_INTEGER.match(text).group(1)  # type: ignore[union-attr]
    number = int(digits) if digits.lstrip("+-") else 0
    return min(max(number, _INT64[0]), _INT64[1])


def strtof(text: str) -> float:
    """C ``strtof``: the float32 nearest the decimal ``text`` (ties to even), as a Python float.

    Rounding through a double first can differ in the last bit, so the two float32
    neighbours of the double are compared with the exact decimal value.
    """
    exact = Fraction(Decimal(text))
    try:
        first = _F32.unpack(_F32.pack(float(exact)))[0]
    except OverflowError:
        return math.copysign(math.inf, exact)
    if math.isinf(first):
        return first
    bits = _U32.unpack(_F32.pack(first))[0]
    best = first
    for neighbour_bits in (bits - 1, bits + 1):
        if not 0 <= neighbour_bits < 1 << 32:
            continue
        neighbour = _F32.unpack(_U32.pack(neighbour_bits))[0]
        if math.isinf(neighbour) or math.isnan(neighbour) or ((neighbour < 0) != (first < 0) and first != 0):
            continue
        gap, best_gap = abs(Fraction(neighbour) - exact), abs(Fraction(best) - exact)
        if gap < best_gap or (gap == best_gap and not neighbour_bits & 1):
            best = neighbour
    return best


def number_setter(precision: int, scale: int) -> Setter:
    """NUMBER typed by the column's precision and scale, OLR's rule (see the module docstring)."""
    if scale == 0 and precision <= 17:
        field = "value_int"
    elif precision <= 6 and scale < 38:
        field = "value_float"
    elif precision <= 15 and scale <= 307:
        field = "value_double"
    else:
        field = "value_string"

    def setter(value: pb.Value, data: bytes) -> None:
        text = number_text(data)
        if text is None:
            _unknown(value, data)
        elif field == "value_int":
            value.value_int = strtol(text)
        elif field == "value_float":
            value.value_float = strtof(text)
        elif field == "value_double":
            value.value_double = float(text)
        else:
            value.value_string = text

    return setter


def _name_only(value: pb.Value, data: bytes) -> None:
    """OLR's DATE/TIMESTAMP encoding: the column name and no datum."""


def _boolean(precision: int, scale: int) -> Setter:
    numeric = number_setter(precision, scale)

    def setter(value: pb.Value, data: bytes) -> None:
        if len(data) == 1 and data[0] <= 1:
            numeric(value, b"\xc1\x02" if data[0] else b"\x80")  # NUMBER 1 / 0
        else:
            _unknown(value, data)

    return setter


def _string(column: Column, table: Table, options: FormatOptions, is_clob: bool) -> Setter:
    as_hex = bool(options.char & 2) and not table.system
    if options.char & 1:
        if as_hex:
            return lambda value, data: setattr(value, "value_string", data.hex())
        return set_raw_string
    try:
        name = column_charset_name(column.charset_form, column.charset_id, is_clob, table.charset, table.ncharset)
        to_utf8 = get_charset(name).to_utf8
    except CharsetError as error:
        failure = error

        def missing(value: pb.Value, data: bytes) -> None:
            raise failure

        return missing
    if as_hex:
        return lambda value, data: setattr(value, "value_string", to_utf8(data).hex())
    return lambda value, data: setattr(value, "value_string", to_utf8(data).decode("utf-8", "replace"))


def _quoted_urowid(data: bytes) -> str | None:
    text = urowid_text(data)
    return None if text is None else f'"{text}"'


def _ieee(size: int, decode: Callable[[bytes], float]) -> Setter:
    def setter(value: pb.Value, data: bytes) -> None:
        if len(data) == size:
            value.value_double = decode(data)
        else:
            _unknown(value, data)

    return setter


def value_setter(column: Column, type_code: int, table: Table, options: FormatOptions) -> Setter:
    """The setter for a non-null value of ``column`` (``type_code`` after the LOB mapping).

    Only called for columns the JSON format prints, so unsupported types never get here
    unless `unknown-type` is 1 (then they print ``"?"``).
    """
    if type_code in (TYPE_VARCHAR2, TYPE_CHAR, TYPE_CLOB):
        return _string(column, table, options, type_code == TYPE_CLOB)
    if type_code == TYPE_NUMBER:
        return number_setter(column.precision, column.scale)
    if type_code in (TYPE_RAW, TYPE_BLOB):
        return set_bytes
    if type_code == TYPE_JSON:
        return set_bytes if options.flags & _FLAG_JSON_HEX else _unknown
    if type_code in (TYPE_DATE, TYPE_TIMESTAMP, TYPE_TIMESTAMP_LTZ, TYPE_TIMESTAMP_TZ):
        return _name_only
    if type_code == TYPE_BINARY_FLOAT:
        return _ieee(4, decode_binary_float)
    if type_code == TYPE_BINARY_DOUBLE:
        return _ieee(8, decode_binary_double)
    if type_code == TYPE_INTERVAL_YM:
        return _from_text(interval_ym_renderer(options.interval_ytm))
    if type_code == TYPE_INTERVAL_DS:
        return _from_text(interval_ds_renderer(options.interval_dts))
    if type_code == TYPE_BOOLEAN:
        return _boolean(column.precision, column.scale)
    if type_code == TYPE_UROWID:
        return _from_text(_quoted_urowid)
    return _unknown


# Schema column types: SYS.COL$.TYPE# -> ColumnType, and whether `length` is filled.
COLUMN_TYPES: Final[dict[int, tuple[pb.ColumnType, bool]]] = {
    TYPE_VARCHAR2: (pb.VARCHAR2, True),
    TYPE_NUMBER: (pb.NUMBER, False),
    8: (pb.LONG, False),
    TYPE_DATE: (pb.DATE, False),
    TYPE_RAW: (pb.RAW, True),
    24: (pb.LONG_RAW, False),
    TYPE_CHAR: (pb.CHAR, True),
    TYPE_BINARY_FLOAT: (pb.BINARY_FLOAT, False),
    TYPE_BINARY_DOUBLE: (pb.BINARY_DOUBLE, False),
    TYPE_CLOB: (pb.CLOB, False),
    TYPE_BLOB: (pb.BLOB, False),
    TYPE_TIMESTAMP: (pb.TIMESTAMP, True),
    TYPE_TIMESTAMP_TZ: (pb.TIMESTAMP_WITH_TZ, True),
    TYPE_INTERVAL_YM: (pb.INTERVAL_YEAR_TO_MONTH, True),
    TYPE_INTERVAL_DS: (pb.INTERVAL_DAY_TO_SECOND, True),
    TYPE_UROWID: (pb.UROWID, True),
    TYPE_TIMESTAMP_LTZ: (pb.TIMESTAMP_WITH_LOCAL_TZ, True),
}
