"""The dictionary row arrays of a schema checkpoint (olr-interfaces.md §5.2 b).

A row is a plain ``dict`` keyed by the checkpoint's JSON field names (``"seg-col"``,
``"row-id"``...), so rows read from a file, rows written back and rows applied later by
dictionary tracking all share one shape. 128-bit fields (``flags``, ``property``,
``spare1``, ``flags-stg``) hold one Python ``int``; the file stores them as
``[low64, high64]``.
"""

from __future__ import annotations

import binascii
import json
from enum import Enum
from typing import Any, Final

from replicator.errors import DataError

Row = dict[str, Any]


class Kind(Enum):
    """How one field is stored in the file and checked when read."""

    ROWID = "rowid"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    I16 = "i16"
    I32 = "i32"
    STR = "str"
    X128 = "x128"


_RANGES: Final = {
    Kind.U16: (0, 0xFFFF),
    Kind.U32: (0, 0xFFFFFFFF),
    Kind.U64: (0, 0xFFFFFFFFFFFFFFFF),
    Kind.I16: (-0x8000, 0x7FFF),
    Kind.I32: (-0x80000000, 0x7FFFFFFF),
}
_U64_MASK: Final = 0xFFFFFFFFFFFFFFFF

FieldSpec = tuple[str, Kind]
_R, _S, _X = ("row-id", Kind.ROWID), Kind.STR, Kind.X128

# Every SYS array, in the order OLR writes them, each with its fields in written order.
SYS_ROW_FIELDS: Final[dict[str, tuple[FieldSpec, ...]]] = {
    "sys-ccol": (_R, ("con", Kind.U32), ("int-col", Kind.I16), ("obj", Kind.U32), ("spare1", _X)),
    "sys-cdef": (_R, ("con", Kind.U32), ("obj", Kind.U32), ("type", Kind.U16)),
    "sys-col": (
        _R,
        ("obj", Kind.U32),
        ("col", Kind.I16),
        ("seg-col", Kind.I16),
        ("int-col", Kind.I16),
        ("name", _S),
        ("type", Kind.U16),
        ("length", Kind.U32),
        ("precision", Kind.I32),
        ("scale", Kind.I32),
        ("charset-form", Kind.U32),
        ("charset-id", Kind.U32),
        ("null", Kind.I32),
        ("property", _X),
    ),
    "sys-deferredstg": (_R, ("obj", Kind.U32), ("flags-stg", _X)),
    "sys-ecol": (_R, ("tab-obj", Kind.U32), ("col-num", Kind.I16), ("guard-id", Kind.I16)),
    "sys-lob": (_R, ("obj", Kind.U32), ("col", Kind.I16), ("int-col", Kind.I16), ("l-obj", Kind.U32), ("ts", Kind.U32)),
    "sys-lob-comp-part": (_R, ("part-obj", Kind.U32), ("l-obj", Kind.U32)),
    "sys-lob-frag": (_R, ("frag-obj", Kind.U32), ("parent-obj", Kind.U32), ("ts", Kind.U32)),
    "sys-obj": (
        _R,
        ("owner", Kind.U32),
        ("obj", Kind.U32),
        ("data-obj", Kind.U32),
        ("name", _S),
        ("type", Kind.U16),
        ("flags", _X),
        ("single", Kind.U64),
    ),
    "sys-tab": (
        _R,
        ("obj", Kind.U32),
        ("data-obj", Kind.U32),
        ("ts", Kind.U32),
        ("clu-cols", Kind.I16),
        ("flags", _X),
        ("property", _X),
    ),
    "sys-tabcompart": (_R, ("obj", Kind.U32), ("data-obj", Kind.U32), ("bo", Kind.U32)),
    "sys-tabpart": (_R, ("obj", Kind.U32), ("data-obj", Kind.U32), ("bo", Kind.U32)),
    "sys-tabsubpart": (_R, ("obj", Kind.U32), ("data-obj", Kind.U32), ("p-obj", Kind.U32)),
    "sys-ts": (_R, ("ts", Kind.U32), ("name", _S), ("block-size", Kind.U32)),
    "sys-user": (_R, ("user", Kind.U32), ("name", _S), ("spare1", _X), ("single", Kind.U64)),
    "xdb-ttset": (_R, ("guid", _S), ("toksuf", _S), ("flags", Kind.U64), ("obj", Kind.U32)),
}
# Per-token-set XDB arrays: the JSON key is this prefix followed by the ttset `toksuf`.
XDB_TOKSUF_FIELDS: Final[dict[str, tuple[FieldSpec, ...]]] = {
    "xdb-xnm": (_R, ("nmspcuri", _S), ("id", _S)),
    "xdb-xpt": (_R, ("path", _S), ("id", _S)),
    "xdb-xqn": (_R, ("nmspcid", _S), ("localname", _S), ("flags", _S), ("id", _S)),
}
# Fields OLR tolerates missing, with the value it then uses.
OPTIONAL_FIELDS: Final[dict[tuple[str, str], Any]] = {("sys-tab", "ts"): 0}

# JSON key -> the dictionary table it mirrors.
SYS_TABLE_NAMES: Final[dict[str, tuple[str, str]]] = {
    "sys-ccol": ("SYS", "CCOL$"),
    "sys-cdef": ("SYS", "CDEF$"),
    "sys-col": ("SYS", "COL$"),
    "sys-deferredstg": ("SYS", "DEFERRED_STG$"),
    "sys-ecol": ("SYS", "ECOL$"),
    "sys-lob": ("SYS", "LOB$"),
    "sys-lob-comp-part": ("SYS", "LOBCOMPPART$"),
    "sys-lob-frag": ("SYS", "LOBFRAG$"),
    "sys-obj": ("SYS", "OBJ$"),
    "sys-tab": ("SYS", "TAB$"),
    "sys-tabcompart": ("SYS", "TABCOMPART$"),
    "sys-tabpart": ("SYS", "TABPART$"),
    "sys-tabsubpart": ("SYS", "TABSUBPART$"),
    "sys-ts": ("SYS", "TS$"),
    "sys-user": ("SYS", "USER$"),
    "xdb-ttset": ("XDB", "XDB$TTSET"),
}
_BY_TABLE_NAME: Final = {v: k for k, v in SYS_TABLE_NAMES.items()}
_XDB_TABLE_PREFIX: Final = {"X$NM": "xdb-xnm", "X$PT": "xdb-xpt", "X$QN": "xdb-xqn"}


def row_fields(key: str) -> tuple[FieldSpec, ...]:
    """The field list of the array named ``key`` (``sys-col``, ``xdb-xnm<toksuf>``...)."""
    spec = SYS_ROW_FIELDS.get(key)
    if spec is None:
        spec = XDB_TOKSUF_FIELDS.get(key[:7]) if len(key) > 7 else None
    if spec is None:
        raise KeyError(f"not a dictionary array: {key}")
    return spec


def dictionary_key(owner: str, name: str) -> str | None:
    """The checkpoint array mirroring table ``owner.name`` (SYS.COL$ -> ``sys-col``), or None."""
    key = _BY_TABLE_NAME.get((owner, name))
    if key is None and owner == "XDB" and name[:4] in _XDB_TABLE_PREFIX:
        key = _XDB_TABLE_PREFIX[name[:4]] + name[4:]
    return key


_ROWID_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_ROWID_CHARS: Final = frozenset(_ROWID_ALPHABET)


def decode_rowid(rowid: str) -> tuple[int, int, int, int]:
    """Split an 18-character extended ROWID into (data_obj, afn, block, slot).

    Raises DataError 20008 when the text is not a ROWID.
    """
    if len(rowid) != 18 or not _ROWID_CHARS.issuperset(rowid):
        raise DataError(f"row ID incorrect: {rowid!r}", 20008)
    # The ROWID alphabet is base64's: two zero digits in front make 120 bits, 15 bytes.
    value = int.from_bytes(binascii.a2b_base64("AA" + rowid), "big")
    return value >> 72, (value >> 54) & 0x3FFFF, (value >> 18) & 0xFFFFFFFFF, value & 0x3FFFF


def rowid_sort_key(rowid: str) -> tuple[int, int, int]:
    """The order OLR keeps rows in (and writes them): data object, then DBA, then slot."""
    data_obj, afn, block, slot = decode_rowid(rowid)
    # OLR folds the file number into a 32-bit DBA; keep the same truncation for equal order.
    return data_obj, ((afn << 22) | block) & 0xFFFFFFFF, slot


def _field_error(where: str, message: str, code: int = 20003) -> DataError:
    return DataError(f"{where} - parse error, {message}", code)


def check_value(kind: Kind, value: Any, field: str, where: str, native: bool = False) -> Any:
    """Validate one JSON value of ``kind`` and return its Python form (20003/20005/20008).

    With ``native``, a 128-bit field may also be given as a Python int (rows from redo).
    """
    if type(value) is int:  # the common case first: a number in range (schema load at start-up)
        bounds = _RANGES.get(kind)
        if bounds is not None and bounds[0] <= value <= bounds[1]:
            return value
    if kind is Kind.X128:
        if native and isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value < 1 << 128:
                raise _field_error(where, f"field {field} is out of range ({value})")
            return value
        if not isinstance(value, list):
            raise _field_error(where, f"field {field} is not an array")
        if len(value) != 2:
            raise _field_error(where, f"{field} should be an array with 2 elements", 20005)
        return check_value(Kind.U64, value[0], field, where) | check_value(Kind.U64, value[1], field, where) << 64
    if kind in (Kind.STR, Kind.ROWID):
        if not isinstance(value, str):
            raise _field_error(where, f"field {field} is not a string")
        if kind is Kind.ROWID:
            decode_rowid(value)
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        raise _field_error(where, f"field {field} is not a {kind.value} number")
    low_bound, high_bound = _RANGES[kind]
    if not low_bound <= value <= high_bound:
        raise _field_error(where, f"field {field} is out of range ({value})")
    return value


def parse_row(key: str, raw: Any, where: str, native: bool = False) -> Row:
    """Validate one element of array ``key``; unknown fields are ignored (OLR rejects them).

    ``native`` accepts Python ints for 128-bit fields (see :func:`check_value`).
    """
    if not isinstance(raw, dict):
        raise _field_error(where, f"an element of {key} is not an object")
    row: Row = {}
    for name, kind, bounds in _parse_plan(key):
        value = raw.get(name, _MISSING)
        if value.__class__ is int and bounds is not None and bounds[0] <= value <= bounds[1]:
            row[name] = value  # check_value's common case, without the call (schema load at start-up)
        elif value.__class__ is str and kind is Kind.STR:
            row[name] = value
        elif value is _MISSING:
            if (key, name) in OPTIONAL_FIELDS:
                row[name] = OPTIONAL_FIELDS[key, name]
                continue
            raise _field_error(where, f"field {name} not found in {key}")
        else:
            row[name] = check_value(kind, value, name, where, native)
    return row


_MISSING: Final = object()
# Per array: each field's (name, kind, the range of a number kind or None).
_PARSE_PLANS: dict[str, tuple[tuple[str, Kind, tuple[int, int] | None], ...]] = {}


def _parse_plan(key: str) -> tuple[tuple[str, Kind, tuple[int, int] | None], ...]:
    plan = _PARSE_PLANS.get(key)
    if plan is None:
        plan = _PARSE_PLANS[key] = tuple((name, kind, _RANGES.get(kind)) for name, kind in row_fields(key))
    return plan


def _json_text(value: str) -> str:
    # json.dumps escapes only '"', '\\' and the control characters, none of them printable.
    if value.__class__ is str and value.isprintable() and '"' not in value and "\\" not in value:
        return '"' + value + '"'
    return json.dumps(value, ensure_ascii=False)


def _x128_text(value: int) -> str:
    return f"[{value & _U64_MASK},{value >> 64}]"


# Per array: the row's text with a %s for each value, and each field's (name, conversion);
# numbers need none (%s is str()). Made at the first row of each array written.
_DUMP_PLANS: dict[str, tuple[str, tuple[tuple[str, Any], ...]]] = {}


def _dump_plan(key: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    plan = _DUMP_PLANS.get(key)
    if plan is None:
        spec = row_fields(key)
        template = "{" + ",".join(f'"{name}":%s' for name, _ in spec) + "}"
        convert = {Kind.X128: _x128_text, Kind.STR: _json_text, Kind.ROWID: _json_text}
        plan = _DUMP_PLANS[key] = (template, tuple((name, convert.get(kind)) for name, kind in spec))
    return plan


def dump_row(key: str, row: Row) -> str:
    """One row as compact JSON in OLR's field order (128-bit values as [low64, high64])."""
    template, fields = _dump_plan(key)
    return template % tuple([row[name] if conv is None else conv(row[name]) for name, conv in fields])
