"""Compile an Oracle SQL*Plus script into a redogen :class:`~replicator.redogen.scenario.Scenario`.

The scripts behind OpenLogReplicator's reference outputs are run as is by SQL*Plus on a real
database; this compiler replays them into the scenario model, keeping each table's rows so an
``UPDATE``/``DELETE`` finds the rows its ``WHERE`` picks and the new values its ``SET``
expressions compute (``val = val + 1``). The supported subset:

* SQL*Plus: ``SET`` (``SET DEFINE OFF``), ``EXIT``, ``PROMPT``...; PL/SQL blocks end at ``/``.
  With ``DEFINE`` on (the default) a statement holding ``&name`` is skipped, as SQL*Plus did
  not run it unattended.
* Markers: the block printing ``FIXTURE_SCN_START`` ends the setup (tables created before it
  are the scenario's tables; other setup blocks are ignored), ``FIXTURE_SCN_END`` ends the
  replicated part. ``-- @NODE<n>`` runs what follows on RAC instance n (redo thread n);
  ``-- @MID_SWITCH`` is a log switch.
* ``CREATE TABLE`` (types, ``NOT NULL``, ``DEFAULT``, ``PRIMARY KEY``, ``PARTITION BY RANGE|LIST``),
  ``ALTER TABLE ... ADD SUPPLEMENTAL LOG DATA``, and after the start ``ALTER TABLE ADD (col)``,
  ``DROP COLUMN``, ``RENAME COLUMN``, ``SET UNUSED``, ``TRUNCATE``, ``DROP TABLE``, ``CREATE TABLE``.
* ``INSERT ... VALUES``, ``UPDATE ... SET ... [WHERE]``, ``DELETE ... [WHERE]``, ``COMMIT``,
  ``ROLLBACK [TO sp]``, ``SAVEPOINT``.
* PL/SQL: ``DECLARE`` variables and local procedures (``PRAGMA AUTONOMOUS_TRANSACTION`` runs in
  its own session), ``:=``, ``FOR i IN a..b LOOP``, ``WHILE``, ``IF/ELSIF/ELSE``, ``NULL;``,
  ``DBMS_SESSION.SLEEP`` / ``DBMS_LOCK.SLEEP`` (clock), ``DBMS_OUTPUT`` (ignored).
* Expressions: :mod:`replicator.redogen.sqlexpr`.

With a schema checkpoint (``schema=``) the tables are declared as the checkpoint describes them
(:mod:`replicator.redogen.sqlschema`); without one, from the ``CREATE TABLE`` text. Anything
else is a :class:`~replicator.redogen.sqlexpr.SqlError` naming the line and the statement.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, localcontext
from pathlib import Path
from typing import Any, Final

from replicator import events as ev
from replicator.errors import ConfigError
from replicator.redogen.coltypes import ColumnType, parse_type
from replicator.redogen.scenario import ColumnSpec, Event, Scenario, TableSpec
from replicator.redogen.sqlexpr import (
    EXPRESSION, RUNTIME, SCHEMA, SYNTAX, Interval, Node, OraTime, Parser, SqlError, Token, compare, evaluate,
    to_number, to_text, tokenize)
from replicator.redogen.sqlschema import Checkpoint, load_checkpoint

_SQLPLUS: Final = frozenset({"SET", "EXIT", "QUIT", "PROMPT", "SPOOL", "WHENEVER", "COLUMN", "COL", "DEFINE",
                             "UNDEFINE", "SHOW", "REM", "REMARK", "CONNECT", "CONN", "VARIABLE", "VAR", "PAUSE",
                             "TTITLE", "BTITLE", "BREAK", "COMPUTE", "CLEAR", "TIMING", "ACCEPT", "HOST",
                             "DISCONNECT", "DESC", "DESCRIBE"})
_MARKER_RE: Final = re.compile(r"--\s*@(\w+)")
_SUBST_RE: Final = re.compile(r"&&?[A-Za-z_]")
_SLEEPS: Final = frozenset({"DBMS_SESSION.SLEEP", "DBMS_LOCK.SLEEP", "SYS.DBMS_SESSION.SLEEP"})


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
                    out.append(Chunk("marker", m[1].upper(), no))
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
            mode = "plsql" if first in ("DECLARE", "BEGIN") or words[:2] == ["CREATE", "PROCEDURE"] or \
                words[:4] == ["CREATE", "OR", "REPLACE", "PROCEDURE"] else "sql"
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
            if line[end + 1:].strip() and not line[end + 1:].strip().startswith("--"):
                raise SqlError(f"one statement per line expected after ';': {line.strip()!r}", SYNTAX, no)
        else:
            buf.append(line)
    if mode:
        raise SqlError(f"statement not terminated ({'/' if mode == 'plsql' else ';'} missing): "
                       f"{(buf[0] if buf else '').strip()[:60]!r}", SYNTAX, start)
    return out


# ---------------------------------------------------------------------------------------------
# tables

@dataclass(slots=True)
class Column:
    """A column of the compiler's table model."""

    name: str
    type: str
    nullable: bool = True
    default: Node | None = None
    ctype: ColumnType | None = None
    identity: tuple[str, int, int, int] | None = None  # (ALWAYS | BY DEFAULT | ON NULL, start, step, cache)

    def __post_init__(self) -> None:
        if self.ctype is None:
            self.ctype = parse_type(self.type)


@dataclass(slots=True)
class Table:
    """A table: definition plus current rows (key -> column values) in row order."""

    owner: str
    name: str
    columns: list[Column]
    primary_key: list[str] = field(default_factory=list)
    supplemental: str = "none"
    obj: int = 0
    data_obj: int = 0
    ts: int = 6
    partition_kind: str = ""  # RANGE | LIST
    partition_col: str = ""
    partitions: list[tuple[str, list[Any]]] = field(default_factory=list)  # (name, bound values)
    partition_objs: list[int] = field(default_factory=list)
    rows: dict[Any, dict[str, Any]] = field(default_factory=dict)
    _serial: int = 0
    # identity sequence: each instance takes CACHE values at a time (RAC NOORDER), node -> (next, end)
    _seq_next: int = 0
    _seq_cache: dict[int, tuple[int, int]] = field(default_factory=dict)

    def next_identity(self, col: Column, node: int) -> Decimal:
        """The next identity value for a row inserted on instance ``node``."""
        assert col.identity is not None
        _, start, step, cache = col.identity
        nxt, end = self._seq_cache.get(node, (0, 0))
        if nxt >= end:
            nxt = self._seq_next or 0
            end = nxt + max(cache, 1)
            self._seq_next = end
        self._seq_cache[node] = (nxt + 1, end)
        return Decimal(start + nxt * step)

    def column(self, name: str, line: int) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise SqlError(f"ORA-00904: {self.name} has no column {name}", RUNTIME, line)

    def key_of(self, row: dict[str, Any]) -> Any:
        """Primary key values, or a row serial for a table without one."""
        if self.primary_key:
            return tuple(_cmp_key(row.get(k)) for k in self.primary_key)
        self._serial += 1
        return ("#", self._serial)

    def spec(self) -> TableSpec:
        """The scenario table."""
        return TableSpec(owner=self.owner, name=self.name,
                         columns=[ColumnSpec(c.name, c.type, c.nullable) for c in self.columns],
                         primary_key=list(self.primary_key), supplemental=self.supplemental, obj=self.obj,
                         data_obj=self.data_obj if self.data_obj != self.obj else 0, ts=self.ts,
                         partitions=[{"name": p[0], "obj": o} for p, o in
                                     zip(self.partitions, self.partition_objs or [0] * len(self.partitions),
                                         strict=True)])

    def partition_of(self, row: dict[str, Any], line: int) -> str:
        """The partition Oracle puts ``row`` in (``TABLE:PARTITION`` of the event)."""
        if not self.partitions:
            return self.name
        value = row.get(self.partition_col)
        for name, bounds in self.partitions:
            if self.partition_kind == "RANGE":
                bound = bounds[0]
                if bound == "MAXVALUE" or (value is not None and compare("<", value, bound, line)):
                    return f"{self.name}:{name}"
            elif "DEFAULT" in bounds or any(compare("=", value, b, line) for b in bounds) or \
                    (value is None and None in bounds):
                return f"{self.name}:{name}"
        raise SqlError(f"ORA-14400: no partition of {self.name} takes {self.partition_col} = {to_text(value)!r}",
                       RUNTIME, line)


def _cmp_key(v: Any) -> Any:
    if isinstance(v, Decimal):
        return ("n", v.normalize())
    if isinstance(v, float):
        return ("n", Decimal(repr(v)).normalize())
    if isinstance(v, OraTime):
        return ("t", v.key())
    return (type(v).__name__, v)


# ---------------------------------------------------------------------------------------------
# values into columns

def coerce(col: Column, value: Any, line: int) -> Any:
    """A value stored into ``col``: converted, rounded to the column's scale, length-checked."""
    ct = col.ctype
    assert ct is not None
    if value is None or value == "" or value == b"":
        return None
    code = ct.type_code
    if code == ev.TYPE_NUMBER:
        n = to_number(value.text(0) if isinstance(value, OraTime) else value, line)
        assert n is not None
        if ct.scale >= 0 and ct.scale != -127 and (ct.precision != -1 or ct.scale == 0):
            with localcontext() as ctx:
                ctx.prec = 80
                n = n.quantize(Decimal(1).scaleb(-ct.scale), rounding=ROUND_HALF_UP)
            if ct.precision > 0 and n != 0 and n.adjusted() + 1 > ct.precision - ct.scale:
                raise SqlError(f"ORA-01438: {to_text(n)} is larger than {col.name} {col.type} allows", RUNTIME,
                               line)
        return n
    if code in (ev.TYPE_BINARY_FLOAT, ev.TYPE_BINARY_DOUBLE):
        f = value if isinstance(value, float) else float(to_number(value, line) or 0)
        return struct.unpack("<f", struct.pack("<f", f))[0] if code == ev.TYPE_BINARY_FLOAT else f
    if code in (ev.TYPE_VARCHAR2, ev.TYPE_CHAR, ev.TYPE_CLOB):
        text = to_text(value)
        if not text:
            return None
        if code != ev.TYPE_CLOB:
            size = len(text.encode("utf-16-be")) if ct.charset_form == 2 else len(text.encode("utf-8"))
            if size > ct.length:
                raise SqlError(f"ORA-12899: value too large for column {col.name} (actual: {size}, maximum: "
                               f"{ct.length})", RUNTIME, line)
            if ct.char_length and len(text) < ct.char_length:
                text = text.ljust(ct.char_length)
        return text
    if code in (ev.TYPE_RAW, ev.TYPE_BLOB):
        raw = value if isinstance(value, bytes) else bytes.fromhex(to_text(value) or "")
        if code == ev.TYPE_RAW and len(raw) > ct.length:
            raise SqlError(f"ORA-12899: value too large for column {col.name} (actual: {len(raw)}, maximum: "
                           f"{ct.length})", RUNTIME, line)
        return raw or None
    if code == ev.TYPE_BOOLEAN:
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return value.strip().upper() in ("TRUE", "T", "YES", "Y", "1", "ON")
        return to_number(value, line) != 0
    if code == ev.TYPE_DATE:
        t = _as_time(value, line)
        return OraTime(t.wall, 0, None, "DATE")
    if code in (ev.TYPE_TIMESTAMP, ev.TYPE_TIMESTAMP_TZ, ev.TYPE_TIMESTAMP_LTZ):
        t = _as_time(value, line)
        digits = max(ct.scale, 0)
        step = 10 ** (9 - digits)
        nanos = (t.nanos + step // 2) // step * step if digits < 9 else t.nanos  # Oracle rounds
        wall = t.wall
        if nanos >= 10**9:
            from datetime import timedelta

            wall, nanos = wall + timedelta(seconds=1), nanos - 10**9
        kind = "TIMESTAMP" if code == ev.TYPE_TIMESTAMP else "TIMESTAMP_TZ"
        tz = None if code == ev.TYPE_TIMESTAMP else (t.tz if t.tz is not None else 0)
        return OraTime(wall, nanos, tz, kind)
    if code in (ev.TYPE_INTERVAL_YM, ev.TYPE_INTERVAL_DS):
        if not isinstance(value, Interval):
            raise SqlError(f"{col.name}: an INTERVAL value is needed, got {to_text(value)!r}", RUNTIME, line)
        return value
    raise SqlError(f"{col.name}: values of type {col.type} are not supported", EXPRESSION, line)


def _as_time(value: Any, line: int) -> OraTime:
    if isinstance(value, OraTime):
        return value
    if isinstance(value, str):
        from replicator.redogen.sqlexpr import parse_datetime

        return parse_datetime(value, None, "TIMESTAMP", line)
    raise SqlError(f"cannot convert {to_text(value)!r} to a date", RUNTIME, line)


def scenario_value(col: Column, v: Any) -> Any:
    """A stored value in the form scenario files use (what :mod:`coltypes` encodes)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, Decimal):
        if v == v.to_integral_value() and abs(v) < 2**63:
            return int(v)
        return format(v, "f")
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bytes):
        return v.hex().upper()
    if isinstance(v, OraTime):
        return v.text(0 if v.kind == "DATE" else 9)
    if isinstance(v, Interval):
        return v.text()
    raise SqlError(f"{col.name}: cannot write {v!r}", EXPRESSION)


# ---------------------------------------------------------------------------------------------
# the compiler

@dataclass(slots=True)
class _Session:
    id: int
    thread: int
    undo: list[Any] = field(default_factory=list)  # (table, key, old row | None, new key | None)
    savepoints: dict[str, int] = field(default_factory=dict)
    active: bool = False  # a transaction is open (row changes since the last commit/rollback)


@dataclass(slots=True)
class _Proc:
    params: list[str]
    body: list[Any]
    autonomous: bool
    decls: list[tuple[str, Node | None]]


class _Return(Exception):
    pass


class Compiler:
    """Runs a script's statements against a model of its tables and records the timeline."""

    def __init__(self, schema: Checkpoint | None = None, owner: str = "OLR_TEST", strict: bool = False):
        self.schema = schema
        self.strict = strict  # raise on a statement the database would refuse, instead of skipping it
        self.warnings: list[str] = []
        self.owner = schema_owner(schema) or owner
        self.tables: dict[str, Table] = {}
        self.initial: list[Table] = []
        self.events: list[Event] = []
        self.sessions: dict[tuple[int, int], _Session] = {}
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

    # -- driving
    def run(self, text: str) -> None:
        """Compile a whole script."""
        chunks = split_script(text)
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
            t.supplemental = _logged_supplemental(t)
        self.initial = [_copy_table(t) for t in self.tables.values()]

    def _chunk(self, chunk: Chunk) -> None:
        self.line = chunk.line
        if chunk.kind == "marker":
            if chunk.text.startswith("NODE") and chunk.text[4:].isdigit():
                self.node = int(chunk.text[4:])
                self.nodes.add(self.node)
            elif chunk.text == "MID_SWITCH" and self.started:
                self._event(Event("switch", session=self._session().id))
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
            if not self.started:
                return  # setup blocks (drop-if-exists...)
        p = Parser(tokenize(chunk.text, chunk.line))
        if p.tok.kind == "eof":
            return
        mark = (len(self.events), {k: (len(s.undo), s.active) for k, s in self.sessions.items()}, self.pending_wait)
        try:
            if chunk.kind == "plsql":
                self._block(p, {}, {})
            else:
                self._statement(p, {}, {})
            if p.tok.kind != "eof" and not p.at(";"):
                p.fail(f"unexpected {p.tok.text!r} after the statement")
        except SqlError as exc:
            if exc.code != RUNTIME or self.strict:
                raise
            # The database refused the statement (or the block): SQL*Plus reports it and goes on.
            # Its changes are undone and its events dropped, as Oracle's statement rollback does.
            self.depth = 0
            del self.events[mark[0]:]
            for key, s in self.sessions.items():
                undo_len, active = mark[1].get(key, (0, False))
                self._undo(s, undo_len)
                s.active = active
            self.pending_wait = mark[2]
            self.warnings.append(f"{exc.message} (in: {chunk.head}): the statement is skipped, as the database "
                                 "refused it")

    def scenario(self, name: str = "TEST") -> Scenario:
        """The compiled scenario."""
        sc = Scenario(tables=[t.spec() for t in self.initial], timeline=list(self.events), name=name)
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

    # -- sessions and events
    def _session(self) -> _Session:
        key = (self.node, self.depth)
        s = self.sessions.get(key)
        if s is None:
            s = self.sessions[key] = _Session(len(self.sessions) + 1, self.node)
        return s

    def _event(self, e: Event) -> None:
        if not self.started:
            raise SqlError(f"{e.op} before the start marker (FIXTURE_SCN_START) is not supported: a scenario "
                           "starts with empty tables", SYNTAX, self.line)
        if self.nodes:
            e.thread = self.node
        if self.pending_wait:
            e.wait, self.pending_wait = self.pending_wait, 0.0
        self.events.append(e)

    def _table(self, name: str, line: int) -> Table:
        t = self.tables.get(name)
        if t is None:
            raise SqlError(f"ORA-00942: table {name} does not exist", RUNTIME, line)
        return t

    # -- statements
    def _statement(self, p: Parser, env: dict[str, Any], procs: dict[str, _Proc]) -> None:
        t = p.tok
        word = t.text if t.kind == "id" else ""
        if word == "INSERT":
            self._insert(p, env)
        elif word == "UPDATE":
            self._update(p, env)
        elif word == "DELETE":
            self._delete(p, env)
        elif word == "COMMIT":
            p.i += 1
            p.accept("WORK")
            self._commit()
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
            p.fail(f"statement {word or t.text!r} is not supported (supported: INSERT, UPDATE, DELETE, COMMIT, "
                   "ROLLBACK, SAVEPOINT, CREATE/ALTER/DROP/TRUNCATE TABLE, PL/SQL blocks)")

    def _lookup(self, env: dict[str, Any], row: dict[str, Any] | None = None, table: Table | None = None):
        def lookup(name: str, line: int) -> Any:
            base = name.rsplit(".", 1)[-1] if "." in name else name
            if row is not None and table is not None:
                if base in row or any(c.name == base for c in table.columns):
                    return row.get(base)
            if name in env:
                return env[name]
            if name in ("SYSDATE", "SYSTIMESTAMP"):
                from replicator.redogen.sqlexpr import call

                return call(name, [], line)
            raise SqlError(f"ORA-00904: {name}: invalid identifier", RUNTIME, line)
        return lookup

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

    def _where(self, p: Parser) -> Node | None:
        return p.expr() if p.accept("WHERE") else None

    def _matches(self, table: Table, cond: Node | None, env: dict[str, Any]) -> list[tuple[Any, dict[str, Any]]]:
        if cond is None:
            return list(table.rows.items())
        return [(k, r) for k, r in list(table.rows.items()) if evaluate(cond, self._lookup(env, r, table)) is True]

    def _key_values(self, table: Table, row: dict[str, Any]) -> dict[str, Any]:
        names = table.primary_key or [c.name for c in table.columns]
        return {n: scenario_value(table.column(n, 0), row[n]) for n in names}

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
    def _undo(s: _Session, mark: int) -> None:
        while len(s.undo) > mark:
            table, key, old, new_key = s.undo.pop()
            if old is None:
                table.rows.pop(key, None)
            else:
                if new_key is not None and new_key != key:
                    table.rows.pop(new_key, None)
                table.rows[key] = old

    # -- DDL
    def _ddl_event(self, e: Event) -> None:
        s = self._session()
        if s.active:  # DDL commits the open transaction first
            self._commit()
        e.session = s.id
        self._event(e)

    def _create(self, p: Parser, line: int) -> None:
        p.expect("CREATE")
        if p.accept("GLOBAL") or p.at("INDEX", "UNIQUE", "SEQUENCE", "VIEW", "OR", "SYNONYM", "TYPE"):
            p.fail(f"CREATE {p.tok.text} is not supported (only CREATE TABLE)")
        p.expect("TABLE")
        name = p.ident()
        if name in self.tables:
            raise SqlError(f"ORA-00955: name {name} is already used by an existing object", RUNTIME, line)
        p.expect("(")
        columns: list[Column] = []
        pk: list[str] = []
        while True:
            if p.at("CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"):
                if p.accept("CONSTRAINT"):
                    p.ident()
                if p.accept("PRIMARY"):
                    p.expect("KEY")
                    pk = self._name_list(p)
                else:
                    p.fail(f"table constraint {p.tok.text} is not supported (only PRIMARY KEY)")
            else:
                col, is_pk = self._column_def(p)
                columns.append(col)
                if is_pk:
                    pk = [col.name]
            if not p.accept(","):
                break
        p.expect(")")
        table = Table(self.owner, name, columns, pk)
        if p.accept("PARTITION"):
            self._partitioning(p, table)
        if p.tok.kind != "eof":
            p.fail(f"CREATE TABLE clause {p.tok.text!r} is not supported")
        for c in columns:
            if c.name in pk:
                c.nullable = False
        if not self.started:
            table = self._from_schema(table, line)
            self.tables[name] = table
            return
        table.supplemental = _logged_supplemental(table)
        self.tables[name] = table
        self._ddl_event(Event("create_table", definition=_definition(table)))

    def _from_schema(self, table: Table, line: int) -> Table:
        """The checkpoint's definition of a table the setup creates (its SQL when there is none)."""
        if self.schema is None:
            return table
        ct = self.schema.tables.get(table.name)
        if ct is None:
            raise SqlError(f"table {table.name} is not in the schema checkpoint", SCHEMA, line)
        cols = [Column(n, t, nullable) for n, t, nullable in ct.columns]
        declared = {c.name: c for c in table.columns}
        for c in cols:
            if c.name in declared:
                c.default, c.identity = declared[c.name].default, declared[c.name].identity
        if table.partitions and len(ct.partition_objs) != len(table.partitions):
            raise SqlError(f"{table.name}: {len(table.partitions)} partitions in the script, "
                           f"{len(ct.partition_objs)} in the schema checkpoint", SCHEMA, line)
        out = Table(ct.owner, ct.name, cols, list(ct.primary_key), ct.supplemental, ct.obj, ct.data_obj, ct.ts,
                    table.partition_kind, table.partition_col, table.partitions, list(ct.partition_objs))
        out.supplemental = _logged_supplemental(out)
        return out

    def _column_def(self, p: Parser) -> tuple[Column, bool]:
        name = p.ident()
        type_toks: list[str] = []
        depth = 0
        while p.tok.kind != "eof":
            if depth == 0 and (p.at(",", ")") or p.at("NOT", "NULL", "PRIMARY", "DEFAULT", "CONSTRAINT", "UNIQUE",
                                                       "CHECK", "REFERENCES", "GENERATED")):
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
            col = Column(name, text)
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
    def _identity(p: Parser) -> tuple[str, int, int, int]:
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

    @staticmethod
    def _name_list(p: Parser) -> list[str]:
        p.expect("(")
        out = [p.ident()]
        while p.accept(","):
            out.append(p.ident())
        p.expect(")")
        return out

    def _partitioning(self, p: Parser, table: Table) -> None:
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

    def _alter(self, p: Parser, line: int) -> None:
        p.expect("ALTER")
        if not p.accept("TABLE"):
            p.fail(f"ALTER {p.tok.text} is not supported (only ALTER TABLE)")
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
                    if "ALL" in kinds and table.supplemental != "all" and not any(
                            c.ctype is not None and c.ctype.type_code == ev.TYPE_BOOLEAN for c in table.columns):
                        p.fail("ADD SUPPLEMENTAL LOG DATA after the start marker is not supported (unless the "
                               "table already logs all columns: then Oracle refuses it with ORA-32588)")
                    return
                if self.schema is None:
                    level = "all" if "ALL" in kinds else "pk" if "PRIMARY" in kinds else table.supplemental
                    if level == "all" or table.supplemental != "all":
                        table.supplemental = level
                return
            cols: list[Column] = []
            if p.accept("("):
                while True:
                    cols.append(self._column_def(p)[0])
                    if not p.accept(","):
                        break
                p.expect(")")
            else:
                if p.at("CONSTRAINT", "PRIMARY"):
                    p.fail("ALTER TABLE ADD CONSTRAINT is not supported")
                cols.append(self._column_def(p)[0])
            for col in cols:
                if any(c.name == col.name for c in table.columns):
                    if not self.started:
                        raise SqlError(f"ORA-01430: column {col.name} already exists in {table.name}", RUNTIME, line)
                    # the checkpoint was taken after the DDL: the column starts out of the table
                    for t in (table, *[i for i in self.initial if i.name == table.name]):
                        t.columns = [c for c in t.columns if c.name != col.name]
                table.columns.append(col)
                if self.started:
                    self._ddl_event(Event("add_column", table=table.name,
                                          column=f"{col.name} {col.type}{'' if col.nullable else ' NOT NULL'}"))
            return
        if not self.started:
            p.fail("only ADD SUPPLEMENTAL LOG DATA and ADD column are supported before the start marker")
        if p.accept("DROP"):
            if p.accept("COLUMN"):
                names = [p.ident()]
            elif p.at("("):
                names = self._name_list(p)
            else:
                p.fail(f"ALTER TABLE DROP {p.tok.text} is not supported (DROP COLUMN)")
            for n in names:
                self._drop_column(table, n, "drop_column", line)
        elif p.accept("SET"):
            p.expect("UNUSED")
            names = self._name_list(p) if p.at("(") else [p.expect("COLUMN") and p.ident()]
            for n in names:
                self._drop_column(table, n, "set_unused_column", line)
        elif p.accept("RENAME"):
            p.expect("COLUMN")
            old = p.ident()
            p.expect("TO")
            new = p.ident()
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
            for name, text, nullable in specs:
                col = table.column(name, line)
                new_type = text or col.type
                try:
                    ct = parse_type(new_type)
                except ConfigError as exc:
                    raise SqlError(f"column {name}: {exc.message}", SYNTAX, line) from None
                if ct.type_code != col.ctype.type_code:  # type: ignore[union-attr]
                    p.fail(f"MODIFY {name} {col.type} -> {new_type}: only a change within the same type is "
                           "supported")
                probe = Column(name, new_type, col.nullable if nullable is None else nullable, ctype=ct)
                for row in table.rows.values():
                    if row.get(name) is None and not probe.nullable:
                        raise SqlError(f"ORA-02296: cannot enable NOT NULL on {name}: null values found", RUNTIME,
                                       line)
                    try:
                        fits = coerce(probe, row.get(name), line) == row.get(name)
                    except SqlError:
                        fits = False
                    if not fits:
                        raise SqlError(f"ORA-01441: cannot decrease column length of {name}: some value is too "
                                       "big", RUNTIME, line)
                col.type, col.ctype, col.nullable = new_type, ct, probe.nullable
                self._ddl_event(Event("modify_column", table=table.name,
                                      column=f"{name} {new_type}{'' if col.nullable else ' NOT NULL'}"))
        else:
            p.fail(f"ALTER TABLE {p.tok.text} is not supported (ADD, DROP COLUMN, SET UNUSED, RENAME COLUMN, MODIFY)")

    def _drop_column(self, table: Table, name: str, op: str, line: int) -> None:
        table.column(name, line)
        if name in table.primary_key:
            raise SqlError(f"ORA-12992: cannot drop primary key column {name}", RUNTIME, line)
        table.columns = [c for c in table.columns if c.name != name]
        for row in table.rows.values():
            row.pop(name, None)
        self._ddl_event(Event(op, table=table.name, column=name))

    def _drop_truncate(self, p: Parser, line: int) -> None:
        word = p.ident()
        p.expect("TABLE")
        table = self._table(p.ident(), line)
        p.accept("PURGE")
        p.accept("CASCADE")
        if not self.started:
            p.fail(f"{word} TABLE before the start marker is not supported")
        if word == "DROP":
            del self.tables[table.name]
            self._ddl_event(Event("drop_table", table=table.name))
        else:
            table.rows.clear()
            self._ddl_event(Event("truncate", table=table.name))

    # -- PL/SQL
    def _block(self, p: Parser, env: dict[str, Any], procs: dict[str, _Proc]) -> None:
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

    def _declarations(self, p: Parser, env: dict[str, Any], procs: dict[str, _Proc]) -> None:
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
                procs[name] = _Proc(params, body, autonomous, decls)
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

    def _run(self, body: list[Any], env: dict[str, Any], procs: dict[str, _Proc]) -> None:
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
                raise _Return()
            elif kind == "call":
                self._call(st[1], st[2], env, procs, st[3])

    def _call(self, name: str, args: list[Node], env: dict[str, Any], procs: dict[str, _Proc], line: int) -> None:
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
        except _Return:
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


def _logged_supplemental(t: Table) -> str:
    """The supplemental logging the table's redo carries. The real Oracle 23ai redo of a table
    with BOOLEAN columns (reference ``boolean-type``) held no supplemental columns although its
    checkpoint lists the ALL COLUMNS group, and OLR's output follows the redo."""
    if any(c.ctype is not None and c.ctype.type_code == ev.TYPE_BOOLEAN for c in t.columns):
        return "none"
    return t.supplemental


def _is_setup(chunk: Chunk) -> bool:
    """Without a start marker, leading CREATE TABLE / ADD SUPPLEMENTAL LOG statements are the setup."""
    if chunk.kind in ("marker", "sqlplus"):
        return True
    words = chunk.text.upper().split()
    return chunk.kind == "sql" and (words[:2] == ["CREATE", "TABLE"] or (
        words[:1] == ["ALTER"] and "SUPPLEMENTAL" in words))


def _strip_comments(text: str) -> str:
    return re.sub(r"--[^\n]*", "", text)


def _copy_table(t: Table) -> Table:
    return Table(t.owner, t.name, [Column(c.name, c.type, c.nullable, c.default, c.ctype, c.identity)
                                   for c in t.columns],
                 list(t.primary_key), t.supplemental, t.obj, t.data_obj, t.ts, t.partition_kind, t.partition_col,
                 list(t.partitions), list(t.partition_objs))


def _definition(t: Table) -> dict[str, Any]:
    spec = t.spec()
    return {"owner": spec.owner, "name": spec.name, "primary-key": spec.primary_key,
            "supplemental": spec.supplemental,
            "columns": [f"{c.name} {c.type}{'' if c.nullable else ' NOT NULL'}" for c in spec.columns],
            "partitions": spec.partitions}


def schema_owner(schema: Checkpoint | None) -> str:
    """The owner of the checkpoint's tables (its first user), or ''."""
    if schema is None or not schema.tables:
        return ""
    return next(iter(schema.tables.values())).owner


def compile_sql(text: str, *, schema: str | Path | Checkpoint | None = None, name: str = "TEST",
                owner: str = "OLR_TEST", strict: bool = False, warnings: list[str] | None = None) -> Scenario:
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


def load_sql(path: str | Path, schema: str | Path | Checkpoint | None = None, *, strict: bool = False,
             warnings: list[str] | None = None) -> Scenario:
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
