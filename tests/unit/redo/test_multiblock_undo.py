"""Multi-block undo (§7.5): pieces split over several records merge back into one 5.1."""

from __future__ import annotations

import struct

from replicator.redo.opcodes import undo
from replicator.redo.vectors import ChangeVector


def _vector(fields: list[bytes], flags: int) -> ChangeVector:
    """A 5.1 (12.1+ header) whose ktub carries ``flags``; field 1 ktudb, field 2 ktub."""
    header = bytes([5, 1]) + struct.pack("<HHHI", 36, 23, 0, 0xA7) + b"\x00" * 8 + bytes([1, 0]) + b"\xff\xff"
    header += b"\x03\x00\x00\x00" + b"\x00\x00\x00\x00"
    ktudb = b"\x00" * 8 + struct.pack("<HHI", 10, 12, 572) + b"\x00" * 4
    ktub = (
        struct.pack("<II", 72726, 72726) + b"\x00" * 8 + bytes([11, 1, 12, 0]) + struct.pack("<H", flags) + b"\x00" * 2
    )
    all_fields = [ktudb, ktub, *fields]
    table = struct.pack(f"<H{len(all_fields)}H", 2 + 2 * len(all_fields), *map(len, all_fields))
    table += b"\x00" * (((len(table) + 3) & ~3) - len(table))
    body = b"".join(f + b"\x00" * (((len(f) + 3) & ~3) - len(f)) for f in all_fields)
    data = header + table + body
    return ChangeVector(data, 0, 32, "<")


def _data_fields(cv: ChangeVector) -> list[bytes]:
    return [cv.field(i) for i in range(3, cv.field_count + 1)]


def test_tail_mid_head_merge_in_order() -> None:
    tail = _vector([b"T1", b"T2"], undo.UNDO_TAIL)
    mid = _vector([b"M1"], undo.UNDO_MID)
    head = _vector([b"KTB", b"KDO", b"H1"], undo.UNDO_HEAD)
    merged = undo.merge_multiblock(mid, tail, undo.UNDO_MID)
    merged = undo.merge_multiblock(head, merged, undo.UNDO_HEAD)
    assert _data_fields(merged) == [b"KTB", b"KDO", b"H1", b"M1", b"T1", b"T2"]
    info = undo.undo_info(merged)
    assert info is not None and info.obj == 72726 and info.xid == (10 << 48) | (12 << 32) | 572


def test_last_buffer_split_joins_the_cut_field() -> None:
    tail = _vector([b"lue", b"next"], undo.UNDO_TAIL)
    head = _vector([b"KTB", b"KDO", b"va"], undo.UNDO_HEAD | undo.UNDO_LAST_SPLIT)
    merged = undo.merge_multiblock(head, tail, undo.UNDO_HEAD | undo.UNDO_LAST_SPLIT)
    assert _data_fields(merged) == [b"KTB", b"KDO", b"value", b"next"]
