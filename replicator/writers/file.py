"""The ``file`` writer: OpenLogReplicator's output files, names and rotation (olr-interfaces.md §4.1).

``output`` is ``directory/prefix<placeholder>suffix``; the first placeholder found wins:

* ``%i`` / ``%2i`` .. ``%10i`` -- a number (zero-padded to N digits). At start the
  directory is scanned for ``prefix<digits>suffix``; append=1 continues the highest
  number, append=0 starts at highest+1. Before a message would make the file larger
  than ``max-file-size`` the file is closed and the number incremented (WARN 60029
  when one message alone is larger than the limit).
* ``%t`` -- ``strftime(timestamp-format)`` of the local time; a new file when the size
  would be exceeded and the formatted name changed (WARN 60030, once, if it did not).
* ``%s`` -- the redo log sequence of the message: one file per sequence.
* no placeholder -- one file, always appended (append=0 is rejected by the config).

Without ``output`` (or with an empty one) messages go to stdout. Each message is
followed by ``new-line`` (0 nothing, 1 ``\\n``, 2 ``\\r\\n``). Opening an existing file
with append=0 fails with 10003; files are created with mode 0600 and written at the end.

Writes go to a 1 MiB buffer flushed when it holds more than ``write-buffer-flush-size``
bytes, on :meth:`FileWriter.flush` (the runner calls it every poll interval) and before
a rotation. As in OLR, a message is confirmed right after the buffered write, so a crash
may lose confirmed messages that were still in the buffer or the page cache.

Beyond OLR, restarts are exact: the daemon saves :meth:`FileWriter.output_position`
(file and byte size, taken right after a flush and made durable by :meth:`FileWriter.sync`
before the checkpoint that records it is written) with the confirmed position, and sets
:attr:`FileWriter.resume_at` before :meth:`FileWriter.connect`. The file is then cut back
to that size and, with ``%i`` or ``%s`` names, later files are removed, so messages
replayed after a crash are neither written twice nor appended to a torn line. An output
shorter than the checkpoint says (a power loss before the data reached the disk, or a
file deleted by hand) stops the start with error 10100 instead of silently losing lines.

Every write starts at a message boundary; when one fails (a full disk), the file is cut
back to the last whole message before the error is raised, so no torn line is left.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from replicator import log
from replicator.config.writer import FileWriterConfig, OutputPattern
from replicator.errors import InternalError, RuntimeFailure
from replicator.events import Message
from replicator.fsutil import start_writeback
from replicator.writers.base import ConfirmCallback, Writer
from replicator.writers.capabilities import ResumableOutput, Syncable, WholeRunWriter

BUFFER_SIZE = 1024 * 1024  # OLR's memory chunk: the largest buffered write
# Every this many bytes written, the kernel is asked to start writing them to disk (fsutil.start_writeback):
# the fsync before a checkpoint or at the end of a batch run then waits for these last bytes only.
WRITE_BEHIND = 8 * 1024 * 1024


class FileWriter(Writer, WholeRunWriter, ResumableOutput, Syncable):
    """Writes messages to stdout or to files named by the ``output`` pattern."""

    type_name = "file"

    def __init__(
        self,
        config: FileWriterConfig,
        on_confirm: ConfirmCallback,
        *,
        show_checkpoints: bool = True,
        stdout: BinaryIO | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(config, on_confirm, show_checkpoints=show_checkpoints)
        self.config: FileWriterConfig = config
        self.pattern: OutputPattern | None = config.pattern
        self._newline = config.newline_bytes
        self._stdout = stdout
        self._clock = clock
        self._buffer = bytearray()
        self._fd: int | None = None
        self._stream: BinaryIO | None = None
        self.current_path = ""  # the file being written ("" for stdout / none yet)
        self.file_size = 0  # bytes in the current file, buffered ones included
        self.file_number = 0  # %i counter
        self._last_sequence: int | None = None
        self._warned_early_rotation = False
        self.resume_at: tuple[str, int] | None = None  # (file, size) to cut back to when reopening
        self._disk_size = 0  # bytes of the current file on disk (always a message boundary)
        self._written_behind = 0  # where the last start_writeback of the current file ended
        self._unsynced: set[str] = set()  # directories holding files created since the last sync
        self._synced = True  # nothing written since the last fsync
        # A regular file, not a device or pipe (/dev/null, a FIFO): only a regular file can be
        # fsynced, cut back, or hold a position a restart can check.
        self._regular = True

    def connect(self) -> None:
        """Pick stdout, or scan the directory for the highest ``%i`` number."""
        if self.pattern is None:
            self._stream = self._stdout if self._stdout is not None else sys.stdout.buffer
            return
        if self.resume_at is not None:
            self._restore(self.resume_at)
        if self.pattern.mode == "num":
            self.file_number = self._scan_numbers(self.pattern)
            log.info(f"next number for {self.config.output} is: {self.file_number}")
            if self.resume_at is not None and self.config.append:
                # The checkpointed file is continued: rotate exactly where an uninterrupted run would.
                name = self.pattern.name(str(self.file_number).zfill(self.pattern.fill))
                if os.path.abspath(name) == os.path.abspath(self.resume_at[0]):
                    self.file_size = self.resume_at[1]

    def _numbered(self, pattern: OutputPattern) -> dict[int, str]:
        """``%i``/``%s`` files of the pattern on disk: number -> path."""
        try:
            entries = os.listdir(pattern.directory)
        except OSError as exc:
            raise RuntimeFailure(f"directory: {pattern.directory} - can't read", 10012) from exc
        start, end = len(pattern.prefix), len(pattern.suffix)
        found: dict[int, str] = {}
        for entry in entries:
            if len(entry) <= start + end or not entry.startswith(pattern.prefix) or not entry.endswith(pattern.suffix):
                continue
            digits = entry[start : len(entry) - end]
            path = os.path.join(pattern.directory, entry)
            if digits.isdigit() and digits.isascii() and not os.path.isdir(path):
                found[int(digits)] = path
        return found

    def _number_of(self, path: str) -> int | None:
        """The ``%i``/``%s`` number in ``path`` if it is a file of the current pattern."""
        pattern = self.pattern
        assert pattern is not None
        if os.path.abspath(os.path.dirname(path)) != os.path.abspath(pattern.directory):
            return None
        name = os.path.basename(path)
        start, end = len(pattern.prefix), len(pattern.suffix)
        if len(name) <= start + end or not name.startswith(pattern.prefix) or not name.endswith(pattern.suffix):
            return None
        digits = name[start : len(name) - end]
        return int(digits) if digits.isdigit() and digits.isascii() else None

    def _restore(self, resume: tuple[str, int]) -> None:
        """Make the output hold exactly what the checkpoint confirmed (``resume`` = (file, size)).

        The checkpointed file must hold at least ``size`` bytes (10100 otherwise: the lines
        past what it holds were confirmed and would be lost); bytes past it are cut, and
        ``%i``/``%s`` files numbered after it are removed: they hold only messages that
        are replayed from redo. A checkpoint naming a file outside the current ``output``
        (the output was changed) is ignored with WARN 60100.
        """
        path, size = resume
        pattern = self.pattern
        assert pattern is not None
        number = self._number_of(path) if pattern.mode in ("num", "sequence") else None
        if not self.holds(path):
            log.warning(
                60100,
                f"the checkpoint's output file {path} is not a file of output {self.config.output} "
                f"(output changed?): nothing is cut back, messages after the checkpoint go to the "
                f"new output",
            )
            self.resume_at = None
            return
        try:
            actual = os.stat(path).st_size
        except FileNotFoundError:
            actual = 0 if size == 0 else -1  # a start position saved before the file was created
        except OSError as exc:
            raise RuntimeFailure(f"file: {path} - get metadata returned: {exc.strerror}", 10003) from exc
        if actual < size:
            held = "is missing" if actual < 0 else f"holds {actual} bytes"
            raise RuntimeFailure(
                f"output file {path} {held}, but the checkpoint confirmed {size} bytes in it (lost in a crash before "
                f"they reached the disk, or removed): the messages after what it holds would be lost; restore the "
                f"file, or move it and the confirmed-position checkpoint (<name>-chkpt.json) away to replay from the schema checkpoint",
                10100,
            )
        if actual > size:
            try:
                os.truncate(path, size)
            except OSError as exc:
                raise RuntimeFailure(f"file: {path} - truncate to {size} returned: {exc.strerror}", 10007) from exc
            log.info(f"output file {path} cut back from {actual} to {size} bytes (last checkpoint)")
        if number is not None:
            for later, later_path in sorted(self._numbered(pattern).items()):
                if later > number:
                    try:
                        os.unlink(later_path)
                    except OSError as exc:
                        raise RuntimeFailure(f"file: {later_path} - remove returned: {exc.strerror}", 10007) from exc
                    log.info(f"output file {later_path} removed: written after the last checkpoint")

    def holds(self, path: str) -> bool:
        """Whether ``path`` is a file of this writer's ``output`` (its name, or a name its pattern makes)."""
        pattern = self.pattern
        if pattern is None:
            return False
        if pattern.mode == "fixed":
            return os.path.abspath(path) == os.path.abspath(pattern.name())
        if pattern.mode == "timestamp":
            return os.path.abspath(os.path.dirname(path)) == os.path.abspath(pattern.directory)
        return self._number_of(path) is not None

    def start_position(self) -> tuple[str, int] | None:
        """(file, size) the first message of this run goes to, for a fixed or ``%i`` output
        (call after :meth:`connect`); None for other patterns and stdout."""
        pattern = self.pattern
        if pattern is None or pattern.mode not in ("fixed", "num"):
            return None
        path = pattern.name() if pattern.mode == "fixed" else pattern.name(str(self.file_number).zfill(pattern.fill))
        return path, os.path.getsize(path) if os.path.exists(path) else 0

    def existing_output(self) -> list[str]:
        """Output files this writer would append to (for the missing-checkpoint warning)."""
        pattern = self.pattern
        if pattern is None or not self.config.append:
            return []
        if pattern.mode == "fixed":
            name = pattern.name()
            return [name] if os.path.exists(name) and os.path.getsize(name) > 0 else []
        if pattern.mode in ("num", "sequence"):
            return [p for _, p in sorted(self._numbered(pattern).items()) if os.path.getsize(p) > 0]
        return []

    def _scan_numbers(self, pattern: OutputPattern) -> int:
        numbers = self._numbered(pattern)
        if not numbers:
            return 0
        return max(numbers) if self.config.append else max(numbers) + 1

    def send(self, message: Message) -> None:
        """Buffer one message and its newline, then confirm it."""
        data = message.data
        newline = self._newline
        size = len(data) + len(newline)
        self._prepare_file(message.seq, size)
        # Writes start at message boundaries only, so a failed one can be cut back whole.
        if len(self._buffer) + size > BUFFER_SIZE:
            self._flush_buffer()
        if size > BUFFER_SIZE:
            self._write_unit(data, newline)
        else:
            self._buffer += data
            self._buffer += newline
            if len(self._buffer) > self.config.write_buffer_flush_size:
                self._flush_buffer()
        self.file_size += size
        self.messages_sent += 1
        self.bytes_sent += size
        self.confirm(message)

    def write_runs(self, batch: list[Any]) -> None:
        """Pipeline.native_runs: Messages and native MessageRuns in order. A run's buffer
        (bodies and newlines) is written whole where its file cannot change inside it
        (stdout, one file, or one per sequence: a run has one sequence) and the newline is
        ``\\n``; else message by message."""
        whole = self.writes_runs_whole
        # Read once per batch (a run per transaction): the buffer is cleared in place, never
        # replaced; the flush size is the config's.
        buffer = self._buffer
        flush_size = self.config.write_buffer_flush_size
        for item in batch:
            if type(item) is Message:
                self.write([item])
            elif not whole:
                self.write(list(item))
            else:
                data = item.data
                size = len(data)
                count = len(item)
                self._prepare_file(item.seq, size)
                if len(buffer) + size > BUFFER_SIZE:
                    self._flush_buffer()
                if size > BUFFER_SIZE:
                    self._write_unit(data)
                else:
                    buffer += data
                    if len(buffer) > flush_size:
                        self._flush_buffer()
                self.file_size += size
                self.messages_sent += count
                self.bytes_sent += size
                self.confirm_run(item)

    @property
    def writes_runs_whole(self) -> bool:  # type: ignore[override]
        """Whether :meth:`write_runs` writes and confirms every run whole: its file cannot
        change inside a run (stdout, one file, or one per sequence) and the newline is ``\\n``."""
        pattern = self.pattern
        return self._newline == b"\n" and (pattern is None or pattern.mode in ("fixed", "sequence"))

    def _prepare_file(self, sequence: int, size: int) -> None:
        """Rotate when the pattern asks for it and make sure a file is open."""
        pattern = self.pattern
        if pattern is None:
            return
        if pattern.mode == "fixed":
            if self._fd is None:
                self._open_file(pattern.name())
            return
        limit = self.config.max_file_size
        if pattern.mode == "num":
            if self.file_size + size > limit:
                self._close_file()
                self.file_number += 1
                self.file_size = 0
            if size > limit:
                log.warning(60029, f"message size ({size}) will exceed 'max-file' size ({limit})")
            path = pattern.name(str(self.file_number).zfill(pattern.fill))
        elif pattern.mode == "timestamp":
            path = self._timestamp_path(pattern, size, limit)
        else:
            if sequence != self._last_sequence:
                self._close_file()
            self._last_sequence = sequence
            path = pattern.name(str(sequence))
        if self._fd is None:
            self._open_file(path)

    def _timestamp_path(self, pattern: OutputPattern, size: int, limit: int) -> str:
        switch = self.file_size + size > limit
        if size > limit:
            log.warning(60029, f"message size ({size}) will exceed 'max-file' size ({limit})")
        path = self.current_path
        if self._fd is None or switch:
            stamp = time.strftime(self.config.timestamp_format, time.localtime(self._clock()))
            candidate = pattern.name(stamp)
            if candidate == self.current_path:
                if not self._warned_early_rotation:
                    log.warning(
                        60030,
                        f"rotation size is set too low ({limit}), increase it, should rotate but "
                        f"too early ({self.current_path})",
                    )
                    self._warned_early_rotation = True
                switch = False
            else:
                path = candidate
        if switch:
            self._close_file()
            self.file_size = 0
        return path

    def _open_file(self, path: str) -> None:
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            size = None
        except OSError as exc:
            raise RuntimeFailure(f"file: {path} - get metadata returned: {exc.strerror}", 10003) from exc
        if size is not None and not self.config.append:
            raise RuntimeFailure(f"file: {path} - file already exists and 'append' is 0", 10003)
        log.info(f"opening output file: {path}")
        try:
            self._fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600)
        except OSError as exc:
            raise RuntimeFailure(f"file: {path} - open for writing returned: {exc.strerror}", 10006) from exc
        self._regular = stat.S_ISREG(os.fstat(self._fd).st_mode)
        self.current_path = path
        self.file_size = self._disk_size = self._written_behind = 0 if size is None else size
        if size is None:
            self._unsynced.add(os.path.dirname(os.path.abspath(path)))

    def output_position(self) -> tuple[str, int] | None:
        """(current file, bytes written to it); call right after :meth:`flush`."""
        if not self.current_path or not self._regular:
            return None
        return self.current_path, self.file_size

    def _flush_buffer(self) -> None:
        if self._buffer:
            with memoryview(self._buffer) as view:
                self._write_unit(view)
            self._buffer.clear()

    def _write_unit(self, *parts: bytes | memoryview) -> None:
        """Write whole messages; on failure cut the file back to where this write started."""
        if self._stream is not None:
            for part in parts:
                self._stream.write(part)
            self._stream.flush()
            return
        if self._fd is None:
            raise InternalError("file writer: bytes to write but no output file is open")
        start = self._disk_size
        try:
            for part in parts:
                self._write_all(part)
        except RuntimeFailure:
            self._cut_back(start)
            raise
        self._disk_size = start + sum(len(part) for part in parts)
        self._synced = False
        if self._regular and self._disk_size - self._written_behind >= WRITE_BEHIND:
            start_writeback(self._fd, self._written_behind, self._disk_size - self._written_behind)
            self._written_behind = self._disk_size

    def _write_all(self, data: bytes | memoryview) -> None:
        # At most one flush size per system call, as OLR writes its 1 MiB chunks: a large run
        # (a big transaction rendered whole) reaches the file in steps, not in one jump.
        chunk = max(4096, self.config.write_buffer_flush_size or BUFFER_SIZE)
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view[:chunk])  # type: ignore[arg-type]
            except OSError as exc:
                raise RuntimeFailure(f"file: {self.current_path} - write returned: {exc.strerror}", 10007) from exc
            if written <= 0:
                raise RuntimeFailure(
                    f"file: {self.current_path} - {written} bytes written instead of {len(view)}", 10007
                )
            view = view[written:]

    def _cut_back(self, size: int) -> None:
        """After a failed write (disk full): drop the partial message so no torn line stays."""
        if not self._regular:
            return  # a device or pipe keeps what it took
        try:
            os.ftruncate(self._fd, size)  # type: ignore[arg-type]
        except OSError as exc:
            log.error(
                10007,
                f"file: {self.current_path} - cutting back to the last whole message ({size} bytes) "
                f"failed: {exc.strerror}",
            )
            return
        log.info(f"output file {self.current_path} cut back to its last whole message ({size} bytes)")

    def sync(self) -> None:
        """Make what was flushed durable (fsync the file, and directories of new files).

        The daemon calls it before it writes a checkpoint recording the output position:
        a checkpoint must never claim bytes a power loss could still take away.
        """
        try:
            if self._fd is not None and not self._synced:
                if self._regular:
                    os.fsync(self._fd)
                self._synced = True
            for directory in sorted(self._unsynced):
                fd = os.open(directory, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except OSError as exc:
            raise RuntimeFailure(f"file: {self.current_path} - fsync returned: {exc.strerror}", 10007) from exc
        self._unsynced.clear()

    def _close_file(self) -> None:
        self._flush_buffer()
        if self._fd is not None:
            if not self._synced and self._regular:
                os.fsync(self._fd)  # a rotated file is never written again: make it durable now
                self._synced = True
            os.close(self._fd)
            self._fd = None

    def flush(self) -> None:
        """Write the buffer out to the file or stdout (no fsync: :meth:`sync` does that)."""
        self._flush_buffer()

    def close(self) -> None:
        """Flush and close the current file; stdout stays open."""
        self._close_file()
