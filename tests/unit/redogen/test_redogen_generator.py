"""What the engine writes for each kind of statement, checked with the independent reader."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from redocheck import Rec, check_file

from replicator.errors import ConfigError
from replicator.redogen.generate import generate
from replicator.redogen.generator import RedoGenerator
from replicator.redogen.scenario import ColumnSpec, Event, Scenario, TableSpec

E = Event


def _t(name: str = "T", ncols: int = 3, col: str = "VARCHAR2(40)", **kw) -> TableSpec:
    cols = [ColumnSpec("ID", "NUMBER", False)] + [ColumnSpec(f"C{i}", col) for i in range(1, ncols)]
    return TableSpec("APP", name, cols, ["ID"], **kw)


def _run(tmp_path: Path, timeline: list[Event], tables: list[TableSpec] | None = None, **kw):
    sc = Scenario(tables=tables or [_t()], timeline=timeline, **kw)
    result = generate(sc, tmp_path)
    records: list[Rec] = []
    for log in result.logs:
        records.extend(check_file(log.path).records)
    return result, records


def _ops(records: list[Rec]) -> list[list[tuple[int, int]]]:
    return [[v.op for v in r.vectors] for r in records]


def _kdo(rec: Rec, layer11: bool = True) -> bytes:
    v = next(v for v in rec.vectors if v.layer == (11 if layer11 else 5))
    return v.fields[1] if layer11 else v.fields[3]


def test_insert_commit_shape(tmp_path: Path) -> None:
    _, recs = _run(tmp_path, [E("insert", 1, "T", {"ID": 1, "C1": "a"}), E("commit", 1)])
    assert _ops(recs) == [[(5, 2), (5, 1), (11, 2), (5, 20)], [(5, 4)]]
    commit = recs[1]
    assert commit.scn == recs[0].scn + 1  # the commit takes a new SCN
    assert commit.vectors[0].fields[0][16] == 0x02  # commit, with ktucf


def test_rollback_writes_compensations_newest_first(tmp_path: Path) -> None:
    result, recs = _run(
        tmp_path,
        [
            E("insert", 1, "T", {"ID": 1, "C1": "a"}),
            E("commit", 1),
            E("insert", 2, "T", {"ID": 2}),
            E("update", 2, "T", key={"ID": 1}, values={"C1": "b"}),
            E("delete", 2, "T", key={"ID": 1}),
            E("rollback", 2),
        ],
    )
    ops = _ops(recs)
    assert ops[-4:] == [[(11, 2), (5, 11)], [(11, 5), (5, 11)], [(11, 3), (5, 11)], [(5, 4)]]
    assert recs[-1].vectors[0].fields[0][16] == 0x04  # rollback flag
    comp = recs[-4].vectors[0].fields[1]
    assert comp[11] == 2  # KDO xtype XR (rollback)
    ktub = recs[-4].vectors[1].fields[0]
    assert ktub[20] & 0x10  # user undo done
    assert result.expected.read_bytes().count(b"\n") == 3  # only the first transaction


def test_savepoint_partial_rollback(tmp_path: Path) -> None:
    result, recs = _run(
        tmp_path,
        [
            E("savepoint", 1, name="s0"),
            E("insert", 1, "T", {"ID": 1}),
            E("savepoint", 1, name="s1"),
            E("insert", 1, "T", {"ID": 2}),
            E("insert_many", 1, "T", rows=[{"ID": 3}, {"ID": 4}]),
            E("rollback_to", 1, name="s1"),
            E("insert", 1, "T", {"ID": 2, "C1": "again"}),
            E("commit", 1),
        ],
    )
    ops = _ops(recs)
    assert [(11, 12), (5, 11)] in ops and [(11, 3), (5, 11)] in ops
    text = result.expected.read_text()
    assert '"ID":1' in text and '"C1":"again"' in text and '"ID":3' not in text and '"ID":4' not in text


def test_multi_row_insert_and_delete(tmp_path: Path) -> None:
    _, recs = _run(
        tmp_path,
        [
            E("insert_many", 1, "T", rows=[{"ID": i, "C1": "x" * (i % 300)} for i in range(10)]),
            E("delete_many", 1, "T", rows=[{"ID": 2}, {"ID": 3}]),
            E("commit", 1),
        ],
    )
    qmi = next(r for r in recs if (11, 11) in [v.op for v in r.vectors])
    kdo = _kdo(qmi)
    nrow = kdo[18]
    sizes = qmi.vectors[2].fields[2]
    assert nrow == 10 and len(sizes) == 2 * nrow and kdo[10] & 0x1F == 11
    rows = qmi.vectors[2].fields[3]
    assert len(rows) == sum(struct.unpack(f"<{nrow}H", sizes))
    assert rows[0] == 0x2C  # fb of the first row: --H-FL--
    qmd = next(r for r in recs if (11, 12) in [v.op for v in r.vectors])
    undo = qmd.vectors[0].fields
    assert undo[3][10] & 0x1F == 11 and undo[3][18] == 2  # undo is a QMI with the 2 deleted rows


def test_chained_row_over_blocks(tmp_path: Path) -> None:
    # A 4000-byte value in 2 KiB blocks is split over pieces (a VARCHAR2 over 4000 bytes would be
    # an extended type, stored as a LOB, not in the row).
    big = _t("BIG", 3, "VARCHAR2(4000)")
    value = "v" * 4000
    result, recs = _run(
        tmp_path,
        [
            E("insert", 1, "BIG", {"ID": 1, "C1": value, "C2": "tail"}),
            E("commit", 1),
            E("delete", 1, "BIG", key={"ID": 1}),
            E("commit", 1),
        ],
        [big],
        db_block_size=2048,
    )
    inserts = [r for r in recs if (11, 2) in [v.op for v in r.vectors]]
    assert len(inserts) >= 3
    fbs = [_kdo(r)[16] for r in inserts]
    assert fbs[0] & 0x04 and fbs[-1] & 0x28 == 0x28  # last piece written first, head piece last
    assert any(fb & 0x03 == 0x03 for fb in fbs)  # a middle part of the split column: P|N
    supp = [next(v for v in r.vectors if v.op == (5, 1)).fields[4] for r in inserts]
    assert all(len(s) == 28 for s in supp) and len({s[20:26] for s in supp}) == 1  # one head ROWID
    assert [s[1] & 0x0C for s in supp] == [0x08] + [0] * (len(supp) - 2) + [0x04]  # F first, L last
    assert value in result.expected.read_text()


def test_wide_table_pieces(tmp_path: Path) -> None:
    wide = _t("W", 300, "VARCHAR2(5)")
    _, recs = _run(tmp_path, [E("insert", 1, "W", {"ID": 1, "C299": "z"}), E("commit", 1)], [wide])
    inserts = [r for r in recs if (11, 2) in [v.op for v in r.vectors]]
    ccs = [_kdo(r)[18] for r in inserts]
    afters = [struct.unpack_from("<H", next(v for v in r.vectors if v.op == (5, 1)).fields[4], 8)[0] for r in inserts]
    assert ccs == [255, 45] and afters == [46, 1]


def test_log_switches_and_names(tmp_path: Path) -> None:
    result, _ = _run(
        tmp_path,
        [
            E("insert", 1, "T", {"ID": 1}),
            E("switch"),
            E("commit", 1),
            E("switch"),
            E("insert", 1, "T", {"ID": 2}),
            E("commit", 1),
        ],
        first_sequence=41,
        log_archive_format="o1_mf_%t_%s_%h_.arc",
    )
    seqs = [log.sequence for log in result.logs]
    assert seqs == [41, 42, 43]
    for a, b in zip(result.logs, result.logs[1:]):
        assert a.next_scn == b.first_scn
    assert all(log.path.name.startswith(f"o1_mf_1_{log.sequence}_") for log in result.logs)


def test_size_triggered_switch(tmp_path: Path) -> None:
    tl = [E("insert", 1, "T", {"ID": i, "C1": "x" * 40}) for i in range(200)] + [E("commit", 1)]
    result, _ = _run(tmp_path, tl, log_blocks=64, lwn_max_blocks=8)
    assert len(result.logs) >= 3 and all(log.blocks <= 64 for log in result.logs)


@pytest.mark.parametrize(
    "version,hdr,fields_5_4,subscn_grows", [("11.2", 24, 3, True), ("19", 32, 3, True), ("23", 32, 4, False)]
)
def test_version_dialects(tmp_path: Path, version: str, hdr: int, fields_5_4: int, subscn_grows: bool) -> None:
    _, recs = _run(
        tmp_path, [E("insert", 1, "T", {"ID": 1}), E("insert", 1, "T", {"ID": 2}), E("commit", 1)], version=version
    )
    assert len(recs[0].vectors[0].header) == hdr
    assert len(recs[-1].vectors[0].fields) == fields_5_4
    assert (recs[1].subscn > recs[0].subscn) == subscn_grows


@pytest.mark.parametrize(
    "timeline,message",
    [
        ([E("insert", 1, "T", {"ID": 1}), E("insert", 2, "T", {"ID": 1})], "duplicate"),
        (
            [
                E("insert", 1, "T", {"ID": 1}),
                E("commit", 1),
                E("update", 1, "T", key={"ID": 1}, values={"C1": "a"}),
                E("delete", 2, "T", key={"ID": 1}),
            ],
            "locked",
        ),
        ([E("insert", 1, "T", {"C1": "no key"})], "cannot be NULL"),
        ([E("insert", 1, "T", {"ID": 1, "NOPE": 1})], "no column"),
        ([E("delete", 1, "T", key={"ID": 9})], "no row"),
        ([E("rollback_to", 1, name="never")], "no savepoint"),
        ([E("insert", 1, "X", {"ID": 1})], "no table"),
    ],
)
def test_invalid_timelines(tmp_path: Path, timeline: list[Event], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RedoGenerator(Scenario(tables=[_t()], timeline=timeline), tmp_path).run()


def test_update_of_split_column_is_refused(tmp_path: Path) -> None:
    tl = [E("insert", 1, "T", {"ID": 1, "C1": "x" * 4000}), E("update", 1, "T", key={"ID": 1}, values={"C1": "y"})]
    with pytest.raises(ConfigError, match="split"):
        RedoGenerator(Scenario(tables=[_t("T", 2, "VARCHAR2(4000)")], timeline=tl, db_block_size=2048), tmp_path).run()


def test_boolean_needs_23(tmp_path: Path) -> None:
    t = TableSpec("APP", "B", [ColumnSpec("ID", "NUMBER", False), ColumnSpec("F", "BOOLEAN")], ["ID"])
    with pytest.raises(ConfigError, match="BOOLEAN"):
        RedoGenerator(Scenario(tables=[t], version="19"), tmp_path)
    RedoGenerator(Scenario(tables=[t], version="23"), tmp_path)


def test_open_transactions_stay_open(tmp_path: Path) -> None:
    result, recs = _run(tmp_path, [E("insert", s, "T", {"ID": s}) for s in range(1, 40)] + [E("commit", 7)])
    assert sum(1 for r in recs if (5, 4) in [v.op for v in r.vectors]) == 1
    xids = {r.vectors[0].fields[0][:8] + r.vectors[0].header[2:4] for r in recs if r.vectors[0].op == (5, 2)}
    assert len(xids) == 39  # distinct (CLS, slot, SQN) for concurrent transactions
    assert result.expected.read_bytes().count(b"\n") == 3
