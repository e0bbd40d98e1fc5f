"""The database a run reads: every redo log's header must name the same one.

A log of another database or of another incarnation can carry the sequence a run asks
for (a restored archive, a clone's logs copied beside the primary's, the logs from before
a RESETLOGS). Its records would be parsed as if they were the next ones, and what they
decode to (if anything) would be output as the source's changes. Before a log is read
its header (block 1) is compared with what the run started from:

* RESETLOGS_ID with the checkpoint's ``resetlogs`` (OpenLogReplicator's check, 50048,
  with its message; a checkpoint without one takes the first log's, as OLR does), and the
  RESETLOGS SCN with the checkpoint's incarnation of that RESETLOGS_ID (40122);
* the activation ID with the checkpoint's ``activation`` (40121; OLR adopts a new one,
  but within one RESETLOGS_ID it only changes in logs of another database instantiation);
* DBID and database name with the first log the run read (40120: the schema checkpoint
  does not carry the DBID);
* the redo thread with the one the reader follows (40123).

A RESETLOGS is not followed (sequences start again at 1 in the new incarnation): its logs
stop the run with 50048, naming the incarnation they belong to when the checkpoint's chain
knows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from replicator.errors import RedoLogError
from replicator.redo.header import SCN_NONE, RedoHeader
from replicator.schema.document import Incarnation


@dataclass
class DatabaseIdentity:
    """What every log must carry; zeros are learnt from the first log that has them."""

    resetlogs: int = 0
    activation: int = 0
    incarnations: list[Incarnation] = field(default_factory=list)
    dbid: int = 0
    db_name: str = ""
    thread: int = 0  # single-thread runs: learnt; RAC: each follower passes its own

    def check(self, header: RedoHeader, thread: int = 0) -> None:
        """Raise RedoLogError when ``header`` is not a log of this database and incarnation."""
        path = header.path
        if not self.resetlogs:
            self.resetlogs = header.resetlogs
        if header.resetlogs != self.resetlogs:
            raise RedoLogError(
                f"invalid resetlogs value (found: {header.resetlogs}, expected: {self.resetlogs}): "
                f"{path} ({self._incarnation_hint(header)})",
                50048,
            )
        known = next((i for i in self.incarnations if i.resetlogs == header.resetlogs), None)
        if (
            known is not None
            and known.resetlogs_scn
            and header.resetlogs_scn not in (0, SCN_NONE)
            and known.resetlogs_scn != header.resetlogs_scn
        ):
            raise RedoLogError(
                f"file {path}: RESETLOGS SCN {header.resetlogs_scn} differs from the checkpoint's "
                f"incarnation {known.incarnation} ({known.resetlogs_scn}) of resetlogs "
                f"{header.resetlogs}: a log of another database",
                40122,
            )
        if header.activation:
            if not self.activation:
                self.activation = header.activation
            elif header.activation != self.activation:
                raise RedoLogError(
                    f"file {path}: activation ID {header.activation} differs from the checkpoint's "
                    f"{self.activation}: a log of another instantiation of the database",
                    40121,
                )
        if not self.dbid:
            self.dbid, self.db_name = header.dbid, header.db_name
        elif (header.dbid, header.db_name) != (self.dbid, self.db_name):
            raise RedoLogError(
                f"file {path}: a log of database {header.db_name} (DBID {header.dbid}), but this run "
                f"reads {self.db_name} (DBID {self.dbid})",
                40120,
            )
        expected = thread or self.thread
        if not thread and not self.thread:
            self.thread = header.thread
        elif header.thread != expected:
            raise RedoLogError(
                f"file {path}: a log of redo thread {header.thread}, but this reader follows thread {expected}", 40123
            )

    def _incarnation_hint(self, header: RedoHeader) -> str:
        other = next((i for i in self.incarnations if i.resetlogs == header.resetlogs), None)
        if other is None:
            return (
                "an incarnation the checkpoint's chain does not know: a log of another database, or of a "
                "RESETLOGS after the checkpoint"
            )
        return (
            f"a log of incarnation {other.incarnation} ({other.status.lower()} in the checkpoint's chain), not "
            f"the one the checkpoint reads: a RESETLOGS is not followed; start from a checkpoint of that "
            f"incarnation"
        )
