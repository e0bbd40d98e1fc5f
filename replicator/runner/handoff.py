"""The daemon's hand-off from the parser thread to the writer task (the thread :class:`Delivery`).

:class:`ThreadDelivery` is the daemon's :class:`~replicator.runner.driver.Delivery`: every message
is stamped with its stream position ``(sequence, LWN offset, record rank, index)`` (RAC: see
:mod:`replicator.runner.rac_engine`), those at or below the restart position are dropped
(already confirmed), and batches go to the writer task on the event loop; confirmations come
back through :class:`Confirmations`, which turns (c_scn, idx) into stream positions.
:class:`EngineState` holds the counters the daemon reports; :func:`feed` and
:func:`run_parser` are the reader and parser threads' bodies.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replicator.events import Checkpoint, Message, Transaction
from replicator.runner.position_file import CHECKPOINT_RANK, POSITION_ZERO, Position

if TYPE_CHECKING:  # msgspec and hashlib: imported only by a run with checkpoint digests
    from replicator.formats.olr_digest import CheckpointDigests

BATCH_MESSAGES = 4096  # a huge transaction is handed to the writer this many messages at a time


class Confirmations:
    """Sent-but-unconfirmed messages, in order; the confirmed position never skips one.

    An entry is one Message, or one native MessageRun (a transaction's messages in one
    buffer, handed to writers that confirm runs whole): then its position is that of the
    run's first message, the others follow it by index, and the run's last message is
    what its confirmation names."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (c_scn, idx of the entry's last message, position of its first, the MessageRun or None)
        self._sent: deque[tuple[int, int, Position, Any]] = deque()
        self._unconfirmed = 0  # messages in _sent
        self.confirmed: Position | None = None
        self.confirmed_scn_idx: tuple[int, int] = (0, 0)
        self.count = 0

    def sent(self, batch: list[Any], positions: list[Position]) -> None:
        """Register a batch handed to the writer: Messages and MessageRuns, with their positions."""
        with self._lock:
            append = self._sent.append
            n = 0
            for m, pos in zip(batch, positions):
                if type(m) is Message:
                    append((m.scn, m.idx, pos, None))
                    n += 1
                else:
                    append((m.scn, m.last_idx, pos, m))
                    n += len(m)
            self._unconfirmed += n

    def confirm(self, scn: int, idx: int) -> None:
        """Writer callback: everything up to the message (scn, idx) is delivered."""
        with self._lock:
            sent = self._sent
            while sent:
                s, i, pos, run = sent.popleft()
                if run is None:
                    self.confirmed = pos
                    self.count += 1
                    self._unconfirmed -= 1
                elif (s, i) != (scn, idx) and s == scn and _expand(sent, run, pos, idx):
                    continue  # confirmed inside the run: its messages are entries of their own now
                else:
                    n = len(run)
                    self.confirmed = pos[:-1] + (pos[-1] + n - 1,)
                    self.count += n
                    self._unconfirmed -= n
                self.confirmed_scn_idx = (s, i)
                if s == scn and i == idx:
                    break

    @property
    def pending(self) -> int:
        """Messages sent and not confirmed yet."""
        return self._unconfirmed

    def snapshot(self) -> tuple[Position | None, tuple[int, int], int, int]:
        """(confirmed position, its (c_scn, idx), pending, count), read together."""
        with self._lock:
            return self.confirmed, self.confirmed_scn_idx, self._unconfirmed, self.count


def _expand(sent: deque[Any], run: Any, pos: Position, idx: int) -> bool:
    """A confirmation may name a message inside ``run`` (a writer confirming message by
    message): if it holds ``idx``, put its messages back at the head of ``sent`` as entries of
    their own (True); else (False) the run is confirmed whole. Writers with
    ``writes_runs_whole`` confirm each run at its last message and never get here."""
    messages = list(run)
    if not any(m.idx == idx for m in messages):
        return False
    head = pos[:-1]
    sent.extendleft(reversed([(m.scn, m.idx, head + (pos[-1] + k,), None) for k, m in enumerate(messages)]))
    return True


@dataclass
class EngineState:
    """Counters the daemon reports (metrics, STATUS, shutdown summary)."""

    lwns: int = 0
    transactions: int = 0
    # Transactions not confirmed before (OLR's isNewData): what debug.stop-transactions counts.
    new_transactions: int = 0
    messages: int = 0
    skipped: int = 0
    last_scn: int = 0
    sequence: int = 0
    heartbeat: float = 0.0  # monotonic time the parser thread last showed it is alive
    errors: list[BaseException] = field(default_factory=list)


class ThreadDelivery:
    """The daemon's delivery: stamped messages handed to the writer task in batches.

    The parser thread queues messages with their positions (:meth:`take`); every ``limit``
    messages, and where the engine says (:meth:`send`), the batch goes to the writer task
    without a round trip to the event loop. ``full`` is what a full batch calls (the engine's
    ``handoff``, which RAC's stage 2 merges before)."""

    def __init__(
        self,
        writer: Any,
        parser: Any,
        position: Callable[[Transaction, int], Position],
        full: Callable[[], None],
        *,
        restart_pos: Position = POSITION_ZERO,
        skip_commit_scn: int = 0,
    ):
        self.writer = writer
        self.parser = parser
        self.position = position  # the stream position of a transaction's index-th message
        self.full = full
        self.restart_pos = restart_pos
        # A restart from an OpenLogReplicator writer checkpoint (its c_scn, no stream position of
        # ours): commits below c_scn are dropped, every one at c_scn or above is replayed. c_scn is
        # the confirmed transaction's begin SCN; what committed before that SCN came before it
        # in the stream, but a commit at that very SCN may be the confirmed transaction itself
        # (which the stream writers' hold waits for) or one after it: dropping "at or below"
        # would stall the hold and could lose that one (OLR #330 family).
        self.skip_commit_scn = skip_commit_scn
        self.state = EngineState()
        self.confirmations = Confirmations()
        self.pending: list[Any] = []  # Messages and MessageRuns (run_type) for the writer
        self.positions: list[Position] = []  # of each item (a run's: its first message's)
        self.pending_n = 0  # messages in pending
        self.limit = BATCH_MESSAGES  # take hands over this many pending messages
        # The native MessageRun class when the writer takes runs whole (set by the engine's
        # native delivery): such a transaction is then queued, confirmed and written as one item.
        self.run_type: Any = None
        # format.checkpoint-digests: every rendered message passes it before the restart position
        # drops any, so a restart repeats each checkpoint's digests (replicator.formats.olr_digest).
        self.digests: CheckpointDigests | None = None
        self.writer_lock = asyncio.Lock()  # the writer is not thread-safe: one call at a time
        self.unflushed = False  # batches were handed over since the last flush asked for
        self.loop: asyncio.AbstractEventLoop | None = None
        self.writer_task: asyncio.Task[None] | None = None

    # ----------------------------------------------------------------- Delivery (parser thread)
    def admit(self, txn: Transaction) -> bool:
        """Count a commit; False: it is below the restart SCN (dropped unrendered)."""
        state = self.state
        state.transactions += 1
        state.last_scn = txn.commit_scn
        # New unless its commit is before the restart SCN or at or before the restart position
        # (a transaction holding the confirmed message is taken as delivered: most often it ends there).
        if txn.commit_scn >= self.skip_commit_scn and self.position(txn, 0)[:3] > self.restart_pos[:3]:
            state.new_transactions += 1
        return txn.commit_scn >= self.skip_commit_scn

    def take(self, txn: Transaction, messages: Iterable[Message], index: int, streamed: bool = False) -> int:
        """Queue ``txn``'s ``messages`` (the first is its ``index``-th) with their stream positions,
        dropping those at or below the restart position; the index after the last.

        A native MessageRun (:attr:`run_type`) is queued whole with its first message's
        position unless the restart position falls inside it (then message by message)."""
        if self.digests is not None:
            messages = self.digests.observe(messages)
        if type(messages) is self.run_type:
            n = len(messages)  # type: ignore[arg-type]
            if n == 0:
                return index
            pos = self.position(txn, index)
            if pos > self.restart_pos:
                self.pending.append(messages)
                self.positions.append(pos)
                self.pending_n += n
                if self.pending_n >= self.limit:
                    self.full()
                return index + n
            if self.position(txn, index + n - 1) <= self.restart_pos:
                self.state.skipped += n
                return index + n
        for message in messages:
            pos = self.position(txn, index)
            index += 1
            if pos <= self.restart_pos:
                self.state.skipped += 1
                continue
            self.pending.append(message)
            self.positions.append(pos)
            self.pending_n += 1
            if self.pending_n >= self.limit:
                self.full()
        return index

    take_native = take  # a native list or MessageRun is stamped as python's messages are

    def take_checkpoint(self, cp: Checkpoint, messages: Iterable[Message], output: bool, final: bool) -> None:
        """A rendered checkpoint: queued (output) unless at or below the restart position."""
        if self.digests is not None:
            messages = self.digests.observe(messages)
        header = self.parser.header
        lwn_offset = cp.lwn_block * (header.block_size if header else 512)
        # The end of a log repeats its last LWN's checkpoint: index 1 sorts it after that one, so
        # a restart confirmed at the LWN's checkpoint still sends the log's (it was dropped).
        pos = (cp.seq, lwn_offset, CHECKPOINT_RANK, 1 if cp.redo_switch else 0)
        if output and pos > self.restart_pos:
            for m in messages:
                self.pending.append(m)
                self.positions.append(pos)
                self.pending_n += 1

    def room(self) -> int:
        """How many messages a native stream may render before the next hand-off."""
        return BATCH_MESSAGES - self.pending_n

    def drain(self) -> None:
        """Give the pending messages to the writer task."""
        self.send()

    # ----------------------------------------------------------------- the writer task
    def send(self, flush: bool = False) -> None:
        """Give the pending messages to the writer task; blocks while its queue is full.

        ``flush``: the parser has caught up with the reader (nothing read is left to parse):
        the writer flushes after this batch, so what was written reaches the output now
        rather than at the daemon's next poll. A busy stream, whose parser always finds redo
        waiting, is not flushed here and batches as before."""
        if self.pending:
            batch, positions = self.pending, self.positions
            self.pending, self.positions = [], []
            self.state.messages += self.pending_n
            self.pending_n = 0
        elif flush and self.unflushed:
            batch, positions = [], []
        else:
            return
        self.unflushed = not flush
        # No round trip to the event loop per batch (it cost the parser thread about half of its
        # time in the daemon): a slot is taken here and given back when the writer takes the
        # batch, so at most the queue size of batches wait, as with a bounded queue.
        while not self._room.acquire(timeout=0.5):
            if self.writer_task is not None and self.writer_task.done():
                raise RuntimeError("the writer task ended while messages were being handed to it")
        assert self.loop is not None, "a hand-off before the writer task started"
        self.loop.call_soon_threadsafe(self._batches.put_nowait, (batch, positions, flush))

    def open(self, size: int) -> asyncio.Task[None]:
        """The parser-to-writer queue of at most ``size`` waiting batches, and the writer task
        that drains it (call in the event loop before the parser thread starts)."""
        self.loop = asyncio.get_running_loop()
        self._batches: asyncio.Queue[Any] = asyncio.Queue()  # (batch, positions), then None
        self._room = threading.Semaphore(size)
        self.writer_task = asyncio.create_task(self._write(self._batches))
        return self.writer_task

    async def close(self) -> None:
        """The end of the batches: the writer task ends after the last."""
        await self._batches.put(None)

    async def _write(self, batches: asyncio.Queue[Any]) -> None:
        writer = self.writer
        write = writer.write_runs if self.run_type is not None else writer.write

        def write_flushed(batch: list[Any]) -> None:
            if batch:
                write(batch)
            writer.flush()

        while True:
            item = await batches.get()
            if item is None:
                return
            self._room.release()
            batch, positions, flush = item
            async with self.writer_lock:
                # Registered under the lock, so a checkpoint never sees a batch half-handed-over.
                self.confirmations.sent(batch, positions)
                await asyncio.to_thread(write_flushed if flush else write, batch)


def feed(
    items: Callable[[], Iterable[object]],
    q: queue.Queue[Any],
    parser_dead: threading.Event,
    errors: list[BaseException],
    stop: threading.Event | None,
) -> None:
    """A reader thread: put every item of ``items()`` into ``q``, then None, for as long as the
    parser thread lives. An error is reported in ``errors`` (the daemon stops with its code) and
    sets ``stop`` when given."""

    def put(item: object) -> None:
        while not parser_dead.is_set():
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    try:
        for item in items():
            put(item)
            if parser_dead.is_set():
                return
    except BaseException as e:
        errors.append(e)
        if stop is not None:
            stop.set()
    finally:
        put(None)


def run_parser(
    work: Callable[[], None], errors: list[BaseException], stop: threading.Event, parser_dead: threading.Event
) -> None:
    """The parser thread: run ``work``; an error is reported in ``errors`` and stops the readers.
    Its end, also a halt with items still queued, releases a reader waiting for room."""
    try:
        work()
    except BaseException as e:
        errors.append(e)
        stop.set()
    finally:
        parser_dead.set()
