"""Helpers for format tests: tables, row changes and transactions from Python values.

Values are encoded into Oracle's internal forms with the encoders of replicator.values, the
way the redo would hold them (VARCHAR2 in AL32UTF8, NCHAR types and CLOBs in AL16UTF16).
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
    TYPE_NUMBER,
    TYPE_RAW,
    TYPE_TIMESTAMP,
    TYPE_VARCHAR2,
    Column,
    RowChange,
    Table,
    Transaction,
)
from replicator.values.datetime import encode_timestamp
from replicator.values.floats import encode_binary_double, encode_binary_float
from replicator.values.number import encode_number

SHARED = Path(__file__).resolve().parents[3].parent / "shared"


def col(
    name: str,
    type_code: int,
    length: int = 22,
    *,
    precision: int = -1,
    scale: int = -1,
    form: int = 0,
    nullable: bool = True,
    key: bool = False,
    **flags: bool,
) -> Column:
    """A column; character types default to charset form 1 (database set)."""
    if type_code in (TYPE_VARCHAR2, TYPE_CHAR, TYPE_CLOB) and form == 0:
        form = 1
    charset_id = {1: 873, 2: 2000}.get(form, 0)
    return Column(
        name=name,
        type_code=type_code,
        length=length,
        precision=precision,
        scale=scale,
        charset_form=form,
        charset_id=charset_id,
        nullable=nullable,
        segcol=0,
        key=key,
        **flags,
    )


def table(name: str, columns: list[Column], obj: int = 73000, owner: str = "OLR_TEST") -> Table:
    """A table whose SEGCOL# follow the list order and whose key columns are marked ``key``."""
    for index, column in enumerate(columns):
        column.segcol = index + 1
    keys = tuple(i for i, c in enumerate(columns) if c.key)
    return Table(obj=obj, data_obj=obj, owner=owner, name=name, columns=columns, key_columns=keys)


def encode(column: Column, value: object) -> bytes | None:
    """Oracle bytes of a Python value for ``column`` (None stays NULL)."""
    if value is None:
        return None
    code = column.type_code
    if code in (TYPE_NUMBER,):
        return encode_number(Decimal(str(value)))
    if code in (TYPE_VARCHAR2, TYPE_CHAR, TYPE_CLOB):
        text = str(value)
        return text.encode("utf-16-be") if column.charset_form == 2 or code == TYPE_CLOB else text.encode("utf-8")
    if code == TYPE_BINARY_FLOAT:
        return encode_binary_float(float(value))  # type: ignore[arg-type]
    if code == TYPE_BINARY_DOUBLE:
        return encode_binary_double(float(value))  # type: ignore[arg-type]
    if code in (TYPE_DATE, TYPE_TIMESTAMP):
        return _encode_datetime(str(value))
    if code in (TYPE_RAW, TYPE_BLOB):
        return bytes.fromhex(str(value))
    if code == TYPE_BOOLEAN:
        return bytes([1 if value else 0])
    if isinstance(value, bytes):
        return value
    raise ValueError(f"no test encoder for type {code}")


def _encode_datetime(text: str) -> bytes:
    date, _, clock = text.partition(" ")
    year, month, day = (int(part) for part in date.split("-"))
    hms, _, fraction = (clock or "00:00:00").partition(".")
    hour, minute, second = (int(part) for part in hms.split(":"))
    nanos = int((fraction + "000000000")[:9]) if fraction else 0
    return encode_timestamp(year, month, day, hour, minute, second, nanos)


def image(tab: Table, values: dict[str, object]) -> dict[int, bytes | None]:
    """A row image with the named columns only."""
    index = {c.name: i for i, c in enumerate(tab.columns)}
    return {index[name]: encode(tab.columns[index[name]], value) for name, value in values.items()}


def full_image(tab: Table, values: dict[str, object]) -> dict[int, bytes | None]:
    """A row image with every column (unnamed ones NULL), as supplemental logging gives."""
    return image(tab, {c.name: values.get(c.name) for c in tab.columns})


def change(
    op: str,
    tab: Table | None,
    before: dict | None,
    after: dict | None,
    *,
    scn: int = 0,
    time: int = 0,
    obj: int | None = None,
    bdba: int = 0,
    slot: int = 0,
    offset: int = 0,
) -> RowChange:
    """A row change of ``tab`` with ready images."""
    obj_id = obj if obj is not None else (tab.obj if tab is not None else 0)
    return RowChange(
        op=op,
        obj=obj_id,
        data_obj=obj_id,
        table=tab,
        before=before,
        after=after,
        scn=scn,
        time=time,
        bdba=bdba,
        slot=slot,
        offset=offset,
    )


def insert(tab: Table, values: dict[str, object], **kw: int) -> RowChange:
    """INSERT with a full after image."""
    return change(OP_INSERT, tab, None, full_image(tab, values), **kw)


def delete(tab: Table, values: dict[str, object], **kw: int) -> RowChange:
    """DELETE with a full before image."""
    return change(OP_DELETE, tab, full_image(tab, values), None, **kw)


def update(tab: Table, old: dict[str, object], new: dict[str, object], **kw: int) -> RowChange:
    """UPDATE with supplemental-log images: every column on both sides."""
    return change(OP_UPDATE, tab, full_image(tab, old), full_image(tab, {**old, **new}), **kw)


def xid(text: str) -> int:
    """Packed XID from ``usn.slot.sqn`` (decimal)."""
    usn, slot, sqn = (int(part) for part in text.split("."))
    return (usn << 48) | (slot << 32) | sqn


def transaction(
    xid_text: str, scn: int, time: int, changes: list, commit_scn: int | None = None, **kw: object
) -> Transaction:
    """A committed transaction; changes get the transaction's time and SCN unless set."""
    for item in changes:
        if not item.time:
            item.time = time
        if not item.scn:
            item.scn = scn
    return Transaction(
        xid=xid(xid_text),
        begin_scn=scn,
        begin_time=time,
        commit_scn=commit_scn if commit_scn is not None else scn + 1,
        commit_time=time,
        changes=changes,
        **kw,
    )  # type: ignore[arg-type]
