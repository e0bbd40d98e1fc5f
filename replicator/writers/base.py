"""The writer contract and the registry of writer types.

A writer delivers formatted messages to one sink and reports every message it has taken
responsibility for through ``on_confirm(scn, idx)`` (the message's c_scn and *internal*
index). The checkpoint manager keeps the lowest unconfirmed position, so a writer must
confirm in the order it received messages; what "confirmed" means is the sink's: the
file writer confirms right after its buffered write (OLR's behaviour), Kafka on the
delivery report, stream writers on the client's CONFIRM.

Checkpoint messages (``Message.checkpoint``) are written only when the source asks for
them (flag 0x1000); otherwise they are confirmed without being written. The pipeline
already confirms silent checkpoints itself and hands a writer only what must be
written, so ``show_checkpoints`` defaults to True (write what you are given); a caller
that passes every checkpoint message sets it to ``bool(flags & 0x1000)``.

The calls are synchronous, matching the pipeline's ``Sink`` protocol (the batch core is
synchronous and the daemon reuses it); a writer that needs a network event loop runs it
on its own thread. The runner is expected to call :meth:`Writer.flush` every
``poll-interval-us`` (OLR flushes the file writer on every poll) and before
:meth:`Writer.close` is called at shutdown.
"""

from __future__ import annotations

import importlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from replicator.errors import ConfigError
from replicator.events import Message

ConfirmCallback = Callable[[int, int], None]
PersistCallback = Callable[[], bool]


class Writer(ABC):
    """Base class of every sink: connect, write batches, flush, close; confirm positions.

    Satisfies :class:`replicator.runner.pipeline.Sink` (``write`` and ``flush``).
    """

    #: the ``writer.type`` name this class implements
    type_name: str = ""

    def __init__(self, config: Any, on_confirm: ConfirmCallback, *, show_checkpoints: bool = True) -> None:
        self.config = config
        self.on_confirm = on_confirm
        self.show_checkpoints = show_checkpoints
        # Counted here, published by the metrics layer in batches.
        self.messages_sent = 0
        self.bytes_sent = 0
        self.messages_confirmed = 0
        # Set by the daemon: persist the confirmed position now (fsync'd); True when it is on disk.
        # A writer whose confirmations arrive while it is busy (Kafka delivery reports during
        # a long write) calls it so the durable position follows them closely.
        self.persist_confirmed: PersistCallback | None = None
        # Set by the daemon: a writer waiting for room in a full queue gives up at a stop.
        self.stopping: threading.Event | None = None

    def confirm(self, message: Message) -> None:
        """Report ``message`` as delivered (in arrival order)."""
        self.messages_confirmed += 1
        self.on_confirm(message.scn, message.idx)

    def confirm_run(self, run: Any) -> None:
        """Report a native MessageRun's messages as delivered: the count, and its last
        position (positions only grow within a run, so that is where delivery stands)."""
        self.messages_confirmed += len(run)
        self.on_confirm(run.scn, run.last_idx)

    keeps_tombstones = False  # sinks with record keys (Kafka) write Message.tombstone messages

    #: True when the writer has ``write_runs`` and confirms every MessageRun it is given whole
    #: (one :meth:`confirm_run` after the run is taken): the daemon then hands native runs over
    #: as they are and keeps one confirmation entry per run instead of one per message.
    writes_runs_whole = False

    def must_send(self, message: Message) -> bool:
        """False for checkpoint messages that are only confirmed, never written, and for
        tombstones where the sink has no keys to delete."""
        if message.tombstone and not self.keeps_tombstones:
            return False
        return self.show_checkpoints or not message.checkpoint

    def connect(self) -> None:
        """Open the sink (files, sockets). Default: nothing to open."""

    def write(self, batch: list[Message]) -> None:
        """Deliver ``batch`` in order; silent checkpoints are confirmed, others sent."""
        for message in batch:
            if self.must_send(message):
                self.send(message)
            else:
                self.confirm(message)

    @abstractmethod
    def send(self, message: Message) -> None:
        """Deliver one message and confirm it when the sink's guarantee is reached."""

    def flush(self) -> None:
        """Push buffered bytes to the sink. Default: nothing is buffered."""

    def close(self) -> None:
        """Flush and release the sink. Default: flush only."""
        self.flush()


# writer.type -> "module:Class", "module:function()" (a function that picks the class once, when
# the writer is built: kafka's native run writer or the confluent-kafka writer), or None while
# that writer is not implemented yet.
_REGISTRY: dict[str, str | None] = {
    "file": "replicator.writers.file:FileWriter",
    "discard": "replicator.writers.discard:DiscardWriter",
    "kafka": "replicator.writers.kafka_runs:kafka_writer_class()",
    "network": "replicator.writers.network:NetworkWriter",
    "zeromq": "replicator.writers.zeromq:ZeroMQWriter",
}


def register_writer(type_name: str, target: str | None) -> None:
    """Register (or replace) ``type_name`` as ``"module:Class"`` or ``"module:function()"`` (a
    function returning the class); None marks it unavailable."""
    _REGISTRY[type_name] = target


def writer_class(type_name: str) -> type[Writer]:
    """Import and return the class for ``type_name``; ConfigError 30001 if unavailable."""
    if type_name not in _REGISTRY:
        raise ConfigError(
            f'bad JSON, invalid "type" value: {type_name}, expected: one of '
            '{"file", "kafka", "zeromq", "network", "discard"}',
            30001,
        )
    target = _REGISTRY[type_name]
    if target is None:
        raise ConfigError(f"writer type {type_name} not available yet", 30001)
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    if name.endswith("()"):  # a function that picks the class now (the kafka writer's producer)
        chosen: type[Writer] = getattr(module, name[:-2])()
        return chosen
    cls: type[Writer] = getattr(module, name)
    return cls


def create_writer(writer_config: Any, on_confirm: ConfirmCallback, **kwargs: Any) -> Writer:
    """Build the writer for a validated ``writer`` section (imports only that type).

    Extra keyword arguments (e.g. ``show_checkpoints``) go to the writer's constructor.
    """
    return writer_class(writer_config.type)(writer_config, on_confirm, **kwargs)
