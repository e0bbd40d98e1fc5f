"""Column values as JSON for the text-protocol formats (OMS family, Canal, SharePlex, Qlik).

OMS documents one "text protocol" mapping for Oracle sources (Long, BigDecimal, Double,
String, Bytes, DateTime) that its Default, DataWorks, SharePlex and DefaultExtendColumnType
serializations share; Canal and Qlik use the same texts with other choices for quoting:

* numbers: exact plain decimal text (no exponent) as a JSON number; Canal quotes every value,
  Qlik quotes NUMERIC (non-integer NUMBER) as its JSON output does;
* BINARY_FLOAT/DOUBLE: the shortest text that reads back as the same value (float32 for
  BINARY_FLOAT); infinities and NaN, which JSON lacks, as the strings ``Infinity``,
  ``-Infinity`` and ``NaN``;
* binary: base64; character data and UROWID: strings;
* DATE/TIMESTAMP: ``YYYY-MM-DD HH:MM:SS[.fffffffff]`` with trailing fraction zeros trimmed;
  WITH TIME ZONE: the wall clock in the value's zone plus the zone (``+08:00`` or the
  region); WITH LOCAL TIME ZONE: UTC plus ``UTC``;
* intervals: Oracle interval literals (``INTERVAL '1-2' YEAR TO MONTH``);
* BOOLEAN: 1/0 (OMS's Long rule); Qlik uses true/false and Canal "1"/"0".
"""

from __future__ import annotations

import base64
import math
from decimal import Decimal
from typing import Final

import orjson

from replicator.errors import InternalError
from replicator.formats.rowvalues import ColumnView, TableView, Value
from replicator.formats.temporal import (
    DaySecond,
    Instant,
    YearMonth,
    ZonedInstant,
    calendar_text,
    interval_literal,
)
from replicator.formats.typemap import INTEGER_FAMILIES

_NON_FINITE: Final = {math.inf: "Infinity", -math.inf: "-Infinity"}


def decimal_text(value: Decimal) -> str:
    """Plain decimal text, never an exponent (``str(Decimal)`` would print ``1E-7``)."""
    return format(value, "f")


def float_text(value: float, single: bool) -> str | None:
    """Shortest round-trip text of a float (float32 for BINARY_FLOAT); None if not finite."""
    if not math.isfinite(value):
        return None
    if not single:
        return repr(value)
    import numpy as np  # only for BINARY_FLOAT text (numpy's shortest float32 repr)

    return str(np.float32(value))


def non_finite_text(value: float) -> str:
    """JSON string for an infinity or NaN."""
    return _NON_FINITE.get(value, "NaN")


def datetime_text(value: Instant | ZonedInstant, family: str) -> str:
    """The OMS DateTime text of a DATE/TIMESTAMP family value (see the module docstring)."""
    if isinstance(value, ZonedInstant):
        return f"{calendar_text(value.local())} {value.zone}"
    text = calendar_text(value)
    return text + " UTC" if family == "timestamp_ltz" else text


class TextValues:
    """Turns decoded values into JSON values (``orjson.Fragment`` for exact numbers)."""

    def __init__(
        self, *, quote_all: bool = False, quote_decimals: bool = False, booleans: str = "int", binary: str = "base64"
    ):
        self.quote_all = quote_all
        self.quote_decimals = quote_decimals
        self.booleans = booleans  # "int", "bool" or "str"
        self.binary = binary  # "base64" or "hex"

    def render(self, column: ColumnView, value: Value) -> object:
        """The JSON value of one column value (None stays null)."""
        if value is None or isinstance(value, str):
            return value
        family = column.otype.family
        if isinstance(value, bool):
            if self.booleans == "bool":
                return value
            return ("1" if value else "0") if self.booleans == "str" or self.quote_all else int(value)
        if isinstance(value, Decimal):
            text = decimal_text(value)
            quoted = self.quote_all or (self.quote_decimals and family not in INTEGER_FAMILIES)
            return text if quoted else orjson.Fragment(text.encode("ascii"))
        if isinstance(value, float):
            number = float_text(value, family == "binary_float")
            if number is None:
                return non_finite_text(value)
            return number if self.quote_all else orjson.Fragment(number.encode("ascii"))
        if isinstance(value, bytes):
            return value.hex() if self.binary == "hex" else base64.b64encode(value).decode("ascii")
        if isinstance(value, (Instant, ZonedInstant)):
            return datetime_text(value, family)
        if isinstance(value, (YearMonth, DaySecond)):
            return interval_literal(value)
        raise InternalError(f"no text rendering for {type(value).__name__}", 50000)

    def row(
        self, view: TableView, image: dict[int, Value], only: frozenset[int] | set[int] | None = None
    ) -> dict[str, object]:
        """``{name: value}`` of the image's columns in column order (``only``: a subset)."""
        return {
            column.name: self.render(column, image[column.index])
            for column in view.columns
            if column.index in image and (only is None or column.index in only)
        }
