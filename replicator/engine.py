"""The daemon's data path: reader thread -> parser coroutine -> writer task, with positions.

* The reader (:class:`~replicator.redo.online.RedoFollower`, blocking I/O) runs in a
  worker thread and hands ``(header, LWN)`` items to a bounded asyncio queue.
* One parser coroutine analyses LWNs, formats committed transactions and stamps every
  message with its stream position ``(sequence, LWN offset, record rank, index)``;
  messages at or below the restart position are dropped (already confirmed).
* One writer task hands batches to the writer in a thread; confirmations come back
  through :class:`Confirmations`, which turns (c_scn, idx) into stream positions.
* After every LWN the checkpoint hook may write a schema checkpoint (restart point).
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from replicator.checkpoint import POSITION_ZERO, Position
from replicator.events import Checkpoint, Message, Transaction
from replicator.formats.base import FLAG_CHECKPOINT, Format
from replicator.redo.header import RedoHeader
from replicator.redo.online import RedoFollower
from replicator.redo.parser import Parser

QUEUE_LWNS = 256
QUEUE_BATCHES = 64
CHECKPOINT_RANK = 1 << 30  # a checkpoint sorts after every record of its LWN


class Confirmations:
    """Sent-but-unconfirmed messages, in order; the confirmed position never skips one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: deque[tuple[int, int, Position]] = deque()
        self.confirmed: Position | None = None
        self.confirmed_scn_idx: tuple[int, int] = (0, 0)
        self.count = 0

    def sent(self, batch: list[Message], positions: list[Position]) -> None:
        with self._lock:
            for m, pos in zip(batch, positions):
                self._sent.append((m.scn, m.idx, pos))

    def confirm(self, scn: int, idx: int) -> None:
        """Writer callback: everything up to the message (scn, idx) is delivered."""
        with self._lock:
            while self._sent:
                s, i, pos = self._sent.popleft()
                self.confirmed, self.confirmed_scn_idx = pos, (s, i)
                self.count += 1
                if (s, i) == (scn, idx):
                    break

    @property
    def pending(self) -> int:
        return len(self._sent)


@dataclass
class EngineState:
    """Counters the daemon reports (metrics, STATUS, shutdown summary)."""

    lwns: int = 0
    transactions: int = 0
    messages: int = 0
    skipped: int = 0
    last_scn: int = 0
    sequence: int = 0
    errors: list[BaseException] = field(default_factory=list)


class Engine:
    """Runs reader, parser and writer until stopped or an error occurs."""

    def __init__(self, parser: Parser, fmt: Format, writer: Any, follower: RedoFollower, *,
                 restart_pos: Position = POSITION_ZERO, skip_commit_scn: int = 0,
                 on_checkpoint: Callable[[Checkpoint, Parser], None] | None = None,
                 on_file_end: Callable[[RedoHeader], None] | None = None):
        self.parser = parser
        self.format = fmt
        self.writer = writer
        self.follower = follower
        self.restart_pos = restart_pos
        self.skip_commit_scn = skip_commit_scn  # OLR-style restart: drop commits at or below
        self.on_checkpoint_hook = on_checkpoint
        self.on_file_end = on_file_end
        self.confirmations = Confirmations()
        self.state = EngineState()
        self.output_checkpoints = bool(parser.opt.flags & FLAG_CHECKPOINT)
        self._pending: list[Message] = []
        self._positions: list[Position] = []
        self.writer_lock = asyncio.Lock()  # the writer is not thread-safe: one call at a time
        parser.on_transaction = self._on_transaction
        parser.on_checkpoint = self._on_checkpoint

    # ----------------------------------------------------------------- parser callbacks
    def _on_transaction(self, txn: Transaction) -> None:
        self.state.transactions += 1
        self.state.last_scn = txn.commit_scn
        if txn.commit_scn <= self.skip_commit_scn:
            return
        seq, lwn, rank = txn.commit_pos
        for i, message in enumerate(self.format.transaction(txn)):
            pos = (seq, lwn, rank, i)
            if pos <= self.restart_pos:
                self.state.skipped += 1
                continue
            self._pending.append(message)
            self._positions.append(pos)

    def _on_checkpoint(self, cp: Checkpoint) -> None:
        messages = self.format.checkpoint(cp)
        header = self.parser.header
        lwn_offset = cp.lwn_block * (header.block_size if header else 512)
        pos = (cp.seq, lwn_offset, CHECKPOINT_RANK, 0)
        if self.output_checkpoints and pos > self.restart_pos:
            for m in messages:
                self._pending.append(m)
                self._positions.append(pos)
        if self.on_checkpoint_hook is not None:
            self.on_checkpoint_hook(cp, self.parser)

    # ----------------------------------------------------------------- tasks
    async def run(self, seq: int, block: int, stop: threading.Event) -> None:
        """Read from (seq, block) until ``stop`` is set; then drain everything read."""
        lwns: asyncio.Queue = asyncio.Queue(QUEUE_LWNS)
        batches: asyncio.Queue = asyncio.Queue(QUEUE_BATCHES)
        loop = asyncio.get_running_loop()

        def produce() -> None:
            try:
                for item in self.follower.follow(seq, block):
                    asyncio.run_coroutine_threadsafe(lwns.put(item), loop).result()
            except BaseException as e:  # reported to the daemon, which stops with the error code
                self.state.errors.append(e)
            finally:
                asyncio.run_coroutine_threadsafe(lwns.put(None), loop).result()

        reader = loop.run_in_executor(None, produce)
        writer = asyncio.create_task(self._write(batches))
        try:
            await self._parse(lwns, batches)
        except BaseException:
            stop.set()
            while await lwns.get() is not None:  # let the reader thread finish its last put
                pass
            raise
        finally:
            await batches.put(None)
            await writer
            await reader

    async def _parse(self, lwns: asyncio.Queue, batches: asyncio.Queue) -> None:
        current: RedoHeader | None = None
        while True:
            item = await lwns.get()
            if item is None:
                return
            header, lwn = item
            if header is not current:
                if current is None or header.sequence != current.sequence:
                    self.parser.start_file(header)
                    self.state.sequence = header.sequence
                current = header
                self.parser.header = header
            if lwn is None:
                self.parser.end_file()
                if self.on_file_end is not None:
                    self.on_file_end(header)
            else:
                self.parser.process_lwn(lwn)
                self.state.lwns += 1
            if self._pending:
                batch, positions = self._pending, self._positions
                self._pending, self._positions = [], []
                self.state.messages += len(batch)
                await batches.put((batch, positions))
            # Queue operations do not yield when they need not wait: give the writer,
            # checkpoint and reload tasks their turn after every LWN.
            await asyncio.sleep(0)

    async def _write(self, batches: asyncio.Queue) -> None:
        while True:
            item = await batches.get()
            if item is None:
                return
            batch, positions = item
            async with self.writer_lock:
                # Registered under the lock, so a checkpoint never sees a batch half-handed-over.
                self.confirmations.sent(batch, positions)
                await asyncio.to_thread(self.writer.write, batch)
