"""The fold's vectorised pass against its loop: random groups of row changes, both passes, the same result.

Each group is what a fold task gets (:func:`replicator.spark.distfold._fold`): one table's
row changes with their keys, in position order, over the stored rows of those keys. The
changes are inserts (columns left out: NULL), updates with partial images (the key and
some columns; a column only in ``before`` became NULL), deletes, repeated keys
(insert after delete, update after delete, many updates), exact replays (equal
positions) and changes at or below the stored position; the stored rows are present for
some keys (one of them twice: a data row and a tombstone), absent for the others.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

import pytest

pytest.importorskip("pyarrow")

from replicator.spark import tablefold  # noqa: E402
from replicator.spark.arrowconv import column_type, metadata_schema  # noqa: E402
from replicator.spark.distfold import _ev, _no_events  # noqa: E402
from replicator.spark.tablefold import TablePlan, change_rows, fold_table  # noqa: E402
from replicator.spark.tableschema import TableSchema  # noqa: E402

COLUMNS = [
    {"name": "ID", "type": "number", "precision": 10, "scale": 0},
    {"name": "A", "type": "varchar2", "length": 20},
    {"name": "N", "type": "number", "precision": 10, "scale": 2},
    {"name": "B", "type": "varchar2", "length": 20},
]
OTHERS = ["A", "N", "B"]


def _value(rng: random.Random, name: str) -> str:
    return (
        f"{rng.randrange(-999, 9999)}.{rng.randrange(100):02d}" if name == "N" else f"{name.lower()}{rng.randrange(99)}"
    )


def _group(rng: random.Random, moves: bool, replay: bool = False) -> tuple[Any, list[int], Any, Any]:
    """(events, their position order, (new keys, old keys) in that order, stored rows)."""
    import pyarrow as pa

    pool = list(range(1, rng.randrange(3, 40)))
    events: list[dict[str, Any]] = []
    scn = 5_000
    for _ in range(rng.randrange(1, 120)):
        scn += rng.randrange(0, 3)
        op = rng.choice("cccuuuuud")
        k = rng.choice(pool)
        nk = ok = str(k)
        before: dict[str, str] = {}
        after: dict[str, str] = {}
        if op == "c":
            after = {"ID": nk, **{c: _value(rng, c) for c in OTHERS if rng.random() < 0.7}}
        elif op == "d":
            before = {"ID": nk, **{c: _value(rng, c) for c in OTHERS if rng.random() < 0.5}}
        else:
            if moves and rng.random() < 0.1:
                nk = str(rng.choice(pool))
            before, after = {"ID": ok}, {"ID": nk}
            for c in rng.sample(OTHERS, rng.randrange(0, 3)):
                if rng.random() < 0.2:
                    before[c] = "x"  # only in before: the column became NULL
                else:
                    after[c] = _value(rng, c)
        events.append(
            {
                "kind": "dml",
                "op": op,
                "commit_scn": scn,
                "c_scn": scn - 1,
                "c_idx": rng.randrange(1, 4),
                "elem": rng.randrange(0, 2),
                "xid": f"x{scn}",
                "commit_ts": scn * 1000,
                "before": list(before.items()),
                "after": list(after.items()),
                "_nk": nk,
                "_ok": ok,
            }
        )
    events += [dict(rng.choice(events)) for _ in range(rng.randrange(0, 5))]  # exact replays
    rng.shuffle(events)  # the group comes unsorted: the fold takes it in position order
    table = pa.Table.from_pylist(events, schema=_no_events().schema)
    order = sorted(range(len(events)), key=lambda i: [events[i][c] for c in ("commit_scn", "c_scn", "c_idx", "elem")])
    at = pa.array(order, pa.int64())
    keys = (table["_nk"].take(at), table["_ok"].take(at))
    stored = None
    if replay or rng.random() < 0.8:
        held = pool if replay else [k for k in pool if rng.random() < 0.5]
        held += rng.sample(held, min(len(held), 1))  # a key held twice: its last row counts
        types = {c["name"]: column_type(c, "string") for c in COLUMNS}
        meta = dict(metadata_schema())
        rows = [
            {
                "ID": k,
                "A": f"stored{k}",
                "N": None if rng.random() < 0.3 else Decimal(f"{k}.5"),
                "B": None,
                "_commit_scn": 10**6 if replay else rng.randrange(4_990, 5_100),
                "_c_scn": 0,
                "_c_idx": 0,
                "_elem": 0,
                "_op": rng.choice("cud"),
                "_xid": "s",
                "_commit_ts": 1_000,
                "_key": str(k),
            }
            for k in held
        ]
        fields = [*((n, types[n]) for n in ("ID", "A", "N", "B")), *meta.items(), ("_key", pa.string())]
        stored = pa.Table.from_pylist(rows, schema=pa.schema(fields))
    return table, order, keys, stored


def _fold_both(
    table: Any, order: list[int], keys: Any, stored: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any]:
    schema = TableSchema("APP.T", [dict(c) for c in COLUMNS], key=["ID"], key_origin="--key")

    def fold() -> Any:
        plan = TablePlan(schema, rows=order, key_arrays=keys)
        return fold_table(_ev(table), plan, stored, 0, "string")

    fast = fold()
    with monkeypatch.context() as m:
        m.setattr(tablefold, "_fast_pass", lambda *a: None)
        loop = fold()
    return fast, loop


def _same(fast: Any, loop: Any, table: Any) -> None:
    assert fast.rows.schema == loop.rows.schema
    assert fast.rows.to_pylist() == loop.rows.to_pylist()
    assert (fast.changes, fast.change_keys, fast.stale) == (loop.changes, loop.change_keys, loop.stale)
    log = [change_rows(_ev(table), "APP.T", f.changes, f.change_keys, []) for f in (fast, loop)]
    assert log[0].equals(log[1])


@pytest.mark.parametrize("seed", range(40))
def test_the_vectorised_pass_folds_as_the_loop(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without key moves the vectorised pass decides every group, and its rows, change list and
    stale count are the loop's."""
    table, order, keys, stored = _group(random.Random(seed), moves=False)
    fast, loop = _fold_both(table, order, keys, stored, monkeypatch)
    assert fast.fast and not loop.fast
    _same(fast, loop, table)


def test_a_group_of_stale_changes_only_moves_no_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replayed group (every key stored at a later position): no row, every change stale."""
    table, order, keys, stored = _group(random.Random(3), moves=False, replay=True)
    fast, loop = _fold_both(table, order, keys, stored, monkeypatch)
    assert fast.fast and fast.rows.num_rows == 0 and fast.stale == table.num_rows
    _same(fast, loop, table)


def test_the_random_groups_cover_what_the_passes_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    """The groups above hold stale changes, tombstones, updates over stored rows and rows from inserts."""
    seen = {"stale": 0, "d": 0, "u": 0, "c": 0, "stored": 0}
    for seed in range(40):
        table, order, keys, stored = _group(random.Random(seed), moves=False)
        fast, _ = _fold_both(table, order, keys, stored, monkeypatch)
        seen["stale"] += fast.stale
        seen["stored"] += stored is not None and stored.num_rows > 0
        for op in fast.rows["_op"].to_pylist():
            seen[op] += 1
    assert all(v > 10 for v in seen.values()), seen


@pytest.mark.parametrize("seed", range(20))
def test_key_moves_are_left_to_the_loop(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A group with an update that moves its key is folded by the loop (same result either way:
    the vectorised pass declines it)."""
    rng = random.Random(1000 + seed)
    while True:
        table, order, keys, stored = _group(rng, moves=True)
        new, old = (k.to_pylist() for k in keys)
        if any(a != b for a, b in zip(new, old)):
            break
    fast, loop = _fold_both(table, order, keys, stored, monkeypatch)
    assert not fast.fast
    _same(fast, loop, table)
