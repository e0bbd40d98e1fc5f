"""OpenLogReplicator's field checks under the native engine: the python engine's errors, exactly.

The native dispatch makes the checks of :mod:`replicator.redo.invariants` in C (pass or
fail only) and hands a record with a failing vector to the python parser, which raises
OLR's code and text. So: the C checks must pass and fail exactly where the python ones do
(every hand-made case of tests/unit/redo/test_invariants.py, then thousands of random
variations of them), and a bad record must stop both engines with the same coded error,
byte for byte (the patched real records of test_invariants_records.py, a 5.19 session
vector, a multi-block undo whose merged 5.1 is bad).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import random
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from replicator.errors import RedoLogError
from replicator.native import wiring
from replicator.redo.invariants import FieldCheckError, check_vector
from replicator.redo.opcodes import undo as U
from replicator.redo.parser import Parser
from replicator.redo.vectors import ChangeVector

REDO_TESTS = Path(__file__).resolve().parents[1] / "redo"


def _load(name: str) -> ModuleType:
    """A module of tests/unit/redo under a private name (its helpers and cases, not its tests)."""
    spec = importlib.util.spec_from_file_location(f"native_checks_{name}", REDO_TESTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cases = _load("test_invariants")
records = _load("test_invariants_records")
demo = records.demo  # the fixture: the demo scenario's redo, read once


def _dispatch() -> Any:
    from replicator.native import dispatch

    return dispatch()


def python_passes(cv: ChangeVector, compat: int) -> bool:
    try:
        check_vector(cv, compat)
    except FieldCheckError:
        return False
    except (IndexError, struct.error):  # a vector python cannot read is refused by the parser too
        return False
    return True


def native_passes(cv: ChangeVector, compat: int) -> bool:
    return bool(_dispatch().vector_passes(cv.data, cv.start, cv.header_size, cv.endian, compat))


# ----------------------------------------------------------------------------- single vectors
@pytest.mark.parametrize("case", cases.CASES, ids=[c[0] for c in cases.CASES])
def test_c_checks_reject_each_bad_vector_and_pass_its_twin(case: Any) -> None:
    _, good, bad, _, _, compat = case
    assert native_passes(good(), compat)
    assert not native_passes(bad(), compat)


def test_c_checks_big_endian_and_encrypted() -> None:
    kdo = cases.kdo_urp(2, 0b01)
    good = cases.vec(11, 5, [cases.ktb(), kdo, struct.pack(">2H", 1, 2), b"", b"ab"], endian=">")
    bad = cases.vec(11, 5, [cases.ktb(), kdo, struct.pack(">2H", 1, 2), b"x", b"ab"], endian=">")
    assert native_passes(good, cases.V19) and not native_passes(bad, cases.V19)
    assert native_passes(cases.vec(11, 5, [cases.ktb(), cases.kdo_urp(1, size=20)], typ=0x80), cases.V19)
    assert not native_passes(cases.vec(11, 5, [cases.ktb(), cases.kdo_urp(1, size=20)]), cases.V19)


def _fields(cv: ChangeVector) -> list[bytes]:
    return [bytes(cv.field(i)) for i in range(1, cv.field_count + 1)]


def _variant(cv: ChangeVector, rng: random.Random) -> ChangeVector:
    """``cv`` with a few random changes: fields cut, grown, emptied, dropped or added, bytes set."""
    fields = _fields(cv)
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(7)
        i = rng.randrange(len(fields)) if fields else 0
        if kind == 0 and fields:
            fields[i] = fields[i][: rng.randrange(len(fields[i]) + 1)]
        elif kind == 1 and fields:
            fields[i] += bytes(rng.randrange(256) for _ in range(rng.randint(1, 24)))
        elif kind == 2 and fields:
            fields[i] = b""
        elif kind == 3 and fields:
            del fields[i]
        elif kind == 4:
            fields.insert(i, bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 2, 8, 20, 26)))))
        elif fields and fields[i]:
            # a header byte that steers the checks: KDO op/flags/cc/nulls, ktub layer/code/flags, KTB op
            b = bytearray(fields[i])
            pos = rng.choice((0, 1, 10, 11, 16, 17, 18, 20, 21, 23, 26, 27, 40, 41, 45, 46, rng.randrange(len(b))))
            if pos < len(b):
                b[pos] = rng.choice((0, 1, 2, 3, 4, 5, 6, 8, 9, 11, 12, 16, 0x40 | 5, 0x80, 0xFF, rng.randrange(256)))
            fields[i] = bytes(b)
    endian = cv.endian
    head = cv.data[cv.start : cv.start + cv.header_size]
    n = len(fields)
    table = struct.pack(f"{endian}H{n}H", 2 + 2 * n, *[len(f) for f in fields])
    table += bytes(-len(table) % 4)
    body = b"".join(f + bytes(-len(f) % 4) for f in fields)
    return ChangeVector(head + table + body, 0, cv.header_size, endian)


def test_c_checks_agree_with_python_on_random_variants() -> None:
    """Both sides pass or fail together on thousands of variations of the hand-made vectors."""
    rng = random.Random(5)
    seeds = [make() for c in cases.CASES for make in (c[1], c[2])]
    seeds += [cases.vec(11, 5, _fields(cv), endian=">") for cv in seeds if cv.opcode == 0x0B05]
    failed = passed = 0
    for n in range(6000):
        cv = _variant(rng.choice(seeds), rng)
        compat = rng.choice((cases.V19, cases.V11))
        py = python_passes(cv, compat)
        assert native_passes(cv, compat) == py, f"variant {n}: {cv!r} compat {compat:#x}: python passes={py}"
        failed += not py
        passed += py
    assert failed > 1000 and passed > 1000  # the variants do reach both sides of the checks


# ----------------------------------------------------------------------------- whole records
def _error(parser_opts: Any, files: Any, native: bool, replace: dict[int, list[Any]] | None = None) -> str | None:
    """Run the files through a parser (``native``: with the native dispatch); the coded error."""
    parser = Parser(parser_opts, lambda txn: list(txn.changes))
    if native:
        wiring.attach_dispatch(parser)
    try:
        for header, lwns in files:
            parser.start_file(header)
            for lwn in lwns:
                if replace and any(id(r) in replace for r in lwn.records):
                    lwn = dataclasses.replace(lwn, records=[x for r in lwn.records for x in replace.get(id(r), [r])])
                parser.process_lwn(lwn)
            parser.end_file()
    except RedoLogError as exc:
        return f"{exc.code} {exc.message}"
    return None


RECORD_CASES = sorted(
    name
    for name in dir(records)
    if name.startswith("test_") and name != "test_headers_carry_the_path_given_to_the_reader"
)


@pytest.mark.parametrize("name", RECORD_CASES)
def test_patched_records_fail_alike_in_both_engines(name: str, demo: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each patched record of test_invariants_records.py: the same coded error from both engines."""
    made: list[tuple[Any, ...]] = []
    monkeypatch.setattr(records, "_expect", lambda *args: made.append(args))
    getattr(records, name)(demo)
    if name == "test_unpatched_demo_redo_passes_every_check":
        assert _error(*demo, native=True) is None
        return
    assert len(made) == 1
    opts, files, header, rec, cv, patched, code, text = made[0]
    python = _error(opts, files, False, {id(rec): [patched]})
    native = _error(opts, files, True, {id(rec): [patched]})
    assert python is not None and python.startswith(
        f"{code} file {header.path}, block {rec.block}, offset {rec.offset}: {text}"
    ), python
    assert native == python


def _vector_bytes(cv: ChangeVector, fields: list[bytes], code: int | None = None) -> bytes:
    e = cv.endian
    head = bytearray(cv.data[cv.start : cv.start + cv.header_size])
    if code is not None:
        head[1] = code
    n = len(fields)
    table = struct.pack(f"{e}H{n}H", 2 + 2 * n, *[len(f) for f in fields])
    table += bytes(-len(table) % 4)
    return bytes(head) + table + b"".join(f + bytes(-len(f) % 4) for f in fields)


def _record_with(rec: Any, header: Any, vectors: list[bytes]) -> Any:
    data = rec.data[: rec.header_size] + b"".join(vectors)
    return dataclasses.replace(rec, data=struct.pack(header.endian + "I", len(data)) + data[4:])


def _replaced(rec: Any, header: Any, cv: ChangeVector, vector: bytes) -> Any:
    data = rec.data[: cv.start] + vector + rec.data[cv.start + cv.size :]
    return dataclasses.replace(rec, data=struct.pack(header.endian + "I", len(data)) + data[4:])


def test_short_session_field_fails_alike_in_both_engines(demo: Any) -> None:
    """A 5.19 of an open transaction with a 1-byte field 11 (OLR: 5.13.11 needs 2)."""
    opts, files = demo
    header, rec, cv = records._find(files, lambda v: v.opcode == 0x0514)
    fields = [bytes(8)] + [b"x"] * 9 + [bytes(1), bytes(4), bytes(4)]
    patched = _replaced(rec, header, cv, _vector_bytes(cv, fields, code=19))
    python = _error(opts, files, False, {id(rec): [patched]})
    assert python is not None and python.startswith("50061 ") and "too short field 5.13.11: 1" in python, python
    assert _error(opts, files, True, {id(rec): [patched]}) == python
    fields[10] = bytes(2)
    good = _replaced(rec, header, cv, _vector_bytes(cv, fields, code=19))
    assert _error(opts, files, False, {id(rec): [good]}) is None
    assert _error(opts, files, True, {id(rec): [good]}) is None


def _ktub_flags(ktub: bytes, flags: int, endian: str) -> bytes:
    return ktub[:20] + struct.pack(endian + "H", flags) + ktub[22:]


def test_merged_multiblock_undo_fails_alike_in_both_engines(demo: Any) -> None:
    """An update's undo split into a tail piece (its own record, before) and a head piece.

    The pieces pass their checks (they stop at the ktub flags); the 5.1 merged from them is
    checked whole. Split intact it passes; with the tail's last field lost it lacks a
    supplemental value (50006), found at the head piece, in both engines alike.
    """
    opts, files = demo

    def update_undo(v: ChangeVector) -> bool:
        if v.opcode != 0x0501 or v.field_count < 9 or records._kdo_op(v, 4) != 5 or v.field(4)[26]:
            return False
        head = 6 + v.field(4)[23]
        return v.flen(head) == 20 and struct.unpack_from("<H", v.field(head), 2)[0] == v.field_count - head - 2 > 0

    header, rec, cv = records._find(files, update_undo)
    e = header.endian
    fields = _fields(cv)
    flags = struct.unpack_from(e + "H", fields[1], 20)[0] & ~(
        U.UNDO_HEAD | U.UNDO_TAIL | U.UNDO_MID | U.UNDO_LAST_SPLIT
    )
    head_fields = [fields[0], _ktub_flags(fields[1], flags | U.UNDO_HEAD, e)] + fields[2:5]
    tail_fields = [fields[0], _ktub_flags(fields[1], flags | U.UNDO_TAIL, e)] + fields[5:]
    head_rec = _replaced(rec, header, cv, _vector_bytes(cv, head_fields))
    outcome = {}
    for label, tail in (("intact", tail_fields), ("cut", tail_fields[:-1])):
        tail_rec = _record_with(rec, header, [_vector_bytes(cv, tail)])
        split = {id(rec): [tail_rec, head_rec]}
        python = _error(opts, files, False, split)
        assert _error(opts, files, True, split) == python
        outcome[label] = python
    assert outcome["intact"] is None
    cut = outcome["cut"]
    assert cut is not None and cut.startswith(
        f"50006 file {header.path}, block {rec.block}, offset {rec.offset}: "
        f"field missing in vector, field: {len(fields)}/{len(fields) - 1}"
    ), cut
    assert cut.endswith(f" offset: {rec.block * header.block_size + rec.offset + cv.start}"), cut


def test_bad_redo_file_stops_both_engines_alike(tmp_path: Path) -> None:
    """A whole batch job (reader, dispatch, commit) over redo with an 11.2 NULL column that has
    data: both engines stop with the same 50061, and give the same output before it."""
    from native_diff import assert_same, config_of

    from replicator.redo.reader import read_lwns
    from replicator.redo.vectors import iter_vectors
    from replicator.redogen.demo import demo_scenario
    from replicator.redogen.generate import generate

    result = generate(demo_scenario(), tmp_path / "gen", with_expected=False)
    cfg = config_of(result)
    cfg["source"][0]["reader"]["disable-checks"] = 4  # the patched block keeps its old checksum
    assert_same(cfg, tmp_path)
    for log in result.logs:
        headers: list[Any] = []
        for lwn in read_lwns(str(log.path), header_out=headers):
            header = headers[0]
            for rec in lwn.records:
                for cv in iter_vectors(rec.data, rec.header_size, header.vector_header_size, header.endian):
                    at = cv.offsets[1] + 45 if cv.opcode == 0x0B02 and cv.field_count >= 3 else 0
                    if (
                        at
                        and cv.flen(3) > 0
                        and cv.field(2)[18] > 1
                        and rec.offset + at < header.block_size
                        and cv.flen(3) != struct.unpack_from("<H", cv.field(2), 40)[0]
                    ):
                        data = bytearray(Path(log.path).read_bytes())
                        data[rec.block * header.block_size + rec.offset + at] |= 0x01
                        Path(log.path).write_bytes(bytes(data))
                        python = assert_same(cfg, tmp_path)
                        assert (
                            python["error"] is not None
                            and "50061" in python["error"]
                            and f"too short field 11.2.3: {cv.flen(3)} offset: " in python["error"]
                        ), python["error"]
                        return
    raise AssertionError("the demo redo has no IRP with a value in its first column")
