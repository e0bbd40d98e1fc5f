"""The parser on the real fixtures: which transactions come out, with which raw values."""

from __future__ import annotations

from pathlib import Path

from replicator.events import Column, Table, Transaction
from replicator.redo.parser import Parser, ParserOptions
from replicator.redo.reader import list_batch_files, read_lwns


def _run(files, options: ParserOptions) -> tuple[list[Transaction], Parser]:
    out: list[Transaction] = []
    parser = Parser(options, out.append)
    for f in files:
        headers = []
        for i, lwn in enumerate(read_lwns(f.path, header_out=headers)):
            if i == 0:
                parser.start_file(headers[0])
            parser.process_lwn(lwn)
        parser.end_file()
    return out, parser


def _test_cdc() -> Table:
    cols = [Column("ID", 2, 22, -1, -1, 0, 0, False, 1, key=True), Column("NAME", 1, 100, -1, -1, 1, 873, True, 2)]
    return Table(72726, 72726, "OLR_TEST", "TEST_CDC", cols, (0,))


def test_free23_single_insert(free23: Path) -> None:
    files = list_batch_files([str(free23)], "arch%t_%s_%r.dbf")
    txns, parser = _run(files, ParserOptions(tables={72726: _test_cdc()}, first_data_scn=2266634, con_id=3))
    assert len(txns) == 1
    t = txns[0]
    assert (t.usn, t.slot, t.sqn) == (10, 12, 572)
    assert (t.begin_scn, t.commit_scn, t.begin_time) == (2267707, 2267708, 1772847880)
    assert t.attributes["login username"] == "OLR_TEST"
    (row,) = t.changes
    assert row.op == "c" and row.after == {0: b"\xc1\x02", 1: b"hello world"}
    assert (row.bdba, row.slot, row.data_obj) == (0x0600000E, 0, 72726)
    assert parser.stats.unknown_opcodes == {}
    assert len(parser.buffer) == 0 or all(not t.ops for t in parser.buffer.open_transactions())


def test_ora19_schemaless_every_transaction(ora19: Path) -> None:
    files = list_batch_files([str(ora19)], "o1_mf_%t_%s_%h_.arc")
    txns, parser = _run(files, ParserOptions(tables={}, schemaless=True))
    assert [hex(t.xid) for t in txns] == ["0x5000100000be2", "0x8000100000be6", "0xa000100000bc2", "0x7001900000bc9"]
    ops = [[c.op for c in t.changes] for t in txns]
    assert ops == [["c", "u"], ["u"], ["d", "d"], ["c", "c"]]
    assert parser.stats.rollbacks == 1
    update = txns[1].changes[0]
    assert update.before[4] == b"\xc3\x07" and update.after[4] == b"\xc3\x08\x1a\x1f"
