"""Tokens, expressions and values of the SQL dialect redogen's SQL scripts use.

:mod:`replicator.redogen.sqlscript` compiles an Oracle SQL*Plus script into a scenario; this
module holds its lexer (:func:`tokenize`), the expression parser (:class:`SqlParser`) and the
evaluator (:func:`evaluate`). Values are plain Python: ``None`` (NULL), ``str``, ``Decimal``
(NUMBER), ``float`` (BINARY_FLOAT/DOUBLE literals), ``bytes`` (RAW), ``bool`` (BOOLEAN),
:class:`OraTime` (DATE/TIMESTAMP[ WITH TIME ZONE]) and :class:`Interval`. As in Oracle, ``''``
is NULL, ``||`` skips NULLs, and a comparison with NULL is unknown (``None``).

Anything outside the subset raises :class:`SqlError` (code 30381) naming the line.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import Any, Final, NamedTuple, NoReturn, TypeVar

from replicator.errors import ConfigError
from replicator.redogen.encode import convert_text, decode_text

# Error codes of the SQL script compiler (block 3038x).
SYNTAX: Final = 30380  # statement outside the supported subset, or malformed
EXPRESSION: Final = 30381  # expression, function or value outside the subset
RUNTIME: Final = 30382  # no such table/column, key violation, value does not fit
SCHEMA: Final = 30383  # schema checkpoint missing or without the script's table

# The database character set (Oracle id) of the script being compiled: text values are held as
# the characters the database stores (:func:`replicator.redogen.encode.decode_text`), so bytes
# that are no character of the set (``UTL_RAW.CAST_TO_VARCHAR2`` of any bytes) pass through.
DB_CHARSET: ContextVar[int] = ContextVar("DB_CHARSET", default=873)
# The compiler's query parser (:meth:`replicator.redogen.sqlquery.Queries._query`): a ``(SELECT ...)``
# inside an expression becomes a subquery node, which the lookup's ``query(q)`` runs.
SUBQUERY: ContextVar[Callable[[SqlParser], Any] | None] = ContextVar("SUBQUERY", default=None)


class SqlError(ConfigError):
    """An error in a SQL script, located at a line."""

    def __init__(self, message: str, code: int = SYNTAX, line: int = 0):
        super().__init__(f"line {line}: {message}" if line else message, code)
        self.line = line


class Token(NamedTuple):
    """One lexical token: kind is id, qid (quoted identifier), num, str, nstr, op or eof."""

    kind: str
    text: str
    line: int


_TOKEN_RE: Final = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>--[^\n]*|/\*.*?\*/)
  | (?P<nstr>[nN]'(?:[^']|'')*')
  | (?P<str>'(?:[^']|'')*')
  | (?P<qid>"[^"]+")
  | (?P<size>\d+[KkMmGgTt](?![A-Za-z0-9_$#]))
  | (?P<num>(?:\d+(?:\.(?!\.)\d*)?|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?(?![A-Za-z_]))
  | (?P<id>[A-Za-z][A-Za-z0-9_$#]*)
  | (?P<op>\|\||:=|\.\.|<=|>=|<>|!=|\^=|=>|[-+*/(),;.=<>%])
""",
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str, first_line: int = 1) -> list[Token]:
    """Split SQL/PL/SQL text into tokens (comments dropped); identifiers upper-cased."""
    out: list[Token] = []
    pos, line = 0, first_line
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            raise SqlError(f"unexpected character {text[pos]!r}", SYNTAX, line)
        kind = m.lastgroup or ""
        raw = m.group()
        if kind == "str":
            out.append(Token("str", raw[1:-1].replace("''", "'"), line))
        elif kind == "nstr":
            out.append(Token("nstr", raw[2:-1].replace("''", "'"), line))
        elif kind == "qid":
            out.append(Token("id", raw[1:-1], line))
        elif kind == "id":
            out.append(Token("id", raw.upper(), line))
        elif kind in ("num", "op"):
            out.append(Token(kind, raw, line))
        elif kind == "size":  # 64K, 1M: sizes of storage clauses, which the compiler skips
            out.append(Token("num", raw.upper(), line))
        line += raw.count("\n")
        pos = m.end()
    out.append(Token("eof", "", line))
    return out


# ---------------------------------------------------------------------------------------------
# values


@dataclass(frozen=True, slots=True)
class OraTime:
    """A DATE, TIMESTAMP or TIMESTAMP WITH TIME ZONE value: wall clock, nanoseconds, offset."""

    wall: datetime  # microseconds unused: the fraction is in ``nanos``
    nanos: int = 0
    tz: int | None = None  # minutes east of UTC (WITH TIME ZONE only)
    kind: str = "DATE"  # DATE | TIMESTAMP | TIMESTAMP_TZ

    def text(self, digits: int = 9) -> str:
        """``YYYY-MM-DD HH:MI:SS[.fraction][+HH:MM]``, the form scenario values use."""
        out = self.wall.strftime("%Y-%m-%d %H:%M:%S")
        if digits > 0 and self.kind != "DATE":
            out += "." + f"{self.nanos:09d}"[:digits]
        if self.tz is not None:
            sign = "-" if self.tz < 0 else "+"
            out += f"{sign}{abs(self.tz) // 60:02d}:{abs(self.tz) % 60:02d}"
        return out

    def key(self) -> tuple[datetime, int]:
        """Comparable instant (UTC when an offset is known)."""
        wall = self.wall - timedelta(minutes=self.tz) if self.tz is not None else self.wall
        return wall, self.nanos


@dataclass(frozen=True, slots=True)
class Interval:
    """INTERVAL YEAR TO MONTH (``months``) or DAY TO SECOND (``nanos``)."""

    months: int | None = None
    nanos: int | None = None

    def text(self) -> str:
        """The scenario form: ``[-]Y-M`` or ``[-]D HH:MI:SS.fffffffff``."""
        if self.months is not None:
            sign = "-" if self.months < 0 else ""
            return f"{sign}{abs(self.months) // 12}-{abs(self.months) % 12}"
        n = self.nanos or 0
        sign = "-" if n < 0 else ""
        n = abs(n)
        secs, frac = divmod(n, 10**9)
        days, secs = divmod(secs, 86400)
        return f"{sign}{days} {secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{frac:09d}"


@dataclass(frozen=True, slots=True)
class EmptyLob:
    """``EMPTY_CLOB()`` / ``EMPTY_BLOB()``: a LOB of length 0, which is not NULL."""

    blob: bool = False

    @property
    def marker(self) -> str:
        """How scenario files spell it (:data:`replicator.redogen.lobs.EMPTY_MARKERS`)."""
        return "EMPTY_BLOB()" if self.blob else "EMPTY_CLOB()"


def number_text(d: Decimal) -> str:
    """TO_CHAR of a NUMBER as Oracle writes it by default (``.5``, ``-1``, ``100``)."""
    if d == 0:
        return "0"
    text = format(d.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text.startswith("0."):
        text = text[1:]
    elif text.startswith("-0."):
        text = "-" + text[2:]
    return text


def to_text(v: Any) -> str | None:
    """Implicit conversion to VARCHAR2 (NULL stays NULL)."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, Decimal):
        return number_text(v)
    if isinstance(v, float):
        return repr(v).upper()
    if isinstance(v, bytes):
        return v.hex().upper()
    if isinstance(v, OraTime):
        return v.text(6 if v.kind != "DATE" else 0)
    if isinstance(v, Interval):
        return v.text()
    if isinstance(v, EmptyLob):
        return ""
    raise SqlError(f"cannot convert {v!r} to text", EXPRESSION)


def to_number(v: Any, line: int = 0) -> Decimal | None:
    """Implicit conversion to NUMBER."""
    if v is None:
        return None
    if isinstance(v, bool):
        return Decimal(int(v))
    if isinstance(v, Decimal):
        return v
    if isinstance(v, (int, float)):
        return Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
    if isinstance(v, str):
        try:
            return Decimal(v.strip())
        except InvalidOperation:
            raise SqlError(f"ORA-01722: invalid number {v!r}", RUNTIME, line) from None
    raise SqlError(f"cannot convert {to_text(v)!r} to a number", RUNTIME, line)


# ---------------------------------------------------------------------------------------------
# expressions: tuples (tag, ...) built by SqlParser, read by evaluate()

Node = tuple
NOT_FOUND: Final = object()  # a lookup's ``element(name, args, line)`` found no collection of that name


class SqlParser:
    """Recursive-descent parser over a token list; shared with the statement parser."""

    def __init__(self, tokens: list[Token]):
        self.toks = tokens
        self.i = 0

    # -- token helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, n: int = 1) -> Token:
        return self.toks[min(self.i + n, len(self.toks) - 1)]

    def at(self, *words: str) -> bool:
        """The current token is one of these keywords/operators."""
        t = self.tok
        return t.kind in ("id", "op") and t.text in words

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.i += 1
            return True
        return False

    def expect(self, word: str) -> Token:
        if not self.at(word):
            self.fail(f"expected {word!r}, found {self.tok.text or 'end of statement'!r}")
        t = self.tok
        self.i += 1
        return t

    def ident(self) -> str:
        t = self.tok
        if t.kind != "id":
            self.fail(f"expected a name, found {t.text or 'end of statement'!r}")
        self.i += 1
        return t.text

    def fail(self, message: str, code: int = SYNTAX) -> NoReturn:
        raise SqlError(message, code, self.tok.line)

    # -- expressions
    def expr(self) -> Node:
        """A full expression (conditions included)."""
        return self._or()

    def _or(self) -> Node:
        node = self._and()
        while self.accept("OR"):
            node = ("or", node, self._and())
        return node

    def _and(self) -> Node:
        node = self._not()
        while self.accept("AND"):
            node = ("and", node, self._not())
        return node

    def _not(self) -> Node:
        if self.accept("NOT"):
            return ("not", self._not())
        return self._predicate()

    def _predicate(self) -> Node:
        left = self._concat()
        line = self.tok.line
        if self.at("=", "<>", "!=", "^=", "<", ">", "<=", ">="):
            op = self.tok.text
            self.i += 1
            return ("cmp", "<>" if op in ("!=", "^=") else op, left, self._concat(), line)
        negated = self.accept("NOT")
        if self.accept("BETWEEN"):
            lo = self._concat()
            self.expect("AND")
            return ("between", left, lo, self._concat(), negated, line)
        if self.accept("IN"):
            self.expect("(")
            if self.at("SELECT", "WITH"):
                return ("in_query", left, self._subquery(), negated, line)
            items = [self._concat()]
            while self.accept(","):
                items.append(self._concat())
            self.expect(")")
            return ("in", left, items, negated, line)
        if self.accept("LIKE"):
            return ("like", left, self._concat(), negated, line)
        if negated:
            self.fail("expected BETWEEN, IN or LIKE after NOT")
        if self.accept("IS"):
            neg = self.accept("NOT")
            self.expect("NULL")
            return ("isnull", left, neg)
        return left

    def _concat(self) -> Node:
        node = self._term()
        while self.at("||", "+", "-"):
            op = self.tok.text
            line = self.tok.line
            self.i += 1
            node = ("bin", op, node, self._term(), line)
        return node

    def _term(self) -> Node:
        node = self._unary()
        while self.at("*", "/"):
            op = self.tok.text
            line = self.tok.line
            self.i += 1
            node = ("bin", op, node, self._unary(), line)
        return node

    def _unary(self) -> Node:
        if self.accept("-"):
            return ("neg", self._unary(), self.tok.line)
        if self.accept("+"):
            return self._unary()
        return self._primary()

    def _primary(self) -> Node:
        t = self.tok
        if t.kind == "num":
            self.i += 1
            return ("lit", _number_literal(t))
        if t.kind in ("str", "nstr"):
            self.i += 1
            return ("lit", t.text or None)
        if self.accept("("):
            if self.at("SELECT", "WITH"):
                return ("scalar", self._subquery(), t.line)
            node = self.expr()
            self.expect(")")
            return node
        if t.kind != "id":
            self.fail(f"unexpected {t.text or 'end of statement'!r} in an expression")
        word = t.text
        if word == "NULL":
            self.i += 1
            return ("lit", None)
        if word in ("TRUE", "FALSE"):
            self.i += 1
            return ("lit", word == "TRUE")
        if word in ("DATE", "TIMESTAMP") and self.peek().kind == "str":
            self.i += 2
            return ("lit", _datetime_literal(word, self.toks[self.i - 1]))
        if word == "INTERVAL" and self.peek().kind == "str":
            return ("lit", self._interval())
        if word == "CASE":
            return self._case()
        if word == "EXISTS" and self.peek().text == "(":
            self.i += 2
            return ("exists", self._subquery(), t.line)
        if self.peek().text == "%" and self.peek(2).text in ("FOUND", "NOTFOUND", "ROWCOUNT", "ISOPEN"):
            self.i += 3  # SQL%ROWCOUNT, c%NOTFOUND...: a cursor attribute
            return ("name", f"{word}%{self.toks[self.i - 1].text}", t.line)
        self.i += 1
        name = word
        while self.at(".") and self.peek().kind == "id":
            self.i += 1
            name += "." + self.ident()
        if self.accept("("):
            args: list[Node] = []
            if name == "COUNT" and self.accept("*"):
                args.append(("lit", "*"))
            elif not self.at(")"):
                args.append(self.expr())
                while self.accept(","):
                    args.append(self.expr())
            self.expect(")")
            node = ("call", name, args, t.line)
            while self.at(".") and self.peek().kind == "id":  # v(i).field: a record in a collection
                self.i += 1
                node = ("field", node, self.ident(), t.line)
            return node
        if name in NILADIC:
            return ("call", name, [], t.line)
        return ("name", name, t.line)

    def _subquery(self) -> Any:
        """``SELECT ...)`` (the '(' already read)."""
        parse = SUBQUERY.get()
        if parse is None:
            self.fail("a subquery is not supported here", EXPRESSION)
        query = parse(self)  # type: ignore[misc]
        self.expect(")")
        return query

    def _case(self) -> Node:
        line = self.tok.line
        self.expect("CASE")
        subject = None if self.at("WHEN") else self._concat()
        arms: list[tuple[Node, Node]] = []
        while self.accept("WHEN"):
            cond = self.expr()
            self.expect("THEN")
            arms.append((cond, self.expr()))
        other = self.expr() if self.accept("ELSE") else ("lit", None)
        self.expect("END")
        return ("case", subject, arms, other, line)

    def _interval(self) -> Interval:
        line = self.tok.line
        self.i += 1
        text = self.tok.text
        self.i += 1
        unit = self.ident()
        if self.accept("("):  # leading precision
            self.i += 1
            self.expect(")")
        to = None
        if self.accept("TO"):
            to = self.ident()
            if self.accept("("):
                self.i += 1
                self.expect(")")
        return interval_literal(text, unit, to, line)


NILADIC: Final = frozenset(
    {"SYSDATE", "SYSTIMESTAMP", "CURRENT_DATE", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "SYS_GUID", "USER"}
)


def _number_literal(t: Token) -> Any:
    text = t.text
    if text[-1] in "fFdD":
        return float(text[:-1])
    return Decimal(text)


def _datetime_literal(word: str, t: Token) -> OraTime:
    fmt = "YYYY-MM-DD" if word == "DATE" else "YYYY-MM-DD HH24:MI:SS.FF"
    value = parse_datetime(t.text, fmt, "TIMESTAMP_TZ" if word == "TIMESTAMP" else "DATE", t.line, lenient=True)
    if word == "TIMESTAMP" and value.tz is None:
        return OraTime(value.wall, value.nanos, None, "TIMESTAMP")
    return value


_YM_UNITS: Final = ("YEAR", "MONTH")
_DS_UNITS: Final = ("DAY", "HOUR", "MINUTE", "SECOND")


def interval_literal(text: str, unit: str, to: str | None, line: int = 0) -> Interval:
    """``INTERVAL 'text' unit [TO unit]`` -> :class:`Interval`."""
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("+-")
    try:
        if unit in _YM_UNITS:
            if to not in (None, "MONTH", "YEAR"):
                raise ValueError
            if unit == "YEAR" and to == "MONTH":
                y, _, m = s.partition("-")
                return Interval(months=sign * (int(y) * 12 + int(m or 0)))
            return Interval(months=sign * int(s) * (12 if unit == "YEAR" else 1))
        if unit not in _DS_UNITS or (to is not None and to not in _DS_UNITS):
            raise ValueError
        parts = re.split(r"[ :]", s)
        units = _DS_UNITS[_DS_UNITS.index(unit) : _DS_UNITS.index(to or unit) + 1]
        if len(parts) != len(units):
            raise ValueError
        scale = {"DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}
        nanos = 0
        for u, p in zip(units, parts, strict=True):
            nanos += int(Decimal(p) * scale[u] * 10**9)
        return Interval(nanos=sign * nanos)
    except (ValueError, InvalidOperation):
        raise SqlError(f"cannot read INTERVAL {text!r} {unit}{' TO ' + to if to else ''}", EXPRESSION, line) from None


# ---------------------------------------------------------------------------------------------
# date/time format models (TO_DATE, TO_TIMESTAMP, TO_TIMESTAMP_TZ)

_FMT_TOKENS: Final = re.compile(
    r"YYYY|RRRR|YY|RR|MM|MONTH|MON|DDD|DD|HH24|HH12|HH|MI|SSSSS|SS|FF[1-9]?|AM|PM|A\.M\.|"
    r"P\.M\.|TZH|TZM|TZR|\"[^\"]*\"|.",
    re.IGNORECASE,
)
_MONTHS: Final = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_FIELD_RE: Final = {
    "YYYY": r"(?P<Y>[+-]?\d{1,4})",
    "RRRR": r"(?P<Y>\d{1,4})",
    "YY": r"(?P<y2>\d{1,2})",
    "RR": r"(?P<y2>\d{1,2})",
    "MM": r"(?P<M>\d{1,2})",
    "MON": r"(?P<MON>[A-Za-z]{3})",
    "MONTH": r"(?P<MONTH>[A-Za-z]+)\s*",
    "DD": r"(?P<D>\d{1,2})",
    "HH24": r"(?P<H>\d{1,2})",
    "HH12": r"(?P<h>\d{1,2})",
    "HH": r"(?P<h>\d{1,2})",
    "MI": r"(?P<MI>\d{1,2})",
    "SS": r"(?P<S>\d{1,2})",
    "AM": r"(?P<AP>[AaPp]\.?[Mm]\.?)",
    "PM": r"(?P<AP>[AaPp]\.?[Mm]\.?)",
    "TZH": r"(?P<TZH>[+-]?\d{1,2})",
    "TZM": r"(?P<TZM>\d{1,2})",
    "TZR": r"(?P<TZR>[+-]\d{1,2}:\d{2}|UTC|GMT|Z)",
}


def _format_regex(fmt: str, line: int) -> re.Pattern[str]:
    out = []
    for tok in _FMT_TOKENS.findall(fmt):
        up = tok.upper()
        if up.startswith("FF"):
            digits = up[2:] or "9"
            out.append(rf"(?P<F>\d{{1,{digits}}})")
        elif up in ("A.M.", "P.M."):
            out.append(_FIELD_RE["AM"])
        elif up in _FIELD_RE:
            out.append(_FIELD_RE[up])
        elif tok.startswith('"'):
            out.append(re.escape(tok[1:-1]))
        elif tok.isalnum():
            raise SqlError(f"date format element {tok!r} is not supported", EXPRESSION, line)
        else:
            out.append(r"[-/,.;: ]" if tok in "-/,.;: " else re.escape(tok))
    try:
        return re.compile("".join(out), re.IGNORECASE)
    except re.error:
        raise SqlError(f"date format {fmt!r}: an element repeats", EXPRESSION, line) from None


def parse_datetime(text: str, fmt: str | None, kind: str, line: int = 0, *, lenient: bool = False) -> OraTime:
    """``TO_DATE``/``TO_TIMESTAMP``/``TO_TIMESTAMP_TZ`` of ``text`` with format model ``fmt``."""
    if fmt is None or lenient:
        m = re.fullmatch(
            r"\s*(?P<Y>-?\d{1,4})-(?P<M>\d{1,2})-(?P<D>\d{1,2})(?:[ T](?P<H>\d{1,2}):(?P<MI>\d{1,2})"
            r"(?::(?P<S>\d{1,2})(?:\.(?P<F>\d{1,9}))?)?)?\s*(?P<TZR>[+-]\d{1,2}:\d{2}|Z|UTC)?\s*",
            text,
        )
        if m is None and fmt is None:
            raise SqlError(
                f"cannot read date/time {text!r} without a format (give one: TO_DATE(text, fmt))", EXPRESSION, line
            )
    if fmt is not None and not lenient:
        m = _format_regex(fmt, line).fullmatch(text.strip())
    if m is None:
        raise SqlError(f"ORA-01861: {text!r} does not match the format {fmt!r}", RUNTIME, line)
    g = m.groupdict()
    year = int(g["Y"]) if g.get("Y") else 2000 + int(g["y2"]) if g.get("y2") else datetime.now().year
    if g.get("MON"):
        month = _MONTHS.index(g["MON"].upper()) + 1 if g["MON"].upper() in _MONTHS else 0
    elif g.get("MONTH"):
        month = _MONTHS.index(g["MONTH"][:3].upper()) + 1 if g["MONTH"][:3].upper() in _MONTHS else 0
    else:
        month = int(g["M"]) if g.get("M") else 1
    hour = int(g["H"]) if g.get("H") else int(g["h"]) % 12 if g.get("h") else 0
    if g.get("AP") and g["AP"][0] in "pP" and g.get("h"):
        hour += 12
    frac = (g.get("F") or "").ljust(9, "0")
    try:
        wall = datetime(year, month, int(g.get("D") or 1), hour, int(g.get("MI") or 0), int(g.get("S") or 0))
    except ValueError as exc:
        raise SqlError(f"date/time {text!r}: {exc}", RUNTIME, line) from None
    tz = None
    if kind == "TIMESTAMP_TZ":
        if g.get("TZR"):
            r = g["TZR"].upper()
            tz = (
                0
                if r in ("Z", "UTC", "GMT")
                else (-1 if r[0] == "-" else 1) * (int(r[1:].split(":")[0]) * 60 + int(r.split(":")[1]))
            )
        elif g.get("TZH"):
            h = int(g["TZH"])
            tz = (-1 if g["TZH"].startswith("-") else 1) * (abs(h) * 60 + int(g.get("TZM") or 0))
        else:
            tz = 0  # the session time zone of the reference runs (UTC)
    return OraTime(wall, int(frac) if kind != "DATE" else 0, tz, kind)


# ---------------------------------------------------------------------------------------------
# evaluation

Lookup = Callable[[str, int], Any]


def evaluate(node: Node, lookup: Lookup) -> Any:
    """Value of an expression; ``lookup(name, line)`` resolves columns and variables."""
    tag = node[0]
    if tag == "lit":
        return node[1]
    if tag == "name":
        return lookup(node[1], node[2])
    if tag == "bin":
        return _binary(node[1], evaluate(node[2], lookup), evaluate(node[3], lookup), node[4])
    if tag == "neg":
        v = evaluate(node[1], lookup)
        if isinstance(v, float):
            return -v
        n = to_number(v, node[2])
        return None if n is None else n.copy_negate()
    if tag == "call":
        args = [evaluate(a, lookup) for a in node[2]]
        element = getattr(lookup, "element", None)  # PL/SQL collections: v(i), v.EXISTS(i)
        if element is not None:
            found = element(node[1], args, node[3])
            if found is not NOT_FOUND:
                return found
        return call(node[1], args, node[3])
    if tag in ("in_query", "scalar", "exists", "scalar_col"):
        run = getattr(lookup, "query", None)
        if run is None:
            raise SqlError("a subquery is not supported here", EXPRESSION, node[-1] if tag != "in_query" else node[4])
        if tag == "exists":
            return bool(run(node[1]))
        if tag in ("scalar", "scalar_col"):  # scalar_col: column n of a row subquery (SET (a, b) = (SELECT ...))
            rows = run(node[1])
            if len(rows) > 1:
                raise SqlError("ORA-01427: single-row subquery returns more than one row", RUNTIME, node[-1])
            column = node[2] if tag == "scalar_col" else 0
            return rows[0][column] if rows else None
        x = evaluate(node[1], lookup)
        results = [compare("=", x, r[0], node[4]) for r in run(node[2])]
        r = True if True in results else (None if None in results else False)
        return _negate(r, node[3])
    if tag == "field_at":  # field n of a record (UPDATE ... SET ROW = r)
        rec = evaluate(node[1], lookup)
        if not isinstance(rec, dict) or node[2] >= len(rec):
            raise SqlError("ORA-00913: SET ROW needs a record with a field for every column", RUNTIME, node[3])
        return list(rec.values())[node[2]]
    if tag == "field":
        rec = evaluate(node[1], lookup)
        if not isinstance(rec, dict) or node[2] not in rec:
            raise SqlError(f"PLS-00302: component {node[2]} must be declared", RUNTIME, node[3])
        return rec[node[2]]
    if tag == "and":
        a = evaluate(node[1], lookup)
        if a is False:
            return False
        b = evaluate(node[2], lookup)
        return False if b is False else (None if a is None or b is None else True)
    if tag == "or":
        a = evaluate(node[1], lookup)
        if a is True:
            return True
        b = evaluate(node[2], lookup)
        return True if b is True else (None if a is None or b is None else False)
    if tag == "not":
        v = evaluate(node[1], lookup)
        return None if v is None else not v
    if tag == "cmp":
        return compare(node[1], evaluate(node[2], lookup), evaluate(node[3], lookup), node[4])
    if tag == "between":
        x, lo, hi = (evaluate(n, lookup) for n in node[1:4])
        r = _and3(compare(">=", x, lo, node[5]), compare("<=", x, hi, node[5]))
        return _negate(r, node[4])
    if tag == "in":
        x = evaluate(node[1], lookup)
        results = [compare("=", x, evaluate(n, lookup), node[4]) for n in node[2]]
        r = True if True in results else (None if None in results else False)
        return _negate(r, node[3])
    if tag == "like":
        x, pat = to_text(evaluate(node[1], lookup)), to_text(evaluate(node[2], lookup))
        if x is None or pat is None:
            return None
        rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pat)
        return _negate(re.fullmatch(rx, x, re.DOTALL) is not None, node[3])
    if tag == "isnull":
        return (evaluate(node[1], lookup) is None) != node[2]
    if tag == "case":
        subject = None if node[1] is None else evaluate(node[1], lookup)
        for cond, value in node[2]:
            hit = (
                compare("=", subject, evaluate(cond, lookup), node[4])
                if node[1] is not None
                else evaluate(cond, lookup)
            )
            if hit is True:
                return evaluate(value, lookup)
        return evaluate(node[3], lookup)
    raise SqlError(f"unknown expression node {tag!r}", EXPRESSION)


def _and3(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _negate(v: bool | None, negated: bool) -> bool | None:
    return v if v is None or not negated else not v


def _binary(op: str, a: Any, b: Any, line: int) -> Any:
    if op == "||":
        ta, tb = to_text(a), to_text(b)
        if isinstance(a, bytes) and isinstance(b, bytes):
            return a + b
        out = (ta or "") + (tb or "")
        return out or None
    if a is None or b is None:
        return None
    if isinstance(a, OraTime) or isinstance(b, OraTime):
        return _date_arith(op, a, b, line)
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(to_number(a, line) or 0), float(to_number(b, line) or 0)
        return {"+": fa + fb, "-": fa - fb, "*": fa * fb}.get(op, fa / fb if fb else float("inf"))
    na, nb = to_number(a, line), to_number(b, line)
    assert na is not None and nb is not None
    with localcontext() as ctx:
        ctx.prec = 40
        if op == "+":
            return na + nb
        if op == "-":
            return na - nb
        if op == "*":
            return na * nb
        if nb == 0:
            raise SqlError("ORA-01476: divisor is equal to zero", RUNTIME, line)
        return na / nb


def _date_arith(op: str, a: Any, b: Any, line: int) -> Any:
    if isinstance(a, OraTime) and isinstance(b, OraTime) and op == "-":
        d = (a.key()[0] - b.key()[0]) / timedelta(days=1)
        return Decimal(repr(d))
    if isinstance(a, OraTime) and op in ("+", "-"):
        if isinstance(b, Interval):
            sign = 1 if op == "+" else -1
            if b.months is not None:
                total = a.wall.year * 12 + a.wall.month - 1 + sign * b.months
                try:
                    wall = a.wall.replace(year=total // 12, month=total % 12 + 1)
                except ValueError:
                    raise SqlError("ORA-01839: date not valid for month specified", RUNTIME, line) from None
                return OraTime(wall, a.nanos, a.tz, a.kind)
            total = a.nanos + sign * (b.nanos or 0)
            secs, nanos = divmod(total, 10**9)
            return OraTime(a.wall + timedelta(seconds=secs), nanos, a.tz, a.kind)
        days = to_number(b, line)
        assert days is not None
        delta = timedelta(seconds=round(float(days) * 86400))
        wall = a.wall + delta if op == "+" else a.wall - delta
        return OraTime(wall, 0, None, "DATE")  # DATE arithmetic yields a DATE
    if isinstance(b, OraTime) and op == "+":
        return _date_arith(op, b, a, line)
    raise SqlError(f"cannot compute {op!r} on {to_text(a)!r} and {to_text(b)!r}", EXPRESSION, line)


def compare(op: str, a: Any, b: Any, line: int = 0) -> bool | None:
    """SQL comparison with implicit conversions; None when either side is NULL."""
    if a is None or b is None:
        return None
    if isinstance(a, (Decimal, float, bool)) or isinstance(b, (Decimal, float, bool)):
        x, y = to_number(a, line), to_number(b, line)
        assert x is not None and y is not None
        return _compare_as(op, x, y)
    if isinstance(a, OraTime) and isinstance(b, OraTime):
        return _compare_as(op, a.key(), b.key())
    if isinstance(a, bytes) or isinstance(b, bytes):
        return _compare_as(
            op,
            (a if isinstance(a, bytes) else bytes.fromhex(str(a))),
            (b if isinstance(b, bytes) else bytes.fromhex(str(b))),
        )
    s, t = to_text(a), to_text(b)
    assert s is not None and t is not None
    return _compare_as(op, s, t)


_Comparable = TypeVar("_Comparable", Decimal, tuple[datetime, int], bytes, str)


def _compare_as(op: str, x: _Comparable, y: _Comparable) -> bool:
    """``x op y`` for two values of one SQL type (:func:`compare` converted them)."""
    if op == "=":
        return x == y
    if op == "<>":
        return x != y
    if op == "<":
        return x < y
    if op == ">":
        return x > y
    if op == "<=":
        return x <= y
    return x >= y


# ---------------------------------------------------------------------------------------------
# functions


def _mod(args: list[Any], line: int) -> Decimal | None:
    """MOD(m, n): m when n is 0 (as Oracle)."""
    if None in args:
        return None
    n = to_number(args[1], line)
    m = to_number(args[0], line)
    assert m is not None and n is not None  # only NULL converts to NULL
    return m if n == 0 else m % n


def _pad(args: list[Any], line: int, left: bool) -> str | None:
    if len(args) not in (2, 3):
        raise SqlError(f"{'LPAD' if left else 'RPAD'} takes 2 or 3 arguments", EXPRESSION, line)
    text, n = to_text(args[0]), to_number(args[1], line)
    pad = to_text(args[2]) if len(args) == 3 else " "
    if text is None or n is None or pad is None:
        return None
    width = int(n)
    if width <= 0:
        return None
    if len(text) >= width:
        return text[:width]
    fill = (pad * (width // len(pad) + 1))[: width - len(text)]
    return fill + text if left else text + fill


def _round(args: list[Any], line: int, trunc: bool) -> Any:
    v = args[0]
    if isinstance(v, OraTime):
        if len(args) > 1:
            raise SqlError("ROUND/TRUNC of a date with a format is not supported", EXPRESSION, line)
        return OraTime(v.wall.replace(hour=0, minute=0, second=0), 0, None, "DATE")
    n = to_number(v, line)
    places = int(to_number(args[1], line) or 0) if len(args) > 1 and args[1] is not None else 0
    if n is None:
        return None
    q = Decimal(1).scaleb(-places)
    from decimal import ROUND_DOWN

    return n.quantize(q, rounding=ROUND_DOWN if trunc else ROUND_HALF_UP)


def _substr(args: list[Any], line: int) -> str | None:
    text = to_text(args[0])
    pos = to_number(args[1], line) if len(args) > 1 else None
    if text is None or pos is None:
        return None
    p = int(pos)
    start = p - 1 if p > 0 else len(text) + p if p < 0 else 0
    if start < 0:
        return None
    if len(args) > 2:
        n = to_number(args[2], line)
        if n is None or n < 1:
            return None
        return text[start : start + int(n)] or None
    return text[start:] or None


def _hextoraw(args: list[Any], line: int) -> bytes | None:
    text = to_text(args[0])
    if text is None:
        return None
    try:
        return bytes.fromhex(text if len(text) % 2 == 0 else "0" + text)
    except ValueError:
        raise SqlError(f"HEXTORAW: {text!r} is not hexadecimal", RUNTIME, line) from None


def _cast_to_varchar2(args: list[Any], line: int) -> str | None:
    """The bytes as VARCHAR2, unconverted: Oracle stores them as they are in any character set."""
    raw = args[0] if isinstance(args[0], bytes) or args[0] is None else _hextoraw(args, line)
    if raw is None:
        return None
    return decode_text(raw, DB_CHARSET.get()) or None


def _to_char(args: list[Any], line: int) -> str | None:
    v = args[0]
    if len(args) < 2 or v is None:
        return to_text(v)
    fmt = to_text(args[1])
    if fmt is None:
        return None
    if isinstance(v, OraTime):
        return _date_text(v, fmt, line)
    n = to_number(v, line)
    assert n is not None
    return _number_text(n, fmt, line)


def _date_text(v: OraTime, fmt: str, line: int) -> str:
    """TO_CHAR of a date with a format model (the common elements)."""
    w = v.wall
    out = []
    for tok in _FMT_TOKENS.findall(fmt):
        up = tok.upper()
        if up in ("YYYY", "RRRR"):
            out.append(f"{w.year:04d}")
        elif up in ("YY", "RR"):
            out.append(f"{w.year % 100:02d}")
        elif up == "MM":
            out.append(f"{w.month:02d}")
        elif up in ("MON", "MONTH"):
            name = _MONTHS[w.month - 1] if up == "MON" else w.strftime("%B").upper().ljust(9)
            out.append(name if tok.isupper() else name.capitalize() if tok[:2].istitle() else name.lower())
        elif up == "DD":
            out.append(f"{w.day:02d}")
        elif up == "DDD":
            out.append(f"{w.timetuple().tm_yday:03d}")
        elif up == "HH24":
            out.append(f"{w.hour:02d}")
        elif up in ("HH", "HH12"):
            out.append(f"{(w.hour % 12) or 12:02d}")
        elif up == "MI":
            out.append(f"{w.minute:02d}")
        elif up == "SS":
            out.append(f"{w.second:02d}")
        elif up == "SSSSS":
            out.append(f"{w.hour * 3600 + w.minute * 60 + w.second:05d}")
        elif up.startswith("FF"):
            out.append(f"{v.nanos:09d}"[: int(up[2:] or 9)])
        elif up in ("AM", "PM", "A.M.", "P.M."):
            am = w.hour < 12
            out.append(("AM" if am else "PM") if "." not in up else ("A.M." if am else "P.M."))
        elif tok.startswith('"'):
            out.append(tok[1:-1])
        elif tok.isalnum():
            raise SqlError(f"TO_CHAR: date format element {tok!r} is not supported", EXPRESSION, line)
        else:
            out.append(tok)
    return "".join(out)


def _number_text(n: Decimal, fmt: str, line: int) -> str:
    """TO_CHAR of a number with a format model of ``9 0 . , D G FM S MI``."""
    up = fmt.upper()
    fm = up.startswith("FM")
    body = up[2:] if fm else up
    sign_lead, sign_trail = body.startswith("S"), body.endswith("MI") or body.endswith("S")
    body = body.removeprefix("S").removesuffix("MI").removesuffix("S")
    if not body or any(c not in "90.,DG$" for c in body):
        raise SqlError(f"TO_CHAR: number format {fmt!r} is not supported", EXPRESSION, line)
    body = body.replace("D", ".").replace("G", ",")
    int_part, _, frac_part = body.partition(".")
    scale = len(frac_part)
    with localcontext() as ctx:
        ctx.prec = 60
        q = abs(n).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    digits_int, _, digits_frac = format(q, "f").partition(".")
    slots = int_part.replace(",", "").replace("$", "")
    if digits_int == "0" and "0" not in slots and frac_part:
        digits_int = ""  # Oracle prints .5 for '9.9' (and 0 for '9')
    if len(digits_int) > len(slots):
        return "#" * (len(fmt) + 1)
    first_zero = slots.find("0")
    width = 0 if first_zero < 0 else len(slots) - first_zero  # digits from the first 0 on are printed
    digits_int = digits_int.rjust(max(width, len(digits_int)), "0")
    out_int: list[str] = []
    di = len(digits_int) - 1
    for ch in reversed(int_part):
        if ch == ",":
            out_int.append("," if di >= 0 else " ")
        elif ch == "$":
            continue
        else:
            out_int.append(digits_int[di] if di >= 0 else " ")
            di -= 1
    text = "".join(reversed(out_int))
    if "$" in int_part:
        text = text.replace(" ", "") if fm else text
        text = "$" + text.lstrip() if not fm else "$" + text
    if frac_part:
        text += "." + digits_frac
    neg = n < 0 and q != 0
    if sign_lead:
        text = ("-" if neg else "+") + text.lstrip()
    elif sign_trail:
        text = text + ("-" if neg else ("+" if body and up.endswith("S") else " "))
    else:
        stripped = text.lstrip()
        text = " " * (len(text) - len(stripped)) + ("-" if neg else " ") + stripped
    return text.strip() if fm else text


def _nvl(args: list[Any], line: int) -> Any:
    return args[0] if args[0] is not None else args[1]


def _decode(args: list[Any], line: int) -> Any:
    """DECODE(e, s1, r1, ..., [default]): the first search equal to e (NULL matches NULL)."""
    for i in range(1, len(args) - 1, 2):
        if (args[0] is None and args[i] is None) or compare("=", args[0], args[i], line) is True:
            return args[i + 1]
    return args[-1] if len(args) % 2 == 0 else None


def _extreme(args: list[Any], line: int, op: str) -> Any:
    """GREATEST / LEAST: NULL when any argument is."""
    if any(a is None for a in args):
        return None
    best = args[0]
    for a in args[1:]:
        if compare(op, a, best, line) is True:
            best = a
    return best


def _instr(args: list[Any], line: int) -> Any:
    """INSTR(s, sub [, position [, occurrence]]): 1-based, 0 when not found."""
    if any(a is None for a in args):
        return None
    text, sub = to_text(args[0]) or "", to_text(args[1]) or ""
    pos = int(to_number(args[2], line) or 1) if len(args) > 2 else 1
    nth = int(to_number(args[3], line) or 1) if len(args) > 3 else 1
    if pos == 0 or nth < 1:
        return Decimal(0)
    found = -1
    if pos > 0:
        start = pos - 1
        for _ in range(nth):
            found = text.find(sub, start)
            if found < 0:
                break
            start = found + 1
    else:
        end = len(text) + pos + len(sub)
        for _ in range(nth):
            found = text.rfind(sub, 0, end)
            if found < 0:
                break
            end = found + len(sub) - 1
    return Decimal(found + 1)


def _date_arg(value: Any, name: str, line: int) -> OraTime:
    if isinstance(value, str):
        value = parse_datetime(value, None, "DATE", line)
    if not isinstance(value, OraTime):
        raise SqlError(f"ORA-00932: {name} needs a date", RUNTIME, line)
    return value


def _add_months(args: list[Any], line: int) -> Any:
    """ADD_MONTHS(d, n): the same day n months on (the last day of a month stays the last day)."""
    if args[0] is None or args[1] is None:
        return None
    d = _date_arg(args[0], "ADD_MONTHS", line)
    months = int(to_number(args[1], line) or 0)
    w = d.wall
    total = w.year * 12 + w.month - 1 + months
    year, month = divmod(total, 12)
    last = calendar.monthrange(year, month + 1)[1]
    day = last if w.day == calendar.monthrange(w.year, w.month)[1] else min(w.day, last)
    return OraTime(w.replace(year=year, month=month + 1, day=day), 0, None, "DATE")


def _last_day(args: list[Any], line: int) -> Any:
    """LAST_DAY(d): the last day of d's month, same time of day."""
    if args[0] is None:
        return None
    d = _date_arg(args[0], "LAST_DAY", line)
    w = d.wall
    return OraTime(w.replace(day=calendar.monthrange(w.year, w.month)[1]), 0, None, "DATE")


def _to_number_fmt(args: list[Any], line: int) -> Any:
    """TO_NUMBER(text, format): the text without the format's group separators and currency
    sign; a trailing ``-`` under ``MI`` or a sign under ``S`` gives the sign."""
    text = (to_text(args[0]) or "").strip()
    fmt = (to_text(args[1]) or "").upper()
    if not re.fullmatch(r"(FM)?[S$]?[09,.GDL$]*(MI|S)?", fmt):
        raise SqlError(f"TO_NUMBER format {fmt!r} is not supported (9 0 , . G D $ S MI FM)", EXPRESSION, line)
    negative = False
    if fmt.endswith(("MI", "S")) and text[-1:] in "+-" and text:
        negative, text = text[-1] == "-", text[:-1]
    text = text.replace(",", "").replace("$", "").strip()
    value = to_number(text, line)
    return -value if negative and value is not None else value  # type: ignore[operator]


def _arity(name: str, args: list[Any], lo: int, hi: int, line: int) -> None:
    if not lo <= len(args) <= hi:
        raise SqlError(
            f"{name} takes {lo}{'' if lo == hi else f' to {hi}'} argument(s), got {len(args)}", EXPRESSION, line
        )


_FIXED: Final[dict[str, tuple[int, int, Callable[[list[Any], int], Any]]]] = {
    "LPAD": (2, 3, lambda a, n: _pad(a, n, True)),
    "RPAD": (2, 3, lambda a, n: _pad(a, n, False)),
    "CHR": (1, 1, lambda a, n: None if a[0] is None else chr(int(to_number(a[0], n) or 0))),
    "MOD": (2, 2, _mod),
    "ABS": (1, 1, lambda a, n: None if a[0] is None else abs(to_number(a[0], n))),  # type: ignore[arg-type]
    "ROUND": (1, 2, lambda a, n: _round(a, n, False)),
    "TRUNC": (1, 2, lambda a, n: _round(a, n, True)),
    "FLOOR": (
        1,
        1,
        lambda a, n: (
            None
            if a[0] is None
            else Decimal(
                int(
                    to_number(a[0], n).to_integral_value(  # type: ignore[union-attr]
                        rounding="ROUND_FLOOR"
                    )
                )
            )
        ),
    ),
    "CEIL": (
        1,
        1,
        lambda a, n: (
            None
            if a[0] is None
            else Decimal(
                int(
                    to_number(a[0], n).to_integral_value(  # type: ignore[union-attr]
                        rounding="ROUND_CEILING"
                    )
                )
            )
        ),
    ),
    "UPPER": (1, 1, lambda a, n: None if a[0] is None else to_text(a[0]).upper()),  # type: ignore[union-attr]
    "LOWER": (1, 1, lambda a, n: None if a[0] is None else to_text(a[0]).lower()),  # type: ignore[union-attr]
    "LENGTHB": (
        1,
        1,
        lambda a, n: (
            None
            if a[0] is None
            else Decimal(len(a[0] if isinstance(a[0], bytes) else convert_text(to_text(a[0]) or "", DB_CHARSET.get())))
        ),
    ),
    "LENGTH": (1, 1, lambda a, n: None if a[0] is None else Decimal(len(to_text(a[0]) or ""))),
    "SUBSTR": (2, 3, _substr),
    "CONCAT": (2, 2, lambda a, n: _binary("||", a[0], a[1], n)),
    "REPLACE": (
        2,
        3,
        lambda a, n: (
            None
            if a[0] is None
            else (to_text(a[0]) or "").replace(to_text(a[1]) or "", (to_text(a[2]) or "") if len(a) > 2 else "") or None
        ),
    ),
    "TRIM": (1, 1, lambda a, n: None if a[0] is None else (to_text(a[0]) or "").strip(" ") or None),
    "LTRIM": (1, 1, lambda a, n: None if a[0] is None else (to_text(a[0]) or "").lstrip(" ") or None),
    "RTRIM": (1, 1, lambda a, n: None if a[0] is None else (to_text(a[0]) or "").rstrip(" ") or None),
    "NVL": (2, 2, _nvl),
    "ADD_MONTHS": (2, 2, _add_months),
    "LAST_DAY": (1, 1, _last_day),
    "NVL2": (3, 3, lambda a, n: a[1] if a[0] is not None else a[2]),
    "NULLIF": (2, 2, lambda a, n: None if compare("=", a[0], a[1], n) is True else a[0]),
    "DECODE": (3, 255, _decode),
    "GREATEST": (1, 255, lambda a, n: _extreme(a, n, ">")),
    "LEAST": (1, 255, lambda a, n: _extreme(a, n, "<")),
    "INSTR": (2, 4, _instr),
    "SIGN": (1, 1, lambda a, n: None if a[0] is None else Decimal((to_number(a[0], n) > 0) - (to_number(a[0], n) < 0))),  # type: ignore[operator]
    "POWER": (2, 2, lambda a, n: None if None in a else to_number(a[0], n) ** to_number(a[1], n)),  # type: ignore[operator]
    "COALESCE": (1, 99, lambda a, n: next((v for v in a if v is not None), None)),
    "HEXTORAW": (1, 1, _hextoraw),
    "RAWTOHEX": (1, 1, lambda a, n: None if a[0] is None else to_text(a[0])),
    "UTL_RAW.CAST_TO_RAW": (
        1,
        1,
        lambda a, n: None if a[0] is None else convert_text(to_text(a[0]) or "", DB_CHARSET.get()),
    ),
    "UTL_RAW.CAST_TO_VARCHAR2": (1, 1, _cast_to_varchar2),
    "TO_CHAR": (1, 2, _to_char),
    "TO_NCHAR": (1, 1, lambda a, n: to_text(a[0])),
    "TO_NUMBER": (1, 2, lambda a, n: to_number(a[0], n) if len(a) == 1 or a[0] is None else _to_number_fmt(a, n)),
    "TO_BINARY_FLOAT": (1, 1, lambda a, n: None if a[0] is None else float(to_number(a[0], n))),  # type: ignore[arg-type]
    "TO_BINARY_DOUBLE": (1, 1, lambda a, n: None if a[0] is None else float(to_number(a[0], n))),  # type: ignore[arg-type]
    "TO_DATE": (
        1,
        2,
        lambda a, n: (
            None
            if a[0] is None
            else parse_datetime(to_text(a[0]) or "", to_text(a[1]) if len(a) > 1 else None, "DATE", n)
        ),
    ),
    "TO_TIMESTAMP": (
        1,
        2,
        lambda a, n: (
            None
            if a[0] is None
            else parse_datetime(to_text(a[0]) or "", to_text(a[1]) if len(a) > 1 else None, "TIMESTAMP", n)
        ),
    ),
    "TO_TIMESTAMP_TZ": (
        1,
        2,
        lambda a, n: (
            None
            if a[0] is None
            else parse_datetime(to_text(a[0]) or "", to_text(a[1]) if len(a) > 1 else None, "TIMESTAMP_TZ", n)
        ),
    ),
    "TO_CLOB": (1, 1, lambda a, n: to_text(a[0])),
    "TO_NCLOB": (1, 1, lambda a, n: to_text(a[0])),
    "TO_BLOB": (1, 1, lambda a, n: a[0] if isinstance(a[0], bytes) or a[0] is None else _hextoraw(a, n)),
    "NUMTODSINTERVAL": (
        2,
        2,
        lambda a, n: interval_literal(to_text(a[0]) or "0", (to_text(a[1]) or "").upper(), None, n),
    ),
    "NUMTOYMINTERVAL": (
        2,
        2,
        lambda a, n: interval_literal(to_text(a[0]) or "0", (to_text(a[1]) or "").upper(), None, n),
    ),
}

# Functions whose value a database run decides (time, identifiers): a scenario cannot reproduce
# the reference's value, so they are refused rather than guessed.
_NONDETERMINISTIC: Final = frozenset(
    {
        "SYSDATE",
        "SYSTIMESTAMP",
        "CURRENT_DATE",
        "CURRENT_TIMESTAMP",
        "LOCALTIMESTAMP",
        "SYS_GUID",
        "DBMS_RANDOM.VALUE",
        "DBMS_RANDOM.STRING",
    }
)


def call(name: str, args: list[Any], line: int = 0) -> Any:
    """Apply a SQL function (see :data:`FUNCTIONS`)."""
    if name in _NONDETERMINISTIC:
        raise SqlError(f"{name}: its value depends on the database run; write a literal instead", EXPRESSION, line)
    if name in ("EMPTY_CLOB", "EMPTY_BLOB"):
        _arity(name, args, 0, 0, line)
        return EmptyLob(name == "EMPTY_BLOB")
    spec = _FIXED.get(name)
    if spec is None:
        raise SqlError(f"function {name} is not supported (supported: {', '.join(sorted(_FIXED))})", EXPRESSION, line)
    _arity(name, args, spec[0], spec[1], line)
    return spec[2](args, line)


FUNCTIONS: Final = tuple(sorted(_FIXED))
