"""Real generated records, each patched to break one of OLR's checks, run through the parser.

The parser must stop with OLR's code and a message naming the file, the block and the
offset of the record, ending with OLR's own text and the vector's file offset (OLR's
``offset:``). The unpatched redo must go through without an error.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replicator.config import load_config
from replicator.errors import RedoLogError
from replicator.redo.header import RedoHeader
from replicator.redo.parser import Parser
from replicator.redo.reader import read_lwns
from replicator.redo.records import Record
from replicator.redo.vectors import ChangeVector, iter_vectors
from replicator.redogen.demo import demo_scenario
from replicator.redogen.generate import generate
from replicator.runner.assembly import source_facts

Files = list[tuple[RedoHeader, list[Any]]]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Files]:
    """The demo scenario (19c, 512-byte blocks): parser options and its redo, read once."""
    out = tmp_path_factory.mktemp("invariants")
    result = generate(demo_scenario(), out, with_expected=False)
    config = load_config(str(result.config))
    parser_opts, _, _, _ = source_facts(config, config.source[0])
    files: Files = []
    for log in result.logs:
        headers: list[RedoHeader] = []
        lwns = list(read_lwns(str(log.path), header_out=headers))
        files.append((headers[0], lwns))
    return parser_opts, files


def _run(parser_opts: Any, files: Files, target: Record | None = None, patched: Record | None = None) -> None:
    parser = Parser(parser_opts, lambda txn: list(txn.changes))
    for header, lwns in files:
        parser.start_file(header)
        for lwn in lwns:
            if target is not None and any(r is target for r in lwn.records):
                lwn = dataclasses.replace(lwn, records=[patched if r is target else r for r in lwn.records])
            parser.process_lwn(lwn)
        parser.end_file()


def _find(files: Files, want: Callable[[ChangeVector], bool]) -> tuple[RedoHeader, Record, ChangeVector]:
    for header, lwns in files:
        for lwn in lwns:
            for rec in lwn.records:
                for cv in iter_vectors(rec.data, rec.header_size, header.vector_header_size, header.endian):
                    if want(cv):
                        return header, rec, cv
    raise AssertionError("the demo redo has no such vector")


def _flip(rec: Record, pos: int, bits: int) -> Record:
    data = bytearray(rec.data)
    data[pos] |= bits
    return dataclasses.replace(rec, data=bytes(data))


def _with_fields(rec: Record, header: RedoHeader, cv: ChangeVector, fields: list[bytes]) -> Record:
    """``rec`` with vector ``cv`` re-encoded to hold ``fields`` (the record size follows)."""
    e = header.endian
    n = len(fields)
    table = struct.pack(f"{e}H{n}H", 2 + 2 * n, *[len(f) for f in fields])
    table += bytes(-len(table) % 4)
    body = b"".join(f + bytes(-len(f) % 4) for f in fields)
    vector = rec.data[cv.start : cv.start + cv.header_size] + table + body
    data = rec.data[: cv.start] + vector + rec.data[cv.start + cv.size :]
    return dataclasses.replace(rec, data=struct.pack(e + "I", len(data)) + data[4:])


def _fields(cv: ChangeVector) -> list[bytes]:
    return [bytes(cv.field(i)) for i in range(1, cv.field_count + 1)]


def _kdo_op(cv: ChangeVector, index: int) -> int:
    return cv.field(index)[10] & 0x1F if cv.flen(index) > 10 else 0


def _expect(
    parser_opts: Any,
    files: Files,
    header: RedoHeader,
    rec: Record,
    cv: ChangeVector,
    patched: Record,
    code: int,
    text: str,
) -> None:
    with pytest.raises(RedoLogError) as exc:
        _run(parser_opts, files, rec, patched)
    assert exc.value.code == code
    message = exc.value.message
    assert message.startswith(f"file {header.path}, block {rec.block}, offset {rec.offset}: {text}"), message
    assert message.endswith(f" offset: {rec.block * header.block_size + rec.offset + cv.start}"), message


def test_unpatched_demo_redo_passes_every_check(demo: tuple[Any, Files]) -> None:
    _run(*demo)


def test_urp_redo_null_column_with_a_value(demo: tuple[Any, Files]) -> None:
    opts, files = demo
    # An update setting column 0 to NULL (its field 4 empty) and column 1 to a value: give field 4 a byte.
    header, rec, cv = _find(
        files,
        lambda v: (
            v.opcode == 0x0B05
            and v.field_count >= 5
            and v.flen(3) > 0
            and _kdo_op(v, 2) == 5
            and not v.field(2)[11] & 0x80
            and v.field(2)[23] >= 2
            and v.field(2)[26] & 0x03 == 0x01
            and v.flen(4) == 0
        ),
    )
    fields = _fields(cv)
    fields[3] = b"\x01"
    _expect(opts, files, header, rec, cv, _with_fields(rec, header, cv, fields), 50061, "too short field 11.5.4: 1")


def test_irp_redo_null_bit_over_a_value(demo: tuple[Any, Files]) -> None:
    opts, files = demo
    header, rec, cv = _find(
        files,
        lambda v: (
            v.opcode == 0x0B02
            and v.field_count >= 3
            and v.flen(3) > 0
            and v.field(2)[18] > 1
            and v.flen(3) != struct.unpack_from("<H", v.field(2), 40)[0]
        ),
    )
    patched = _flip(rec, cv.offsets[1] + 45, 0x01)
    _expect(opts, files, header, rec, cv, patched, 50061, f"too short field 11.2.3: {cv.flen(3)}")


def test_irp_undo_null_bit_over_a_value(demo: tuple[Any, Files]) -> None:
    opts, files = demo
    header, rec, cv = _find(
        files,
        lambda v: (
            v.opcode == 0x0501 and v.field_count >= 5 and _kdo_op(v, 4) == 2 and v.flen(5) > 0 and v.field(4)[18] > 1
        ),
    )
    patched = _flip(rec, cv.offsets[3] + 45, 0x01)
    _expect(opts, files, header, rec, cv, patched, 50061, f"too short field for nulls: {cv.flen(5)}")


def _expect_truncated(
    demo: tuple[Any, Files], match: Callable[[ChangeVector], bool], index: int, length: int, text: str
) -> None:
    """Cut field ``index`` of the first vector ``match`` finds to ``length`` bytes: error 50061 ``text``."""
    opts, files = demo
    header, rec, cv = _find(files, match)
    fields = _fields(cv)
    fields[index] = fields[index][:length]
    _expect(opts, files, header, rec, cv, _with_fields(rec, header, cv, fields), 50061, text)


def test_short_ktudb(demo: tuple[Any, Files]) -> None:
    _expect_truncated(demo, lambda v: v.opcode == 0x0501 and v.field_count >= 4, 0, 16, "too short field ktudb: 16")


def test_short_ktub(demo: tuple[Any, Files]) -> None:
    _expect_truncated(demo, lambda v: v.opcode == 0x0501 and v.field_count >= 4, 1, 20, "too short field ktub (1): 20")


def test_short_ktucm(demo: tuple[Any, Files]) -> None:
    _expect_truncated(demo, lambda v: v.opcode == 0x0504, 0, 16, "too short field ktucm: 16")


def test_short_urp_kdo(demo: tuple[Any, Files]) -> None:
    _expect_truncated(
        demo,
        lambda v: v.opcode == 0x0B05 and v.field_count >= 2 and _kdo_op(v, 2) == 5,
        1,
        24,
        "too short field kdo OpCode URP: 24",
    )


def test_ktb_redo_too_short_for_its_operation(demo: tuple[Any, Files]) -> None:
    opts, files = demo
    header, rec, cv = _find(files, lambda v: v.layer == 11 and 8 <= v.flen(1) < 32)
    start = 8 if cv.field(1)[1] & 0x08 else 4
    patched = bytearray(rec.data)
    patched[cv.offsets[0]] = (patched[cv.offsets[0]] & 0xF0) | 0x04  # op L needs start + 24 bytes
    _expect(
        opts,
        files,
        header,
        rec,
        cv,
        dataclasses.replace(rec, data=bytes(patched)),
        50061,
        f"too short field KTP Redo L2: {cv.flen(1)}",
    )
    assert cv.flen(1) < start + 24


def test_supplemental_value_missing(demo: tuple[Any, Files]) -> None:
    opts, files = demo

    def supplemental_values(v: ChangeVector) -> bool:
        """A URP undo of cc columns, no NULL: its supplemental head is field 6 + cc and announces values."""
        if v.opcode != 0x0501 or v.field_count < 9 or _kdo_op(v, 4) != 5 or v.field(4)[26]:
            return False
        head = 6 + v.field(4)[23]
        return v.flen(head) == 20 and struct.unpack_from("<H", v.field(head), 2)[0] == v.field_count - head - 2 > 0

    header, rec, cv = _find(files, supplemental_values)
    fields = _fields(cv)[:-1]
    _expect(
        opts,
        files,
        header,
        rec,
        cv,
        _with_fields(rec, header, cv, fields),
        50006,
        f"field missing in vector, field: {len(fields) + 1}/{len(fields)}",
    )


def test_headers_carry_the_path_given_to_the_reader(demo: tuple[Any, Files]) -> None:
    _, files = demo
    assert all(Path(header.path).is_file() for header, _ in files)
