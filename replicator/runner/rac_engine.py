"""The daemon's data path for RAC: one follower per redo thread, records merged by SCN (docs/rac.md).

Each thread's :class:`~replicator.redo.online.RedoFollower` runs in a reader thread of its own
and fills its own queue. The parser thread keeps one head record per thread and analyses the
record with the smallest (SCN, thread) key -- but only when every other thread offers a
larger key or has a *bound* (its last LWN SCN, or its log's next SCN after a log end) that
proves nothing earlier can come from it. A thread that can prove neither (idle or lagging)
holds the merge until its redo arrives.

Stream positions: commits come out in (commit SCN, thread) order, so a message's position is
``(commit SCN, thread, (sequence, LWN offset, rank) packed, index)``; a restart re-reads every
thread from the newest restart point whose cut is below the confirmed commit SCN (or from the
checkpoint the run started from) and drops messages at or below the confirmed position.

Restart points (schema checkpoints with OLR's file plus ``"threads"``): taken after an LWN,
at the cut = the SCN of the last record analysed. Per thread the restart position is the
lower of (a) the start of the LWN it is in (or the position after its last LWN) and (b) the
start of its first LWN holding a record at or above the oldest begin SCN of the transactions
still open -- every record of an open transaction has an SCN at or above its begin (RAC
SCNs are causal).
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replicator.events import Transaction
from replicator.redo.header import SCN_NONE, RedoHeader
from replicator.redo.online import RedoFollower, read_header
from replicator.redo.records import Lwn
from replicator.runner.checkpoint import Position
from replicator.runner.daemon_engine import QUEUE_BLOCKS, DaemonEngine
from replicator.runner.driver import rac_restart_positions
from replicator.runner.handoff import feed, run_parser

QUEUE_LWNS = 64


def rac_position(txn: Transaction, index: int) -> tuple[int, int, int, int]:
    """The stream position of message ``index`` of ``txn`` in the merged order."""
    seq, lwn_offset, rank = txn.commit_pos
    return (txn.commit_scn, txn.thread, (seq << 64) | (lwn_offset << 20) | rank, index)


@dataclass
class _Thread:
    """Merge state of one redo thread."""

    thread: int
    queue: queue.Queue[Any]  # its follower's blocks (native merge) or LWNs
    header: RedoHeader | None = None
    lwn: Lwn | None = None
    index: int = 0
    bound: int = 0
    sequence: int = 0
    done: bool = False  # its follower ended (stopped or failed)
    lwn_start: tuple[int, int] = (0, 0)  # (sequence, offset) of the LWN being analysed
    next_pos: tuple[int, int] | None = None  # (sequence, offset) after the last LWN fully analysed
    lwn_scn: int = 0  # SCN of that LWN
    # (highest record SCN, sequence, offset) of the LWNs since the last restart point
    history: deque[tuple[int, int, int]] = field(default_factory=deque)
    # The native merge (RacMerge): the thread's record loop, the LWNs it framed and not yet
    # merged, the one being merged (``lwn`` is its Lwn), and a log end waiting behind them.
    loop: Any = None
    loop_path: str = ""
    ready: deque[Any] = field(default_factory=deque)  # LwnBufs
    cur: Any = None
    eof: RedoHeader | None = None


class RacEngine(DaemonEngine):
    """:class:`DaemonEngine` over several redo threads (``followers``: thread -> follower)."""

    def __init__(self, parser: Any, fmt: Any, writer: Any, followers: dict[int, RedoFollower], **kw: Any):
        super().__init__(parser, fmt, writer, next(iter(followers.values())), **kw)
        self.followers = followers
        parser.on_checkpoint = None  # no single-thread LWN checkpoints (see the module doc)
        self.threads: dict[int, _Thread] = {}
        self.starts: dict[int, tuple[int, int]] = {t: (0, 0) for t in followers}  # (sequence, offset)
        self.start_bounds: dict[int, int] = {}  # per thread: its bound from the restart point (merge.start_bound)
        # (cut SCN, raw redo time, redo bytes, force): the daemon decides and writes restart points.
        self.on_rac_checkpoint: Callable[[int, int, int, bool], None] | None = None
        self.cut_scn = 0  # SCN of the last record analysed
        # The native merge (replicator.native.wiring.attach): RacMerge and ThreadLoop's class.
        self.rac_merge: Any = None
        self.block_loop_type: Any = None

    def install_native_feed(self, core: Any) -> None:
        """Each thread's raw blocks are framed by its own ThreadLoop and merged by RacMerge in C."""
        from replicator.native import daemon_loop, framing

        loops = daemon_loop()
        self.rac_merge = loops.RacMerge()
        self.block_loop_type = loops.ThreadLoop
        for follower in self.followers.values():
            follower.chunk_check = framing().check_chunk  # an archived log's block checks: in its reader thread
        self.native_delivery(core)

    async def run(self, seq: int, offset: int, stop: threading.Event) -> None:
        """Follow every thread from :attr:`starts` (``seq``/``offset`` are the single-thread API's)."""
        await self.run_threads(self.starts, stop)

    def _message_position(self, txn: Transaction, index: int) -> Position:
        """RAC positions: (commit SCN, thread, packed position, index), see docs/rac.md."""
        return rac_position(txn, index)

    async def run_threads(self, starts: dict[int, tuple[int, int]], stop: threading.Event) -> None:
        """Follow every thread from its (sequence, offset) until ``stop``; then drain."""
        writer = self.handoffs.open(16)
        loop = writer.get_loop()
        parser_dead = threading.Event()
        raw = self.rac_merge is not None  # the native merge: the readers hand over raw blocks
        for t in self.followers:
            self.threads[t] = _Thread(
                t, queue.Queue(QUEUE_BLOCKS if raw else QUEUE_LWNS), bound=self._start_bound(t, *starts[t])
            )

        readers = [
            loop.run_in_executor(
                None,
                feed,
                lambda t=t: self.followers[t].follow(*starts[t], raw),
                self.threads[t].queue,
                parser_dead,
                self.state.errors,
                stop,
            )
            for t in self.followers
        ]
        merge = self._merge_native if raw else self._merge
        try:
            await loop.run_in_executor(None, run_parser, lambda: merge(stop), self.state.errors, stop, parser_dead)
        finally:
            parser_dead.set()
            await self.handoffs.close()
            await writer
            for r in readers:
                await r

    def _start_bound(self, thread: int, seq: int, offset: int) -> int:
        """The bound thread ``thread`` starts with: the restart point's (merge.start_bound) or,
        from the start of a log, the next SCN of the log before it where that one is still there
        (a restart point written before lwn-scn carried it)."""
        bound = self.start_bounds.get(thread, 0)
        if offset == 0 and seq > 1:
            follower = self.followers[thread]
            path = follower.locator.archived(seq - 1)
            header = read_header(path, follower.source) if path is not None else None
            if header is not None and header.next_scn != SCN_NONE:
                bound = max(bound, header.next_scn)
        return bound

    # ----------------------------------------------------------------- the merge (parser thread)
    def _fill(self, st: _Thread) -> bool:
        """Make ``st`` offer a record if its queue has one; False when it has none now."""
        while st.lwn is None or st.index >= len(st.lwn.records):
            if st.lwn is not None:
                self._lwn_done(st)
            item = self._next_item(st)
            if item is None:
                return False
            header, lwn = item
            st.header = header
            st.sequence = header.sequence
            if lwn is None:  # a log read to its end: its next SCN bounds the thread
                if header.next_scn != SCN_NONE:
                    st.bound = max(st.bound, header.next_scn)
                st.next_pos = (header.sequence + 1, 0)
                if self.on_rac_checkpoint is not None:
                    self.on_rac_checkpoint(self.cut_scn, header.next_time, 0, True)  # a log switch
                if self.on_file_end is not None:
                    self.on_file_end(header)
                continue
            st.lwn, st.index = lwn, 0
            st.bound = max(st.bound, lwn.scn)
            st.lwn_start = (header.sequence, lwn.first_block * header.block_size)
            if lwn.records:
                st.history.append((lwn.records[-1].scn, *st.lwn_start))  # sorted: the last is the highest
        return True

    def fill_native(self, st: _Thread) -> bool:
        """_fill for the native merge (RacMerge): the queue holds raw blocks, framed by the
        thread's ThreadLoop into LwnBufs (``st.ready``) that are taken one at a time; a log's
        end is handled once the LWNs before it were merged, as _fill does."""
        while st.cur is None or st.cur.index >= st.cur.n:
            if st.lwn is not None:
                self._lwn_done(st)
                st.cur = None
            if st.ready:
                buf = st.cur = st.ready.popleft()
                lwn = st.lwn = buf.lwn
                header = st.header
                assert header is not None
                st.bound = max(st.bound, lwn.scn)
                st.lwn_start = (header.sequence, lwn.first_block * header.block_size)
                if buf.n:
                    st.history.append((buf.last_scn, *st.lwn_start))  # sorted: the last is the highest
                continue
            if st.eof is not None:  # a log read to its end: its next SCN bounds the thread
                header, st.eof, st.loop = st.eof, None, None
                if header.next_scn != SCN_NONE:
                    st.bound = max(st.bound, header.next_scn)
                st.next_pos = (header.sequence + 1, 0)
                if self.native_barrier is not None:
                    self.native_barrier()  # stage 2: the merged transactions come before the log switch
                if self.on_rac_checkpoint is not None:
                    self.on_rac_checkpoint(self.cut_scn, header.next_time, 0, True)  # a log switch
                if self.on_file_end is not None:
                    self.on_file_end(header)
                continue
            item = self._next_item(st)
            if item is None:
                return False
            header, blocks = item
            if st.header is None or header.sequence != st.header.sequence:
                st.loop = None
            st.header = header
            st.sequence = header.sequence
            if blocks is None:
                if st.loop is not None:
                    st.loop.finish()  # the last LWN (then the log's end, above)
                st.eof = header
                continue
            if st.loop is None:
                st.loop = self.block_loop_type(
                    self.parser,
                    header,
                    blocks.path,
                    self.followers[st.thread].settings.verify_checksum,
                    blocks.first_block,
                    st.ready,
                )
            elif blocks.path != st.loop_path:
                st.loop.set_path(blocks.path)  # an online log's archived copy goes on
            st.loop_path = blocks.path
            st.loop.feed(blocks.data, blocks.first_block, blocks.count, blocks.checked)
        return True

    def _merge_native(self, stop: threading.Event) -> None:
        """_merge in C (RacMerge) over LWNs framed in C (ThreadLoop); with stage 2 (decode
        workers) the workers stop at the end, after the last merge."""
        threads = [self.threads[t] for t in sorted(self.threads)]
        self._run_native(lambda: self.rac_merge.run(self, self.parser, threads, stop))

    def handoff(self, flush: bool = False) -> None:
        """DaemonEngine.handoff; with stage 2 the queued transactions are merged first: RacMerge
        hands over when the merge holds (waiting for a thread's redo) and at a stop. (Within
        the merge of stage 2 the barrier returns at once.)"""
        if self.native_barrier is not None:
            self.native_barrier()
        DaemonEngine.handoff(self, flush)

    @staticmethod
    def _next_item(st: _Thread) -> Any:
        """The next item of ``st``'s reader, or None when it has none now or has ended (then
        ``st.done``)."""
        if st.done:
            return None
        try:
            item = st.queue.get_nowait()
        except queue.Empty:
            return None
        if item is None:
            st.done = True
        return item

    def _lwn_done(self, st: _Thread) -> None:
        lwn, header = st.lwn, st.header
        assert lwn is not None and header is not None
        self.parser.merged_lwn_done(lwn)
        st.lwn = None
        st.next_pos, st.lwn_scn = (header.sequence, lwn.end_block * header.block_size), lwn.scn
        self.state.lwns += 1
        self.state.sequence = header.sequence
        tally = self.tally
        if tally is not None:
            tally.lwns_read(
                (lwn.end_block - lwn.first_block) * header.block_size,
                lwn.scn,
                header.sequence,
                self.parser.epoch(lwn.time),
                0,
            )
            tally.threads[st.thread] = (header.sequence, lwn.scn, tally.redo_time)
        if self.on_rac_checkpoint is not None and lwn.scn <= self.cut_scn:
            self.on_rac_checkpoint(self.cut_scn, lwn.time, (lwn.end_block - lwn.first_block) * header.block_size, False)

    def _merge(self, stop: threading.Event) -> None:
        threads = [self.threads[t] for t in sorted(self.threads)]
        parser = self.parser
        while True:
            self.state.heartbeat = time.monotonic()
            if stop.is_set():  # a soft stop: the restart point written next re-reads from the cut
                self.handoff()
                return
            best: _Thread | None = None
            best_key = (0, 0)
            for st in threads:
                if self._fill(st):
                    assert st.lwn is not None
                    key = (st.lwn.records[st.index].scn, st.thread)
                    if best is None or key < best_key:
                        best, best_key = st, key
            # Hold: a thread with nothing to show must have proven that it cannot go below
            # best_key. A thread whose follower stopped still holds: its unread redo may.
            if best is None or any(
                (st.bound, st.thread) < best_key
                for st in threads
                if st is not best and (st.lwn is None or st.index >= len(st.lwn.records))
            ):
                self.handoff(flush=True)  # waiting for a thread's redo: what was merged goes out now
                if stop.is_set() or all(st.done for st in threads):
                    return
                stop.wait(0.005)
                continue
            assert best.lwn is not None and best.header is not None
            parser.enter(best.header, best.lwn)
            record = best.lwn.records[best.index]
            parser.merged_record(best.index, record)
            self.cut_scn = record.scn
            best.bound = max(best.bound, record.scn)  # a thread's later records are not lower
            best.index += 1

    def rac_positions(self) -> list[tuple[int, int, int, int]]:
        """Per thread (thread, sequence, offset, LWN SCN) to restart from (see the module doc)."""
        threads = []
        for t, st in sorted(self.threads.items()):
            if st.lwn is not None:
                current = st.lwn_start
            elif st.next_pos is not None:
                current = st.next_pos
            else:
                current = self.starts.get(t, (0, 0))
            threads.append((t, current, st.history, st.lwn_scn, st.bound))
        return rac_restart_positions(self.parser, threads)

    def thread_status(self) -> str:
        """``thread 1 seq 12 scn 345, thread 2 seq 7 scn 340`` for the systemd status line."""
        return ", ".join(f"thread {t} seq {st.sequence} scn {st.bound}" for t, st in sorted(self.threads.items()))

    @property
    def thread_progress(self) -> dict[int, tuple[int, int]]:
        """Per thread: (sequence being read, SCN bound) -- for status lines and metrics."""
        return {t: (st.sequence, st.bound) for t, st in sorted(self.threads.items())}
