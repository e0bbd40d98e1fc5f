"""Where redo bytes come from: one interface under every reader (batch, offline, online).

A :class:`RedoSource` lists directories (archived logs, FRA day folders), tells files from
directories, and opens a redo file as a :class:`RedoHandle` that reads byte ranges, with
read-ahead for a whole archived log (:meth:`RedoHandle.stream`) and single reads for a
growing online log (:meth:`RedoHandle.read`, called again at every poll). The readers in
:mod:`replicator.redo.reader` and :mod:`replicator.redo.online` only use this interface.

:data:`LOCAL` reads this machine's files exactly as the readers always did;
:mod:`replicator.redo.sftp` reads them over SSH and :mod:`replicator.redo.asm` from an
ASM disk group through the database. This module is only the interface: the
implementations import it, and :func:`replicator.redo.sources.open_source` (which imports
them) builds the one a config asks for.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from replicator.errors import RuntimeFailure

HEAD_BYTES = 8192  # blocks 0 and 1 of any block size


@dataclass(frozen=True, slots=True)
class Entry:
    """One directory entry: its full path, whether it is a directory, and its size."""

    path: str
    name: str
    is_dir: bool
    size: int


class RedoHandle:
    """An open redo file. Reads never go past the end of the file (a short read means EOF)."""

    path: str

    def read(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes from ``offset``."""
        raise NotImplementedError

    def size(self) -> int:
        """The file's size in bytes now."""
        raise NotImplementedError

    def stream(self, offset: int, end: int, chunk: int) -> Iterator[bytes]:
        """Consecutive ``chunk``-sized pieces of ``[offset, end)``, in order (the last one may be shorter).

        Implementations read ahead; the default reads one piece after the other. A piece
        shorter than asked for before ``end`` means the file ended there.
        """
        while offset < end:
            data = self.read(offset, min(chunk, end - offset))
            yield data
            if not data:
                return
            offset += len(data)

    def close(self) -> None:
        """Release the file."""

    def __enter__(self) -> RedoHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RedoSource:
    """A place holding redo files (see the module docstring)."""

    label = "local"
    # Bytes a follower asks for first per poll of a growing online log, doubled while every
    # block read was new (see RedoFollower): a poll costs about what was written since. (At
    # 8 MiB a local poll of a log's unwritten, preallocated part read and checked 8 MiB of
    # zeros, about 28 ms of CPU every redo-read-sleep-us: most of a core while tailing.)
    follow_read_min = 1024 * 1024
    batch_chunk = 2 * 1024 * 1024

    def open(self, path: str) -> RedoHandle:
        """Open ``path`` for reading; 10001 when it cannot be opened."""
        raise NotImplementedError

    def kind(self, path: str) -> str | None:
        """``"file"``, ``"dir"`` or None when ``path`` does not exist."""
        raise NotImplementedError

    def scan(self, path: str) -> list[Entry]:
        """The entries of directory ``path`` (empty when it is not a readable directory)."""
        raise NotImplementedError

    def size(self, path: str) -> int:
        """Size of file ``path`` in bytes (0 when it cannot be read)."""
        raise NotImplementedError

    def read_head(self, path: str, length: int = HEAD_BYTES) -> bytes | None:
        """The first ``length`` bytes of ``path``, or None when it cannot be read (yet)."""
        try:
            with self.open(path) as handle:
                return handle.read(0, length)
        except (OSError, RuntimeFailure):
            return None

    def is_file(self, path: str) -> bool:
        """True when ``path`` is an existing regular file."""
        return self.kind(path) == "file"

    def close(self) -> None:
        """Release connections (a no-op for local files)."""


class LocalHandle(RedoHandle):
    """A local file read with ``os.pread`` (unbuffered, as the readers always read)."""

    def __init__(self, path: str):
        self.path = path
        try:
            self._fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            raise RuntimeFailure(f"cannot open redo log {path}: {e.strerror}", 10001) from e

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self._fd, length, offset)

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class LocalSource(RedoSource):
    """This machine's file system."""

    def open(self, path: str) -> RedoHandle:
        return LocalHandle(path)

    def kind(self, path: str) -> str | None:
        if os.path.isdir(path):
            return "dir"
        return "file" if os.path.isfile(path) else None if not os.path.exists(path) else "other"

    def scan(self, path: str) -> list[Entry]:
        try:
            with os.scandir(path) as it:
                out = []
                for e in it:
                    is_dir = e.is_dir()
                    if not is_dir and not e.is_file():
                        continue
                    out.append(Entry(os.path.join(path, e.name), e.name, is_dir, 0 if is_dir else e.stat().st_size))
                return out
        except OSError:
            return []

    def size(self, path: str) -> int:
        try:
            return os.path.getsize(path)
        except OSError:
            return 0

    def read_head(self, path: str, length: int = HEAD_BYTES) -> bytes | None:
        try:
            with open(path, "rb") as f:
                return f.read(length)
        except OSError:
            return None


LOCAL = LocalSource()


def map_prefix(path: str, pairs: list[tuple[str, str]]) -> str:
    """Apply the first matching (from, to) prefix pair to ``path``."""
    for src, dst in pairs:
        if path.startswith(src):
            return dst + path[len(src) :]
    return path
