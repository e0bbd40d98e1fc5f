"""Where the online reader finds redo: V$LOGFILE for the online groups, V$ARCHIVED_LOG for archives.

:class:`DatabaseLogLocator` is the offline reader's :class:`~replicator.redo.online.LogLocator`
with its lists read from the database: the online group members are re-read every
``refresh-interval-us``; archived logs are asked for when a sequence is not known yet
(``arch: online`` closes the session after each question, ``online-keep`` keeps it;
``arch: path`` scans the archive directories as the offline reader does). Paths go through
``path-mapping``. A failing query is logged and the last known lists are kept, so a
database restart does not stop replication from files already on disk.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from replicator import log
from replicator.errors import ReplicatorError
from replicator.online import sql
from replicator.online.connection import Database
from replicator.online.loader import read_log_groups, to_int, to_text
from replicator.redo.online import LogLocator

ARCHIVE_QUERY_INTERVAL_S = 1.0  # at most one V$ARCHIVED_LOG query a second while waiting


@dataclass
class DatabaseLogLocator(LogLocator):
    """A LogLocator whose online groups and archived logs come from the database."""

    db: Database | None = None
    arch: str = "online"  # source.arch: online, online-keep or path
    standby: bool = False
    refresh_s: float = 10.0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    _groups_at: float = field(default=float("-inf"), repr=False)
    _archives_at: float = field(default=float("-inf"), repr=False)
    _archives: dict[int, str] = field(default_factory=dict, repr=False)

    def _now(self) -> float:
        return self.clock()

    def refresh_groups(self, force: bool = False) -> None:
        """Re-read V$LOGFILE when ``refresh-interval-us`` has passed (or ``force``)."""
        if self.db is None or (not force and self._now() - self._groups_at < self.refresh_s):
            return
        self._groups_at = self._now()
        try:
            self.online_groups = [list(g.paths) for g in read_log_groups(self.db, self.standby)]
        except ReplicatorError as e:
            log.error(e.code, f"refreshing the online redo log list failed, keeping the last one: {e.message}")

    def online(self, seq: int) -> tuple[str | None, int]:
        """As LogLocator.online, on a group list at most ``refresh_s`` old."""
        self.refresh_groups()
        return super().online(seq)

    def _query_archives(self, seq: int) -> None:
        if self.db is None:
            return
        self._archives_at = self._now()
        try:
            rows = self.db.query(sql.ARCHIVED_LOGS, {"seq": seq, "resetlogs": self.resetlogs})
        except ReplicatorError as e:
            log.error(e.code, f"reading the archived log list failed: {e.message}")
            return
        finally:
            if self.arch == "online":
                self.db.close()  # OLR's "online": no session kept between archive look-ups
        for name, sequence, _first, _next in rows:
            self._archives.setdefault(to_int(sequence), self.map_path(to_text(name)))

    def archived(self, seq: int) -> str | None:
        """The archived copy of ``seq`` from V$ARCHIVED_LOG (or a directory scan with ``arch: path``)."""
        if self.arch == "path" or self.db is None:
            return super().archived(seq)
        if seq not in self._archives and self._now() - self._archives_at >= ARCHIVE_QUERY_INTERVAL_S:
            self._query_archives(seq)
        path = self._archives.get(seq)
        return path if path is not None and self.source.is_file(path) else None

    def archive_files(self) -> Iterator[tuple[int, str]]:
        """(sequence, path) of the archived logs known to the database (or on disk with ``arch: path``)."""
        if self.arch == "path" or self.db is None:
            yield from super().archive_files()
            return
        if not self._archives:
            self._query_archives(0)
        for seq, path in sorted(self._archives.items()):
            if self.source.is_file(path):
                yield seq, path
