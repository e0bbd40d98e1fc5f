"""PL/SQL of the SQL compiler: blocks, declarations, control flow, local procedures, cursors,
collections and exception handlers.

A block is parsed into a small tree of statements (:meth:`PlsqlBlocks._statements`) and run
against the compiler's tables (:meth:`PlsqlBlocks._run`); SQL statements inside it go through
the same statement dispatcher as top-level ones. A SQL statement that fails is rolled back alone
(Oracle's statement-level rollback) and raises its ORA- error, which an ``EXCEPTION`` handler
of an enclosing block may catch; unhandled, it fails the whole top-level block.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Final

from replicator.redogen.sqlbase import Collection, Cursor, Function, Proc, Return
from replicator.redogen.sqldml import DmlStatements
from replicator.redogen.sqlexpr import (
    EXPRESSION,
    RUNTIME,
    Node,
    SqlError,
    SqlParser,
    Token,
    evaluate,
    to_number,
    to_text,
    tokenize,
)
from replicator.redogen.sqlquery import Query

_SLEEPS: Final = frozenset({"DBMS_SESSION.SLEEP", "DBMS_LOCK.SLEEP", "SYS.DBMS_SESSION.SLEEP"})
# Predefined PL/SQL exceptions and the Oracle error each stands for.
EXCEPTIONS: Final = {
    "DUP_VAL_ON_INDEX": 1,
    "NO_DATA_FOUND": 1403,
    "TOO_MANY_ROWS": 1422,
    "ZERO_DIVIDE": 1476,
    "INVALID_NUMBER": 1722,
    "VALUE_ERROR": 6502,
}
_ORA_RE: Final = re.compile(r"ORA-(\d{5})")
_SQL_START: Final = ("INSERT", "UPDATE", "DELETE", "MERGE", "COMMIT", "ROLLBACK", "SAVEPOINT")


class _Exit(Exception):
    """EXIT from the innermost loop (``label``: from the loop so labelled)."""

    def __init__(self, label: str = ""):
        super().__init__(label)
        self.label = label


class _Continue(_Exit):
    """CONTINUE: the next iteration of the innermost (or the labelled) loop."""


def _ends_loop(exc: _Exit, label: str) -> bool:
    """Whether a loop labelled ``label`` is the one an EXIT/CONTINUE names."""
    return not exc.label or exc.label == label


class UserException:
    """An exception a block declares (``e EXCEPTION;``), tied to an error number by
    ``PRAGMA EXCEPTION_INIT`` (0: raised by name only)."""

    def __init__(self, code: int = 0):
        self.code = code


def ora_code(exc: SqlError) -> int:
    """The Oracle error number a refused statement raised (0 when it names none)."""
    m = _ORA_RE.search(exc.message)
    return int(m[1]) if m else 0


class PlsqlBlocks(DmlStatements):
    """``[DECLARE] BEGIN ... [EXCEPTION ...] END;`` blocks and what runs inside them."""

    def _block(self, p: SqlParser, env: dict[str, Any], procs: dict[str, Proc]) -> None:
        """``[DECLARE ...] BEGIN ... END;`` run with a copy of the enclosing scope."""
        outer, env, procs = env, dict(env), dict(procs)
        declared = self._declarations(p, env, procs) if p.accept("DECLARE") else set()
        p.expect("BEGIN")
        body, handlers = self._body(p)
        p.accept(";")
        try:
            self._run_handled(body, handlers, env, procs)
        finally:  # assignments to the enclosing block's variables stay
            for k in outer:
                if k not in declared:
                    outer[k] = env[k]

    def _body(self, p: SqlParser) -> tuple[list[Any], list[tuple[list[str], list[Any]]]]:
        """Statements up to ``END [name]``, with the ``EXCEPTION WHEN ... THEN`` handlers."""
        body = self._statements(p, ("END", "EXCEPTION"))
        handlers: list[tuple[list[str], list[Any]]] = []
        if p.accept("EXCEPTION"):
            while p.accept("WHEN"):
                names = [p.ident()]
                while p.accept("OR"):
                    names.append(p.ident())
                p.expect("THEN")
                handlers.append((names, self._statements(p, ("WHEN", "END"))))
        p.expect("END")
        if p.tok.kind == "id":
            p.i += 1
        return body, handlers

    def _run_handled(
        self, body: list[Any], handlers: list[tuple[list[str], list[Any]]], env: dict[str, Any], procs: dict[str, Proc]
    ) -> None:
        if not handlers:
            self._run(body, env, procs)
            return
        depth = self.depth
        try:
            self._run(body, env, procs)
        except SqlError as exc:
            if exc.code != RUNTIME:
                raise
            code = ora_code(exc)
            for names, arm in handlers:
                if any(self._catches(n, code, exc, env) for n in names):
                    self.depth = depth
                    scope = dict(env)
                    scope["SQLCODE"] = Decimal(-code if code else -1)
                    scope["SQLERRM"] = exc.message.split(": ", 1)[1] if exc.message.startswith("line ") else exc.message
                    self._run(arm, scope, procs)
                    for k in env:
                        env[k] = scope[k]
                    return
            raise

    @staticmethod
    def _catches(name: str, code: int, exc: SqlError, env: dict[str, Any]) -> bool:
        """A handler's exception name covers the error: OTHERS, a predefined exception, or a
        declared one (raised by name, or tied to an error by PRAGMA EXCEPTION_INIT)."""
        if name == "OTHERS":
            return True
        if name in EXCEPTIONS:
            return EXCEPTIONS[name] == code
        declared = env.get(name)
        if isinstance(declared, UserException):
            return declared.code == code if declared.code else f"user-defined exception {name}" in exc.message
        return False

    def _parameters(
        self, p: SqlParser, modes: dict[str, str] | None = None, defaults: dict[str, Node] | None = None
    ) -> list[str]:
        """A subprogram's or cursor's ``(name [IN | OUT | IN OUT] [NOCOPY] type [DEFAULT e], ...)``
        list, if any: the names (``modes`` / ``defaults`` collect the rest; a cursor has neither)."""
        params: list[str] = []
        if p.accept("("):
            while True:
                name = p.ident()
                params.append(name)
                mode = "IN OUT" if p.accept("IN") and p.accept("OUT") else "OUT" if p.accept("OUT") else ""
                p.accept("NOCOPY")
                if mode:
                    if modes is None:
                        p.fail(f"a cursor parameter cannot be {mode}")
                    modes[name] = mode
                self._type(p)
                if p.accept("DEFAULT") or p.accept(":="):
                    if defaults is None:
                        p.fail("cursor parameter defaults are not supported")
                    defaults[name] = p.expr()
                if not p.accept(","):
                    break
            p.expect(")")
        return params

    def _subprogram(self, p: SqlParser, env: dict[str, Any], procs: dict[str, Proc], declared: set[str]) -> None:
        """``PROCEDURE p[(params)] IS ... BEGIN ... END;`` or ``FUNCTION f[(params)] RETURN type
        IS ...``: its declarations (variables, ``PRAGMA AUTONOMOUS_TRANSACTION``, nested
        subprograms, visible in its body only) and body."""
        is_function = p.ident() == "FUNCTION"
        name = p.ident()
        modes: dict[str, str] = {}
        defaults: dict[str, Node] = {}
        params = self._parameters(p, modes, defaults)
        if is_function:
            p.expect("RETURN")
            self._type(p)
        if p.accept(";"):  # a forward declaration: the body follows
            return
        if not p.accept("IS"):
            p.expect("AS")
        proc = Proc(params, [], False, [], modes=modes, defaults=defaults)
        # registered before its body is parsed: it may call itself and its nested subprograms
        if is_function:
            env[name] = Function(name, proc, procs)
            declared.add(name)
        else:
            procs[name] = proc
        inner_procs: dict[str, Proc] = dict(procs)
        inner_env: dict[str, Any] = {k: v for k, v in env.items() if isinstance(v, Function)}
        while not p.at("BEGIN"):
            if p.accept("PRAGMA"):
                if p.ident() != "AUTONOMOUS_TRANSACTION":
                    p.fail("only PRAGMA AUTONOMOUS_TRANSACTION is supported")
                proc.autonomous = True
                p.expect(";")
            elif p.at("PROCEDURE", "FUNCTION"):
                before_env, before_procs = dict(inner_env), dict(inner_procs)
                self._subprogram(p, inner_env, inner_procs, set())
                proc.local_env.update({k: v for k, v in inner_env.items() if before_env.get(k) is not v})
                proc.local_procs.update({k: v for k, v in inner_procs.items() if before_procs.get(k) is not v})
            else:  # a variable, TYPE, CURSOR, exception: declared when the subprogram runs
                start, depth = p.i, 0
                while not (depth == 0 and p.at(";")):
                    if p.tok.kind == "eof":
                        p.fail("';' expected")
                    depth += p.at("(") - p.at(")")
                    p.i += 1
                p.i += 1
                proc.decls += p.toks[start : p.i]
            if p.tok.kind == "eof":
                p.fail("BEGIN expected")
        for fn in proc.local_env.values():  # nested functions call the nested procedures
            fn.procs = {**fn.procs, **proc.local_procs}
        p.expect("BEGIN")
        proc.body, proc.handlers = self._body(p)
        p.expect(";")

    def _declarations(self, p: SqlParser, env: dict[str, Any], procs: dict[str, Proc]) -> set[str]:
        """Declare the block's types, cursors, procedures and variables; the names declared."""
        types: set[str] = set()
        declared: set[str] = set()
        while not p.at("BEGIN"):
            if p.tok.kind == "eof":
                p.fail("BEGIN expected")
            if p.at("PROCEDURE", "FUNCTION"):
                self._subprogram(p, env, procs, declared)
            elif p.tok.kind == "id" and p.peek().text == "EXCEPTION" and p.peek(2).text == ";":
                name = p.ident()
                p.i += 2
                env[name] = UserException()
                declared.add(name)
            elif p.accept("PRAGMA"):
                p.expect("EXCEPTION_INIT")
                p.expect("(")
                name = p.ident()
                p.expect(",")
                code = to_number(evaluate(p.expr(), self._lookup(env)), p.tok.line)
                p.expect(")")
                p.expect(";")
                if not isinstance(env.get(name), UserException) or code is None:
                    p.fail(f"PRAGMA EXCEPTION_INIT: {name} is no declared exception")
                env[name] = UserException(abs(int(code)))
            elif p.accept("TYPE"):
                type_name = p.ident()
                p.expect("IS")
                if p.accept("RECORD"):  # TYPE r IS RECORD (field type [NOT NULL] [:= e], ...)
                    fields: list[tuple[str, Node | None]] = []
                    p.expect("(")
                    while True:
                        field_name = p.ident()
                        self._type(p)
                        fields.append((field_name, p.expr() if p.accept(":=") or p.accept("DEFAULT") else None))
                        if not p.accept(","):
                            break
                    p.expect(")")
                    p.expect(";")
                    self.record_types[type_name] = fields
                    types.discard(type_name)
                    continue
                types.add(type_name)  # TABLE OF / VARRAY(n) OF ...: a collection type
                if not p.at("TABLE", "VARRAY", "VARYING"):
                    p.fail("TYPE declarations other than collections (TABLE OF, VARRAY) and records are not supported")
                self.record_elements.pop(type_name, None)
                while not p.accept(";"):
                    if p.tok.kind == "eof":
                        p.fail("';' expected")
                    if p.at("OF") and p.peek().text in self.record_types:
                        self.record_elements[type_name] = p.peek().text
                    p.i += 1
            elif p.accept("CURSOR"):
                name = p.ident()
                params = self._parameters(p)
                p.expect("IS")
                env[name] = Cursor(self._query(p), params)
                declared.add(name)
                p.expect(";")
            else:
                name, node, type_name = self._variable(p)
                env[name] = self._initial(node, type_name, types, env)
                declared.add(name)
        return declared

    def _initial(self, node: Node | None, type_name: str, types: set[str], env: dict[str, Any]) -> Any:
        """A variable's first value: a collection type's constructor, or the expression."""
        if type_name in types:
            element = self.record_elements.get(type_name)
            coll = Collection(fields=[f for f, _ in self.record_types[element]] if element else None)
            if node is not None:
                if node[0] != "call" or node[1] != type_name:
                    raise SqlError(f"a {type_name} starts from its constructor {type_name}(...)", EXPRESSION)
                for n, arg in enumerate(node[2], 1):
                    coll.items[n] = evaluate(arg, self._lookup(env))
            return coll
        if type_name in self.record_types and node is None:  # a record: its fields' defaults
            return {f: None if d is None else evaluate(d, self._lookup(env)) for f, d in self.record_types[type_name]}
        if type_name.endswith("%ROWTYPE") and node is None:  # a record with the table's columns
            table = self.tables.get(type_name[: -len("%ROWTYPE")])
            return {c.name: None for c in table.columns} if table is not None else None
        return None if node is None else evaluate(node, self._lookup(env))

    def _variable(self, p: SqlParser) -> tuple[str, Node | None, str]:
        name = p.ident()
        p.accept("CONSTANT")
        type_name = self._type(p)
        node = None
        if p.accept(":=") or p.accept("DEFAULT"):
            node = p.expr()
        p.expect(";")
        return name, node, type_name

    @staticmethod
    def _type(p: SqlParser) -> str:
        """Skip a type (``NUMBER(10)``, ``t.col%TYPE``...); its first name (``T%ROWTYPE`` for a record)."""
        name = p.ident()
        while p.accept("."):
            p.ident()
        if p.accept("%") and p.ident() == "ROWTYPE":
            name += "%ROWTYPE"
        if p.accept("("):
            while not p.accept(")"):
                p.i += 1
        while p.at("NOT", "NULL"):
            p.i += 1
        return name

    def _statements(self, p: SqlParser, stop: tuple[str, ...]) -> list[Any]:
        """Parse PL/SQL statements up to one of ``stop`` (not consumed) into a small tree."""
        out: list[Any] = []
        label, label_at = "", 0
        while not p.at(*stop):
            if label and len(out) > label_at:
                self.loop_labels[id(out[label_at])] = (out[label_at], label)
                label = ""
            if p.at("<") and p.peek().text == "<":  # <<label>> before a loop (or a block)
                p.i += 2
                label, label_at = p.ident(), len(out)
                p.expect(">")
                p.expect(">")
                continue
            t = p.tok
            if t.kind == "eof":
                p.fail(f"{' or '.join(stop)} expected")
            line = t.line
            if p.accept("FOR"):
                out.append(self._for(p, line))
            elif p.accept("FORALL"):
                var = p.ident()
                p.expect("IN")
                if p.accept("INDICES"):
                    p.expect("OF")
                    bounds: Any = ("indices", p.ident())
                else:
                    lo = p._concat()
                    p.expect("..")
                    bounds = (lo, p._concat())
                if p.accept("SAVE"):
                    p.expect("EXCEPTIONS")
                if not p.at("INSERT", "UPDATE", "DELETE", "MERGE"):
                    p.fail("FORALL runs one INSERT, UPDATE, DELETE or MERGE")
                out.append(("forall", var, bounds, self._sql_tokens(p), line))
            elif p.accept("WHILE"):
                cond = p.expr()
                p.expect("LOOP")
                out.append(("while", cond, self._loop_body(p), line))
            elif p.accept("LOOP"):
                out.append(("while", ("lit", True), self._loop_body(p), line))
            elif p.at("EXIT", "CONTINUE"):
                word = p.ident()
                target = p.ident() if p.tok.kind == "id" and not p.at("WHEN") else ""
                cond = p.expr() if p.accept("WHEN") else ("lit", True)
                p.expect(";")
                out.append(("exit" if word == "EXIT" else "continue", cond, target, line))
            elif p.accept("IF"):
                arms = []
                cond = p.expr()
                p.expect("THEN")
                arms.append((cond, self._statements(p, ("ELSIF", "ELSE", "END"))))
                other: list[Any] = []
                while True:
                    if p.accept("ELSIF"):
                        cond = p.expr()
                        p.expect("THEN")
                        arms.append((cond, self._statements(p, ("ELSIF", "ELSE", "END"))))
                    elif p.accept("ELSE"):
                        other = self._statements(p, ("END",))
                    else:
                        break
                p.expect("END")
                p.expect("IF")
                p.expect(";")
                out.append(("if", arms, other, line))
            elif p.accept("CASE"):  # CASE [selector] WHEN ... THEN ... [ELSE ...] END CASE: an IF chain
                selector = None if p.at("WHEN") else p._concat()
                arms = []
                while p.accept("WHEN"):
                    cond = p.expr()
                    if selector is not None:
                        cond = ("cmp", "=", selector, cond, line)
                    p.expect("THEN")
                    arms.append((cond, self._statements(p, ("WHEN", "ELSE", "END"))))
                other = self._statements(p, ("END",)) if p.accept("ELSE") else [("raise_case", line)]
                p.expect("END")
                p.expect("CASE")
                p.expect(";")
                out.append(("if", arms, other, line))
            elif p.at("NULL") and p.peek().text == ";":
                p.i += 2
            elif p.at("DECLARE", "BEGIN"):
                out.append(("block", self._block_tokens(p), line))
            elif p.accept("RETURN"):
                value = None if p.at(";") else p.expr()
                p.expect(";")
                out.append(("return", value, line))
            elif p.accept("RAISE"):
                name = "" if p.at(";") else p.ident()
                p.expect(";")
                out.append(("raise", name, line))
            elif p.accept("EXECUTE"):
                p.expect("IMMEDIATE")
                text = p.expr()
                into: list[str] = []
                bulk = bool(p.accept("BULK"))
                if bulk:
                    p.expect("COLLECT")
                if bulk or p.at("INTO"):
                    p.expect("INTO")
                    into.append(self._target_name(p))
                    while p.accept(","):
                        into.append(self._target_name(p))
                using: list[tuple[str, Node]] = []  # (IN | OUT | IN OUT, expression)
                if p.accept("USING"):
                    while True:
                        mode = "IN OUT" if p.accept("IN") and p.accept("OUT") else "OUT" if p.accept("OUT") else "IN"
                        using.append((mode, p.expr()))
                        if not p.accept(","):
                            break
                if p.accept("RETURNING") or p.accept("RETURN"):  # the statement's RETURNING ... INTO :b binds
                    p.expect("INTO")
                    using.append(("OUT", ("name", self._target_name(p), line)))
                    while p.accept(","):
                        using.append(("OUT", ("name", self._target_name(p), line)))
                for mode, node in using:
                    if mode != "IN" and node[0] != "name":
                        p.fail(f"an {mode} bind of EXECUTE IMMEDIATE must be a variable")
                p.expect(";")
                out.append(("execute", text, line, into, bulk, using))
            elif p.at("OPEN", "CLOSE") and p.peek().kind == "id" and p.peek(2).text in (";", "("):
                word = p.ident()
                name = p.ident()
                out.append((word.lower(), name, self._args(p), line))
                p.expect(";")
            elif p.accept("FETCH"):
                name = p.ident()
                bulk = p.accept("BULK")
                if bulk:
                    p.expect("COLLECT")
                p.expect("INTO")
                targets = [self._target_name(p)]
                while p.accept(","):
                    targets.append(self._target_name(p))
                limit = p.expr() if p.accept("LIMIT") else None
                p.expect(";")
                out.append(("fetch", name, targets, bulk, limit, line))
            elif p.at("SELECT"):
                query = self._query(p, into=True)
                if not query.into:
                    p.fail("a SELECT in PL/SQL needs INTO")
                p.expect(";")
                out.append(("select", query, line))
            elif p.at(*_SQL_START):
                out.append(("sql", self._sql_tokens(p), line))
            elif t.kind == "id":
                out.append(self._call_or_assignment(p, line))
            else:
                p.fail(f"unexpected {t.text!r} in a PL/SQL block")
        if label and len(out) > label_at:
            self.loop_labels[id(out[label_at])] = (out[label_at], label)
        return out

    def _for(self, p: SqlParser, line: int) -> tuple[Any, ...]:
        """``FOR i IN [REVERSE] a..b LOOP``, ``FOR r IN (SELECT ...) LOOP``, ``FOR r IN cursor LOOP``."""
        var = p.ident()
        p.expect("IN")
        if p.at("(") and p.peek().text in ("SELECT", "WITH"):
            p.i += 1
            query: Any = self._query(p)
            p.expect(")")
            p.expect("LOOP")
            return ("cursor_for", var, query, self._loop_body(p), line)
        if p.tok.kind == "id" and p.peek().text in ("LOOP", "("):
            start = p.i
            name = p.ident()
            args = self._args(p)
            if p.accept("LOOP"):
                return ("cursor_for", var, (name, args), self._loop_body(p), line)
            p.i = start  # a numeric range starting with a call: f(x)..n
        reverse = p.accept("REVERSE")
        reverse = p.accept("REVERSE")
        lo = p._concat()
        p.expect("..")
        hi = p._concat()
        p.expect("LOOP")
        return ("for", var, lo, hi, reverse, self._loop_body(p), line)

    def _loop_body(self, p: SqlParser) -> list[Any]:
        body = self._statements(p, ("END",))
        p.expect("END")
        p.expect("LOOP")
        if p.tok.kind == "id":
            p.i += 1  # loop label
        p.expect(";")
        return body

    @staticmethod
    def _sql_tokens(p: SqlParser) -> list[Token]:
        """The tokens of one SQL statement (up to its ';'), parsed again when it runs."""
        start = p.i
        depth = 0
        while not (depth == 0 and p.at(";")):
            if p.tok.kind == "eof":
                p.fail("';' expected")
            depth += p.at("(") - p.at(")")
            p.i += 1
        toks = p.toks[start : p.i] + [Token("eof", "", p.tok.line)]
        p.i += 1
        return toks

    @staticmethod
    def _block_tokens(p: SqlParser) -> list[Token]:
        """A nested block's tokens (parsed again when it runs)."""
        start = p.i
        depth = 0
        while True:
            if p.tok.kind == "eof":
                p.fail("END expected")
            if p.at("BEGIN", "CASE"):  # a CASE expression ends with END too
                depth += 1
            elif p.at("END") and p.peek().text not in ("LOOP", "IF"):
                depth -= 1
                if depth == 0:
                    p.i += 1
                    if p.tok.kind == "id":
                        p.i += 1
                    p.expect(";")
                    break
                if p.peek().text == "CASE":  # END CASE of a CASE statement
                    p.i += 1
            p.i += 1
        return p.toks[start : p.i] + [Token("eof", "", p.tok.line)]

    def _call_or_assignment(self, p: SqlParser, line: int) -> tuple[Any, ...]:
        """``name := e;``, ``v(i) := e;``, ``r.f := e;`` or a procedure call ``name[(args)];``."""
        name = p.ident()
        while p.accept("."):
            name += "." + p.ident()
        args: list[Node] = []
        if p.accept("("):
            while not p.at(")"):
                if p.tok.kind == "id" and p.peek().text == "=>":  # named notation: p_name => value
                    param = p.ident()
                    p.i += 1
                    args.append(("named", param, p.expr()))
                else:
                    args.append(p.expr())
                if not p.accept(","):
                    break
            p.expect(")")
        if p.accept(":="):
            value = p.expr()
            p.expect(";")
            if len(args) > 1:
                p.fail("one index expected")
            return ("set", name, args[0] if args else None, value, line)
        p.expect(";")
        return ("call", name, args, line)

    # -- running
    def _run(self, body: list[Any], env: dict[str, Any], procs: dict[str, Proc]) -> None:
        for st in body:
            self.line = st[-1]
            kind = st[0]
            if kind == "sql":
                self._atomic(lambda st=st: self._statement(SqlParser(st[1]), env, procs))
            elif kind == "set":
                self._assign(st, env)
            elif kind == "for":
                lo = to_number(evaluate(st[2], self._lookup(env)), st[6])
                hi = to_number(evaluate(st[3], self._lookup(env)), st[6])
                if lo is None or hi is None:
                    raise SqlError("FOR loop bounds are NULL", RUNTIME, st[6])
                rng = range(int(lo), int(hi) + 1)
                self._loop(
                    st[1], [Decimal(i) for i in (reversed(rng) if st[4] else rng)], st[5], env, procs, self._label(st)
                )
            elif kind == "cursor_for":
                query, scope = st[2], env
                if isinstance(query, tuple):  # a declared cursor (with its arguments)
                    cursor = env.get(query[0])
                    if not isinstance(cursor, Cursor):
                        raise SqlError(f"PLS-00201: cursor {query[0]} must be declared", RUNTIME, st[4])
                    scope = self._cursor_scope(cursor, query[1], env, st[4])
                    query = cursor.query
                names, rows = self._atomic(lambda q=query, s=scope: self._run_query(q, s))  # read before the loop
                self._loop(st[1], [dict(zip(names, r, strict=True)) for r in rows], st[3], env, procs, self._label(st))
            elif kind == "forall":
                self._forall(st, env, procs)
            elif kind in ("open", "close", "fetch"):
                self._cursor_op(st, env)
            elif kind == "select":
                self._atomic(lambda st=st: self._select_into(st[1], env))
            elif kind == "while":
                guard = 0
                label = self._label(st)
                try:
                    while evaluate(st[1], self._lookup(env)) is True:
                        guard += 1
                        if guard > 1_000_000:
                            raise SqlError("loop runs over a million times", RUNTIME, st[3])
                        try:
                            self._run(st[2], env, procs)
                        except _Continue as exc:
                            if not _ends_loop(exc, label):
                                raise
                except _Exit as exc:
                    if isinstance(exc, _Continue) or not _ends_loop(exc, label):
                        raise
            elif kind in ("exit", "continue"):
                if evaluate(st[1], self._lookup(env)) is True:
                    raise (_Exit if kind == "exit" else _Continue)(st[2])
            elif kind == "if":
                for cond, arm in st[1]:
                    if evaluate(cond, self._lookup(env)) is True:
                        self._run(arm, env, procs)
                        break
                else:
                    self._run(st[2], env, procs)
            elif kind == "block":
                self._block(SqlParser(st[1]), env, procs)
            elif kind == "return":
                raise Return(None if st[1] is None else evaluate(st[1], self._lookup(env)))
            elif kind == "raise_case":
                raise SqlError("ORA-06592: CASE not found while executing CASE statement", RUNTIME, st[1])
            elif kind == "raise":
                if not st[1]:
                    if "SQLERRM" not in env:
                        raise SqlError("RAISE; outside an exception handler", RUNTIME, st[2])
                    raise SqlError(str(env["SQLERRM"]), RUNTIME, st[2])
                if st[1] in EXCEPTIONS:
                    raise SqlError(f"ORA-{EXCEPTIONS[st[1]]:05d}: {st[1]}", RUNTIME, st[2])
                declared = env.get(st[1])
                if not isinstance(declared, UserException):
                    raise SqlError(f"PLS-00201: exception {st[1]} must be declared", RUNTIME, st[2])
                if declared.code:
                    raise SqlError(f"ORA-{declared.code:05d}: {st[1]}", RUNTIME, st[2])
                raise SqlError(f"ORA-06510: PL/SQL: unhandled user-defined exception {st[1]}", RUNTIME, st[2])
            elif kind == "call":
                self._call(st[1], st[2], env, procs, st[3])
            elif kind == "execute":
                binds = [None if mode == "OUT" else evaluate(node, self._lookup(env)) for mode, node in st[5]]
                outs = [node[1] if mode != "IN" else None for mode, node in st[5]]
                self._execute(
                    to_text(evaluate(st[1], self._lookup(env))) or "", env, procs, st[2], st[3], st[4], binds, outs
                )

    def _execute(
        self,
        text: str,
        env: dict[str, Any],
        procs: dict[str, Proc],
        line: int,
        into: list[str] | None = None,
        bulk: bool = False,
        binds: list[Any] | None = None,
        outs: list[str | None] | None = None,
    ) -> None:
        """``EXECUTE IMMEDIATE 'statement' [[BULK COLLECT] INTO targets] [USING values]``: the text
        compiled as a statement (a query with INTO; or an anonymous block), its placeholders
        (``:1``, ``:name``) bound to the USING values: by position in a SQL statement (each
        placeholder takes the next value), by name in a block (a repeated name, the same one),
        as Oracle binds them. An ``OUT``/``IN OUT`` bind (a ``RETURNING INTO`` target too) is
        copied to its variable (``outs``) when the statement succeeds."""
        text = text.strip()
        block = text.upper().startswith(("DECLARE", "BEGIN"))
        text, names = _bind_placeholders(text if block else text.rstrip(";"), block)
        values = binds or []
        if len(names) != len(values):
            raise SqlError(
                f"ORA-01008: not all variables bound ({len(names)} placeholders, {len(values)} USING values)",
                RUNTIME,
                line,
            )
        inner = dict(env)
        inner.update(zip(names, values, strict=True))
        p = SqlParser(tokenize(text, line))
        try:
            if into:
                if not p.at("SELECT", "WITH"):
                    p.fail("EXECUTE IMMEDIATE ... INTO needs a query")
                q = self._query(p)
                q.into, q.bulk = list(into), bulk
                self._atomic(lambda: self._select_into(q, inner))
            elif block:
                self._block(p, inner, procs)
            else:
                self._atomic(lambda: self._statement(p, inner, procs))
        finally:
            for k in env:  # assignments to the block's variables (INTO targets) survive
                env[k] = inner[k]
        for bind, target in zip(names, outs or [], strict=False):
            if target is not None:
                self._assign(("set", target, None, ("lit", inner[bind]), line), env)
        if p.tok.kind != "eof" and not p.at(";"):
            p.fail(f"unexpected {p.tok.text!r} after the statement")

    def _atomic(self, run: Any) -> Any:
        """Run one SQL statement; when it fails, its changes are undone (statement-level rollback)."""
        mark = self._mark()
        try:
            return run()
        except SqlError as exc:
            if exc.code == RUNTIME:
                self._restore(mark)
            raise

    def _label(self, st: tuple[Any, ...]) -> str:
        """The ``<<label>>`` of a loop statement, or ''."""
        entry = self.loop_labels.get(id(st))
        return entry[1] if entry is not None and entry[0] is st else ""

    def _loop(
        self, var: str, values: list[Any], body: list[Any], env: dict[str, Any], procs: dict[str, Proc], label: str = ""
    ) -> None:
        try:
            for value in values:
                inner = dict(env)
                inner[var] = value
                try:
                    self._run(body, inner, procs)
                except _Continue as exc:
                    if not _ends_loop(exc, label):
                        raise
                finally:
                    for k in env:  # assignments to outer variables survive the iteration
                        if k != var:
                            env[k] = inner[k]
        except _Exit as exc:
            if isinstance(exc, _Continue) or not _ends_loop(exc, label):
                raise

    def _assign(self, st: tuple[Any, ...], env: dict[str, Any]) -> None:
        _, name, index, node, line = st
        value = evaluate(node, self._lookup(env))
        if isinstance(value, dict):  # a record is assigned by value
            value = dict(value)
        if index is not None:
            coll = env.get(name)
            if not isinstance(coll, Collection):
                raise SqlError(f"PLS-00201: collection {name} must be declared", RUNTIME, line)
            coll.items[coll.key(evaluate(index, self._lookup(env)), line)] = value
            return
        if "." in name:
            qual, field_name = name.rsplit(".", 1)
            rec = env.get(qual)
            if isinstance(rec, dict):
                rec[field_name] = value
                return
        if name not in env:
            raise SqlError(f"PLS-00201: identifier {name} must be declared", RUNTIME, line)
        env[name] = value

    @staticmethod
    def _args(p: SqlParser) -> list[Node]:
        """``[(e, ...)]``."""
        args: list[Node] = []
        if p.accept("("):
            if not p.at(")"):
                args.append(p.expr())
                while p.accept(","):
                    args.append(p.expr())
            p.expect(")")
        return args

    def _cursor_scope(self, cur: Cursor, args: list[Node], env: dict[str, Any], line: int) -> dict[str, Any]:
        """The variables a cursor's query sees: the block's, and its parameters."""
        if len(args) != len(cur.params):
            raise SqlError(
                f"PLS-00306: wrong number of arguments for a cursor of {len(cur.params)} parameters", RUNTIME, line
            )
        if not args:
            return env
        lookup = self._lookup(env)
        return {**env, **{n: evaluate(a, lookup) for n, a in zip(cur.params, args, strict=True)}}

    def _cursor_op(self, st: tuple[Any, ...], env: dict[str, Any]) -> None:
        """``OPEN c`` (the query runs now), ``FETCH c [BULK COLLECT] INTO ... [LIMIT n]``, ``CLOSE c``."""
        cur = env.get(st[1])
        line = st[-1]
        if not isinstance(cur, Cursor):
            raise SqlError(f"PLS-00201: cursor {st[1]} must be declared", RUNTIME, line)
        if st[0] == "open":
            if cur.rows is not None:
                raise SqlError("ORA-06511: cursor already open", RUNTIME, line)
            names, rows = self._run_query(cur.query, self._cursor_scope(cur, st[2], env, line))
            cur.rows, cur.fetched, cur.found = [dict(zip(names, r, strict=True)) for r in rows], 0, None
            return
        if cur.rows is None:
            raise SqlError("ORA-01001: invalid cursor (not open)", RUNTIME, line)
        if st[0] == "close":
            cur.rows = None
            return
        _, _, targets, bulk, limit, _ = st
        if bulk:
            n = len(cur.rows) - cur.fetched
            if limit is not None:
                n = min(n, int(to_number(evaluate(limit, self._lookup(env)), line) or 0))
            batch = cur.rows[cur.fetched : cur.fetched + n]
            cur.fetched += len(batch)
            cur.found = limit is not None and len(batch) == n and n > 0
            for k, target in enumerate(targets):
                coll = env.get(target)
                if not isinstance(coll, Collection):
                    raise SqlError(f"BULK COLLECT INTO {target}: not a collection", RUNTIME, line)
                coll.items = {
                    i: (row if len(targets) == 1 and len(row) > 1 else list(row.values())[k])
                    for i, row in enumerate(batch, 1)
                }
            return
        if cur.fetched >= len(cur.rows):
            cur.found = False
            return
        row = cur.rows[cur.fetched]
        cur.fetched += 1
        cur.found = True
        if len(targets) == 1 and len(row) > 1:
            env[targets[0]] = _record(env.get(targets[0]), list(row), list(row.values()), line)
            return
        if len(targets) != len(row):
            raise SqlError("ORA-00947: FETCH INTO lists another number of values", RUNTIME, line)
        for target, value in zip(targets, row.values(), strict=True):
            self._assign(("set", target, None, ("lit", value), line), env)

    def _select_into(self, q: Query, env: dict[str, Any]) -> None:
        """``SELECT ... [BULK COLLECT] INTO targets``: NO_DATA_FOUND / TOO_MANY_ROWS as Oracle raises them."""
        names, rows = self._run_query(q, env)
        if q.bulk:
            for n, target in enumerate(q.into):
                coll = env.get(target)
                if not isinstance(coll, Collection):
                    raise SqlError(f"BULK COLLECT INTO {target}: not a collection", RUNTIME, q.line)
                if coll.fields is not None and len(q.into) == 1:  # records of a declared type: by position
                    coll.items = {
                        i: _record(dict.fromkeys(coll.fields), names, r, q.line) for i, r in enumerate(rows, 1)
                    }
                    continue
                coll.items = {
                    i: (dict(zip(names, r, strict=True)) if len(q.into) == 1 and len(names) > 1 else r[n])
                    for i, r in enumerate(rows, 1)
                }
            return
        if not rows:
            raise SqlError("ORA-01403: no data found", RUNTIME, q.line)
        if len(rows) > 1:
            raise SqlError("ORA-01422: exact fetch returns more than requested number of rows", RUNTIME, q.line)
        if len(q.into) == 1 and (len(names) > 1 or isinstance(env.get(q.into[0]), dict)):  # a record
            env[q.into[0]] = _record(env.get(q.into[0]), names, rows[0], q.line)
            return
        if len(q.into) != len(names):
            raise SqlError(
                f"ORA-{'00947: not enough' if len(q.into) > len(names) else '00913: too many'} values", RUNTIME, q.line
            )
        for target, value in zip(q.into, rows[0], strict=True):
            self._assign(("set", target, None, ("lit", value), q.line), env)

    def _forall(self, st: tuple[Any, ...], env: dict[str, Any], procs: dict[str, Proc]) -> None:
        """``FORALL i IN a..b | INDICES OF v dml;``: one bulk execution. An INSERT ... VALUES
        becomes one array insert of every iteration's row (redo 11.11, as a bulk bind writes
        it); other statements run once per index."""
        _, var, bounds, toks, line = st
        if bounds[0] == "indices":
            coll = env.get(bounds[1])
            if not isinstance(coll, Collection):
                raise SqlError(f"INDICES OF {bounds[1]}: not a collection", RUNTIME, line)
            indices = [Decimal(k) for k in sorted(coll.items)]
        else:
            lo = to_number(evaluate(bounds[0], self._lookup(env)), line)
            hi = to_number(evaluate(bounds[1], self._lookup(env)), line)
            if lo is None or hi is None:
                raise SqlError("FORALL bounds are NULL", RUNTIME, line)
            indices = [Decimal(i) for i in range(int(lo), int(hi) + 1)]
        p = SqlParser(toks)
        if p.at("INSERT") and any(t.text == "VALUES" for t in toks if t.kind == "id"):
            p.expect("INSERT")
            p.expect("INTO")
            table = self._table(p.ident(), line)
            if p.tok.kind == "id" and p.tok.text != "VALUES":
                p.i += 1
            names = self._name_list(p) if p.at("(") else None
            p.expect("VALUES")
            exprs = self._value_list(p)
            rows = [self._values(table, names, exprs, self._lookup({**env, var: i}), line) for i in indices]
            if rows:
                self._atomic(lambda: self._insert_rows(table, names, rows, env, line))
            self.rowcount = len(rows)
            return
        total = 0
        for i in indices:
            self._atomic(lambda i=i: self._statement(SqlParser(toks), {**env, var: i}, procs))
            total += self.rowcount
        self.rowcount = total

    def _call(self, name: str, args: list[Node], env: dict[str, Any], procs: dict[str, Proc], line: int) -> None:
        if name.startswith("DBMS_OUTPUT."):
            return  # its arguments are not evaluated: nothing the redo shows depends on them
        called = procs.get(name)
        if any(a[0] == "named" for a in args):
            args = self._positional(name, called, args, line)
        out_params = {n for n, mode in called.modes.items() if mode == "OUT"} if called is not None else set()
        params = called.params if called is not None else []
        values = [
            None if n < len(params) and params[n] in out_params else evaluate(a, self._lookup(env))
            for n, a in enumerate(args)
        ]  # an OUT argument is written, not read
        if name in _SLEEPS:
            secs = to_number(values[0], line) if values else None
            if secs is None:
                raise SqlError(f"{name} needs a number of seconds", RUNTIME, line)
            self.pending_wait += float(secs)
            return
        if name == "RAISE_APPLICATION_ERROR":
            code = to_number(values[0], line) if values else None
            if code is None or not -20999 <= code <= -20000:
                raise SqlError("ORA-21000: RAISE_APPLICATION_ERROR takes an error number -20000..-20999", RUNTIME, line)
            raise SqlError(f"ORA{int(code):06d}: {to_text(values[1]) if len(values) > 1 else ''}", RUNTIME, line)
        if "." in name:
            qual, method = name.rsplit(".", 1)
            coll = env.get(qual)
            if isinstance(coll, Collection):
                self._collection_method(coll, method, values, line)
                return
        proc = procs.get(name)
        if proc is None:
            raise SqlError(f"procedure {name} is not supported or not declared", EXPRESSION, line)
        targets: list[tuple[str, tuple[Any, ...]]] = []
        for param, arg in zip(proc.params, args, strict=False):
            if param in proc.modes:
                if arg[0] == "name" and "%" not in arg[1]:
                    targets.append((param, ("set", arg[1], None)))
                elif arg[0] == "call" and len(arg[2]) == 1 and isinstance(env.get(arg[1]), Collection):
                    targets.append((param, ("set", arg[1], arg[2][0])))
                else:
                    raise SqlError(
                        f"PLS-00363: the {proc.modes[param]} argument for {param} of {name} cannot be assigned to",
                        RUNTIME,
                        line,
                    )
        scope = self._invoke(name, proc, values, env, procs, line, scope_out=bool(targets))
        for param, (kind, target, index) in targets:  # OUT / IN OUT: copied back when the call ends normally
            self._assign((kind, target, index, ("lit", scope[param]), line), env)

    @staticmethod
    def _positional(name: str, proc: Proc | None, args: list[Node], line: int) -> list[Node]:
        """Arguments in named notation (``p => v``, after any positional ones) in parameter order;
        a parameter left out takes its DEFAULT."""
        if proc is None:
            raise SqlError(f"procedure {name} is not supported or not declared (named arguments)", EXPRESSION, line)
        given: dict[str, Node] = {}
        for n, arg in enumerate(args):
            if arg[0] == "named":
                if arg[1] not in proc.params or arg[1] in given:
                    raise SqlError(f"PLS-00306: wrong argument {arg[1]} in call to {name}", RUNTIME, line)
                given[arg[1]] = arg[2]
            elif any(a[0] == "named" for a in args[:n]) or n >= len(proc.params):
                raise SqlError(f"PLS-00312: a positional argument after a named one in call to {name}", RUNTIME, line)
            else:
                given[proc.params[n]] = arg
        last = max(proc.params.index(k) for k in given)
        out: list[Node] = []
        for param in proc.params[: last + 1]:
            if param in given:
                out.append(given[param])
            elif param in proc.defaults:
                out.append(proc.defaults[param])
            else:
                raise SqlError(f"PLS-00306: no value for {param} in call to {name}", RUNTIME, line)
        return out

    def _invoke_function(self, fn: Function, args: list[Any], env: dict[str, Any], line: int) -> Any:
        return self._invoke(fn.name, fn.proc, args, env, fn.procs, line, function=True)

    def _invoke(
        self,
        name: str,
        proc: Proc,
        values: list[Any],
        env: dict[str, Any],
        procs: dict[str, Proc],
        line: int,
        function: bool = False,
        scope_out: bool = False,
    ) -> Any:
        """Run a procedure or function with its arguments (a missing trailing one takes its
        ``DEFAULT``; an ``OUT`` one starts NULL); a function's RETURN value (``scope_out``: the
        procedure's final scope, its OUT parameters' values)."""
        result = None
        returned = False
        missing = proc.params[len(values) :]
        if len(values) > len(proc.params) or any(m not in proc.defaults for m in missing):
            raise SqlError(f"PLS-00306: wrong number of arguments in call to {name}", RUNTIME, line)
        scope = dict(env)
        scope.update(proc.local_env)
        scope.update(zip(proc.params, values, strict=False))
        for m in missing:
            scope[m] = evaluate(proc.defaults[m], self._lookup(scope))
        for param, mode in proc.modes.items():
            if mode == "OUT":
                scope[param] = None
        if proc.local_procs:
            procs = {**procs, **proc.local_procs}
        if proc.decls:
            end = proc.decls[-1].line
            declared = self._declarations(
                SqlParser([*proc.decls, Token("id", "BEGIN", end), Token("eof", "", end)]), scope, procs
            )
            proc_locals = declared
        else:
            proc_locals = set()
        if proc.autonomous:
            self.depth += 1
        try:
            self._run_handled(proc.body, proc.handlers, scope, procs)
        except Return as ret:
            result, returned = ret.value, True
        finally:
            if proc.autonomous:
                s = self._session()
                if s.active:
                    raise SqlError(
                        f"ORA-06519: active autonomous transaction detected and rolled back in {name}", RUNTIME, line
                    )
                self.depth -= 1
        for k in env:
            if k not in proc.params and k not in proc.local_env and k not in proc_locals:
                env[k] = scope[k]
        if function and not returned:
            raise SqlError(f"ORA-06503: PL/SQL: function {name} returned without value", RUNTIME, line)
        return scope if scope_out else result

    @staticmethod
    def _collection_method(coll: Collection, method: str, values: list[Any], line: int) -> None:
        """``v.EXTEND[(n)]``, ``v.DELETE[(i)]``, ``v.TRIM[(n)]``."""
        if method == "EXTEND":
            top = max((k for k in coll.items if isinstance(k, int)), default=0)
            for n in range(int(to_number(values[0], line) or 1) if values else 1):
                coll.items[top + n + 1] = None
        elif method == "DELETE":
            if values:
                coll.items.pop(coll.key(values[0], line), None)
            else:
                coll.items.clear()
        elif method == "TRIM":
            for _ in range(int(to_number(values[0], line) or 1) if values else 1):
                if coll.items:
                    coll.items.pop(max(coll.items))
        else:
            raise SqlError(f"collection method {method} is not supported (EXTEND, DELETE, TRIM)", EXPRESSION, line)


_BIND_RE: Final = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/|:(\w+)", re.DOTALL)


def _bind_placeholders(text: str, by_name: bool) -> tuple[str, list[str]]:
    """Dynamic SQL text with its ``:placeholders`` turned into variables, and their names in
    the order the USING values bind them (one per placeholder; one per distinct name in a block)."""
    names: list[str] = []
    seen: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        if m[1] is None:
            return m[0]
        key = m[1].upper()
        if by_name and key in seen:
            return seen[key]
        name = f"BIND${len(names) + 1}"
        names.append(name)
        seen[key] = name
        return name

    return _BIND_RE.sub(sub, text), names


def _record(current: Any, names: list[str], values: list[Any], line: int) -> dict[str, Any]:
    """A fetched row as a record: into a declared record (``current``) by position, as PL/SQL
    assigns it, else named by the query's columns."""
    if isinstance(current, dict) and list(current) != list(names):
        if len(current) != len(values):
            raise SqlError(
                f"ORA-06504: the record has {len(current)} fields, the row {len(values)} values", RUNTIME, line
            )
        return dict(zip(current, values, strict=True))
    return dict(zip(names, values, strict=True))
