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
(file and byte size, taken right after a flush) with the confirmed position, and sets
:attr:`FileWriter.resume_at` before reopening. The file is then cut back to that size, so
messages replayed after a crash are neither written twice nor appended to a torn line.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import BinaryIO

from replicator import log
from replicator.config.writer import FileWriterConfig, OutputPattern
from replicator.errors import InternalError, RuntimeFailure
from replicator.events import Message
from replicator.writers.base import ConfirmCallback, Writer

BUFFER_SIZE = 1024 * 1024  # OLR's memory chunk: the largest buffered write


class FileWriter(Writer):
    """Writes messages to stdout or to files named by the ``output`` pattern."""

    type_name = "file"

    def __init__(self, config: FileWriterConfig, on_confirm: ConfirmCallback, *, show_checkpoints: bool = True,
                 stdout: BinaryIO | None = None, clock: Callable[[], float] = time.time) -> None:
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

    def connect(self) -> None:
        """Pick stdout, or scan the directory for the highest ``%i`` number."""
        if self.pattern is None:
            self._stream = self._stdout if self._stdout is not None else sys.stdout.buffer
            return
        if self.pattern.mode == "num":
            self.file_number = self._scan_numbers(self.pattern)
            log.info(f"next number for {self.config.output} is: {self.file_number}")

    def _scan_numbers(self, pattern: OutputPattern) -> int:
        try:
            entries = os.listdir(pattern.directory)
        except OSError as exc:
            raise RuntimeFailure(f"directory: {pattern.directory} - can't read", 10012) from exc
        number = 0
        start, end = len(pattern.prefix), len(pattern.suffix)
        for entry in entries:
            if len(entry) <= start + end or not entry.startswith(pattern.prefix) or not entry.endswith(pattern.suffix):
                continue
            digits = entry[start:len(entry) - end]
            if not digits.isdigit() or not digits.isascii():
                continue
            if os.path.isdir(os.path.join(pattern.directory, entry)):
                continue
            found = int(digits)
            if self.config.append:
                number = max(number, found)
            elif number <= found:
                number = found + 1
        return number

    def send(self, message: Message) -> None:
        """Buffer one message and its newline, then confirm it."""
        data = message.data
        size = len(data) + len(self._newline)
        self._prepare_file(message.seq, size)
        self._buffered_write(data)
        if self._newline:
            self._buffered_write(self._newline)
        self.file_size += size
        self.messages_sent += 1
        self.bytes_sent += size
        self.confirm(message)

    def _prepare_file(self, sequence: int, size: int) -> None:
        """Rotate when the pattern asks for it and make sure a file is open."""
        pattern = self.pattern
        if pattern is None:
            return
        limit = self.config.max_file_size
        if pattern.mode == "fixed":
            path = pattern.name()
        elif pattern.mode == "num":
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
                    log.warning(60030, f"rotation size is set too low ({limit}), increase it, should rotate but "
                                       f"too early ({self.current_path})")
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
        self.current_path = path
        self.file_size = 0 if size is None else self._resume_size(path, size)

    def _resume_size(self, path: str, size: int) -> int:
        """How many bytes of an existing output file to keep when reopening it.

        OLR keeps everything and appends. With :attr:`resume_at` (set by the daemon from
        its checkpoint) the file is truncated to the saved size: everything after it is
        replayed from redo.
        """
        resume = self.resume_at
        if resume is None or os.path.abspath(resume[0]) != os.path.abspath(path) or size <= resume[1]:
            return size
        try:
            os.truncate(path, resume[1])
        except OSError as exc:
            raise RuntimeFailure(f"file: {path} - truncate to {resume[1]} returned: {exc.strerror}", 10007) from exc
        log.info(f"output file {path} cut back from {size} to {resume[1]} bytes (last checkpoint)")
        return resume[1]

    def output_position(self) -> tuple[str, int] | None:
        """(current file, bytes written to it); call right after :meth:`flush`."""
        if not self.current_path:
            return None
        return self.current_path, self.file_size

    def _buffered_write(self, data: bytes) -> None:
        if len(self._buffer) + len(data) > BUFFER_SIZE:
            self._flush_buffer()
        if len(data) > BUFFER_SIZE:
            self._write_out(data)
            return
        self._buffer += data
        if len(self._buffer) > self.config.write_buffer_flush_size:
            self._flush_buffer()

    def _flush_buffer(self) -> None:
        if self._buffer:
            self._write_out(bytes(self._buffer))
            self._buffer.clear()

    def _write_out(self, data: bytes) -> None:
        if self._stream is not None:
            self._stream.write(data)
            self._stream.flush()
            return
        if self._fd is None:
            raise InternalError("file writer: bytes to write but no output file is open")
        view = memoryview(data)
        while view:
            try:
                written = os.write(self._fd, view)
            except OSError as exc:
                raise RuntimeFailure(f"file: {self.current_path} - write returned: {exc.strerror}", 10007) from exc
            if written <= 0:
                raise RuntimeFailure(f"file: {self.current_path} - {written} bytes written instead of {len(view)}",
                                     10007)
            view = view[written:]

    def _close_file(self) -> None:
        self._flush_buffer()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def flush(self) -> None:
        """Write the buffer out to the file or stdout (not fsync'ed, as in OLR)."""
        self._flush_buffer()

    def close(self) -> None:
        """Flush and close the current file; stdout stays open."""
        self._close_file()
