-- PL/SQL bulk binds and cursors: FORALL ... INSERT writes one array insert (redo 11.11) of every
-- index's row; BULK COLLECT, collections, cursor FOR loops (over a query or a declared cursor,
-- reading the rows of before the loop) and SELECT ... INTO.
CREATE TABLE T_SRC (
    id    NUMBER PRIMARY KEY,
    name  VARCHAR2(30),
    amt   NUMBER(8,2)
);
CREATE TABLE T_DST (
    id    NUMBER PRIMARY KEY,
    name  VARCHAR2(30),
    amt   NUMBER(8,2)
);
ALTER TABLE T_SRC ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;
ALTER TABLE T_DST ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;

DECLARE
    TYPE t_ids IS TABLE OF NUMBER INDEX BY PLS_INTEGER;
    TYPE t_names IS TABLE OF VARCHAR2(30);
    v_ids   t_ids;
    v_names t_names := t_names();
BEGIN
    FOR i IN 1..40 LOOP
        v_ids(i) := i * 10;
        v_names.EXTEND;
        v_names(v_names.LAST) := 'item_' || i;
    END LOOP;
    FORALL i IN 1..v_ids.COUNT
        INSERT INTO T_SRC (id, name, amt) VALUES (v_ids(i), v_names(i), v_ids(i) / 4);
    COMMIT;
END;
/

DECLARE
    TYPE t_ids IS TABLE OF NUMBER;
    v_ids t_ids;
    v_total NUMBER;
    v_name  T_SRC.name%TYPE;
BEGIN
    SELECT id BULK COLLECT INTO v_ids FROM T_SRC WHERE MOD(id, 40) = 0 ORDER BY id;
    FORALL i IN INDICES OF v_ids
        UPDATE T_SRC SET amt = amt + 1 WHERE id = v_ids(i);
    SELECT SUM(amt), MAX(name) INTO v_total, v_name FROM T_SRC WHERE id <= 100;
    INSERT INTO T_DST VALUES (1, v_name, v_total);
    COMMIT;
END;
/

DECLARE
    CURSOR c_big IS SELECT id, name, amt FROM T_SRC WHERE amt > 90 ORDER BY id DESC;
    v_n NUMBER := 0;
BEGIN
    FOR r IN c_big LOOP
        v_n := v_n + 1;
        INSERT INTO T_DST (id, name, amt) VALUES (1000 + r.id, r.name, r.amt);
        EXIT WHEN v_n >= 3;
    END LOOP;
    FOR r IN (SELECT id, amt FROM T_SRC WHERE id <= 30) LOOP
        DELETE FROM T_SRC WHERE id = r.id;
        INSERT INTO T_DST (id, amt) VALUES (r.id, r.amt * 2);
    END LOOP;
    COMMIT;
END;
/

DECLARE
    CURSOR c_dst IS SELECT id, amt FROM T_DST ORDER BY id;
    TYPE t_ids IS TABLE OF NUMBER;
    v_ids t_ids;
    v_id  NUMBER;
    v_amt NUMBER;
    CURSOR c_src IS SELECT id FROM T_SRC ORDER BY id;
BEGIN
    OPEN c_dst;
    LOOP
        FETCH c_dst INTO v_id, v_amt;
        EXIT WHEN c_dst%NOTFOUND;
        UPDATE T_DST SET amt = NVL(v_amt, 0) + c_dst%ROWCOUNT WHERE id = v_id;
    END LOOP;
    CLOSE c_dst;
    OPEN c_src;
    LOOP
        FETCH c_src BULK COLLECT INTO v_ids LIMIT 15;
        EXIT WHEN v_ids.COUNT = 0;
        FORALL i IN 1..v_ids.COUNT
            DELETE FROM T_SRC WHERE id = v_ids(i) AND MOD(id, 20) = 0;
    END LOOP;
    CLOSE c_src;
    COMMIT;
END;
/
