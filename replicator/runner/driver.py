"""The one driver of a run: commits, native runs and checkpoints handed from the parser to a delivery.

Every run is a *feed* (what reads the redo: :class:`~replicator.runner.pipeline.Pipeline` over a
file list, :class:`~replicator.runner.daemon_engine.DaemonEngine` over a follower,
:class:`~replicator.runner.rac_engine.RacEngine` and :mod:`replicator.runner.rac` merging redo
threads) run by :class:`Driver`, times a :class:`Delivery` (where the messages go: the batch
run's synchronous drain, :class:`SyncDelivery`, or the daemon's hand-off to its writer thread,
:class:`~replicator.runner.handoff.ThreadDelivery`). The driver owns what both share: the
parser's transaction and checkpoint callbacks, the native committer's hand-offs
(``on_native*``, the typed :class:`~replicator.runner.stages.NativeDriver` port), the run of
native work with its stage-2 workers (:meth:`Driver.run_native`) and the RAC restart
positions (:func:`rac_restart_positions`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from replicator.events import Change, Checkpoint, Message, Transaction
from replicator.flags import FLAG_CHECKPOINT
from replicator.formats.base import Format
from replicator.formats.capabilities import SilentCheckpoints, StreamingFormat
from replicator.runner.runstats import RunStats

if TYPE_CHECKING:  # msgspec and hashlib: imported only by a run with checkpoint digests
    from collections import deque

    from replicator.formats.olr_digest import CheckpointDigests

FLUSH_MESSAGES = 4096


class Sink(Protocol):
    """What the batch delivery needs from a writer."""

    def write(self, batch: list[Message]) -> None: ...

    def flush(self) -> None: ...


class Delivery(Protocol):
    """Where the driver's rendered messages go (batch: :class:`SyncDelivery`; daemon:
    :class:`~replicator.runner.handoff.ThreadDelivery`)."""

    digests: CheckpointDigests | None  # format.checkpoint-digests: every delivered message passes it

    def admit(self, txn: Transaction) -> bool:
        """Count a commit; False: drop it unrendered (the daemon's restart SCN)."""

    def take(self, txn: Transaction, messages: Iterable[Message], index: int, streamed: bool = False) -> int:
        """Queue ``txn``'s python-rendered ``messages`` (the first is its ``index``-th; ``streamed``:
        a one-pass stream, cut into batches as it goes); the index after the last."""

    def take_native(self, txn: Transaction, messages: Sequence[Message], index: int) -> int:
        """The same for natively rendered messages (a list, or a MessageRun)."""

    def take_checkpoint(self, cp: Checkpoint, messages: Iterable[Message], output: bool, final: bool) -> None:
        """A rendered checkpoint (``output``: flag 0x1000 asks for its messages; ``final``: the
        batch run's end)."""

    def room(self) -> int:
        """How many messages a native stream may render before the next hand-off."""

    def drain(self) -> None:
        """Hand everything pending to the writer."""


class SyncDelivery:
    """The batch run's delivery: pending messages written in batches of FLUSH_MESSAGES, in this thread.

    A sink with ``write_runs`` (``runs``) takes a native transaction's messages as one MessageRun
    (one buffer, no per-row object): ``pending`` then holds runs among the Messages and
    ``run_extra`` counts the messages the runs add beyond one list item each."""

    def __init__(self, sink: Sink, stats: RunStats, runs: bool):
        self.sink = sink
        self.stats = stats
        self.runs = runs
        self.pending: list[Message] = []
        self.run_extra = 0
        # format.checkpoint-digests: the batches pass it in order before the sink writes them.
        self.digests: CheckpointDigests | None = None

    def admit(self, txn: Transaction) -> bool:
        self.stats.transactions += 1
        self.stats.last_scn = txn.commit_scn
        return True

    def take(self, txn: Transaction, messages: Iterable[Message], index: int, streamed: bool = False) -> int:
        if not streamed:
            self.pending.extend(messages)
            if len(self.pending) + self.run_extra >= FLUSH_MESSAGES:
                self.drain()
            return index
        for message in messages:
            self.pending.append(message)
            if len(self.pending) + self.run_extra >= FLUSH_MESSAGES:
                self.drain()
        return index

    def take_native(self, txn: Transaction, messages: Sequence[Message], index: int) -> int:
        """Queue natively rendered messages (a list, or a MessageRun kept whole) and drain when
        a batch is full."""
        if type(messages) is list:
            self.pending.extend(messages)
        elif messages:
            self.pending.append(messages)  # type: ignore[arg-type]  # a MessageRun, kept whole
            self.run_extra += len(messages) - 1
        if len(self.pending) + self.run_extra >= FLUSH_MESSAGES:
            self.drain()
        return index

    def take_checkpoint(self, cp: Checkpoint, messages: Iterable[Message], output: bool, final: bool) -> None:
        # The end of a batch run is not a soft stop in OLR: its parser leaves the last file
        # after the end-of-file ("redo") checkpoint without an "at exit" one, so the final
        # checkpoint (state and schema files) prints no message.
        if output and not final:
            self.pending.extend(messages)

    def room(self) -> int:
        return FLUSH_MESSAGES - len(self.pending) - self.run_extra

    def drain(self) -> None:
        """Hand the pending messages to the sink (a batch; the RAC merge drains at its checkpoints)."""
        if self.pending:
            self.stats.messages += len(self.pending) + self.run_extra
            if self.digests is not None:
                self.digests.observe(self.pending)
            if self.runs:
                self.sink.write_runs(self.pending)  # type: ignore[attr-defined]  # runs: a RunWriter
            else:
                self.sink.write(self.pending)
            self.pending = []
            self.run_extra = 0


class Driver:
    """Parser callbacks and native hand-offs of one run, delivered through :attr:`delivery`.

    The feeds subclass it: they read the redo (and install their native loop classes,
    :meth:`install_native_feed`) and say what a checkpoint does beyond its messages
    (:meth:`checkpointed`); everything between the parser and the writer is here, once.
    """

    # Observers (batch: runwatch's metrics; a commit is left to python while either is set,
    # unless the native committer counts into a tally) and the metrics counters the daemon
    # bumps on the parser thread (ops.metrics_tally.Tally), which the native committer counts into.
    on_commit: Callable[[Transaction], None] | None = None
    on_change: Callable[[Change], None] | None = None
    tally: Any = None
    # The native engine (replicator.native.wiring.attach): the committer; stage 2 (decode and
    # format in worker threads, _stage2.pyx): how many workers, whether the committer hands over
    # MessageRuns, the merge of everything queued (native_barrier) and the workers' stop.
    native: Any = None
    decode_workers: int = 0
    native_runs: bool = False
    native_barrier: Callable[[], None] | None = None
    native_finish: Callable[[], None] | None = None

    def __init__(self, parser: Any, fmt: Format, delivery: Delivery, stats: RunStats | None = None):
        self.parser = parser
        self.format = fmt
        self.delivery = delivery
        self.stats = stats if stats is not None else RunStats()  # (the batch delivery counts into it)
        self.output_checkpoints = bool(parser.opt.flags & FLAG_CHECKPOINT)
        # The format's optional abilities (formats/capabilities.py), looked up once.
        self._iter_transaction: Callable[[Transaction], Iterator[Message]] | None = (
            fmt.iter_transaction if isinstance(fmt, StreamingFormat) else None
        )
        self._checkpoint_unsent: Callable[[Checkpoint], None] | None = (
            fmt.checkpoint_unsent if isinstance(fmt, SilentCheckpoints) else None
        )
        # Checkpoints that wait for stage 2's queued transactions even when not output (a hook
        # that reads what was delivered: the batch run's position file, the daemon's restart point).
        self.checkpoint_waits = False
        self._stream_txn: Transaction | None = None  # the native stream being handed over
        self._stream_index = 0
        parser.on_transaction = self._on_transaction
        parser.on_checkpoint = self._on_checkpoint

    @property
    def checkpoint_digests(self) -> CheckpointDigests | None:
        """format.checkpoint-digests (replicator.formats.olr_digest), kept by the delivery."""
        return self.delivery.digests

    @checkpoint_digests.setter
    def checkpoint_digests(self, digests: CheckpointDigests | None) -> None:
        self.delivery.digests = digests

    # ----------------------------------------------------------------- the feed's part
    def install_native_feed(self, core: Any) -> None:
        """Take the native loop classes this feed uses (``core`` is replicator.native._core)."""

    def commit_declines(self) -> Callable[[Any, Any], bool] | None:
        """``declines(txn, record)``: commits to leave to python, or None when none are."""
        return None

    def checkpointed(self, cp: Checkpoint, final: bool) -> None:
        """What follows a checkpoint's messages (the feed's hooks)."""

    # ----------------------------------------------------------------- python commits
    def _on_transaction(self, txn: Transaction) -> None:
        delivery = self.delivery
        if not delivery.admit(txn):
            for _ in txn.changes:  # a streamed transaction must still be consumed
                pass
            return
        tally = self.tally
        if isinstance(txn.changes, list):
            if tally is not None:
                tally.transaction(txn)
            self.stats.rows += len(txn.changes)
            delivery.take(txn, self.format.transaction(txn), 0)
            if self.on_commit is not None:
                self.on_commit(txn)
            return
        # A huge transaction arrives as a stream: format and deliver it in batches.
        stream = self._iter_transaction
        txn.changes = self._observed(txn.changes)
        if stream is None:
            txn.changes = list(txn.changes)
            messages: Iterable[Message] = iter(self.format.transaction(txn))
        else:
            messages = stream(txn)
        delivery.take(txn, messages, 0, True)
        if self.on_commit is not None:
            self.on_commit(replace(txn, changes=[]))

    def _observed(self, changes: Iterable[Change]) -> Iterator[Change]:
        """The changes of a streamed transaction, counted as they pass (it is read only once)."""
        stats, on_change, tally = self.stats, self.on_change, self.tally
        for change in changes:
            stats.rows += 1
            if on_change is not None:
                on_change(change)
            if tally is not None:
                tally.change(change)
            yield change
        if tally is not None:
            tally.count_transaction("commit", "out")

    # ----------------------------------------------------------------- native commits (NativeDriver)
    def on_native(self, txn: Transaction, messages: Sequence[Message], rows: int) -> None:
        """A transaction the native engine rendered: _on_transaction's list branch (``messages``
        a list, or a MessageRun with native_runs)."""
        self.delivery.admit(txn)  # (what the restart SCN drops, commit_declines leaves to python)
        self.stats.rows += rows
        self.delivery.take_native(txn, messages, 0)

    def on_native_stream(self, txn: Transaction) -> int:
        """A huge transaction the native engine renders in parts (_on_transaction's stream
        branch); returns how many messages it may hand over before the next drain."""
        self.delivery.admit(txn)
        self._stream_txn, self._stream_index = txn, 0
        return self.delivery.room()

    def on_native_part(self, messages: Sequence[Message], rows: int) -> int:
        """The next messages of the streamed native transaction; the room before the next
        drain, so batches are cut where the python engine's stream cuts them."""
        txn = self._stream_txn
        assert txn is not None, "a native stream part before its start"
        self.stats.rows += rows
        self._stream_index = self.delivery.take_native(txn, messages, self._stream_index)
        return self.delivery.room()

    def run_native(self, work: Callable[[], None]) -> None:
        """Run native ``work``, then stop stage 2's workers (everything was merged at the end of
        the input); after an error, what they had rendered is still delivered first, as one
        thread would have, and the error raised."""
        finish = self.native_finish
        try:
            work()
        except BaseException:
            if finish is not None:
                try:
                    finish()
                except BaseException:
                    pass  # the first error is the one reported
            raise
        if finish is not None:
            finish()

    # ----------------------------------------------------------------- checkpoints
    def _on_checkpoint(self, cp: Checkpoint, final: bool = False) -> None:
        if self.native_barrier is not None and (self.output_checkpoints or self.checkpoint_waits):
            self.native_barrier()  # the queued transactions come before the checkpoint and its hook
        unsent = None if self.output_checkpoints else self._checkpoint_unsent
        if unsent is not None:
            unsent(cp)  # not output (no flag 0x1000): only its effect on later positions
        else:
            self.delivery.take_checkpoint(cp, self.format.checkpoint(cp), self.output_checkpoints, final)
        self.checkpointed(cp, final)


def rac_restart_positions(
    parser: Any, threads: Iterable[tuple[int, tuple[int, int], deque[tuple[int, int, int]], int, int]]
) -> list[tuple[int, int, int, int]]:
    """A RAC restart point's (thread, sequence, offset, lwn-scn) per thread, batch and daemon alike.

    ``threads``: per thread (thread, its current (sequence, offset), the history of its LWNs since
    the last restart point, its last LWN's SCN, its bound); the oldest begin SCN of the open
    transactions holds each back (:func:`replicator.redo.merge.restart_entry`, docs/rac.md)."""
    from replicator.redo.merge import restart_entry  # RAC runs only (start-up: not for others)

    begins = [t.begin_scn for t in parser.buffer.open_transactions() if t.begun]
    oldest = min(begins) if begins else None
    return [
        restart_entry(t, current, history, oldest, lwn_scn, bound) for t, current, history, lwn_scn, bound in threads
    ]
