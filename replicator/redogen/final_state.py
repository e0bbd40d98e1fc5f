"""The committed contents of every table after a scenario: an oracle for consumers.

:class:`FinalState` replays a scenario's timeline on plain Python rows, independently of
the redo writer: inserts, updates, deletes, commits, rollbacks and savepoints, with the
open transactions at the end left out (their redo has no commit). Values stay as the
scenario gives them (``"120.50"``, ``"2025-01-02 14:00:00"``, hex for RAW...), with
Oracle's rule that an empty string is NULL; comparing them with typed values read back
is the consumer's job.

Timelines of workloads are one-shot generators, so the usual way is to watch the events
while the generator consumes them::

    state = FinalState(scenario)
    scenario.timeline = state.watch(scenario.timeline)
    generate(scenario, out_dir)
    rows = state.rows("APP.T1")       # committed rows, as dicts column -> value
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal, InvalidOperation
from typing import Any

from replicator.errors import ConfigError
from replicator.redogen.scenario import Event, Scenario, TableSpec


def _norm(value: Any) -> Any:
    """A lookup form of a key value: numbers compare by value, '' is NULL."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, Decimal)):
        return Decimal(str(value)).normalize()
    try:
        return Decimal(str(value)).normalize()
    except InvalidOperation:
        return str(value)


class _Table:
    """Rows of one table by serial number, with a primary-key index."""

    def __init__(self, spec: TableSpec):
        self.spec = spec
        self.columns = [c.name for c in spec.columns]
        self.rows: dict[int, dict[str, Any]] = {}
        self.by_pk: dict[tuple[Any, ...], int] = {}
        self.serial = 0

    def pk(self, row: dict[str, Any]) -> tuple[Any, ...] | None:
        return tuple(_norm(row.get(k)) for k in self.spec.primary_key) if self.spec.primary_key else None

    def add(self, row: dict[str, Any], serial: int | None = None) -> int:
        if serial is None:
            self.serial += 1
            serial = self.serial
        self.rows[serial] = row
        key = self.pk(row)
        if key is not None:
            self.by_pk[key] = serial
        return serial

    def remove(self, serial: int) -> dict[str, Any]:
        row = self.rows.pop(serial)
        key = self.pk(row)
        if key is not None and self.by_pk.get(key) == serial:
            del self.by_pk[key]
        return row

    def find(self, key: dict[str, Any]) -> int:
        if self.spec.primary_key and set(key) == set(self.spec.primary_key):
            serial = self.by_pk.get(tuple(_norm(key[k]) for k in self.spec.primary_key))
            if serial is not None:
                return serial
        want = {k: _norm(v) for k, v in key.items()}
        for serial, row in self.rows.items():
            if all(_norm(row.get(k)) == v for k, v in want.items()):
                return serial
        raise ConfigError(f"{self.spec.full_name}: no row matches {key}")


class FinalState:
    """Replays a timeline; :meth:`rows` gives each table's committed rows."""

    def __init__(self, sc: Scenario):
        self.tables = {t.full_name: _Table(t) for t in sc.tables}
        self._names = {**{t.name: t.full_name for t in sc.tables}, **{t.full_name: t.full_name for t in sc.tables}}
        self.undo: dict[int, list[tuple[Any, ...]]] = {}  # session -> undo log of its open transaction
        self.savepoints: dict[int, dict[str, int]] = {}
        for item in sc.preload:  # rows the tables hold before the timeline
            t = self.table(str(item.get("table", "")).split(":")[0])
            t.add(
                {
                    c: (None if (item.get("values") or {}).get(c) == "" else (item.get("values") or {}).get(c))
                    for c in t.columns
                }
            )

    def watch(self, events: Iterable[Event]) -> Iterator[Event]:
        """Yield ``events`` unchanged, applying each one as it passes."""
        for e in events:
            self.apply(e)
            yield e

    def table(self, name: str | None) -> _Table:
        """A table by NAME or OWNER.NAME."""
        if name not in self._names:
            raise ConfigError(f"scenario has no table {name!r}")
        return self.tables[self._names[name]]

    def _insert(self, sid: int, t: _Table, values: dict[str, Any]) -> None:
        row = {c: (None if values.get(c) == "" else values.get(c)) for c in t.columns}
        self.undo.setdefault(sid, []).append(("insert", t, t.add(row)))

    def _delete(self, sid: int, t: _Table, key: dict[str, Any]) -> None:
        serial = t.find(key)
        self.undo.setdefault(sid, []).append(("delete", t, serial, t.remove(serial)))

    def apply(self, e: Event) -> None:
        """Apply one timeline event."""
        sid = e.session
        if e.op == "insert":
            self._insert(sid, self.table(e.table), e.values or {})
        elif e.op == "insert_many":
            for values in e.rows or []:
                self._insert(sid, self.table(e.table), values)
        elif e.op == "update":
            t = self.table(e.table)
            serial = t.find(e.key or {})
            old = t.remove(serial)
            new = {**old, **{k: (None if v == "" else v) for k, v in (e.values or {}).items()}}
            t.add(new, serial)
            self.undo.setdefault(sid, []).append(("update", t, serial, old))
        elif e.op == "delete":
            self._delete(sid, self.table(e.table), e.key or {})
        elif e.op == "delete_many":
            for key in e.rows or []:
                self._delete(sid, self.table(e.table), key)
        elif e.op in ("commit", "rollback"):
            if e.op == "rollback":
                self._undo_to(sid, 0)
            self.undo.pop(sid, None)
            self.savepoints.pop(sid, None)
        elif e.op == "savepoint":
            self.savepoints.setdefault(sid, {})[e.name or ""] = len(self.undo.get(sid, []))
        elif e.op == "rollback_to":
            mark = self.savepoints.get(sid, {}).get(e.name or "")
            if mark is None:
                raise ConfigError(f"session {sid}: no savepoint {e.name!r}")
            self._undo_to(sid, mark)

    def _undo_to(self, sid: int, mark: int) -> None:
        log = self.undo.get(sid, [])
        while len(log) > mark:
            entry = log.pop()
            kind, t, serial = entry[0], entry[1], entry[2]
            if kind == "insert":
                t.remove(serial)
            elif kind == "delete":
                t.add(entry[3], serial)
            else:
                t.remove(serial)
                t.add(entry[3], serial)

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Committed rows of ``table`` (changes of still-open transactions left out)."""
        t = self.table(table)
        hidden: dict[int, dict[str, Any] | None] = {}  # serial -> committed image (None: not committed)
        for log in self.undo.values():
            for entry in log:
                if entry[1] is not t or entry[2] in hidden:
                    continue  # the first entry of a row holds its committed image
                hidden[entry[2]] = None if entry[0] == "insert" else entry[3]
        out = [dict(r) for s, r in t.rows.items() if s not in hidden]
        out += [dict(r) for r in hidden.values() if r is not None]
        return out
