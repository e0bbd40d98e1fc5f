"""DatabaseLogLocator: redo locations from V$LOGFILE / V$ARCHIVED_LOG, refreshed and mapped."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from recorded_db import RecordedDatabase

from replicator.online import sql
from replicator.online.locator import DatabaseLogLocator


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _locator(db: RecordedDatabase, clock: Clock, **kw) -> DatabaseLogLocator:
    return DatabaseLogLocator(
        online_groups=[["/old/r1.log"]],
        archive_dirs=[],
        archive_format="%t_%s_%r.arc",
        path_mapping=[("/db/arch", kw.pop("local", "/db/arch"))],
        db=db,
        resetlogs=555,
        clock=clock,
        **kw,
    )


def test_archived_logs_come_from_the_database_mapped_and_throttled(tmp_path: Path) -> None:
    local = tmp_path / "arch"
    local.mkdir()
    (local / "1_7_555.arc").write_bytes(b"x")
    db = RecordedDatabase()
    db.on(
        sql.ARCHIVED_LOGS,
        lambda b: (
            [("/db/arch/1_7_555.arc", Decimal(7), Decimal(1), Decimal(2))] if b == {"seq": 7, "resetlogs": 555} else []
        ),
    )
    clock = Clock()
    locator = _locator(db, clock, local=str(local), arch="online-keep")
    assert locator.archived(7) == str(local / "1_7_555.arc")
    assert locator.archived(7) == str(local / "1_7_555.arc")  # cached: one query
    clock.now += 1.5
    assert locator.archived(8) is None
    assert locator.archived(8) is None  # asked again within a second: no new query
    clock.now += 1.5
    assert locator.archived(8) is None
    assert [b for s, b in db.asked] == [
        {"seq": 7, "resetlogs": 555},
        {"seq": 8, "resetlogs": 555},
        {"seq": 8, "resetlogs": 555},
    ]
    assert not db.closed  # online-keep keeps the session
    assert list(locator.archive_files()) == [(7, str(local / "1_7_555.arc"))]


def test_arch_online_closes_the_session_and_path_scans_directories(tmp_path: Path) -> None:
    db = RecordedDatabase()
    db.on(sql.ARCHIVED_LOGS, [])
    locator = _locator(db, Clock())
    assert locator.archived(3) is None and db.closed
    (tmp_path / "1_3_555.arc").write_bytes(b"x")
    scan = DatabaseLogLocator(
        online_groups=[],
        archive_dirs=[str(tmp_path)],
        archive_format="%t_%s_%r.arc",
        db=RecordedDatabase(),
        arch="path",
    )
    assert scan.archived(3) == str(tmp_path / "1_3_555.arc")  # no query: a directory scan


def test_online_groups_refresh_every_interval_and_survive_errors() -> None:
    db = RecordedDatabase()
    groups = [[(Decimal(1), "/new/r1.log"), (Decimal(2), "/new/r2.log")]]
    db.on(sql.LOG_FILES, lambda b: groups[0])
    clock = Clock()
    locator = _locator(db, clock, refresh_s=10.0)
    locator.online(5)
    assert locator.online_groups == [["/new/r1.log"], ["/new/r2.log"]]
    groups[0] = [(Decimal(3), "/new/r3.log")]
    locator.online(5)
    assert locator.online_groups == [["/new/r1.log"], ["/new/r2.log"]]  # not yet due
    clock.now += 10
    db.fail(sql.LOG_FILES, 3113, "end-of-file on communication channel")
    locator.online(5)
    assert locator.online_groups == [["/new/r1.log"], ["/new/r2.log"]]  # kept after an error
    del db.failures[sql.LOG_FILES]
    clock.now += 10
    locator.online(5)
    assert locator.online_groups == [["/new/r3.log"]]
