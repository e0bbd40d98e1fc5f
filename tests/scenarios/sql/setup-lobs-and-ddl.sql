-- The setup inserts rows with LOB values and changes its tables (ALTER TABLE, a constraint, a
-- dropped and a truncated table) before the start marker: the rows and the changed tables are
-- there when the redo starts, and only the changes after it are printed.
SET SERVEROUTPUT ON
CREATE TABLE T_SLOB (
    id    NUMBER,
    note  VARCHAR2(30),
    doc   CLOB,
    bin   BLOB,
    old   NUMBER
);
CREATE TABLE T_SGONE (id NUMBER PRIMARY KEY);
CREATE TABLE T_SEMPTY (id NUMBER PRIMARY KEY, v VARCHAR2(10));
INSERT INTO T_SEMPTY VALUES (1, 'x');
BEGIN
    FOR i IN 1..6 LOOP
        INSERT INTO T_SLOB VALUES (i, 'row ' || i, RPAD('doc ' || i || ' ', 40 * i, 'abc'),
                                   HEXTORAW(RPAD('0A0B', 8 * i, 'C1')), i);
    END LOOP;
    INSERT INTO T_SLOB (id, note, doc, bin) VALUES (7, 'empty', EMPTY_CLOB(), EMPTY_BLOB());
    INSERT INTO T_SLOB (id, note) VALUES (8, 'nulls');
    COMMIT;
END;
/
ALTER TABLE T_SLOB ADD CONSTRAINT t_slob_pk PRIMARY KEY (id);
ALTER TABLE T_SLOB DROP COLUMN old;
ALTER TABLE T_SLOB RENAME COLUMN note TO label;
ALTER TABLE T_SLOB MODIFY (label VARCHAR2(40));
ALTER TABLE T_SLOB ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
ALTER TABLE T_SEMPTY ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
TRUNCATE TABLE T_SEMPTY;
DROP TABLE T_SGONE PURGE;

DECLARE
    v_start_scn NUMBER;
BEGIN
    SELECT current_scn INTO v_start_scn FROM v$database;
    DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_START: ' || v_start_scn);
END;
/

UPDATE T_SLOB SET label = 'updated ' || id WHERE id IN (2, 7, 8);
DELETE FROM T_SLOB WHERE id IN (3, 7);
UPDATE T_SLOB SET doc = 'new doc' WHERE id = 4;
INSERT INTO T_SEMPTY VALUES (1, 'again');
COMMIT;
DELETE FROM T_SLOB WHERE id = 5;
ROLLBACK;
DELETE FROM T_SLOB WHERE id = 6;
COMMIT;

DECLARE
    v_end_scn NUMBER;
BEGIN
    SELECT current_scn INTO v_end_scn FROM v$database;
    DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_END: ' || v_end_scn);
END;
/
EXIT
