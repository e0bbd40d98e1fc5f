"""Start-up of the online reader (``reader.type: online``).

When the state directory holds no schema checkpoint to start from, the daemon connects,
reads the database facts and the dictionary at the start SCN (``start-scn``,
``start-time``, ``start-time-rel`` or the current SCN) and writes the first schema
checkpoint. From there on it runs exactly as the offline reader does, except that the
online log groups and archived logs are listed by the database
(:class:`~replicator.online.locator.DatabaseLogLocator`).
"""

from __future__ import annotations

from typing import Any

from replicator import log
from replicator.flags import DISABLE_CHECKS_GRANTS
from replicator.online.connection import ConnectSettings, Database, OracleDatabase
from replicator.online.loader import (
    StartRequest,
    build_schema_checkpoint,
    read_incarnations,
)
from replicator.online.locator import DatabaseLogLocator
from replicator.schema.document import SchemaCheckpoint
from replicator.schema.store import write_schema_checkpoint


def open_database(reader: Any) -> OracleDatabase:
    """A thin-mode session for ``reader.user``/``password``/``server`` (connects on first use)."""
    return OracleDatabase(ConnectSettings(reader.user or "", reader.password or "", reader.server or ""))


def start_request(source: Any) -> StartRequest:
    """The start point and owners the config asks for."""
    reader = source.reader
    return StartRequest(
        database=source.name,
        owners=sorted(source.owners),
        start_scn=reader.start_scn or 0,
        start_seq=reader.start_seq or 0,
        start_time=reader.start_time,
        start_time_rel=reader.start_time_rel,
        log_archive_format=reader.log_archive_format,
        db_timezone_set=reader.db_timezone is not None,
        check_grants=not reader.disable_checks & DISABLE_CHECKS_GRANTS,
    )


def first_schema_checkpoint(db: Database, source: Any, state_dir: str) -> SchemaCheckpoint:
    """Read the first schema checkpoint from the database and write it to ``state_dir``."""
    log.info(f"no schema checkpoint for {source.name}: reading the dictionary from the database")
    cp = build_schema_checkpoint(db, start_request(source), source.reader.user or "")
    path = write_schema_checkpoint(state_dir, cp)
    log.info(f"schema checkpoint written: {path.name} (scn {cp.scn}, sequence {cp.seq})")
    return cp


def online_locator(
    db: Database,
    source: Any,
    cp: SchemaCheckpoint,
    archive_format: str,
    archive_dirs: list[str],
    redo_source: Any = None,
) -> DatabaseLogLocator:
    """The log locator of the online reader, its lists read from the database now."""
    resetlogs = cp.resetlogs
    current = [i for i in read_incarnations(db) if i.status == "CURRENT"]
    if current and current[0].resetlogs != resetlogs:
        log.info(f"database incarnation changed since the checkpoint: resetlogs {resetlogs} -> {current[0].resetlogs}")
        resetlogs = current[0].resetlogs
    locator = DatabaseLogLocator(
        online_groups=[list(g.paths) for g in cp.online_redo],
        archive_dirs=archive_dirs,
        archive_format=archive_format,
        path_mapping=list(source.reader.path_mapping_pairs),
        db=db,
        resetlogs=resetlogs,
        arch=source.arch or "online",
        refresh_s=source.refresh_interval_us / 1e6,
    )
    if redo_source is not None:
        locator.source = redo_source
    locator.refresh_groups(force=True)
    return locator
