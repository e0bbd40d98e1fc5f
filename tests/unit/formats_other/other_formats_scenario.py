"""The scenario every non-OLR format is tested with: tables, transactions and a checkpoint.

* ``ALL_TYPES``: one column of every type OpenLogReplicator decodes (plus a LONG, which the
  formats leave out), with a primary key ``ID``;
* ``NO_PK``: a table without a primary key.

Transactions: a multi-row insert (a full row, a row of NULLs, a keyless row), an UPDATE with
full supplemental logging, an UPDATE with minimal logging (columns missing from the redo),
two DELETEs, a DDL statement; then a checkpoint (a heartbeat where the format has one).
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from replicator.events import (
    OP_DELETE,
    OP_INSERT,
    OP_UPDATE,
    TYPE_BINARY_DOUBLE,
    TYPE_BINARY_FLOAT,
    TYPE_BLOB,
    TYPE_BOOLEAN,
    TYPE_CHAR,
    TYPE_CLOB,
    TYPE_DATE,
    TYPE_INTERVAL_DS,
    TYPE_INTERVAL_YM,
    TYPE_LONG,
    TYPE_NUMBER,
    TYPE_RAW,
    TYPE_TIMESTAMP,
    TYPE_TIMESTAMP_LTZ,
    TYPE_TIMESTAMP_TZ,
    TYPE_UROWID,
    TYPE_VARCHAR2,
    Checkpoint,
    Column,
    DdlChange,
    RowChange,
    Table,
    Transaction,
)
from replicator.flags import FLAG_DDL
from replicator.formats.base import FormatOptions
from replicator.values.datetime import encode_timestamp, encode_timestamp_tz
from replicator.values.floats import encode_binary_double, encode_binary_float
from replicator.values.interval import encode_interval_ds, encode_interval_ym
from replicator.values.number import encode_number

SHARED = Path(__file__).resolve().parents[3].parent / "shared"  # ../shared beside the repository
SEEDS = SHARED / "seeds"
CLOCK = 1772847900.123  # the fixed processing time of every test message
OPTIONS = dict(flags=FLAG_DDL, database="TEST", con_name="FREEPDB1", db_timezone=3600)


def options(name: str, **extra: object) -> FormatOptions:
    """Format options of the scenario (DDL on, source TEST in container FREEPDB1, DBTZ +01:00)."""
    return FormatOptions(type=name, **{**OPTIONS, **extra})  # type: ignore[arg-type]


def _col(
    name: str,
    code: int,
    length: int = 22,
    precision: int = -1,
    scale: int = -1,
    form: int = 0,
    key: bool = False,
    nullable: bool = True,
) -> Column:
    if code in (TYPE_VARCHAR2, TYPE_CHAR, TYPE_CLOB) and form == 0:
        form = 1
    return Column(
        name=name,
        type_code=code,
        length=length,
        precision=precision,
        scale=scale,
        charset_form=form,
        charset_id={1: 873, 2: 2000}.get(form, 0),
        nullable=nullable,
        segcol=0,
        key=key,
    )


def _table(name: str, obj: int, columns: list[Column]) -> Table:
    for n, column in enumerate(columns):
        column.segcol = n + 1
    keys = tuple(n for n, c in enumerate(columns) if c.key)
    return Table(obj=obj, data_obj=obj, owner="OLR_TEST", name=name, columns=columns, key_columns=keys)


ALL_TYPES = _table(
    "ALL_TYPES",
    74001,
    [
        _col("ID", TYPE_NUMBER, precision=10, scale=0, key=True, nullable=False),
        _col("N_SMALL", TYPE_NUMBER, precision=2, scale=0),
        _col("N_INT", TYPE_NUMBER, precision=9, scale=0),
        _col("N_DEC", TYPE_NUMBER, precision=12, scale=3),
        _col("N_ANY", TYPE_NUMBER),
        _col("N_FLOAT", TYPE_NUMBER, precision=126, scale=-127),
        _col("BF", TYPE_BINARY_FLOAT, 4),
        _col("BD", TYPE_BINARY_DOUBLE, 8),
        _col("C", TYPE_CHAR, 5),
        _col("VC", TYPE_VARCHAR2, 30),
        _col("NC", TYPE_CHAR, 8, form=2),
        _col("NVC", TYPE_VARCHAR2, 40, form=2),
        _col("CL", TYPE_CLOB, 4000),
        _col("NCL", TYPE_CLOB, 4000, form=2),
        _col("R", TYPE_RAW, 16),
        _col("BL", TYPE_BLOB, 4000),
        _col("D", TYPE_DATE, 7),
        _col("TS", TYPE_TIMESTAMP, 11, scale=6),
        _col("TS9", TYPE_TIMESTAMP, 11, scale=9),
        _col("TSTZ", TYPE_TIMESTAMP_TZ, 13, scale=6),
        _col("TSTZ_R", TYPE_TIMESTAMP_TZ, 13, scale=6),
        _col("TSLTZ", TYPE_TIMESTAMP_LTZ, 11, scale=6),
        _col("IYM", TYPE_INTERVAL_YM, 5, precision=2),
        _col("IDS", TYPE_INTERVAL_DS, 11, precision=2, scale=6),
        _col("UR", TYPE_UROWID, 4000),
        _col("B", TYPE_BOOLEAN, 1),
        _col("LNG", TYPE_LONG, 0),
    ],
)
NO_PK = _table(
    "NO_PK",
    74002,
    [_col("NAME", TYPE_VARCHAR2, 20), _col("QTY", TYPE_NUMBER, precision=5, scale=0), _col("NOTE", TYPE_VARCHAR2, 50)],
)
# NO_PK after the scenario's DDL (ALTER TABLE NO_PK ADD (EXTRA NUMBER)).
NO_PK_V2 = _table(
    "NO_PK",
    74002,
    [
        _col("NAME", TYPE_VARCHAR2, 20),
        _col("QTY", TYPE_NUMBER, precision=5, scale=0),
        _col("NOTE", TYPE_VARCHAR2, 50),
        _col("EXTRA", TYPE_NUMBER),
    ],
)


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-be")


FULL_ROW: dict[str, bytes | None] = {
    "ID": encode_number(1),
    "N_SMALL": encode_number(-7),
    "N_INT": encode_number(123456789),
    "N_DEC": encode_number(Decimal("-1234.5")),
    "N_ANY": encode_number(Decimal("0.000000123")),
    "N_FLOAT": encode_number(Decimal("3.14159265358979")),
    "BF": encode_binary_float(1.1),
    "BD": encode_binary_double(-2.5e-300),
    "C": b"ab   ",
    "VC": 'zażółć "q" /'.encode(),
    "NC": _utf16("ñç  "),
    "NVC": _utf16("日本語"),
    "CL": _utf16("clob text"),
    "NCL": _utf16("nclob ∑"),
    "R": bytes.fromhex("00ff10"),
    "BL": bytes.fromhex("deadbeef"),
    "D": encode_timestamp(2024, 2, 29, 13, 14, 15),
    "TS": encode_timestamp(1999, 12, 31, 23, 59, 59, 123456000),
    "TS9": encode_timestamp(2001, 1, 2, 3, 4, 5, 123456789),
    "TSTZ": encode_timestamp_tz(2024, 6, 1, 10, 0, 0, 500000000, "+02:00"),
    "TSTZ_R": encode_timestamp_tz(2024, 1, 15, 11, 30, 0, 0, "Europe/Warsaw"),
    "TSLTZ": encode_timestamp(2024, 6, 1, 12, 0, 0, 250000000),
    "IYM": encode_interval_ym(-1, -2),
    "IDS": encode_interval_ds(3, 4, 5, 6, 700000000),
    "UR": bytes.fromhex("01")
    + (74001).to_bytes(4, "big")
    + (3).to_bytes(2, "big")
    + (7).to_bytes(2, "big")
    + (363).to_bytes(4, "big"),
    "B": b"\x01",
    "LNG": b"long text",
}


def _image(table: Table, values: dict[str, bytes | None]) -> dict[int, bytes | None]:
    index = {c.name: n for n, c in enumerate(table.columns)}
    return {index[name]: value for name, value in values.items()}


def _row(op: str, table: Table, before: dict | None, after: dict | None, scn: int, slot: int) -> RowChange:
    return RowChange(
        op=op,
        obj=table.obj,
        data_obj=table.obj,
        table=table,
        before=_image(table, before) if before is not None else None,
        after=_image(table, after) if after is not None else None,
        scn=scn,
        time=1772847880 + scn % 100,
        bdba=(7 << 22) | 363,
        slot=slot,
    )


def _txn(xid: tuple[int, int, int], scn: int, changes: list, commit_scn: int) -> Transaction:
    usn, slot, sqn = xid
    return Transaction(
        xid=(usn << 48) | (slot << 32) | sqn,
        begin_scn=scn,
        begin_time=1772847880,
        commit_scn=commit_scn,
        commit_time=1772847890,
        changes=changes,
        attributes={"login username": "OLR_TEST"},
        con_name="FREEPDB1",
        begin_seq=15,
    )


def transactions() -> list[Transaction]:
    """The scenario's transactions, in commit order (fresh objects on every call)."""
    row2 = {"ID": encode_number(2), **{c.name: None for c in ALL_TYPES.columns[1:12]}}
    keyless = {"NAME": b"widget", "QTY": encode_number(5), "NOTE": None}
    changed = {**FULL_ROW, "VC": b"changed", "N_DEC": encode_number(Decimal("0.001"))}
    return [
        _txn(
            (10, 12, 572),
            2267707,
            [
                _row(OP_INSERT, ALL_TYPES, None, FULL_ROW, 2267708, 0),
                _row(OP_INSERT, ALL_TYPES, None, row2, 2267709, 1),
                _row(OP_INSERT, NO_PK, None, keyless, 2267710, 2),
            ],
            2267711,
        ),
        _txn((3, 4, 100), 2267712, [_row(OP_UPDATE, ALL_TYPES, FULL_ROW, changed, 2267713, 0)], 2267714),
        _txn(
            (3, 5, 101),
            2267720,
            [
                _row(
                    OP_UPDATE,
                    ALL_TYPES,
                    {"ID": encode_number(1), "VC": b"changed", "B": b"\x01"},
                    {"VC": None, "B": b"\x00"},
                    2267721,
                    0,
                ),
                _row(
                    OP_UPDATE,
                    NO_PK,
                    {"NAME": b"widget", "QTY": encode_number(5)},
                    {"QTY": encode_number(6)},
                    2267722,
                    2,
                ),
            ],
            2267723,
        ),
        _txn(
            (4, 1, 7),
            2267730,
            [
                _row(OP_DELETE, ALL_TYPES, None, None, 2267731, 1),
                _row(OP_DELETE, NO_PK, {**keyless, "QTY": encode_number(6)}, None, 2267732, 2),
            ],
            2267733,
        ),
        _txn(
            (5, 2, 9),
            2267740,
            [
                DdlChange(
                    obj=74002,
                    owner="OLR_TEST",
                    table=NO_PK_V2,
                    sql="ALTER TABLE NO_PK ADD (EXTRA NUMBER)",
                    statement_type=15,
                    scn=2267741,
                    time=1772847885,
                ),
            ],
            2267742,
        ),
    ]


def deleted_row2(txns: list[Transaction]) -> None:
    """Give the DELETE of row 2 its before image (the row as inserted)."""
    delete = txns[3].changes[0]
    assert isinstance(delete, RowChange)
    delete.before = dict(txns[0].changes[1].after or {})  # type: ignore[union-attr]


CHECKPOINT = Checkpoint(scn=2267800, time=1772847895, seq=16, offset=4096, redo_switch=True)


def run(fmt: object) -> list:
    """Every message of the scenario through ``fmt``: transactions, then the checkpoint."""
    txns = transactions()
    deleted_row2(txns)
    messages = []
    for txn in txns:
        messages += fmt.transaction(txn)  # type: ignore[attr-defined]
    messages += fmt.checkpoint(CHECKPOINT)  # type: ignore[attr-defined]
    return messages
