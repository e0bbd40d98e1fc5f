"""Workload library: a realistic OLTP mix and adversarial scenarios, all seeded.

Every function returns a :class:`Scenario` whose timeline is a lazy generator, so
gigabytes of redo never sit in memory as events. :func:`oltp` runs until
``target_bytes`` of redo are written; the adversarial generators take their size as
parameters (tests use small ones).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from typing import Any

from replicator.errors import ConfigError
from replicator.redogen.randvalues import pick_type, value
from replicator.redogen.scenario import ColumnSpec, Event, Scenario, TableSpec


def _table(rng: random.Random, owner: str, name: str, ncols: int, v23: bool) -> TableSpec:
    cols = [ColumnSpec("ID", "NUMBER", False)]
    for i in range(1, ncols):
        cols.append(ColumnSpec(f"C{i}", pick_type(rng, v23), rng.random() < 0.85))
    return TableSpec(owner, name, cols, ["ID"], supplemental=rng.choice(["all", "all", "pk", "none"]))


def _row(rng: random.Random, t: TableSpec, key: int, pools: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"ID": key}
    for c in t.columns[1:]:
        out[c.name] = rng.choice(pools[c.name]) if pools else value(rng, c.type, nullable=c.nullable)
    return out


def _pools(rng: random.Random, t: TableSpec, size: int = 48) -> dict[str, list[Any]]:
    """Pre-drawn values per column: random enough, and cheap when gigabytes are generated."""
    return {c.name: [value(rng, c.type, nullable=c.nullable) for _ in range(size)] for c in t.columns[1:]}


class _KeySet:
    """Keys with O(1) add, remove and random pick."""

    def __init__(self) -> None:
        self.items: list[int] = []
        self.pos: dict[int, int] = {}

    def add(self, key: int) -> None:
        """Add a key."""
        self.pos[key] = len(self.items)
        self.items.append(key)

    def remove(self, key: int) -> None:
        """Remove a key (swap with the last)."""
        i = self.pos.pop(key)
        last = self.items.pop()
        if last != key:
            self.items[i] = last
            self.pos[last] = i

    def pick(self, rng: random.Random) -> int | None:
        """A random key, or None when empty."""
        return self.items[rng.randrange(len(self.items))] if self.items else None


class _Oltp:
    """Session/transaction model of the OLTP mix; yields only statements that are valid."""

    def __init__(
        self,
        rng: random.Random,
        tables: list[TableSpec],
        sessions: int,
        rows: tuple[int, int],
        mix: tuple[float, float, float],
        rollback_rate: float,
        savepoint_rate: float,
        rate: float,
    ):
        self.rng, self.tables, self.sessions = rng, tables, sessions
        self.rows, self.mix, self.rollback_rate, self.savepoint_rate = rows, mix, rollback_rate, savepoint_rate
        self.wait = 1.0 / rate
        self.next_id = {t.name: 1 for t in tables}
        self.live = {t.name: _KeySet() for t in tables}
        self.locked: set[tuple[str, int]] = set()
        self.plan: dict[int, dict[str, Any]] = {}
        self.pools = {t.name: _pools(rng, t) for t in tables}

    def _pick(self, t: TableSpec) -> int | None:
        for _ in range(8):
            k = self.live[t.name].pick(self.rng)
            if k is None:
                return None
            if (t.name, k) not in self.locked:
                return k
        return None

    def _statement(self, sid: int, p: dict[str, Any]) -> Event | None:
        rng, t = self.rng, self.rng.choice(self.tables)
        r = rng.random()
        if r < self.mix[0]:
            key = self._pick(t)
            if key is not None:
                self._lock(p, t.name, key)
                p["undo"].append(("u", t.name, key))
                cols = rng.sample(t.columns[1:], k=min(len(t.columns) - 1, rng.randint(1, 3)))
                vals = {c.name: rng.choice(self.pools[t.name][c.name]) for c in cols}
                return Event("update", sid, t.name, values=vals, key={"ID": key})
        if r >= self.mix[0] + self.mix[1]:
            key = self._pick(t)
            if key is not None:
                self._lock(p, t.name, key)
                self.live[t.name].remove(key)
                p["undo"].append(("d", t.name, key))
                return Event("delete", sid, t.name, key={"ID": key})
        count = 1 if rng.random() < 0.9 else rng.randint(2, 12)
        keys = list(range(self.next_id[t.name], self.next_id[t.name] + count))
        self.next_id[t.name] += count
        for key in keys:
            self._lock(p, t.name, key)
            self.live[t.name].add(key)
            p["undo"].append(("i", t.name, key))
        pools = self.pools[t.name]
        if count == 1:
            return Event("insert", sid, t.name, values=_row(rng, t, keys[0], pools))
        return Event("insert_many", sid, t.name, rows=[_row(rng, t, k, pools) for k in keys])

    def _lock(self, p: dict[str, Any], name: str, key: int) -> None:
        self.locked.add((name, key))
        p["locks"].append((name, key))

    def _end(self, p: dict[str, Any], rollback: bool, upto: int = 0, final: bool = True) -> None:
        """Undo the model's view of statements after ``upto``; locks go only at transaction end."""
        for kind, name, key in reversed(p["undo"][upto:]):
            if rollback and kind == "i":
                self.live[name].remove(key)
            elif rollback and kind == "d":
                self.live[name].add(key)
        del p["undo"][upto:]
        if final:
            self.locked.difference_update(p["locks"])

    def preload(self, rows: int, batch: int = 50) -> Iterator[Event]:
        """Fill every table with ``rows`` committed rows first, so the mix starts in a steady state."""
        for t in self.tables:
            while self.next_id[t.name] <= rows:
                first = self.next_id[t.name]
                keys = range(first, min(rows, first + batch - 1) + 1)
                self.next_id[t.name] = keys[-1] + 1
                for key in keys:
                    self.live[t.name].add(key)
                yield Event("insert_many", 1, t.name, rows=[_row(self.rng, t, k, self.pools[t.name]) for k in keys])
                yield Event("commit", 1)

    def events(self) -> Iterator[Event]:
        """The endless statement stream of the mix."""
        rng = self.rng
        while True:
            sid = rng.randint(1, self.sessions)
            p = self.plan.get(sid)
            if p is None:
                p = self.plan[sid] = {
                    "left": rng.randint(*self.rows),
                    "undo": [],
                    "locks": [],
                    "sp": None,
                    "rollback": rng.random() < self.rollback_rate,
                }
            if p["left"] > 0:
                p["left"] -= 1
                if p["sp"] is None and rng.random() < self.savepoint_rate:
                    p["sp"] = len(p["undo"])
                    yield Event("savepoint", sid, name="sp", wait=self.wait)
                ev = self._statement(sid, p)
                if ev is not None:
                    ev.wait = self.wait
                    yield ev
                if p["sp"] is not None and rng.random() < 0.3:
                    self._end(p, True, p["sp"], final=False)
                    yield Event("rollback_to", sid, name="sp")
                    p["sp"] = None
                continue
            self._end(p, p["rollback"])
            del self.plan[sid]
            yield Event("rollback" if p["rollback"] else "commit", sid, wait=self.wait)


def oltp(
    seed: int = 1,
    target_bytes: int = 10 << 20,
    *,
    version: str = "19",
    block_size: int = 512,
    tables: int = 10,
    columns: tuple[int, int] = (5, 60),
    sessions: int = 50,
    rows: tuple[int, int] = (1, 20),
    mix: tuple[float, float, float] = (0.7, 0.2, 0.1),
    rollback_rate: float = 0.1,
    savepoint_rate: float = 0.02,
    rate: float = 2000.0,
    preload: int = 200,
    **extra: Any,
) -> Scenario:
    """Realistic OLTP: updates/inserts/deletes by ``mix``, ``sessions`` concurrent sessions, seeded.

    Each table is first loaded with ``preload`` committed rows (multi-row inserts).
    """
    rng = random.Random(seed)
    sc = Scenario(
        version=version,
        block_size=block_size,
        seed=seed,
        max_redo_bytes=target_bytes,
        log_blocks=max(2048, (64 << 20) // block_size),
        **extra,
    )
    v23 = sc.compat >= 0x17000000
    sc.tables = [_table(rng, "APP", f"T{i:02}", rng.randint(*columns), v23) for i in range(tables)]
    model = _Oltp(rng, sc.tables, sessions, rows, mix, rollback_rate, savepoint_rate, rate)
    sc.timeline = itertools.chain(model.preload(preload), model.events())
    return sc


def mixed(
    seed: int = 1,
    events: int = 60,
    *,
    version: str = "19",
    block_size: int = 512,
    wide: bool = True,
    big: bool = True,
    **extra: Any,
) -> Scenario:
    """A small scenario using every feature: for property tests and quick checks.

    Mixed-type tables, a 300-column table, a table whose rows chain over blocks, 4 sessions,
    rollbacks, savepoints, multi-row inserts, log switches and clock ticks.
    """
    rng = random.Random(seed)
    sc = Scenario(version=version, block_size=block_size, seed=seed, **extra)
    v23 = sc.compat >= 0x17000000
    tables = [_table(rng, "APP", f"T{i}", rng.randint(2, 12), v23) for i in range(2)]
    if wide:
        tables.append(_simple_table("WIDE", 300, "VARCHAR2(12)"))
    if big:
        cols = [ColumnSpec("ID", "NUMBER", False)] + [ColumnSpec(f"C{i}", "VARCHAR2(4000)") for i in range(1, 4)]
        tables.append(TableSpec("APP", "BIG", cols, ["ID"], supplemental="pk"))
    sc.tables = tables
    model = _Oltp(rng, tables, 4, (1, 6), (0.6, 0.3, 0.1), 0.2, 0.2, 1.0)
    if big:
        model.pools["BIG"] = {
            f"C{i}": [None] + ["".join(rng.choices("xyz", k=rng.randint(2000, 3900))) for _ in range(4)]
            for i in range(1, 4)
        }

    def timeline() -> Iterator[Event]:
        stream = model.events()
        for _ in range(events):
            if rng.random() < 0.04:
                yield Event("switch")
            ev = next(stream)
            ev.wait = 1.0 if rng.random() < 0.1 else 0.0
            yield ev

    sc.timeline = timeline()
    return sc


def _simple_table(name: str, ncols: int, col_type: str = "VARCHAR2(30)") -> TableSpec:
    cols = [ColumnSpec("ID", "NUMBER", False)] + [ColumnSpec(f"C{i}", col_type) for i in range(1, ncols)]
    return TableSpec("APP", name, cols, ["ID"])


_HUGE_ROW_OVERHEAD = 840  # redo bytes per row of huge_transaction besides PAYLOAD (measured)


def huge_transaction(
    rows: int = 100_000, *, seed: int = 1, row_bytes: int = 0, target_bytes: int = 0, **extra: Any
) -> Scenario:
    """One transaction inserting ``rows`` rows and updating every tenth, then one commit.

    ``row_bytes`` adds a PAYLOAD VARCHAR2(4000) column of that many bytes per row (few, fat
    rows make gigabytes of redo cheap to generate); ``target_bytes`` picks ``rows`` so the
    redo is about that size. Unlike ``--size`` on other workloads the transaction is never
    cut short: it always commits.
    """
    rng = random.Random(seed)
    t = _simple_table("HUGE", 6)
    if not 0 <= row_bytes <= 4000:
        raise ConfigError(f"row-bytes {row_bytes}: 0..4000 expected", 30002)
    if row_bytes:
        t.columns.append(ColumnSpec("PAYLOAD", "VARCHAR2(4000)"))
    if target_bytes:
        rows = max(1, target_bytes // (row_bytes + _HUGE_ROW_OVERHEAD))
    pool = _pools(rng, t, 16)
    if row_bytes:
        letters = "abcdefghijklmnopqrstuvwxyz0123456789"
        pool["PAYLOAD"] = ["".join(rng.choice(letters) for _ in range(row_bytes)) for _ in range(16)]

    def events() -> Iterator[Event]:
        for k in range(1, rows + 1):
            yield Event("insert", 1, "HUGE", values=_row(rng, t, k, pool))
            if k % 10 == 0:
                yield Event("update", 1, "HUGE", values={"C1": f"u{k}"}, key={"ID": k - 5})
        yield Event("commit", 1)

    return Scenario(tables=[t], timeline=events(), seed=seed, **extra)


def open_transactions(count: int = 100_000, *, seed: int = 1, **extra: Any) -> Scenario:
    """``count`` transactions open at once (one insert each), then committed in random order."""
    rng = random.Random(seed)
    t = _simple_table("OPEN", 3)

    def events() -> Iterator[Event]:
        for sid in range(1, count + 1):
            yield Event("insert", sid, "OPEN", values={"ID": sid, "C1": f"s{sid}"})
        order = list(range(1, count + 1))
        rng.shuffle(order)
        for sid in order:
            yield Event("rollback" if sid % 10 == 0 else "commit", sid)

    return Scenario(tables=[t], timeline=events(), seed=seed, **extra)


def wide_rows(columns: int = 1000, rows: int = 100, *, seed: int = 1, **extra: Any) -> Scenario:
    """A table of ``columns`` columns (chained in 255-column pieces): insert, update, delete."""
    rng = random.Random(seed)
    t = _simple_table("WIDE", columns, "VARCHAR2(12)")

    def events() -> Iterator[Event]:
        for k in range(1, rows + 1):
            vals = {f"C{i}": f"r{k}c{i}" for i in range(1, columns) if rng.random() < 0.7}
            yield Event("insert", 1 + k % 4, "WIDE", values={"ID": k, **vals})
            if k % 3 == 0:
                cols = rng.sample(range(1, columns), k=min(5, columns - 1))
                yield Event("update", 1 + k % 4, "WIDE", values={f"C{c}": f"x{k}" for c in cols}, key={"ID": k})
            if k % 7 == 0:
                yield Event("delete", 1 + k % 4, "WIDE", key={"ID": k - 1})
            yield Event("commit", 1 + k % 4)

    return Scenario(tables=[t], timeline=events(), seed=seed, **extra)


def big_values(size: int = 32767, rows: int = 20, *, seed: int = 1, **extra: Any) -> Scenario:
    """Rows with values of ``size`` bytes (chained over several blocks, split columns)."""
    rng = random.Random(seed)
    cols = [
        ColumnSpec("ID", "NUMBER", False),
        ColumnSpec("TXT", f"VARCHAR2({max(size, 1)})"),
        ColumnSpec("BIN", f"RAW({max(size, 1)})"),
        ColumnSpec("N", "NUMBER"),
    ]
    t = TableSpec("APP", "BIG", cols, ["ID"])

    def events() -> Iterator[Event]:
        for k in range(1, rows + 1):
            yield Event(
                "insert",
                1,
                "BIG",
                values={
                    "ID": k,
                    "TXT": "".join(rng.choices("abcxyz", k=size)),
                    "BIN": rng.randbytes(size).hex(),
                    "N": k,
                },
            )
            yield Event("update", 1, "BIG", values={"N": -k}, key={"ID": k})
            if k % 2:
                yield Event("delete", 1, "BIG", key={"ID": k})
            yield Event("commit", 1)

    return Scenario(tables=[t], timeline=events(), seed=seed, **extra)


WORKLOADS: dict[str, Callable[..., Scenario]] = {
    "oltp": oltp,
    "mixed": mixed,
    "huge-transaction": huge_transaction,
    "open-transactions": open_transactions,
    "wide-rows": wide_rows,
    "big-values": big_values,
}
