"""DML statements of the SQL compiler: INSERT, UPDATE, DELETE, MERGE.

Each statement runs against the compiler's rows (an ``UPDATE``'s ``WHERE`` picks the rows it
changes, its ``SET`` reads the row before the change) and records one event per row, with the
session's undo kept for ``ROLLBACK``.
"""

from __future__ import annotations

from typing import Any

from replicator import events as ev
from replicator.redogen.scenario import Event
from replicator.redogen.sqlbase import Collection
from replicator.redogen.sqlexpr import RUNTIME, SYNTAX, Node, SqlError, SqlParser, evaluate, to_text
from replicator.redogen.sqlquery import Queries, Query, Scope
from replicator.redogen.sqltables import SqlTable, coerce, scenario_value


class DmlStatements(Queries):
    """INSERT (VALUES or SELECT) / UPDATE / DELETE / MERGE."""

    # -- INSERT
    def _insert(self, p: SqlParser, env: dict[str, Any]) -> None:
        """``INSERT INTO t [(cols)] VALUES (...)`` or ``INSERT INTO t [(cols)] SELECT ...``."""
        line = p.tok.line
        p.expect("INSERT")
        p.expect("INTO")
        table = self._table(p.ident(), line)
        if p.tok.kind == "id" and p.tok.text not in ("VALUES", "SELECT", "WITH"):
            p.i += 1  # alias
        names: list[str] | None = None
        if p.at("(") and p.peek().text not in ("SELECT", "WITH"):
            names = self._name_list(p)
        if p.at("SELECT", "WITH") or p.at("("):
            self._insert_select(p, env, table, names, line)
            return
        p.expect("VALUES")
        exprs = self._value_list(p)
        row = self._insert_row(table, names, self._values(table, names, exprs, self._lookup(env), line), env, line)
        self.rowcount = 1
        self._returning(p, env, table, [row])

    @staticmethod
    def _values(
        table: SqlTable, names: list[str] | None, exprs: list[Node] | Node, lookup: Any, line: int
    ) -> list[Any]:
        """The values of ``VALUES (e, ...)``, or of ``VALUES record`` (a %ROWTYPE record: by column
        name; a record of other field names: by position)."""
        if isinstance(exprs, list):
            return [evaluate(node, lookup) for node in exprs]
        rec = evaluate(exprs, lookup)
        if not isinstance(rec, dict):
            raise SqlError("VALUES without parentheses needs a record", RUNTIME, line)
        wanted = names or [c.name for c in table.columns]
        if all(n in rec for n in wanted):
            return [rec[n] for n in wanted]
        if len(rec) != len(wanted):  # a record of other field names binds by position
            raise SqlError(f"ORA-00913: the record has {len(rec)} fields for {len(wanted)} columns", RUNTIME, line)
        return list(rec.values())

    @staticmethod
    def _value_list(p: SqlParser) -> list[Node] | Node:
        """``(e, ...)``, or a record expression (``VALUES v_row``, ``VALUES v(i)``)."""
        if not p.at("("):
            return p._concat()
        p.expect("(")
        exprs = [p.expr()]
        while p.accept(","):
            exprs.append(p.expr())
        p.expect(")")
        return exprs

    def _new_row(
        self, table: SqlTable, names: list[str] | None, values: list[Any], env: dict[str, Any], line: int
    ) -> tuple[dict[str, Any], list[str]]:
        """The row an insert stores (identity, defaults, NOT NULL checked) and the columns its event lists."""
        cols = names or [c.name for c in table.columns]
        if len(cols) != len(values):
            raise SqlError(
                f"ORA-{'00947: not enough' if len(values) < len(cols) else '00913: too many'} values", RUNTIME, line
            )
        lookup = self._lookup(env)
        row: dict[str, Any] = {}
        for name, value in zip(cols, values, strict=True):
            row[name] = coerce(table.column(name, line), value, line)
        for c in table.columns:
            if c.identity is not None:
                given = c.name in row
                if given and c.identity[0] == "ALWAYS":
                    raise SqlError(
                        f"ORA-32795: cannot insert into a generated always identity column {c.name}", RUNTIME, line
                    )
                if not given or (row[c.name] is None and c.identity[0] == "ON NULL"):
                    row[c.name] = table.next_identity(c, self.node)
                    if names is not None and c.name not in cols:
                        cols = [*cols, c.name]
            if c.name not in row:
                row[c.name] = coerce(c, evaluate(c.default, lookup), line) if c.default is not None else None
        for c in table.columns:
            if row[c.name] is None and (not c.nullable or c.name in table.primary_key):
                raise SqlError(f"ORA-01400: cannot insert NULL into {table.name}.{c.name}", RUNTIME, line)
        return row, cols

    def _store_row(
        self, table: SqlTable, row: dict[str, Any], names: list[str] | None, cols: list[str], line: int
    ) -> dict[str, Any]:
        """Put a new row into the table (ORA-00001 on a duplicate key); its event values."""
        key = table.key_of(row)
        if key in table.rows:
            raise SqlError(
                f"ORA-00001: unique constraint violated: {table.name} key {to_text(row[table.primary_key[0]])}",
                RUNTIME,
                line,
            )
        if table.unique or table.checks:
            table.check_row(row, key, self._lookup({}, row, table), line)
        s = self._session()
        table.rows[key] = row
        s.undo.append((table, key, None, None, None))
        s.active = True
        full = names is None
        return {
            c.name: scenario_value(c, row[c.name])
            for c in table.columns
            if full or c.name in cols or c.default is not None
        }

    def _insert_row(
        self, table: SqlTable, names: list[str] | None, values: list[Any], env: dict[str, Any], line: int
    ) -> dict[str, Any]:
        """One single-row insert (redo 11.2); the row stored."""
        row, cols = self._new_row(table, names, values, env, line)
        event_values = self._store_row(table, row, names, cols, line)
        self._event(
            Event("insert", session=self._session().id, table=table.partition_of(row, line), values=event_values)
        )
        return row

    def _insert_rows(
        self, table: SqlTable, names: list[str] | None, rows: list[list[Any]], env: dict[str, Any], line: int
    ) -> None:
        """A multi-row insert (INSERT ... SELECT, FORALL): Oracle writes it as array inserts, redo
        11.11 (QMI) with the rows of one block each (``insert_many`` events, one per run of rows
        going to the same partition). A single row, or a table with LOB columns (no array insert
        then), is written row by row (11.2)."""
        if len(rows) == 1 or any(
            c.ctype is not None and c.ctype.type_code in (ev.TYPE_CLOB, ev.TYPE_BLOB) for c in table.columns
        ):
            for values in rows:
                self._insert_row(table, names, values, env, line)
            return
        runs: list[tuple[str, list[dict[str, Any]]]] = []
        for values in rows:
            row, cols = self._new_row(table, names, values, env, line)
            where = table.partition_of(row, line)
            event_values = self._store_row(table, row, names, cols, line)
            if runs and runs[-1][0] == where:
                runs[-1][1].append(event_values)
            else:
                runs.append((where, [event_values]))
        s = self._session()
        for where, values_list in runs:
            if len(values_list) == 1:
                self._event(Event("insert", session=s.id, table=where, values=values_list[0]))
            else:
                self._event(Event("insert_many", session=s.id, table=where, rows=values_list))

    def _insert_select(
        self, p: SqlParser, env: dict[str, Any], table: SqlTable, names: list[str] | None, line: int
    ) -> None:
        query = self._query(p)
        _, rows = self._run_query(query, env)
        if rows:
            self._insert_rows(table, names, rows, env, line)
        self.rowcount = len(rows)

    # -- UPDATE
    def _update(self, p: SqlParser, env: dict[str, Any]) -> None:
        line = p.tok.line
        p.expect("UPDATE")
        table = self._table(p.ident(), line)
        if p.tok.kind == "id" and p.tok.text != "SET":
            p.i += 1  # alias
        p.expect("SET")
        if p.at("ROW") and p.peek().text == "=":  # SET ROW = record (PL/SQL): every column, by position
            p.i += 2
            record = p._concat()
            sets = [(c.name, ("field_at", record, n, line)) for n, c in enumerate(table.columns)]
        else:
            sets = self._set_list(p, table, line)
        cond = self._where(p)
        changed = [
            self._update_row(table, key, row, sets, self._lookup(env, row, table), line)[1]
            for key, row in self._matches(table, cond, env)
        ]
        self.rowcount = len(changed)
        self._returning(p, env, table, changed)

    @staticmethod
    def _set_list(p: SqlParser, table: SqlTable, line: int) -> list[tuple[str, Node]]:
        sets: list[tuple[str, Node]] = []
        while True:
            if p.accept("("):  # (a, b) = (SELECT x, y ...): one row subquery for several columns
                names = [p.ident()]
                while p.accept(","):
                    names.append(p.ident())
                p.expect(")")
                p.expect("=")
                p.expect("(")
                if not p.at("SELECT", "WITH"):
                    p.fail("SET (columns) = needs a subquery")
                query = p._subquery()
                if len(query.items) != len(names) and all(node is not None for node, _ in query.items):
                    raise SqlError(
                        "ORA-00913: too many values"
                        if len(query.items) > len(names)
                        else "ORA-00947: not enough values",
                        RUNTIME,
                        line,
                    )
                for n, name in enumerate(names):
                    table.column(name, line)
                    sets.append((name, ("scalar_col", query, n, line)))
                if not p.accept(","):
                    break
                continue
            name = p.ident()
            if p.accept("."):
                name = p.ident()
            table.column(name, line)
            p.expect("=")
            sets.append((name, p.expr()))
            if not p.accept(","):
                break
        return sets

    def _update_row(
        self, table: SqlTable, key: Any, row: dict[str, Any], sets: list[tuple[str, Node]], lookup: Any, line: int
    ) -> tuple[Any, dict[str, Any]]:
        """Change one row (the ``SET`` expressions read the row before the change); its new key and values."""
        s = self._session()
        new = dict(row)
        for name, node in sets:
            new[name] = coerce(table.column(name, line), evaluate(node, lookup), line)
        for c in table.columns:
            if new[c.name] is None and (not c.nullable or c.name in table.primary_key):
                raise SqlError(f"ORA-01407: cannot update {table.name}.{c.name} to NULL", RUNTIME, line)
        where = table.partition_of(row, line)
        if table.partitions and table.partition_of(new, line) != where:
            raise SqlError(
                f"an UPDATE moving a row to another partition of {table.name} is not supported", SYNTAX, line
            )
        new_key = table.key_of(new) if table.primary_key else key
        if new_key != key and new_key in table.rows:
            raise SqlError(f"ORA-00001: unique constraint violated on {table.name}", RUNTIME, line)
        if table.unique or table.checks:
            table.check_row(new, key, self._lookup({}, new, table), line)
        event = Event(
            "update",
            session=s.id,
            table=where,
            key=self._key_values(table, row),
            values={n: scenario_value(table.column(n, line), new[n]) for n, _ in sets},
        )
        table.put(new_key, new, replacing=key)
        s.undo.append((table, key, row, new_key, None))
        s.active = True
        self._event(event)
        return new_key, new

    # -- DELETE
    def _delete(self, p: SqlParser, env: dict[str, Any]) -> None:
        line = p.tok.line
        p.expect("DELETE")
        p.accept("FROM")
        table = self._table(p.ident(), line)
        if p.tok.kind == "id" and p.tok.text != "WHERE":
            p.i += 1  # alias
        cond = self._where(p)
        gone = self._matches(table, cond, env)
        for key, row in gone:
            self._delete_row(table, key, row, line)
        self.rowcount = len(gone)
        self._returning(p, env, table, [row for _, row in gone])

    def _returning(self, p: SqlParser, env: dict[str, Any], table: SqlTable, rows: list[dict[str, Any]]) -> None:
        """``RETURNING e, ... [BULK COLLECT] INTO v, ...`` of the rows a DML statement changed."""
        if not p.accept("RETURNING", "RETURN"):
            return
        exprs = [p.expr()]
        while p.accept(","):
            exprs.append(p.expr())
        bulk = p.accept("BULK")
        if bulk:
            p.expect("COLLECT")
        p.expect("INTO")
        targets = [p.ident()]
        while p.accept(","):
            targets.append(p.ident())
        if len(targets) != len(exprs):
            raise SqlError("ORA-00913: RETURNING and INTO lists differ in length", RUNTIME, p.tok.line)
        values = [[evaluate(e, self._lookup(env, r, table)) for e in exprs] for r in rows]
        for n, target in enumerate(targets):
            if bulk:
                coll = env.get(target)
                if not isinstance(coll, Collection):
                    raise SqlError(f"BULK COLLECT INTO {target}: not a collection", RUNTIME, p.tok.line)
                coll.items = {i: v[n] for i, v in enumerate(values, 1)}
            else:
                if len(values) > 1:
                    raise SqlError(
                        "ORA-01422: exact fetch returns more than requested number of rows", RUNTIME, p.tok.line
                    )
                if target not in env:
                    raise SqlError(f"PLS-00201: identifier {target} must be declared", RUNTIME, p.tok.line)
                env[target] = values[0][n] if values else None

    def _delete_row(self, table: SqlTable, key: Any, row: dict[str, Any], line: int) -> None:
        s = self._session()
        event = Event("delete", session=s.id, table=table.partition_of(row, line), key=self._key_values(table, row))
        # where a rollback puts the row back (a full scan's order); costly on big tables, where it goes last
        pos = list(table.rows).index(key) if len(table.rows) <= 5000 else None
        del table.rows[key]
        s.undo.append((table, key, row, None, pos))
        s.active = True
        self._event(event)

    # -- MERGE
    def _merge(self, p: SqlParser, env: dict[str, Any]) -> None:
        """``MERGE INTO t [a] USING (query) | table [s] ON (cond) WHEN MATCHED THEN UPDATE SET ...
        [WHERE c] [DELETE WHERE c] WHEN NOT MATCHED THEN INSERT [(cols)] VALUES (...) [WHERE c]``.

        Source rows are taken in their order; each one updates the target rows it matches (one
        update event per row, as a MERGE writes row by row) or is inserted. A target row matched
        twice fails the statement (ORA-30926)."""
        line = p.tok.line
        p.expect("MERGE")
        p.expect("INTO")
        table = self._table(p.ident(), line)
        alias = p.ident() if p.tok.kind == "id" and p.tok.text != "USING" else ""
        p.expect("USING")
        if p.at("("):
            p.i += 1
            src = self._query(p)
            p.expect(")")
            src_names = set()
        else:  # a table: all its columns
            src = Query([(None, "")], p.ident(), line=line)
            src_names = {src.source}
        if p.tok.kind == "id" and p.tok.text != "ON":
            src_names.add(p.ident())
        p.expect("ON")
        p.expect("(")
        on = p.expr()
        p.expect(")")
        if not p.at("WHEN"):
            p.fail("MERGE needs WHEN MATCHED THEN UPDATE and/or WHEN NOT MATCHED THEN INSERT")
        sets: list[tuple[str, Node]] | None = None
        upd_where = del_where = ins_where = None
        ins_names: list[str] | None = None
        ins_values: list[Node] | Node | None = None
        while p.accept("WHEN"):
            if p.accept("MATCHED"):
                p.expect("THEN")
                p.expect("UPDATE")
                p.expect("SET")
                sets = self._set_list(p, table, line)
                upd_where = self._where(p)
                if p.accept("DELETE"):
                    del_where = self._where(p)
            else:
                p.expect("NOT")
                p.expect("MATCHED")
                p.expect("THEN")
                p.expect("INSERT")
                if p.at("("):
                    ins_names = self._name_list(p)
                p.expect("VALUES")
                ins_values = self._value_list(p)
                ins_where = self._where(p)
        names, rows = self._run_query(src, env)
        tgt_names = frozenset({table.name, alias} - {""})
        tgt_cols = [c.name for c in table.columns]
        touched: set[Any] = set()
        count = 0
        for values in rows:
            src_scope = Scope(frozenset(src_names), names, dict(zip(names, values, strict=True)))
            hits = [
                (k, r)
                for k, r in list(table.rows.items())
                if evaluate(on, self._scoped(env, [Scope(tgt_names, tgt_cols, r), src_scope], {})) is True
            ]
            if hits:
                if sets is None:
                    continue
                for key, row in hits:
                    if key in touched:
                        raise SqlError(
                            "ORA-30926: unable to get a stable set of rows in the source tables", RUNTIME, line
                        )
                    touched.add(key)
                    lookup = self._scoped(env, [Scope(tgt_names, tgt_cols, row), src_scope], {})
                    if upd_where is not None and evaluate(upd_where, lookup) is not True:
                        continue
                    new_key, new_row = self._update_row(table, key, row, sets, lookup, line)
                    count += 1
                    after = self._scoped(env, [Scope(tgt_names, tgt_cols, new_row), src_scope], {})
                    if del_where is not None and evaluate(del_where, after) is True:  # reads the updated row
                        self._delete_row(table, new_key, new_row, line)
            elif ins_values is not None:
                lookup = self._scoped(env, [src_scope], {})
                if ins_where is not None and evaluate(ins_where, lookup) is not True:
                    continue
                self._insert_row(table, ins_names, self._values(table, ins_names, ins_values, lookup, line), env, line)
                count += 1
        self.rowcount = count
