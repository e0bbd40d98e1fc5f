"""Random column types and values for workloads and property tests (seeded, reproducible)."""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

# (type text, weight); BOOLEAN is added for 23 databases only.
TYPE_POOL: list[tuple[str, int]] = [
    ("NUMBER", 6),
    ("NUMBER(10)", 4),
    ("NUMBER(12,2)", 4),
    ("VARCHAR2(40)", 8),
    ("VARCHAR2(200)", 3),
    ("VARCHAR2(10 CHAR)", 2),
    ("CHAR(8)", 2),
    ("NVARCHAR2(20)", 2),
    ("NCHAR(4)", 1),
    ("DATE", 3),
    ("TIMESTAMP(6)", 2),
    ("TIMESTAMP(3) WITH TIME ZONE", 2),
    ("TIMESTAMP WITH LOCAL TIME ZONE", 1),
    ("INTERVAL YEAR(3) TO MONTH", 1),
    ("INTERVAL DAY(3) TO SECOND(6)", 1),
    ("BINARY_FLOAT", 1),
    ("BINARY_DOUBLE", 2),
    ("RAW(32)", 2),
    ("FLOAT(20)", 1),
]
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-"
_SPECIAL = "\"\\/\t\n'é中ü€\x01"


def pick_type(rng: random.Random, v23: bool) -> str:
    """A random column type."""
    pool = TYPE_POOL + ([("BOOLEAN", 1)] if v23 else [])
    return rng.choices([t for t, _ in pool], [w for _, w in pool])[0]


def _text(rng: random.Random, n: int, special: bool = True) -> str:
    chars = [rng.choice(_LETTERS) for _ in range(n)]
    if special and n and rng.random() < 0.1:
        chars[rng.randrange(n)] = rng.choice(_SPECIAL)
    return "".join(chars)


def _size(sql: str) -> int:
    return int(sql.split("(")[1].split(")")[0].split()[0].split(",")[0]) if "(" in sql else 1


def value(rng: random.Random, sql: str, *, nullable: bool = True, null_rate: float = 0.1) -> Any:
    """A random value for a column of type ``sql`` (None for NULL when allowed)."""
    if nullable and rng.random() < null_rate:
        return None
    t = sql.upper()
    if t.startswith("NUMBER(12,2)"):
        return str(Decimal(rng.randrange(-(10**12), 10**12)) / 100)
    if t.startswith("NUMBER(") or t.startswith("INTEGER"):
        return rng.randrange(-(10**9), 10**9)
    if t.startswith(("NUMBER", "FLOAT")):
        r = rng.random()
        if r < 0.5:
            return rng.randrange(-(10**6), 10**12)
        if r < 0.9:
            return str(Decimal(rng.randrange(-(10**15), 10**15)).scaleb(-rng.randrange(0, 10)))
        return rng.choice([0, 1, -1, "0.001", "1e20", "-123456789012345678901234567890.123"])
    if t.startswith(("VARCHAR2", "NVARCHAR2")):
        limit = _size(t) // (4 if "CHAR)" in t else 1)
        return _text(rng, rng.randint(1, max(1, min(limit, 40))))
    if t.startswith(("CHAR", "NCHAR")):
        return _text(rng, rng.randint(1, _size(t)), special=False)
    if t.startswith("DATE"):
        return (
            f"{rng.randint(1950, 2040)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02} "
            f"{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:{rng.randint(0, 59):02}"
        )
    if t.startswith("TIMESTAMP"):
        base = (
            f"{rng.randint(1970, 2037)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02} "
            f"{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:{rng.randint(0, 59):02}.{rng.randint(0, 999999):06}"
        )
        if "WITH TIME ZONE" in t:
            off = rng.choice([0, 60, -300, 330, 600, -720])
            return base + f" {'+' if off >= 0 else '-'}{abs(off) // 60:02}:{abs(off) % 60:02}"
        return base
    if t.startswith("INTERVAL YEAR"):
        sign = rng.choice(["", "-"])
        return f"{sign}{rng.randint(0, 999)}-{rng.randint(0, 11)}"
    if t.startswith("INTERVAL DAY"):
        sign = rng.choice(["", "-"])
        return (
            f"{sign}{rng.randint(0, 999)} {rng.randint(0, 23):02}:{rng.randint(0, 59):02}:"
            f"{rng.randint(0, 59):02}.{rng.randint(0, 999999):06}"
        )
    if t.startswith("BINARY_FLOAT"):
        return float(f"{rng.uniform(-1e6, 1e6):.5g}")
    if t.startswith("BINARY_DOUBLE"):
        return rng.uniform(-1e12, 1e12)
    if t.startswith("RAW"):
        return rng.randbytes(rng.randint(1, _size(t))).hex()
    if t.startswith("BOOLEAN"):
        return rng.random() < 0.5
    raise ValueError(f"no random values for {sql}")
