"""The comparison of two spooled sides: every kind of difference, bounds, buckets and tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicator.formats.olr_digest import KIND_ROW, KIND_TXN, Change, ChangeId
from replicator.verify.compare import DIFFERS, DUPLICATED, EXTRA, MISSING, Bounds, compare
from replicator.verify.spool import Spool, TableNames, xid_key


def _change(scn: int, idx: int, xid: str, digest: int, table: str = "T", kind: int = KIND_ROW) -> Change:
    return Change(ChangeId(scn, idx, 0, xid), "APP" if kind else "", table if kind else "", kind, digest)


def _spools(tmp_path: Path, redo: list[Change], sink: list[tuple[Change, int]], buckets: int) -> tuple[Spool, Spool]:
    tables = TableNames()
    r, s = Spool(tmp_path, f"r{buckets}", buckets, tables), Spool(tmp_path, f"s{buckets}", buckets, tables)
    for n, change in enumerate(redo):
        r.add(change, n)
    for change, place in sink:
        s.add(change, place)
    r.flush()
    s.flush()
    return r, s


def _stream() -> list[Change]:
    """Forty transactions of a begin, three rows and a commit; two share a begin SCN."""
    out = []
    for t in range(40):
        scn, xid = 1000 + t // 2 * 2, f"1.{t}.9"
        out.append(_change(scn, 1, xid, 0, kind=KIND_TXN))
        out += [_change(scn, 2 + r, xid, (t * 7 + r) * 1_000_003, f"T{r}") for r in range(3)]
        out.append(_change(scn, 5, xid, 1, kind=KIND_TXN))
    return out


@pytest.mark.parametrize("buckets", [1, 3])
def test_every_kind_of_difference_with_its_position(tmp_path: Path, buckets: int) -> None:
    redo = _stream()
    sink = [(c, 10_000 + n) for n, c in enumerate(redo)]
    lost = sink.pop(17)  # transaction 3, row T1
    sink.insert(30, sink[30])  # a row delivered twice
    altered = sink[50][0]
    sink[50] = (altered._replace(digest=altered.digest + 1), sink[50][1])
    sink.append((_change(5000, 1, "9.9.9", 42), 99_999))  # not from this redo
    sink.append((_change(900, 1, "8.8.8", 42), 99_998))  # older than the redo read: not checked
    r, s = _spools(tmp_path, redo, sink, buckets)
    result = compare(r, s, Bounds(cut=None, start=950))
    assert result.counts == {MISSING: 1, DUPLICATED: 1, DIFFERS: 1, EXTRA: 1}
    found = {(d.kind, d.c_scn, d.c_idx, d.xid_key) for d in result.differences}
    dup, dup_place = sink[30]
    assert found == {
        (MISSING, lost[0].id.c_scn, lost[0].id.c_idx, xid_key(lost[0].id.xid)),
        (DUPLICATED, dup.id.c_scn, dup.id.c_idx, xid_key(dup.id.xid)),
        (DIFFERS, altered.id.c_scn, altered.id.c_idx, xid_key(altered.id.xid)),
        (EXTRA, 5000, 1, xid_key("9.9.9")),
    }
    [duplicate] = [d for d in result.differences if d.kind == DUPLICATED]
    assert duplicate.sink == [dup_place, dup_place]
    assert result.before_start == 1 and result.transactions == 41 and result.differing_transactions == 4
    assert result.redo_changes == len(redo)


def test_changes_beyond_the_claim_are_not_missing(tmp_path: Path) -> None:
    redo = _stream()
    held = 120  # the sink got the first 120 messages of the stream
    r, s = _spools(tmp_path, redo, [(c, n) for n, c in enumerate(redo[:held])], 1)
    result = compare(r, s, Bounds(cut=held - 1, start=0))
    assert result.total == 0 and result.not_claimed == len(redo) - held
    result = compare(r, s, Bounds(cut=None, start=0))  # --all: the whole redo must be there
    assert result.counts[MISSING] == len(redo) - held


def test_tables_and_transactions_add_up_and_to_scn_bounds(tmp_path: Path) -> None:
    redo = _stream()
    r, s = _spools(tmp_path, redo, [(c, n) for n, c in enumerate(redo)], 2)
    result = compare(r, s, Bounds(cut=None, start=0))
    assert result.total == 0 and result.redo_tables == result.sink_tables
    assert sum(n for n, _ in result.redo_tables.values()) == len(redo)
    assert len(result.redo_tables) == 4  # T0, T1, T2 and the begin/commit markers
    bounded = compare(r, s, Bounds(cut=None, start=0, to_scn=1010))
    assert bounded.total == 0 and bounded.transactions == 12 and bounded.after_to == 2 * (len(redo) - 12 * 5)


def test_a_sink_ahead_of_the_redo_read(tmp_path: Path) -> None:
    stream = _stream()
    read = 150  # the redo read ends here; the sink has the whole stream
    r, s = _spools(tmp_path, stream[:read], [(c, n) for n, c in enumerate(stream)], 2)
    result = compare(r, s, Bounds(cut=None, start=0, ahead=True))
    assert result.total == 0 and result.after_redo == len(stream) - read
    lost = [(c, n) for n, c in enumerate(stream) if n != 40]  # and one change the redo read holds is missing
    r, s = _spools(tmp_path, stream[:read], lost, 1)
    assert compare(r, s, Bounds(cut=None, start=0, ahead=True)).counts[MISSING] == 1
