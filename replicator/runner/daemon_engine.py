"""The daemon's follower feed: reader thread -> parser thread -> writer task, with positions.

* The reader (:class:`~replicator.redo.online.RedoFollower`, blocking I/O) runs in a
  worker thread and hands ``(header, LWN)`` items to a bounded queue.
* One parser thread analyses LWNs; the one :class:`~replicator.runner.driver.Driver` this
  engine is formats committed transactions, and its delivery
  (:class:`~replicator.runner.handoff.ThreadDelivery`) stamps every message with its stream
  position ``(sequence, LWN offset, record rank, index)``; messages at or below the restart
  position are dropped (already confirmed). It is a thread rather than a coroutine because
  parsing is CPU-bound: in a coroutine it would starve the event loop that serves signals,
  checkpoints, reloads and network clients.
* One writer task hands batches to the writer in a thread; confirmations come back
  through :class:`~replicator.runner.handoff.Confirmations`, which turns (c_scn, idx) into
  stream positions.
* After every LWN the checkpoint hook may write a schema checkpoint (restart point).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from replicator.events import Checkpoint, Transaction
from replicator.formats.base import Format
from replicator.redo.header import RedoHeader
from replicator.redo.online import RedoFollower
from replicator.redo.parser import Parser
from replicator.runner.driver import Driver
from replicator.runner.handoff import BATCH_MESSAGES, Confirmations, EngineState, ThreadDelivery, feed, run_parser
from replicator.runner.position_file import CHECKPOINT_RANK, POSITION_ZERO, Position
from replicator.writers.capabilities import WholeRunWriter

# (Confirmations, EngineState, feed and run_parser lived here: runner/handoff.py now.)
__all__ = [
    "BATCH_MESSAGES",
    "CHECKPOINT_RANK",
    "Confirmations",
    "DaemonEngine",
    "EngineState",
    "feed",
    "run_parser",
]

QUEUE_LWNS = 256
QUEUE_BLOCKS = 2  # raw block buffers (up to a read chunk each, 16 MB locally) read ahead of the parser
QUEUE_BATCHES = 64
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


class DaemonEngine(Driver):
    """The follower feed: runs reader, parser and writer until stopped or an error occurs."""

    # The native record loop's class (replicator.native.wiring.attach): the reader then hands
    # over raw blocks and the parser thread frames and analyses them in C (_parse_blocks).
    block_loop: Any = None
    # The daemon's CheckpointManager, when its per-LWN step may be decided in C (the native
    # record loop's checkpoint step, _daemon_loop.pxi); None: the python step for every LWN.
    checkpoint_manager: Any = None
    # Set on the parser thread (the daemon's debug stops: stop-log-switches at a file's end,
    # stop-transactions at an LWN's checkpoint): parsing ends after that file or LWN, whatever
    # the reader has queued beyond it, so both engines stop at the same place.
    halted: bool = False

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
        self.writer = writer
        self.follower = follower
        # The thread hand-off to the writer task; a full batch goes through handoff (RAC's merges first).
        self.handoffs = ThreadDelivery(
            writer,
            parser,
            self._message_position,
            self.handoff,
            restart_pos=restart_pos,
            skip_commit_scn=skip_commit_scn,
        )
        super().__init__(parser, fmt, self.handoffs)
        self.on_checkpoint_hook = on_checkpoint
        self.checkpoint_waits = on_checkpoint is not None  # the hook counts the merged transactions
        self.on_file_end = on_file_end
        self.tally = None  # metrics counters (ops.metrics_tally.Tally), bumped by the parser thread
        self.confirmations: Confirmations = self.handoffs.confirmations
        self.state: EngineState = self.handoffs.state
        self.writer_lock = self.handoffs.writer_lock
        # The writer takes native runs whole (install_native_feed sets the run type then).
        self.whole_runs = isinstance(writer, WholeRunWriter) and bool(writer.writes_runs_whole)

    @property
    def skip_commit_scn(self) -> int:
        """Commits below it are dropped (a restart from an OpenLogReplicator writer checkpoint)."""
        return self.handoffs.skip_commit_scn

    # The native committer (replicator.native.wiring.attach) renders a commit and hands its
    # messages to the driver's on_native* instead of calling _on_transaction.
    def install_native_feed(self, core: Any) -> None:
        """The single-thread daemon frames the reader's raw blocks in a native BlockLoop."""
        from replicator.native import daemon_loop, framing

        self.block_loop = daemon_loop().BlockLoop
        self.follower.chunk_check = framing().check_chunk  # an archived log's block checks: in the reader thread
        self.native_delivery(core)

    def native_delivery(self, core: Any) -> None:
        """How native commits reach the writer: stage 2 in worker threads takes MessageRuns; the
        engine stamps their messages, or, when the writer takes runs whole (the file writer),
        queues each run as one item."""
        from replicator.native import decode_workers

        self.decode_workers = decode_workers()
        self.native_runs = self.decode_workers > 0 or self.whole_runs
        self.handoffs.run_type = core.MessageRun if self.whole_runs else None

    def commit_declines(self) -> Callable[[Any, Any], bool] | None:
        """Commits below ``skip_commit_scn`` are left to python; without one (0, the usual
        case) none is, and the native commit goes without the per-commit check."""
        return self.native_declines if self.skip_commit_scn else None

    def native_declines(self, txn: Any, record: Any) -> bool:
        """Whether a commit must take the python path: skipped by SCN (python does not format
        it at all). With metrics on, the native committer counts its rows into :attr:`tally`
        itself (``_tally.pyx``), as the driver counts python's changes."""
        return bool(record.scn < self.skip_commit_scn)

    def _message_position(self, txn: Transaction, index: int) -> Position:
        """The stream position of a transaction's ``index``-th message (what restarts compare)."""
        seq, lwn, rank = txn.commit_pos
        return (seq, lwn, rank, index)

    def checkpointed(self, cp: Checkpoint, final: bool) -> None:
        """The schema checkpoint's hook (the daemon's restart point)."""
        if self.on_checkpoint_hook is not None:
            self.on_checkpoint_hook(cp, self.parser)

    def handoff(self, flush: bool = False) -> None:
        """Give the pending messages to the writer task; blocks while its queue is full
        (``flush``: the parser has caught up with the reader, see ThreadDelivery.send)."""
        self.handoffs.send(flush)

    # ----------------------------------------------------------------- threads and tasks
    async def run(self, seq: int, offset: int, stop: threading.Event) -> None:
        """Read from (seq, offset) until ``stop`` is set; then drain everything read.

        The reader and the parser each run in a thread of their own (blocking I/O and
        CPU-bound work would stall a coroutine's event loop); the writer is a task.
        """
        writer = self.handoffs.open(QUEUE_BATCHES)
        loop = writer.get_loop()
        raw = self.block_loop is not None
        lwns: queue.Queue[Any] = queue.Queue(QUEUE_BLOCKS if raw else QUEUE_LWNS)
        parser_dead = threading.Event()
        reader = loop.run_in_executor(
            None, feed, lambda: self.follower.follow(seq, offset, raw), lwns, parser_dead, self.state.errors, None
        )
        parse = self._parse_blocks if raw else self._parse
        try:
            await loop.run_in_executor(None, run_parser, lambda: parse(lwns), self.state.errors, stop, parser_dead)
        finally:
            await self.handoffs.close()
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
        """Run the native parse ``work`` (Driver.run_native) with hand-offs every HANDOFF_MESSAGES."""
        self.handoffs.limit = HANDOFF_MESSAGES if self.handoffs.run_type is None else HANDOFF_RUN_MESSAGES
        self.run_native(work)

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


def _nothing() -> None:
    """No stage 2: nothing to merge."""
