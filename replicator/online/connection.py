"""The database session of the online reader: python-oracledb in thin mode.

Thin mode speaks Oracle Net directly, so no Oracle client libraries are needed. Everything
the reader asks goes through :class:`Database.query` with a statement from
:mod:`replicator.online.sql` and its binds; tests replace the session with recorded rows.

Error codes follow OpenLogReplicator: a failure reported by the database or the driver
(login refused, listener down, ORA-xxxxx) is 10051 with the ORA-/DPY- text; a missing
grant is 10034 (with the GRANT statement to run); an SCN too old for flashback is 10035.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from replicator import log
from replicator.errors import ConfigError, ReplicatorError, RuntimeFailure
from replicator.online import sql

Binds = dict[str, Any]
ResultRow = tuple[Any, ...]

ORA_TABLE_OR_VIEW_MISSING = 942
ORA_INSUFFICIENT_PRIVILEGES = 1031
ORA_SNAPSHOT_TOO_OLD = 1555
ORA_INVALID_SCN = 8181
ORA_FLASHBACK_TOO_OLD = 8180
# ORA- numbers meaning "this user cannot log in", reported with a hint.
LOGIN_ERRORS = {
    1017: "check reader.user and reader.password",
    1045: "run: GRANT CREATE SESSION TO <user>;",
    28000: "the account is locked: ALTER USER <user> ACCOUNT UNLOCK;",
    28001: "the password has expired",
}


class Database(Protocol):
    """What the online reader needs from a database session."""

    def query(self, statement: str, binds: Binds | None = None) -> list[ResultRow]:
        """Run ``statement`` with ``binds`` and return every row (raises ReplicatorError)."""
        ...

    def close(self) -> None:
        """End the session (a later query reconnects where supported)."""
        ...


@dataclass(frozen=True)
class ConnectSettings:
    """``reader.user``, ``reader.password`` and ``reader.server`` (``//host:port/service``)."""

    user: str
    password: str
    server: str

    def __repr__(self) -> str:  # never print the password
        return f"ConnectSettings(user={self.user!r}, server={self.server!r})"


def ora_code(exc: BaseException) -> int:
    """The ORA- number of a python-oracledb error (0 for driver-side DPY- errors and others)."""
    detail = exc.args[0] if exc.args else None
    code = getattr(detail, "code", 0)
    full = str(getattr(detail, "full_code", ""))
    return int(code) if isinstance(code, int) and full.startswith("ORA-") else 0


def error_text(exc: BaseException) -> str:
    """The first line of the driver's message (``ORA-01017: invalid username/password...``)."""
    detail = exc.args[0] if exc.args else exc
    message = str(getattr(detail, "message", detail))
    return message.splitlines()[0] if message else type(exc).__name__


def database_failure(exc: BaseException, doing: str) -> ReplicatorError:
    """The ReplicatorError for a driver exception raised while ``doing`` something."""
    code = ora_code(exc)
    text = error_text(exc)
    if code in LOGIN_ERRORS:
        return RuntimeFailure(f"{doing}: {text} (hint: {LOGIN_ERRORS[code]})", 10051)
    if code in (ORA_INVALID_SCN, ORA_FLASHBACK_TOO_OLD, ORA_SNAPSHOT_TOO_OLD):
        return RuntimeFailure(
            f"{doing}: {text}: can't read the dictionary at that SCN, provide a valid starting SCN value", 10035
        )
    return RuntimeFailure(f"{doing}: {text}", 10051)


class OracleDatabase:
    """A python-oracledb thin-mode session that reconnects on the next query after a failure.

    NUMBER values are fetched as :class:`decimal.Decimal` so 64-bit SCNs and flag halves
    arrive exactly (a float would round them); the loader turns them into ``int``.
    """

    def __init__(self, settings: ConnectSettings, connect_timeout: float = 30.0):
        self.settings = settings
        self.connect_timeout = connect_timeout
        self._connection: Any = None

    def connect(self) -> None:
        """Open the session (10051 with the ORA-/DPY- text when that fails)."""
        try:
            import oracledb
        except ImportError as e:  # pragma: no cover - a declared dependency
            raise ConfigError(
                'reader.type "online" needs the python-oracledb package (pip install oracledb)', 30001
            ) from e
        try:
            connection = oracledb.connect(
                user=self.settings.user,
                password=self.settings.password,
                dsn=self.settings.server,
                tcp_connect_timeout=self.connect_timeout,
            )
        except oracledb.Error as e:
            raise database_failure(e, f"connecting to {self.settings.server} as {self.settings.user}") from e

        def fetch_numbers_exactly(cursor: Any, metadata: Any) -> Any:
            if metadata.type_code is oracledb.DB_TYPE_NUMBER:
                return cursor.var(decimal.Decimal, arraysize=cursor.arraysize)
            return None

        connection.outputtypehandler = fetch_numbers_exactly
        self._connection = connection
        log.info(
            f"connected to the database {self.settings.server} as {self.settings.user} (python-oracledb thin mode)"
        )

    def query(self, statement: str, binds: Binds | None = None) -> list[ResultRow]:
        """Run one statement; a dropped session is reopened once before giving up."""
        import oracledb

        if self._connection is None:
            self.connect()
        try:
            with self._connection.cursor() as cursor:
                cursor.execute(statement, binds or {})
                return list(cursor.fetchall())
        except oracledb.Error as e:
            if _connection_lost(e):
                self.close()
            raise DatabaseQueryError(e, statement) from e

    def close(self) -> None:
        """Close the session (ignoring errors of an already broken one)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except Exception as e:  # noqa: BLE001 - closing a broken session may fail in many ways
                log.debug(f"closing the database session: {e}")


def _connection_lost(exc: BaseException) -> bool:
    detail = exc.args[0] if exc.args else None
    return bool(getattr(detail, "isrecoverable", False)) or str(getattr(detail, "full_code", "")).startswith("DPY-4011")


class DatabaseQueryError(RuntimeFailure):
    """A statement failed in the database; ``ora`` holds the ORA- number (0 if none)."""

    def __init__(self, exc: BaseException, statement: str):
        mapped = database_failure(exc, "query failed")
        super().__init__(mapped.message, mapped.code)
        self.ora = ora_code(exc)
        self.statement = statement


def grant_hint(table: str, user: str, con_name: str, flashback: bool) -> str:
    """The statement(s) a DBA runs to give ``user`` what reading ``table`` needs."""
    privileges = "SELECT, FLASHBACK" if flashback else "SELECT"
    prefix = f"ALTER SESSION SET CONTAINER = {con_name}; " if con_name else ""
    return f"{prefix}GRANT {privileges} ON {table} TO {user};"


def check_grants(db: Database, user: str, con_name: str, tables: Sequence[str], scn: int | None = None) -> None:
    """Probe each table; 10034 names the first one ``user`` may not read (with the GRANT to run).

    With ``scn`` the probe reads AS OF that SCN, which also needs the FLASHBACK grant.
    ORA-00942 counts as a missing grant too: without SELECT the view is invisible.
    """
    for table in tables:
        statement = sql.grant_probe(table) if scn is None else sql.flashback_probe(table)
        try:
            db.query(statement, None if scn is None else {"scn": scn})
        except DatabaseQueryError as e:
            if e.ora in (ORA_INSUFFICIENT_PRIVILEGES, ORA_TABLE_OR_VIEW_MISSING):
                hint = grant_hint(table, user, con_name, scn is not None)
                raise RuntimeFailure(f"grants missing for table {table} (hint: run: {hint})", 10034) from e
            raise
