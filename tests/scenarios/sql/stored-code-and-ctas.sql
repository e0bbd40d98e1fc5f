-- Stored code, a table copied by CREATE TABLE AS SELECT in the setup, BASICFILE LOB storage
-- set by a LOB clause, and the newer PL/SQL forms (records, OUT parameters, dynamic SQL with
-- binds, labelled loops) writing the replicated changes.
SET SERVEROUTPUT ON
CREATE TABLE T_SRC (id NUMBER PRIMARY KEY, name VARCHAR2(20), qty NUMBER);
INSERT INTO T_SRC SELECT LEVEL, 'src' || LEVEL, LEVEL * 3 FROM dual CONNECT BY LEVEL <= 6;
COMMIT;
CREATE TABLE T_COPY AS SELECT id, name, qty, RPAD('c' || id, 10) AS tag FROM T_SRC WHERE id <= 4;
ALTER TABLE T_COPY ADD CONSTRAINT t_copy_pk PRIMARY KEY (id);
ALTER TABLE T_COPY ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
ALTER TABLE T_SRC ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
CREATE TABLE T_DOCS (id NUMBER PRIMARY KEY, doc CLOB) TABLESPACE users
    LOB (doc) STORE AS BASICFILE (ENABLE STORAGE IN ROW);
ALTER TABLE T_DOCS ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
CREATE OR REPLACE FUNCTION f_tag(p_id NUMBER) RETURN VARCHAR2 AS
BEGIN
    RETURN 'tag' || p_id;
END;
/
CREATE OR REPLACE PROCEDURE p_move(p_id IN NUMBER, p_moved OUT NUMBER) AS
    TYPE r_row IS RECORD (id NUMBER, name VARCHAR2(20), qty NUMBER);
    v r_row;
BEGIN
    SELECT id, name, qty INTO v FROM T_SRC WHERE id = p_id;
    EXECUTE IMMEDIATE 'UPDATE T_COPY SET qty = :1, tag = :2 WHERE id = :3' USING v.qty + 100, f_tag(v.id), v.id;
    p_moved := SQL%ROWCOUNT;
END;
/

DECLARE
    v_start_scn NUMBER;
BEGIN
    SELECT current_scn INTO v_start_scn FROM v$database;
    DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_START: ' || v_start_scn);
END;
/

DECLARE
    v_moved NUMBER;
    v_total NUMBER := 0;
BEGIN
    <<rows_loop>>
    FOR i IN 1..6 LOOP
        CONTINUE WHEN i = 2;
        p_move(i, v_moved);
        v_total := v_total + v_moved;
        EXIT rows_loop WHEN v_total >= 3;
    END LOOP;
    INSERT INTO T_DOCS VALUES (1, 'moved ' || v_total);
    COMMIT;
END;
/
INSERT INTO T_COPY SELECT s.id, s.name, s.qty, 'new' FROM T_SRC s LEFT JOIN T_COPY c USING (id) WHERE c.id IS NULL;
UPDATE T_DOCS SET doc = RPAD('x', 5000, 'y') WHERE id = 1;
DELETE FROM T_COPY WHERE id IN (SELECT id FROM T_SRC WHERE qty > 15 MINUS SELECT 6 FROM dual);
COMMIT;

DECLARE
    v_end_scn NUMBER;
BEGIN
    SELECT current_scn INTO v_end_scn FROM v$database;
    DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_END: ' || v_end_scn);
END;
/
EXIT
