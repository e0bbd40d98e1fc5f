"""PL/SQL of the SQL compiler: blocks, declarations, control flow and local procedures.

A block is parsed into a small tree of statements (:meth:`PlsqlBlocks._statements`) and run
against the compiler's tables (:meth:`PlsqlBlocks._run`); SQL statements inside it go through
the same statement dispatcher as top-level ones.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

from replicator.redogen.sqlbase import CompilerBase, Proc, Return
from replicator.redogen.sqlexpr import RUNTIME, EXPRESSION, Node, Parser, SqlError, Token, evaluate, to_number

_SLEEPS: Final = frozenset({"DBMS_SESSION.SLEEP", "DBMS_LOCK.SLEEP", "SYS.DBMS_SESSION.SLEEP"})


class PlsqlBlocks(CompilerBase):
    """``[DECLARE] BEGIN ... END;`` blocks and what runs inside them."""

    def _block(self, p: Parser, env: dict[str, Any], procs: dict[str, Proc]) -> None:
        """``[DECLARE ...] BEGIN ... END;`` run with a copy of the enclosing scope."""
        env, procs = dict(env), dict(procs)
        if p.accept("DECLARE"):
            self._declarations(p, env, procs)
        p.expect("BEGIN")
        body = self._statements(p, ("END", "EXCEPTION"))
        if p.at("EXCEPTION"):
            p.fail("EXCEPTION handlers are not supported")
        p.expect("END")
        if p.tok.kind == "id":
            p.i += 1
        p.accept(";")
        self._run(body, env, procs)

    def _declarations(self, p: Parser, env: dict[str, Any], procs: dict[str, Proc]) -> None:
        while not p.at("BEGIN"):
            if p.tok.kind == "eof":
                p.fail("BEGIN expected")
            if p.accept("PROCEDURE"):
                name = p.ident()
                params: list[str] = []
                if p.accept("("):
                    while True:
                        params.append(p.ident())
                        p.accept("IN")
                        self._skip_type(p)
                        if p.accept("DEFAULT") or p.accept(":="):
                            p.fail("parameter defaults are not supported")
                        if not p.accept(","):
                            break
                    p.expect(")")
                if not p.accept("IS"):
                    p.expect("AS")
                autonomous = False
                decls: list[tuple[str, Node | None]] = []
                while not p.at("BEGIN"):
                    if p.accept("PRAGMA"):
                        if p.ident() != "AUTONOMOUS_TRANSACTION":
                            p.fail("only PRAGMA AUTONOMOUS_TRANSACTION is supported")
                        autonomous = True
                        p.expect(";")
                    elif p.at("PROCEDURE", "FUNCTION"):
                        p.fail("nested procedures are not supported")
                    else:
                        decls.append(self._variable(p))
                    if p.tok.kind == "eof":
                        p.fail("BEGIN expected")
                p.expect("BEGIN")
                body = self._statements(p, ("END", "EXCEPTION"))
                if p.at("EXCEPTION"):
                    p.fail("EXCEPTION handlers are not supported")
                p.expect("END")
                if p.tok.kind == "id":
                    p.i += 1
                p.expect(";")
                procs[name] = Proc(params, body, autonomous, decls)
            elif p.at("FUNCTION", "CURSOR", "TYPE"):
                p.fail(f"{p.tok.text} declarations are not supported")
            else:
                name, node = self._variable(p)
                env[name] = None if node is None else evaluate(node, self._lookup(env))

    def _variable(self, p: Parser) -> tuple[str, Node | None]:
        name = p.ident()
        p.accept("CONSTANT")
        self._skip_type(p)
        node = None
        if p.accept(":=") or p.accept("DEFAULT"):
            node = p.expr()
        p.expect(";")
        return name, node

    @staticmethod
    def _skip_type(p: Parser) -> None:
        p.ident()
        if p.accept("%"):
            p.ident()
        if p.accept("("):
            while not p.accept(")"):
                p.i += 1
        while p.at("NOT", "NULL"):
            p.i += 1

    def _statements(self, p: Parser, stop: tuple[str, ...]) -> list[Any]:
        """Parse PL/SQL statements up to one of ``stop`` (not consumed) into a small tree."""
        out: list[Any] = []
        while not p.at(*stop):
            t = p.tok
            if t.kind == "eof":
                p.fail(f"{' or '.join(stop)} expected")
            line = t.line
            if p.accept("FOR"):
                var = p.ident()
                p.expect("IN")
                reverse = p.accept("REVERSE")
                lo = p._concat()
                p.expect("..")
                hi = p._concat()
                p.expect("LOOP")
                body = self._statements(p, ("END",))
                p.expect("END")
                p.expect("LOOP")
                p.expect(";")
                out.append(("for", var, lo, hi, reverse, body, line))
            elif p.accept("WHILE"):
                cond = p.expr()
                p.expect("LOOP")
                body = self._statements(p, ("END",))
                p.expect("END")
                p.expect("LOOP")
                p.expect(";")
                out.append(("while", cond, body, line))
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
            elif p.at("NULL") and p.peek().text == ";":
                p.i += 2
            elif p.at("DECLARE", "BEGIN"):
                start = p.i
                depth = 0
                while True:  # find the block's extent; it is parsed again when run
                    if p.tok.kind == "eof":
                        p.fail("END expected")
                    if p.at("BEGIN"):
                        depth += 1
                    elif p.at("END") and p.peek().text not in ("LOOP", "IF"):
                        depth -= 1
                        if depth == 0:
                            p.i += 1
                            if p.tok.kind == "id":
                                p.i += 1
                            p.expect(";")
                            break
                    p.i += 1
                out.append(("block", p.toks[start:p.i] + [Token("eof", "", p.tok.line)], line))
            elif p.at("RETURN") and p.peek().text == ";":
                p.i += 2
                out.append(("return", line))
            elif p.at("EXECUTE"):
                p.fail("EXECUTE IMMEDIATE after the start marker is not supported")
            elif p.at("INSERT", "UPDATE", "DELETE", "COMMIT", "ROLLBACK", "SAVEPOINT"):
                start = p.i
                depth = 0
                while not (depth == 0 and p.at(";")):
                    if p.tok.kind == "eof":
                        p.fail("';' expected")
                    depth += p.at("(") - p.at(")")
                    p.i += 1
                out.append(("sql", p.toks[start:p.i] + [Token("eof", "", p.tok.line)], line))
                p.i += 1
            elif t.kind == "id" and p.peek().text == ":=":
                p.i += 2
                out.append(("set", t.text, p.expr(), line))
                p.expect(";")
            elif t.kind == "id":
                name = t.text
                p.i += 1
                while p.accept("."):
                    name += "." + p.ident()
                args: list[Node] = []
                if p.accept("("):
                    if not p.at(")"):
                        args.append(p.expr())
                        while p.accept(","):
                            args.append(p.expr())
                    p.expect(")")
                p.expect(";")
                out.append(("call", name, args, line))
            else:
                p.fail(f"unexpected {t.text!r} in a PL/SQL block")
        return out

    def _run(self, body: list[Any], env: dict[str, Any], procs: dict[str, Proc]) -> None:
        for st in body:
            self.line = st[-1]
            kind = st[0]
            if kind == "sql":
                self._statement(Parser(st[1]), env, procs)
            elif kind == "set":
                if st[1] not in env:
                    raise SqlError(f"PLS-00201: identifier {st[1]} must be declared", RUNTIME, st[3])
                env[st[1]] = evaluate(st[2], self._lookup(env))
            elif kind == "for":
                lo = to_number(evaluate(st[2], self._lookup(env)), st[6])
                hi = to_number(evaluate(st[3], self._lookup(env)), st[6])
                if lo is None or hi is None:
                    raise SqlError("FOR loop bounds are NULL", RUNTIME, st[6])
                rng = range(int(lo), int(hi) + 1)
                for i in reversed(rng) if st[4] else rng:
                    inner = dict(env)
                    inner[st[1]] = Decimal(i)
                    self._run(st[5], inner, procs)
                    for k in env:  # assignments to outer variables survive the iteration
                        if k != st[1]:
                            env[k] = inner[k]
            elif kind == "while":
                guard = 0
                while evaluate(st[1], self._lookup(env)) is True:
                    guard += 1
                    if guard > 1_000_000:
                        raise SqlError("WHILE loop runs over a million times", RUNTIME, st[3])
                    self._run(st[2], env, procs)
            elif kind == "if":
                for cond, arm in st[1]:
                    if evaluate(cond, self._lookup(env)) is True:
                        self._run(arm, env, procs)
                        break
                else:
                    self._run(st[2], env, procs)
            elif kind == "block":
                self._block(Parser(st[1]), env, procs)
            elif kind == "return":
                raise Return()
            elif kind == "call":
                self._call(st[1], st[2], env, procs, st[3])

    def _call(self, name: str, args: list[Node], env: dict[str, Any], procs: dict[str, Proc], line: int) -> None:
        values = [evaluate(a, self._lookup(env)) for a in args]
        if name in _SLEEPS:
            secs = to_number(values[0], line) if values else None
            if secs is None:
                raise SqlError(f"{name} needs a number of seconds", RUNTIME, line)
            self.pending_wait += float(secs)
            return
        if name.startswith("DBMS_OUTPUT."):
            return
        proc = procs.get(name)
        if proc is None:
            raise SqlError(f"procedure {name} is not supported or not declared", EXPRESSION, line)
        if len(values) != len(proc.params):
            raise SqlError(f"PLS-00306: wrong number of arguments in call to {name}", RUNTIME, line)
        scope = dict(env)
        scope.update(zip(proc.params, values, strict=True))
        for var, node in proc.decls:
            scope[var] = None if node is None else evaluate(node, self._lookup(scope))
        if proc.autonomous:
            self.depth += 1
        try:
            self._run(proc.body, scope, procs)
        except Return:
            pass
        finally:
            if proc.autonomous:
                s = self._session()
                if s.active:
                    raise SqlError(f"ORA-06519: active autonomous transaction detected and rolled back in {name}",
                                   RUNTIME, line)
                self.depth -= 1
        for k in env:
            if k not in proc.params:
                env[k] = scope[k]


