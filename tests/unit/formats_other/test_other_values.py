"""Type vocabularies, time and interval renderings, and value texts of the non-OLR formats."""

from __future__ import annotations

import math
from decimal import Decimal

import orjson
import pytest

from replicator.events import (
    COL_PROPERTY_STORED_AS_LOB,
    TYPE_CLOB,
    TYPE_LONG,
    TYPE_NUMBER,
    TYPE_TIMESTAMP,
    TYPE_VARCHAR2,
    Column,
)
from replicator.formats.avro_schema import avro_name, column_type
from replicator.formats.debezium_schema import render as debezium_render
from replicator.formats.rowvalues import ColumnView
from replicator.formats.temporal import (
    DaySecond,
    Instant,
    YearMonth,
    ZonedInstant,
    calendar_fields,
    calendar_text,
    interval_literal,
    iso_duration,
    zoned_iso,
)
from replicator.formats.textvalues import TextValues, decimal_text
from replicator.formats.typemap import (
    CANAL_TYPES,
    OMS_TYPES,
    QLIK_TYPES,
    classify,
    ddl_kind,
    debezium_type,
)
from replicator.values.datetime import TimestampRangeError


def _column(code: int, precision: int = -1, scale: int = -1, form: int = 1, prop: int = 0) -> Column:
    return Column(
        name="X",
        type_code=code,
        length=10,
        precision=precision,
        scale=scale,
        charset_form=form,
        charset_id=873,
        nullable=True,
        segcol=1,
        property=prop,
    )


@pytest.mark.parametrize(
    "precision,scale,family",
    [
        (2, 0, "int8"),
        (4, 0, "int16"),
        (9, 0, "int32"),
        (18, 0, "int64"),
        (19, 0, "decimal"),
        (10, 2, "decimal"),
        (5, -2, "decimal"),
        (-1, -1, "number"),
        (-1, 0, "decimal"),
        (126, -127, "float"),
    ],
)
def test_number_families(precision: int, scale: int, family: str) -> None:
    assert classify(_column(TYPE_NUMBER, precision, scale)).family == family


def test_character_lob_and_unsupported_families() -> None:
    assert classify(_column(TYPE_VARCHAR2, form=2)).family == "nvarchar"
    assert classify(_column(TYPE_VARCHAR2, prop=COL_PROPERTY_STORED_AS_LOB)).family == "clob"
    assert classify(_column(TYPE_CLOB, form=2)).lob
    assert classify(_column(TYPE_LONG)).family == "unsupported"
    assert classify(_column(TYPE_TIMESTAMP, scale=9)).precision == 9
    assert classify(_column(TYPE_TIMESTAMP)).precision == 6


def test_every_family_has_a_name_in_every_vocabulary() -> None:
    families = set(CANAL_TYPES)
    assert families == set(OMS_TYPES) == set(QLIK_TYPES)
    for family in families:
        otype = classify(_column(TYPE_NUMBER, 5, 0))
        object.__setattr__(otype, "family", family)
        assert debezium_type(otype)[0] and column_type(otype)


@pytest.mark.parametrize(
    "sql,canal,oms",
    [
        ("create table t (a number)", "CREATE", "CREATE_TABLE"),
        ("  CREATE GLOBAL TEMPORARY TABLE t (a int)", "CREATE", "CREATE_TABLE"),
        ("create unique index i on t(a)", "CINDEX", "CREATE_INDEX"),
        ("ALTER TABLE t ADD (b NUMBER)", "ALTER", "ALTER_TABLE"),
        ("ALTER TABLE t RENAME TO u", "RENAME", "RENAME_TABLE"),
        ("drop table t purge", "ERASE", "DROP_TABLE"),
        ("DROP INDEX i", "DINDEX", "DROP_INDEX"),
        ("truncate table t", "TRUNCATE", "TRUNCATE_TABLE"),
        ("grant select on t to u", "QUERY", "OTHER"),
    ],
)
def test_ddl_kinds(sql: str, canal: str, oms: str) -> None:
    assert (ddl_kind(sql).canal, ddl_kind(sql).oms) == (canal, oms)


def test_zone_offsets_follow_the_region_and_dst() -> None:
    summer = ZonedInstant(1717236000, 0, "Europe/Warsaw")  # 2024-06-01T10:00Z
    winter = ZonedInstant(1705318200, 0, "Europe/Warsaw")  # 2024-01-15T11:30Z
    assert (summer.offset(), winter.offset()) == (7200, 3600)
    assert zoned_iso(summer) == "2024-06-01T12:00:00+02:00"
    assert zoned_iso(ZonedInstant(0, 5, "-03:30")) == "1969-12-31T20:30:00.000000005-03:30"
    assert ZonedInstant(0, 0, "TZ?").offset() == 0
    assert zoned_iso(Instant(0, 250_000_000)) == "1970-01-01T00:00:00.25Z"


def test_calendar_texts_and_limits() -> None:
    assert calendar_text(Instant(0, 120_000_000)) == "1970-01-01 00:00:00.12"
    assert calendar_text(Instant(0, 123_456_789), True, 6) == "1970-01-01T00:00:00.123456"
    assert calendar_fields(Instant(-62198755200, 0))[0] < 0  # a BC year
    with pytest.raises(TimestampRangeError):
        calendar_text(Instant(253402300800, 0))
    assert Instant(-1, 999_999_999).units("ms") == -1  # floor: still within the second before 0


def test_interval_renderings() -> None:
    assert interval_literal(YearMonth(-14)) == "INTERVAL '-1-2' YEAR TO MONTH"
    assert interval_literal(DaySecond(-(86400 + 1) * 10**9 - 5)) == "INTERVAL '-1 00:00:01.000000005' DAY TO SECOND"
    assert iso_duration(YearMonth(-14)) == "P-1Y-2M0DT0H0M0S"
    assert iso_duration(YearMonth(3)) == "P0Y3M0DT0H0M0S"
    assert iso_duration(DaySecond(-500_000_000)) == "P0Y0M0DT0H0M-0.5S"
    assert iso_duration(DaySecond((3 * 86400 + 4 * 3600 + 5 * 60 + 6) * 10**9 + 7 * 10**8)) == "P0Y0M3DT4H5M6.7S"


def _view(code: int, precision: int = -1, scale: int = -1) -> ColumnView:
    column = _column(code, precision, scale)
    return ColumnView(0, 1, column, classify(column), False, lambda data: None)


def test_text_values() -> None:
    plain, canal = TextValues(), TextValues(quote_all=True, booleans="str")
    qlik = TextValues(quote_decimals=True, booleans="bool")
    number = _view(TYPE_NUMBER, 10, 2)
    assert decimal_text(Decimal("1E-7")) == "0.0000001"
    assert orjson.dumps(plain.render(number, Decimal("1E-7"))) == b"0.0000001"  # an exact JSON number
    assert canal.render(number, Decimal("12.50")) == "12.50"
    assert qlik.render(number, Decimal("1.5")) == "1.5"
    assert orjson.dumps(qlik.render(_view(TYPE_NUMBER, 5, 0), Decimal(7))) == b"7"
    for value, text in ((math.inf, "Infinity"), (-math.inf, "-Infinity"), (math.nan, "NaN")):
        assert plain.render(number, value) == text
    assert (plain.render(number, True), canal.render(number, True), qlik.render(number, False)) == (1, "1", False)
    assert plain.render(number, b"\x00\xff") == "AP8=" and TextValues(binary="hex").render(number, b"\x01") == "01"


def test_debezium_values() -> None:
    ts = _view(TYPE_TIMESTAMP, scale=9)
    assert debezium_render(ts, Instant(1, 123_456_789)) == 1_123_456_789
    assert debezium_render(_view(TYPE_TIMESTAMP, scale=3), Instant(1, 123_456_789)) == 1123
    assert debezium_render(_view(TYPE_NUMBER, 12, 0), Decimal(12)) == 12
    assert debezium_render(_view(TYPE_NUMBER, 30, 0), Decimal(12)) == "12"
    assert debezium_render(_view(TYPE_NUMBER), b"\x0a") == "Cg=="  # bytes mode: JsonConverter's base64


def test_avro_names() -> None:
    assert avro_name("A$B#") == "A_B_" and avro_name("1X") == "_1X" and avro_name("") == "_"
