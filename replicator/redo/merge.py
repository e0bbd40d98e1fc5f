"""RAC: the records of several redo threads merged into one SCN order (docs/rac.md).

Every RAC instance writes its own redo thread. Within a thread, LWNs come in file order and
the records of an LWN are analysed sorted (redo-format.md §3.3); an LWN's SCN is at most
the SCN of every record in it, and later LWNs and later logs (first SCN = the previous
log's next SCN) never go below it. So each thread is a stream of records with
non-decreasing SCNs, and a thread's *bound* -- the SCN of its next unread record, or of its
next LWN header, or its log's next SCN at a log end -- is a lower bound on everything it
can still deliver.

:class:`ThreadMerge` is a k-way merge over those streams keyed by ``(SCN, thread)``: it
hands out the record with the smallest key only when every other thread has shown a
record or a bound that is not smaller. A thread that has nothing to show yet (an online
log not written further) *holds* the merge; in batch mode all data is on disk and no thread
ever holds. Because every change of a transaction precedes its commit in SCN (RAC's SCN
propagation is causal: a transaction resumed on another instance continues at a higher
SCN), a transaction begun on one thread and committed on another is complete at its commit,
and commits come out in cluster-wide SCN order -- the order a single instance would have
produced them in.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from replicator.redo.header import RedoHeader
from replicator.redo.reader import RedoFile, read_lwns
from replicator.redo.records import Lwn, Record
from replicator.redo.source import LOCAL, RedoSource


@dataclass(slots=True)
class ThreadProgress:
    """Where one redo thread is: for checkpoints, metrics and the merge's hold decision."""

    thread: int
    sequence: int = 0
    offset: int = 0  # byte offset just after the last LWN fully analysed
    lwn_scn: int = 0  # SCN of that LWN
    lwn_time: int = 0  # its raw redo time
    bound: int = 0  # no record still to come from this thread has a smaller SCN
    files: int = 0
    bytes_read: int = 0
    done: bool = False


@dataclass(slots=True)
class _Head:
    """The record a thread offers next, with the LWN and file header it belongs to."""

    record: Record
    rank: int
    lwn: Lwn
    header: RedoHeader


class ThreadCursor:
    """One thread's archived logs, in sequence order, as a stream of records.

    ``on_lwn_done(cursor, lwn)`` is called once all records of an LWN were handed out, and
    ``on_file_done(cursor, redo)`` after the last LWN of a file.
    """

    def __init__(self, thread: int, files: list[RedoFile], verify_checksum: bool = True, source: RedoSource = LOCAL):
        self.thread = thread
        self.files = files
        self.verify_checksum = verify_checksum
        self.source = source
        self.progress = ThreadProgress(thread)
        self.header: RedoHeader | None = None
        self.file: RedoFile | None = None
        self.on_lwn_done: Callable[[ThreadCursor, Lwn], None] | None = None
        self.on_file_done: Callable[[ThreadCursor, RedoFile], None] | None = None
        self._lwns = self._iter_lwns()
        self._lwn: Lwn | None = None
        self._index = 0
        self.lwn_start: tuple[int, int] | None = None  # (sequence, offset) of the LWN being handed out
        self.next_pos: tuple[int, int] | None = None  # (sequence, offset) after the last LWN analysed
        self.history: deque = deque()  # (highest record SCN, sequence, offset) per LWN, for restart points

    def _iter_lwns(self) -> Iterator[tuple[RedoHeader, RedoFile, Lwn | None]]:
        for redo in self.files:
            headers: list[RedoHeader] = []
            for lwn in read_lwns(redo.path, self.verify_checksum, header_out=headers, source=self.source):
                yield headers[0], redo, lwn
            yield headers[0], redo, None  # end of file

    def head(self) -> _Head | None:
        """The next record of this thread (None once the thread is exhausted)."""
        while True:
            lwn = self._lwn
            if lwn is not None and self._index < len(lwn.records):
                assert self.header is not None
                return _Head(lwn.records[self._index], self._index, lwn, self.header)
            if lwn is not None:  # every record of the LWN was handed out
                self._lwn = None
                self._lwn_done(lwn)
            item = next(self._lwns, None)
            if item is None:
                self.progress.done = True
                return None
            header, redo, nxt = item
            if nxt is None:
                self.next_pos = (header.sequence + 1, 0)
                self._file_done(redo)
                self.progress.bound = max(self.progress.bound, header.next_scn)
                continue
            if header is not self.header:
                self.header, self.file = header, redo
                self.progress.sequence = header.sequence
            self._lwn, self._index = nxt, 0
            self.progress.bound = max(self.progress.bound, nxt.scn)
            self.lwn_start = (header.sequence, nxt.first_block * header.block_size)
            if nxt.records:
                self.history.append((nxt.records[-1].scn, *self.lwn_start))  # sorted: the last is the highest

    def position(self) -> tuple[int, int]:
        """(sequence, offset) of the LWN being handed out, or just after the last one analysed."""
        if self._lwn is not None and self.lwn_start is not None:
            return self.lwn_start
        if self.next_pos is not None:
            return self.next_pos
        return (self.files[0].sequence, 0) if self.files else (0, 0)

    def advance(self) -> None:
        """The head record was consumed."""
        self._index += 1

    def _lwn_done(self, lwn: Lwn) -> None:
        assert self.header is not None
        p = self.progress
        p.offset, p.lwn_scn, p.lwn_time = lwn.end_block * self.header.block_size, lwn.scn, lwn.time
        self.next_pos = (self.header.sequence, p.offset)
        if self.on_lwn_done is not None:
            self.on_lwn_done(self, lwn)

    def _file_done(self, redo: RedoFile) -> None:
        self.progress.files += 1
        if self.on_file_done is not None:
            self.on_file_done(self, redo)


@dataclass
class ThreadMerge:
    """k-way merge of thread cursors by (record SCN, thread number); see the module doc."""

    cursors: list[ThreadCursor]
    _heap: list[tuple[int, int, int]] = field(default_factory=list)
    _heads: dict[int, _Head] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_thread = {c.thread: c for c in self.cursors}
        for c in self.cursors:
            self._refill(c)

    def _refill(self, cursor: ThreadCursor) -> None:
        head = cursor.head()
        if head is not None:
            self._heads[cursor.thread] = head
            heapq.heappush(self._heap, (head.record.scn, cursor.thread, head.rank))

    def __iter__(self) -> Iterator[tuple[ThreadCursor, _Head]]:
        """Records in merged order; the consumer analyses each before asking for the next."""
        heap = self._heap
        while heap:
            _, thread, _ = heapq.heappop(heap)
            cursor = self._by_thread[thread]
            head = self._heads.pop(thread)
            yield cursor, head
            cursor.advance()
            self._refill(cursor)

    @property
    def watermark(self) -> int:
        """Every commit below this SCN has been handed out (the smallest thread bound)."""
        bounds = [c.progress.bound for c in self.cursors if not c.progress.done]
        return min(bounds) if bounds else max((c.progress.bound for c in self.cursors), default=0)


def restart_position(current: tuple[int, int], history: deque, oldest_begin: int | None) -> tuple[int, int]:
    """Where one thread must be re-read from for a restart point (docs/rac.md, Checkpoints).

    ``current`` is (sequence, offset) of the thread's LWN being analysed (or just after its
    last one); ``history`` holds (highest record SCN, sequence, offset) of its LWNs since the
    last restart point, oldest first, and is pruned; ``oldest_begin`` is the lowest begin SCN
    of the transactions still open (None: none). Every record of an open transaction has an
    SCN at or above its begin, so an LWN whose records are all below it can be skipped; the
    first LWN holding a record at or above it is where the thread must be re-read from.
    """
    if oldest_begin is not None:
        while history and history[0][0] < oldest_begin:
            history.popleft()  # never needed again: the oldest begin SCN only grows
        if history:
            return min(current, (history[0][1], history[0][2]))
        return current
    while history and (history[0][1], history[0][2]) < current:
        history.popleft()
    return current


def restart_entry(
    thread: int, current: tuple[int, int], history: deque, oldest_begin: int | None, lwn_scn: int, bound: int
) -> tuple[int, int, int, int]:
    """A RAC restart point's entry for one thread: (thread, sequence, offset, lwn-scn).

    ``lwn-scn`` is the SCN of the thread's last LWN analysed, except where the thread is
    re-read from the start of a log (offset 0: it had read its previous log to the end and
    nothing since): there it is that log's next SCN, ``bound``, as the fork rophy/olr counts a
    finished log. A restart bounds the thread with it (:func:`start_bound`) -- without it a
    thread whose next log does not exist yet (an idle instance) would hold the merge forever.
    """
    seq, offset = restart_position(current, history, oldest_begin)
    return (thread, seq, offset, bound if offset == 0 and (seq, offset) == current else lwn_scn)


def start_bound(offset: int, lwn_scn: int) -> int:
    """The bound a thread restarted from a RAC restart point starts with (0 = none known).

    From a log start every record still to come has an SCN at or above the previous log's next
    SCN, which the entry's ``lwn-scn`` holds there (:func:`restart_entry`; an older file's
    last-LWN SCN is lower, so still a true bound). Inside a log the thread is re-read from an
    earlier LWN that may hold lower SCNs: no bound until its first LWN arrives.
    """
    return lwn_scn if offset == 0 else 0


def group_by_thread(files: list[RedoFile]) -> dict[int, list[RedoFile]]:
    """Files per redo thread, each list in sequence order."""
    out: dict[int, list[RedoFile]] = {}
    for f in files:
        out.setdefault(f.thread, []).append(f)
    for lst in out.values():
        lst.sort(key=lambda f: f.sequence)
    return dict(sorted(out.items()))
