"""What some writers can do beyond the :class:`~replicator.writers.base.Writer` contract.

The drivers check these once, when they are built (``isinstance`` against the runtime-checkable
Protocols), and keep the result; a writer that has an ability declares it by listing the
Protocol among its bases. Imports only for type checking: any package may import this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from replicator.events import Message


@runtime_checkable
class RunWriter(Protocol):
    """Takes native ``MessageRun``s among the Messages of a batch (one buffer per transaction,
    no object per message): ``Pipeline.native_runs`` hands runs over as they are."""

    def write_runs(self, batch: list[Message | Any]) -> None:
        """Deliver ``batch`` (Messages and MessageRuns) in order."""


@runtime_checkable
class WholeRunWriter(RunWriter, Protocol):
    """A :class:`RunWriter` that says whether it confirms every run whole (one ``confirm_run``):
    the daemon then hands native runs over as they are and keeps one confirmation entry per
    run instead of one per message."""

    writes_runs_whole: bool


@runtime_checkable
class ResumableOutput(Protocol):
    """An output with a byte position the daemon records with each confirmed position (the file
    writer): a restart cuts the output back to the position its checkpoint covers."""

    #: (file, size) to cut back to when the output is opened; set before ``connect``
    resume_at: tuple[str, int] | None

    def output_position(self) -> tuple[str, int] | None:
        """(current file, bytes written to it) right after a flush; None when not positioned."""

    def start_position(self) -> tuple[str, int] | None:
        """(file, size) the first message of this run goes to, before the output is opened."""

    def existing_output(self) -> list[str]:
        """Output this writer would append to (for the missing-checkpoint warning)."""


@runtime_checkable
class RestorableStream(Protocol):
    """A stream writer that resumes from a writer checkpoint: REPLICATING at once, as
    OpenLogReplicator's Writer::readCheckpoint (``skip``: the checkpoint has no stream position
    of ours, so the writer holds until the replay reaches the client's message)."""

    def restore(self, scn: int, idx: int, first_data_scn: int = 0, skip: bool = True) -> None: ...


@runtime_checkable
class Syncable(Protocol):
    """Makes what was flushed durable (fsync); called before a checkpoint records an output
    position, which must not claim bytes a power loss could take away."""

    def sync(self) -> None: ...


@runtime_checkable
class DeliveryShortfall(Protocol):
    """A writer that can end with messages it never delivered (Kafka: unconfirmed when ``close``
    gave up): a batch run that leaves any fails."""

    undelivered: int  # messages not delivered when the writer closed
