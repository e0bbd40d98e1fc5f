"""The online reader's errors: OpenLogReplicator's codes for what stops a start."""

from __future__ import annotations

import socket
from decimal import Decimal

import pytest
from recorded_db import OraError, RecordedDatabase

from replicator.errors import ReplicatorError
from replicator.online import sql
from replicator.online.connection import (
    ConnectSettings,
    OracleDatabase,
    check_grants,
    database_failure,
)
from replicator.online.loader import StartRequest, read_facts, start_scn, start_sequence

DATABASE_ROW = (
    "ARCHIVELOG",
    "YES",
    "NO",
    "NO",
    "Little",
    "Oracle Database 19c Enterprise Edition",
    "ORCL",
    Decimal(1000),
    "+00:00",
    Decimal(77),
    "PRIMARY",
)


def facts_db(row: tuple = DATABASE_ROW, **parameters: str | None) -> RecordedDatabase:
    db = RecordedDatabase()
    db.on(sql.DATABASE, [row] if row else [])
    db.on(sql.CONTAINER, [("3", "PDB1", "CDB1")])
    params = {
        "db_recovery_file_dest": None,
        "log_archive_dest": "/arch/",
        "db_block_checksum": "typical",
        "log_archive_format": "%t_%s_%r.arc",
        **parameters,
    }
    db.on(sql.PARAMETER, lambda b: [(params[b["name"]],)] if b["name"] in params else [])
    props = {"NLS_CHARACTERSET": "AL32UTF8", "NLS_NCHAR_CHARACTERSET": "AL16UTF16"}
    db.on(sql.PROPERTY, lambda b: [(props[b["name"]],)] if b["name"] in props else [])
    db.on(sql.INCARNATIONS, [(1, 1, 0, "CURRENT", 555, 0)])
    db.on(sql.LOG_FILES, lambda b: [(1, "/redo/r1a.log"), (1, "/redo/r1b.log"), (2, "/redo/r2.log")])
    return db


def code_of(call) -> int:
    with pytest.raises(ReplicatorError) as error:
        call()
    return error.value.code


def test_facts_of_a_healthy_database() -> None:
    facts = read_facts(facts_db())
    assert (facts.context, facts.con_id, facts.con_name) == ("CDB1", 3, "PDB1")
    assert facts.log_archive_dest == "/arch"  # trailing '/' stripped (warning 60026)
    assert facts.db_block_checksum == "TYPICAL"
    assert facts.log_archive_format == "%t_%s_%r.arc"  # no FRA: the parameter
    assert [(g.group, g.paths) for g in facts.online_redo] == [
        (1, ["/redo/r1a.log", "/redo/r1b.log"]),
        (2, ["/redo/r2.log"]),
    ]
    assert facts.resetlogs == 555 and facts.activation == 77


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({0: "NOARCHIVELOG"}, 10021),
        ({1: "NO"}, 10022),
        ({10: "SNAPSHOT STANDBY"}, 10038),
        ({8: "Europe/Warsaw"}, 10068),
    ],
)
def test_database_that_cannot_be_replicated(change: dict[int, str], code: int) -> None:
    row = tuple(change.get(i, v) for i, v in enumerate(DATABASE_ROW))
    assert code_of(lambda: read_facts(facts_db(row))) == code


def test_region_time_zone_accepted_when_config_sets_one() -> None:
    row = tuple("Europe/Warsaw" if i == 8 else v for i, v in enumerate(DATABASE_ROW))
    assert read_facts(facts_db(row), db_timezone_set=True).db_timezone == "Europe/Warsaw"


def test_missing_facts() -> None:
    assert code_of(lambda: read_facts(facts_db(row=()))) == 10023
    db = facts_db()
    db.on(sql.PARAMETER, [])
    assert code_of(lambda: read_facts(db)) == 10032
    db = facts_db()
    db.on(sql.PROPERTY, [])
    assert code_of(lambda: read_facts(db)) == 10033
    db = facts_db()
    db.on(sql.LOG_FILES, [])
    assert code_of(lambda: read_facts(db)) == 10037


def test_missing_grants_name_the_grant_to_run() -> None:
    db = RecordedDatabase()
    for table in sql.GRANT_VIEWS:
        db.on(sql.grant_probe(table), [])
    db.fail(sql.grant_probe("SYS.V_$LOGFILE"), 942, "table or view does not exist")
    with pytest.raises(ReplicatorError) as error:
        check_grants(db, "C##OLR", "", sql.GRANT_VIEWS)
    assert error.value.code == 10034
    assert "GRANT SELECT ON SYS.V_$LOGFILE TO C##OLR;" in error.value.message
    db = RecordedDatabase()
    db.fail(sql.flashback_probe("SYS.CCOL$"), 1031, "insufficient privileges")
    with pytest.raises(ReplicatorError) as error:
        check_grants(db, "C##OLR", "PDB1", sql.FLASHBACK_TABLES, scn=5)
    assert error.value.code == 10034
    assert "ALTER SESSION SET CONTAINER = PDB1; GRANT SELECT, FLASHBACK ON SYS.CCOL$ TO C##OLR;" in error.value.message
    assert db.asked == [(sql.flashback_probe("SYS.CCOL$"), {"scn": 5})]


def test_driver_errors_map_to_olr_codes() -> None:
    login = database_failure(OraError(1017, "invalid username/password; logon denied"), "connecting")
    assert login.code == 10051 and "ORA-01017" in login.message and "reader.password" in login.message
    assert database_failure(OraError(8181, "specified number is not a valid system change number"), "x").code == 10035
    assert database_failure(OraError(1555, "snapshot too old"), "x").code == 10035
    assert database_failure(OraError(600, "internal error"), "x").code == 10051


def test_other_query_errors_pass_through() -> None:
    db = RecordedDatabase()
    db.fail(sql.grant_probe("SYS.V_$ARCHIVED_LOG"), 3113, "end-of-file on communication channel")
    assert code_of(lambda: check_grants(db, "U", "", sql.GRANT_VIEWS)) == 10051


def test_positioning_errors() -> None:
    facts = read_facts(facts_db())
    db = RecordedDatabase()
    db.on(sql.SCN_AT_TIME, [(None,)])
    request = StartRequest("DB", ["APP"], start_time="2026-01-01 00:00:00")
    assert code_of(lambda: start_scn(db, request, facts)) == 10025
    facts.standby = True
    assert code_of(lambda: start_scn(db, request, facts)) == 10024
    facts.standby = False
    db.on(sql.CURRENT_SCN, [])
    assert code_of(lambda: start_scn(db, StartRequest("DB", ["APP"]), facts)) == 10029
    assert start_scn(db, StartRequest("DB", ["APP"], start_scn=99), facts) == 99
    db.on(sql.SEQUENCE_AT_SCN, [(None,)])  # MAX() over no rows
    assert code_of(lambda: start_sequence(db, 99, 555, False)) == 10030


def test_real_driver_login_failure_is_10051() -> None:
    """python-oracledb thin mode against a closed port: the DPY- error becomes 10051."""
    pytest.importorskip("oracledb")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: connecting is refused
    db = OracleDatabase(ConnectSettings("c##olr", "secret", f"//127.0.0.1:{port}/ORCLPDB"), connect_timeout=2)
    with pytest.raises(ReplicatorError) as error:
        db.query(sql.CHECK_CONNECTION)
    assert error.value.code == 10051
    assert "DPY-" in error.value.message and "secret" not in error.value.message
    assert "secret" not in repr(db.settings)
