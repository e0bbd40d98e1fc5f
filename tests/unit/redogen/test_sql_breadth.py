"""The SQL compiler's wider statement set, each end to end: compile, generate, replicate.

Every script of ``tests/scenarios/sql/`` is compiled and replicated; the output must equal
redogen's expected output (the reference check, ``reference_check --sql-dir tests/scenarios/sql``,
compares the same scripts with the reference OpenLogReplicator). The other tests pin the
compiler's semantics of each statement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from redogen_helpers import pipeline_missing, row_payloads, run_checked

from replicator.redogen import compile_sql, load_sql
from replicator.redogen.encode import convert_text, decode_text, encode_text

SQL_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "sql"
SCRIPTS = sorted(SQL_DIR.glob("*.sql"))


@pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_sql_scenarios_replicate_as_expected(tmp_path: Path, script: Path) -> None:
    run_checked(load_sql(script), tmp_path)


# -- database character set ---------------------------------------------------------------------


@pytest.mark.parametrize("charset_id", [1, 11, 31, 46, 178, 871, 873])
def test_text_decodes_to_what_encodes_back_to_the_same_bytes(charset_id: int) -> None:
    raw = bytes(range(256))
    assert encode_text(decode_text(raw, charset_id), charset_id) == raw


def test_client_conversion_replaces_what_the_set_lacks() -> None:
    assert convert_text("naïve", 1) == b"na?ve"
    assert convert_text("naïve", 31) == b"na\xefve"
    assert convert_text("\udca5x", 1) == b"\xa5x"  # a byte passed through stays


def test_charset_tag_stores_cast_bytes_as_they_are(tmp_path: Path) -> None:
    sc = load_sql(SQL_DIR / "us7ascii-passthrough.sql")
    assert sc.nls_charset == "US7ASCII"
    rows = row_payloads(run_checked(sc, tmp_path))
    # OLR decodes a 7-bit set by the low 7 bits of each byte: A5 78 A5 5F -> "%x%_"
    assert rows[0]["after"]["NAME"] == "%x%_" and rows[1]["after"]["NOTE"] == "na?ve"
    assert rows[3]["after"]["NOTE"] == "updated: 's7s"


def test_charset_tag_words_that_are_no_character_set_are_ignored() -> None:
    sc = compile_sql("-- @TAG rac ddl\nCREATE TABLE T (id NUMBER PRIMARY KEY);\nINSERT INTO T VALUES (1);\nCOMMIT;\n")
    assert sc.nls_charset == "AL32UTF8"


def test_value_too_large_counts_database_bytes() -> None:
    notes: list[Any] = []
    sc = compile_sql(
        "-- @TAG US7ASCII\nCREATE TABLE T (id NUMBER PRIMARY KEY, s VARCHAR2(3));\n"
        "INSERT INTO T VALUES (1, 'äöü');\nINSERT INTO T VALUES (2, 'äöüß');\nCOMMIT;\n",
        warnings=notes,
    )
    assert [e.values for e in sc.timeline if e.op == "insert"] == [{"ID": 1, "S": "???"}]
    assert "ORA-12899" in notes[0]


# -- INSERT ... SELECT, MERGE ------------------------------------------------------------------

TABLES = """
CREATE TABLE T (id NUMBER PRIMARY KEY, name VARCHAR2(20), val NUMBER);
CREATE TABLE S (id NUMBER PRIMARY KEY, name VARCHAR2(20), val NUMBER);
CREATE TABLE L (id NUMBER PRIMARY KEY, doc CLOB);
ALTER TABLE T ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
"""


def timeline(sql: str, **kw: Any) -> list[tuple[Any, ...]]:
    sc = compile_sql(TABLES + sql, **kw)
    return [(e.op, e.table, e.key, e.values, e.rows) for e in sc.timeline]


def test_insert_select_is_one_array_insert() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'r' || LEVEL, LEVEL * 10 FROM dual CONNECT BY LEVEL <= 3;
INSERT INTO S (id, name) SELECT id + 10, UPPER(name) FROM T WHERE id >= 2 ORDER BY id DESC;
INSERT INTO S (id, val) SELECT MAX(id) + 100, COUNT(*) FROM T;
INSERT INTO L SELECT id, name FROM T WHERE id < 3;
INSERT INTO S SELECT * FROM T WHERE 1 = 0;
COMMIT;
""")
    assert got[0] == (
        "insert_many",
        "T",
        None,
        None,
        [{"ID": 1, "NAME": "r1", "VAL": 10}, {"ID": 2, "NAME": "r2", "VAL": 20}, {"ID": 3, "NAME": "r3", "VAL": 30}],
    )
    assert got[1][0] == "insert_many" and got[1][4] == [{"ID": 13, "NAME": "R3"}, {"ID": 12, "NAME": "R2"}]
    assert got[2] == ("insert", "S", None, {"ID": 103, "VAL": 3}, None)  # one row: an ordinary insert
    assert [g[0] for g in got[3:]] == ["insert", "insert", "commit"]  # a LOB table: no array insert


def test_insert_select_union_all_and_partitions() -> None:
    sc = compile_sql("""
CREATE TABLE P (id NUMBER PRIMARY KEY, v VARCHAR2(5)) PARTITION BY RANGE (id)
    (PARTITION p1 VALUES LESS THAN (10), PARTITION p2 VALUES LESS THAN (MAXVALUE));
INSERT INTO P SELECT 1, 'a' FROM dual UNION ALL SELECT 2, 'b' FROM dual UNION ALL SELECT 20, 'c' FROM dual;
COMMIT;
""")
    assert [(e.op, e.table, len(e.rows or [])) for e in sc.timeline] == [
        ("insert_many", "P:P1", 2),
        ("insert", "P:P2", 0),
        ("commit", None, 0),
    ]


def test_merge_updates_matches_and_inserts_the_rest() -> None:
    got = timeline("""
INSERT INTO T VALUES (1, 'a', 1);
INSERT INTO T VALUES (2, 'b', 2);
INSERT INTO S VALUES (2, 'B', 20);
INSERT INTO S VALUES (3, 'C', 30);
MERGE INTO T t USING S s ON (t.id = s.id)
  WHEN MATCHED THEN UPDATE SET t.val = t.val + s.val
  WHEN NOT MATCHED THEN INSERT (id, name) VALUES (s.id, LOWER(s.name));
COMMIT;
""")
    assert got[4:] == [
        ("update", "T", {"ID": 2}, {"VAL": 22}, None),
        ("insert", "T", None, {"ID": 3, "NAME": "c"}, None),
        ("commit", None, None, None, None),
    ]
    notes: list[str] = []
    compile_sql(
        TABLES
        + """
INSERT INTO T VALUES (1, 'a', 1);
MERGE INTO T USING (SELECT 1 AS id FROM dual UNION ALL SELECT 1 FROM dual) s ON (T.id = s.id)
  WHEN MATCHED THEN UPDATE SET val = 5;
""",
        warnings=notes,
    )
    assert "ORA-30926" in notes[0]


# -- PL/SQL ------------------------------------------------------------------------------------


def test_handlers_catch_the_failing_statement_only() -> None:
    got = timeline("""
INSERT INTO T VALUES (1, 'a', 1);
BEGIN
  INSERT INTO T VALUES (2, 'b', 2);
  INSERT INTO T VALUES (1, 'dup', 0);
EXCEPTION
  WHEN DUP_VAL_ON_INDEX THEN
    UPDATE T SET val = SQLCODE WHERE id = 1;
END;
/
BEGIN
  UPDATE T SET val = 0;
  RAISE TOO_MANY_ROWS;
END;
/
COMMIT;
""")
    assert [(g[0], g[2] or g[3]) for g in got] == [
        ("insert", {"ID": 1, "NAME": "a", "VAL": 1}),
        ("insert", {"ID": 2, "NAME": "b", "VAL": 2}),
        ("update", {"ID": 1}),
        ("commit", None),
    ]
    assert got[2][3] == {"VAL": -1}


def test_cursor_loops_read_the_rows_of_before_the_loop() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, NULL, LEVEL FROM dual CONNECT BY LEVEL <= 3;
DECLARE
  CURSOR c IS SELECT id, val FROM T ORDER BY id DESC;
  v_sum NUMBER := 0;
BEGIN
  FOR r IN (SELECT id FROM T) LOOP
    INSERT INTO T VALUES (r.id + 10, 'copy', NULL);
  END LOOP;
  FOR r IN c LOOP
    v_sum := v_sum + r.val;
  END LOOP;
  SELECT COUNT(*) INTO v_sum FROM T WHERE name = 'copy';
  UPDATE T SET val = v_sum WHERE id = 1;
END;
/
""")
    assert [g[3]["ID"] for g in got if g[0] == "insert"] == [11, 12, 13]
    assert got[-1][3] == {"VAL": 3}


def test_forall_insert_is_one_array_insert_and_select_into_errors() -> None:
    got = timeline("""
DECLARE
  TYPE t_n IS TABLE OF NUMBER INDEX BY PLS_INTEGER;
  v t_n;
  x NUMBER;
BEGIN
  FOR i IN 1..3 LOOP
    v(i) := i * 2;
  END LOOP;
  FORALL i IN 1..v.COUNT INSERT INTO T (id, val) VALUES (v(i), i);
  BEGIN
    SELECT val INTO x FROM T WHERE id > 0;
  EXCEPTION
    WHEN TOO_MANY_ROWS THEN x := -1;
  END;
  UPDATE T SET val = x WHERE id = 2;
END;
/
""")
    assert got[0] == ("insert_many", "T", None, None, [{"ID": 2, "VAL": 1}, {"ID": 4, "VAL": 2}, {"ID": 6, "VAL": 3}])
    assert got[1] == ("update", "T", {"ID": 2}, {"VAL": -1}, None)


def test_empty_lobs_are_not_null_and_top_level_selects_are_skipped() -> None:
    got = timeline("""
SELECT COUNT(*) FROM T GROUP BY name;
INSERT INTO L VALUES (1, EMPTY_CLOB());
INSERT INTO L VALUES (2, '');
COMMIT;
""")
    assert [g[3] for g in got[:2]] == [{"ID": 1, "DOC": "EMPTY_CLOB()"}, {"ID": 2, "DOC": None}]
    notes: list[str] = []
    compile_sql(TABLES + "INSERT INTO T VALUES (1, EMPTY_CLOB(), 1);\n", warnings=notes)
    assert "ORA-00932" in notes[0]


def test_sequences_indexes_and_constraints() -> None:
    notes: list[str] = []
    sc = compile_sql(
        """
CREATE SEQUENCE s_id START WITH 100 INCREMENT BY 10;
CREATE TABLE C (id NUMBER PRIMARY KEY, code VARCHAR2(5) UNIQUE, n NUMBER CHECK (n >= 0),
                p NUMBER REFERENCES C(id), CONSTRAINT c_u UNIQUE (n, p));
CREATE INDEX c_i ON C (n, UPPER(code)) TABLESPACE users;
ALTER TABLE C ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
INSERT INTO C VALUES (s_id.NEXTVAL, 'a', 1, NULL);
INSERT INTO C VALUES (s_id.NEXTVAL, 'a', 2, NULL);
INSERT INTO C VALUES (s_id.NEXTVAL, 'b', -1, NULL);
INSERT INTO C (id, code, n) SELECT s_id.NEXTVAL, 'c' || LEVEL, LEVEL + 5 FROM dual CONNECT BY LEVEL <= 2;
UPDATE C SET n = s_id.CURRVAL WHERE code = 'a';
COMMIT;
""",
        warnings=notes,
    )
    got = [(e.op, e.values, e.rows) for e in sc.timeline]
    # a refused statement still used its sequence value (110, 120), as Oracle's sequences do
    assert got == [
        ("insert", {"ID": 100, "CODE": "a", "N": 1, "P": None}, None),
        ("insert_many", None, [{"ID": 130, "CODE": "c1", "N": 6}, {"ID": 140, "CODE": "c2", "N": 7}]),
        ("update", {"N": 140}, None),
        ("commit", None, None),
    ]
    assert "ORA-00001" in notes[0] and "ORA-02290" in notes[1]


def test_rowtype_records_and_forall_of_records() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'n' || LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 3;
DECLARE
  TYPE t_rows IS TABLE OF T%ROWTYPE;
  v t_rows;
  r T%ROWTYPE;
BEGIN
  SELECT * BULK COLLECT INTO v FROM T ORDER BY id DESC;
  FORALL i IN 1..v.COUNT INSERT INTO S VALUES v(i);
  r.id := 99;
  r.name := v(1).name;
  INSERT INTO S VALUES r;
END;
/
""")
    assert got[1][0] == "insert_many" and [r["ID"] for r in got[1][4]] == [3, 2, 1]
    assert got[2][3] == {"ID": 99, "NAME": "n3", "VAL": None}


def test_execute_immediate_session_settings_and_log_switches() -> None:
    got = timeline("""
ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD';
INSERT INTO T VALUES (1, 'a', 1);
COMMIT WRITE NOWAIT;
ALTER SYSTEM SWITCH LOGFILE;
LOCK TABLE T IN EXCLUSIVE MODE;
BEGIN
  EXECUTE IMMEDIATE 'TRUNCATE TABLE T';
  EXECUTE IMMEDIATE 'INSERT INTO T VALUES (2, ''b'', 2)';
  COMMIT;
END;
/
""")
    assert [g[0] for g in got] == ["insert", "commit", "switch", "truncate", "insert", "commit"]


def test_subqueries_rowcount_and_returning() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'n' || LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 5;
INSERT INTO S SELECT id, name, val * 10 FROM T WHERE id IN (2, 4);
DELETE FROM T WHERE id IN (SELECT id FROM S);
UPDATE T SET val = (SELECT MAX(val) FROM S) WHERE id = 1;
UPDATE S SET val = (SELECT t.val FROM T t WHERE t.id = S.id - 1) WHERE EXISTS (SELECT 1 FROM T WHERE T.id = S.id + 1);
DECLARE
  v_id NUMBER;
BEGIN
  UPDATE T SET name = 'x' WHERE id = 42;
  IF SQL%ROWCOUNT = 0 THEN
    INSERT INTO T (id, name) VALUES (42, 'new') RETURNING id * 2 INTO v_id;
  END IF;
  UPDATE T SET val = v_id WHERE id = 42;
END;
/
""")
    assert [(g[0], g[2], g[3]) for g in got[2:]] == [
        ("delete", {"ID": 2}, None),
        ("delete", {"ID": 4}, None),
        ("update", {"ID": 1}, {"VAL": 40}),
        ("update", {"ID": 2}, {"VAL": 40}),
        ("update", {"ID": 4}, {"VAL": 3}),
        ("insert", None, {"ID": 42, "NAME": "new"}),
        ("update", {"ID": 42}, {"VAL": 84}),
    ]


def test_joins_and_group_by() -> None:
    sc = compile_sql("""
CREATE TABLE T (id NUMBER PRIMARY KEY, grp VARCHAR2(5), val NUMBER);
CREATE TABLE G (grp VARCHAR2(5) PRIMARY KEY, label VARCHAR2(20));
CREATE TABLE R (id NUMBER PRIMARY KEY, label VARCHAR2(20), total NUMBER);
INSERT INTO T SELECT LEVEL, 'g' || MOD(LEVEL, 3), LEVEL FROM dual CONNECT BY LEVEL <= 7;
INSERT INTO G VALUES ('g1', 'one');
INSERT INTO G VALUES ('g2', 'two');
INSERT INTO R SELECT t.id, g.label, t.val FROM T t JOIN G g ON g.grp = t.grp WHERE t.id < 6 ORDER BY t.id;
INSERT INTO R (id, label) SELECT 100 + t.id, g.label FROM T t LEFT JOIN G g ON g.grp = t.grp WHERE t.grp = 'g0';
INSERT INTO R SELECT 200 + MIN(id), grp, SUM(val) FROM T GROUP BY grp HAVING COUNT(*) > 2;
INSERT INTO R (id, total) SELECT 300, COUNT(*) FROM T a, G b WHERE a.grp = b.grp;
COMMIT;
""")
    rows = [e.rows or [e.values] for e in sc.timeline if e.op.startswith("insert")]
    assert [r["ID"] for r in rows[3]] == [1, 2, 4, 5] and rows[3][1]["LABEL"] == "two"
    assert rows[4] == [{"ID": 103, "LABEL": None}, {"ID": 106, "LABEL": None}]
    assert rows[5] == [{"ID": 201, "LABEL": "g1", "TOTAL": 12}]  # groups g0 (2 rows), g2 (2) fail HAVING
    assert rows[6] == [{"ID": 300, "TOTAL": 5}]


def test_user_defined_exceptions() -> None:
    got = timeline("""
INSERT INTO T VALUES (1, 'a', 1);
DECLARE
  e_dup EXCEPTION;
  PRAGMA EXCEPTION_INIT(e_dup, -1);
  e_mine EXCEPTION;
BEGIN
  BEGIN
    INSERT INTO T VALUES (1, 'b', 2);
  EXCEPTION WHEN e_dup THEN UPDATE T SET val = 10 WHERE id = 1;
  END;
  BEGIN
    RAISE e_mine;
  EXCEPTION WHEN e_mine THEN INSERT INTO T VALUES (2, 'c', 2);
  END;
END;
/
""")
    assert [(g[0], g[2] or g[3]) for g in got[1:]] == [
        ("update", {"ID": 1}),
        ("insert", {"ID": 2, "NAME": "c", "VAL": 2}),
    ]


def test_rows_keep_their_place_through_key_updates_and_rollbacks() -> None:
    sc = compile_sql("""
CREATE TABLE K (id NUMBER PRIMARY KEY, val NUMBER);
INSERT INTO K SELECT LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 4;
COMMIT;
DELETE FROM K WHERE id = 2;
UPDATE K SET id = 10 WHERE id = 1;
ROLLBACK;
UPDATE K SET id = 20 WHERE id = 3;
UPDATE K SET val = 0;
COMMIT;
""")
    # a full scan keeps the rows' order: the updated key stays in its place, a rolled-back delete too
    assert [e.key for e in sc.timeline if e.op == "update"][-4:] == [{"ID": 1}, {"ID": 2}, {"ID": 20}, {"ID": 4}]


def test_reference_check_lists_rac_scenarios_on_one_thread() -> None:
    from replicator.redogen.reference_check import matrix

    names = [c.name for c in matrix(quick=True, seeds=0, sql_dirs=(), rac_single=True)]
    assert "rac-interleaved-v19-b512-threads1" in names and "rac-interleaved-v19-b512" not in names


def test_case_statement() -> None:
    got = timeline("""
BEGIN
  FOR i IN 1..3 LOOP
    CASE MOD(i, 3)
      WHEN 1 THEN INSERT INTO T VALUES (i, 'one', NULL);
      WHEN 2 THEN INSERT INTO T VALUES (i, CASE WHEN i > 1 THEN 'two' END, NULL);
      ELSE NULL;
    END CASE;
  END LOOP;
END;
/
""")
    assert [g[3] for g in got] == [{"ID": 1, "NAME": "one", "VAL": None}, {"ID": 2, "NAME": "two", "VAL": None}]


def test_dictionary_views_answer_the_checks_before_ddl() -> None:
    got = timeline("""
INSERT INTO T VALUES (1, 'a', 1);
COMMIT;
DECLARE
  v_n NUMBER;
BEGIN
  SELECT COUNT(*) INTO v_n FROM user_tab_columns WHERE table_name = 'T' AND column_name = 'EMAIL';
  IF v_n = 0 THEN
    EXECUTE IMMEDIATE 'ALTER TABLE T ADD (email VARCHAR2(40))';
  END IF;
  SELECT COUNT(*) INTO v_n FROM user_tables WHERE table_name = 'T';
  UPDATE T SET email = 'n=' || v_n WHERE id = 1;
  COMMIT;
END;
/
""")
    assert [g[0] for g in got] == ["insert", "commit", "add_column", "update", "commit"]
    assert got[3][3] == {"EMAIL": "n=1"}


@pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")
def test_setup_rows_are_preloaded_without_redo(tmp_path: Path) -> None:
    from replicator.redogen.final_state import FinalState

    sc = compile_sql("""
CREATE TABLE P (id NUMBER PRIMARY KEY, v VARCHAR2(10));
BEGIN
  FOR i IN 1..3 LOOP
    INSERT INTO P VALUES (i, 'v' || i);
  END LOOP;
END;
/
BEGIN DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_START: 1'); END;
/
UPDATE P SET v = 'new' WHERE id = 2;
DELETE FROM P WHERE id = 3;
COMMIT;
""")
    assert [p["values"] for p in sc.preload] == [{"ID": 1, "V": "v1"}, {"ID": 2, "V": "v2"}, {"ID": 3, "V": "v3"}]
    state = FinalState(sc)
    sc.timeline = list(state.watch(sc.timeline))
    rows = row_payloads(run_checked(sc, tmp_path))
    assert [r["op"] for r in rows] == ["u", "d"] and rows[1]["before"] == {"ID": 3, "V": "v3"}
    assert state.rows("P") == [{"ID": 1, "V": "v1"}, {"ID": 2, "V": "new"}]


def test_explicit_cursors() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'n' || LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 5;
DECLARE
  CURSOR c IS SELECT id, name FROM T ORDER BY id DESC;
  v_id NUMBER;
  v_name VARCHAR2(20);
BEGIN
  OPEN c;
  LOOP
    FETCH c INTO v_id, v_name;
    EXIT WHEN c%NOTFOUND;
    IF v_id > 3 THEN
      INSERT INTO S VALUES (v_id, v_name, c%ROWCOUNT);
    END IF;
  END LOOP;
  CLOSE c;
END;
/
""")
    assert [g[3] for g in got[1:]] == [{"ID": 5, "NAME": "n5", "VAL": 1}, {"ID": 4, "NAME": "n4", "VAL": 2}]


def test_local_functions() -> None:
    got = timeline("""
DECLARE
  FUNCTION price(p_id NUMBER, p_rate NUMBER) RETURN NUMBER IS
    v NUMBER := 0;
  BEGIN
    IF p_id > 2 THEN
      RETURN p_id * p_rate;
    END IF;
    RETURN v;
  END;
  FUNCTION label RETURN VARCHAR2 IS
  BEGIN
    RETURN 'fixed';
  END label;
BEGIN
  FOR i IN 1..3 LOOP
    INSERT INTO T VALUES (i, label, price(i, 1.5));
  END LOOP;
END;
/
""")
    assert [g[3] for g in got] == [
        {"ID": 1, "NAME": "fixed", "VAL": 0},
        {"ID": 2, "NAME": "fixed", "VAL": 0},
        {"ID": 3, "NAME": "fixed", "VAL": "4.5"},
    ]


def test_cursor_parameters() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'n' || LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 5;
DECLARE
  CURSOR c(p_min NUMBER, p_max NUMBER) IS SELECT id FROM T WHERE id BETWEEN p_min AND p_max ORDER BY id;
  v_id NUMBER;
BEGIN
  FOR r IN c(2, 3) LOOP
    UPDATE T SET val = 0 WHERE id = r.id;
  END LOOP;
  OPEN c(5, 9);
  FETCH c INTO v_id;
  CLOSE c;
  DELETE FROM T WHERE id = v_id;
END;
/
""")
    assert [(g[0], g[2]) for g in got[1:]] == [("update", {"ID": 2}), ("update", {"ID": 3}), ("delete", {"ID": 5})]


def test_right_and_full_outer_joins() -> None:
    sc = compile_sql("""
CREATE TABLE A (id NUMBER PRIMARY KEY, k NUMBER);
CREATE TABLE B (k NUMBER PRIMARY KEY, label VARCHAR2(10));
CREATE TABLE R (id NUMBER PRIMARY KEY, a_id NUMBER, label VARCHAR2(10));
INSERT INTO A VALUES (1, 10);
INSERT INTO A VALUES (2, 20);
INSERT INTO B VALUES (20, 'twenty');
INSERT INTO B VALUES (30, 'thirty');
INSERT INTO R SELECT ROWNUM, a.id, b.label FROM A a RIGHT OUTER JOIN B b ON b.k = a.k;
INSERT INTO R SELECT 10 + ROWNUM, a.id, b.label FROM A a FULL JOIN B b ON b.k = a.k;
COMMIT;
""")
    rows = [e.rows or [e.values] for e in sc.timeline if e.op.startswith("insert")]
    # RIGHT: B's rows each once, NULLs where no A row matches
    assert rows[-2] == [{"ID": 1, "A_ID": 2, "LABEL": "twenty"}, {"ID": 2, "A_ID": None, "LABEL": "thirty"}]
    # FULL: every A row (NULL label without a match), then the B rows no A row matched
    assert rows[-1] == [
        {"ID": 11, "A_ID": 1, "LABEL": None},
        {"ID": 12, "A_ID": 2, "LABEL": "twenty"},
        {"ID": 13, "A_ID": None, "LABEL": "thirty"},
    ]


def test_execute_immediate_binds_and_into() -> None:
    got = timeline("""
DECLARE
  v_n NUMBER;
  v_name VARCHAR2(20);
  TYPE t_ids IS TABLE OF NUMBER;
  v_ids t_ids := t_ids();
BEGIN
  EXECUTE IMMEDIATE 'INSERT INTO T (id, name, val) VALUES (:1, :2, :1)' USING 1, 'a:b', 7;
  EXECUTE IMMEDIATE 'INSERT INTO T VALUES (:id, ''x:y'', :v)' USING IN 2, 5;
  EXECUTE IMMEDIATE 'SELECT COUNT(*) FROM T WHERE val > :lim' INTO v_n USING 4;
  EXECUTE IMMEDIATE 'SELECT name FROM T WHERE id = :1' INTO v_name USING v_n - 1;
  EXECUTE IMMEDIATE 'SELECT id FROM T ORDER BY id DESC' BULK COLLECT INTO v_ids;
  EXECUTE IMMEDIATE 'BEGIN UPDATE T SET val = :a + :a WHERE id = :b; END;' USING v_ids(1), 1;
  INSERT INTO T VALUES (3, v_name, v_n);
END;
/
""")
    assert [(g[0], g[2], g[3]) for g in got] == [
        ("insert", None, {"ID": 1, "NAME": "a:b", "VAL": 7}),
        ("insert", None, {"ID": 2, "NAME": "x:y", "VAL": 5}),
        ("update", {"ID": 1}, {"VAL": 4}),
        ("insert", None, {"ID": 3, "NAME": "a:b", "VAL": 2}),
    ]
    with pytest.raises(Exception, match="ORA-01008"):
        compile_sql(TABLES + "BEGIN EXECUTE IMMEDIATE 'DELETE FROM T WHERE id = :1'; END;\n/\n", strict=True)


def test_setup_ddl_before_the_start_marker() -> None:
    sc = compile_sql("""
CREATE TABLE A (id NUMBER, name VARCHAR2(10), old NUMBER, tmp DATE);
CREATE TABLE GONE (id NUMBER PRIMARY KEY);
CREATE TABLE E (id NUMBER PRIMARY KEY, val VARCHAR2(5));
INSERT INTO A VALUES (2, 'b', 1, NULL);
INSERT INTO A VALUES (1, 'a', 2, NULL);
INSERT INTO E VALUES (1, 'x');
ALTER TABLE A ADD CONSTRAINT a_pk PRIMARY KEY (id);
ALTER TABLE A ADD (extra NUMBER DEFAULT 5);
ALTER TABLE A DROP COLUMN old;
ALTER TABLE A RENAME COLUMN name TO label;
ALTER TABLE A MODIFY (label VARCHAR2(20) NOT NULL, tmp NUMBER);
ALTER TABLE A ADD CONSTRAINT a_uq UNIQUE (label);
TRUNCATE TABLE E;
DROP TABLE GONE PURGE;
BEGIN DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_START'); END;
/
INSERT INTO A (id, label) VALUES (3, 'c');
INSERT INTO A (id, label) VALUES (4, 'a');
INSERT INTO A (id, label) VALUES (1, 'z');
UPDATE A SET tmp = 7 WHERE id = 2;
COMMIT;
""")
    (a, e) = sc.tables
    assert [(c.name, c.type, c.nullable) for c in a.columns] == [
        ("ID", "NUMBER", False),
        ("LABEL", "VARCHAR2(20)", False),
        ("TMP", "NUMBER", True),
        ("EXTRA", "NUMBER", True),
    ]
    assert a.primary_key == ["ID"] and e.name == "E"
    assert [item["values"] for item in sc.preload] == [
        {"ID": 2, "LABEL": "b", "TMP": None, "EXTRA": None},
        {"ID": 1, "LABEL": "a", "TMP": None, "EXTRA": None},
    ]
    assert [(ev.op, ev.key, ev.values) for ev in sc.timeline] == [
        ("insert", None, {"ID": 3, "LABEL": "c", "EXTRA": 5}),
        ("update", {"ID": 2}, {"TMP": 7}),
        ("commit", None, None),
    ]


def test_out_parameters_defaults_and_nested_subprograms() -> None:
    got = timeline("""
DECLARE
  v_next NUMBER := 0;
  v_total NUMBER := 10;
  TYPE t_nums IS TABLE OF NUMBER INDEX BY PLS_INTEGER;
  v_nums t_nums;
  PROCEDURE bump(p_step IN NUMBER, p_total IN OUT NUMBER, p_next OUT NUMBER, p_tag VARCHAR2 DEFAULT 'd') IS
    v_local NUMBER := 1;
    FUNCTION twice(x NUMBER) RETURN NUMBER IS
    BEGIN
      RETURN x * 2;
    END;
    PROCEDURE put(p_id NUMBER) IS
    BEGIN
      INSERT INTO T VALUES (p_id, p_tag, twice(p_id));
    END put;
  BEGIN
    p_total := p_total + p_step;
    p_next := p_total + v_local;
    put(p_next);
  END bump;
  PROCEDURE fail_after(p_out OUT NUMBER) IS
  BEGIN
    p_out := 99;
    RAISE NO_DATA_FOUND;
  END;
BEGIN
  bump(5, v_total, v_next);
  bump(1, v_total, v_nums(3), 'x');
  BEGIN
    fail_after(v_next);
  EXCEPTION
    WHEN NO_DATA_FOUND THEN NULL;
  END;
  INSERT INTO T VALUES (v_next + 100, 'end', v_nums(3));
END;
/
""")
    assert [g[3] for g in got] == [
        {"ID": 16, "NAME": "d", "VAL": 32},
        {"ID": 17, "NAME": "x", "VAL": 34},
        {"ID": 116, "NAME": "end", "VAL": 17},
    ]


def test_record_types() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'n' || LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 3;
DECLARE
  TYPE r_pair IS RECORD (k NUMBER, label VARCHAR2(20) := 'none', amount T.val%TYPE DEFAULT 7);
  TYPE t_pairs IS TABLE OF r_pair INDEX BY PLS_INTEGER;
  v r_pair;
  w r_pair;
  v_all t_pairs;
BEGIN
  v.k := 50;
  w := v;
  w.k := 51;
  INSERT INTO S VALUES v;
  INSERT INTO S VALUES w;
  SELECT id + 60, name, val INTO v FROM T WHERE id = 2;
  INSERT INTO S VALUES v;
  SELECT id + 70, name, val BULK COLLECT INTO v_all FROM T ORDER BY id;
  INSERT INTO S VALUES (v_all(3).k, v_all(3).label, v_all.COUNT);
END;
/
""")
    assert [g[3] for g in got[1:]] == [
        {"ID": 50, "NAME": "none", "VAL": 7},
        {"ID": 51, "NAME": "none", "VAL": 7},
        {"ID": 62, "NAME": "n2", "VAL": 2},
        {"ID": 73, "NAME": "n3", "VAL": 3},
    ]


def test_named_arguments() -> None:
    got = timeline("""
DECLARE
  v_out NUMBER;
  PROCEDURE add_row(p_id NUMBER, p_name VARCHAR2 DEFAULT 'dflt', p_val NUMBER DEFAULT 0, p_echo OUT NUMBER) IS
  BEGIN
    INSERT INTO T VALUES (p_id, p_name, p_val);
    p_echo := p_id * 10;
  END;
BEGIN
  add_row(p_echo => v_out, p_val => 5, p_id => 1);
  add_row(2, p_name => 'two', p_echo => v_out);
  add_row(v_out, 'x', p_echo => v_out);
END;
/
""")
    assert [g[3] for g in got] == [
        {"ID": 1, "NAME": "dflt", "VAL": 5},
        {"ID": 2, "NAME": "two", "VAL": 0},
        {"ID": 20, "NAME": "x", "VAL": 0},
    ]


def test_subprogram_declarations() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'n' || LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 4;
DECLARE
  v_hits NUMBER := 0;
  v_tmp NUMBER := 500;
  PROCEDURE copy_range(p_lo NUMBER, p_hi NUMBER) IS
    CURSOR c IS SELECT id, name FROM T WHERE id BETWEEN p_lo AND p_hi ORDER BY id;
    TYPE t_ids IS TABLE OF NUMBER;
    v_ids t_ids := t_ids();
    e_none EXCEPTION;
    v_tmp NUMBER := 0;
  BEGIN
    FOR r IN c LOOP
      v_ids.EXTEND;
      v_ids(v_ids.COUNT) := r.id;
      INSERT INTO S VALUES (r.id, r.name, v_ids.COUNT);
    END LOOP;
    v_tmp := v_ids.COUNT;
    v_hits := v_hits + v_tmp;
    IF v_tmp = 0 THEN
      RAISE e_none;
    END IF;
  EXCEPTION
    WHEN e_none THEN
      INSERT INTO S VALUES (100 + p_lo, 'none', 0);
  END;
BEGIN
  copy_range(2, 3);
  copy_range(9, 9);
  INSERT INTO S VALUES (200, 'total', v_hits + v_tmp);
END;
/
""")
    assert [g[3] for g in got[1:]] == [
        {"ID": 2, "NAME": "n2", "VAL": 1},
        {"ID": 3, "NAME": "n3", "VAL": 2},
        {"ID": 109, "NAME": "none", "VAL": 0},
        {"ID": 200, "NAME": "total", "VAL": 502},
    ]


def test_join_using() -> None:
    sc = compile_sql("""
CREATE TABLE A (id NUMBER PRIMARY KEY, k NUMBER);
CREATE TABLE B (k NUMBER PRIMARY KEY, label VARCHAR2(10));
CREATE TABLE R (id NUMBER PRIMARY KEY, k NUMBER, label VARCHAR2(10));
INSERT INTO A VALUES (1, 10);
INSERT INTO A VALUES (2, 20);
INSERT INTO B VALUES (20, 'twenty');
INSERT INTO R SELECT a.id, k, b.label FROM A a JOIN B b USING (k);
INSERT INTO R SELECT 10 + id, k, label FROM A LEFT JOIN B USING (k) ORDER BY id;
COMMIT;
""")
    rows = [e.rows or [e.values] for e in sc.timeline if e.op.startswith("insert")]
    assert rows[-2] == [{"ID": 2, "K": 20, "LABEL": "twenty"}]
    assert rows[-1] == [{"ID": 11, "K": 10, "LABEL": None}, {"ID": 12, "K": 20, "LABEL": "twenty"}]


def test_execute_immediate_out_binds_and_returning() -> None:
    got = timeline("""
DECLARE
  v_id NUMBER;
  v_twice NUMBER;
  v_sum NUMBER := 1;
BEGIN
  EXECUTE IMMEDIATE 'INSERT INTO T (id, name) VALUES (:1, :2) RETURNING id * 2 INTO :3' USING 4, 'r' RETURNING INTO v_twice;
  EXECUTE IMMEDIATE 'UPDATE T SET val = :v WHERE id = :i RETURNING id INTO :o' USING 9, 4, OUT v_id;
  EXECUTE IMMEDIATE 'BEGIN :s := :s + :a; END;' USING IN OUT v_sum, 5;
  INSERT INTO T VALUES (v_id + v_twice, 'sum', v_sum);
END;
/
""")
    assert [(g[0], g[3]) for g in got] == [
        ("insert", {"ID": 4, "NAME": "r"}),
        ("update", {"VAL": 9}),
        ("insert", {"ID": 12, "NAME": "sum", "VAL": 6}),
    ]


def test_more_functions() -> None:
    got = timeline("""
INSERT INTO T VALUES (1, DECODE(2, 1, 'one', 2, 'two', 'other') || DECODE(NULL, NULL, '-n') || DECODE(3, 1, 'x'), 0);
INSERT INTO T VALUES (2, NVL2(NULL, 'a', 'b') || NVL2(1, 'c', 'd') || NULLIF('x', 'x') || NULLIF('y', 'z'),
                      GREATEST(3, 7, 5) * 100 + LEAST(4, 2, 9) * 10 + SIGN(-3));
INSERT INTO T VALUES (3, TO_CHAR(INSTR('abcabc', 'c')) || INSTR('abcabc', 'c', 1, 2) || INSTR('abcabc', 'c', -1)
                      || INSTR('abc', 'z'), POWER(2, 10));
""")
    assert [g[3] for g in got] == [
        {"ID": 1, "NAME": "two-n", "VAL": 0},
        {"ID": 2, "NAME": "bcy", "VAL": 719},
        {"ID": 3, "NAME": "3660", "VAL": 1024},
    ]


def test_create_table_physical_clauses() -> None:
    sc = compile_sql("""
CREATE TABLE P1 (id NUMBER PRIMARY KEY, doc CLOB, pic BLOB, n NCLOB)
    TABLESPACE users PCTFREE 10 NOLOGGING SEGMENT CREATION IMMEDIATE STORAGE (INITIAL 64K NEXT 1M)
    LOB (doc) STORE AS BASICFILE doc_seg (TABLESPACE users DISABLE STORAGE IN ROW CHUNK 8192)
    LOB (pic, n) STORE AS SECUREFILE (ENABLE STORAGE IN ROW) PARALLEL 2;
CREATE TABLE P2 (id NUMBER PRIMARY KEY, v NUMBER) TABLESPACE users
    PARTITION BY RANGE (v) (PARTITION a VALUES LESS THAN (10), PARTITION b VALUES LESS THAN (MAXVALUE))
    ENABLE ROW MOVEMENT;
INSERT INTO P1 (id) VALUES (1);
""")
    assert [c.type for c in sc.tables[0].columns] == [
        "NUMBER",
        "CLOB BASICFILE DISABLE STORAGE IN ROW",
        "BLOB",
        "NCLOB",
    ]
    assert len(sc.tables[1].partitions) == 2
    with pytest.raises(Exception, match="COMPRESS"):
        compile_sql("CREATE TABLE P3 (id NUMBER) COMPRESS;\n")


def test_dictionary_only_ddl_commits() -> None:
    got = timeline("""
INSERT INTO T VALUES (1, 'a', 1);
COMMENT ON TABLE T IS 'a; table';
GRANT SELECT ON T TO PUBLIC;
INSERT INTO T VALUES (2, 'b', 2);
REVOKE SELECT ON T FROM PUBLIC;
""")
    assert [g[0] for g in got] == ["insert", "commit", "insert", "commit"]


def test_set_operators() -> None:
    got = timeline("""
INSERT INTO T (id) SELECT 3 FROM dual UNION SELECT 1 FROM dual UNION SELECT 3 FROM dual;
INSERT INTO S (id) SELECT id + 10 FROM T UNION ALL SELECT 20 FROM dual MINUS SELECT 13 FROM dual;
INSERT INTO S (id) SELECT LEVEL + 100 FROM dual CONNECT BY LEVEL <= 4 INTERSECT SELECT id + 100 FROM T;
""")
    assert [[r["ID"] for r in g[4]] for g in got] == [[1, 3], [11, 20], [101, 103]]


def test_continue_and_loop_labels() -> None:
    got = timeline("""
DECLARE
  n NUMBER := 0;
BEGIN
  <<outer>>
  FOR i IN 1..4 LOOP
    CONTINUE WHEN i = 2;
    <<inner>>
    FOR j IN 1..3 LOOP
      CONTINUE outer WHEN i = 3;
      EXIT outer WHEN i = 4 AND j = 2;
      INSERT INTO T VALUES (i * 10 + j, 'x', NULL);
    END LOOP inner;
  END LOOP outer;
  LOOP
    n := n + 1;
    CONTINUE WHEN n < 3;
    INSERT INTO T VALUES (100 + n, 'y', NULL);
    EXIT WHEN n >= 4;
  END LOOP;
END;
/
""")
    assert [g[3]["ID"] for g in got] == [11, 12, 13, 41, 103, 104]


def test_stored_procedures_and_functions() -> None:
    got = timeline("""
CREATE OR REPLACE FUNCTION twice(p NUMBER) RETURN NUMBER AS
BEGIN
  RETURN p * 2;
END twice;
/
CREATE OR REPLACE PROCEDURE add_row(p_id IN NUMBER, p_name IN VARCHAR2 DEFAULT 'p') AS
  v NUMBER;
BEGIN
  v := twice(p_id);
  INSERT INTO T VALUES (p_id, p_name, v);
END;
/
EXEC add_row(1);
BEGIN
  add_row(2, 'b');
END;
/
INSERT INTO T VALUES (3, 'f', twice(21));
COMMIT;
DROP PROCEDURE add_row;
""")
    assert [(g[0], g[3]) for g in got] == [
        ("insert", {"ID": 1, "NAME": "p", "VAL": 2}),
        ("insert", {"ID": 2, "NAME": "b", "VAL": 4}),
        ("insert", {"ID": 3, "NAME": "f", "VAL": 42}),
        ("commit", None),
    ]


def test_create_table_as_select_in_the_setup() -> None:
    sc = compile_sql(
        TABLES
        + """
INSERT INTO T VALUES (1, 'a', 10);
INSERT INTO T VALUES (2, 'bb', NULL);
CREATE TABLE C NOLOGGING AS SELECT id, name, val * 2 AS dbl, 'k' || id AS tag FROM T WHERE id > 0;
ALTER TABLE C ADD CONSTRAINT c_pk PRIMARY KEY (id);
BEGIN DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_START'); END;
/
UPDATE C SET dbl = dbl + 1 WHERE id = 1;
COMMIT;
"""
    )
    c = next(t for t in sc.tables if t.name == "C")
    assert [(col.name, col.type) for col in c.columns] == [
        ("ID", "NUMBER"),
        ("NAME", "VARCHAR2(20)"),
        ("DBL", "NUMBER"),
        ("TAG", "VARCHAR2(2)"),
    ]
    assert [i["values"] for i in sc.preload if i["table"] == "C"] == [
        {"ID": 1, "NAME": "a", "DBL": 20, "TAG": "k1"},
        {"ID": 2, "NAME": "bb", "DBL": None, "TAG": "k2"},
    ]
    assert [(e.op, e.key, e.values) for e in sc.timeline][0] == ("update", {"ID": 1}, {"DBL": 21})


def test_update_set_column_list_from_a_subquery() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'n' || LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 3;
INSERT INTO S VALUES (2, 'src', 50);
UPDATE T t SET (name, val) = (SELECT s.name || '!', s.val + t.id FROM S s WHERE s.id = t.id), id = id WHERE id >= 2;
""")
    assert [(g[0], g[2], g[3]) for g in got[2:]] == [
        ("update", {"ID": 2}, {"NAME": "src!", "VAL": 52, "ID": 2}),
        ("update", {"ID": 3}, {"NAME": None, "VAL": None, "ID": 3}),
    ]


def test_with_queries() -> None:
    got = timeline("""
INSERT INTO T SELECT LEVEL, 'n' || LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 4;
INSERT INTO S (id, val) WITH big AS (SELECT id, val FROM T WHERE val > 2), two AS (SELECT id FROM big WHERE id < 4)
  SELECT b.id + 10, b.val FROM big b WHERE b.id IN (SELECT id FROM two);
BEGIN
  FOR r IN (WITH x AS (SELECT MAX(id) m FROM T) SELECT m FROM x) LOOP
    UPDATE T SET val = 0 WHERE id = r.m;
  END LOOP;
END;
/
""")
    assert got[1][3] == {"ID": 13, "VAL": 3} and got[2][2] == {"ID": 4}


def test_add_months_and_last_day() -> None:
    sc = compile_sql("""
CREATE TABLE D (id NUMBER PRIMARY KEY, d DATE);
INSERT INTO D VALUES (1, ADD_MONTHS(DATE '2024-01-31', 1));
INSERT INTO D VALUES (2, ADD_MONTHS(TO_DATE('2024-02-29 10:30:00', 'YYYY-MM-DD HH24:MI:SS'), 12));
INSERT INTO D VALUES (3, LAST_DAY(DATE '2023-02-10'));
INSERT INTO D VALUES (4, ADD_MONTHS(DATE '2024-03-15', -3));
""")
    assert [e.values["D"] for e in sc.timeline if e.op == "insert"] == [
        "2024-02-29 00:00:00",
        "2025-02-28 10:30:00",
        "2023-02-28 00:00:00",
        "2023-12-15 00:00:00",
    ]


def test_set_row_lengthb_and_setup_rename() -> None:
    sc = compile_sql("""
CREATE TABLE OLD_T (id NUMBER PRIMARY KEY, name VARCHAR2(20), val NUMBER);
INSERT INTO OLD_T VALUES (1, 'a', 1);
ALTER TABLE OLD_T RENAME TO T;
BEGIN DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_START'); END;
/
DECLARE
  r T%ROWTYPE;
BEGIN
  SELECT * INTO r FROM T WHERE id = 1;
  r.name := 'é';
  r.val := LENGTHB(r.name) * 10 + LENGTH(r.name);
  UPDATE T SET ROW = r WHERE id = 1;
END;
/
""")
    assert [t.name for t in sc.tables] == ["T"]
    assert [(e.op, e.key, e.values) for e in sc.timeline][0] == ("update", {"ID": 1}, {"ID": 1, "NAME": "é", "VAL": 21})


def test_to_number_with_a_format() -> None:
    got = timeline("""
INSERT INTO T VALUES (1, 'a', TO_NUMBER('1,234.5', '9,999.9'));
INSERT INTO T VALUES (2, 'b', TO_NUMBER('$12', '$99') + TO_NUMBER('7-', '9MI'));
""")
    assert [g[3]["VAL"] for g in got] == ["1234.5", 5]
    with pytest.raises(Exception, match="format"):
        compile_sql(TABLES + "INSERT INTO T VALUES (3, 'c', TO_NUMBER('1', 'XX'));\n", strict=True)
