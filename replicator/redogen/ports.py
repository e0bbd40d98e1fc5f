"""What the operation handlers (ddl.py, dmlops.py, txnops.py) see of the generator engine.

The engine builds the handlers and hands itself to them; typing them against these ports
instead of :class:`~replicator.redogen.generator.RedoGenerator` keeps the handlers below the engine
(no import circle) and says which part of its state each one may touch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from replicator.redogen.cluster import ClusterStream
    from replicator.redogen.emit import Emitter, TxnRedo
    from replicator.redogen.rows import TableState
    from replicator.redogen.scenario import Event, Scenario
    from replicator.redogen.txnstate import Txn
    from replicator.redogen.undo import UndoSpace
    from replicator.redogen.writer import RedoStream


class CatalogSource(Protocol):
    """What a dictionary builds its rows from: the whole database's tables, or one PDB's
    share of them (engine.ContainerView)."""

    @property
    def sc(self) -> Scenario: ...

    @property
    def charsets(self) -> tuple[int, int]: ...

    @property
    def tables(self) -> list[TableState]: ...

    def encode_row(
        self, ts: TableState, values: dict[str, object], base: list[bytes | None] | None = None
    ) -> list[bytes | None]: ...


class Commits(Protocol):
    """A DDL statement's implicit commit (dmlops.DmlOps.commit)."""

    def commit(self, ev: Event) -> None: ...


class CatalogEngine(CatalogSource, Protocol):
    """What a dictionary's DDL operations (ddl.Catalog) use of the engine: the engine itself,
    or one PDB's view of it (generator.ContainerView)."""

    @property
    def emit(self) -> Emitter: ...

    @property
    def ops(self) -> Commits: ...

    @property
    def txns(self) -> dict[int, Txn]: ...  # session -> its open transaction

    def table(self, name: str | None) -> TableState: ...

    def txn(self, sid: int, xid: str | None = None) -> Txn: ...


class GeneratorState(CatalogEngine, Protocol):
    """The engine's state the DML, DDL and transaction handlers read and change."""

    keep: bool  # keep committed transactions for the expected output
    emit: Emitter
    txns: dict[int, Txn]  # session -> its open transaction
    pending_savepoints: dict[int, dict[str, int]]
    committed: list[Txn]
    column_format: int
    stats: dict[str, int]
    cluster: ClusterStream | None
    stream: RedoStream | ClusterStream

    def txn(self, sid: int, xid: str | None = None, ts: TableState | None = None) -> Txn: ...

    def undo_of(self, tx: TxnRedo) -> UndoSpace: ...
