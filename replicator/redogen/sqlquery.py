"""Queries of the SQL compiler: the SELECTs that feed INSERT ... SELECT, MERGE ... USING,
cursor FOR loops and SELECT ... INTO.

Supported: ``SELECT [DISTINCT] list FROM DUAL | table | (subquery) [alias] [WHERE cond]
[CONNECT BY cond] [ORDER BY ...]``, chained with ``UNION ALL``; ``*`` and ``alias.*``;
``LEVEL`` (``CONNECT BY LEVEL <= n`` on DUAL makes n rows) and ``ROWNUM``; the aggregates
``COUNT SUM MIN MAX AVG`` over the whole result (no ``GROUP BY``). A query reads the rows as they
are when it starts (Oracle's read consistency): a cursor loop changing its own table sees the
rows of before the loop.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from replicator.redogen.sqlbase import CompilerBase
from replicator.redogen.sqlexpr import (
    EXPRESSION,
    RUNTIME,
    Node,
    SqlError,
    SqlParser,
    compare,
    evaluate,
    to_number,
    tokenize,
)
from replicator.redogen.sqltables import SqlTable

# Words that end a select-list item or a FROM item (so they are no alias).
_CLAUSE: Final = frozenset(
    {
        "FROM",
        "WHERE",
        "CONNECT",
        "START",
        "ORDER",
        "UNION",
        "GROUP",
        "HAVING",
        "INTO",
        "BULK",
        "ON",
        "USING",
        "WHEN",
        "LOOP",
        "MINUS",
        "INTERSECT",
        "FOR",
        "LOG",
        "THEN",
    }
)
_AGGREGATES: Final = frozenset({"COUNT", "SUM", "MIN", "MAX", "AVG"})
_DICTIONARY: Final = frozenset(
    {
        "USER_TABLES",
        "ALL_TABLES",
        "DBA_TABLES",
        "USER_OBJECTS",
        "ALL_OBJECTS",
        "DBA_OBJECTS",
        "USER_SEQUENCES",
        "ALL_SEQUENCES",
        "USER_TAB_COLUMNS",
        "ALL_TAB_COLUMNS",
        "DBA_TAB_COLUMNS",
        "USER_TAB_COLS",
        "ALL_TAB_COLS",
    }
)
_JOIN_WORDS: Final = frozenset({"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "OUTER"})
MAX_LEVELS: Final = 1_000_000  # CONNECT BY without an end


@dataclass(slots=True)
class Query:
    """A parsed SELECT (one branch; ``union`` holds the UNION ALL branches after it)."""

    items: list[tuple[Node | None, str]]  # (expression, output name); None = '*' (name: qualifier or '')
    source: Any  # "DUAL" | table name | Query (subquery)
    alias: str = ""
    where: Node | None = None
    connect: Node | None = None
    order: list[tuple[Node, bool, bool | None]] = field(default_factory=list)  # (expr | position, desc, nulls first)
    distinct: bool = False
    into: list[str] = field(default_factory=list)  # SELECT ... [BULK COLLECT] INTO targets
    bulk: bool = False
    union: list[Query] = field(default_factory=list)  # the branches of set operators
    setops: list[str] = field(default_factory=list)  # UNION ALL | UNION | INTERSECT | MINUS, one per branch
    joins: list[tuple[str, Any, str, Node | None]] = field(
        default_factory=list
    )  # (INNER|LEFT|RIGHT|FULL|CROSS, source, alias, ON)
    group: list[Node] = field(default_factory=list)
    having: Node | None = None
    line: int = 0


@dataclass(slots=True)
class Scope:
    """A row source visible to a query's expressions: its names, columns and current row."""

    names: frozenset[str]
    columns: list[str]
    row: dict[str, Any]


class Queries(CompilerBase):
    """Parsing and running SELECTs against the compiler's tables."""

    # -- parsing
    def _query(self, p: SqlParser, *, into: bool = False) -> Query:
        """``[WITH name AS (query), ...] SELECT ...`` (``into``: a PL/SQL SELECT ... INTO), with
        its set operator branches; a WITH query is read where its name is a FROM source."""
        if p.accept("WITH"):
            saved = dict(self.ctes)
            try:
                while True:
                    name = p.ident()
                    if p.at("("):
                        p.fail("WITH name (columns) is not supported: name the columns in its query")
                    p.expect("AS")
                    p.expect("(")
                    self.ctes[name] = self._query(p)
                    p.expect(")")
                    if not p.accept(","):
                        break
                return self._query(p, into=into)
            finally:
                self.ctes = saved
        q = self._select(p, into)
        while p.at("UNION", "INTERSECT", "MINUS", "EXCEPT"):
            op = p.ident()
            if op == "UNION" and p.accept("ALL"):
                op = "UNION ALL"
            q.setops.append(op)
            q.union.append(self._select(p, False))
        if p.accept("ORDER"):
            p.expect("BY")
            while True:
                node = p.expr()
                desc = p.accept("DESC")
                if not desc:
                    p.accept("ASC")
                nulls = None
                if p.accept("NULLS"):
                    nulls = p.ident() == "FIRST"
                q.order.append((node, desc, nulls))
                if not p.accept(","):
                    break
        return q

    def _select(self, p: SqlParser, into: bool) -> Query:
        line = p.tok.line
        if p.accept("("):
            q = self._query(p)
            p.expect(")")
            return q
        p.expect("SELECT")
        distinct = p.accept("DISTINCT")
        if not distinct:
            p.accept("ALL")
        items: list[tuple[Node | None, str]] = []
        while True:
            if p.accept("*"):
                items.append((None, ""))
            elif p.tok.kind == "id" and p.peek().text == "." and p.peek(2).text == "*":
                items.append((None, p.tok.text))
                p.i += 3
            else:
                start = p.tok
                node = p.expr()
                name = node[1].rsplit(".", 1)[-1] if node[0] == "name" else start.text if node[0] == "call" else ""
                if p.accept("AS") or (p.tok.kind == "id" and p.tok.text not in _CLAUSE):
                    name = p.ident()
                items.append((node, name))
            if not p.accept(","):
                break
        q = Query(items, "DUAL", distinct=distinct, line=line)
        if p.at("BULK"):
            p.i += 1
            p.expect("COLLECT")
            q.bulk = True
        if p.accept("INTO"):
            if not into:
                p.fail("SELECT ... INTO outside a PL/SQL block")
            q.into = [self._target_name(p)]
            while p.accept(","):
                q.into.append(self._target_name(p))
        p.expect("FROM")
        q.source, q.alias = self._from_item(p)
        while True:  # joins: FROM a, b | [INNER] JOIN b ON c | LEFT/RIGHT/FULL [OUTER] JOIN b ON c | CROSS JOIN b
            if p.accept(","):
                kind = "CROSS"
            elif p.at("JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS"):
                kind = p.tok.text if p.at("LEFT", "RIGHT", "FULL", "CROSS") else "INNER"
                if kind != "INNER":
                    p.i += 1
                p.accept("INNER")
                p.accept("OUTER")
                p.expect("JOIN")
            elif p.at("NATURAL"):
                p.fail("NATURAL JOIN is not supported (INNER, LEFT, RIGHT, FULL, CROSS)")
            else:
                break
            source, alias = self._from_item(p)
            on = None
            if kind != "CROSS" and p.accept("USING"):  # JOIN b USING (c, ...): c = b.c AND ...
                right = alias or (source if isinstance(source, str) else "")
                if not right:
                    p.fail("JOIN (subquery) USING needs an alias for the subquery")
                p.expect("(")
                cols = [p.ident()]
                while p.accept(","):
                    cols.append(p.ident())
                p.expect(")")
                on = SqlParser(tokenize(" AND ".join(f'"{c}" = "{right}"."{c}"' for c in cols), p.tok.line)).expr()
            elif kind != "CROSS" or p.at("ON"):
                p.expect("ON")
                on = p.expr()
            q.joins.append((kind, source, alias, on))
        q.where = p.expr() if p.accept("WHERE") else None
        if p.accept("CONNECT"):
            p.expect("BY")
            if q.source != "DUAL":
                p.fail("CONNECT BY is supported on DUAL only (row generators)")
            q.connect = p.expr()
        if p.accept("GROUP"):
            p.expect("BY")
            q.group = [p.expr()]
            while p.accept(","):
                q.group.append(p.expr())
        if p.accept("HAVING"):
            q.having = p.expr()
        if p.at("START"):
            p.fail("START WITH in a query is not supported")
        if p.at("FOR"):
            p.fail("SELECT ... FOR UPDATE is not supported")
        return q

    def _from_item(self, p: SqlParser) -> tuple[Any, str]:
        """``table [alias]``, ``owner.table [alias]`` or ``(subquery) [alias]``."""
        if p.at("("):
            p.i += 1
            source: Any = self._query(p)
            p.expect(")")
        else:
            source = p.ident()
            if p.accept("."):  # owner.table
                source = p.ident()
        alias = ""
        if p.tok.kind == "id" and p.tok.text not in _CLAUSE and p.tok.text not in _JOIN_WORDS:
            alias = p.ident()
        if isinstance(source, str) and source in self.ctes:  # a WITH query
            return self.ctes[source], alias or source
        return source, alias

    def _target_name(self, p: SqlParser) -> str:
        name = p.ident()
        while p.accept("."):
            name += "." + p.ident()
        return name

    # -- running
    def _run_query(self, q: Query, env: dict[str, Any], outer: Any = None) -> tuple[list[str], list[list[Any]]]:
        """Output names and rows of ``q`` (every UNION ALL branch, then ORDER BY); ``outer``
        resolves the names of an enclosing statement's row (a correlated subquery)."""
        names, rows, scopes = self._branch(q, env, outer)
        for op, other in zip(q.setops, q.union, strict=True):  # left to right, as Oracle applies them
            more_names, more, _ = self._branch(other, env, outer)
            if len(more_names) != len(names):
                raise SqlError("ORA-01789: query block has incorrect number of result columns", RUNTIME, q.line)
            if op == "UNION ALL":
                rows += more
                scopes += [None] * len(more)
                continue
            # UNION / INTERSECT / MINUS: distinct rows, sorted (Oracle's SORT UNIQUE of each side)
            theirs = {repr(r) for r in more}
            if op == "UNION":
                rows = rows + more
            elif op == "INTERSECT":
                rows = [r for r in rows if repr(r) in theirs]
            else:
                rows = [r for r in rows if repr(r) not in theirs]
            unique = {repr(r): r for r in rows}

            def by_columns(a: list[Any], b: list[Any]) -> int:
                return _row_cmp(a, b, q.line)

            rows = sorted(unique.values(), key=functools.cmp_to_key(by_columns))
            scopes = [None] * len(rows)
        if q.order:
            rows = self._ordered(q, names, rows, scopes, env, outer)
        return names, rows

    def _source_rows(self, source: Any, alias: str, env: dict[str, Any], outer: Any, line: int) -> list[Scope]:
        if isinstance(source, Query):
            names, rows = self._run_query(source, env, outer)
            aliases = frozenset({alias} if alias else ())
            return [Scope(aliases, names, dict(zip(names, r, strict=True))) for r in rows]
        if source == "DUAL":
            return [Scope(frozenset({"DUAL", alias} - {""}), ["DUMMY"], {"DUMMY": "X"})]
        if source in _DICTIONARY and source not in self.tables:
            cols, rows = self._dictionary(source)
            return [Scope(frozenset({source, alias} - {""}), cols, dict(zip(cols, r, strict=True))) for r in rows]
        table: SqlTable = self._table(source, line)
        aliases = frozenset({table.name, alias} - {""})
        cols = [c.name for c in table.columns]
        return [Scope(aliases, cols, dict(r)) for r in list(table.rows.values())]

    def _dictionary(self, view: str) -> tuple[list[str], list[list[Any]]]:
        """The rows of a dictionary view over the compiler's tables and sequences (the checks a
        script makes before DDL: does the table, the column exist)."""
        if view in ("USER_TABLES", "ALL_TABLES", "DBA_TABLES"):
            return ["OWNER", "TABLE_NAME"], [[t.owner, t.name] for t in self.tables.values()]
        if view in ("USER_OBJECTS", "ALL_OBJECTS", "DBA_OBJECTS"):
            return ["OWNER", "OBJECT_NAME", "OBJECT_TYPE"], (
                [[t.owner, t.name, "TABLE"] for t in self.tables.values()]
                + [[self.owner, s, "SEQUENCE"] for s in self.sequences]
            )
        if view in ("USER_SEQUENCES", "ALL_SEQUENCES"):
            return ["SEQUENCE_OWNER", "SEQUENCE_NAME"], [[self.owner, s] for s in self.sequences]
        return ["OWNER", "TABLE_NAME", "COLUMN_NAME", "DATA_TYPE", "NULLABLE", "COLUMN_ID"], [
            [t.owner, t.name, c.name, c.type.split("(")[0], "Y" if c.nullable else "N", Decimal(n)]
            for t in self.tables.values()
            for n, c in enumerate(t.columns, 1)
        ]

    def _combinations(self, q: Query, env: dict[str, Any], outer: Any) -> list[list[Scope]]:
        """The FROM clause's rows: one list of scopes per combination of joined rows (nested loops,
        the first source driving; a LEFT/FULL JOIN without a match adds a row of NULLs on the
        right, RIGHT/FULL JOIN rows of the right source no combination matched follow, in their
        order, with NULLs on the left)."""
        combos = [[s] for s in self._source_rows(q.source, q.alias, env, outer, q.line)]
        sources = [(q.source, q.alias, combos[0][0] if combos else None)]
        for kind, source, alias, on in q.joins:
            right = self._source_rows(source, alias, env, outer, q.line)
            matched = [False] * len(right)
            joined: list[list[Scope]] = []
            for combo in combos:
                hits = []
                for n, r in enumerate(right):
                    if on is None or evaluate(on, self._scoped(env, combo + [r], {}, outer)) is True:
                        hits.append(combo + [r])
                        matched[n] = True
                if not hits and kind in ("LEFT", "FULL"):
                    hits = [combo + [self._null_scope(source, alias, right[0] if right else None, q.line)]]
                joined += hits
            if kind in ("RIGHT", "FULL") and not all(matched):
                nulls = [self._null_scope(*s, q.line) for s in sources]
                joined += [nulls + [r] for n, r in enumerate(right) if not matched[n]]
            sources.append((source, alias, right[0] if right else None))
            combos = joined
        return combos

    def _null_scope(self, source: Any, alias: str, sample: Scope | None, line: int) -> Scope:
        """A row of NULLs of a FROM source (the outer side of an outer join without a match)."""
        cols = (
            sample.columns
            if sample is not None
            else ([c.name for c in self._table(source, line).columns] if isinstance(source, str) else [])
        )
        names = frozenset({alias} | ({source} if isinstance(source, str) else set())) - {""}
        return Scope(names, cols, {})

    def _branch(self, q: Query, env: dict[str, Any], outer: Any) -> tuple[list[str], list[list[Any]], list[Any]]:
        combos = self._combinations(q, env, outer)
        picked: list[tuple[list[Scope], dict[str, Any]]] = []
        if q.connect is not None:  # a row generator: LEVEL 1, 2, ... while the condition holds
            base = combos[0]
            level = 1
            while True:
                extra = {"LEVEL": Decimal(level), "ROWNUM": Decimal(level)}
                if level > 1 and evaluate(q.connect, self._scoped(env, base, extra, outer)) is not True:
                    break
                if q.where is None or evaluate(q.where, self._scoped(env, base, extra, outer)) is True:
                    picked.append((base, extra))
                level += 1
                if level > MAX_LEVELS:
                    raise SqlError(f"CONNECT BY makes over {MAX_LEVELS} rows", RUNTIME, q.line)
        else:
            for combo in combos:
                extra = {"LEVEL": Decimal(1), "ROWNUM": Decimal(len(picked) + 1)}
                if q.where is None or evaluate(q.where, self._scoped(env, combo, extra, outer)) is True:
                    picked.append((combo, extra))
        first = combos[0] if combos else self._source_rows(q.source, q.alias, env, outer, q.line)[:1] or []
        names: list[str] = []
        for node, name in q.items:
            if node is None:
                names += (
                    [c for s in self._star(q, first, name) for c in s.columns]
                    if first
                    else ([c.name for c in self._table(q.source, q.line).columns] if isinstance(q.source, str) else [])
                )
            else:
                names.append(name)
        if q.group or any(node is not None and _has_aggregate(node) for node, _ in q.items):
            return names, *self._grouped(q, picked, env, outer)
        rows: list[list[Any]] = []
        for combo, extra in picked:
            lookup = self._scoped(env, combo, extra, outer)
            out: list[Any] = []
            for node, name in q.items:
                if node is None:
                    out += [s.row.get(c) for s in self._star(q, combo, name) for c in s.columns]
                else:
                    out.append(evaluate(node, lookup))
            rows.append(out)
        scopes: list[Any] = [combo for combo, _ in picked]
        if q.distinct:
            seen: set[str] = set()
            kept = []
            for r, sc in zip(rows, scopes, strict=True):
                text = repr(r)
                if text not in seen:
                    seen.add(text)
                    kept.append((r, sc))
            rows, scopes = [r for r, _ in kept], [sc for _, sc in kept]
        return names, rows, scopes

    @staticmethod
    def _star(q: Query, combo: list[Scope], qualifier: str) -> list[Scope]:
        """The sources ``*`` (all) or ``alias.*`` stands for."""
        if not qualifier:
            return combo
        hit = [s for s in combo if qualifier in s.names]
        if not hit:
            raise SqlError(f"ORA-00904: {qualifier}.*: invalid identifier", RUNTIME, q.line)
        return hit

    def _grouped(
        self, q: Query, picked: list[tuple[list[Scope], dict[str, Any]]], env: dict[str, Any], outer: Any
    ) -> tuple[list[list[Any]], list[Any]]:
        """Rows of an aggregate query: one per GROUP BY key (in key order, as a SORT GROUP BY gives
        them), or one over everything without GROUP BY."""
        groups: dict[str, tuple[list[Any], list[tuple[list[Scope], dict[str, Any]]]]] = {}
        for combo, extra in picked:
            key = [evaluate(g, self._scoped(env, combo, extra, outer)) for g in q.group]
            groups.setdefault(repr([_sort_key(k) for k in key]), (key, []))[1].append((combo, extra))
        if not q.group:
            groups = {"": ([], picked)}
        ordered = sorted(groups.values(), key=lambda g: [_sort_key(k) for k in g[0]])
        rows: list[list[Any]] = []
        scopes: list[Any] = []
        for _, members in ordered:
            sample = members[0][0] if members else []
            lookup = self._scoped(env, sample, {}, outer)
            if (
                q.having is not None
                and evaluate(self._aggregated(q.having, members, env, q.line, outer), lookup) is not True
            ):
                continue
            row = []
            for node, _ in q.items:
                if node is None:
                    raise SqlError("ORA-00979: not a GROUP BY expression", RUNTIME, q.line)
                row.append(evaluate(self._aggregated(node, members, env, q.line, outer), lookup))
            rows.append(row)
            scopes.append(sample)
        return rows, scopes

    def _aggregated(
        self,
        node: Node,
        picked: list[tuple[list[Scope], dict[str, Any]]],
        env: dict[str, Any],
        line: int,
        outer: Any = None,
    ) -> Node:
        """``node`` with each aggregate call replaced by its value over ``picked``."""
        if not isinstance(node, tuple) or not node:
            return node
        if node[0] == "call" and node[1] in _AGGREGATES:
            args = node[2]
            if node[1] == "COUNT" and (not args or args[0] == ("lit", "*")):
                return ("lit", Decimal(len(picked)))
            if len(args) != 1:
                raise SqlError(f"{node[1]} takes one argument", EXPRESSION, line)
            values = [
                v for s, extra in picked if (v := evaluate(args[0], self._scoped(env, s, extra, outer))) is not None
            ]
            if node[1] == "COUNT":
                return ("lit", Decimal(len(values)))
            if not values:
                return ("lit", None)
            if node[1] in ("SUM", "AVG"):
                total = Decimal(0)
                for v in values:
                    num = to_number(v, line)
                    assert num is not None  # NULLs were left out
                    total += num
                return ("lit", total if node[1] == "SUM" else total / len(values))
            key = functools.cmp_to_key(
                lambda a, b: -1 if compare("<", a, b, line) else (1 if compare(">", a, b, line) else 0)
            )
            return ("lit", (min if node[1] == "MIN" else max)(values, key=key))
        return tuple(
            self._aggregated(x, picked, env, line, outer)
            if isinstance(x, tuple)
            else ([self._aggregated(y, picked, env, line, outer) for y in x] if isinstance(x, list) else x)
            for x in node
        )

    def _ordered(
        self, q: Query, names: list[str], rows: list[list[Any]], scopes: list[Any], env: dict[str, Any], outer: Any
    ) -> list[list[Any]]:
        def keys(i: int) -> list[Any]:
            out = []
            for node, _, _ in q.order:
                if node[0] == "lit" and isinstance(node[1], Decimal):  # ORDER BY position
                    out.append(rows[i][int(node[1]) - 1])
                    continue
                if node[0] == "name" and node[1] in names:
                    out.append(rows[i][names.index(node[1])])
                    continue
                sc = scopes[i]
                out.append(evaluate(node, self._scoped(env, sc or [], {}, outer)))
            return out

        table = [keys(i) for i in range(len(rows))]

        def cmp(a: int, b: int) -> int:
            for n, (_, desc, nulls_first) in enumerate(q.order):
                x, y = table[a][n], table[b][n]
                if x is None or y is None:
                    if x is None and y is None:
                        continue
                    first = (not desc) if nulls_first is None else not nulls_first  # NULLs sort high
                    return (1 if first else -1) if x is None else (-1 if first else 1)
                c = -1 if compare("<", x, y, q.line) else 1 if compare(">", x, y, q.line) else 0
                if c:
                    return -c if desc else c
            return 0

        order = sorted(range(len(rows)), key=functools.cmp_to_key(cmp))
        return [rows[i] for i in order]

    def _scoped(self, env: dict[str, Any], scopes: list[Scope], extra: dict[str, Any], outer: Any = None):
        """A lookup over query rows (qualified by table name or alias), then the enclosing
        statement's names (``outer``), then PL/SQL variables."""

        def lookup(name: str, line: int) -> Any:
            if "." in name:
                qual, col = name.rsplit(".", 1)
                for s in scopes:
                    if qual in s.names:
                        if col in s.row or col in s.columns:
                            return s.row.get(col)
                        raise SqlError(f"ORA-00904: {name}: invalid identifier", RUNTIME, line)
            else:
                for s in scopes:
                    if name in s.row or name in s.columns:
                        return s.row.get(name)
                if name in extra:
                    return extra[name]
            return base(name, line)

        base = outer or self._lookup(env)
        lookup.element = base.element  # type: ignore[attr-defined]
        lookup.query = lambda q: self._run_query(q, env, lookup)[1]  # type: ignore[attr-defined]
        return lookup


def _has_aggregate(node: Any) -> bool:
    if isinstance(node, list):
        return any(_has_aggregate(x) for x in node)
    if not isinstance(node, tuple) or not node:
        return False
    if node[0] == "call" and node[1] in _AGGREGATES:
        return True
    return any(_has_aggregate(x) for x in node[1:] if isinstance(x, (tuple, list)))


def _sort_key(v: Any) -> tuple[int, Any]:
    """A total order over group keys: NULLs last, numbers, then texts, then the rest by repr."""
    if v is None:
        return (3, "")
    if isinstance(v, (Decimal, int, float, bool)):
        return (0, Decimal(repr(v)) if isinstance(v, float) else Decimal(int(v)) if isinstance(v, bool) else v)
    if isinstance(v, str):
        return (1, v)
    return (2, repr(v))


def _row_cmp(a: list[Any], b: list[Any], line: int) -> int:
    """Ascending order on every column, NULLs last (the order of a SORT UNIQUE)."""
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            if x is None and y is None:
                continue
            return 1 if x is None else -1
        if compare("<", x, y, line) is True:
            return -1
        if compare(">", x, y, line) is True:
            return 1
    return 0
