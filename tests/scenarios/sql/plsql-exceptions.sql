-- EXCEPTION handlers: a failing statement is rolled back alone (Oracle's statement-level
-- rollback) and a handler goes on; an unhandled error undoes the whole block, as SQL*Plus
-- reports it and goes on.
CREATE TABLE T_EXC (
    id    NUMBER PRIMARY KEY,
    name  VARCHAR2(10) NOT NULL,
    n     NUMBER
);
ALTER TABLE T_EXC ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;

INSERT INTO T_EXC VALUES (1, 'one', 1);
COMMIT;

BEGIN
    INSERT INTO T_EXC VALUES (2, 'two', 2);
    INSERT INTO T_EXC VALUES (1, 'dup', 0);
    INSERT INTO T_EXC VALUES (3, 'not run', 3);
EXCEPTION
    WHEN DUP_VAL_ON_INDEX THEN
        UPDATE T_EXC SET n = n + 100 WHERE id = 1;
        COMMIT;
END;
/

DECLARE
    v_n NUMBER;
BEGIN
    FOR i IN 4..7 LOOP
        BEGIN
            INSERT INTO T_EXC VALUES (i, CASE WHEN i = 5 THEN NULL ELSE 'r' || i END, i);
            v_n := 10 / (i - 6);
            UPDATE T_EXC SET n = v_n WHERE id = i;
        EXCEPTION
            WHEN ZERO_DIVIDE THEN
                UPDATE T_EXC SET name = 'div0' WHERE id = i;
            WHEN OTHERS THEN
                DBMS_OUTPUT.PUT_LINE('skipped ' || i || ': ' || SQLERRM);
        END;
    END LOOP;
    BEGIN
        SELECT n INTO v_n FROM T_EXC WHERE id = 99;
    EXCEPTION
        WHEN NO_DATA_FOUND THEN
            INSERT INTO T_EXC VALUES (99, 'none', NULL);
    END;
    COMMIT;
END;
/

-- unhandled: the block's changes are undone
BEGIN
    UPDATE T_EXC SET n = -1 WHERE id = 1;
    RAISE_APPLICATION_ERROR(-20001, 'stop');
END;
/
BEGIN
    DELETE FROM T_EXC WHERE id = 2;
    RAISE NO_DATA_FOUND;
EXCEPTION
    WHEN OTHERS THEN
        ROLLBACK;
        DELETE FROM T_EXC WHERE id = 4;
        COMMIT;
END;
/
