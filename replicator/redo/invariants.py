"""The consistency checks OpenLogReplicator makes on every change vector, with its error codes.

OLR decodes each vector of layers 5, 10 and 11 as it reads it and stops on a field that
contradicts the vector's own header: a field too short for what it must hold (50061), a
field the layout requires but the vector lacks (50006), or a NULL column whose field is
not empty (50061 ``too short field 11.5.N``). Oracle never writes such redo, so the
replicator refuses it the same way instead of guessing values.

:data:`CHECKS` (one function per opcode, see :func:`check_vector`) runs for every vector at
parse time, before anything is filtered (OLR checks the vectors of every object, replicated
or not), so it is written for the hot path: field lengths are compared in place, a NULL
bitmap is one integer and only its set bits (the NULL columns) are visited; nothing is
allocated per column. It raises :class:`FieldCheckError`, which the parser turns into a
:class:`~replicator.errors.RedoLogError` naming file, block and offset. A 5.1 merged from
the pieces of a multi-block undo is checked whole (:func:`check_merged_undo`), as in OLR.
The native engine makes the same checks in C (``replicator/native/_core.pyx``, pass or fail)
and hands a record that fails them to the parser, so the errors are always raised here.

Differences from OLR, deliberate: the message starts with ``file F, block B, offset O:``
(the record), then OLR's own text and its ``offset:`` (the vector's file offset); OLR's
70001 warnings (a short row-dependency or session field) are not given. Not checked,
because OLR checks them only when dumping or because the replicator does not decode those
vectors: the KTB ``R`` and block-cleanout sizes, QMI slot sizes, LOB (kdli, 19.1, 26.x),
index 10.8, DDL (24.1) fields, 5.14 fields, and 5.13 fields other than 11-13.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

from replicator.redo.vectors import TYP_ENCRYPTED, ChangeVector

TOO_SHORT = 50061  # OLR: "too short field ..."
FIELD_MISSING = 50006  # OLR: "field missing in vector ..."

# KDO operations (op & 0x1F) and bits.
_IRP, _DRP, _LKR, _URP, _ORP, _CFA, _CKI, _QMI, _QMD, _LMN = 2, 3, 4, 5, 6, 8, 9, 11, 12, 16
_ROWDEPS = 0x40
_KDOM2 = 0x80
_KTUCF = 0x02  # 5.4 ktucm flag: field 2 is a ktucf
_V12_1 = 0x0C100000
_U16 = {e: struct.Struct(e + "H") for e in "<>"}
# Smallest KTB redo field for (op & 0x0F) | (flag 0x08) << 1: op C needs 8 bytes after the
# 4- or 8-byte start, op L 24, op F 16; other operations read nothing more (OLR ktbRedo).
_KTB_MIN = tuple((8 if key & 0x10 else 4) + {2: 8, 4: 24, 1: 16}.get(key & 0x0F, -4) for key in range(32))


class FieldCheckError(Exception):
    """A vector failed one of OLR's checks; the parser adds where it was found."""

    def __init__(self, code: int, text: str, cv: ChangeVector):
        super().__init__(text)
        self.code = code
        self.text = text
        self.cv = cv


def _short(cv: ChangeVector, what: str, size: int) -> FieldCheckError:
    return FieldCheckError(TOO_SHORT, f"too short field {what}: {size}", cv)


def _missing(cv: ChangeVector, field: int) -> FieldCheckError:
    return FieldCheckError(
        FIELD_MISSING, f"field missing in vector, field: {field}/{len(cv.lengths)}, op: {cv.layer}.{cv.code}", cv
    )


def _ktb_redo(cv: ChangeVector, i: int) -> None:
    """KTB redo in field ``i`` (0-based): its operation fixes a minimum size (OLR ktbRedo)."""
    size = cv.lengths[i]
    if size < 8:
        return  # OLR reads nothing from a shorter KTB field
    o = cv.offsets[i]
    data = cv.data
    if size < _KTB_MIN[(data[o] & 0x0F) | (data[o + 1] & 0x08) << 1]:
        raise _ktb_error(cv, i)


def _ktb_error(cv: ChangeVector, i: int) -> FieldCheckError:
    op = cv.data[cv.offsets[i]] & 0x0F
    name = "KTP Redo C" if op == 2 else "KTP Redo L2" if op == 4 else "KTB Redo F"
    return _short(cv, name, cv.lengths[i])


def _ktub(cv: ChangeVector, i: int) -> int:
    """Check the ktub in field ``i`` (0-based); return its flags (OLR ktub)."""
    size = cv.lengths[i]
    if size < 24:
        raise _short(cv, "ktub (1)", size)
    return _U16[cv.endian].unpack_from(cv.data, cv.offsets[i] + 20)[0]


def _kdo(cv: ChangeVector, i: int) -> tuple[int, int, int, int, int]:
    """Check the KDO header in field ``i`` (0-based) against its operation (OLR kdoOpCode).

    Returns (op byte, flags byte, cc, NULL bitmap of the cc columns as one integer, size/delt
    of an IRP/ORP or nrow of a QMI/QMD): a tuple, the cheapest thing to build on this path.
    """
    size = cv.lengths[i]
    if size < 16:
        raise _short(cv, "kdo OpCode", size)
    data, o = cv.data, cv.offsets[i]
    op_byte = data[o + 10]
    op = op_byte & 0x1F
    if op == _URP:
        if size < 28:
            raise _short(cv, "kdo OpCode URP", size)
        cc = data[o + 23]
        nbytes = (cc + 7) >> 3
        if size < 26 + nbytes:
            raise _short(cv, "kdo OpCode URP for nulls", size)
        nulls = int.from_bytes(data[o + 26 : o + 26 + nbytes], "little") & ((1 << cc) - 1) if cc else 0
        return op_byte, data[o + 11], cc, nulls, 0
    if op == _IRP or op == _ORP:
        if size < 48:
            raise _short(cv, "kdo OpCode IRP" if op == _IRP else "kdo OpCode ORP", size)
        cc = data[o + 18]
        nbytes = (cc + 7) >> 3
        if size < 45 + nbytes:
            raise _short(cv, "kdo OpCode IRP for nulls" if op == _IRP else "kdo OpCode ORP for nulls", size)
        nulls = int.from_bytes(data[o + 45 : o + 45 + nbytes], "little") & ((1 << cc) - 1) if cc else 0
        return op_byte, data[o + 11], cc, nulls, _U16[cv.endian].unpack_from(data, o + 40)[0]
    if op == _DRP or op == _LKR:
        if size < 20:
            raise _short(cv, "kdo OpCode DRP" if op == _DRP else "KDO OpCode LKR", size)
    elif op == _CFA:
        if size < 32:
            raise _short(cv, "kdo OpCode ORP", size)  # sic: OLR names the CFA check so
    elif op == _CKI:
        if size < 20:
            raise _short(cv, "kdo OpCode SKL", size)
    elif op == _QMI or op == _QMD:
        if size < 24:
            raise _short(cv, "kdo OpCode QMI (1)", size)
        return op_byte, data[o + 11], 0, 0, data[o + 18]
    return op_byte, data[o + 11], 0, 0, 0


def _cc_data(cc: int, nulls: int) -> int:
    """OLR's ccData: one past the last non-NULL column (the columns owning a redo field)."""
    return (~nulls & ((1 << cc) - 1)).bit_length()


def _null_fields(cv: ChangeVector, nulls: int, first: int, count: int, what: str) -> None:
    """Columns 0..count-1 own fields ``first``.. (0-based): a NULL one must own an empty field."""
    m = nulls & ((1 << count) - 1) if count > 0 else 0
    lengths = cv.lengths
    while m:  # only the NULL columns are visited
        low = m & -m
        i = first + low.bit_length() - 1
        if lengths[i]:
            raise _short(cv, what.replace("#", str(i + 1)), lengths[i])
        m ^= low


def _supplemental(cv: ChangeVector, j: int) -> None:
    """Supplemental log data from field ``j`` (0-based): head size and value count (OLR suppLog)."""
    lengths = cv.lengths
    n = len(lengths)
    while j < n and lengths[j] == 0:
        j += 1
    if j >= n:
        return
    size = lengths[j]
    if size < 20:
        raise _short(cv, "supplemental log", size)
    supp_cc = _U16[cv.endian].unpack_from(cv.data, cv.offsets[j] + 2)[0]
    j += 3  # head, column numbers, column lengths
    if j > n:
        return  # OLR stops quietly when the numbers or lengths field is absent
    if j + supp_cc > n:
        raise _missing(cv, n + 1)


def _skip_take(cv: ChangeVector, j: int) -> int:
    """Skip empty fields from ``j`` (0-based), then take one: the index after it (OLR nextField)."""
    lengths = cv.lengths
    n = len(lengths)
    while j < n and lengths[j] == 0:
        j += 1
    if j >= n:
        raise _missing(cv, n + 1)
    return j + 1


def _walk_values(lengths: Sequence[int], n: int, k: int) -> int:
    """The field after ``k`` non-empty value fields from field 5, skipping empty fillers
    between them (-1 when they run past the vector): the slow path of the URP undo checks."""
    j = 5
    for _ in range(k):
        while j < n and lengths[j] == 0:
            j += 1
        if j >= n:
            return -1
        j += 1
    return j


def _undo_row(cv: ChangeVector) -> None:
    """The row operation undone by a 5.1 (opc 11.1): field 4 onwards (OLR opc0B01)."""
    lengths = cv.lengths
    n = len(lengths)
    op_byte, flags, cc, nulls, extra = _kdo(cv, 3)
    op = op_byte & 0x1F
    if op == _URP:
        if n < 5:
            raise _missing(cv, 5)
        if flags & _KDOM2:
            if n < 6:
                raise _missing(cv, 6)
            return
        # One non-empty field per non-NULL column; empty fields between them are fillers.
        k = cc - nulls.bit_count()
        j = 5 + k
        if j > n or 0 in lengths[5:j]:  # rare: empty fillers between the values
            j = _walk_values(lengths, n, k)
            if j < 0:
                return
        if op_byte & _ROWDEPS:
            j = _skip_take(cv, j)
        _supplemental(cv, j)
    elif op == _DRP:
        j = 4
        if op_byte & _ROWDEPS:
            if n < 5:
                raise _missing(cv, 5)
            j = 5
        _supplemental(cv, j)
    elif op == _IRP or op == _ORP:
        j = 4
        if cc:
            if n < 5:
                return
            if lengths[4] == extra and cc > 1:
                j = 5  # one compressed row image
            else:
                if nulls:
                    _null_fields(cv, nulls, 4, min(cc, n - 4), "for nulls")
                if n < 4 + cc:
                    return
                j = 4 + cc
        if op_byte & _ROWDEPS:
            if j >= n:
                raise _missing(cv, n + 1)
            j += 1
        _supplemental(cv, j)
    elif op == _QMI:
        if n < 6:
            raise _missing(cv, n + 1)
    elif op == _LMN or op == _LKR or op == _CFA:
        _supplemental(cv, 4)


def _check_0501(cv: ChangeVector, compat: int, merged: bool = False) -> None:
    """5.1: ktudb, ktub, then the undone operation (OLR process0501).

    The hottest check (one 5.1 per row change): the common row operations are handled
    here with the fields read in place; anything unusual goes to the generic helpers.
    """
    lengths = cv.lengths
    n = len(lengths)
    if n < 2 or lengths[1] < 24 or lengths[0] < 20:  # rare: find which check fails, in OLR's order
        if n >= 2 and lengths[1] < 8:
            raise _short(cv, "5.1.2", lengths[1])
        if n < 1:
            raise _missing(cv, 1)
        if lengths[0] < 20:
            raise _short(cv, "ktudb", lengths[0])
        if n < 2:
            return
        raise _short(cv, "ktub (1)", lengths[1])
    data = cv.data
    offsets = cv.offsets
    o = offsets[1]
    le = cv.endian == "<"
    # ktub flags (u16 at +20): a piece of a multi-block undo (0x0001, 0x0002, 0x0100) stops here.
    if not merged and (
        (data[o + 20] & 0x03 or data[o + 21] & 0x01) if le else (data[o + 21] & 0x03 or data[o + 20] & 0x01)
    ):
        return
    if n < 3:
        return
    layer, code = data[o + 16], data[o + 17]
    if layer != 11 or code != 1:
        _undo_other(cv, layer, code)
        return
    _ktb_redo(cv, 2)
    if n < 4:
        return
    size = lengths[3]  # KDO
    o = offsets[3]
    if size < 16 or data[o + 10] & 0x1F != _URP:
        _undo_row(cv)
        return
    # URP undo, inlined: header, one non-empty field per non-NULL column, supplemental data.
    if size < 28:
        raise _short(cv, "kdo OpCode URP", size)
    op_byte = data[o + 10]
    cc = data[o + 23]
    nbytes = (cc + 7) >> 3
    if size < 26 + nbytes:
        raise _short(cv, "kdo OpCode URP for nulls", size)
    if n < 5:
        raise _missing(cv, 5)
    if data[o + 11] & _KDOM2:
        if n < 6:
            raise _missing(cv, 6)
        return
    nulls = data[o + 26] if nbytes == 1 else int.from_bytes(data[o + 26 : o + 26 + nbytes], "little")
    k = cc - (nulls & ((1 << cc) - 1)).bit_count()
    j = 5 + k
    if j > n or 0 in lengths[5:j]:  # rare: empty fillers between the values
        j = _walk_values(lengths, n, k)
        if j < 0:
            return
    if op_byte & _ROWDEPS:
        j = _skip_take(cv, j)
    while j < n and lengths[j] == 0:
        j += 1
    if j >= n:
        return
    size = lengths[j]
    if size < 20:
        raise _short(cv, "supplemental log", size)
    o = offsets[j]
    supp_cc = data[o + 2] | data[o + 3] << 8 if le else data[o + 3] | data[o + 2] << 8
    if n >= j + 3 and j + 3 + supp_cc > n:
        raise _missing(cv, n + 1)


def _undo_other(cv: ChangeVector, layer: int, code: int) -> None:
    """5.1 undoing something else than a row operation: index, LOB, truncate (OLR process0501)."""
    lengths = cv.lengths
    n = len(lengths)
    if (layer == 10 and code == 0x16) or (layer == 26 and code == 1):
        _ktb_redo(cv, 2)
        if layer == 10 and n >= 4 and lengths[3] < 20:
            raise _short(cv, "kdilk", lengths[3])
    elif layer == 14 and code == 8 and lengths[2] < 4:
        raise _short(cv, "kteoputrn", lengths[2])


def _first_field(cv: ChangeVector, minimum: int, name: str) -> int:
    """Field 1 must exist and hold ``minimum`` bytes (``name`` in the error); the field count."""
    lengths = cv.lengths
    if not lengths:
        raise _missing(cv, 1)
    if lengths[0] < minimum:
        raise _short(cv, name, lengths[0])
    return len(lengths)


def _check_0502(cv: ChangeVector, compat: int) -> None:
    n = _first_field(cv, 32, "ktudh")
    lengths = cv.lengths
    if compat >= _V12_1 and n >= 2:
        if lengths[1] != 4:
            if lengths[1] < 36:
                raise _short(cv, "kteop", lengths[1])
            if n >= 3 and lengths[2] < 4:
                raise _short(cv, "pdb", lengths[2])


def _check_0504(cv: ChangeVector, compat: int) -> None:
    n = _first_field(cv, 20, "ktucm")
    if n >= 2 and cv.data[cv.offsets[0] + 16] & _KTUCF and cv.lengths[1] < 16:
        raise _short(cv, "ktucf", cv.lengths[1])


def _check_0506(cv: ChangeVector, compat: int) -> None:
    n = _first_field(cv, 8, "5.6")
    _ktub(cv, 0)
    if n >= 2 and cv.lengths[1] < 8:
        raise _short(cv, "ktuxvoff", cv.lengths[1])


def _check_050b(cv: ChangeVector, compat: int) -> None:
    _first_field(cv, 8, "5.11")
    _ktub(cv, 0)


def _check_ktb_only(cv: ChangeVector, compat: int) -> None:
    """10.2, 10.18: a KTB redo in field 1."""
    if not cv.lengths:
        raise _missing(cv, 1)
    _ktb_redo(cv, 0)


def _row_redo(cv: ChangeVector) -> tuple[int, int, int, int, int] | None:
    """Fields 1 (KTB redo) and 2 (KDO) of an 11.x vector; None without field 2."""
    n = len(cv.lengths)
    if n < 1:
        raise _missing(cv, 1)
    _ktb_redo(cv, 0)
    return _kdo(cv, 1) if n >= 2 else None


def _check_0b_plain(cv: ChangeVector, compat: int) -> None:
    """11.3, 11.4, 11.8, 11.12, 11.16, 11.22: KTB redo and the KDO header."""
    _row_redo(cv)


def _columns_header(cv: ChangeVector, min_fields: int) -> tuple[bytes, int, int, int] | None:
    """The start of the checks of a row change with columns: with fewer than ``min_fields``
    fields only the KTB redo and the KDO header are checked (None); otherwise the KTB redo
    is, and (data, KDO offset, KDO size, field count) returned."""
    lengths = cv.lengths
    n = len(lengths)
    if n < min_fields:
        _row_redo(cv)
        return None
    _ktb_redo(cv, 0)
    return cv.data, cv.offsets[1], lengths[1], n


def _column_count(cv: ChangeVector, data: bytes, o: int, size: int, cc_at: int, bitmap_at: int) -> int:
    """The column count of the KDO header at ``o``; a header too short for its NULL bitmap
    raises (through :func:`_kdo`, which reports it "for nulls")."""
    cc = data[o + cc_at]
    if size < bitmap_at + ((cc + 7) >> 3):
        _kdo(cv, 1)
    return cc


def _null_bitmap(data: bytes, at: int, cc: int) -> int:
    """The NULL bitmap of ``cc`` columns stored at ``at`` (little-endian, one bit a column)."""
    nbytes = (cc + 7) >> 3
    return (data[at] if nbytes == 1 else int.from_bytes(data[at : at + nbytes], "little")) & ((1 << cc) - 1)


def _check_0b02(cv: ChangeVector, compat: int) -> None:
    """11.2 (IRP) and 11.6 (ORP): each column from field 3, a NULL one empty."""
    header = _columns_header(cv, 2)
    if header is None:
        return
    data, o, size, n = header
    lengths = cv.lengths
    if size < 48 or data[o + 10] & 0x1F != cv.code:  # short, or not the IRP/ORP expected
        _kdo(cv, 1)
        if size < 48 or data[o + 10] & 0x1F not in (_IRP, _ORP):
            return
    cc = _column_count(cv, data, o, size, 18, 45)
    if not cc or n < 3:
        return
    nulls = _null_bitmap(data, o + 45, cc)
    if not nulls or (cc > 1 and lengths[2] == _U16[cv.endian].unpack_from(data, o + 40)[0]):
        return  # no NULL column, or one compressed row image
    # OLR reads column i from field 3+i while i < cc, i <= ccData and the field exists.
    _null_fields(cv, nulls, 2, min(cc, _cc_data(cc, nulls) + 1, n - 2), f"11.{cv.code}.#")


def _check_0b05(cv: ChangeVector, compat: int) -> None:
    """11.5 (URP): field 3 holds the column numbers, then one field per column up to ccData."""
    header = _columns_header(cv, 3)
    if header is None:
        return
    data, o, size, n = header
    lengths = cv.lengths
    if size < 28 or data[o + 10] & 0x1F != _URP:
        _kdo(cv, 1)  # raises for a short header; another operation has no column check here
        if data[o + 10] & 0x1F != _URP:
            return
    cc = _column_count(cv, data, o, size, 23, 26)
    if data[o + 11] & _KDOM2:
        if n < 4:
            raise _missing(cv, 4)
        return
    if not cc or not lengths[2]:
        return
    nulls = _null_bitmap(data, o + 26, cc)
    if nulls:
        _null_fields(cv, nulls, 3, min(_cc_data(cc, nulls), n - 3), "11.5.#")


def _check_0b0b(cv: ChangeVector, compat: int) -> None:
    """11.11 (QMI): field 3 holds one row size per row."""
    k = _row_redo(cv)
    lengths = cv.lengths
    if k is not None and len(lengths) >= 3 and lengths[2] < k[4] * 2:
        raise _short(cv, "11.11.3", lengths[2])


CHECKS: dict[int, Callable[[ChangeVector, int], None]] = {
    0x0501: _check_0501,
    0x0502: _check_0502,
    0x0504: _check_0504,
    0x0506: _check_0506,
    0x050B: _check_050b,
    0x0A02: _check_ktb_only,
    0x0A12: _check_ktb_only,
    0x0B02: _check_0b02,
    0x0B06: _check_0b02,
    0x0B05: _check_0b05,
    0x0B0B: _check_0b0b,
    0x0B03: _check_0b_plain,
    0x0B04: _check_0b_plain,
    0x0B08: _check_0b_plain,
    0x0B0C: _check_0b_plain,
    0x0B10: _check_0b_plain,
    0x0B16: _check_0b_plain,
}


def check_vector(cv: ChangeVector, compat: int) -> None:
    """Raise :class:`FieldCheckError` when ``cv`` fails one of OLR's checks (else nothing)."""
    check = CHECKS.get(cv.opcode)
    if check is not None and not cv.typ & TYP_ENCRYPTED:  # OLR does not decode encrypted-tablespace vectors
        check(cv, compat)


def check_merged_undo(cv: ChangeVector, compat: int) -> None:
    """A 5.1 reassembled from the pieces of a multi-block undo: checked whole, as OLR does
    after merging (the pieces themselves stop at their ktub)."""
    _check_0501(cv, compat, True)


def check_session(cv: ChangeVector) -> None:
    """5.13 fields 11-13 (flags, version, audit session id), checked when a transaction owns them."""
    lengths = cv.lengths
    n = len(lengths)
    if n < 1:
        raise _missing(cv, 1)
    for i, need in ((10, 2), (11, 4), (12, 4)):
        if n > i and lengths[i] < need:
            raise _short(cv, f"5.13.{i + 1}", lengths[i])
