"""The job's batch logic without Spark: events -> Delta tables, against an independent replay.

Random OLR JSON streams in the default ``column: 0`` shape (an update carries the key
columns and the changed columns only) with single- and multi-column keys, key moves
(several in one transaction, chains across batches, a move right after an insert),
NULLs, deletes, a producer replay and a stale leftover, cut into batches at random
message boundaries. They go through :meth:`BatchApplier.apply_arrow` (what each
micro-batch runs after Spark has read and parsed the records) and the resulting Delta
tables must equal a plain replay of the same operations on full rows, cell by cell.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("deltalake")

from replicator.spark.apply import BatchApplier  # noqa: E402
from replicator.spark.lakestore import DeltaLake  # noqa: E402
from replicator.spark.metrics import MetricsSink  # noqa: E402
from replicator.spark.options import FormatHints, JobOptions  # noqa: E402
from replicator.spark.parse import parse_batches  # noqa: E402
from replicator.spark.reader import read_rows_arrow  # noqa: E402

NUM = {"type": "number", "precision": 10, "scale": 0}
TABLES = {
    "APP.S": {
        "key": ["ID"],
        "columns": [
            {"name": "ID", **NUM},
            {"name": "A", "type": "varchar2", "length": 20},
            {"name": "N", "type": "number", "precision": 10, "scale": 2},
            {"name": "R", "type": "raw", "length": 8},
        ],
    },
    "APP.M": {
        "key": ["K1", "K2"],
        "columns": [
            {"name": "K1", **NUM},
            {"name": "K2", "type": "varchar2", "length": 5},
            {"name": "V", "type": "varchar2", "length": 20},
            {"name": "W", **NUM},
        ],
    },
}


class Stream:
    """OLR JSON messages (scn-type 8) and the full rows they lead to (the oracle)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.scn = 10_000
        self.messages: list[bytes] = []
        self.txns: list[list[bytes]] = []
        self.rows: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = {t: {} for t in TABLES}
        self.next_id = 1

    def value(self, col: dict[str, Any]) -> Any:
        r = self.rng
        if col["name"] in ("ID", "K1"):
            self.next_id += 1
            return self.next_id
        if r.random() < 0.15 and col["name"] not in ("K2",):
            return None
        return {
            "A": lambda: f"a{r.randrange(1000)}",
            "N": lambda: f"{r.randrange(-9999, 99999)}.{r.randrange(100):02d}",
            "R": lambda: bytes(r.randrange(256) for _ in range(r.randrange(1, 8))).hex().upper(),
            "K2": lambda: r.choice("xyz") + str(r.randrange(50)),
            "V": lambda: f"v{r.randrange(1000)}",
            "W": lambda: r.randrange(10**6),
        }[col["name"]]()

    @staticmethod
    def key(table: str, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row[k] for k in TABLES[table]["key"])

    def op(self, table: str) -> dict[str, Any] | None:
        r, rows, spec = self.rng, self.rows[table], TABLES[table]
        keys = spec["key"]
        choice = r.random()
        el: dict[str, Any] = {"schema": {"owner": "APP", "table": table.split(".")[1], "columns": spec["columns"]}}
        if not rows or choice < 0.3:
            row = {c["name"]: self.value(c) for c in spec["columns"]}
            rows[self.key(table, row)] = row
            return {**el, "op": "c", "after": {k: v for k, v in row.items() if v is not None}}
        old_key = r.choice(sorted(rows, key=str))
        row = rows[old_key]
        if choice < 0.42:
            del rows[old_key]
            return {**el, "op": "d", "before": {k: v for k, v in row.items() if v is not None}}
        changed = r.sample([c for c in spec["columns"] if c["name"] not in keys], r.randrange(0, 3))
        move = choice < 0.72  # a key update
        new = dict(row)
        for c in changed:
            new[c["name"]] = self.value(c)
        if move:
            for k in r.sample(keys, r.randrange(1, len(keys) + 1)):
                new[k] = self.value(next(c for c in spec["columns"] if c["name"] == k))
            if self.key(table, new) in rows:
                return None
        elif not changed:
            return None
        names = keys + [c["name"] for c in changed]
        # OLR prints the key and the changed columns; a NULL is left out (a column set to
        # NULL then shows only in before).
        before = {n: row[n] for n in names if row[n] is not None}
        after = {n: new[n] for n in names if new[n] is not None}
        for n in names:
            if new[n] is None and n not in before:
                before[n] = "x"  # any value: only its presence says the column became NULL
        del rows[old_key]
        rows[self.key(table, new)] = new
        return {**el, "op": "u", "before": before, "after": after}

    def txn(self, n_ops: int) -> None:
        self.scn += 10
        elements = [{"op": "begin"}]
        while len(elements) < n_ops + 1:
            el = self.op(self.rng.choice(sorted(TABLES)))
            if el is not None:
                elements.append(el)
        elements.append({"op": "commit"})
        lines = [
            json.dumps(
                {
                    "e_scn": self.scn + 5,
                    "e_tm": (self.scn + 5) * 10**9,
                    "c_scn": self.scn,
                    "c_idx": i,
                    "xid": f"1.{self.scn}.1",
                    "payload": [el],
                }
            ).encode()
            for i, el in enumerate(elements, 1)
        ]
        self.txns.append(lines)
        self.messages += lines


def events(lines: list[bytes]) -> Any:
    """Kafka records -> event rows, as the job's mapInArrow step makes them."""
    import pyarrow as pa

    n = len(lines)
    batch = pa.RecordBatch.from_pydict(
        {
            "key": [None] * n,
            "value": lines,
            "partition": [0] * n,
            "offset": list(range(n)),
            "timestamp": pa.array([None] * n, pa.timestamp("us", "UTC")),
        }
    )
    return pa.Table.from_batches(list(parse_batches(iter([batch]), FormatHints(scn_type=8).to_json())))


def applier(lake: Path, buckets: int = 4, mode: str = "copy-on-write", whole_below_mb: float = 0.0) -> BatchApplier:
    """The job's applier; by default every table folds per bucket (the job folds small ones whole)."""
    opts = JobOptions(
        lake=str(lake),
        keys={t: s["key"] for t, s in TABLES.items()},
        hints=FormatHints(scn_type=8),
        buckets=buckets,
        mode=mode,
        whole_below_mb=whole_below_mb,
    )
    a = BatchApplier(opts, DeltaLake(str(lake)), MetricsSink(str(lake)))
    a.set_query("test-query")
    return a


def canon(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """A row in comparable Python values (the oracle's or the lake's)."""
    out = {}
    for c in TABLES[table]["columns"]:
        v = row.get(c["name"])
        if v is not None and c["name"] == "N":
            v = Decimal(str(v)).quantize(Decimal("0.01"))
        elif v is not None and c["name"] == "R":
            v = bytes.fromhex(v) if isinstance(v, str) else bytes(v)
        elif v is not None and c["name"] in ("ID", "K1", "W"):
            v = int(v)
        out[c["name"]] = v
    return out


def assert_equal(lake: Path, s: Stream) -> None:
    for table in TABLES:
        want = {s.key(table, r): canon(table, r) for r in s.rows[table].values()}
        got_rows = [canon(table, r) for r in read_rows_arrow(str(lake), table)]
        got = {s.key(table, r): r for r in got_rows}
        assert len(got) == len(got_rows), f"{table}: duplicate keys"
        assert sorted(want, key=str) == sorted(got, key=str), f"{table}: keys differ"
        for k, w in want.items():
            bad = {c: (w[c], got[k][c]) for c in w if w[c] != got[k][c]}
            assert not bad, f"{table} {k}: want/got {bad}"


@pytest.mark.parametrize(
    "seed, mode, whole_below_mb",
    [
        (1, "copy-on-write", 0),
        (2, "copy-on-write", 0),
        (4, "copy-on-write", 64),
        (1, "merge-on-read", 0),
        (3, "merge-on-read", 0),
    ],
)
def test_key_updates_in_random_batches_equal_a_replay(
    tmp_path: Path, seed: int, mode: str, whole_below_mb: float
) -> None:
    """Both table modes (and small tables folded whole): merge-on-read tables are read merged
    (records over the stored rows), and equal the replay before and after their compaction."""
    rng = random.Random(seed)
    s = Stream(rng)
    for _ in range(60):
        s.txn(rng.randrange(1, 7))
    lake = tmp_path / "lake"
    a = applier(lake, mode=mode, whole_below_mb=whole_below_mb)
    cuts = sorted(rng.sample(range(1, len(s.messages)), 7))
    batch = 0
    for lo, hi in zip([0, *cuts], [*cuts, len(s.messages)]):  # transactions split across batches
        m = a.apply_arrow(events(s.messages[lo:hi]), batch)
        if mode == "merge-on-read":  # a batch reads no stored file
            assert all(v[0] == 0 for v in m.io.values())
        batch += 1
    assert a.state.pending_rows == 0
    assert_equal(lake, s)
    moves = sum(
        1
        for m in s.messages
        for el in json.loads(m)["payload"]
        if el["op"] == "u"
        and any(el["before"].get(k) != el["after"].get(k) for k in TABLES["APP." + el["schema"]["table"]]["key"])
    )
    assert moves > 20  # the stream really moves keys, in both tables

    # A producer replay: everything again, then the tail of an applied transaction (no begin)
    # and one new transaction. The leftover is dropped at once and blocks nothing.
    from deltalake import DeltaTable

    logged = DeltaTable(str(lake / "changes")).to_pyarrow_table().num_rows
    if mode == "merge-on-read":  # the records merged into the stored rows: the same rows
        from replicator.spark.housekeeping import compact

        assert compact(a.lake, min_files=100).records_merged > 0
        assert_equal(lake, s)
    metrics = a.apply_arrow(events(s.messages), batch)
    assert metrics.applied == 0 and metrics.stale == metrics.ready > 0
    if mode == "copy-on-write":
        # the stored files were read for the replayed keys; nothing moved forward, so nothing was rewritten
        assert sum(n[0] for n in metrics.io.values()) > 0 and all(n[2] == 0 for n in metrics.io.values())
    else:  # replays known from the change log: no group folded, nothing read or written
        assert not metrics.io
    before = len(s.messages)
    s.txn(3)
    leftover = s.txns[len(s.txns) // 2][2:]
    metrics = a.apply_arrow(events(leftover + s.messages[before:]), batch + 1)
    assert metrics.dropped_txns == 1 and a.state.pending_rows == 0
    assert metrics.applied == 3
    assert "data files read" in metrics.line()
    assert_equal(lake, s)
    assert DeltaTable(str(lake / "changes")).to_pyarrow_table().num_rows == logged + 3
    if mode == "merge-on-read":
        from replicator.spark.housekeeping import compact

        compact(a.lake, min_files=100)
        assert_equal(lake, s)


BOUNDARIES = [
    *((b, "copy-on-write") for b in ("changes:1", "tombstones:1", "table:1", "table:2", "state:1")),
    # merge-on-read: a batch commits the change log, each table's records (recent), the state
    *((b, "merge-on-read") for b in ("changes:1", "recent:1", "recent:2", "state:1")),
]


@pytest.mark.parametrize(("boundary", "mode"), BOUNDARIES)
def test_a_batch_replayed_after_a_crash_at_each_commit_boundary_lands_once(
    tmp_path: Path, boundary: str, mode: str
) -> None:
    """The driver dies right after a commit of a batch (the change log, a table's tombstones, one
    table's rows or records, the other's, the state); the batch again (as Spark retries it) makes
    only the commits that are missing, over the tables as the batch first found them: tables and
    change log hold the batch exactly once."""
    from deltalake import DeltaTable

    rng = random.Random(5)
    s = Stream(rng)
    for _ in range(14):
        s.txn(5)
    lake = tmp_path / "lake"
    a = applier(lake, mode=mode)
    a.apply_arrow(events(s.messages[:30]), 0)

    class Crash(Exception):
        pass

    kind, nth = boundary.split(":")
    seen = {"n": 0}
    real_hit = a._hit

    def hit(k: str) -> None:
        real_hit(k)
        if k == kind:
            seen["n"] += 1
            if seen["n"] == int(nth):
                raise Crash

    a._hit = hit  # type: ignore[method-assign]
    with pytest.raises(Crash):
        a.apply_arrow(events(s.messages[30:]), 1)
    committed = lake / ("_replicator/recent" if kind == "recent" else "tables")
    versions = {p.name: DeltaTable(str(p)).version() for p in committed.iterdir()}
    b = applier(lake, mode=mode)  # the restarted driver
    assert b.state.batch == (1 if kind == "state" else 0)
    if kind != "state":
        b.apply_arrow(events(s.messages[30:]), 1)
    assert b.state.batch == 1 and b.state.pending_rows == 0
    assert_equal(lake, s)
    now = {p.name: DeltaTable(str(p)).version() for p in committed.iterdir()}
    if kind in ("table", "recent") and nth == "1":  # the table committed before the crash was not committed again
        done = [t for t in versions if versions[t] == now[t]]
        assert done
    log = DeltaTable(str(lake / "changes")).to_pyarrow_table(columns=["op"]).num_rows
    assert log == sum(1 for m in s.messages if json.loads(m)["payload"][0]["op"] in ("c", "u", "d"))


def _insert_lines(s: Stream, ids: list[int], tag: str) -> list[bytes]:
    s.scn += 10
    rows = [
        {
            "op": "c",
            "schema": {"owner": "APP", "table": "S", "columns": TABLES["APP.S"]["columns"]},
            "after": {"ID": i, "A": tag},
        }
        for i in ids
    ]
    for el in rows:
        s.rows["APP.S"][(el["after"]["ID"],)] = dict.fromkeys(("ID", "A", "N", "R")) | el["after"]
    return [
        json.dumps({"e_scn": s.scn + 5, "c_scn": s.scn, "c_idx": i, "xid": f"1.{s.scn}.1", "payload": [el]}).encode()
        for i, el in enumerate([{"op": "begin"}, *rows, {"op": "commit"}], 1)
    ]


def _update_lines(s: Stream, ids: list[int], value: str) -> list[bytes]:
    s.scn += 10
    els = [
        {
            "op": "u",
            "schema": {"owner": "APP", "table": "S", "columns": TABLES["APP.S"]["columns"]},
            "before": {"ID": i},
            "after": {"ID": i, "A": value},
        }
        for i in ids
    ]
    for i in ids:
        s.rows["APP.S"][(i,)]["A"] = value
    return [
        json.dumps({"e_scn": s.scn + 5, "c_scn": s.scn, "c_idx": i, "xid": f"1.{s.scn}.1", "payload": [e]}).encode()
        for i, e in enumerate([{"op": "begin"}, *els, {"op": "commit"}], 1)
    ]


def _delete_lines(s: Stream, ids: list[int]) -> list[bytes]:
    s.scn += 10
    els = [
        {
            "op": "d",
            "schema": {"owner": "APP", "table": "S", "columns": TABLES["APP.S"]["columns"]},
            "before": {"ID": i},
        }
        for i in ids
    ]
    for i in ids:
        del s.rows["APP.S"][(i,)]
    return [
        json.dumps({"e_scn": s.scn + 5, "c_scn": s.scn, "c_idx": i, "xid": f"1.{s.scn}.1", "payload": [e]}).encode()
        for i, e in enumerate([{"op": "begin"}, *els, {"op": "commit"}], 1)
    ]


def test_tombstone_files_of_a_bucket_stay_few_over_many_batches_of_deletes(tmp_path: Path) -> None:
    """Each batch's deletes add a tombstone file to their bucket until it holds TOMB_FILES; the
    next batch with deletes merges them into one, so batches never read a growing number."""
    from deltalake import DeltaTable

    from replicator.spark.distfold import TOMB_FILES

    s = Stream(random.Random(4))
    lake = tmp_path / "lake"
    a = applier(lake, buckets=1)
    ids = list(range(5000, 5040))
    a.apply_arrow(events(_insert_lines(s, ids, "x")), 0)
    counts = []
    for batch in range(1, 11):
        # keys spread over the range: each tombstone file's key range overlaps the next batch's keys
        a.apply_arrow(events(_delete_lines(s, ids[batch - 1 :: 10])), batch)
        counts.append(len(DeltaTable(str(lake / "_replicator" / "tombstones" / "APP.S")).file_uris()))
    assert max(counts) == TOMB_FILES and counts.count(1) >= 2  # merged, and merged again
    assert_equal(lake, s)
    from replicator.spark.lake_read import LakeReader

    assert LakeReader(str(lake)).tombstones("APP.S").num_rows == 40  # every delete kept once


def test_a_batch_reads_and_rewrites_only_the_files_that_hold_its_keys(tmp_path: Path) -> None:
    """Inserts of new keys read no stored file; an update rewrites the one file holding its key."""
    from deltalake import DeltaTable

    s = Stream(random.Random(9))
    lake = tmp_path / "lake"
    a = applier(lake, buckets=1)
    for batch in range(3):  # inserts only: each batch adds a file, reads nothing (keys beyond the files' ranges)
        m = a.apply_arrow(events(_insert_lines(s, [100 * (batch + 1) + i for i in range(5)], f"b{batch}")), batch)
        assert m.io["APP.S"][0] == 0 and m.io["APP.S"][3] == 1
    table = DeltaTable(str(lake / "tables" / "APP.S"))
    files = set(table.file_uris())
    assert len(files) == 3
    m = a.apply_arrow(events(_update_lines(s, [201], "changed")), 3)
    assert m.io["APP.S"][:3] == [1, m.io["APP.S"][1], 1]  # one file read, one removed
    table.update_incremental()
    now = set(table.file_uris())
    assert len(files - now) == 1 and len(now - files) == 1  # one file replaced, the other two untouched
    assert_equal(lake, s)


def test_copy_on_write_rewrites_only_the_buckets_a_batch_touches(tmp_path: Path) -> None:
    """Updates of keys of one bucket rewrite that bucket's file only; spread over every bucket, all."""
    from replicator.spark.layout import buckets_of

    s = Stream(random.Random(3))
    lake = tmp_path / "lake"
    a = applier(lake, buckets=8)
    ids = list(range(1000, 1400))
    a.apply_arrow(events(_insert_lines(s, ids, "x")), 0)
    homes = buckets_of([str(i) for i in ids], 8)
    one = [i for i, b in zip(ids, homes) if b == 3][:10]
    m = a.apply_arrow(events(_update_lines(s, one, "skewed")), 1)
    assert m.io["APP.S"][2] == 1 and m.io["APP.S"][3] == 1  # the one bucket's file replaced
    spread = [next(i for i, b in zip(ids, homes) if b == k) for k in range(8)]
    m = a.apply_arrow(events(_update_lines(s, spread, "uniform")), 2)
    assert m.io["APP.S"][2] == 8 and m.io["APP.S"][3] == 8
    assert_equal(lake, s)
    from replicator.spark.lake_read import LakeReader

    rows = LakeReader(str(lake)).current_rows("APP.S", with_metadata=True)
    assert rows.schema.field("ID").type == __import__("pyarrow").int64()  # typed key column, no _key text
    assert "_key" not in rows.column_names and set(rows["_op"].to_pylist()) <= {"c", "u"}


def test_a_small_table_folds_whole_into_the_same_bucketed_files(tmp_path: Path) -> None:
    """Below ``whole_below_mb`` a table is one group per batch: the same rows as by bucket, its
    files still one set per bucket, and a batch still replaces only the files it changes."""
    import pyarrow as pa
    from deltalake import DeltaTable

    from replicator.spark.layout import buckets_of, data_files

    s = Stream(random.Random(3))
    lake = tmp_path / "lake"
    a = applier(lake, buckets=8, whole_below_mb=64)
    ids = list(range(1000, 1400))
    a.apply_arrow(events(_insert_lines(s, ids, "x")), 0)
    table = DeltaTable(str(lake / "tables" / "APP.S"))
    files = data_files(pa.table(table.get_add_actions(flatten=True)), "ID")
    assert sorted(f.bucket for f in files) == list(range(8))  # a file per bucket
    homes = buckets_of([str(i) for i in ids], 8)
    one = [i for i, b in zip(ids, homes) if b == 3][:10]
    m = a.apply_arrow(events(_update_lines(s, one, "skewed")), 1)
    assert m.io["APP.S"][3] == 1  # the one bucket's file replaced (the others read: their key ranges overlap)
    assert_equal(lake, s)


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_a_rename_alone_in_a_batch_keeps_every_row(tmp_path: Path, mode: str) -> None:
    """A batch whose only event for a table is a RENAME COLUMN rewrites the table with its rows
    under the new name (the rewrite's group exists without row changes)."""
    s = Stream(random.Random(2))
    lake = tmp_path / "lake"
    a = applier(lake, buckets=4, mode=mode)
    a.apply_arrow(events(_insert_lines(s, list(range(500, 540)), "x")), 0)
    s.scn += 10
    ddl = {"op": "ddl", "schema": {"owner": "APP", "table": "S"}, "sql": "ALTER TABLE APP.S RENAME COLUMN A TO A2"}
    lines = [
        json.dumps({"e_scn": s.scn + 5, "c_scn": s.scn, "c_idx": i, "xid": "r", "payload": [el]}).encode()
        for i, el in enumerate([{"op": "begin"}, ddl, {"op": "commit"}], 1)
    ]
    a.apply_arrow(events(lines), 1)
    from replicator.spark.lake_read import LakeReader

    rows = LakeReader(str(lake)).current_rows("APP.S")
    assert rows.num_rows == 40 and "A2" in rows.column_names and "A" not in rows.column_names
    assert set(rows["A2"].to_pylist()) == {"x"}


def test_change_log_keys_are_the_json_of_their_values() -> None:
    """The change log's key is ``json.dumps`` of the key values' text, whichever way it is built."""
    from replicator.spark.layout import SEP, key_json, keys_json

    rng = random.Random(5)
    alphabet = [*"az09 _-.", '"', "\\", "\t", "\x7f", "é", "\u20ac", "\U0001f600"]
    keys: list[str | None] = []
    for n in range(5000):
        values = [
            "".join(rng.choice(alphabet[: 8 if n % 2 else None]) for _ in range(rng.randrange(4)))
            for _ in range(rng.randrange(1, 4))
        ]
        keys.append(SEP.join(values))
        assert key_json(keys[-1]) == json.dumps(values, separators=(",", ":"))
    assert key_json(None) is None
    plain = [*keys[1::2], None]  # the Arrow path (no escapes) and the key-by-key one
    for some in (plain, [*keys, None]):
        assert keys_json(some).to_pylist() == [key_json(k) for k in some]
    assert any(key_json(k) != '["' + k.replace(SEP, '","') + '"]' for k in keys[::2])


@pytest.mark.parametrize(("op", "keys"), [("c", (None, None)), ("u", (None, "K1")), ("d", ("K1", None))])
def test_a_row_change_without_its_key_is_refused_by_the_fold(op: str, keys: tuple[str | None, str | None]) -> None:
    """The routing holds back changes that lack the key they leave a row under; one that still
    reaches the fold is an internal error, not a row keyed NULL."""
    from replicator.errors import InternalError
    from replicator.spark.tablefold import TablePlan, fold_table
    from replicator.spark.tableschema import TableSchema

    ev = {"commit_scn": [10], "c_scn": [10], "c_idx": [1], "elem": [0], "op": [op], "xid": ["1.2.3"], "commit_ts": [0]}
    plan = TablePlan(TableSchema("O.T"), rows=[0], keys=[keys])
    with pytest.raises(InternalError, match="without its key"):
        fold_table(ev, plan, None, 0, "")
