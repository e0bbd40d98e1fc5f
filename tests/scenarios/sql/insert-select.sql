-- INSERT ... SELECT: Oracle writes a conventional multi-row insert as array inserts (redo 11.11,
-- QMI: the rows of one block in one change vector); a single row goes as a plain insert (11.2).
CREATE TABLE T_GEN (
    id    NUMBER PRIMARY KEY,
    name  VARCHAR2(40),
    val   NUMBER(10,2),
    note  VARCHAR2(100)
);
CREATE TABLE T_COPY (
    id    NUMBER PRIMARY KEY,
    name  VARCHAR2(40),
    val   NUMBER(10,2),
    note  VARCHAR2(100) DEFAULT 'copied'
);
CREATE TABLE T_WIDE (
    id    NUMBER PRIMARY KEY,
    txt   VARCHAR2(1000)
);
ALTER TABLE T_GEN ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
ALTER TABLE T_WIDE ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
ALTER TABLE T_COPY ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;

-- a row generator: 300 rows, more than one 8 KiB block holds, every third with a NULL
INSERT INTO T_GEN (id, name, val, note)
    SELECT LEVEL, 'row_' || LPAD(LEVEL, 4, '0'), LEVEL * 1.5,
           CASE WHEN MOD(LEVEL, 3) = 0 THEN NULL ELSE RPAD('n', MOD(LEVEL, 50), 'x') END
    FROM dual CONNECT BY LEVEL <= 300;
COMMIT;

-- values over 250 bytes (a 3-byte length in the row format), about a dozen rows per block
INSERT INTO T_WIDE SELECT LEVEL, RPAD('w', 250 + LEVEL * 10, 'z') FROM dual CONNECT BY LEVEL <= 40;
COMMIT;

-- from another table, with WHERE and ORDER BY; NOTE takes its default
INSERT INTO T_COPY (id, name, val)
    SELECT id, UPPER(name), val * 2 FROM T_GEN WHERE MOD(id, 7) = 0 AND id <= 100 ORDER BY id DESC;
-- one row: an ordinary insert
INSERT INTO T_COPY SELECT MAX(id) + 1000, 'max', COUNT(*), NULL FROM T_GEN;
-- UNION ALL of literals
INSERT INTO T_COPY (id, name)
    SELECT 5001, 'a' FROM dual UNION ALL SELECT 5002, 'b' FROM dual UNION ALL SELECT 5003, NULL FROM dual;
COMMIT;

-- rolled back: nothing of it reaches the output
INSERT INTO T_COPY (id, name) SELECT id + 10000, name FROM T_GEN WHERE id <= 20;
ROLLBACK;

-- a savepoint undoes an array insert
INSERT INTO T_COPY (id) SELECT LEVEL + 20000 FROM dual CONNECT BY LEVEL <= 3;
SAVEPOINT s1;
INSERT INTO T_COPY (id) SELECT LEVEL + 30000 FROM dual CONNECT BY LEVEL <= 4;
ROLLBACK TO s1;
UPDATE T_COPY SET val = 1 WHERE id > 20000;
DELETE FROM T_GEN WHERE id > 290;
COMMIT;
