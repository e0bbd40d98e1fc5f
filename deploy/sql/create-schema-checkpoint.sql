-- create-schema-checkpoint.sql: write the first schema checkpoint for reader.type "offline" or
-- "batch" (the file the online reader would write itself), from a database or a copy of it.
--
-- usage (SQL*Plus or SQLcl, Oracle 12.2 or later, as a user with the grants listed in
-- docs/online-mode.md):
--
--   sqlplus -S user/password@//host:1521/service @create-schema-checkpoint.sql NAME OWNERS [SCN]
--
--   NAME    source[0].name of the config (the file is NAME-chkpt-<scn>.json)
--   OWNERS  the owners of source[0].filter.table, comma separated, exactly as written in the
--           config (each is a regular expression; the checkpoint's "users" must equal them)
--   SCN     the SCN to read the dictionary at; default: the current SCN. Set reader.start-scn
--           to the SCN in the file name.
--
-- The file is written to the current directory; copy it into the state directory. Its "seq"
-- is 0: the reader starts with the first redo log that holds the SCN.
--
-- NOT RUN AGAINST A DATABASE: no Oracle database was available while writing this script.
-- The online reader's statements (replicator/online/sql.py) read the same rows and were tested
-- with recorded rows only; see docs/online-mode.md.

SET ECHO OFF FEEDBACK OFF HEADING OFF PAGESIZE 0 NEWPAGE NONE LINESIZE 32767 LONG 32767
SET TRIMSPOOL ON TRIMOUT ON VERIFY OFF TAB OFF TERMOUT OFF SERVEROUTPUT ON SIZE UNLIMITED FORMAT WRAPPED
WHENEVER SQLERROR EXIT FAILURE
WHENEVER OSERROR EXIT FAILURE

-- An optional third argument: define &3 as empty when it was not given.
COLUMN 3 NEW_VALUE 3 NOPRINT
SELECT NULL "3" FROM DUAL WHERE ROWNUM = 0;

DEFINE db_name = '&1'
DEFINE owners = '&2'

COLUMN scn NEW_VALUE scn NOPRINT
SELECT TO_CHAR(NVL(TO_NUMBER('&3'), CURRENT_SCN), 'TM9') scn FROM SYS.V_$DATABASE;

SPOOL &db_name.-chkpt-&scn..json

-- Header: database facts, in the order the reader writes them.
SELECT SUBSTR(j, 1, LENGTH(j) - 1) FROM (SELECT REPLACE(JSON_OBJECT(
  'database' VALUE '&db_name',
  'scn' VALUE TO_NUMBER('&scn'),
  'resetlogs' VALUE (SELECT RESETLOGS_ID FROM SYS.V_$DATABASE_INCARNATION WHERE STATUS = 'CURRENT'),
  'activation' VALUE d.ACTIVATION#,
  'time' VALUE 0, 'seq' VALUE 0, 'offset' VALUE 0,
  'big-endian' VALUE CASE WHEN p.ENDIAN_FORMAT = 'Big' THEN 1 ELSE 0 END,
  'context' VALUE NVL(SYS_CONTEXT('USERENV', 'CDB_NAME'), SYS_CONTEXT('USERENV', 'DB_NAME')),
  'con-id' VALUE TO_NUMBER(SYS_CONTEXT('USERENV', 'CON_ID')),
  'con-name' VALUE SYS_CONTEXT('USERENV', 'CON_NAME'),
  'db-timezone' VALUE DBTIMEZONE,
  'db-recovery-file-dest' VALUE (SELECT RTRIM(VALUE, '/') FROM SYS.V_$PARAMETER WHERE NAME = 'db_recovery_file_dest'),
  'db-block-checksum' VALUE (SELECT UPPER(VALUE) FROM SYS.V_$PARAMETER WHERE NAME = 'db_block_checksum'),
  'log-archive-dest' VALUE (SELECT RTRIM(VALUE, '/') FROM SYS.V_$PARAMETER WHERE NAME = 'log_archive_dest'),
  'log-archive-format' VALUE (SELECT CASE WHEN f.VALUE IS NULL THEN a.VALUE ELSE 'o1_mf_%t_%s_%h_.arc' END
                                FROM SYS.V_$PARAMETER f, SYS.V_$PARAMETER a
                               WHERE f.NAME = 'db_recovery_file_dest' AND a.NAME = 'log_archive_format'),
  'nls-character-set' VALUE (SELECT PROPERTY_VALUE FROM DATABASE_PROPERTIES WHERE PROPERTY_NAME = 'NLS_CHARACTERSET'),
  'nls-nchar-character-set' VALUE (SELECT PROPERTY_VALUE FROM DATABASE_PROPERTIES
                                    WHERE PROPERTY_NAME = 'NLS_NCHAR_CHARACTERSET'),
  'supp-log-db-primary' VALUE CASE WHEN d.SUPPLEMENTAL_LOG_DATA_PK = 'YES' THEN 1 ELSE 0 END,
  'supp-log-db-all' VALUE CASE WHEN d.SUPPLEMENTAL_LOG_DATA_ALL = 'YES' THEN 1 ELSE 0 END
  RETURNING VARCHAR2(4000)), ':null', ':""') j  -- an unset parameter is NULL: written as ""
  FROM SYS.V_$DATABASE d LEFT JOIN SYS.V_$TRANSPORTABLE_PLATFORM p ON p.PLATFORM_NAME = d.PLATFORM_NAME);

PROMPT ,"online-redo":[
SELECT CASE WHEN ROWNUM > 1 THEN ',' END || j FROM (
  SELECT JSON_OBJECT('group' VALUE GROUP#,
                     'path' VALUE JSON_ARRAYAGG(MEMBER ORDER BY IS_RECOVERY_DEST_FILE DESC, MEMBER)) j
    FROM SYS.V_$LOGFILE WHERE TYPE = 'ONLINE' GROUP BY GROUP# ORDER BY GROUP#);
PROMPT ],"incarnations":[
SELECT CASE WHEN ROWNUM > 1 THEN ',' END || j FROM (
  SELECT JSON_OBJECT('incarnation' VALUE INCARNATION#, 'resetlogs-scn' VALUE RESETLOGS_CHANGE#,
                     'prior-resetlogs-scn' VALUE PRIOR_RESETLOGS_CHANGE#, 'status' VALUE STATUS,
                     'resetlogs' VALUE RESETLOGS_ID, 'prior-incarnation' VALUE PRIOR_INCARNATION#) j
    FROM SYS.V_$DATABASE_INCARNATION ORDER BY INCARNATION#);
PROMPT ],"users":
SELECT JSON_ARRAYAGG(o ORDER BY o) FROM (
  SELECT DISTINCT REGEXP_SUBSTR('&owners', '[^,]+', 1, LEVEL) o FROM DUAL
  CONNECT BY LEVEL <= REGEXP_COUNT('&owners', ',') + 1);
SELECT ',"schema-scn":' || '&scn' FROM DUAL;

-- The dictionary arrays. The object set is long SQL text (SQL*Plus variables hold at most 240
-- characters), and the XDB token tables are named after each token set: PL/SQL builds the
-- statements and prints one JSON element per line.
DECLARE
  TYPE lines_t IS TABLE OF VARCHAR2(32767);
  scn CONSTANT VARCHAR2(40) := '&scn';
  asof CONSTANT VARCHAR2(60) := ' AS OF SCN ' || scn || ' ';
  owner_re CONSTANT VARCHAR2(4000) := '^(' || REPLACE(q'[&owners]', ',', '|') || ')$';
  low CONSTANT VARCHAR2(30) := '18446744073709551616';  -- 2^64: 128-bit values as [low, high]
  -- Users read: the configured owners (single 0) and SYS, XDB (single 1: only their dictionary tables).
  users_read CONSTANT VARCHAR2(4000) :=
    'SELECT u.USER#, CASE WHEN REGEXP_LIKE(u.NAME, ' || DBMS_ASSERT.ENQUOTE_LITERAL(owner_re)
    || ') THEN 0 ELSE 1 END single FROM SYS.USER$' || asof || 'u WHERE REGEXP_LIKE(u.NAME, '
    || DBMS_ASSERT.ENQUOTE_LITERAL(owner_re) || ') OR u.NAME IN (''SYS'', ''XDB'')';
  objs_read CONSTANT VARCHAR2(8000) :=
    'SELECT o.OBJ#, r.single FROM SYS.OBJ$' || asof || 'o JOIN (' || users_read || ') r ON r.USER# = o.OWNER#'
    || ' JOIN SYS.USER$' || asof || 'u ON u.USER# = o.OWNER# WHERE r.single = 0'
    || ' OR (u.NAME = ''SYS'' AND REGEXP_LIKE(o.NAME, ''^(CCOL\$|CDEF\$|COL\$|ECOL\$|DEFERRED_STG\$|LOB\$|'
    || 'LOBCOMPPART\$|LOBFRAG\$|OBJ\$|TAB\$|TABPART\$|TABCOMPART\$|TABSUBPART\$|TS\$|USER\$)$''))'
    || ' OR (u.NAME = ''XDB'' AND REGEXP_LIKE(o.NAME, ''^(XDB\$TTSET|X\$NM.*|X\$PT.*|X\$QN.*)$''))';
  objs CONSTANT VARCHAR2(8000) := 'SELECT OBJ# FROM (' || objs_read || ')';
  lobs CONSTANT VARCHAR2(8000) := 'SELECT l.LOBJ# FROM SYS.LOB$' || asof || 'l WHERE l.OBJ# IN (' || objs || ')';

  FUNCTION split(col VARCHAR2) RETURN VARCHAR2 IS
  BEGIN
    RETURN 'JSON_ARRAY(MOD(NVL(' || col || ', 0), ' || low || '), TRUNC(NVL(' || col || ', 0) / ' || low || '))';
  END;

  PROCEDURE array(name VARCHAR2, fields VARCHAR2, source VARCHAR2) IS
    lines lines_t;
  BEGIN
    DBMS_OUTPUT.PUT_LINE(',"' || name || '":[');
    EXECUTE IMMEDIATE 'SELECT JSON_OBJECT(''row-id'' VALUE ROWIDTOCHAR(x.ROWID), ' || fields
                      || ' RETURNING VARCHAR2(32767)) FROM ' || source BULK COLLECT INTO lines;
    FOR i IN 1 .. lines.COUNT LOOP
      DBMS_OUTPUT.PUT_LINE(CASE WHEN i > 1 THEN ',' END || lines(i));
    END LOOP;
    DBMS_OUTPUT.PUT_LINE(']');
  END;
BEGIN
  array('sys-ccol', '''con'' VALUE x.CON#, ''int-col'' VALUE x.INTCOL#, ''obj'' VALUE x.OBJ#, ''spare1'' VALUE '
        || split('x.SPARE1'), 'SYS.CCOL$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-cdef', '''con'' VALUE x.CON#, ''obj'' VALUE x.OBJ#, ''type'' VALUE x.TYPE#',
        'SYS.CDEF$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-col', '''obj'' VALUE x.OBJ#, ''col'' VALUE x.COL#, ''seg-col'' VALUE x.SEGCOL#, '
        || '''int-col'' VALUE x.INTCOL#, ''name'' VALUE x.NAME, ''type'' VALUE x.TYPE#, ''length'' VALUE x.LENGTH, '
        || '''precision'' VALUE NVL(x.PRECISION#, -1), ''scale'' VALUE NVL(x.SCALE, -1), '
        || '''charset-form'' VALUE NVL(x.CHARSETFORM, 0), ''charset-id'' VALUE NVL(x.CHARSETID, 0), '
        || '''null'' VALUE x.NULL$, ''property'' VALUE ' || split('x.PROPERTY'),
        'SYS.COL$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-deferredstg', '''obj'' VALUE x.OBJ#, ''flags-stg'' VALUE ' || split('x.FLAGS_STG'),
        'SYS.DEFERRED_STG$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-ecol', '''tab-obj'' VALUE x.TABOBJ#, ''col-num'' VALUE NVL(x.COLNUM, 0), '
        || '''guard-id'' VALUE NVL(x.GUARD_ID, -1)', 'SYS.ECOL$' || asof || 'x WHERE x.TABOBJ# IN (' || objs || ')');
  array('sys-lob', '''obj'' VALUE x.OBJ#, ''col'' VALUE x.COL#, ''int-col'' VALUE x.INTCOL#, '
        || '''l-obj'' VALUE x.LOBJ#, ''ts'' VALUE x.TS#', 'SYS.LOB$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-lob-comp-part', '''part-obj'' VALUE x.PARTOBJ#, ''l-obj'' VALUE x.LOBJ#',
        'SYS.LOBCOMPPART$' || asof || 'x WHERE x.LOBJ# IN (' || lobs || ')');
  array('sys-lob-frag', '''frag-obj'' VALUE x.FRAGOBJ#, ''parent-obj'' VALUE x.PARENTOBJ#, ''ts'' VALUE x.TS#',
        'SYS.LOBFRAG$' || asof || 'x WHERE x.PARENTOBJ# IN (' || lobs || ') OR x.PARENTOBJ# IN '
        || '(SELECT p.PARTOBJ# FROM SYS.LOBCOMPPART$' || asof || 'p WHERE p.LOBJ# IN (' || lobs || '))');
  array('sys-obj', '''owner'' VALUE x.OWNER#, ''obj'' VALUE x.OBJ#, ''data-obj'' VALUE NVL(x.DATAOBJ#, 0), '
        || '''name'' VALUE x.NAME, ''type'' VALUE x.TYPE#, ''flags'' VALUE ' || split('x.FLAGS')
        || ', ''single'' VALUE r.single', 'SYS.OBJ$' || asof || 'x JOIN (' || objs_read || ') r ON r.OBJ# = x.OBJ#');
  array('sys-tab', '''obj'' VALUE x.OBJ#, ''data-obj'' VALUE NVL(x.DATAOBJ#, 0), ''ts'' VALUE x.TS#, '
        || '''clu-cols'' VALUE NVL(x.CLUCOLS, 0), ''flags'' VALUE ' || split('x.FLAGS') || ', ''property'' VALUE '
        || split('x.PROPERTY'), 'SYS.TAB$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-tabcompart', '''obj'' VALUE x.OBJ#, ''data-obj'' VALUE NVL(x.DATAOBJ#, 0), ''bo'' VALUE x.BO#',
        'SYS.TABCOMPART$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-tabpart', '''obj'' VALUE x.OBJ#, ''data-obj'' VALUE NVL(x.DATAOBJ#, 0), ''bo'' VALUE x.BO#',
        'SYS.TABPART$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-tabsubpart', '''obj'' VALUE x.OBJ#, ''data-obj'' VALUE NVL(x.DATAOBJ#, 0), ''p-obj'' VALUE x.POBJ#',
        'SYS.TABSUBPART$' || asof || 'x WHERE x.OBJ# IN (' || objs || ')');
  array('sys-ts', '''ts'' VALUE x.TS#, ''name'' VALUE x.NAME, ''block-size'' VALUE x.BLOCKSIZE',
        'SYS.TS$' || asof || 'x');
  array('sys-user', '''user'' VALUE x.USER#, ''name'' VALUE x.NAME, ''spare1'' VALUE ' || split('x.SPARE1')
        || ', ''single'' VALUE r.single', 'SYS.USER$' || asof || 'x JOIN (' || users_read || ') r ON r.USER# = x.USER#');
  array('xdb-ttset', '''guid'' VALUE RAWTOHEX(x.GUID), ''toksuf'' VALUE x.TOKSUF, ''flags'' VALUE x.FLAGS, '
        || '''obj'' VALUE x.OBJ#', 'XDB.XDB$TTSET' || asof || 'x');
  -- Each token set's three tables; the suffix is checked before it becomes part of a name.
  FOR s IN (SELECT TOKSUF FROM XDB.XDB$TTSET AS OF SCN &scn WHERE REGEXP_LIKE(TOKSUF, '^[A-Za-z0-9_]+$')) LOOP
    array('xdb-xnm' || s.TOKSUF, '''nmspcuri'' VALUE x.NMSPCURI, ''id'' VALUE RAWTOHEX(x.ID)',
          'XDB.X$NM' || s.TOKSUF || asof || 'x');
    array('xdb-xpt' || s.TOKSUF, '''path'' VALUE RAWTOHEX(x.PATH), ''id'' VALUE RAWTOHEX(x.ID)',
          'XDB.X$PT' || s.TOKSUF || asof || 'x');
    array('xdb-xqn' || s.TOKSUF, '''nmspcid'' VALUE RAWTOHEX(x.NMSPCID), ''localname'' VALUE x.LOCALNAME, '
          || '''flags'' VALUE RAWTOHEX(x.FLAGS), ''id'' VALUE RAWTOHEX(x.ID)', 'XDB.X$QN' || s.TOKSUF || asof || 'x');
  END LOOP;
END;
/
PROMPT }
SPOOL OFF
SET TERMOUT ON
PROMPT wrote &db_name.-chkpt-&scn..json: copy it into the state directory and set reader.start-scn to &scn
EXIT
