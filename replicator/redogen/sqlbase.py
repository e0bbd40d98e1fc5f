"""The SQL compiler's state and the parts every statement family shares.

:class:`CompilerBase` holds the tables, the sessions (one per RAC node and autonomous depth)
and the timeline of events; it resolves names (:meth:`~CompilerBase._lookup`), keeps each
session's undo for ``ROLLBACK`` and statement-level rollback (:meth:`~CompilerBase._mark`,
:meth:`~CompilerBase._restore`), and writes commit/rollback events. The statement families are
mixins over it: DML (:mod:`~replicator.redogen.sqldml`), DDL (:mod:`~replicator.redogen.sqlddl`),
PL/SQL (:mod:`~replicator.redogen.sqlplsql`); :mod:`~replicator.redogen.sqlscript` drives them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from replicator.redogen.scenario import Event
from replicator.redogen.sqlexpr import (
    EXPRESSION,
    NOT_FOUND,
    RUNTIME,
    SYNTAX,
    Node,
    SqlError,
    SqlParser,
    call,
    evaluate,
    to_number,
)
from replicator.redogen.sqlschema import SqlCheckpoint
from replicator.redogen.sqltables import SqlTable, scenario_value

_SETUP_OPS = frozenset(
    {
        "insert",
        "insert_many",
        "update",
        "delete",
        "commit",
        "rollback",
        "savepoint",
        "rollback_to",
        # setup DDL: the tables are as it leaves them when the redo starts
        "drop_table",
        "truncate",
        "add_column",
        "drop_column",
        "set_unused_column",
        "rename_column",
        "modify_column",
    }
)


@dataclass(slots=True)
class Session:
    """A database session: its undo of the open transaction and its savepoints."""

    id: int
    thread: int
    undo: list[Any] = field(default_factory=list)  # (table, key, old row | None, new key | None, position | None)
    savepoints: dict[str, int] = field(default_factory=dict)
    active: bool = False  # a transaction is open (row changes since the last commit/rollback)


@dataclass(slots=True)
class Proc:
    """A local procedure of a PL/SQL block."""

    params: list[str]
    body: list[Any]
    autonomous: bool
    decls: list[Any]  # the declarations' tokens (variables, types, cursors, exceptions), run at each call
    handlers: list[tuple[list[str], list[Any]]] = field(default_factory=list)  # EXCEPTION WHEN names THEN body
    modes: dict[str, str] = field(default_factory=dict)  # parameter -> OUT | IN OUT (IN when absent)
    defaults: dict[str, Node] = field(default_factory=dict)  # parameter -> DEFAULT expression
    local_env: dict[str, Any] = field(default_factory=dict)  # nested functions (and their names)
    local_procs: dict[str, Proc] = field(default_factory=dict)  # nested procedures


class Return(Exception):
    """RETURN from a procedure (``value``: a function's result)."""

    def __init__(self, value: Any = None):
        super().__init__()
        self.value = value


@dataclass(slots=True)
class Function:
    """A local function of a PL/SQL block, with the procedures it may call."""

    name: str
    proc: Proc
    procs: dict[str, Proc]


@dataclass(slots=True)
class Collection:
    """A PL/SQL collection (associative array, nested table, VARRAY): index -> value."""

    items: dict[Any, Any] = field(default_factory=dict)
    fields: list[str] | None = None  # a collection of declared records: their field names

    @staticmethod
    def key(index: Any, line: int) -> Any:
        if isinstance(index, str):
            return index
        n = to_number(index, line)
        if n is None:
            raise SqlError("ORA-06502: NULL index value", RUNTIME, line)
        return int(n)

    def get(self, index: Any, line: int) -> Any:
        """``v(i)``: NO_DATA_FOUND (ORA-01403) for a missing element."""
        k = self.key(index, line)
        if k not in self.items:
            raise SqlError(f"ORA-01403: no data found (element {k})", RUNTIME, line)
        return self.items[k]

    def attribute(self, name: str, line: int) -> Any:
        """``v.COUNT``, ``v.FIRST``, ``v.LAST``."""
        keys = sorted(self.items)
        if name == "COUNT":
            return Decimal(len(keys))
        if name in ("FIRST", "LAST"):
            return None if not keys else Decimal(keys[0 if name == "FIRST" else -1])
        raise SqlError(f"collection attribute {name} is not supported (COUNT, FIRST, LAST, EXISTS)", EXPRESSION, line)


@dataclass(slots=True)
class Sequence:
    """A sequence: NEXTVAL from per-instance caches of ``cache`` values (RAC NOORDER), as an
    identity column's."""

    start: int
    step: int
    cache: int
    issued: int = 0  # values handed to caches so far
    caches: dict[int, tuple[int, int]] = field(default_factory=dict)  # node -> (next, end)
    current: dict[int, Decimal] = field(default_factory=dict)  # node -> CURRVAL

    def next(self, node: int) -> Decimal:
        nxt, end = self.caches.get(node, (0, 0))
        if nxt >= end:
            nxt, end = self.issued, self.issued + max(self.cache, 1)
            self.issued = end
        self.caches[node] = (nxt + 1, end)
        value = self.current[node] = Decimal(self.start + nxt * self.step)
        return value


@dataclass(slots=True)
class Cursor:
    """A declared cursor: its query, and while open (``OPEN``) the rows it read and how many
    ``FETCH`` took."""

    query: Any
    params: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] | None = None
    fetched: int = 0
    found: bool | None = None

    def attribute(self, name: str, line: int) -> Any:
        """``c%FOUND``, ``c%NOTFOUND``, ``c%ROWCOUNT``, ``c%ISOPEN``."""
        if name == "ISOPEN":
            return self.rows is not None
        if self.rows is None:
            raise SqlError("ORA-01001: invalid cursor (not open)", RUNTIME, line)
        if name == "ROWCOUNT":
            return Decimal(self.fetched)
        if name in ("FOUND", "NOTFOUND"):
            return None if self.found is None else (self.found if name == "FOUND" else not self.found)
        raise SqlError(f"cursor attribute %{name} is not supported", EXPRESSION, line)


class CompilerBase:
    """The compiler's state (tables, sessions, the timeline) and what every statement family uses."""

    def __init__(self, schema: SqlCheckpoint | None = None, owner: str = "OLR_TEST", strict: bool = False):
        self.schema = schema
        self.strict = strict  # raise on a statement the database would refuse, instead of skipping it
        self.warnings: list[str] = []
        self.owner = owner
        self.tables: dict[str, SqlTable] = {}
        self.record_types: dict[str, list[tuple[str, Node | None]]] = {}  # TYPE r IS RECORD: fields, defaults
        self.record_elements: dict[str, str] = {}  # collection type -> the record type of its elements
        self.ctes: dict[str, Any] = {}  # WITH queries visible to the query being parsed
        self.stored_procs: dict[str, Proc] = {}  # CREATE PROCEDURE
        self.stored_env: dict[str, Any] = {}  # CREATE FUNCTION (a Function by name)
        self.loop_labels: dict[int, tuple[Any, str]] = {}  # id of a parsed loop statement -> (it, its <<label>>)
        self.initial: list[SqlTable] = []
        self.events: list[Event] = []
        self.sessions: dict[tuple[int, int], Session] = {}
        self.node = 1
        self.nodes: set[int] = set()
        self.depth = 0
        self.started = False
        self.auto_start = False
        self.ended = False
        self.define = True
        self.line = 0
        self.pending_wait = 0.0
        self.skipped: list[int] = []  # lines of statements skipped (substitution variables)
        self.sequences: dict[str, Sequence] = {}
        self.rowcount = 0  # rows the last DML statement changed (SQL%ROWCOUNT)

    # -- sessions and events
    def _session(self) -> Session:
        key = (self.node, self.depth)
        s = self.sessions.get(key)
        if s is None:
            s = self.sessions[key] = Session(len(self.sessions) + 1, self.node)
        return s

    def _event(self, e: Event) -> None:
        if not self.started:
            if e.op in _SETUP_OPS:  # setup DML and DDL: the tables hold their result when the redo starts (preload)
                return
            raise SqlError(f"{e.op} before the start marker (FIXTURE_SCN_START) is not supported", SYNTAX, self.line)
        if self.nodes:
            e.thread = self.node
        if self.pending_wait:
            e.wait, self.pending_wait = self.pending_wait, 0.0
        self.events.append(e)

    def _table(self, name: str, line: int) -> SqlTable:
        t = self.tables.get(name)
        if t is None:
            raise SqlError(f"ORA-00942: table {name} does not exist", RUNTIME, line)
        return t

    # -- statements
    def _statement(self, p: SqlParser, env: dict[str, Any], procs: dict[str, Proc]) -> None:
        """Run one SQL statement (the dispatcher, :class:`~replicator.redogen.sqlscript.Compiler`)."""
        raise NotImplementedError

    def _lookup(self, env: dict[str, Any], row: dict[str, Any] | None = None, table: SqlTable | None = None):
        """Names in an expression: a PL/SQL record's field (``r.col``) or collection attribute
        (``v.COUNT``), a column of ``row``, a PL/SQL variable; ``v(i)`` is a collection element."""

        def lookup(name: str, line: int) -> Any:
            base = name
            if "." in name:
                qual, base = name.rsplit(".", 1)
                rec = env.get(qual)
                if isinstance(rec, dict):
                    if base not in rec:
                        raise SqlError(f"PLS-00302: component {base} must be declared", RUNTIME, line)
                    return rec[base]
                if isinstance(rec, Collection):
                    return rec.attribute(base, line)
                seq = self.sequences.get(qual)
                if seq is not None and base in ("NEXTVAL", "CURRVAL"):
                    if base == "NEXTVAL":
                        return seq.next(self.node)
                    if self.node not in seq.current:
                        raise SqlError(
                            f"ORA-08002: sequence {qual}.CURRVAL is not yet defined in this session", RUNTIME, line
                        )
                    return seq.current[self.node]
            if row is not None and table is not None:
                if base in row or any(c.name == base for c in table.columns):
                    return row.get(base)
            if name in env:
                value = env[name]
                return self._invoke_function(value, [], env, line) if isinstance(value, Function) else value
            if "%" in name and not name.startswith("SQL%"):
                cursor_name, attr = name.split("%", 1)
                cur = env.get(cursor_name)
                if isinstance(cur, Cursor):
                    return cur.attribute(attr, line)
            if name in ("SQL%ROWCOUNT", "SQL%FOUND", "SQL%NOTFOUND", "SQL%ISOPEN"):  # the last DML statement
                n = self.rowcount
                return {"SQL%ROWCOUNT": Decimal(n), "SQL%FOUND": n > 0, "SQL%NOTFOUND": n == 0, "SQL%ISOPEN": False}[
                    name
                ]
            if name in ("SYSDATE", "SYSTIMESTAMP"):
                return call(name, [], line)
            raise SqlError(f"ORA-00904: {name}: invalid identifier", RUNTIME, line)

        def element(name: str, args: list[Any], line: int) -> Any:
            coll = env.get(name)
            if isinstance(coll, Collection) and len(args) == 1:
                return coll.get(args[0], line)
            if isinstance(coll, Function):
                return self._invoke_function(coll, args, env, line)
            if "." in name:
                qual, method = name.rsplit(".", 1)
                coll = env.get(qual)
                if isinstance(coll, Collection) and method == "EXISTS" and len(args) == 1:
                    return coll.key(args[0], line) in coll.items
            return NOT_FOUND

        lookup.element = element  # type: ignore[attr-defined]  # read by sqlexpr.evaluate
        lookup.query = lambda q: self._run_query(q, env, lookup)[1]  # type: ignore[attr-defined]
        return lookup

    def _invoke_function(self, fn: Function, args: list[Any], env: dict[str, Any], line: int) -> Any:
        """Call a local function (:class:`~replicator.redogen.sqlplsql.PlsqlBlocks`)."""
        raise NotImplementedError

    def _query(self, p: SqlParser, *, into: bool = False) -> Any:
        """Parse a query (:class:`~replicator.redogen.sqlquery.Queries`)."""
        raise NotImplementedError

    def _run_query(self, q: Any, env: dict[str, Any], outer: Any = None) -> tuple[list[str], list[list[Any]]]:
        """Run a query (:class:`~replicator.redogen.sqlquery.Queries`)."""
        raise NotImplementedError

    @staticmethod
    def _name_list(p: SqlParser) -> list[str]:
        """``(a, b, ...)``."""
        p.expect("(")
        out = [p.ident()]
        while p.accept(","):
            out.append(p.ident())
        p.expect(")")
        return out

    def _where(self, p: SqlParser) -> Node | None:
        return p.expr() if p.accept("WHERE") else None

    def _matches(self, table: SqlTable, cond: Node | None, env: dict[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
        if cond is None:
            return list(table.rows.items())
        return [(k, r) for k, r in list(table.rows.items()) if evaluate(cond, self._lookup(env, r, table)) is True]

    def _key_values(self, table: SqlTable, row: dict[str, Any]) -> dict[str, Any]:
        names = table.primary_key or [c.name for c in table.columns]
        return {n: scenario_value(table.column(n, 0), row[n]) for n in names}

    def _commit(self) -> None:
        s = self._session()
        if self.started and (s.active or s.savepoints):
            self._event(Event("commit", session=s.id))
        s.undo.clear()
        s.savepoints.clear()
        s.active = False

    def _rollback(self) -> None:
        s = self._session()
        self._undo(s, 0)
        if self.started and (s.active or s.savepoints):
            self._event(Event("rollback", session=s.id))
        s.savepoints.clear()
        s.active = False

    def _rollback_to(self, name: str, line: int) -> None:
        s = self._session()
        if name not in s.savepoints:
            raise SqlError(f"ORA-01086: savepoint {name} never established in this session", RUNTIME, line)
        self._undo(s, s.savepoints[name])
        for other in [k for k, v in s.savepoints.items() if v > s.savepoints[name]]:
            del s.savepoints[other]
        self._event(Event("rollback_to", session=s.id, name=name.lower()))

    @staticmethod
    def _undo(s: Session, mark: int) -> None:
        while len(s.undo) > mark:
            table, key, old, new_key, pos = s.undo.pop()
            if old is None:
                table.rows.pop(key, None)
            elif new_key is not None:  # an update: the old row back in its place
                table.put(key, old, replacing=new_key)
            else:  # a delete: the row back where it was
                table.put(key, old, at=pos)

    def _mark(self) -> tuple[int, dict[tuple[int, int], tuple[int, bool]], float]:
        """Where the timeline and every session's undo are now (see :meth:`_restore`)."""
        return len(self.events), {k: (len(s.undo), s.active) for k, s in self.sessions.items()}, self.pending_wait

    def _restore(self, mark: tuple[int, dict[tuple[int, int], tuple[int, bool]], float]) -> None:
        """Undo what ran since ``mark``, as Oracle's statement-level rollback does: the changes
        are undone and their events dropped (OLR's output does not show a rolled-back statement)."""
        del self.events[mark[0] :]
        for key, s in self.sessions.items():
            undo_len, active = mark[1].get(key, (0, False))
            self._undo(s, undo_len)
            s.active = active
        self.pending_wait = mark[2]

    # -- DDL
    def _ddl_event(self, e: Event) -> None:
        s = self._session()
        if s.active:  # DDL commits the open transaction first
            self._commit()
        e.session = s.id
        self._event(e)
