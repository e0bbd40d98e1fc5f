"""The daemon's data path: reader thread -> parser coroutine -> writer task, with positions.

* The reader (:class:`~replicator.redo.online.RedoFollower`, blocking I/O) runs in a
  worker thread and hands ``(header, LWN)`` items to a bounded queue.
* One parser thread analyses LWNs, formats committed transactions and stamps every
  message with its stream position ``(sequence, LWN offset, record rank, index)``;
  messages at or below the restart position are dropped (already confirmed). It is a
  thread rather than a coroutine because parsing is CPU-bound: in a coroutine it would
  starve the event loop that serves signals, checkpoints, reloads and network clients.
* One writer task hands batches to the writer in a thread; confirmations come back
  through :class:`Confirmations`, which turns (c_scn, idx) into stream positions.
* After every LWN the checkpoint hook may write a schema checkpoint (restart point).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from replicator.events import Change, Checkpoint, Message, Transaction
from replicator.flags import FLAG_CHECKPOINT
from replicator.formats.base import Format
from replicator.formats.capabilities import SilentCheckpoints, StreamingFormat
from replicator.ops.metrics_tally import Tally
from replicator.redo.header import RedoHeader
from replicator.redo.online import RedoFollower
from replicator.redo.parser import Parser
from replicator.runner.position_file import CHECKPOINT_RANK, POSITION_ZERO, Position
from replicator.writers.capabilities import WholeRunWriter

if TYPE_CHECKING:  # msgspec and hashlib: imported only by a run with checkpoint digests
    from replicator.formats.olr_digest import CheckpointDigests

QUEUE_LWNS = 256
QUEUE_BLOCKS = 2  # raw block buffers (up to a read chunk each, 16 MB locally) read ahead of the parser
QUEUE_BATCHES = 64
BATCH_MESSAGES = 4096  # a huge transaction is handed to the writer this many messages at a time
# The native record loop analyses a whole read buffer (thousands of LWNs) per call: its messages
# go to the writer this many at a time, so output flows while the parser goes on (a hand-off per
# LWN, as _parse does, costs a thread round trip each: most of the native daemon's wall time).
HANDOFF_MESSAGES = 256
# With a writer that takes native runs whole (the file writer) a hand-off costs the same
# thread round trip but no per-message work: hand over as many messages at a time as a
# python batch holds (BATCH_MESSAGES, so what may wait in the queue is bounded as before).
# A feed's last messages are handed over at its end anyway (and flushed when the parser has
# caught up), so a tailing stream's output is not held back; 1024 cost the whole daemon run
# of 105 MB ~5 % of its wall time in hand-offs (1.07-1.23 s against 1.07-1.09 s).
HANDOFF_RUN_MESSAGES = BATCH_MESSAGES


class _Halt(Exception):
    """Raised out of the native record loop's per-LWN step when :attr:`DaemonEngine.halted` is set:
    the loop stops at the end of that LWN, not at the end of its read buffer."""


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


class DaemonEngine:
    """Runs reader, parser and writer until stopped or an error occurs."""

    # The batch pipeline's observers, which the native committer checks: the daemon has none
    # (its metrics tally is handled by native_declines).
    on_commit: Any = None
    on_change: Any = None
    # The native record loop's class (replicator.native.wiring.attach): the reader then hands
    # over raw blocks and the parser thread frames and analyses them in C (_parse_blocks).
    block_loop: Any = None
    # The batch pipeline's whole-file native loop (NativeDriver): the daemon feeds blocks instead.
    native_loop: Callable[..., Any] | None = None
    # The daemon's CheckpointManager, when its per-LWN step may be decided in C (the native
    # record loop's checkpoint step, _daemon_loop.pxi); None: the python step for every LWN.
    checkpoint_manager: Any = None
    # Native stage 2 (decode/format in worker threads, replicator/native/_stage2.pxi): how many
    # workers, whether the committer hands over MessageRuns (it needs them for stage 2), and
    # the merge of everything queued (native_barrier) and the workers' stop (native_finish),
    # set by replicator.native.wiring.attach when workers run.
    decode_workers: int = 0
    native_runs: bool = False
    native_barrier: Any = None
    native_finish: Any = None
    # The native MessageRun class when the writer takes runs whole (set by attach): such a
    # transaction is then queued, confirmed and written as one item (no Message per row).
    run_type: Any = None
    # Set on the parser thread (the daemon's debug stops: stop-log-switches at a file's end,
    # stop-transactions at an LWN's checkpoint): parsing ends after that file or LWN, whatever
    # the reader has queued beyond it, so both engines stop at the same place.
    halted: bool = False
    # format.checkpoint-digests: every rendered message passes it before the restart position
    # drops any, so a restart repeats each checkpoint's digests (replicator.formats.olr_digest).
    checkpoint_digests: CheckpointDigests | None = None

    def __init__(
        self,
        parser: Parser,
        fmt: Format,
        writer: Any,
        follower: RedoFollower,
        *,
        restart_pos: Position = POSITION_ZERO,
        skip_commit_scn: int = 0,
        on_checkpoint: Callable[[Checkpoint, Parser], None] | None = None,
        on_file_end: Callable[[RedoHeader], None] | None = None,
    ):
        self.parser = parser
        self.format = fmt
        self.writer = writer
        self.follower = follower
        self.restart_pos = restart_pos
        # A restart from an OpenLogReplicator writer checkpoint (its c_scn, no stream position of
        # ours): commits below c_scn are dropped, every one at c_scn or above is replayed. c_scn is
        # the confirmed transaction's begin SCN; what committed before that SCN came before it
        # in the stream, but a commit at that very SCN may be the confirmed transaction itself
        # (which the stream writers' hold waits for) or one after it: dropping "at or below"
        # would stall the hold and could lose that one (OLR #330 family).
        self.skip_commit_scn = skip_commit_scn
        self.on_checkpoint_hook = on_checkpoint
        self.on_file_end = on_file_end
        self.tally: Tally | None = None  # metrics counters, bumped by the parser thread
        self.confirmations = Confirmations()
        self.state = EngineState()
        self.output_checkpoints = bool(parser.opt.flags & FLAG_CHECKPOINT)
        self._pending: list[Any] = []  # Messages and MessageRuns (run_type) for the writer
        self._positions: list[Position] = []  # of each item (a run's: its first message's)
        self._pending_n = 0  # messages in _pending
        # The writer takes native runs whole (replicator.native.wiring.attach sets run_type then).
        self.whole_runs = isinstance(writer, WholeRunWriter) and bool(writer.writes_runs_whole)
        # The format's optional abilities (formats/capabilities.py), looked up once.
        self._iter_transaction: Callable[[Transaction], Iterator[Message]] | None = (
            fmt.iter_transaction if isinstance(fmt, StreamingFormat) else None
        )
        self._checkpoint_unsent: Callable[[Checkpoint], None] | None = (
            fmt.checkpoint_unsent if isinstance(fmt, SilentCheckpoints) else None
        )
        self.writer_lock = asyncio.Lock()  # the writer is not thread-safe: one call at a time
        self.native: Any = None  # the native committer (replicator.native.wiring.attach), if any
        self._stream_txn: Transaction | None = None  # the native stream being handed over
        self._stream_index = 0
        self._handoff_at = BATCH_MESSAGES  # _stamp hands over this many pending messages
        self._unflushed = False  # batches were handed over since the last flush asked for
        parser.on_transaction = self._on_transaction
        parser.on_checkpoint = self._on_checkpoint

    # ----------------------------------------------------------------- parser callbacks (parser thread)
    def _counted(self, txn: Transaction) -> None:
        state = self.state
        state.transactions += 1
        state.last_scn = txn.commit_scn
        # New unless its commit is before the restart SCN or at or before the restart position
        # (a transaction holding the confirmed message is taken as delivered: most often it ends there).
        if txn.commit_scn >= self.skip_commit_scn and self._message_position(txn, 0)[:3] > self.restart_pos[:3]:
            state.new_transactions += 1

    def _on_transaction(self, txn: Transaction) -> None:
        self._counted(txn)
        if txn.commit_scn < self.skip_commit_scn:
            for _ in txn.changes:  # a streamed transaction must still be consumed
                pass
            return
        tally = self.tally
        if tally is not None:
            if isinstance(txn.changes, list):
                tally.transaction(txn)
            else:
                txn.changes = _tallied(txn.changes, tally)
        stream = self._iter_transaction
        if isinstance(txn.changes, list) or stream is None:
            if not isinstance(txn.changes, list):
                txn.changes = list(txn.changes)
            messages: Iterable[Message] = self.format.transaction(txn)
        else:
            messages = stream(txn)  # a huge transaction: hand it over in batches as it is built
        self._stamp(txn, messages, 0)

    def _stamp(self, txn: Transaction, messages: Iterable[Message], index: int) -> int:
        """Queue ``txn``'s ``messages`` (the first is its ``index``-th) with their stream positions,
        dropping those at or below the restart position; the index after the last.

        A native MessageRun (:attr:`run_type`) is queued whole with its first message's
        position unless the restart position falls inside it (then message by message)."""
        if self.checkpoint_digests is not None:
            messages = self.checkpoint_digests.observe(messages)
        if type(messages) is self.run_type:
            n = len(messages)  # type: ignore[arg-type]
            if n == 0:
                return index
            pos = self._message_position(txn, index)
            if pos > self.restart_pos:
                self._pending.append(messages)
                self._positions.append(pos)
                self._pending_n += n
                if self._pending_n >= self._handoff_at:
                    self.handoff()
                return index + n
            if self._message_position(txn, index + n - 1) <= self.restart_pos:
                self.state.skipped += n
                return index + n
        for message in messages:
            pos = self._message_position(txn, index)
            index += 1
            if pos <= self.restart_pos:
                self.state.skipped += 1
                continue
            self._pending.append(message)
            self._positions.append(pos)
            self._pending_n += 1
            if self._pending_n >= self._handoff_at:
                self.handoff()
        return index

    # The native committer (replicator.native.wiring.attach) renders a commit and hands its
    # messages to the three callbacks below instead of calling _on_transaction.
    def install_native_feed(self, core: Any) -> None:
        """The single-thread daemon frames the reader's raw blocks in a native BlockLoop."""
        self.block_loop = core.BlockLoop
        self.follower.chunk_check = core.check_chunk  # an archived log's block checks: in the reader thread
        self.native_delivery(core)

    def native_delivery(self, core: Any) -> None:
        """How native commits reach the writer: stage 2 in worker threads takes MessageRuns; the
        engine stamps their messages, or, when the writer takes runs whole (the file writer),
        queues each run as one item."""
        from replicator.native import decode_workers

        self.decode_workers = decode_workers()
        self.native_runs = self.decode_workers > 0 or self.whole_runs
        self.run_type = core.MessageRun if self.whole_runs else None

    def commit_declines(self) -> Callable[[Any, Any], bool] | None:
        """Commits below ``skip_commit_scn`` are left to python; without one (0, the usual
        case) none is, and the native commit goes without the per-commit check."""
        return self.native_declines if self.skip_commit_scn else None

    def native_declines(self, txn: Any, record: Any) -> bool:
        """Whether a commit must take the python path: skipped by SCN (python does not format
        it at all). With metrics on, the native committer counts its rows into :attr:`tally`
        itself (``_tally.pxi``), as :meth:`_on_transaction` counts python's changes."""
        return bool(record.scn < self.skip_commit_scn)

    def on_native(self, txn: Transaction, messages: Iterable[Message], rows: int) -> None:
        """A transaction the native engine rendered: _on_transaction's list branch
        (``messages`` a list, or a MessageRun with native_runs: stage 2 in worker threads)."""
        self._counted(txn)
        self._stamp(txn, messages, 0)

    def on_native_stream(self, txn: Transaction) -> int:
        """A huge transaction the native engine renders in parts: _on_transaction's stream
        branch. Returns how many messages it may render before the next hand-off."""
        self._counted(txn)
        self._stream_txn, self._stream_index = txn, 0
        return BATCH_MESSAGES - self._pending_n

    def on_native_part(self, messages: Iterable[Message], rows: int) -> int:
        """The next messages of the streamed native transaction; the room before the next
        hand-off, so batches are cut where the python stream cuts them."""
        txn = self._stream_txn
        assert txn is not None, "a native stream part before its start"
        self._stream_index = self._stamp(txn, messages, self._stream_index)
        return BATCH_MESSAGES - self._pending_n

    def _message_position(self, txn: Transaction, index: int) -> Position:
        """The stream position of a transaction's ``index``-th message (what restarts compare)."""
        seq, lwn, rank = txn.commit_pos
        return (seq, lwn, rank, index)

    def _on_checkpoint(self, cp: Checkpoint) -> None:
        if self.native_barrier is not None and (self.output_checkpoints or self.on_checkpoint_hook is not None):
            self.native_barrier()  # the queued transactions come before the checkpoint and its hook
        unsent = None if self.output_checkpoints else self._checkpoint_unsent
        if unsent is not None:
            unsent(cp)  # not output (no flag 0x1000): only its effect on later positions
        else:
            messages = self.format.checkpoint(cp)
            if self.checkpoint_digests is not None:
                messages = self.checkpoint_digests.observe(messages)
            header = self.parser.header
            lwn_offset = cp.lwn_block * (header.block_size if header else 512)
            # The end of a log repeats its last LWN's checkpoint: index 1 sorts it after that one, so
            # a restart confirmed at the LWN's checkpoint still sends the log's (it was dropped).
            pos = (cp.seq, lwn_offset, CHECKPOINT_RANK, 1 if cp.redo_switch else 0)
            if self.output_checkpoints and pos > self.restart_pos:
                for m in messages:
                    self._pending.append(m)
                    self._positions.append(pos)
                    self._pending_n += 1
        if self.on_checkpoint_hook is not None:
            self.on_checkpoint_hook(cp, self.parser)

    def handoff(self, flush: bool = False) -> None:
        """Give the pending messages to the writer task; blocks while its queue is full.

        ``flush``: the parser has caught up with the reader (nothing read is left to parse):
        the writer flushes after this batch, so what was written reaches the output now
        rather than at the daemon's next poll. A busy stream, whose parser always finds redo
        waiting, is not flushed here and batches as before."""
        if self._pending:
            batch, positions = self._pending, self._positions
            self._pending, self._positions = [], []
            self.state.messages += self._pending_n
            self._pending_n = 0
        elif flush and self._unflushed:
            batch, positions = [], []
        else:
            return
        self._unflushed = not flush
        # No round trip to the event loop per batch (it cost the parser thread about half of its
        # time in the daemon): a slot is taken here and given back when the writer takes the
        # batch, so at most the queue size of batches wait, as with a bounded queue.
        while not self._room.acquire(timeout=0.5):
            if self._writer_task is not None and self._writer_task.done():
                raise RuntimeError("the writer task ended while messages were being handed to it")
        self._loop.call_soon_threadsafe(self._batches.put_nowait, (batch, positions, flush))

    def _open_batches(self, size: int) -> asyncio.Task[None]:
        """The parser-to-writer queue of at most ``size`` waiting batches, and the writer task
        that drains it (call in the event loop before the parser thread starts)."""
        self._loop = asyncio.get_running_loop()
        self._batches: asyncio.Queue[Any] = asyncio.Queue()  # (batch, positions), then None
        self._room = threading.Semaphore(size)
        self._writer_task = asyncio.create_task(self._write(self._batches))
        return self._writer_task

    # ----------------------------------------------------------------- threads and tasks
    async def run(self, seq: int, offset: int, stop: threading.Event) -> None:
        """Read from (seq, offset) until ``stop`` is set; then drain everything read.

        The reader and the parser each run in a thread of their own (blocking I/O and
        CPU-bound work would stall a coroutine's event loop); the writer is a task.
        """
        writer = self._open_batches(QUEUE_BATCHES)
        raw = self.block_loop is not None
        lwns: queue.Queue[Any] = queue.Queue(QUEUE_BLOCKS if raw else QUEUE_LWNS)
        parser_dead = threading.Event()
        reader = self._loop.run_in_executor(
            None, feed, lambda: self.follower.follow(seq, offset, raw), lwns, parser_dead, self.state.errors, None
        )
        parse = self._parse_blocks if raw else self._parse
        try:
            await self._loop.run_in_executor(
                None, run_parser, lambda: parse(lwns), self.state.errors, stop, parser_dead
            )
        finally:
            await self._batches.put(None)
            await writer
            await reader

    def _queued(self, q: queue.Queue[Any]) -> Iterator[tuple[RedoHeader, Any]]:
        """The reader's items from ``q`` until its end marker (None), the heartbeat kept while
        waiting for redo (the watchdog sees the parser thread alive)."""
        while True:
            self.state.heartbeat = time.monotonic()
            try:
                item = q.get(timeout=1.0)
            except queue.Empty:
                continue
            if item is None:
                return
            yield item

    def _enter(self, header: RedoHeader, current: RedoHeader | None) -> bool:
        """Make ``header`` the parser's (``current`` is the one before); True when it starts a
        new sequence."""
        new = current is None or header.sequence != current.sequence
        if new:
            self.parser.start_file(header)
            self.state.sequence = header.sequence
        self.parser.header = header
        return new

    def _file_end(self, header: RedoHeader) -> None:
        """A redo log read to its end: the parser's end of file, the log-switch metric, the hook."""
        self.parser.end_file()
        if self.tally is not None:
            self.tally.log_switch(
                "online" if header.is_current_online else "archived",
                max(0.0, time.time() - self.parser.epoch(header.next_time)),
            )
        if self.on_file_end is not None:
            self.on_file_end(header)

    def _parse(self, lwns: queue.Queue[Any]) -> None:
        current: RedoHeader | None = None
        for header, lwn in self._queued(lwns):
            if header is not current:
                self._enter(header, current)
                current = header
            if lwn is None:
                self._file_end(header)
            else:
                self.parser.process_lwn(lwn)
                self.state.lwns += 1
                if self.tally is not None:
                    self.tally.lwns_read(
                        (lwn.end_block - lwn.first_block) * header.block_size,
                        lwn.scn,
                        header.sequence,
                        self.parser.epoch(lwn.time),
                    )
            self.handoff(flush=lwns.empty())
            if self.halted:
                break
        self.handoff()

    def _parse_blocks(self, items: queue.Queue[Any]) -> None:
        """_parse for raw blocks (native engine): one :attr:`block_loop` per sequence checks,
        frames and analyses them; the per-LWN counters are read from it after each feed, and
        messages are handed to the writer every HANDOFF_MESSAGES and after each feed instead
        of after each LWN."""
        self._run_native(lambda: self._parse_raw(items, self.native_barrier or _nothing))

    def _run_native(self, work: Callable[[], None]) -> None:
        """Run the native parse ``work`` with hand-offs every HANDOFF_MESSAGES, then stop stage
        2's workers (everything was merged at the end of the input); after an error, what they
        had rendered is still stamped first, as one thread would have, and the error raised."""
        self._handoff_at = HANDOFF_MESSAGES if self.run_type is None else HANDOFF_RUN_MESSAGES
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

    def _parse_raw(self, items: queue.Queue[Any], barrier: Callable[[], None]) -> None:
        """_parse_blocks' loop; ``barrier`` merges what stage 2 holds (a feed's end, a file's end)."""
        current: RedoHeader | None = None
        loop: Any = None
        loop_path = ""
        parser = self.parser
        for header, blocks in self._queued(items):
            if header is not current:
                if self._enter(header, current):
                    loop = None
                current = header
            try:
                if blocks is None:
                    if loop is not None:
                        self._fed(loop, loop.finish, header)
                        loop = None
                    barrier()  # the file's transactions come before its end (state files, log switch)
                    self._file_end(header)
                else:
                    if loop is None:
                        loop = self.block_loop(
                            parser, header, blocks.path, self.follower.settings.verify_checksum, blocks.first_block
                        )
                        if parser.on_checkpoint == self._on_checkpoint:
                            loop.set_checkpoint_step(
                                self._on_checkpoint_native,
                                self._position_format(),
                                self.checkpoint_manager if self.on_checkpoint_hook else None,
                                self._checkpoint_hook(),
                            )
                    elif blocks.path is not loop_path:
                        loop.set_path(blocks.path)  # an online log's archived copy goes on
                    loop_path = blocks.path
                    step = partial(loop.feed, blocks.data, blocks.first_block, blocks.count, blocks.checked)
                    self._fed(loop, step, header)
                    barrier()  # what the feed committed goes out now, not at the next redo
            except _Halt:
                pass  # the loop stopped at the end of the LWN that set it
            self.handoff(flush=items.empty())
            if self.halted:
                break
        barrier()
        self.handoff()

    def _on_checkpoint_native(self, cp: Checkpoint) -> None:
        """_on_checkpoint for the native loop's per-LWN step: a halt set by it (the daemon's
        debug.stop-transactions) leaves the loop at once, as the python engine leaves after
        that LWN."""
        self._on_checkpoint(cp)
        if self.halted:
            raise _Halt()

    def _checkpoint_hook(self) -> Callable[[Checkpoint, Parser], None] | None:
        """The hook the native loop's checkpoint step calls when a schema checkpoint is due:
        with stage 2, after the queued transactions are merged (the hook counts them)."""
        hook, barrier = self.on_checkpoint_hook, self.native_barrier
        if hook is None or barrier is None:
            return hook

        def merged_first(cp: Checkpoint, parser: Parser) -> None:
            barrier()
            hook(cp, parser)

        return merged_first

    def _fed(self, loop: Any, step: Callable[[], None], header: RedoHeader) -> None:
        """Run ``step`` (a feed or the finish of ``loop``); count the LWNs it analysed as _parse does."""
        lwns, blocks = loop.lwns, loop.lwn_blocks
        parser = self.parser
        on_checkpoint = parser.on_checkpoint
        if on_checkpoint == self._on_checkpoint:
            parser.on_checkpoint = None  # the loop's checkpoint step takes it (set_checkpoint_step)
        try:
            step()
        finally:
            parser.on_checkpoint = on_checkpoint
        done = loop.lwns - lwns
        if not done:
            return
        self.state.lwns += done
        if self.tally is not None:
            self.tally.lwns_read(
                (loop.lwn_blocks - blocks) * header.block_size,
                loop.last_scn,
                header.sequence,
                self.parser.epoch(loop.last_time),
                done,
            )

    def _position_format(self) -> Any:
        """The format when an unsent LWN checkpoint only moves its position (OpenLogReplicator
        JSON without flag 0x1000): the native loop's checkpoint step then does it in C."""
        from replicator.formats.olr_json import OlrJsonFormat

        return self.format if type(self.format) is OlrJsonFormat and not self.output_checkpoints else None

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


def _nothing() -> None:
    """No stage 2: nothing to merge."""


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


def _tallied(changes: Iterable[Change], tally: Tally) -> Iterator[Change]:
    """Count the changes of a streamed transaction as they pass (it is read only once)."""
    for change in changes:
        tally.change(change)
        yield change
    tally.count_transaction("commit", "out")
