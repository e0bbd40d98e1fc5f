"""The simulated database's open transactions: their statements (:class:`Change`) and the rows
OpenLogReplicator should output for them (:class:`ExpectedRow`).

Shared by the engine and the DDL and DML operations it dispatches to (:mod:`.ddl`,
:mod:`.dmlops`), which create these records; kept apart from :mod:`.engine` so those
modules need not import the engine that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from replicator.redogen.blocks import Record
from replicator.redogen.emit import Comp, TxnRedo
from replicator.redogen.rows import Row, TableState


@dataclass(slots=True)
class ExpectedRow:
    """One row change OLR should output, tied to the records that carry it."""

    op: str
    table: TableState
    before: dict[int, bytes | None] | None
    after: dict[int, bytes | None] | None
    bdba: int
    slot: int
    last: Record  # record of the pair that completes the change (its SCN and time)
    first: Record  # record whose 5.1 gives the output `offset`
    first_vector: int


@dataclass(slots=True)
class Change:
    """One statement of a transaction: how to roll it back and what it outputs."""

    comps: list[Comp]
    restore: Callable[[], None]
    rows: list[ExpectedRow]
    row_count: int = -1  # rows output; -1: len(rows) (rows are dropped when no expected output is kept)

    @property
    def count(self) -> int:
        """How many row changes this statement outputs."""
        return len(self.rows) if self.row_count < 0 else self.row_count


@dataclass(slots=True)
class Txn:
    """An open transaction of one session."""

    redo: TxnRedo
    changes: list[Change] = field(default_factory=list)
    savepoints: dict[str, int] = field(default_factory=dict)
    locked: list[Row] = field(default_factory=list)
    deleted: list[tuple[TableState, tuple]] = field(default_factory=list)
