-- Rows the setup inserts before the start marker are in the table when the redo starts: the
-- replicated part updates and deletes them, and OpenLogReplicator prints only those changes.
SET SERVEROUTPUT ON
DECLARE
    v_n NUMBER;
BEGIN
    SELECT COUNT(*) INTO v_n FROM user_tables WHERE table_name = 'T_SETUP';
    IF v_n > 0 THEN
        EXECUTE IMMEDIATE 'DROP TABLE T_SETUP PURGE';
    END IF;
END;
/
CREATE TABLE T_SETUP (
    id    NUMBER PRIMARY KEY,
    name  VARCHAR2(30),
    qty   NUMBER
);
ALTER TABLE T_SETUP ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
BEGIN
    FOR i IN 1..30 LOOP
        INSERT INTO T_SETUP VALUES (i, 'seed_' || i, i * 2);
    END LOOP;
    COMMIT;
END;
/
INSERT INTO T_SETUP SELECT 100 + LEVEL, 'gen', LEVEL FROM dual CONNECT BY LEVEL <= 5;
COMMIT;

DECLARE
    v_start_scn NUMBER;
BEGIN
    SELECT current_scn INTO v_start_scn FROM v$database;
    DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_START: ' || v_start_scn);
END;
/

UPDATE T_SETUP SET qty = qty + 1 WHERE MOD(id, 10) = 0;
DELETE FROM T_SETUP WHERE id > 103;
INSERT INTO T_SETUP VALUES (31, 'after', 0);
COMMIT;
MERGE INTO T_SETUP t USING (SELECT id FROM T_SETUP WHERE id <= 3) s ON (t.id = s.id)
    WHEN MATCHED THEN UPDATE SET t.name = 'merged';
COMMIT;

DECLARE
    v_end_scn NUMBER;
BEGIN
    SELECT current_scn INTO v_end_scn FROM v$database;
    DBMS_OUTPUT.PUT_LINE('FIXTURE_SCN_END: ' || v_end_scn);
END;
/
EXIT
