"""DDL events -> schema evolution of a lake table.

Understood statements (any case, optionally quoted names):

* ``ALTER TABLE t ADD (c1 TYPE, c2 TYPE)`` / ``ADD c TYPE``: columns appended;
* ``ALTER TABLE t DROP COLUMN c`` / ``DROP (c1, c2)`` / ``SET UNUSED ...``: columns removed;
* ``ALTER TABLE t RENAME COLUMN a TO b``: values move to the new name (the whole table
  is rewritten in that batch, so every stored file matches the new schema);
* ``TRUNCATE TABLE t`` and ``DROP TABLE t``: all rows removed; changes ordered before it
  never apply again (a replay cannot bring them back).

Anything else (MODIFY, constraints, indexes...) is logged and ignored: it does not change
the columns the lake stores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from replicator.spark.tableschema import TableSchema

_IDENT: Final = r'(?:"[^"]+"|[A-Za-z][\w$#]*)'
_ALTER: Final = re.compile(rf"^\s*ALTER\s+TABLE\s+(?:{_IDENT}\s*\.\s*)?{_IDENT}\s+(.*)$", re.IGNORECASE | re.DOTALL)
_TYPE: Final = re.compile(
    r"^\s*([A-Za-z_]\w*(?:\s+(?:PRECISION|VARYING|RAW|YEAR|DAY))?)"
    r"\s*(?:\(\s*(\*|\d+)\s*(?:,\s*(-?\d+))?\s*(?:BYTE|CHAR)?\s*\))?"
    r"(\s+WITH\s+(?:LOCAL\s+)?TIME\s+ZONE)?",
    re.IGNORECASE,
)


@dataclass(slots=True)
class DdlResult:
    """What one DDL statement did to the schema."""

    changed: bool = False
    rewrite: bool = False  # stored rows no longer match the schema: overwrite the table
    truncate: bool = False
    note: str = ""


def ident(text: str) -> str:
    """Oracle identifier rules: unquoted names are upper-cased."""
    text = text.strip()
    return text[1:-1] if text.startswith('"') and text.endswith('"') else text.upper()


def split_top(text: str) -> list[str]:
    """Split on commas outside parentheses and quotes."""
    parts: list[str] = []
    cur: list[str] = []
    depth, quoted = 0, False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def type_spec(text: str) -> dict[str, Any]:
    """SQL type text -> an OLR-style column spec (without the name)."""
    m = _TYPE.match(text)
    base = " ".join((m[1] if m else text).upper().split())
    a = None if not m or m[2] in (None, "*") else int(m[2])
    b = int(m[3]) if m and m[3] else None
    zone = (m[4] or "").upper() if m else ""
    if base in ("NUMBER", "NUMERIC", "DECIMAL"):
        return {
            "type": "number",
            "precision": a if a is not None else -1,
            "scale": b if b is not None else (0 if a is not None else -1),
        }
    if base in ("INTEGER", "INT", "SMALLINT"):
        return {"type": "number", "precision": -1, "scale": 0}
    if base == "FLOAT":
        return {"type": "number", "precision": -1, "scale": -1}
    if base.startswith("TIMESTAMP"):
        return {
            "type": "timestamp with local time zone"
            if "LOCAL" in zone
            else "timestamp with time zone"
            if zone
            else "timestamp"
        }
    if base.startswith("INTERVAL YEAR"):
        return {"type": "interval year to month"}
    if base.startswith("INTERVAL DAY"):
        return {"type": "interval day to second"}
    simple = {
        "VARCHAR2": "varchar2",
        "VARCHAR": "varchar2",
        "NVARCHAR2": "varchar2",
        "CHAR": "char",
        "NCHAR": "char",
        "DATE": "date",
        "RAW": "raw",
        "BLOB": "blob",
        "CLOB": "clob",
        "NCLOB": "clob",
        "LONG": "long",
        "LONG RAW": "long raw",
        "BINARY_FLOAT": "binary_float",
        "BINARY_DOUBLE": "binary_double",
        "BOOLEAN": "boolean",
    }
    return {"type": simple.get(base, "unknown")}


def _names(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("("):
        text = text[1 : text.rfind(")")]
    return [ident(p.split()[0]) for p in split_top(text)]


def apply_ddl(schema: TableSchema, sql: str) -> DdlResult:
    """Apply one DDL statement to ``schema`` in place."""
    text = sql.strip().rstrip(";")
    head = text.upper()
    if re.match(r"^\s*(TRUNCATE|DROP)\s+TABLE\b", head):
        return DdlResult(changed=True, rewrite=True, truncate=True, note=head.split()[0].lower())
    m = _ALTER.match(text)
    if not m:
        return DdlResult(note="not a column change: ignored")
    action = m[1].strip()
    up = action.upper()
    if up.startswith("ADD"):
        body = action[3:].strip()
        defs = split_top(body[1 : body.rfind(")")] if body.startswith("(") else body)
        added = []
        for d in defs:
            name, _, rest = (
                d.partition(" ") if not d.startswith('"') else (d[: d.index('"', 1) + 1], "", d[d.index('"', 1) + 1 :])
            )
            if name.upper() in ("CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
                continue
            added += schema.merge_columns([{"name": ident(name), **type_spec(rest), "nullable": True}])
        return DdlResult(changed=bool(added), note=f"added {added}")
    rename = re.match(rf"^RENAME\s+COLUMN\s+({_IDENT})\s+TO\s+({_IDENT})\s*$", action, re.IGNORECASE)
    if rename:
        done = schema.rename(ident(rename[1]), ident(rename[2]))
        return DdlResult(changed=done, rewrite=done, note=f"renamed {ident(rename[1])} to {ident(rename[2])}")
    drop = re.match(
        r"^(?:DROP|SET\s+UNUSED)\s+(?:COLUMN\s+)?(.*?)(?:\s+CASCADE.*|\s+CHECKPOINT.*)?$",
        action,
        re.IGNORECASE | re.DOTALL,
    )
    if drop:
        names = _names(drop[1])
        gone = [n for n in names if schema.drop(n)]
        return DdlResult(changed=bool(gone), note=f"dropped {gone}")
    return DdlResult(note="not a column change: ignored")
