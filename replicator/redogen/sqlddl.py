"""DDL statements of the SQL compiler: CREATE TABLE, ALTER TABLE, DROP/TRUNCATE TABLE.

Before the start marker they build the scenario's tables (from the checkpoint when there is one,
:mod:`replicator.redogen.sqlschema`); after it each is a redogen DDL event, committing the
session's open transaction first as Oracle does.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from replicator import events as ev
from replicator.errors import ConfigError
from replicator.redogen.coltypes import parse_type
from replicator.redogen.scenario import Event
from replicator.redogen.sqlbase import CompilerBase, Sequence
from replicator.redogen.sqlexpr import (
    RUNTIME,
    SCHEMA,
    SYNTAX,
    Node,
    OraTime,
    SqlError,
    SqlParser,
    evaluate,
    to_number,
    to_text,
)
from replicator.redogen.sqltables import SqlColumn, SqlTable, cmp_key, coerce, definition, logged_supplemental


class DdlStatements(CompilerBase):
    """CREATE / ALTER / DROP / TRUNCATE TABLE."""

    def _create(self, p: SqlParser, line: int) -> None:
        p.expect("CREATE")
        if p.at("INDEX", "UNIQUE", "BITMAP"):
            self._create_index(p, line)
            return
        if p.accept("SEQUENCE"):
            self._create_sequence(p, line)
            return
        if p.accept("GLOBAL") or p.at("VIEW", "OR", "SYNONYM", "TYPE"):
            p.fail(f"CREATE {p.tok.text} is not supported (CREATE TABLE, INDEX, SEQUENCE)")
        p.expect("TABLE")
        name = p.ident()
        if name in self.tables:
            raise SqlError(f"ORA-00955: name {name} is already used by an existing object", RUNTIME, line)
        if p.at("AS") or (p.at("TABLESPACE", "NOLOGGING", "LOGGING", "PARALLEL", "NOPARALLEL")):
            self._create_as_select(p, name, line)
            return
        p.expect("(")
        columns: list[SqlColumn] = []
        pk: list[str] = []
        unique: list[list[str]] = []
        checks: list[Node] = []
        while True:
            if p.at("CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"):
                kind, what = self._table_constraint(p)
                if kind == "PRIMARY":
                    pk = what
                elif kind == "UNIQUE":
                    unique.append(what)
                elif kind == "CHECK":
                    checks.append(what)
                self._constraint_state(p)
            else:
                col, is_pk = self._column_def(p, unique, checks)
                columns.append(col)
                if is_pk:
                    pk = [col.name]
            if not p.accept(","):
                break
        p.expect(")")
        table = SqlTable(self.owner, name, columns, pk, unique=unique, checks=checks)
        self._physical(p, table, line)
        if p.accept("PARTITION"):
            self._partitioning(p, table)
            self._physical(p, table, line)
        if p.tok.kind != "eof":
            p.fail(f"CREATE TABLE clause {p.tok.text!r} is not supported")
        for c in columns:
            if c.name in pk:
                c.nullable = False
        if not self.started:
            table = self._from_schema(table, line)
            self.tables[name] = table
            return
        table.supplemental = logged_supplemental(table)
        self.tables[name] = table
        self._ddl_event(Event("create_table", definition=definition(table)))

    def _create_as_select(self, p: SqlParser, name: str, line: int) -> None:
        """Setup ``CREATE TABLE t [clauses] AS SELECT ...``: the table with the query's columns
        (a column read from a table keeps its type; a computed one is NUMBER, VARCHAR2(n), DATE,
        TIMESTAMP or RAW(n) by its values, as Oracle derives it) and rows. After the start marker
        it is refused: Oracle loads the rows direct-path, which redogen does not write."""
        if self.started:
            p.fail("CREATE TABLE ... AS SELECT after the start marker is not supported")
        table = SqlTable(self.owner, name, [SqlColumn("X", "NUMBER")], [])
        self._physical(p, table, line)
        p.expect("AS")
        q = self._query(p)
        names, rows = self._run_query(q, {})
        sources = [q.source, *[j[1] for j in q.joins]]
        known = [c for src in sources if isinstance(src, str) and src in self.tables for c in self.tables[src].columns]
        columns: list[SqlColumn] = []
        for n, col_name in enumerate(names):
            bare = col_name.split(".")[-1]
            source_col = next((c for c in known if c.name == bare), None)
            values = [r[n] for r in rows if r[n] is not None]
            if source_col is not None:
                ctype = source_col.type
            elif all(isinstance(v, (Decimal, int, float)) for v in values):
                ctype = "NUMBER"
            elif all(isinstance(v, OraTime) for v in values):
                ctype = "DATE" if all(v.kind == "DATE" for v in values) else "TIMESTAMP(6)"
            elif all(isinstance(v, bytes) for v in values):
                ctype = f"RAW({max([len(v) for v in values] + [1])})"
            else:
                ctype = f"VARCHAR2({max([len((to_text(v) or '').encode()) for v in values] + [1])})"
            if not re.fullmatch(r"[A-Z][A-Z0-9_$#]*", bare):
                raise SqlError(f"ORA-00998: must name the expression {col_name} with a column alias", RUNTIME, line)
            columns.append(SqlColumn(bare, ctype, source_col.nullable if source_col is not None else True))
        table = self._from_schema(SqlTable(self.owner, name, columns, []), line)
        self.tables[name] = table
        for r in rows:
            row = dict(zip([c.name for c in columns], r, strict=True))
            stored = {c.name: coerce(c, row.get(c.name), line) for c in table.columns}
            table.put(table.key_of(stored), stored)

    def _physical(self, p: SqlParser, table: SqlTable, line: int) -> None:
        """Physical clauses of ``CREATE TABLE`` that change nothing the redo of a row shows:
        ``TABLESPACE t``, ``PCTFREE/PCTUSED/INITRANS/MAXTRANS n``, ``[NO]LOGGING``, ``NOCOMPRESS``,
        ``SEGMENT CREATION ...``, ``STORAGE (...)``, ``[NO]PARALLEL``, ``ENABLE/DISABLE ROW MOVEMENT``, and
        ``LOB (cols) STORE AS [SECUREFILE | BASICFILE] [name] [(... [DISABLE STORAGE IN ROW] ...)]``,
        which sets the LOB columns' storage."""
        while p.tok.kind != "eof":
            if p.accept("TABLESPACE"):
                p.ident()
            elif p.at("PCTFREE", "PCTUSED", "INITRANS", "MAXTRANS"):
                p.i += 2
            elif (
                p.accept("LOGGING")
                or p.accept("NOLOGGING")
                or p.accept("NOCOMPRESS")
                or p.accept("CACHE")
                or p.accept("NOCACHE")
                or p.accept("MONITORING")
                or p.accept("NOMONITORING")
            ):
                pass
            elif p.accept("SEGMENT"):
                p.expect("CREATION")
                p.i += 1
            elif p.at("STORAGE") and p.peek().text == "(":
                p.i += 1
                self._skip_parens(p)
            elif p.at("ENABLE", "DISABLE") and p.peek().text == "ROW":
                p.i += 3
            elif p.accept("LOB"):
                cols = self._name_list(p)
                p.expect("STORE")
                p.expect("AS")
                basic = bool(p.accept("BASICFILE"))
                p.accept("SECUREFILE")
                if p.tok.kind == "id" and not p.at("TABLESPACE", "PCTFREE", "LOB", "PARTITION", "ENABLE", "DISABLE"):
                    p.ident()  # the LOB segment's name
                out_of_row = False
                if p.at("("):
                    words = [t.text for t in p.toks[p.i : self._skip_parens(p)]]
                    out_of_row = any(words[i : i + 4] == ["DISABLE", "STORAGE", "IN", "ROW"] for i in range(len(words)))
                for name in cols:
                    col = table.column(name, line)
                    base = col.type.split(" ")[0]
                    if base not in ("CLOB", "NCLOB", "BLOB"):
                        p.fail(f"LOB ({name}) STORE AS: {name} is no LOB column")
                    if out_of_row and not basic:
                        p.fail(f"LOB ({name}) STORE AS SECUREFILE (DISABLE STORAGE IN ROW) is not supported")
                    col.type = base + (
                        " BASICFILE DISABLE STORAGE IN ROW" if out_of_row else " BASICFILE" if basic else ""
                    )
                    col.ctype = parse_type(col.type)
            elif p.accept("PARALLEL") or p.accept("NOPARALLEL"):
                if p.tok.kind == "num":
                    p.i += 1
            elif p.at("COMPRESS", "ROW", "COLUMN", "ORGANIZATION", "CLUSTER"):
                p.fail(f"CREATE TABLE clause {p.tok.text!r} is not supported (its rows' redo is another format)")
            else:
                return

    @staticmethod
    def _skip_parens(p: SqlParser) -> int:
        """Skip a balanced ``( ... )``; the index of its closing parenthesis."""
        depth = 0
        while True:
            if p.tok.kind == "eof":
                p.fail("')' expected")
            depth += p.at("(") - p.at(")")
            p.i += 1
            if depth == 0:
                return p.i - 1

    def _from_schema(self, table: SqlTable, line: int) -> SqlTable:
        """The checkpoint's definition of a table the setup creates (its SQL when there is none)."""
        if self.schema is None:
            return table
        ct = self.schema.tables.get(table.name)
        if ct is None:
            raise SqlError(f"table {table.name} is not in the schema checkpoint", SCHEMA, line)
        cols = [SqlColumn(n, t, nullable) for n, t, nullable in ct.columns]
        declared = {c.name: c for c in table.columns}
        for c in cols:
            if c.name in declared:
                c.default, c.identity = declared[c.name].default, declared[c.name].identity
        if table.partitions and len(ct.partition_objs) != len(table.partitions):
            raise SqlError(
                f"{table.name}: {len(table.partitions)} partitions in the script, "
                f"{len(ct.partition_objs)} in the schema checkpoint",
                SCHEMA,
                line,
            )
        out = SqlTable(
            ct.owner,
            ct.name,
            cols,
            list(ct.primary_key),
            ct.supplemental,
            ct.obj,
            ct.data_obj,
            ct.ts,
            table.partition_kind,
            table.partition_col,
            table.partitions,
            list(ct.partition_objs),
            unique=table.unique,
            checks=table.checks,
        )
        out.supplemental = logged_supplemental(out)
        return out

    @staticmethod
    def _check(p: SqlParser) -> Node:
        p.expect("(")
        cond = p.expr()
        p.expect(")")
        return cond

    def _table_constraint(self, p: SqlParser) -> tuple[str, Any]:
        """An out-of-line constraint up to its state: ``[CONSTRAINT c] PRIMARY KEY (cols) |
        UNIQUE (cols) | CHECK (cond) | FOREIGN KEY (cols) REFERENCES ...`` as (PRIMARY | UNIQUE
        | CHECK | FOREIGN, the columns or the condition; None for a foreign key, not enforced)."""
        if p.accept("CONSTRAINT"):
            p.ident()
        if p.accept("PRIMARY"):
            p.expect("KEY")
            return "PRIMARY", self._name_list(p)
        if p.accept("UNIQUE"):
            return "UNIQUE", self._name_list(p)
        if p.accept("CHECK"):
            return "CHECK", self._check(p)
        p.expect("FOREIGN")
        p.expect("KEY")
        self._name_list(p)
        self._references(p)
        return "FOREIGN", None

    def _references(self, p: SqlParser) -> None:
        """``REFERENCES t [(cols)] [ON DELETE CASCADE | SET NULL]``: not enforced (the redo of a
        cascade is not written either)."""
        p.expect("REFERENCES")
        p.ident()
        if p.at("("):
            self._name_list(p)
        if p.accept("ON"):
            p.expect("DELETE")
            if not p.accept("CASCADE"):
                p.expect("SET")
                p.expect("NULL")

    @staticmethod
    def _constraint_state(p: SqlParser) -> None:
        """``[NOT] DEFERRABLE``, ``ENABLE``, ``USING INDEX ...``: nothing the redo shows."""
        while p.at(
            "ENABLE",
            "DISABLE",
            "VALIDATE",
            "NOVALIDATE",
            "DEFERRABLE",
            "INITIALLY",
            "IMMEDIATE",
            "DEFERRED",
            "RELY",
            "NORELY",
        ) or (p.at("NOT") and p.peek().text == "DEFERRABLE"):
            p.i += 1
        if p.accept("USING"):
            p.expect("INDEX")

    def _create_index(self, p: SqlParser, line: int) -> None:
        """``CREATE [UNIQUE|BITMAP] INDEX i ON t (cols) ...``: OLR ignores index redo; a unique
        index makes a duplicate fail (ORA-00001). Like any DDL it commits the open transaction."""
        unique = p.accept("UNIQUE")
        p.accept("BITMAP")
        p.expect("INDEX")
        p.ident()
        p.expect("ON")
        table = self._table(p.ident(), line)
        p.expect("(")
        cols: list[str] = []
        depth = 0
        while not (depth == 0 and p.at(")")):
            if p.tok.kind == "eof":
                p.fail("')' expected")
            if depth == 0 and p.tok.kind == "id" and p.tok.text not in ("ASC", "DESC"):
                cols.append(p.tok.text)
            depth += p.at("(") - p.at(")")
            p.i += 1
        p.i = len(p.toks) - 1  # storage, tablespace, LOCAL...
        if unique:
            table.unique.append(cols)
        if self.started and self._session().active:
            self._commit()

    def _create_sequence(self, p: SqlParser, line: int) -> None:
        """``CREATE SEQUENCE s [START WITH n] [INCREMENT BY m] [CACHE c | NOCACHE] ...``; its
        dictionary redo (SEQ$) is a system table's, which OLR does not print."""
        name = p.ident()
        start, step, cache = 1, 1, 20
        while p.tok.kind != "eof" and not p.at(";"):
            if p.accept("START"):
                p.expect("WITH")
                start = int(to_number(evaluate(p._unary(), self._lookup({})), line) or 1)
            elif p.accept("INCREMENT"):
                p.expect("BY")
                step = int(to_number(evaluate(p._unary(), self._lookup({})), line) or 1)
            elif p.accept("CACHE"):
                cache = int(p.tok.text)
                p.i += 1
            elif p.accept("NOCACHE"):
                cache = 1
            else:
                p.i += 1  # MINVALUE, MAXVALUE n, CYCLE, ORDER...
        if name in self.sequences:
            raise SqlError(f"ORA-00955: name {name} is already used by an existing object", RUNTIME, line)
        self.sequences[name] = Sequence(start, step, cache)
        if self.started and self._session().active:
            self._commit()

    def _column_def(
        self, p: SqlParser, unique: list[list[str]] | None = None, checks: list[Node] | None = None
    ) -> tuple[SqlColumn, bool]:
        name = p.ident()
        type_toks: list[str] = []
        depth = 0
        while p.tok.kind != "eof":
            if depth == 0 and (
                p.at(",", ")")
                or p.at("NOT", "NULL", "PRIMARY", "DEFAULT", "CONSTRAINT", "UNIQUE", "CHECK", "REFERENCES", "GENERATED")
            ):
                break
            if p.at("("):
                depth += 1
            elif p.at(")"):
                depth -= 1
            type_toks.append(p.tok.text)
            p.i += 1
        text = re.sub(r"\s*([(),])\s*", r"\1", " ".join(type_toks)).replace(",", ",")
        if not text:
            p.fail(f"column {name}: type missing")
        try:
            col = SqlColumn(name, text)
        except ConfigError as exc:
            raise SqlError(f"column {name}: {exc.message}", SYNTAX, p.tok.line) from None
        is_pk = False
        while not p.at(",", ")") and p.tok.kind != "eof":
            if p.accept("DEFAULT"):
                col.default = p._concat()
            elif p.accept("NOT"):
                p.expect("NULL")
                col.nullable = False
            elif p.accept("NULL"):
                pass
            elif p.accept("CONSTRAINT"):
                p.ident()
            elif p.at("UNIQUE", "CHECK", "REFERENCES") and unique is not None and checks is not None:
                if p.accept("UNIQUE"):
                    unique.append([name])
                elif p.accept("CHECK"):
                    checks.append(self._check(p))
                else:
                    self._references(p)
                self._constraint_state(p)
            elif p.accept("PRIMARY"):
                p.expect("KEY")
                is_pk = True
            elif p.accept("GENERATED"):
                col.identity = self._identity(p)
                col.nullable = False
            else:
                p.fail(f"column {name}: {p.tok.text!r} is not supported")
        return col, is_pk

    @staticmethod
    def _identity(p: SqlParser) -> tuple[str, int, int, int]:
        """``GENERATED [ALWAYS | BY DEFAULT [ON NULL]] AS IDENTITY [(START WITH n INCREMENT BY m CACHE c)]``."""
        mode = "BY DEFAULT"
        if p.accept("BY"):
            p.expect("DEFAULT")
            if p.accept("ON"):
                p.expect("NULL")
                mode = "ON NULL"
        else:
            p.accept("ALWAYS")
            mode = "ALWAYS"
        p.expect("AS")
        p.expect("IDENTITY")
        start, step, cache = 1, 1, 20  # Oracle's sequence defaults
        if p.accept("("):
            while not p.accept(")"):
                if p.accept("START"):
                    p.expect("WITH")
                    start = int(p.tok.text)
                elif p.accept("INCREMENT"):
                    p.expect("BY")
                    step = int(p.tok.text)
                elif p.accept("CACHE"):
                    cache = int(p.tok.text)
                elif p.accept("NOCACHE"):
                    cache = 1
                    continue
                elif p.at("ORDER", "NOORDER", "CYCLE", "NOCYCLE", "NOMAXVALUE", "NOMINVALUE"):
                    p.i += 1
                    continue
                else:
                    p.fail(f"identity option {p.tok.text!r} is not supported")
                p.i += 1
        return mode, start, step, cache

    def _partitioning(self, p: SqlParser, table: SqlTable) -> None:
        p.expect("BY")
        kind = p.ident()
        if kind not in ("RANGE", "LIST"):
            p.fail(f"PARTITION BY {kind} is not supported (RANGE, LIST)")
        cols = self._name_list(p)
        if len(cols) != 1:
            p.fail("partitioning on more than one column is not supported")
        table.partition_kind, table.partition_col = kind, cols[0]
        p.expect("(")
        while True:
            p.expect("PARTITION")
            pname = p.ident()
            p.expect("VALUES")
            bounds: list[Any] = []
            if kind == "RANGE":
                p.expect("LESS")
                p.expect("THAN")
            p.expect("(")
            while True:
                if p.accept("MAXVALUE"):
                    bounds.append("MAXVALUE")
                elif p.accept("DEFAULT"):
                    bounds.append("DEFAULT")
                else:
                    bounds.append(evaluate(p._concat(), self._lookup({})))
                if not p.accept(","):
                    break
            p.expect(")")
            table.partitions.append((pname, bounds))
            if not p.accept(","):
                break
        p.expect(")")

    def _alter(self, p: SqlParser, line: int) -> None:
        p.expect("ALTER")
        if p.accept("SYSTEM"):
            words = [tok.text for tok in p.toks[p.i :] if tok.kind == "id"]
            p.i = len(p.toks) - 1
            if words[:2] == ["SWITCH", "LOGFILE"] or words[:3] == ["ARCHIVE", "LOG", "CURRENT"]:
                if self.started:
                    self._event(Event("switch", session=self._session().id))
            elif words[:1] != ["CHECKPOINT"] and words[:1] != ["SET"]:
                p.fail(f"ALTER SYSTEM {' '.join(words[:2])} is not supported (SWITCH LOGFILE, ARCHIVE LOG CURRENT)")
            return
        if p.at("SESSION", "DATABASE"):  # NLS settings, supplemental logging of the database: no row change
            p.i = len(p.toks) - 1
            return
        if not p.accept("TABLE"):
            p.fail(f"ALTER {p.tok.text} is not supported (ALTER TABLE, SESSION, SYSTEM SWITCH LOGFILE)")
        table = self._table(p.ident(), line)
        if p.accept("ADD"):
            if p.accept("SUPPLEMENTAL"):
                p.expect("LOG")
                p.expect("DATA")
                p.expect("(")
                kinds = [p.ident()]
                while p.at("KEY", ","):
                    p.i += 1
                    if p.tok.kind == "id" and not p.at("KEY"):
                        kinds.append(p.ident())
                p.expect(")")
                p.expect("COLUMNS")
                if self.started:
                    if (
                        "ALL" in kinds
                        and table.supplemental != "all"
                        and not any(c.ctype is not None and c.ctype.type_code == ev.TYPE_BOOLEAN for c in table.columns)
                    ):
                        p.fail(
                            "ADD SUPPLEMENTAL LOG DATA after the start marker is not supported (unless the "
                            "table already logs all columns: then Oracle refuses it with ORA-32588)"
                        )
                    return
                if self.schema is None:
                    level = "all" if "ALL" in kinds else "pk" if "PRIMARY" in kinds else table.supplemental
                    if level == "all" or table.supplemental != "all":
                        table.supplemental = level
                return
            cols: list[SqlColumn] = []
            if p.accept("("):
                while True:
                    cols.append(self._column_def(p)[0])
                    if not p.accept(","):
                        break
                p.expect(")")
            elif p.at("CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"):
                if self.started:
                    p.fail("ALTER TABLE ADD CONSTRAINT after the start marker is not supported")
                self._add_constraint(p, table, line)
                return
            else:
                cols.append(self._column_def(p)[0])
            for col in cols:
                if any(c.name == col.name for c in table.columns):
                    if not self.started and self.schema is not None:
                        continue  # the checkpoint, taken at the start, already has it
                    if not self.started:
                        raise SqlError(f"ORA-01430: column {col.name} already exists in {table.name}", RUNTIME, line)
                    # the checkpoint was taken after the DDL: the column starts out of the table
                    for t in (table, *[i for i in self.initial if i.name == table.name]):
                        t.columns = [c for c in t.columns if c.name != col.name]
                table.columns.append(col)
                for row in table.rows.values():  # a metadata-only add: nothing stored in the rows
                    row.setdefault(col.name, None)
                if self.started:
                    self._ddl_event(
                        Event(
                            "add_column",
                            table=table.name,
                            column=f"{col.name} {col.type}{'' if col.nullable else ' NOT NULL'}",
                        )
                    )
            return
        # Before the start marker a change writes no event; with a schema checkpoint (taken at the
        # start) the table already is as the setup leaves it, so a change it shows is skipped.
        setup_ck = not self.started and self.schema is not None
        if p.accept("DROP"):
            if p.accept("COLUMN"):
                names = [p.ident()]
            elif p.at("("):
                names = self._name_list(p)
            else:
                p.fail(f"ALTER TABLE DROP {p.tok.text} is not supported (DROP COLUMN)")
            for n in names:
                if not (setup_ck and not any(c.name == n for c in table.columns)):
                    self._drop_column(table, n, "drop_column", line)
        elif p.accept("SET"):
            p.expect("UNUSED")
            names = self._name_list(p) if p.at("(") else [p.expect("COLUMN") and p.ident()]
            for n in names:
                if not (setup_ck and not any(c.name == n for c in table.columns)):
                    self._drop_column(table, n, "set_unused_column", line)
        elif p.accept("RENAME"):
            if p.accept("TO"):  # RENAME TO: in the setup only (after the start OLR would need the dictionary change)
                new_name = p.ident()
                if self.started:
                    p.fail("ALTER TABLE RENAME TO after the start marker is not supported")
                if new_name in self.tables:
                    raise SqlError(f"ORA-00955: name {new_name} is already used by an existing object", RUNTIME, line)
                del self.tables[table.name]
                if self.schema is not None:  # the checkpoint describes the table under its new name
                    renamed = self._from_schema(SqlTable(self.owner, new_name, table.columns, table.primary_key), line)
                    renamed.rows, renamed.unique, renamed.checks = table.rows, table.unique, table.checks
                else:
                    renamed, table.name = table, new_name
                self.tables[new_name] = renamed
                return
            p.expect("COLUMN")
            old = p.ident()
            p.expect("TO")
            new = p.ident()
            if setup_ck and not any(c.name == old for c in table.columns):
                return
            col = table.column(old, line)
            col.name = new
            for row in table.rows.values():
                row[new] = row.pop(old, None)
            table.primary_key = [new if k == old else k for k in table.primary_key]
            self._ddl_event(Event("rename_column", table=table.name, column=old, to=new))
        elif p.accept("MODIFY"):
            specs: list[tuple[str, str, bool | None]] = []
            paren = p.accept("(")
            while True:
                name = p.ident()
                type_toks: list[str] = []
                depth = 0
                while p.tok.kind != "eof" and not (depth == 0 and (p.at(",", ")") or p.at("NOT", "NULL"))):
                    depth += p.at("(") - p.at(")")
                    type_toks.append(p.tok.text)
                    p.i += 1
                nullable: bool | None = None
                if p.accept("NOT"):
                    p.expect("NULL")
                    nullable = False
                elif p.accept("NULL"):
                    nullable = True
                specs.append((name, re.sub(r"\s*([(),])\s*", r"\1", " ".join(type_toks)), nullable))
                if not paren or not p.accept(","):
                    break
            if paren:
                p.expect(")")
            if setup_ck:
                return  # the checkpoint's column types and nullability are the ones at the start
            for name, text, nullable in specs:
                col = table.column(name, line)
                new_type = text or col.type
                try:
                    ct = parse_type(new_type)
                except ConfigError as exc:
                    raise SqlError(f"column {name}: {exc.message}", SYNTAX, line) from None
                if ct.type_code != col.ctype.type_code and not self.started:  # type: ignore[union-attr]
                    if any(row.get(name) is not None for row in table.rows.values()):
                        raise SqlError(
                            f"ORA-01439: column {name} to be modified must be empty to change datatype", RUNTIME, line
                        )
                elif ct.type_code != col.ctype.type_code:  # type: ignore[union-attr]
                    p.fail(f"MODIFY {name} {col.type} -> {new_type}: only a change within the same type is supported")
                probe = SqlColumn(name, new_type, col.nullable if nullable is None else nullable, ctype=ct)
                for row in table.rows.values():
                    if row.get(name) is None and not probe.nullable:
                        raise SqlError(f"ORA-02296: cannot enable NOT NULL on {name}: null values found", RUNTIME, line)
                    try:
                        fits = coerce(probe, row.get(name), line) == row.get(name)
                    except SqlError:
                        fits = False
                    if not fits:
                        raise SqlError(
                            f"ORA-01441: cannot decrease column length of {name}: some value is too big", RUNTIME, line
                        )
                col.type, col.ctype, col.nullable = new_type, ct, probe.nullable
                self._ddl_event(
                    Event(
                        "modify_column",
                        table=table.name,
                        column=f"{name} {new_type}{'' if col.nullable else ' NOT NULL'}",
                    )
                )
        else:
            p.fail(f"ALTER TABLE {p.tok.text} is not supported (ADD, DROP COLUMN, SET UNUSED, RENAME COLUMN, MODIFY)")

    def _add_constraint(self, p: SqlParser, table: SqlTable, line: int) -> None:
        """Setup ``ALTER TABLE t ADD [CONSTRAINT c] PRIMARY KEY | UNIQUE (cols) | CHECK (cond) |
        FOREIGN KEY ...``: enforced from then on, as in ``CREATE TABLE`` (the rows already there
        must satisfy a key: ORA-02437 / ORA-02299; a CHECK is not run on them). A schema
        checkpoint's primary key wins."""
        kind, what = self._table_constraint(p)
        if kind == "PRIMARY":
            cols = what
            for n in cols:
                table.column(n, line)
            if any(row.get(n) is None for row in table.rows.values() for n in cols):
                raise SqlError("ORA-02437: cannot validate primary key - NULL in a key column", RUNTIME, line)
            old_key = table.primary_key
            table.primary_key = cols
            keyed = {table.key_of(row): row for row in table.rows.values()}  # row order kept
            if len(keyed) != len(table.rows):
                table.primary_key = old_key
                raise SqlError("ORA-02437: cannot validate primary key - primary key violated", RUNTIME, line)
            self._commit()  # DDL: the setup's open changes are committed (their undo keys are the old ones)
            table.rows = keyed
            if self.schema is not None:
                table.primary_key = old_key  # the checkpoint's key is the one at the start
                table.rows = {table.key_of(row): row for row in keyed.values()}
            for c in table.columns:
                if c.name in cols:
                    c.nullable = False
        elif kind == "UNIQUE":
            cols = what
            keys = [
                k
                for k in (tuple(cmp_key(row.get(n)) for n in cols) for row in table.rows.values())
                if k != (None,) * len(k)
            ]
            if len(set(keys)) != len(keys):
                raise SqlError("ORA-02299: cannot validate unique constraint - duplicate keys found", RUNTIME, line)
            table.unique.append(cols)
        elif kind == "CHECK":
            table.checks.append(what)
        self._constraint_state(p)
        if self._session().active:
            self._commit()

    def _drop_column(self, table: SqlTable, name: str, op: str, line: int) -> None:
        table.column(name, line)
        if name in table.primary_key:
            raise SqlError(f"ORA-12992: cannot drop primary key column {name}", RUNTIME, line)
        table.columns = [c for c in table.columns if c.name != name]
        for row in table.rows.values():
            row.pop(name, None)
        self._ddl_event(Event(op, table=table.name, column=name))

    def _drop_truncate(self, p: SqlParser, line: int) -> None:
        word = p.ident()
        if word == "DROP" and p.at("PROCEDURE", "FUNCTION"):
            p.i += 1
            name = p.ident()
            if self.stored_procs.pop(name, None) is None and self.stored_env.pop(name, None) is None:
                raise SqlError(f"ORA-04043: object {name} does not exist", RUNTIME, line)
            if self.started and self._session().active:
                self._commit()
            return
        if word == "DROP" and p.at("SEQUENCE", "INDEX"):
            kind = p.ident()
            name = p.ident()
            if kind == "SEQUENCE" and self.sequences.pop(name, None) is None:
                raise SqlError(f"ORA-02289: sequence {name} does not exist", RUNTIME, line)
            if self.started and self._session().active:
                self._commit()
            return
        p.expect("TABLE")
        table = self._table(p.ident(), line)
        p.accept("PURGE")
        p.accept("CASCADE")
        if word == "DROP":
            del self.tables[table.name]
            self._ddl_event(Event("drop_table", table=table.name))
        else:
            table.rows.clear()
            self._ddl_event(Event("truncate", table=table.name))
