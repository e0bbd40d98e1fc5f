"""Following a live database's redo: online log groups first, archived copies when needed.

For each sequence the follower reads the online member holding it while the log grows,
waits when it reaches blocks not written yet, and finishes when the log was switched
(next SCN set) and NAB is reached. If the online group is reused before it was read to
the end (the sequence in a block header is higher: OVERWRITTEN), reading continues from
the archived copy at the first LWN not yet handed over, so nothing is lost or repeated.
A sequence that never shows up is retried ``arch-read-tries`` times, then error 10009.
All of this is blocking I/O: the daemon runs it in a worker thread. Files are read
through the locator's :class:`~replicator.redo.source.RedoSource` (local, SFTP or ASM).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace

from replicator import log
from replicator.errors import RedoLogError, RuntimeFailure
from replicator.redo.blocks import BlockStatus, check_blocks, payload_of
from replicator.redo.header import SCN_NONE, RedoHeader
from replicator.redo.identity import DatabaseIdentity
from replicator.redo.reader import (
    ChunkCheck,
    archive_format_regex,
    checked_chunks,
    file_thread,
    read_chunks,
    read_header,
    read_lwns,
    resetlogs_from_name,
    sequence_from_name,
)
from replicator.redo.records import Lwn, RecordFramer
from replicator.redo.source import LOCAL, RedoSource

READ_CHUNK = 8 * 1024 * 1024


@dataclass
class LogLocator:
    """Where redo files are: online group members and archive directories."""

    online_groups: list[list[str]]
    archive_dirs: list[str]
    archive_format: str
    path_mapping: list[tuple[str, str]] = field(default_factory=list)
    verify_checksum: bool = True  # header blocks too; off with disable-checks bit 4
    source: RedoSource = field(default=LOCAL, repr=False)
    thread: int = 0  # RAC: only this redo thread's logs (0 = every file, one thread expected)
    # The RESETLOGS_ID of the incarnation read (0: any): archived names whose %r says another
    # one are not this run's logs, whatever sequence they carry.
    resetlogs: int = 0
    other_incarnations: set[str] = field(default_factory=set, repr=False)  # such names seen (for messages)

    def map_path(self, path: str) -> str:
        """Apply the first matching ``path-mapping`` prefix (olr-interfaces.md §8.4)."""
        for src, dst in self.path_mapping:
            if path.startswith(src):
                return dst + path[len(src) :]
        return path

    def archive_files(self) -> Iterator[tuple[int, str]]:
        """(sequence, path) of every archived log (FRA day folders included)."""
        if not self.archive_format:
            return
        pattern = archive_format_regex(self.archive_format)
        for directory in self.archive_dirs:
            # The directory and its subdirectories (FRA day folders), hidden names skipped.
            top = [e for e in self.source.scan(self.map_path(directory)) if not e.name.startswith(".")]
            nested = [e for d in top if d.is_dir for e in self.source.scan(d.path) if not e.name.startswith(".")]
            for entry in (*top, *nested):
                seq = sequence_from_name(entry.name, pattern)
                if not seq or entry.is_dir:
                    continue
                resetlogs = resetlogs_from_name(entry.name, pattern)
                if self.resetlogs and resetlogs is not None and resetlogs != self.resetlogs:
                    self.other_incarnations.add(entry.name)
                    continue
                if not self.thread or file_thread(entry.path, pattern, self.source) == self.thread:
                    yield seq, entry.path

    def threads(self) -> list[int]:
        """The redo threads that have files here (archived names or online headers), sorted."""
        found = set()
        pattern = archive_format_regex(self.archive_format) if self.archive_format else None
        for _, path in replace(self, thread=0).archive_files():
            found.add(file_thread(path, pattern, self.source))
        for members in self.online_groups:
            for member in members:
                header = read_header(self.map_path(member), self.source, self.verify_checksum)
                if header is not None:
                    found.add(header.thread or 1)
        return sorted(found)

    def archived(self, seq: int) -> str | None:
        """The archived log of ``seq``, or None."""
        return next((path for s, path in self.archive_files() if s == seq), None)

    def online(self, seq: int) -> tuple[str | None, int]:
        """(member path holding ``seq`` or None, highest sequence seen in the online logs)."""
        highest = 0
        for members in self.online_groups:
            for member in members:
                path = self.map_path(member)
                header = read_header(path, self.source, self.verify_checksum)
                if header is None or (self.thread and header.thread != self.thread):
                    continue
                highest = max(highest, header.sequence)
                if header.sequence == seq:
                    return path, highest
        return None, highest


@dataclass
class FollowSettings:
    """Timing options (config names in comments)."""

    read_sleep: float = 0.05  # redo-read-sleep-us
    arch_sleep: float = 10.0  # arch-read-sleep-us
    arch_tries: int = 10  # arch-read-tries
    verify_delay: float = 0.0  # redo-verify-delay-us
    verify_checksum: bool = True
    archived_only: bool = False  # source flag 0x1


class ReadLimit:
    """``--read-limit``: keeps the redo read rate of the followers sharing it (one per RAC
    thread) at or below ``mb_per_s`` MB/s on average, sleeping in the reader threads (a stop
    ends the sleep at once)."""

    def __init__(self, mb_per_s: float, stop: threading.Event) -> None:
        self.bytes_per_s = mb_per_s * 1_000_000
        self.stop = stop
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._read = 0

    def consumed(self, nbytes: int) -> None:
        """``nbytes`` more were read: wait until they are due at the limit."""
        with self._lock:
            self._read += nbytes
            due = self._started + self._read / self.bytes_per_s
        wait = due - time.monotonic()
        if wait > 0:
            self.stop.wait(wait)


@dataclass(slots=True)
class Blocks:
    """Whole blocks of a redo log as read, for the native record loop to check and frame
    (:meth:`RedoFollower.follow` with ``raw``)."""

    path: str
    data: bytes
    first_block: int
    count: int
    checked: bool = False  # the blocks passed the block checks here (the loop need not check them again)


class RedoFollower:
    """Yields (header, LWN) for consecutive sequences, forever or until stopped.

    With ``raw`` it yields (header, :class:`Blocks`) instead: the same blocks the LWNs would
    be framed from, in order, for the native record loop (replicator.native, BlockLoop),
    which checks, frames and analyses them itself. An online log's blocks are handed over
    once they passed the block checks here (the end of what was written is found by them);
    when its group is reused before it was read to the end, the archived copy continues
    at the next block not handed over, so the loop's framing simply goes on. With
    :attr:`chunk_check` (the native core's check_chunk) an archived log's buffers are checked
    here too, in the reader thread, so the parser thread only frames them; a buffer that fails
    is handed over unchecked (the loop raises its error in its place).
    """

    chunk_check: ChunkCheck | None = None

    def __init__(
        self,
        locator: LogLocator,
        settings: FollowSettings,
        stop: threading.Event,
        identity: DatabaseIdentity | None = None,
        read_limit: ReadLimit | None = None,
    ):
        self.locator = locator
        self.settings = settings
        self.stop = stop
        self.source = locator.source
        self.identity = identity  # every log's header is checked against it before it is read
        self.read_limit = read_limit
        self._headers: dict[int, RedoHeader] = {}  # the last header read of each sequence

    def _check(self, header: RedoHeader | None) -> None:
        if header is not None and self.identity is not None:
            self.identity.check(header, self.locator.thread)

    def follow(self, seq: int, offset: int = 0, raw: bool = False) -> Iterator[tuple[RedoHeader, Lwn | Blocks | None]]:
        """From ``seq`` at byte ``offset`` (an LWN start; 0 = the first LWN) onwards.

        ``(header, None)`` marks a file read to its end. ``raw``: blocks, not LWNs (see the class).
        """
        block = 0
        while not self.stop.is_set():
            header = None
            for header, lwn in self._sequence(seq, block, offset, raw):
                yield header, lwn
                if self.read_limit is not None and lwn is not None:
                    self.read_limit.consumed(
                        lwn.count * header.block_size
                        if isinstance(lwn, Blocks)
                        else (lwn.end_block - lwn.first_block) * header.block_size
                    )
            if self.stop.is_set():
                return
            header = header or self._headers.get(seq)  # a restart at the very end: no LWN was left
            assert header is not None
            yield header, None
            seq, block, offset = seq + 1, 2, 0

    def _wait(self, seconds: float) -> None:
        self.stop.wait(seconds)

    def _sequence(
        self, seq: int, block: int, offset: int, raw: bool = False
    ) -> Iterator[tuple[RedoHeader, Lwn | Blocks]]:
        tries = 0
        while not self.stop.is_set():
            path = self.locator.archived(seq)
            if path is not None:
                first = read_header(path, self.source, self.settings.verify_checksum)
                self._check(first)
                if not block:
                    block = max(2, offset // first.block_size) if first is not None else 2
            if path is not None:
                headers: list[RedoHeader] = []
                if raw and self.chunk_check is not None:  # read and checked here, framed by the loop
                    for buf, first_block, count, checked in checked_chunks(
                        path, self.chunk_check, self.settings.verify_checksum, headers, block, self.source
                    ):
                        yield headers[0], Blocks(path, buf, first_block, count, checked)
                elif raw:  # read_lwns' reading and checks of the file; the blocks are the loop's to check
                    for buf, first_block, count in read_chunks(
                        path, self.settings.verify_checksum, headers, block, self.source
                    ):
                        yield headers[0], Blocks(path, buf, first_block, count)
                for lwn in (
                    ()
                    if raw
                    else read_lwns(
                        path, self.settings.verify_checksum, header_out=headers, start_block=block, source=self.source
                    )
                ):
                    yield headers[0], lwn
                if headers:
                    self._headers = {seq: headers[0]}
                    return
                continue
            online, highest = (None, 0) if self.settings.archived_only else self.locator.online(seq)
            if online is not None:
                if not block:
                    first = read_header(online, self.source, self.settings.verify_checksum)
                    block = max(2, offset // first.block_size) if first is not None else 2
                resume = yield from self._online(online, seq, block, raw)
                if resume is None:
                    return  # read to its end
                log.warning(
                    60024,
                    f"online log of sequence {seq} was reused before it was read to the end; "
                    f"continuing from its archived copy at block {resume}",
                )
                block = resume
                continue
            if highest > seq or self.settings.archived_only:
                tries += 1
                others = self._other_incarnations(seq)
                if tries > self.settings.arch_tries:
                    raise RuntimeFailure(
                        f"archived redo log for sequence {seq} not found after {tries - 1} tries" + others, 10009
                    )
                log.warning(60027, f"archived redo log for sequence {seq} not found, waiting (try {tries})" + others)
                self._wait(self.settings.arch_sleep)
            else:
                self._wait(self.settings.read_sleep)  # the sequence has not started yet

    def _other_incarnations(self, seq: int) -> str:
        """For the not-found messages: names of that sequence skipped for their %r."""
        pattern = archive_format_regex(self.locator.archive_format) if self.locator.archive_format else None
        names = sorted(
            n for n in self.locator.other_incarnations if pattern is not None and sequence_from_name(n, pattern) == seq
        )
        if not names:
            return ""
        return (
            f" (skipped {', '.join(names[:3])}: its %r is not the checkpoint's RESETLOGS_ID "
            f"{self.locator.resetlogs}, a log of another incarnation)"
        )

    def _online(
        self, path: str, seq: int, block: int, raw: bool = False
    ) -> Generator[tuple[RedoHeader, Lwn | Blocks], None, int | None]:
        """Read a growing online log; returns None when done, or the LWN block to resume at
        (``raw``: the first block not handed over)."""
        header = read_header(path, self.source, self.settings.verify_checksum)
        if header is None or header.sequence != seq:
            return block
        self._check(header)
        self._headers = {seq: header}
        bs = header.block_size
        framer = RecordFramer(bs, header.endian, path, block)
        resume = block
        crc_retries = 0
        # A poll starts at the source's size (1 MiB locally, less remotely) and doubles up to
        # READ_CHUNK while every block read was new, so a poll costs what was written since.
        floor = min(READ_CHUNK, self.source.follow_read_min)
        want = floor
        with self.source.open(path) as f:
            while not self.stop.is_set():
                buf = f.read(block * bs, want - want % bs)
                check = check_blocks(buf, block, bs, seq, header.endian, self.settings.verify_checksum)
                if check.good and raw:
                    good = buf if check.good * bs == len(buf) else buf[: check.good * bs]
                    yield header, Blocks(path, good, block, check.good, True)  # (checked above)
                    block += check.good
                    resume = block
                    crc_retries = 0
                elif check.good:
                    for lwn in framer.feed(payload_of(buf, bs, check.good), block):
                        resume = lwn.end_block
                        yield header, lwn
                    block += check.good
                    crc_retries = 0
                full = check.status is BlockStatus.OK and check.good * bs >= want - want % bs and check.good > 0
                want = min(READ_CHUNK, want * 2) if full else floor
                if check.status is BlockStatus.OVERWRITTEN:
                    return resume
                if check.status is BlockStatus.CRC_ERROR:
                    crc_retries += 1  # possibly being written right now
                    if crc_retries > 100:
                        raise RedoLogError(f"file {path}, block {block}: block checksum mismatch", 40006)
                    self._wait(self.settings.verify_delay or self.settings.read_sleep)
                    continue
                fresh = read_header(path, self.source, self.settings.verify_checksum)
                if fresh is None or fresh.sequence != seq:
                    return resume  # the group was reused for a newer sequence
                header = self._headers[seq] = fresh
                if header.next_scn != SCN_NONE and header.nab and block >= header.nab:
                    for lwn in () if raw else framer.finish():  # raw: the loop finishes at the file's end mark
                        yield header, lwn
                    return None
                if check.good == 0 or check.status is not BlockStatus.OK:
                    self._wait(self.settings.read_sleep)
        return None


def wait_until(predicate: Callable[[], bool], timeout: float, step: float = 0.01) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds pass (used by tests and shutdown)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
