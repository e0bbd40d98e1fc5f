"""Compile an Oracle SQL*Plus script into a redogen :class:`~replicator.redogen.scenario.Scenario`.

The scripts behind OpenLogReplicator's reference outputs are run as is by SQL*Plus on a real
database; this compiler replays them into the scenario model, keeping each table's rows so an
``UPDATE``/``DELETE`` finds the rows its ``WHERE`` picks and the new values its ``SET``
expressions compute (``val = val + 1``). This module cuts the script into statements and
drives them; the statement families live beside it:

* :mod:`~replicator.redogen.sqltables`: the table model and the values stored into columns;
* :mod:`~replicator.redogen.sqlquery`: SELECTs (DUAL row generators, tables, UNION ALL, ORDER BY);
* :mod:`~replicator.redogen.sqldml`: INSERT (VALUES or SELECT, the latter as array inserts),
  UPDATE, DELETE, MERGE;
* :mod:`~replicator.redogen.sqlddl`: CREATE/ALTER/DROP/TRUNCATE TABLE, indexes, sequences;
* :mod:`~replicator.redogen.sqlplsql`: PL/SQL blocks, cursors, collections, FORALL, handlers;
* :mod:`~replicator.redogen.sqlexpr`: tokens, expressions and functions.

SQL*Plus: ``SET`` (``SET DEFINE OFF``), ``EXIT``, ``PROMPT``...; PL/SQL blocks end at ``/``.
With ``DEFINE`` on (the default) a statement holding ``&name`` is skipped, as SQL*Plus did not
run it unattended. Markers: the block printing ``FIXTURE_SCN_START`` ends the setup (tables
created before it are the scenario's tables, rows the setup inserts are already in them),
``FIXTURE_SCN_END`` ends the replicated part. ``-- @NODE<n>`` runs what follows on RAC
instance n (redo thread n); ``-- @MID_SWITCH`` is a log switch; ``-- @TAG <charset>`` names the
database character set.

With a schema checkpoint (``schema=``) the tables are declared as the checkpoint describes them
(:mod:`replicator.redogen.sqlschema`); without one, from the ``CREATE TABLE`` text. Anything
else is a :class:`~replicator.redogen.sqlexpr.SqlError` naming the line and the statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from replicator.redogen.encode import can_encode
from replicator.redogen.scenario import Event, Scenario
from replicator.redogen.sqlbase import Proc
from replicator.redogen.sqlddl import DdlStatements
from replicator.redogen.sqlexpr import DB_CHARSET, RUNTIME, SCHEMA, SUBQUERY, SYNTAX, SqlError, SqlParser, tokenize
from replicator.redogen.sqlplsql import PlsqlBlocks
from replicator.redogen.sqlschema import SqlCheckpoint, load_checkpoint
from replicator.redogen.sqltables import copy_table, logged_supplemental, scenario_value
from replicator.values.charset import CHARSET_IDS

_SQLPLUS: Final = frozenset(
    {
        "SET",
        "EXIT",
        "QUIT",
        "PROMPT",
        "SPOOL",
        "WHENEVER",
        "COLUMN",
        "COL",
        "DEFINE",
        "UNDEFINE",
        "SHOW",
        "REM",
        "REMARK",
        "CONNECT",
        "CONN",
        "VARIABLE",
        "VAR",
        "PAUSE",
        "TTITLE",
        "BTITLE",
        "BREAK",
        "COMPUTE",
        "CLEAR",
        "TIMING",
        "ACCEPT",
        "HOST",
        "DISCONNECT",
        "DESC",
        "DESCRIBE",
    }
)
_MARKER_RE: Final = re.compile(r"--\s*@(\w+)(.*)")
_SUBST_RE: Final = re.compile(r"&&?[A-Za-z_]")


@dataclass(slots=True)
class Chunk:
    """One unit of a script: a SQL statement, a PL/SQL block, a marker or a SQL*Plus command."""

    kind: str  # sql | plsql | marker | sqlplus
    text: str
    line: int

    @property
    def head(self) -> str:
        """The statement's first line, for error messages."""
        first = self.text.strip().splitlines()[0] if self.text.strip() else ""
        return first if len(first) <= 80 else first[:77] + "..."


def split_script(text: str) -> list[Chunk]:
    """Cut a SQL*Plus script into statements, PL/SQL blocks (ended by ``/``) and markers."""
    out: list[Chunk] = []
    buf: list[str] = []
    mode = ""
    start = 0
    lines = text.splitlines()
    in_quote = False
    for no, line in enumerate(lines, 1):
        stripped = line.strip()
        if not mode:
            if not stripped:
                continue
            if stripped.startswith("--"):
                m = _MARKER_RE.match(stripped)
                if m:
                    out.append(Chunk("marker", f"{m[1]} {m[2].strip()}".strip().upper(), no))
                continue
            word = re.match(r"[A-Za-z_@]*", stripped)
            first = word.group().upper() if word else ""
            if first in _SQLPLUS or stripped.startswith("@"):
                out.append(Chunk("sqlplus", stripped, no))
                continue
            if stripped == "/":
                continue
            if first in ("EXEC", "EXECUTE"):
                out.append(Chunk("plsql", "BEGIN " + stripped.split(None, 1)[1].rstrip(";") + "; END;", no))
                continue
            words = stripped.upper().split()
            mode = "plsql" if first in ("DECLARE", "BEGIN") or _stored_subprogram(words) else "sql"
            start, buf, in_quote = no, [], False
        if mode == "plsql":
            if stripped == "/":
                out.append(Chunk("plsql", "\n".join(buf), start))
                mode = ""
            else:
                buf.append(line)
            continue
        # SQL: ends at a ';' outside quotes and comments, or at a '/' line
        if stripped == "/" and not in_quote:
            out.append(Chunk("sql", "\n".join(buf), start))
            mode = ""
            continue
        i, end = 0, -1
        while i < len(line):
            c = line[i]
            if in_quote:
                if c == "'":
                    in_quote = False
            elif c == "'":
                in_quote = True
            elif line.startswith("--", i):
                break
            elif c == ";":
                end = i
                break
            i += 1
        if end >= 0:
            buf.append(line[:end])
            out.append(Chunk("sql", "\n".join(buf), start))
            mode = ""
            if line[end + 1 :].strip() and not line[end + 1 :].strip().startswith("--"):
                raise SqlError(f"one statement per line expected after ';': {line.strip()!r}", SYNTAX, no)
        else:
            buf.append(line)
    if mode:
        raise SqlError(
            f"statement not terminated ({'/' if mode == 'plsql' else ';'} missing): "
            f"{(buf[0] if buf else '').strip()[:60]!r}",
            SYNTAX,
            start,
        )
    return out


# ---------------------------------------------------------------------------------------------
# the compiler


class Compiler(PlsqlBlocks, DdlStatements):
    """Runs a script's statements against a model of its tables and records the timeline."""

    def __init__(self, schema: SqlCheckpoint | None = None, owner: str = "OLR_TEST", strict: bool = False):
        super().__init__(schema, schema_owner(schema) or owner, strict)
        self.charset = schema.nls_charset if schema is not None else "AL32UTF8"
        self.preload: list[dict[str, Any]] = []

    # -- driving
    def run(self, text: str) -> None:
        """Compile a whole script."""
        token = DB_CHARSET.set(CHARSET_IDS.get(self.charset.upper(), 873))
        subquery = SUBQUERY.set(self._query)
        try:
            self._run_chunks(split_script(text))
        finally:
            SUBQUERY.reset(subquery)
            DB_CHARSET.reset(token)

    def _run_chunks(self, chunks: list[Chunk]) -> None:
        self.auto_start = not any("FIXTURE_SCN_START" in c.text for c in chunks if c.kind == "plsql")
        for chunk in chunks:
            if self.ended:
                break
            if self.auto_start and not self.started and not _is_setup(chunk):
                self._start()
            try:
                self._chunk(chunk)
            except SqlError as exc:
                message = exc.message.split(": ", 1)[1] if exc.message.startswith("line ") else exc.message
                raise SqlError(f"{message} (in: {chunk.head})", exc.code, exc.line or chunk.line) from None
        if not self.started:
            self._start()

    def _start(self) -> None:
        self.started = True
        for t in self.tables.values():
            t.supplemental = logged_supplemental(t)
        self.initial = [copy_table(t) for t in self.tables.values()]
        # Rows the setup inserted (committed or not: the start marker's block ends the setup) are
        # in the tables before the redo starts: the scenario's preload, which writes no redo (LOB
        # values in their rows' locators: redogen refuses one that would be stored out of row).
        self.preload = [
            {
                "table": t.partition_of(row, self.line),
                "values": {c.name: scenario_value(c, row.get(c.name)) for c in t.columns},
            }
            for t in self.tables.values()
            for row in t.rows.values()
        ]
        for s in self.sessions.values():
            s.undo.clear()
            s.savepoints.clear()
            s.active = False

    def _chunk(self, chunk: Chunk) -> None:
        self.line = chunk.line
        if chunk.kind == "marker":
            words = chunk.text.split()
            if words[0].startswith("NODE") and words[0][4:].isdigit():
                self.node = int(words[0][4:])
                self.nodes.add(self.node)
            elif words[0] == "MID_SWITCH" and self.started:
                self._event(Event("switch", session=self._session().id))
            elif words[0] == "TAG":
                self._tag(words[1:])
            return
        if chunk.kind == "sqlplus":
            words = chunk.text.upper().split()
            if words[:2] == ["SET", "DEFINE"] and len(words) > 2:
                self.define = words[2] not in ("OFF",)
            elif words[:1] in (["EXIT"], ["QUIT"]):
                self.ended = True
            return
        if self.define and _SUBST_RE.search(_strip_comments(chunk.text)):
            self.skipped.append(chunk.line)  # SQL*Plus asked for a value: the statement did not run
            return
        if chunk.kind == "plsql":
            if "FIXTURE_SCN_START" in chunk.text:
                self._start()
                return
            if "FIXTURE_SCN_END" in chunk.text:
                self.ended = True
                return
            if _stored_subprogram(chunk.text.upper().split()[:5]):
                self._stored(SqlParser(tokenize(chunk.text, chunk.line)))
                return
            if not self.started:  # setup blocks (drop-if-exists, data): a block that fails is left out
                mark = self._mark()
                try:
                    self._block(
                        SqlParser(tokenize(chunk.text, chunk.line)), dict(self.stored_env), dict(self.stored_procs)
                    )
                except SqlError:
                    self.depth = 0
                    self._restore(mark)
                return
        p = SqlParser(tokenize(chunk.text, chunk.line))
        if p.tok.kind == "eof":
            return
        mark = self._mark()
        try:
            if chunk.kind == "plsql":
                self._block(p, dict(self.stored_env), dict(self.stored_procs))
            else:
                self._statement(p, dict(self.stored_env), dict(self.stored_procs))
            if p.tok.kind != "eof" and not p.at(";"):
                p.fail(f"unexpected {p.tok.text!r} after the statement")
        except SqlError as exc:
            if exc.code != RUNTIME or self.strict:
                raise
            # The database refused the statement (or the block): SQL*Plus reports it and goes on.
            # Its changes are undone and its events dropped, as Oracle's statement rollback does.
            self.depth = 0
            self._restore(mark)
            self.warnings.append(
                f"{exc.message} (in: {chunk.head}): the statement is skipped, as the database refused it"
            )

    def _stored(self, p: SqlParser) -> None:
        """``CREATE [OR REPLACE] PROCEDURE | FUNCTION``: a stored subprogram the script's later
        blocks and statements call. Like any DDL it commits the open transaction; its dictionary
        redo is not printed by OLR, so it writes no event."""
        p.expect("CREATE")
        replace = bool(p.accept("OR"))
        if replace:
            p.expect("REPLACE")
        if not p.accept("EDITIONABLE"):
            p.accept("NONEDITIONABLE")
        name = p.peek().text
        if name in self.stored_procs or name in self.stored_env:
            if not replace:
                raise SqlError(f"ORA-00955: name {name} is already used by an existing object", RUNTIME, self.line)
            self.stored_procs.pop(name, None)
            self.stored_env.pop(name, None)
        self._subprogram(p, self.stored_env, self.stored_procs, set())
        if self.started and self._session().active:
            self._commit()

    def _tag(self, words: list[str]) -> None:
        """``-- @TAG word ...``: a word naming a character set is the database's (the script
        was run on such a database); a schema checkpoint's own character set wins. Others
        (``rac``...) say nothing the compiler uses."""
        for word in words:
            cid = CHARSET_IDS.get(word)
            if cid is None or word in ("AL16UTF16",):
                continue
            if not can_encode(cid):
                raise SqlError(f"@TAG {word}: redogen cannot write text in character set {word}", SCHEMA, self.line)
            if self.schema is None:
                self.charset = word
                DB_CHARSET.set(cid)

    def scenario(self, name: str = "TEST") -> Scenario:
        """The compiled scenario."""
        sc = Scenario(
            tables=[t.spec() for t in self.initial],
            timeline=list(self.events),
            name=name,
            nls_charset=self.charset,
            preload=list(self.preload),
        )
        if self.schema is not None:
            sc.name = self.schema.database or name
            sc.database = self.schema.context or sc.database
            sc.con_name = self.schema.con_name
            sc.nls_charset = self.schema.nls_charset
            sc.nls_ncharset = self.schema.nls_ncharset
        if len(self.nodes) > 1 or max(self.nodes, default=1) > 1:
            sc.threads = max(self.nodes)
            if self.schema is not None and self.schema.log_archive_format:
                sc.log_archive_format = self.schema.log_archive_format
        return sc

    def _statement(self, p: SqlParser, env: dict[str, Any], procs: dict[str, Proc]) -> None:
        t = p.tok
        word = t.text if t.kind == "id" else ""
        if word == "INSERT":
            self._insert(p, env)
        elif word == "UPDATE":
            self._update(p, env)
        elif word == "DELETE":
            self._delete(p, env)
        elif word == "MERGE":
            self._merge(p, env)
        elif word in ("SELECT", "WITH"):
            p.i = len(p.toks) - 1  # a query of SQL*Plus's own (a check, a count): it writes no redo
        elif word == "COMMIT":
            p.i += 1
            p.accept("WORK")
            if p.accept("COMMENT"):
                p.i += 1
            if p.accept("WRITE"):
                while p.at("WAIT", "NOWAIT", "IMMEDIATE", "BATCH"):
                    p.i += 1
            self._commit()
        elif word in ("COMMENT", "GRANT", "REVOKE", "ANALYZE", "PURGE", "AUDIT", "NOAUDIT"):
            # DDL on no table's rows (dictionary redo OLR does not print): it commits the open transaction
            p.i = len(p.toks) - 1
            if self.started and self._session().active:
                self._commit()
        elif word == "LOCK":
            p.i = len(p.toks) - 1  # LOCK TABLE: a lock, no row change
        elif word == "ROLLBACK":
            p.i += 1
            p.accept("WORK")
            if p.accept("TO"):
                p.accept("SAVEPOINT")
                self._rollback_to(p.ident(), t.line)
            else:
                self._rollback()
        elif word == "SAVEPOINT":
            p.i += 1
            name = p.ident()
            s = self._session()
            s.savepoints[name] = len(s.undo)
            if self.started:
                self._event(Event("savepoint", session=s.id, name=name.lower()))
        elif word == "CREATE":
            self._create(p, t.line)
        elif word == "ALTER":
            self._alter(p, t.line)
        elif word in ("DROP", "TRUNCATE"):
            self._drop_truncate(p, t.line)
        else:
            p.fail(
                f"statement {word or t.text!r} is not supported (supported: INSERT, UPDATE, DELETE, MERGE, COMMIT, "
                "ROLLBACK, SAVEPOINT, CREATE/ALTER/DROP/TRUNCATE TABLE, PL/SQL blocks)"
            )


def _is_setup(chunk: Chunk) -> bool:
    """Without a start marker, leading CREATE TABLE / INDEX / SEQUENCE, ADD SUPPLEMENTAL LOG,
    COMMENT ON and GRANT statements are the setup."""
    if chunk.kind in ("marker", "sqlplus"):
        return True
    words = chunk.text.upper().split()
    return chunk.kind == "sql" and (
        words[:2] in (["CREATE", "TABLE"], ["CREATE", "SEQUENCE"], ["CREATE", "INDEX"], ["CREATE", "UNIQUE"])
        or (words[:1] == ["ALTER"] and ("SUPPLEMENTAL" in words or words[1:2] == ["SESSION"]))
        or words[:1] in (["COMMENT"], ["GRANT"])
    )


def _stored_subprogram(words: list[str]) -> bool:
    """``CREATE [OR REPLACE] [EDITIONABLE | NONEDITIONABLE] PROCEDURE | FUNCTION ...``."""
    if words[:1] != ["CREATE"]:
        return False
    rest = words[3:] if words[1:3] == ["OR", "REPLACE"] else words[1:]
    if rest[:1] in (["EDITIONABLE"], ["NONEDITIONABLE"]):
        rest = rest[1:]
    return rest[:1] in (["PROCEDURE"], ["FUNCTION"])


def _strip_comments(text: str) -> str:
    return re.sub(r"--[^\n]*", "", text)


def schema_owner(schema: SqlCheckpoint | None) -> str:
    """The owner of the checkpoint's tables (its first user), or ''."""
    if schema is None or not schema.tables:
        return ""
    return next(iter(schema.tables.values())).owner


def compile_sql(
    text: str,
    *,
    schema: str | Path | SqlCheckpoint | None = None,
    name: str = "TEST",
    owner: str = "OLR_TEST",
    strict: bool = False,
    warnings: list[str] | None = None,
) -> Scenario:
    """Compile SQL*Plus script text into a :class:`Scenario` (tables from ``schema`` when given).

    A statement the database would refuse (duplicate key, NULL into NOT NULL, value too large:
    code 30382) is skipped with a message appended to ``warnings``, as SQL*Plus goes on after
    an error; ``strict`` raises it instead.
    """
    ck = load_checkpoint(schema) if isinstance(schema, (str, Path)) else schema
    comp = Compiler(ck, owner, strict)
    comp.run(text)
    if warnings is not None:
        warnings.extend(comp.warnings)
    return comp.scenario(name)


def load_sql(
    path: str | Path,
    schema: str | Path | SqlCheckpoint | None = None,
    *,
    strict: bool = False,
    warnings: list[str] | None = None,
) -> Scenario:
    """Compile a ``.sql`` file (see :func:`compile_sql`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SqlError(f"{p}: cannot be read: {exc.strerror or exc}", SYNTAX) from None
    except UnicodeDecodeError:
        raise SqlError(f"{p}: not UTF-8 text", SYNTAX) from None
    try:
        return compile_sql(text, schema=schema, strict=strict, warnings=warnings)
    except SqlError as exc:
        raise SqlError(f"{p.name}: {exc.message}", exc.code) from None
