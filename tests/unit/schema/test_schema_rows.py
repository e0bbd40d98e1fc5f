"""Dictionary rows: dump_row writes what json.dumps would (its plain-text shortcut included),
parse_row checks as check_value does (its shortcuts for numbers in range and strings)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from replicator.errors import DataError
from replicator.schema.rows import SYS_ROW_FIELDS, Kind, check_value, dump_row, parse_row, row_fields

KEYS = [*SYS_ROW_FIELDS, "xdb-xnmAB", "xdb-xqnZ"]
TEXTS = ["", "APP", 'a"b', "a\\b", "line\nbreak", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xa0", "😀", "%s", "{}"]


def _plain_dump(key: str, row: dict[str, Any]) -> str:
    parts = []
    for name, kind in row_fields(key):
        value = row[name]
        if kind is Kind.X128:
            text = f"[{value & 0xFFFFFFFFFFFFFFFF},{value >> 64}]"
        elif kind in (Kind.STR, Kind.ROWID):
            text = json.dumps(value, ensure_ascii=False)
        else:
            text = str(value)
        parts.append(f'"{name}":{text}')
    return "{" + ",".join(parts) + "}"


@pytest.mark.parametrize("key", KEYS)
def test_dump_row_writes_what_json_dumps_writes(key: str) -> None:
    rnd = random.Random(key)
    for _ in range(300):
        row: dict[str, Any] = {}
        for name, kind in row_fields(key):
            if kind is Kind.X128:
                row[name] = rnd.getrandbits(128)
            elif kind in (Kind.STR, Kind.ROWID):
                row[name] = "".join(rnd.choice(TEXTS) for _ in range(rnd.randint(0, 3)))
            else:
                row[name] = rnd.randint(-(2**31), 2**64 - 1)
        assert dump_row(key, row) == _plain_dump(key, row)


def _checked(key: str, raw: dict[str, Any]) -> object:
    try:
        return parse_row(key, raw, "file")
    except DataError as exc:
        return (exc.code, exc.message)


def _plain_parse(key: str, raw: dict[str, Any]) -> object:
    row = {}
    try:
        for name, kind in row_fields(key):
            if name not in raw:
                if (key, name) == ("sys-tab", "ts"):
                    row[name] = 0
                    continue
                raise DataError(f"file - parse error, field {name} not found in {key}", 20003)
            row[name] = check_value(kind, raw[name], name, "file")
    except DataError as exc:
        return (exc.code, exc.message)
    return row


@pytest.mark.parametrize("key", KEYS)
def test_parse_row_checks_as_check_value_does(key: str) -> None:
    rnd = random.Random(key)
    odd = [-1, 0, 65535, 65536, 2**32, 2**64, -(2**15) - 1, True, None, "x", 1.5, [1, 2], [2**64, 0], "A" * 18]
    for _ in range(300):
        raw: dict[str, Any] = {}
        for name, kind in row_fields(key):
            if rnd.random() < 0.03:
                continue
            if rnd.random() < 0.3:
                raw[name] = rnd.choice(odd)
            elif kind is Kind.X128:
                raw[name] = [rnd.randint(0, 9), 0]
            elif kind is Kind.ROWID:
                raw[name] = "AAAAAAAAAAAAAAAAAA"
            elif kind is Kind.STR:
                raw[name] = rnd.choice(TEXTS)
            else:
                raw[name] = rnd.randint(0, 100)
        assert _checked(key, raw) == _plain_parse(key, raw)
