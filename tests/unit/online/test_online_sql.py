"""Static checks of the SQL: select lists match the checkpoint arrays, everything reads AS OF SCN.

None of this SQL has run against a database here (none is available); these checks keep
the statements and the SQL*Plus script consistent with the checkpoint format.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from replicator.online import sql
from replicator.schema.rows import SYS_ROW_FIELDS, XDB_TOKSUF_FIELDS, Kind, row_fields

SCRIPT = Path(__file__).resolve().parents[3] / "deploy" / "sql" / "create-schema-checkpoint.sql"


def select_list(statement: str) -> list[str]:
    """The columns of the first SELECT, split at top-level commas."""
    body = statement[statement.index("SELECT") + 6 :]
    depth, start, columns = 0, 0, []
    for i, ch in enumerate(body):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and (ch == "," or body.startswith(" FROM ", i)):
            columns.append(body[start:i].strip())
            start = i + 1
            if ch != ",":
                break
    return columns


def column_count(key: str) -> int:
    return sum(2 if kind is Kind.X128 else 1 for name, kind in row_fields(key) if name != "single")


def dictionary_statements() -> list[tuple[str, str]]:
    found = [
        ("sys-ts", sql.TS),
        ("xdb-ttset", sql.XDB_TTSET),
        ("sys-user", sql.USERS),
        ("sys-obj", sql.OBJECTS_OF_USER),
        ("sys-obj", sql.OBJECTS_NAMED),
        ("sys-ecol", sql.ECOL_11_OF_USER),
        ("sys-ecol", sql.ECOL_11_OF_OBJECT),
    ]
    for key in sql.DETAIL_KEYS:
        found += [(key, sql.DETAILS_OF_USER[key]), (key, sql.DETAILS_OF_OBJECT[key])]
    found += [(prefix + "SUF", sql.xdb_statement(prefix, "SUF")) for prefix in sql.XDB_PREFIXES]
    return found


@pytest.mark.parametrize(("key", "statement"), dictionary_statements())
def test_dictionary_statements(key: str, statement: str) -> None:
    columns = select_list(statement)
    assert len(columns) == column_count(key), (key, columns)
    assert columns[0].startswith("ROWIDTOCHAR(")
    tables = re.findall(r"(?:FROM|JOIN) ((?:SYS|XDB)\.[A-Z$#_0-9]+)( AS OF SCN :scn)?", statement)
    assert tables
    for table, as_of in tables:
        assert as_of, f"{table} is not read AS OF SCN in: {statement}"
    assert "'" not in statement.replace("'Oracle%Database%'", "")  # values are binds, never literals


def test_names_that_cannot_be_bound_are_checked() -> None:
    with pytest.raises(ValueError):
        sql.xdb_statement("xdb-xnm", "X; DROP TABLE T")
    with pytest.raises(ValueError):
        sql.grant_probe("SYS.OBJ$ WHERE 1=1 --")
    assert sql.flashback_probe("SYS.OBJ$") == "SELECT 1 FROM SYS.OBJ$ AS OF SCN :scn WHERE 1 = 0"


def test_sqlplus_script_writes_every_checkpoint_field() -> None:
    text = SCRIPT.read_text()
    header = [
        "database",
        "scn",
        "resetlogs",
        "activation",
        "time",
        "seq",
        "offset",
        "big-endian",
        "context",
        "con-id",
        "con-name",
        "db-timezone",
        "db-recovery-file-dest",
        "db-block-checksum",
        "log-archive-dest",
        "log-archive-format",
        "nls-character-set",
        "nls-nchar-character-set",
        "supp-log-db-primary",
        "supp-log-db-all",
    ]
    for key in header:
        assert f"'{key}' VALUE" in text, key
    for key in ("online-redo", "incarnations", "users", "schema-scn"):
        assert f'"{key}":' in text, key
    for key, fields in {**SYS_ROW_FIELDS, **XDB_TOKSUF_FIELDS}.items():
        assert f"array('{key}'" in text, key
        for name, _ in fields:
            if name != "row-id":
                assert f"''{name}'' VALUE" in text, (key, name)
    assert "NOT RUN AGAINST A DATABASE" in text
    assert "' AS OF SCN ' || scn" in text  # every dictionary table is read AS OF the SCN
