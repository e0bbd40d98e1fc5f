"""The SQL script compiler: expressions, statement semantics and its coded errors (no shared folder needed)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from redogen_helpers import pipeline_missing, run_pipeline

from replicator.redogen import compile_sql, generate
from replicator.redogen.commands import redogen_main
from replicator.redogen.sqlexpr import EXPRESSION, RUNTIME, SYNTAX, OraTime, SqlError, SqlParser, evaluate, tokenize
from replicator.redogen.sqlscript import split_script


def ev(text: str, **env: Any) -> Any:
    p = SqlParser(tokenize(text))
    node = p.expr()
    assert p.tok.kind == "eof", text

    def lookup(name: str, line: int) -> Any:
        if name.lower() in env:
            return env[name.lower()]
        raise SqlError(f"no {name}", RUNTIME, line)

    return evaluate(node, lookup)


@pytest.mark.parametrize(
    "text, want",
    [
        ("1 + 2 * 3", Decimal(7)),
        ("-99999999999999999999999999999999999999", Decimal("-99999999999999999999999999999999999999")),
        ("'row_' || LPAD(7, 4, '0')", "row_0007"),
        ("RPAD('ab', 5, 'xy')", "abxyx"),
        ("LPAD('abcdef', 3)", "abc"),
        ("MOD(7, 2)", Decimal(1)),
        ("'a' || NULL || 'b'", "ab"),
        ("'it''s'", "it's"),
        ("''", None),
        ("NULL + 1", None),
        ("CHR(65) || CHR(10)", "A\n"),
        ("HEXTORAW('DEADBEEF')", b"\xde\xad\xbe\xef"),
        ("UTL_RAW.CAST_TO_VARCHAR2(HEXTORAW('616263'))", "abc"),
        ("'x' || 0.5", "x.5"),
        ("NVL(NULL, 3)", Decimal(3)),
        ("CASE WHEN 1 = 2 THEN 'a' ELSE 'b' END", "b"),
        ("SUBSTR('abcdef', 2, 3)", "bcd"),
        ("ROUND(2.345, 2)", Decimal("2.35")),
        ("1.5e3", Decimal("1.5e3")),
    ],
)
def test_expression_values(text: str, want: Any) -> None:
    assert ev(text) == want


@pytest.mark.parametrize(
    "text, want",
    [
        ("id BETWEEN 2 AND 4", True),
        ("id NOT BETWEEN 2 AND 4", False),
        ("MOD(id, 2) = 0", False),
        ("id IN (1, 3)", True),
        ("id = 3 AND name IS NULL", True),
        ("id = 1 OR name = 'x'", None),
        ("NOT (name = 'x')", None),
        ("id > 2 OR name = 'x'", True),
        ("'abc' LIKE 'a%'", True),
        ("id <> 3", False),
        ("id = '3'", True),
    ],
)
def test_predicates_have_three_valued_logic(text: str, want: Any) -> None:
    assert ev(text, id=Decimal(3), name=None) is want


def test_datetime_and_interval_literals() -> None:
    ts = ev("TO_TIMESTAMP('2025-06-15 10:30:00.123456789', 'YYYY-MM-DD HH24:MI:SS.FF9')")
    assert isinstance(ts, OraTime) and ts.text() == "2025-06-15 10:30:00.123456789"
    assert ev("TO_DATE('15-JUN-2025', 'DD-MON-YYYY')").text(0) == "2025-06-15 00:00:00"
    assert ev("TO_TIMESTAMP_TZ('2025-01-01 10:00:00 +02:00', 'YYYY-MM-DD HH24:MI:SS TZH:TZM')").tz == 120
    assert ev("DATE '2025-01-31' + 1").text(0) == "2025-02-01 00:00:00"
    assert ev("INTERVAL '1-2' YEAR TO MONTH").text() == "1-2"
    assert ev("INTERVAL '3 04:05:06.5' DAY TO SECOND").text() == "3 04:05:06.500000000"


@pytest.mark.parametrize(
    "text, code",
    [
        ("SYSDATE", EXPRESSION),
        ("FOO(1)", EXPRESSION),
        ("EMPTY_CLOB(1)", EXPRESSION),
        ("1 / 0", RUNTIME),
        ("TO_DATE('2025-13-01', 'YYYY-MM-DD')", RUNTIME),
        ("TO_NUMBER('abc')", RUNTIME),
        ("(1 + ", SYNTAX),
    ],
)
def test_expression_errors_are_coded(text: str, code: int) -> None:
    with pytest.raises(SqlError) as err:
        ev(text)
    assert err.value.code == code and "line 1" in err.value.message


TABLE = """
CREATE TABLE T (id NUMBER PRIMARY KEY, name VARCHAR2(20), val NUMBER(6,2), d DATE);
ALTER TABLE T ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
"""


def ops(sql: str) -> list[tuple[Any, ...]]:
    sc = compile_sql(TABLE + sql)
    return [(e.op, e.session, e.table, e.key, e.values, e.name, e.thread) for e in sc.timeline]


def test_set_based_statements_use_the_current_rows() -> None:
    got = ops("""
BEGIN
  FOR i IN 1..4 LOOP
    INSERT INTO T VALUES (i, 'r' || i, i * 1.005, NULL);
  END LOOP;
  COMMIT;
END;
/
UPDATE T SET val = val + 1, name = UPPER(name) WHERE MOD(id, 2) = 0;
DELETE FROM T WHERE id BETWEEN 3 AND 9 OR name = 'R2';
COMMIT;
""")
    assert [g[0] for g in got] == ["insert"] * 4 + [
        "commit",
        "update",
        "update",
        "delete",
        "delete",
        "delete",
        "commit",
    ]
    assert got[0][4] == {"ID": 1, "NAME": "r1", "VAL": "1.01", "D": None}  # NUMBER(6,2) rounds
    assert got[5][3:5] == ({"ID": 2}, {"VAL": "3.01", "NAME": "R2"})
    assert [g[3] for g in got[7:10]] == [{"ID": 2}, {"ID": 3}, {"ID": 4}]


def test_rollbacks_restore_the_rows() -> None:
    got = ops("""
INSERT INTO T VALUES (1, 'a', 1, TO_DATE('2025-01-01', 'YYYY-MM-DD'));
COMMIT;
UPDATE T SET val = 5 WHERE id = 1;
ROLLBACK;
SAVEPOINT s1;
INSERT INTO T VALUES (2, 'b', 2, NULL);
ROLLBACK TO s1;
UPDATE T SET val = val * 10 WHERE id >= 1;
COMMIT;
""")
    assert got[0][4]["D"] == "2025-01-01 00:00:00"
    assert [g[0] for g in got] == [
        "insert",
        "commit",
        "update",
        "rollback",
        "savepoint",
        "insert",
        "rollback_to",
        "update",
        "commit",
    ]
    assert got[7][3:5] == ({"ID": 1}, {"VAL": 10})  # 1 * 10: the rolled-back 5 is gone, row 2 too


def test_autonomous_procedures_run_in_their_own_session() -> None:
    got = ops("""
DECLARE
  PROCEDURE side(p_id NUMBER) IS
    PRAGMA AUTONOMOUS_TRANSACTION;
  BEGIN
    INSERT INTO T (id) VALUES (p_id);
    COMMIT;
  END;
BEGIN
  INSERT INTO T (id, name) VALUES (1, 'main');
  side(2);
  COMMIT;
END;
/
""")
    assert [(g[0], g[1]) for g in got] == [("insert", 1), ("insert", 2), ("commit", 2), ("commit", 1)]
    assert got[1][4] == {"ID": 2}  # only the listed columns


def test_rac_nodes_and_substitution_variables() -> None:
    sc = compile_sql(
        TABLE
        + """
-- @NODE1
INSERT INTO T VALUES (1, 'a&b', 1, NULL);
INSERT INTO T VALUES (2, 'x', 1, NULL);
COMMIT;
-- @NODE2
DELETE FROM T WHERE id = 2;
COMMIT;
"""
    )
    assert sc.threads == 2
    got = [(e.op, e.thread, e.key or e.values) for e in sc.timeline]
    # SQL*Plus asks for &b: that INSERT never ran
    assert got == [
        ("insert", 1, {"ID": 2, "NAME": "x", "VAL": 1, "D": None}),
        ("commit", 1, None),
        ("delete", 2, {"ID": 2}),
        ("commit", 2, None),
    ]


def test_ddl_after_the_start_is_an_event() -> None:
    got = ops("""
INSERT INTO T VALUES (1, 'a', 1, NULL);
ALTER TABLE T ADD (email VARCHAR2(50));
UPDATE T SET email = 'e' WHERE id = 1;
ALTER TABLE T DROP COLUMN email;
COMMIT;
""")
    assert [g[0] for g in got] == ["insert", "commit", "add_column", "update", "commit", "drop_column"]


def test_identity_values_come_from_per_instance_caches() -> None:
    sc = compile_sql("""
CREATE TABLE I (id NUMBER GENERATED ALWAYS AS IDENTITY, name VARCHAR2(10), b BOOLEAN,
                CONSTRAINT i_pk PRIMARY KEY (id));
ALTER TABLE I ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
-- @NODE1
INSERT INTO I (name, b) VALUES ('a', TRUE);
-- @NODE2
INSERT INTO I (name) VALUES ('b');
-- @NODE1
INSERT INTO I (name) VALUES ('c');
ALTER TABLE I ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
ALTER TABLE I ADD (n NUMBER DEFAULT 7);
INSERT INTO I (name) VALUES ('d');
COMMIT;
""")
    ids = [e.values["ID"] for e in sc.timeline if e.op == "insert"]
    assert ids == [1, 21, 2, 3]  # RAC NOORDER: each instance takes 20 values at a time
    assert [e.values for e in sc.timeline if e.op == "insert"][-1] == {"ID": 3, "NAME": "d", "N": 7}
    # 23ai redo of a table with BOOLEAN columns carried no supplemental columns (reference boolean-type)
    assert sc.tables[0].supplemental == "none"


@pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")
def test_modify_column_replicates(tmp_path: Path) -> None:
    sc = compile_sql("""
CREATE TABLE M (id NUMBER PRIMARY KEY, name VARCHAR2(10), amt NUMBER(5,2));
ALTER TABLE M ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
INSERT INTO M VALUES (1, 'short', 1.5);
COMMIT;
ALTER TABLE M MODIFY (name VARCHAR2(40), amt NUMBER(12,4));
INSERT INTO M VALUES (2, 'a much longer name here', 12345.6789);
ALTER TABLE M MODIFY name NOT NULL;
COMMIT;
""")
    assert [e.column for e in sc.timeline if e.op == "modify_column"] == [
        "NAME VARCHAR2(40)",
        "AMT NUMBER(12,4)",
        "NAME VARCHAR2(40) NOT NULL",
    ]
    result = generate(sc, tmp_path)
    assert run_pipeline(result.config) == 0
    assert result.expected is not None and result.output.read_bytes() == result.expected.read_bytes()
    assert b'"AMT":12345.6789' in result.output.read_bytes()
    with pytest.raises(SqlError) as err:
        compile_sql(
            TABLE + "INSERT INTO T VALUES (1, 'abcdef', 1, NULL);\nALTER TABLE T MODIFY name VARCHAR2(3);", strict=True
        )
    assert "ORA-01441" in err.value.message


def test_split_script_handles_sqlplus_and_blocks() -> None:
    chunks = split_script("SET ECHO OFF\n-- @NODE2\nBEGIN\n  NULL;\nEND;\n/\nSELECT 'a;b' FROM dual;\nEXIT\n")
    assert [(c.kind, c.line) for c in chunks] == [
        ("sqlplus", 1),
        ("marker", 2),
        ("plsql", 3),
        ("sql", 7),
        ("sqlplus", 8),
    ]


@pytest.mark.parametrize(
    "sql, code, line",
    [
        ("MERGE INTO T USING dual ON (1 = 1);", SYNTAX, 4),
        ("UPDATE T SET nope = 1;", RUNTIME, 4),
        ("INSERT INTO T VALUES (1, 'a');", RUNTIME, 4),
        ("INSERT INTO T VALUES (1, RPAD('a', 30, 'b'), 1, NULL);", RUNTIME, 4),
        ("INSERT INTO T VALUES (NULL, 'a', 1, NULL);", RUNTIME, 4),
        ("INSERT INTO T VALUES (1, 'a', 1, SYSDATE);", EXPRESSION, 4),
        ("INSERT INTO U VALUES (1);", RUNTIME, 4),
        ("ALTER TABLE T MODIFY (name NUMBER);", SYNTAX, 4),
        ("\nINSERT INTO T VALUES (1, 'a', 1, NULL)", SYNTAX, 5),
    ],
)
def test_statement_errors_name_the_line(sql: str, code: int, line: int) -> None:
    with pytest.raises(SqlError) as err:
        compile_sql(TABLE + sql, strict=True)
    assert err.value.code == code
    assert err.value.message.startswith(f"line {line}:"), err.value.message


def test_refused_statements_are_skipped_like_sqlplus_does() -> None:
    notes: list[str] = []
    sc = compile_sql(
        TABLE
        + """
INSERT INTO T VALUES (1, 'a', 1, NULL);
INSERT INTO T VALUES (1, 'dup', 1, NULL);
BEGIN
  INSERT INTO T VALUES (2, 'b', 1, NULL);
  UPDATE T SET name = NULL, val = 1 / 0 WHERE id = 2;
END;
/
UPDATE T SET val = 2 WHERE id = 1;
COMMIT;
""",
        warnings=notes,
    )
    assert [(e.op, e.key or e.values) for e in sc.timeline] == [
        ("insert", {"ID": 1, "NAME": "a", "VAL": 1, "D": None}),
        ("update", {"ID": 1}),
        ("commit", None),
    ]
    assert len(notes) == 2 and "ORA-00001" in notes[0] and "ORA-01476" in notes[1]


def test_cli_compiles_a_script_and_reports_errors_without_traceback(tmp_path: Path, capsys: Any) -> None:
    good = tmp_path / "good.sql"
    good.write_text(TABLE + "INSERT INTO T VALUES (1, 'a', 1, NULL);\nCOMMIT;\n", encoding="utf-8")
    assert redogen_main([str(good), "-o", str(tmp_path / "out")]) == 0
    result = generate(compile_sql(good.read_text(encoding="utf-8")), tmp_path / "api")
    assert result.expected is not None and '"ID":1' in result.expected.read_text(encoding="utf-8")
    bad = tmp_path / "bad.sql"
    bad.write_text(TABLE + "FLASHBACK TABLE T TO BEFORE DROP;\n", encoding="utf-8")
    assert redogen_main([str(bad), "-o", str(tmp_path / "out2")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ERROR 30380 bad.sql: line 4: statement 'FLASHBACK'") and "Traceback" not in err
    assert redogen_main([str(good), "--schema", str(tmp_path / "none"), "-o", str(tmp_path / "o3")]) == 1
    assert "ERROR 30383" in capsys.readouterr().err


@pytest.mark.parametrize(
    "text, want",
    [
        ("TO_CHAR(7, 'FM000')", "007"),
        ("TO_CHAR(7, '000')", " 007"),
        ("TO_CHAR(1234.5, '9,999.99')", " 1,234.50"),
        ("TO_CHAR(-12.3, 'FM9990.00')", "-12.30"),
        ("TO_CHAR(0.5, '0.9')", " 0.5"),
        ("TO_CHAR(123, '99')", "###"),
        ("TO_CHAR(5, 'FM9999')", "5"),
        ("TO_CHAR(0, '9')", " 0"),
        (
            "TO_CHAR(TO_DATE('2025-06-15 13:05:09', 'YYYY-MM-DD HH24:MI:SS'), 'DD-MON-YYYY HH:MI:SS AM')",
            "15-JUN-2025 01:05:09 PM",
        ),
        (
            "TO_CHAR(TO_TIMESTAMP('2025-06-15 13:05:09.123456', 'YYYY-MM-DD HH24:MI:SS.FF'), 'YYYYMMDD\"T\"HH24MISS.FF3')",
            "20250615T130509.123",
        ),
    ],
)
def test_to_char_format_models(text: str, want: Any) -> None:
    assert ev(text) == want
