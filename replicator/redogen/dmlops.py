"""Timeline operations: DML statements, transaction control and log switches.

Each DML validates against the simulated table (keys, NOT NULL, row locks), changes the
table, writes its pairs and remembers how to undo it. ROLLBACK and ROLLBACK TO SAVEPOINT
write one compensation record per pair, newest first, exactly the order OLR matches them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from replicator import events as ev
from replicator.errors import ConfigError
from replicator.redogen import dml
from replicator.redogen.lobs import PAGE_OVERHEAD, LobStore
from replicator.redogen.lobvalues import MULTIBYTE_CHARSETS
from replicator.redogen.rows import Cell, Row, TableState
from replicator.redogen.txnops import TxnOps
from replicator.redogen.txnstate import Change, ExpectedRow, Txn
from replicator.schema.lobs import DEFAULT_PAGE_SIZE, PAGE_SIZES

if TYPE_CHECKING:
    from replicator.redogen.ports import GeneratorState
    from replicator.redogen.scenario import Event

ITL = 1


class DmlOps(TxnOps):
    """Handlers named after the timeline operations."""

    def __init__(self, engine: GeneratorState):
        self.e = engine
        emit = engine.emit  # LOB segments live in the next data file; SecureFile pages of 8060 bytes per 8 KiB
        self.lobs = LobStore(
            emit,
            emit.data_afn + 1,
            engine.sc.db_block_size - PAGE_OVERHEAD,
            engine.charsets[0] in MULTIBYTE_CHARSETS,
            PAGE_SIZES.get(engine.sc.db_block_size, DEFAULT_PAGE_SIZE),
        )

    # -- helpers --------------------------------------------------------------------------
    def _emit(self, t: Txn, ts: TableState, pairs: list[dml.PairSpec]):
        recs, comps = [], []
        for pair in pairs:
            rec, index, comp = self.e.emit.pair(t.redo, ts, pair)
            recs.append((rec, index))
            comps.append(comp)
        return recs, comps

    def _expected(self, op: str, ts: TableState, before, after, row: Row, recs, first: int) -> ExpectedRow:
        head = row.pieces[0]
        before, after = self.lobs.expected(ts, before, False), self.lobs.expected(ts, after, True)
        return ExpectedRow(op, ts, before, after, head.bdba, head.slot, recs[-1][0], recs[first][0], recs[first][1])

    def _lock(self, t: Txn, ts: TableState, row: Row) -> None:
        if row.lock is not None and row.lock is not t:
            raise ConfigError(f"{ts.spec.full_name}: row is locked by another open transaction")
        if row.lock is None:
            row.lock = t
            t.locked.append(row)

    def _find(self, ts: TableState, key: dict | None) -> tuple[tuple, Row]:
        if not key:
            raise ConfigError(f"{ts.spec.full_name}: update/delete needs a key")
        enc = self.e.encode_row(ts, key, [b"\0"] * len(ts.column_index))  # placeholders keep NOT NULL quiet
        match = {ts.column_index[n]: enc[ts.column_index[n]] for n in key}
        found = ts.find(match)
        if found is None:
            raise ConfigError(f"{ts.spec.full_name}: no row matches {key}")
        return found

    def _add(self, t: Txn, change: Change) -> None:
        t.changes.append(change)
        if not self.e.keep:
            # Nothing reads the expected rows then, and they pin every redo record's bytes:
            # a huge transaction would hold its whole redo in memory until commit.
            change.row_count, change.rows = len(change.rows), []

    # -- single-row DML -------------------------------------------------------------------
    def insert(self, e: Event) -> None:
        """INSERT one row."""
        ts = self.e.table(e.table)
        values = self.e.encode_row(ts, e.values or {})
        t = self.e.txn(e.session, e.xid, ts)
        values = self.lobs.store(t.redo, ts, values)  # LOB data -> locators (+ out-of-row pages)
        row, key, prev = self._new_row(t, ts, values)
        recs, comps = self._emit(t, ts, dml.insert_pairs(ts, row, ITL))
        exp = self._expected(ev.OP_INSERT, ts, None, dml.image(row), row, recs, len(recs) - 1)

        def restore() -> None:
            if prev is None:
                ts.rows.pop(key, None)
            else:
                ts.rows[key] = prev

        self._add(t, Change(comps, restore, [exp]))

    def _new_row(self, t: Txn, ts: TableState, values: list[bytes | None]) -> tuple[Row, tuple, Row | None]:
        key = ts.row_key(values)
        prev = ts.rows.get(key)
        if prev is not None and not (prev.deleted and prev.lock is t):
            raise ConfigError(f"{ts.spec.full_name}: duplicate primary key {key}")
        row = ts.place(values)
        ts.rows[key] = row
        self._lock(t, ts, row)
        return row, key, prev

    def update(self, e: Event) -> None:
        """UPDATE one row found by ``key``."""
        ts = self.e.table(e.table)
        key, row = self._find(ts, e.key)
        t = self.e.txn(e.session, e.xid, ts)
        self._lock(t, ts, row)
        old = list(row.values)
        new = self.lobs.store(t.redo, ts, self.e.encode_row(ts, e.values or {}, old))
        changed = sorted({ts.column_index[n] for n in (e.values or {})})
        if not changed:
            raise ConfigError(f"{ts.spec.full_name}: update sets no column")
        if set(changed) & row.split_columns():
            raise ConfigError(f"{ts.spec.full_name}: updating a column split across row pieces is not supported")
        new_key = tuple(new[i] for i in ts.key_cols) if ts.key_cols else key
        if new_key != key and new_key in ts.rows:
            raise ConfigError(f"{ts.spec.full_name}: duplicate primary key {new_key}")
        old_pieces = [list(p.cells) for p in row.pieces]
        row.values = new
        self._extend(row, changed)
        supp = self._supplemental(ts, row, changed)
        recs, comps = self._emit(t, ts, dml.update_pairs(ts, row, old, changed, supp, ITL))
        before = {c: old[c] for c in changed} | {n - 1: v for n, v in supp}
        after = {c: new[c] for c in changed} | {n - 1: v for n, v in supp}
        exp = self._expected(ev.OP_UPDATE, ts, before, after, row, recs, 0)
        if new_key != key:
            ts.rows[new_key] = ts.rows.pop(key)

        def restore() -> None:
            row.values = old
            for p, cells in zip(row.pieces, old_pieces):
                p.cells = cells
            if new_key != key:
                ts.rows[key] = ts.rows.pop(new_key)

        self._add(t, Change(comps, restore, [exp]))

    @staticmethod
    def _extend(row: Row, changed: list[int]) -> None:
        """Columns set past the last stored one become cells of the last piece."""
        last = row.pieces[-1]
        top = last.cells[-1].col if last.cells else -1
        if changed[-1] > top:
            last.cells = last.cells + [Cell(c) for c in range(top + 1, changed[-1] + 1)]

    def _supplemental(self, ts: TableState, row: Row, changed: list[int]) -> list[tuple[int, bytes | None]]:
        """Unchanged columns logged with an update, per the table's supplemental logging."""
        level = ts.spec.supplemental
        if level == "none":
            return []
        cols = ts.key_cols if level == "pk" and ts.key_cols else range(len(row.values))
        lobs = {lob.column for lob in self.lobs.columns(ts)}  # LOBs are never supplementally logged
        return [(c + 1, row.values[c]) for c in cols if c not in changed and c not in lobs]

    def delete(self, e: Event) -> None:
        """DELETE one row found by ``key``."""
        ts = self.e.table(e.table)
        key, row = self._find(ts, e.key)
        t = self.e.txn(e.session, e.xid, ts)
        self._lock(t, ts, row)
        recs, comps = self._emit(t, ts, dml.delete_pairs(ts, row, ITL))
        exp = self._expected(ev.OP_DELETE, ts, dml.image(row), None, row, recs, 0)
        row.deleted = True
        t.deleted.append((ts, key))

        def restore() -> None:
            row.deleted = False

        self._add(t, Change(comps, restore, [exp]))

    # -- multi-row DML --------------------------------------------------------------------
    def _multi_image(self, ts: TableState, row: Row) -> dict[int, bytes | None]:
        """Row image OLR builds for QMI/QMD rows: non-NULL and key columns, or all with column >= 1."""
        stored = {c.col for c in row.pieces[0].cells}
        keys = set(ts.key_cols)
        out = {}
        for i in range(len(row.values)):
            value = row.values[i] if i in stored else None
            if value is not None or self.e.column_format >= 1 or i in keys:
                out[i] = value
        return out

    @staticmethod
    def _groups(rows: list[Row]) -> list[list[Row]]:
        """Consecutive single-piece rows of one block, at most 255 per group; others alone."""
        groups: list[list[Row]] = []
        for row in rows:
            single = len(row.pieces) == 1 and len(row.pieces[0].cells) <= 255
            if (
                single
                and groups
                and len(groups[-1]) < 255
                and len(groups[-1][0].pieces) == 1
                and groups[-1][0].pieces[0].bdba == row.pieces[0].bdba
            ):
                groups[-1].append(row)
            else:
                groups.append([row])
        return groups

    def insert_many(self, e: Event) -> None:
        """Multi-row INSERT (array insert): one 11.11 per block of rows."""
        ts = self.e.table(e.table)
        t = self.e.txn(e.session, e.xid, ts)
        placed = []
        for values in e.rows or []:
            row, key, prev = self._new_row(t, ts, self.lobs.store(t.redo, ts, self.e.encode_row(ts, values)))
            placed.append((row, key, prev))
        by_row = {id(r): (k, p) for r, k, p in placed}
        for group in self._groups([r for r, _, _ in placed]):
            keys = [by_row[id(r)] for r in group]
            if len(group) == 1 and len(group[0].pieces) > 1:
                recs, comps = self._emit(t, ts, dml.insert_pairs(ts, group[0], ITL))
                rows = [self._expected(ev.OP_INSERT, ts, None, dml.image(group[0]), group[0], recs, len(recs) - 1)]
            else:
                recs, comps = self._emit(t, ts, [dml.multi_insert_pair(ts, group, ITL)])
                rows = [self._expected(ev.OP_INSERT, ts, None, self._multi_image(ts, r), r, recs, 0) for r in group]

            def restore(keys=keys) -> None:
                for key, prev in keys:
                    if prev is None:
                        ts.rows.pop(key, None)
                    else:
                        ts.rows[key] = prev

            self._add(t, Change(comps, restore, rows))

    def delete_many(self, e: Event) -> None:
        """Multi-row DELETE: one 11.12 per block of rows."""
        ts = self.e.table(e.table)
        t = self.e.txn(e.session, e.xid, ts)
        found = [self._find(ts, k) for k in e.rows or []]
        for _key, row in found:
            self._lock(t, ts, row)
        keys = {id(row): key for key, row in found}
        for group in self._groups([row for _, row in found]):
            if len(group) == 1 and len(group[0].pieces) > 1:
                recs, comps = self._emit(t, ts, dml.delete_pairs(ts, group[0], ITL))
                rows = [self._expected(ev.OP_DELETE, ts, dml.image(group[0]), None, group[0], recs, 0)]
            else:
                recs, comps = self._emit(t, ts, [dml.multi_delete_pair(ts, group, ITL)])
                rows = [self._expected(ev.OP_DELETE, ts, self._multi_image(ts, r), None, r, recs, 0) for r in group]
            for row in group:
                row.deleted = True
                t.deleted.append((ts, keys[id(row)]))

            def restore(group=group) -> None:
                for row in group:
                    row.deleted = False

            self._add(t, Change(comps, restore, rows))
