"""The contract every output format implements, and the options they read.

:class:`FormatOptions` mirrors the ``format`` section of OpenLogReplicator.json (spec
olr-interfaces.md §1.4, §2) as plain integers, plus the few facts about the source a
format needs (source flags, database time zone, container name). The config layer
builds it; formats never see the pydantic models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from replicator.events import Change, Checkpoint, Column, DdlChange, Message, Transaction
from replicator.flags import (
    FLAG_DDL,
    FLAG_EXPERIMENTAL_XMLTYPE,
    FLAG_SCHEMALESS,
    FLAG_SHOW_GUARD,
    FLAG_SHOW_HIDDEN,
    FLAG_SHOW_NESTED,
    FLAG_SHOW_UNUSED,
    FLAG_SYSTEM_TXN,
)

NO_SCN = (1 << 64) - 1  # OLR's Scn::none(): no position taken yet (printed by a checkpoint before any transaction)


@dataclass(slots=True)
class FormatOptions:
    """Every ``format`` option (default 0 unless noted) and the source facts formats use."""

    type: str = "json"
    attributes: int = 0
    char: int = 0
    column: int = 0
    db: int = 0
    flush_buffer: int = 1048576
    interval_dts: int = 0
    interval_ytm: int = 0
    message: int = 0
    rid: int = 0
    redo_thread: int = 0
    schema: int = 0
    scn: int = 0
    scn_type: int = 0
    timestamp: int = 0
    timestamp_metadata: int = 0
    timestamp_tz: int = 0
    timestamp_type: int = 0
    unknown: int = 0
    unknown_type: int = 0
    user_type: int = 0
    xid: int = 0
    avro_schema_path: str = ""  # extension: directory for the `avro` format's schema files
    binary_handling_mode: str = "bytes"  # extension: debezium-* binary values (Debezium's option)
    tombstones_on_delete: int = 1  # extension: debezium-envelope/-flatten tombstone after a DELETE
    checkpoint_digests: int = 0  # extension: digests in checkpoint messages (replicator.formats.olr_digest)
    # Source facts.
    flags: int = 0  # source.flags
    db_timezone: int = 0  # DBTIMEZONE offset in seconds (TIMESTAMP WITH LOCAL TIME ZONE)
    con_name: str = ""  # container name, printed as `db`
    database: str = ""  # source.name


class Format(Protocol):
    """Turns committed transactions and checkpoints into positioned messages."""

    options: FormatOptions

    def transaction(self, txn: Transaction) -> list[Message]:
        """Render one committed transaction (begin, changes, commit as the options say)."""
        ...

    def checkpoint(self, cp: Checkpoint) -> list[Message]:
        """Render a checkpoint; the message has ``checkpoint=True`` (output only with flag 0x1000)."""
        ...


def column_suppressed(column: Column, flags: int) -> bool:
    """OLR's rule for leaving a column out of row images (olr-interfaces.md §2.5).

    Hidden, guard, nested and unused columns are left out unless flags 0x40, 0x80, 0x100
    or 0x200 show them. The hidden column that stores an XMLTYPE (``xml_type``) is not
    hidden at all with 0x10000 (experimental XMLTYPE), as OLR decides when it builds the
    table.
    """
    hidden = column.hidden and not (column.xml_type and flags & FLAG_EXPERIMENTAL_XMLTYPE)
    return bool(
        (column.guard and not flags & FLAG_SHOW_GUARD)
        or (column.nested and not flags & FLAG_SHOW_NESTED)
        or (hidden and not flags & FLAG_SHOW_HIDDEN)
        or (column.unused and not flags & FLAG_SHOW_UNUSED)
    )


def printable_filter(flags: int) -> Callable[[Change], bool]:
    """Which changes OLR's builder prints: DDL only with flag 0x20, changes of unknown
    tables only in schemaless mode or with 0x800, of SYS dictionary tables only with 0x800."""
    ddl = bool(flags & FLAG_DDL)
    unknown_tables = bool(flags & (FLAG_SCHEMALESS | FLAG_SYSTEM_TXN))
    system_tables = bool(flags & FLAG_SYSTEM_TXN)

    def printable(change: Change) -> bool:
        if isinstance(change, DdlChange):
            return ddl
        table = change.table
        if table is None:
            return unknown_tables
        return not table.system or system_tables

    return printable
