"""The redo stream: SCN clock, LWN grouping, and archived log files with log switches.

The generator asks :meth:`RedoStream.open_record` for the SCN of each record it is about
to build, then hands the finished record to :meth:`RedoStream.add`. The stream decides
LWN boundaries as a log writer would (a commit flushes, so does a clock tick or a full
buffer), packs each LWN into blocks and appends it to the current log, switching to the
next sequence when the log is full or the timeline asks for it. Files are named by
``log-archive-format`` and their headers written when they are closed.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from replicator.errors import ConfigError
from replicator.redogen.blocks import Record, layout, pack_lwn, seal
from replicator.redogen.fileheader import LogHeader, file_header_block, redo_header_block
from replicator.redogen.ids import redo_time
from replicator.redogen.scenario import Scenario

_FLUSH_BYTES = 4 << 20


@dataclass(slots=True)
class ArchivedLog:
    """One finished redo log file."""

    path: Path
    sequence: int
    first_scn: int
    next_scn: int
    blocks: int
    thread: int = 1


def archive_name(
    fmt: str, thread: int, sequence: int, resetlogs: int, activation: int, dbid: int, rng: random.Random
) -> str:
    """Expand ``log_archive_format`` (%t %T %s %S %r %a %d %h)."""
    out, i = [], 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%" and i + 1 < len(fmt):
            code = fmt[i + 1]
            i += 2
            out.append(
                {
                    "t": str(thread),
                    "T": f"{thread:04d}",
                    "s": str(sequence),
                    "S": f"{sequence:010d}",
                    "r": str(resetlogs),
                    "a": str(activation),
                    "d": f"{dbid:x}",
                    "h": "".join(rng.choices(string.digits + string.ascii_lowercase, k=8)),
                }.get(code, "%" + code)
            )
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class LogSink(Protocol):
    """Where one log sequence goes: an archive file (batch) or an online group (online mode)."""

    header: LogHeader
    next_block: int

    def append(self, blocks: bytearray) -> None:
        """Add the (unsealed) blocks of one LWN."""

    def close(self, next_scn: int, next_time: int) -> ArchivedLog:
        """Finish the log: write its final header; return the archived copy."""


SinkFactory = Callable[[str, LogHeader], LogSink]


class ArchiveFile:
    """An archived log written directly: data blocks are buffered, sealed and appended."""

    def __init__(self, path: Path, header: LogHeader):
        self.path = path
        self.header = header
        self.fh: BinaryIO = open(path, "wb")
        self.fh.write(b"\0" * (2 * header.block_size))
        self.next_block = 2
        self._pending = bytearray()

    def append(self, blocks: bytearray) -> None:
        """Buffer the blocks of one LWN (written in large sealed chunks)."""
        self._pending += blocks
        self.next_block += len(blocks) // self.header.block_size
        if len(self._pending) >= _FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Seal and write the buffered blocks."""
        seal(self._pending, self.header.block_size)
        self.fh.write(self._pending)
        self._pending = bytearray()

    def close(self, next_scn: int, next_time: int) -> ArchivedLog:
        """Write the remaining blocks, then blocks 0 and 1 with the final NAB and next SCN."""
        self.flush()
        h = self.header
        h.next_scn, h.next_time, h.nab = next_scn, next_time, self.next_block
        self.fh.seek(0)
        self.fh.write(file_header_block(h.block_size, self.next_block - 1, h.compat))
        self.fh.write(redo_header_block(h))
        self.fh.close()
        return ArchivedLog(self.path, h.sequence, h.first_scn, next_scn, self.next_block, h.thread)


class RedoStream:
    """SCN clock + LWN grouping + log files of one redo thread."""

    def __init__(self, sc: Scenario, out_dir: Path, con_uid: int, sink: SinkFactory | None = None, thread: int = 0):
        self.sc = sc
        self.thread = thread or sc.thread
        # RAC mode: every record takes a new SCN (see Scenario.scn_per_record).
        self.per_record_scn = bool(sc.scn_per_record if sc.scn_per_record is not None else sc.threads > 1)
        self.out_dir = out_dir
        self._sink: SinkFactory = sink or (lambda name, header: ArchiveFile(out_dir / name, header))
        self.con_uid = con_uid
        self.v23 = sc.compat >= 0x17000000
        self.scn = sc.start_scn
        self.sequence = sc.first_sequence
        self.resetlogs = sc.effective_resetlogs
        self.logs: list[ArchivedLog] = []
        self._rng = random.Random(sc.seed if self.thread == sc.thread else sc.seed * 1000 + self.thread)
        self._file: LogSink | None = None
        self._switch = False
        self._lwn: list[Record] = []
        self._lwn_epoch = 0
        self._lwn_bytes = 0
        self._lwn_commits = 0
        self._last_commit = False
        self._last_scn = -1
        self._sub = 0
        self._max_lwn_bytes = sc.lwn_max_blocks * (sc.block_size - 16)
        self.last_epoch = sc.start_epoch
        # (sequence, first block, blocks, LWN SCN, epoch) per LWN; (sequence, -1, end block, SCN, epoch)
        # at each log end. The expected output replays them as OLR's checkpoints.
        self.lwn_log: list[tuple[int, int, int, int, int]] = []
        # Called with (first SCN, last SCN) once an LWN is in the file (lag benchmarks).
        self.on_lwn_written: Callable[[int, int], None] | None = None
        self._last_lwn: tuple[int, int] = (0, 0)
        self.bytes_written = 0  # redo blocks packed so far, all files

    # -- records -------------------------------------------------------------------------
    def open_record(self, epoch: int, commit: bool = False) -> tuple[int, int]:
        """SCN and sub-SCN for the next record (starting a new LWN first when due)."""
        if self._lwn and (
            epoch != self._lwn_epoch
            or self._lwn_bytes >= self._max_lwn_bytes
            or (self._last_commit and self._lwn_commits >= self.sc.group_commits)
        ):
            self.flush_lwn()
        if not self._lwn:
            self.scn += 1  # each LWN gets a fresh SCN
            self._lwn_epoch = epoch
        elif self.per_record_scn:
            self.scn += 1
        if commit:
            self.scn += 1
        if self.v23:
            sub = 1
        else:
            self._sub = self._sub + 1 if self.scn == self._last_scn else 1
            sub = self._sub
        self._last_scn = self.scn
        self.last_epoch = epoch
        return self.scn, sub

    def add(self, record: Record, commit: bool = False) -> None:
        """Queue a built record into the current LWN."""
        self._lwn.append(record)
        self._lwn_bytes += len(record.body) + 24
        self._last_commit = commit
        self._lwn_commits += commit

    # -- LWNs and files ------------------------------------------------------------------
    def flush_lwn(self) -> None:
        """Pack the pending LWN into blocks of the current log (switching first when full)."""
        if not self._lwn:
            return
        records = self._lwn
        self._lwn, self._lwn_bytes, self._lwn_commits, self._last_commit = [], 0, 0, False
        bs = self.sc.block_size
        sizes = [r.size if i else 68 + len(r.body) for i, r in enumerate(records)]
        nblocks = layout(sizes, bs)[2]
        if nblocks > self.sc.log_blocks - 2:
            raise ConfigError(f"an LWN of {nblocks} blocks does not fit a log of {self.sc.log_blocks} blocks")
        if self._file is not None and (self._switch or self._file.next_block + nblocks > self.sc.log_blocks):
            self._close_file(records[0].scn, self._lwn_epoch)
        if self._file is None:
            self._open_file(records[0].scn, self._lwn_epoch)
        assert self._file is not None
        blocks = pack_lwn(records, bs, self._file.next_block, self.sequence, self.con_uid, redo_time(self._lwn_epoch))
        for r in records:
            r.time = self._lwn_epoch  # epoch seconds from here on (the LWN header holds redo time)
        self._file.header.largest_lwn = max(self._file.header.largest_lwn, nblocks)
        self.lwn_log.append((self.sequence, self._file.next_block, nblocks, records[0].scn, self._lwn_epoch))
        self._last_lwn = (records[0].scn, self._lwn_epoch)
        self._file.append(blocks)
        self.bytes_written += len(blocks)
        if self.on_lwn_written is not None:
            self.on_lwn_written(records[0].scn, max(r.scn for r in records))

    def switch(self) -> None:
        """Log switch: the next LWN goes into a new sequence."""
        self.flush_lwn()
        if self._file is not None:
            self._switch = True
            if not self.per_record_scn:
                self.scn += 1

    def close(self) -> list[ArchivedLog]:
        """Flush everything and close the current log; the list of all logs written."""
        self.flush_lwn()
        if self._file is not None:
            self._close_file(self.scn + 1, self.last_epoch)
        return self.logs

    def _open_file(self, first_scn: int, epoch: int) -> None:
        sc = self.sc
        name = archive_name(
            sc.log_archive_format, self.thread, self.sequence, self.resetlogs, sc.activation, sc.dbid, self._rng
        )
        header = LogHeader(
            sequence=self.sequence,
            compat=sc.compat,
            dbid=sc.dbid,
            db_name=sc.database,
            block_size=sc.block_size,
            file_blocks=sc.log_blocks,
            activation=sc.activation,
            resetlogs=self.resetlogs,
            resetlogs_scn=sc.effective_resetlogs_scn,
            thread=self.thread,
            first_scn=first_scn,
            first_time=redo_time(epoch),
            # as 3 online groups per thread
            file_number=3 * (self.thread - 1) + 1 + (self.sequence - sc.first_sequence) % 3,
            prev_resetlogs=self.resetlogs - 86400 * 30,
        )
        self._file = self._sink(name, header)
        self._switch = False

    def _close_file(self, next_scn: int, next_epoch: int) -> None:
        assert self._file is not None
        self.lwn_log.append((self.sequence, -1, self._file.next_block, *self._last_lwn))
        self.logs.append(self._file.close(next_scn, redo_time(next_epoch)))
        self._file = None
        self.sequence += 1
