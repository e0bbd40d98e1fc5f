"""Row changes as typed Python values, for every format other than OpenLogReplicator's own.

A :class:`TableView` is built once per table: the visible columns (hidden, guard, nested and
unused ones only with their source flags, as in OLR JSON), their :class:`OracleType` and a
decoder that goes through :mod:`replicator.values`. :func:`row_values` then turns a
:class:`~replicator.events.RowChange` into :class:`RowValues`:

* INSERT and DELETE images are complete rows: a column the redo leaves out is a trailing
  NULL (Oracle does not store those), so it is filled in as None; a NULL LOB too (its
  locator is what the row stores, and a NULL has none).
* A LOB whose value this transaction's redo cannot give (pages not logged; an UPDATE that
  did not touch it) is *unavailable*: absent from the image, so a LOB column missing from an
  image is always unknown; formats with a placeholder write :func:`placeholder` for it
  (Debezium's ``__debezium_unavailable_value``).
* UPDATE: ``before`` holds what the redo has (changed and supplemental-logged columns);
  ``after`` is ``before`` overlaid with the new values, since a column the statement did not
  set keeps its old value. A column in neither image is unknown and stays absent.
* ``present`` is every column the redo holds; ``modified`` the columns an UPDATE sets to a
  different value (all present columns for INSERT).

Undecodable values become None (warning 60002 when `unknown` is 1, as in OLR JSON).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from replicator import log
from replicator.events import (
    OP_DELETE,
    OP_INSERT,
    TYPE_CLOB,
    TYPE_RAW,
    Column,
    RowChange,
    RowImage,
    Table,
)
from replicator.formats.base import FormatOptions, column_suppressed
from replicator.formats.temporal import DaySecond, Instant, YearMonth, ZonedInstant
from replicator.formats.typemap import NUMERIC_FAMILIES, TEXT_FAMILIES, OracleType, classify
from replicator.values.charset import column_charset_name, get_charset
from replicator.values.datetime import decode_timestamp, decode_timestamp_tz
from replicator.values.floats import decode_binary_double, decode_binary_float
from replicator.values.interval import interval_ds_renderer, interval_ym_renderer
from replicator.values.lob import unavailable
from replicator.values.number import decode_number
from replicator.values.raw import boolean_text
from replicator.values.rowid import urowid_text

Value = str | Decimal | float | bytes | bool | Instant | ZonedInstant | YearMonth | DaySecond | None
Decoder = Callable[[bytes], Value]
_YM_MONTHS = interval_ym_renderer(0)  # code 0: total months as bare digits
_DS_NANOS = interval_ds_renderer(0)  # code 0: total nanoseconds as bare digits


@dataclass(slots=True)
class ColumnView:
    """One visible column: table index, 1-based ordinal among visible columns, type, decoder."""

    index: int
    ordinal: int
    column: Column
    otype: OracleType
    key: bool
    decode: Decoder

    @property
    def name(self) -> str:
        """The column name."""
        return self.column.name


def _visible(column: Column, flags: int) -> bool:
    """OLR's visibility rule for hidden, guard, nested and unused columns."""
    return not column_suppressed(column, flags)


def _checked(decode: Callable[[bytes], Value], name: str, warn: bool) -> Decoder:
    """Wrap a decoder returning None for bad bytes: log 60002 (with `unknown` 1) and give None."""

    def run(data: bytes) -> Value:
        value = decode(data)
        if value is None and warn:
            log.warning(60002, f"unknown value (column: {name}): {len(data)} - {data.hex(' ')}")
        return value

    return run


def _text_decoder(column: Column, table: Table) -> Decoder:
    charset = get_charset(
        column_charset_name(
            column.charset_form, column.charset_id, column.type_code == TYPE_CLOB, table.charset, table.ncharset
        )
    )
    return lambda data: charset.to_utf8(data).decode("utf-8", "replace")


def _sized(size: int, decode: Callable[[bytes], float]) -> Callable[[bytes], Value]:
    return lambda data: decode(data) if len(data) == size else None


def _timestamp(offset: int) -> Callable[[bytes], Value]:
    def decode(data: bytes) -> Value:
        fields = decode_timestamp(data, offset)
        return Instant(*fields) if fields is not None else None

    return decode


def _timestamp_tz(data: bytes) -> Value:
    fields = decode_timestamp_tz(data)
    return ZonedInstant(*fields) if fields is not None else None


def _year_month(data: bytes) -> Value:
    text = _YM_MONTHS(data)
    return YearMonth(int(text)) if text is not None else None


def _day_second(data: bytes) -> Value:
    text = _DS_NANOS(data)
    return DaySecond(int(text)) if text is not None else None


def _boolean(data: bytes) -> Value:
    text = boolean_text(data)
    return text == "1" if text is not None else None


_FIXED: dict[str, Callable[[bytes], Value]] = {
    "binary_float": _sized(4, decode_binary_float),
    "binary_double": _sized(8, decode_binary_double),
    "timestamp_tz": _timestamp_tz,
    "interval_ym": _year_month,
    "interval_ds": _day_second,
    "urowid": urowid_text,
    "boolean": _boolean,
    "raw": bytes,
    "blob": bytes,
    "unsupported": bytes,
}


def decoder_for(otype: OracleType, column: Column, table: Table, options: FormatOptions) -> Decoder:
    """The decoder of one column's non-NULL bytes, with the format options bound."""
    family = otype.family
    if family in TEXT_FAMILIES:
        return _text_decoder(column, table)
    if family in NUMERIC_FAMILIES:
        decode: Callable[[bytes], Value] = decode_number
    elif family in ("date", "timestamp", "timestamp_ltz"):
        decode = _timestamp(options.db_timezone if family == "timestamp_ltz" else 0)
    else:
        decode = _FIXED[family]
    return _checked(decode, column.name, options.unknown == 1)


class TableView:
    """A table's visible columns, keys and decoders, as the non-OLR formats use them."""

    def __init__(self, table: Table, options: FormatOptions):
        self.table = table
        keys = set(table.key_columns) | {i for i, c in enumerate(table.columns) if c.key}
        self.columns: list[ColumnView] = []
        for index, column in enumerate(table.columns):
            otype = classify(column)
            if not _visible(column, options.flags):
                continue
            if otype.family == "unsupported" and options.unknown_type != 1:
                continue  # OLR leaves undecodable types out unless unknown-type is 1
            self.columns.append(
                ColumnView(
                    index,
                    len(self.columns) + 1,
                    column,
                    otype,
                    index in keys,
                    decoder_for(otype, column, table, options),
                )
            )
        self.by_index = {view.index: view for view in self.columns}
        self.keys = [view for view in self.columns if view.key]

    @property
    def owner(self) -> str:
        """The table owner (schema)."""
        return self.table.owner

    @property
    def name(self) -> str:
        """The table name."""
        return self.table.name


def raw_table(obj: int, labels: tuple[str, ...], owner: str = "", name: str = "") -> Table:
    """A stand-in table of RAW columns named ``labels`` (unknown objects, compressed rows)."""
    columns = [
        Column(
            name=label,
            type_code=TYPE_RAW,
            length=0,
            precision=-1,
            scale=-1,
            charset_form=0,
            charset_id=0,
            nullable=True,
            segcol=n + 1,
        )
        for n, label in enumerate(labels)
    ]
    return Table(obj=obj, data_obj=obj, owner=owner, name=name or f"OBJ_{obj}", columns=columns)


@dataclass(slots=True)
class RowValues:
    """A decoded row change (images keyed by table column index, see the module docstring)."""

    change: RowChange
    view: TableView
    before: dict[int, Value] | None
    after: dict[int, Value] | None
    present: frozenset[int]
    modified: frozenset[int]

    @property
    def op(self) -> str:
        """``c``, ``u`` or ``d``."""
        return self.change.op

    @property
    def current(self) -> dict[int, Value]:
        """The row as it stands after the change (the deleted row for DELETE)."""
        image = self.after if self.after is not None else self.before
        return image or {}


def _decode(view: TableView, image: RowImage, complete: bool) -> dict[int, Value]:
    out: dict[int, Value] = {}
    for column in view.columns:
        if column.index in image:
            data = image[column.index]
            if unavailable(data):
                continue  # a LOB whose data is not in this transaction's redo: unknown, left out
            out[column.index] = column.decode(data) if data else None
        elif complete:
            out[column.index] = None  # a trailing NULL the row piece does not store
    return out


def row_values(change: RowChange, view: TableView) -> RowValues:
    """Decode ``change`` with ``view`` (images as described in the module docstring)."""
    if change.compressed is not None:
        image: RowImage = {0: change.compressed}
        single = _decode(view, image, False)
        before, after = (single, None) if change.op == OP_DELETE else (None, single)
        return RowValues(change, view, before, after, frozenset(single), frozenset(single))
    if change.op == OP_INSERT:
        after = _decode(view, change.after or {}, True)
        return RowValues(change, view, None, after, frozenset(after), frozenset(after))
    if change.op == OP_DELETE:
        before = _decode(view, change.before or {}, True)
        return RowValues(change, view, before, None, frozenset(before), frozenset())
    raw_before, raw_after = change.before or {}, change.after or {}
    before = _decode(view, raw_before, False)
    new = _decode(view, raw_after, False)
    modified = frozenset(i for i in new if i not in raw_before or (raw_before[i] or b"") != (raw_after[i] or b""))
    return RowValues(change, view, before, {**before, **new}, frozenset(before) | frozenset(new), modified)


# Debezium's `unavailable.value.placeholder` default: the value of a LOB that is not known.
UNAVAILABLE_PLACEHOLDER = "__debezium_unavailable_value"


def placeholder(column: ColumnView) -> str | bytes:
    """The placeholder as a value of ``column``'s type: text for CLOB/NCLOB, its UTF-8 bytes for BLOB."""
    return UNAVAILABLE_PLACEHOLDER.encode() if column.otype.family == "blob" else UNAVAILABLE_PLACEHOLDER
