"""Transaction control of the timeline: COMMIT, ROLLBACK, SAVEPOINT, ROLLBACK TO, log switch.

Oracle writes nothing for a transaction that changed nothing, so COMMIT or ROLLBACK of a
session without an open transaction is a no-op. A savepoint set before the first change
is remembered and attached when the transaction starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from replicator.errors import ConfigError

if TYPE_CHECKING:
    from replicator.redogen.ports import GeneratorState
    from replicator.redogen.scenario import Event
    from replicator.redogen.txnstate import Txn


class TxnOps:
    """COMMIT / ROLLBACK / SAVEPOINT / ROLLBACK TO / switch / sleep handlers."""

    e: GeneratorState

    def _finish(self, sid: int, t: Txn) -> None:
        for row in t.locked:
            row.lock = None
        self.e.undo_of(t.redo).end(t.redo.xid)
        del self.e.txns[sid]
        self.e.pending_savepoints.pop(sid, None)

    def commit(self, ev: Event) -> None:
        """COMMIT: a 5.4; deleted rows disappear for good."""
        t = self.e.txns.get(ev.session)
        if t is None:
            self.e.pending_savepoints.pop(ev.session, None)
            return
        self.e.emit.end(t.redo, rollback=False)
        for ts, key in t.deleted:
            row = ts.rows.get(key)
            if row is not None and row.deleted:
                del ts.rows[key]
        self._finish(ev.session, t)
        rows = sum(c.count for c in t.changes)
        if rows:  # what the output holds: OLR writes nothing for a transaction without row changes
            self.e.stats["transactions"] += 1
            self.e.stats["rows"] += rows
        if self.e.keep and any(c.rows for c in t.changes):
            self.e.committed.append(t)

    def _undo_to(self, t: Txn, count: int) -> None:
        """Compensate and undo every change after the first ``count``, newest first."""
        while len(t.changes) > count:
            change = t.changes.pop()
            for comp in reversed(change.comps):
                self.e.emit.compensation(t.redo, comp)
            change.restore()

    def rollback(self, ev: Event) -> None:
        """ROLLBACK: compensations for everything, then a 5.4 with the rollback flag."""
        t = self.e.txns.get(ev.session)
        if t is None:
            self.e.pending_savepoints.pop(ev.session, None)
            return
        self._undo_to(t, 0)
        self.e.emit.end(t.redo, rollback=True)
        self._finish(ev.session, t)
        self.e.stats["rollbacks"] += 1

    def savepoint(self, ev: Event) -> None:
        """SAVEPOINT name (no redo)."""
        if not ev.name:
            raise ConfigError("savepoint needs a name")
        t = self.e.txns.get(ev.session)
        if t is None:
            self.e.pending_savepoints.setdefault(ev.session, {})[ev.name] = 0
        else:
            t.savepoints[ev.name] = len(t.changes)

    def rollback_to(self, ev: Event) -> None:
        """ROLLBACK TO SAVEPOINT name: compensations back to it; the transaction stays open."""
        t = self.e.txns.get(ev.session)
        marks = t.savepoints if t is not None else self.e.pending_savepoints.get(ev.session, {})
        if ev.name not in marks:
            raise ConfigError(f"session {ev.session}: no savepoint {ev.name!r}")
        if t is None:
            return
        count = marks[ev.name]
        self._undo_to(t, count)
        for name, pos in list(marks.items()):
            if pos > count:
                del marks[name]

    def switch(self, ev: Event) -> None:
        """ALTER SYSTEM SWITCH LOGFILE."""
        if self.e.cluster is not None:  # RAC: the event's thread only, or every thread
            self.e.cluster.switch(ev.thread)
        else:
            self.e.stream.switch()

    def sleep(self, ev: Event) -> None:
        """Only advance the clock (done by the engine from ``wait``)."""
