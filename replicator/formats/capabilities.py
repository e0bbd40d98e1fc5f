"""What some formats can do beyond the ``Format`` contract (``transaction``, ``checkpoint``).

The drivers check these once when they are built (``isinstance`` against the runtime-checkable
Protocols) and keep the bound method, instead of probing per transaction or checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from replicator.events import Checkpoint, Message, Transaction
    from replicator.formats.framework import Position, TxnContext


@runtime_checkable
class StreamingFormat(Protocol):
    """Renders a transaction one message at a time, so a huge transaction (``changes`` a
    stream) is handed over in batches as it is built."""

    def iter_transaction(self, txn: Transaction) -> Iterator[Message]: ...


@runtime_checkable
class SilentCheckpoints(Protocol):
    """Applies a checkpoint that is not output (no flag 0x1000) to its later positions only,
    without rendering it."""

    def checkpoint_unsent(self, cp: Checkpoint) -> None: ...


@runtime_checkable
class NativeRowFormat(Protocol):
    """An EventFormat that renders a row from the native engine's typed row images
    (``RowImages``), so the native ``EventCommitter`` commits its transactions; ``native_rows``
    False leaves them to python."""

    native_rows: bool

    def on_native_row(self, ctx: TxnContext, pos: Position, rows: Any, r: int) -> list[Message]: ...
