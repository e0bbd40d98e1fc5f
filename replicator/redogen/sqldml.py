"""DML statements of the SQL compiler: INSERT, UPDATE, DELETE.

Each statement runs against the compiler's rows (an ``UPDATE``'s ``WHERE`` picks the rows it
changes, its ``SET`` reads the row before the change) and records one event per row, with the
session's undo kept for ``ROLLBACK``.
"""

from __future__ import annotations

from typing import Any

from replicator.redogen.scenario import Event
from replicator.redogen.sqlbase import CompilerBase
from replicator.redogen.sqlexpr import RUNTIME, SYNTAX, Node, Parser, SqlError, evaluate, to_text
from replicator.redogen.sqltables import coerce, scenario_value


class DmlStatements(CompilerBase):
    """INSERT / UPDATE / DELETE."""

    def _insert(self, p: Parser, env: dict[str, Any]) -> None:
        line = p.tok.line
        p.expect("INSERT")
        p.expect("INTO")
        table = self._table(p.ident(), line)
        if p.tok.kind == "id" and p.tok.text not in ("VALUES",):
            p.i += 1  # alias
        names: list[str] | None = None
        if p.accept("("):
            names = [p.ident()]
            while p.accept(","):
                names.append(p.ident())
            p.expect(")")
        if p.at("SELECT"):
            p.fail("INSERT ... SELECT is not supported; use VALUES (in a FOR loop for many rows)")
        p.expect("VALUES")
        p.expect("(")
        exprs = [p.expr()]
        while p.accept(","):
            exprs.append(p.expr())
        p.expect(")")
        cols = names or [c.name for c in table.columns]
        if len(cols) != len(exprs):
            raise SqlError(f"ORA-{'00947: not enough' if len(exprs) < len(cols) else '00913: too many'} values",
                           RUNTIME, line)
        lookup = self._lookup(env)
        row: dict[str, Any] = {}
        for name, node in zip(cols, exprs, strict=True):
            row[name] = coerce(table.column(name, line), evaluate(node, lookup), line)
        for c in table.columns:
            if c.identity is not None:
                given = c.name in row
                if given and c.identity[0] == "ALWAYS":
                    raise SqlError(f"ORA-32795: cannot insert into a generated always identity column {c.name}",
                                   RUNTIME, line)
                if not given or (row[c.name] is None and c.identity[0] == "ON NULL"):
                    row[c.name] = table.next_identity(c, self.node)
                    if names is not None and c.name not in cols:
                        cols = [*cols, c.name]
            if c.name not in row:
                row[c.name] = coerce(c, evaluate(c.default, lookup), line) if c.default is not None else None
        for c in table.columns:
            if row[c.name] is None and (not c.nullable or c.name in table.primary_key):
                raise SqlError(f"ORA-01400: cannot insert NULL into {table.name}.{c.name}", RUNTIME, line)
        key = table.key_of(row)
        if key in table.rows:
            raise SqlError(f"ORA-00001: unique constraint violated: {table.name} key {to_text(row[table.primary_key[0]])}",
                           RUNTIME, line)
        s = self._session()
        table.rows[key] = row
        s.undo.append((table, key, None, None))
        s.active = True
        full = names is None
        values = {c.name: scenario_value(c, row[c.name]) for c in table.columns
                  if full or c.name in cols or c.default is not None}
        self._event(Event("insert", session=s.id, table=table.partition_of(row, line), values=values))

    def _update(self, p: Parser, env: dict[str, Any]) -> None:
        line = p.tok.line
        p.expect("UPDATE")
        table = self._table(p.ident(), line)
        if p.tok.kind == "id" and p.tok.text != "SET":
            p.i += 1  # alias
        p.expect("SET")
        sets: list[tuple[str, Node]] = []
        while True:
            name = p.ident()
            if p.accept("."):
                name = p.ident()
            table.column(name, line)
            p.expect("=")
            sets.append((name, p.expr()))
            if not p.accept(","):
                break
        cond = self._where(p)
        s = self._session()
        for key, row in self._matches(table, cond, env):
            lookup = self._lookup(env, row, table)
            new = dict(row)
            for name, node in sets:
                new[name] = coerce(table.column(name, line), evaluate(node, lookup), line)
            for c in table.columns:
                if new[c.name] is None and (not c.nullable or c.name in table.primary_key):
                    raise SqlError(f"ORA-01407: cannot update {table.name}.{c.name} to NULL", RUNTIME, line)
            where = table.partition_of(row, line)
            if table.partitions and table.partition_of(new, line) != where:
                raise SqlError(f"an UPDATE moving a row to another partition of {table.name} is not supported",
                               SYNTAX, line)
            new_key = table.key_of(new) if table.primary_key else key
            if new_key != key and new_key in table.rows:
                raise SqlError(f"ORA-00001: unique constraint violated on {table.name}", RUNTIME, line)
            event = Event("update", session=s.id, table=where, key=self._key_values(table, row),
                          values={n: scenario_value(table.column(n, line), new[n]) for n, _ in sets})
            if new_key != key:
                del table.rows[key]
            table.rows[new_key] = new
            s.undo.append((table, key, row, new_key))
            s.active = True
            self._event(event)

    def _delete(self, p: Parser, env: dict[str, Any]) -> None:
        line = p.tok.line
        p.expect("DELETE")
        p.accept("FROM")
        table = self._table(p.ident(), line)
        if p.tok.kind == "id" and p.tok.text != "WHERE":
            p.i += 1  # alias
        cond = self._where(p)
        s = self._session()
        for key, row in self._matches(table, cond, env):
            event = Event("delete", session=s.id, table=table.partition_of(row, line),
                          key=self._key_values(table, row))
            del table.rows[key]
            s.undo.append((table, key, row, None))
            s.active = True
            self._event(event)

