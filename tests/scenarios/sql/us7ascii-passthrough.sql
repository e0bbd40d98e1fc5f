-- @TAG us7ascii
-- A US7ASCII database: bytes cast with UTL_RAW.CAST_TO_VARCHAR2 are stored as they are (Big5
-- text here), a literal's character the set lacks becomes '?' (the client's conversion).
-- OpenLogReplicator decodes a 7-bit set by the low 7 bits of each byte (0xA5 -> '%').
CREATE TABLE T_PASS (
    id    NUMBER PRIMARY KEY,
    name  VARCHAR2(20),
    code  CHAR(6),
    note  VARCHAR2(40)
);
ALTER TABLE T_PASS ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;

INSERT INTO T_PASS VALUES (1, UTL_RAW.CAST_TO_VARCHAR2(HEXTORAW('A578A55F')), 'ab', 'plain');
INSERT INTO T_PASS (id, name, note) VALUES (2, 'caf' || UTL_RAW.CAST_TO_VARCHAR2(HEXTORAW('E9')), 'naïve');
INSERT INTO T_PASS VALUES (3, UTL_RAW.CAST_TO_VARCHAR2(HEXTORAW('80FF7F')), UTL_RAW.CAST_TO_VARCHAR2(HEXTORAW('C9')), NULL);
COMMIT;
UPDATE T_PASS SET note = 'updated: ' || UTL_RAW.CAST_TO_VARCHAR2(HEXTORAW('A7F3B773')) WHERE id = 1;
UPDATE T_PASS SET note = name WHERE name = UTL_RAW.CAST_TO_VARCHAR2(HEXTORAW('80FF7F'));
COMMIT;
DELETE FROM T_PASS WHERE id = 2;
COMMIT;
