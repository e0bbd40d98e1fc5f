"""Reproduce the real Oracle Free 23 fixture: same expected output, same vector layouts."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from redocheck import Rec, check_file
from redogen_helpers import pipeline_missing, run_pipeline

from replicator.redogen.generate import generate
from replicator.redogen.scenario import ColumnSpec, Event, Scenario, SessionSpec, TableSpec


def fixture_scenario() -> Scenario:
    """INSERT INTO OLR_TEST.TEST_CDC VALUES (1, 'hello world'); COMMIT; with the fixture's identities."""
    table = TableSpec(
        "OLR_TEST",
        "TEST_CDC",
        [ColumnSpec("ID", "NUMBER", False), ColumnSpec("NAME", "VARCHAR2(100)")],
        ["ID"],
        obj=72726,
    )
    return Scenario(
        name="TEST",
        database="FREE",
        version="23",
        dbid=0x593AA8AE,
        activation=0x593A4BAE,
        resetlogs=0x4903676E,
        resetlogs_scn=0x1F75EE,
        start_scn=2267706,
        start_time=1772847880,
        first_sequence=15,
        tables=[table],
        sessions=[SessionSpec(1, "OLR_TEST", 56, 0xCC81, 0x753E)],
        timeline=[
            Event("insert", 1, "TEST_CDC", {"ID": 1, "NAME": "hello world"}, xid="10.12.572"),
            Event("commit", 1),
        ],
    )


_XID = struct.pack("<HHI", 12, 0, 572)  # slot 12, SQN 572 as 5.2/5.4 f1 start


def _by_ops(records: list[Rec], ops: list[tuple[int, int]]) -> Rec:
    """The record of transaction 10.12.572 whose vectors start with ``ops``."""
    return next(
        r for r in records if [v.op for v in r.vectors][: len(ops)] == ops and r.vectors[0].fields[0][:8] == _XID
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory):
    return generate(fixture_scenario(), tmp_path_factory.mktemp("fixture23"))


def test_expected_output_equals_fixture(fixture23: Path, generated) -> None:
    assert generated.expected.read_bytes() == (fixture23 / "expected-output.json").read_bytes()


def test_vector_layouts_equal_fixture(fixture23: Path, generated) -> None:
    real = check_file(fixture23 / "arch1_15_1224959854.dbf").records
    ours = check_file(generated.logs[0].path).records
    insert = [(5, 2), (5, 1), (11, 2), (5, 20)]
    r_real, r_ours = _by_ops(real, insert), _by_ops(ours, insert)
    for a, b in zip(r_real.vectors, r_ours.vectors):
        assert [len(f) for f in a.fields] == [len(f) for f in b.fields], a.op
        assert a.header[:4] == b.header[:4] or a.op == (5, 20)  # layer, code, CLS (undo class of USN 10)
        assert a.header[21:26] == b.header[21:26], a.op  # TYP, OBJ low, CON_ID
    kdo_real, kdo_ours = r_real.vectors[2].fields[1], r_ours.vectors[2].fields[1]
    assert kdo_real[10:13] == kdo_ours[10:13] and kdo_real[16:19] == kdo_ours[16:19]  # op, xtype, itl; fb lb cc
    assert kdo_real[40:46] == kdo_ours[40:46]  # row size, slot, tabn, null bitmap
    assert r_real.vectors[2].fields[2:] == r_ours.vectors[2].fields[2:]  # the column data
    ktb_real, ktb_ours = r_real.vectors[2].fields[0], r_ours.vectors[2].fields[0]
    assert ktb_real[:16] == ktb_ours[:16]  # op F, flags, XID 10.12.572
    supp_real, supp_ours = r_real.vectors[1].fields[4], r_ours.vectors[1].fields[4]
    assert supp_real[:10] == supp_ours[:10]  # type, fb, cc, before/after
    assert r_real.vectors[1].fields[0][8:16] == r_ours.vectors[1].fields[0][8:16]  # ktudb XID
    ktubl_real, ktubl_ours = r_real.vectors[1].fields[1], r_ours.vectors[1].fields[1]
    assert ktubl_real[:12] == ktubl_ours[:12] and ktubl_real[16:22] == ktubl_ours[16:22]
    s_real, s_ours = r_real.vectors[3].fields, r_ours.vectors[3].fields
    assert s_real == s_ours  # 5.20: session/serial, flags, version, audit id, login user
    commit_real, commit_ours = _by_ops(real, [(5, 4)]), _by_ops(ours, [(5, 4)])
    assert [len(f) for f in commit_real.vectors[0].fields] == [len(f) for f in commit_ours.vectors[0].fields]
    assert commit_real.vectors[0].fields[0][:8] == commit_ours.vectors[0].fields[0][:8]
    assert commit_real.vectors[0].fields[3] == commit_ours.vectors[0].fields[3]  # unix commit time
    assert r_ours.scn == r_real.scn and commit_ours.scn == commit_real.scn


def test_header_fields_equal_fixture(fixture23: Path, generated) -> None:
    real = (fixture23 / "arch1_15_1224959854.dbf").read_bytes()[512:1024]
    ours = generated.logs[0].path.read_bytes()[512:1024]
    for off, size in (
        (8, 4),
        (20, 4),
        (24, 4),
        (28, 8),
        (44, 4),
        (50, 2),
        (52, 4),
        (160, 4),
        (164, 8),
        (176, 2),
        (204, 4),
        (236, 4),
    ):
        assert ours[off : off + size] == real[off : off + size], off


def test_pipeline_reproduces_fixture_output(fixture23: Path, generated) -> None:
    reason = pipeline_missing()
    if reason:
        pytest.skip(reason)
    assert run_pipeline(generated.config) == 0
    assert generated.output.read_bytes() == (fixture23 / "expected-output.json").read_bytes()
