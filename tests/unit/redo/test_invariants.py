"""OpenLogReplicator's field checks on change vectors, one hand-made bad vector per check.

Each case builds a vector that is valid except for one field and expects OLR's code and
message text (50061 "too short field ...", 50006 "field missing in vector"); each has a
twin that differs only in that field and passes, so a check cannot pass by failing
everything. Real records patched and run through the parser: test_invariants_records.py.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest

from replicator.redo.invariants import FieldCheckError, check_session, check_vector
from replicator.redo.vectors import ChangeVector

V19 = 0x13000000
V11 = 0x0B200000
E = "<"


def vec(layer: int, code: int, fields: list[bytes], *, typ: int = 0, endian: str = E) -> ChangeVector:
    """A 24-byte-header change vector holding ``fields``."""
    head = struct.pack(endian + "BBHHHIIHHBBH", layer, code, 1, 1, 0, 0x01000010, 0, 0, 0, 1, typ, 0)
    n = len(fields)
    table = struct.pack(f"{endian}H{n}H", 2 + 2 * n, *[len(f) for f in fields])
    table += bytes(-len(table) % 4)
    body = b"".join(f + bytes(-len(f) % 4) for f in fields)
    return ChangeVector(head + table + body, 0, 24, endian)


def ktb(op: int = 2, size: int = 16, flg: int = 0) -> bytes:
    """A KTB redo field: op C (2) with 4 + 8 bytes fits in 16."""
    b = bytearray(size)
    if size >= 2:
        b[0], b[1] = op, flg
    return bytes(b)


def ktub(layer: int = 11, code: int = 1, flags: int = 0, size: int = 24) -> bytes:
    b = bytearray(size)
    if size >= 18:
        b[16], b[17] = layer, code
    if size >= 22:
        struct.pack_into(E + "H", b, 20, flags)
    return bytes(b)


def nulls_bytes(cc: int, nulls: int) -> bytes:
    return nulls.to_bytes((cc + 7) // 8, "little") if cc else b""


def kdo_urp(cc: int, nulls: int = 0, *, flags: int = 0, rowdeps: bool = False, size: int = 0) -> bytes:
    b = bytearray(max(28, 26 + (cc + 7) // 8))
    b[10], b[11], b[16], b[23] = 5 | (0x40 if rowdeps else 0), flags, 0x2C, cc
    b[26 : 26 + (cc + 7) // 8] = nulls_bytes(cc, nulls)
    return bytes(b[:size]) if size else bytes(b)


def kdo_irp(
    cc: int, nulls: int = 0, *, op: int = 2, size_delt: int = 0xFFFF, rowdeps: bool = False, size: int = 0
) -> bytes:
    b = bytearray(max(48, 45 + (cc + 7) // 8))
    b[10], b[16], b[18] = op | (0x40 if rowdeps else 0), 0x2C, cc
    struct.pack_into(E + "H", b, 40, size_delt)
    b[45 : 45 + (cc + 7) // 8] = nulls_bytes(cc, nulls)
    return bytes(b[:size]) if size else bytes(b)


def kdo_op(op: int, size: int, nrow: int = 0) -> bytes:
    b = bytearray(size)
    b[10] = op
    if size > 18:
        b[18] = nrow
    return bytes(b)


def supp(cc: int, size: int = 26) -> bytes:
    b = bytearray(size)
    b[0] = 1
    struct.pack_into(E + "H", b, 2, cc)
    return bytes(b)


def u16s(*values: int) -> bytes:
    return struct.pack(f"{E}{len(values)}H", *values)


def undo(kdo: bytes, *rest: bytes, ktub_flags: int = 0) -> ChangeVector:
    """A 5.1 undoing a row operation (opc 11.1): ktudb, ktub, KTB, KDO, then ``rest``."""
    return vec(5, 1, [bytes(20), ktub(flags=ktub_flags), ktb(), kdo, *rest])


def redo(code: int, kdo: bytes, *rest: bytes) -> ChangeVector:
    return vec(11, code, [ktb(), kdo, *rest])


# (id, good vector, bad vector, code, message start, compat)
Case = tuple[str, Callable[[], ChangeVector], Callable[[], ChangeVector], int, str, int]
CASES: list[Case] = [
    # --- 11.5 URP: a NULL column owns an empty field
    (
        "11.5 null with data",
        lambda: redo(5, kdo_urp(2, 0b01), u16s(3, 4), b"", b"abc"),
        lambda: redo(5, kdo_urp(2, 0b01), u16s(3, 4), b"xyz", b"abc"),
        50061,
        "too short field 11.5.4: 3",
        V19,
    ),
    (
        "11.5 null past ccData unchecked",
        lambda: redo(5, kdo_urp(3, 0b110), u16s(1, 2, 3), b"a", b"", b"zz"),
        lambda: redo(5, kdo_urp(4, 0b0100), u16s(1, 2, 3, 4), b"a", b"b", b"zz", b"d"),
        50061,
        "too short field 11.5.6: 2",
        V19,
    ),
    (
        "11.5 KDOM2 without row data",
        lambda: redo(5, kdo_urp(2, flags=0x80), u16s(1, 2), b"rowvector"),
        lambda: redo(5, kdo_urp(2, flags=0x80), u16s(1, 2)),
        50006,
        "field missing in vector, field: 4/3",
        V19,
    ),
    # --- 11.2 IRP / 11.6 ORP: columns from field 3, checked up to ccData
    (
        "11.2 null with data",
        lambda: redo(2, kdo_irp(3, 0b010), b"a", b"", b"c"),
        lambda: redo(2, kdo_irp(3, 0b010), b"a", b"b", b"c"),
        50061,
        "too short field 11.2.4: 1",
        V19,
    ),
    (
        "11.2 compressed image not split",
        lambda: redo(2, kdo_irp(3, 0b010, size_delt=5), b"12345"),
        lambda: redo(2, kdo_irp(3, 0b001, size_delt=4), b"12345"),
        50061,
        "too short field 11.2.3: 5",
        V19,
    ),
    (
        "11.2 first trailing NULL checked",
        lambda: redo(2, kdo_irp(3, 0b110), b"a", b"", b"zz"),
        lambda: redo(2, kdo_irp(3, 0b110), b"a", b"b", b""),
        50061,
        "too short field 11.2.4: 1",
        V19,
    ),
    (
        "11.6 null with data",
        lambda: redo(6, kdo_irp(2, 0b01, op=6), b"", b"b"),
        lambda: redo(6, kdo_irp(2, 0b01, op=6), b"a", b"b"),
        50061,
        "too short field 11.6.3: 1",
        V19,
    ),
    (
        "11.x without field 1",
        lambda: redo(3, kdo_op(3, 20)),
        lambda: vec(11, 3, []),
        50006,
        "field missing in vector, field: 1/0",
        V19,
    ),
    # --- KTB redo sizes (startPos 4, or 8 with flag 0x08)
    (
        "KTB C",
        lambda: vec(11, 3, [ktb(2, 12), kdo_op(3, 20)]),
        lambda: vec(11, 3, [ktb(2, 11), kdo_op(3, 20)]),
        50061,
        "too short field KTP Redo C: 11",
        V19,
    ),
    (
        "KTB C flag 8",
        lambda: vec(11, 3, [ktb(2, 16, 8), kdo_op(3, 20)]),
        lambda: vec(11, 3, [ktb(2, 12, 8), kdo_op(3, 20)]),
        50061,
        "too short field KTP Redo C: 12",
        V19,
    ),
    (
        "KTB L",
        lambda: vec(11, 3, [ktb(4, 28), kdo_op(3, 20)]),
        lambda: vec(11, 3, [ktb(4, 24), kdo_op(3, 20)]),
        50061,
        "too short field KTP Redo L2: 24",
        V19,
    ),
    (
        "KTB F",
        lambda: vec(11, 3, [ktb(1, 20), kdo_op(3, 20)]),
        lambda: vec(11, 3, [ktb(1, 16), kdo_op(3, 20)]),
        50061,
        "too short field KTB Redo F: 16",
        V19,
    ),
    (
        "KTB 10.2",
        lambda: vec(10, 2, [ktb(1, 20)]),
        lambda: vec(10, 2, [ktb(1, 12)]),
        50061,
        "too short field KTB Redo F: 12",
        V19,
    ),
    # --- KDO header sizes per operation
    (
        "kdo",
        lambda: redo(3, kdo_op(3, 20)),
        lambda: redo(3, kdo_op(3, 12)),
        50061,
        "too short field kdo OpCode: 12",
        V19,
    ),
    (
        "kdo URP",
        lambda: redo(5, kdo_urp(1)),
        lambda: redo(5, kdo_urp(1, size=27)),
        50061,
        "too short field kdo OpCode URP: 27",
        V19,
    ),
    (
        "kdo URP nulls",
        lambda: redo(5, kdo_urp(40)),
        lambda: redo(5, kdo_urp(40, size=30)),
        50061,
        "too short field kdo OpCode URP for nulls: 30",
        V19,
    ),
    (
        "kdo IRP",
        lambda: redo(2, kdo_irp(1), b"a"),
        lambda: redo(2, kdo_irp(1, size=47), b"a"),
        50061,
        "too short field kdo OpCode IRP: 47",
        V19,
    ),
    (
        "kdo IRP nulls",
        lambda: redo(2, kdo_irp(30), *[b"a"] * 30),
        lambda: redo(2, kdo_irp(30, size=48)),
        50061,
        "too short field kdo OpCode IRP for nulls: 48",
        V19,
    ),
    (
        "kdo ORP",
        lambda: redo(6, kdo_irp(1, op=6), b"a"),
        lambda: redo(6, kdo_irp(1, op=6, size=40), b"a"),
        50061,
        "too short field kdo OpCode ORP: 40",
        V19,
    ),
    (
        "kdo DRP",
        lambda: redo(3, kdo_op(3, 20)),
        lambda: redo(3, kdo_op(3, 18)),
        50061,
        "too short field kdo OpCode DRP: 18",
        V19,
    ),
    (
        "kdo LKR",
        lambda: redo(4, kdo_op(4, 20)),
        lambda: redo(4, kdo_op(4, 16)),
        50061,
        "too short field KDO OpCode LKR: 16",
        V19,
    ),
    (
        "kdo CFA",
        lambda: redo(8, kdo_op(8, 32)),
        lambda: redo(8, kdo_op(8, 28)),
        50061,
        "too short field kdo OpCode ORP: 28",
        V19,
    ),
    (
        "kdo CKI",
        lambda: redo(16, kdo_op(9, 20)),
        lambda: redo(16, kdo_op(9, 16)),
        50061,
        "too short field kdo OpCode SKL: 16",
        V19,
    ),
    (
        "kdo QMI",
        lambda: redo(11, kdo_op(11, 24, 2), u16s(5, 5)),
        lambda: redo(11, kdo_op(11, 20, 2), u16s(5, 5)),
        50061,
        "too short field kdo OpCode QMI (1): 20",
        V19,
    ),
    (
        "11.11 row sizes",
        lambda: redo(11, kdo_op(11, 24, 2), u16s(5, 5), b"rows"),
        lambda: redo(11, kdo_op(11, 24, 3), u16s(5, 5), b"rows"),
        50061,
        "too short field 11.11.3: 4",
        V19,
    ),
    # --- 5.1 undo: ktudb, ktub and what they announce
    (
        "5.1.2",
        lambda: undo(kdo_op(3, 20)),
        lambda: vec(5, 1, [bytes(20), bytes(4)]),
        50061,
        "too short field 5.1.2: 4",
        V19,
    ),
    (
        "5.1 no field",
        lambda: vec(5, 1, [bytes(20)]),
        lambda: vec(5, 1, []),
        50006,
        "field missing in vector, field: 1/0",
        V19,
    ),
    (
        "ktudb",
        lambda: undo(kdo_op(3, 20)),
        lambda: vec(5, 1, [bytes(16), ktub()]),
        50061,
        "too short field ktudb: 16",
        V19,
    ),
    (
        "ktub",
        lambda: undo(kdo_op(3, 20)),
        lambda: vec(5, 1, [bytes(20), ktub(size=22)]),
        50061,
        "too short field ktub (1): 22",
        V19,
    ),
    (
        "multi-block piece not analysed",
        lambda: undo(kdo_op(3, 12), ktub_flags=0x0002),
        lambda: undo(kdo_op(3, 12)),
        50061,
        "too short field kdo OpCode: 12",
        V19,
    ),
    (
        "5.1 KTB",
        lambda: vec(5, 1, [bytes(20), ktub(), ktb(1, 20), kdo_op(3, 20)]),
        lambda: vec(5, 1, [bytes(20), ktub(), ktb(1, 12), kdo_op(3, 20)]),
        50061,
        "too short field KTB Redo F: 12",
        V19,
    ),
    (
        "kdilk",
        lambda: vec(5, 1, [bytes(20), ktub(10, 0x16), ktb(), bytes(20)]),
        lambda: vec(5, 1, [bytes(20), ktub(10, 0x16), ktb(), bytes(16)]),
        50061,
        "too short field kdilk: 16",
        V19,
    ),
    (
        "kteoputrn",
        lambda: vec(5, 1, [bytes(20), ktub(14, 8), bytes(4)]),
        lambda: vec(5, 1, [bytes(20), ktub(14, 8), bytes(2)]),
        50061,
        "too short field kteoputrn: 2",
        V19,
    ),
    # --- 5.1 URP undo: column numbers, one non-empty field per non-NULL column, fillers skipped
    (
        "URP undo without column numbers",
        lambda: undo(kdo_urp(1), u16s(1), b"a"),
        lambda: undo(kdo_urp(1)),
        50006,
        "field missing in vector, field: 5/4",
        V19,
    ),
    (
        "URP undo KDOM2",
        lambda: undo(kdo_urp(1, flags=0x80), u16s(1), b"vector"),
        lambda: undo(kdo_urp(1, flags=0x80), u16s(1)),
        50006,
        "field missing in vector, field: 6/5",
        V19,
    ),
    (
        "URP undo supplemental head",
        lambda: undo(kdo_urp(2, 0b01), u16s(1, 2), b"", b"b", b"", supp(0)),
        lambda: undo(kdo_urp(2, 0b01), u16s(1, 2), b"", b"b", b"", supp(0, 18)),
        50061,
        "too short field supplemental log: 18",
        V19,
    ),
    (
        "URP undo supplemental values",
        lambda: undo(kdo_urp(1), u16s(1), b"a", supp(2), u16s(1, 2), u16s(1, 1), b"x", b"y"),
        lambda: undo(kdo_urp(1), u16s(1), b"a", supp(2), u16s(1, 2), u16s(1, 1), b"x"),
        50006,
        "field missing in vector, field: 11/10",
        V19,
    ),
    (
        "URP undo row dependencies",
        lambda: undo(kdo_urp(1, rowdeps=True), u16s(1), b"a", bytes(8)),
        lambda: undo(kdo_urp(1, rowdeps=True), u16s(1), b"a"),
        50006,
        "field missing in vector, field: 7/6",
        V19,
    ),
    # --- 5.1 IRP/ORP/DRP/QMI undo
    (
        "IRP undo null with data",
        lambda: undo(kdo_irp(2, 0b10), b"a", b""),
        lambda: undo(kdo_irp(2, 0b10), b"a", b"b"),
        50061,
        "too short field for nulls: 1",
        V19,
    ),
    (
        "IRP undo row dependencies",
        lambda: undo(kdo_irp(1, rowdeps=True), b"a", bytes(8)),
        lambda: undo(kdo_irp(1, rowdeps=True), b"a"),
        50006,
        "field missing in vector, field: 6/5",
        V19,
    ),
    (
        "DRP undo row dependencies",
        lambda: undo(kdo_op(3 | 0x40, 20), bytes(8)),
        lambda: undo(kdo_op(3 | 0x40, 20)),
        50006,
        "field missing in vector, field: 5/4",
        V19,
    ),
    (
        "DRP undo supplemental values",
        lambda: undo(kdo_op(3, 20), supp(1), u16s(1), u16s(1), b"v"),
        lambda: undo(kdo_op(3, 20), supp(1), u16s(1), u16s(1)),
        50006,
        "field missing in vector, field: 8/7",
        V19,
    ),
    (
        "QMI undo",
        lambda: undo(kdo_op(11, 24, 1), u16s(5), b"rows"),
        lambda: undo(kdo_op(11, 24, 1), u16s(5)),
        50006,
        "field missing in vector, field: 6/5",
        V19,
    ),
    # --- transaction control
    ("ktudh", lambda: vec(5, 2, [bytes(32)]), lambda: vec(5, 2, [bytes(28)]), 50061, "too short field ktudh: 28", V19),
    (
        "kteop",
        lambda: vec(5, 2, [bytes(32), bytes(36), bytes(4)]),
        lambda: vec(5, 2, [bytes(32), bytes(20)]),
        50061,
        "too short field kteop: 20",
        V19,
    ),
    (
        "pdb",
        lambda: vec(5, 2, [bytes(32), bytes(36), bytes(4)]),
        lambda: vec(5, 2, [bytes(32), bytes(36), bytes(2)]),
        50061,
        "too short field pdb: 2",
        V19,
    ),
    (
        "kteop before 12.1",
        lambda: vec(5, 2, [bytes(32), bytes(20)]),
        lambda: vec(5, 2, [bytes(30), bytes(20)]),
        50061,
        "too short field ktudh: 30",
        V11,
    ),
    ("ktucm", lambda: vec(5, 4, [bytes(20)]), lambda: vec(5, 4, [bytes(17)]), 50061, "too short field ktucm: 17", V19),
    (
        "ktucf",
        lambda: vec(5, 4, [bytes(16) + b"\x02" + bytes(3), bytes(16)]),
        lambda: vec(5, 4, [bytes(16) + b"\x02" + bytes(3), bytes(12)]),
        50061,
        "too short field ktucf: 12",
        V19,
    ),
    ("5.6", lambda: vec(5, 6, [ktub(), bytes(8)]), lambda: vec(5, 6, [bytes(6)]), 50061, "too short field 5.6: 6", V19),
    (
        "5.6 ktub",
        lambda: vec(5, 6, [ktub(), bytes(8)]),
        lambda: vec(5, 6, [ktub(size=20)]),
        50061,
        "too short field ktub (1): 20",
        V19,
    ),
    (
        "ktuxvoff",
        lambda: vec(5, 6, [ktub(), bytes(8)]),
        lambda: vec(5, 6, [ktub(), bytes(4)]),
        50061,
        "too short field ktuxvoff: 4",
        V19,
    ),
    ("5.11", lambda: vec(5, 11, [ktub()]), lambda: vec(5, 11, [bytes(4)]), 50061, "too short field 5.11: 4", V19),
    (
        "5.11 ktub",
        lambda: vec(5, 11, [ktub()]),
        lambda: vec(5, 11, [ktub(size=12)]),
        50061,
        "too short field ktub (1): 12",
        V19,
    ),
    ("5.11 no field", lambda: vec(5, 11, [ktub()]), lambda: vec(5, 11, []), 50006, "field missing in vector", V19),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_check_rejects_its_bad_vector_and_passes_its_twin(case: Case) -> None:
    _, good, bad, code, text, compat = case
    check_vector(good(), compat)
    with pytest.raises(FieldCheckError) as exc:
        check_vector(bad(), compat)
    assert exc.value.code == code
    assert exc.value.text.startswith(text), exc.value.text


def test_big_endian_vectors_are_checked_the_same() -> None:
    b = bytearray(kdo_urp(2, 0b01))
    good = vec(11, 5, [ktb(), bytes(b), struct.pack(">2H", 1, 2), b"", b"ab"], endian=">")
    check_vector(good, V19)
    bad = vec(11, 5, [ktb(), bytes(b), struct.pack(">2H", 1, 2), b"x", b"ab"], endian=">")
    with pytest.raises(FieldCheckError, match="11.5.4: 1"):
        check_vector(bad, V19)


def test_encrypted_tablespace_vectors_are_not_decoded() -> None:
    check_vector(vec(11, 5, [ktb(), kdo_urp(1, size=20)], typ=0x80), V19)  # OLR skips them too
    with pytest.raises(FieldCheckError):
        check_vector(vec(11, 5, [ktb(), kdo_urp(1, size=20)]), V19)


def test_session_attribute_fields() -> None:
    fields = [bytes(8)] + [b"x"] * 9 + [bytes(2), bytes(4), bytes(4)]
    check_session(vec(5, 19, fields))
    for i, need in ((10, 2), (11, 4), (12, 4)):
        short = list(fields)
        short[i] = bytes(need - 1)
        with pytest.raises(FieldCheckError, match=f"too short field 5.13.{i + 1}: {need - 1}"):
            check_session(vec(5, 19, short))


def test_merged_multiblock_undo_is_checked_whole() -> None:
    """The pieces stop at their ktub flags; the 5.1 merged from them gets every check (OLR)."""
    from replicator.redo.invariants import check_merged_undo
    from replicator.redo.opcodes import undo as U

    tail = vec(5, 1, [bytes(20), ktub(flags=U.UNDO_TAIL), b"\x01\x02"])
    head = vec(5, 1, [bytes(20), ktub(flags=U.UNDO_HEAD), ktb(), kdo_irp(2, 0b10), b"a"])
    for piece in (tail, head):
        check_vector(piece, V19)
    check_merged_undo(U.merge_multiblock(head, vec(5, 1, [bytes(20), ktub(flags=U.UNDO_TAIL), b""]), U.UNDO_HEAD), V19)
    with pytest.raises(FieldCheckError, match="too short field for nulls: 2"):
        check_merged_undo(U.merge_multiblock(head, tail, U.UNDO_HEAD), V19)
