"""Durable file writes shared by every state file (checkpoints, schema checkpoints), and the
write-behind hint of the file writer."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from replicator.errors import RuntimeFailure


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a crash leaves either the old file or the new one.

    Temp file beside the target, fsync, rename over it, then fsync the directory so the
    rename itself is persisted (some file systems refuse a directory fsync: that is fine).
    Failures raise RuntimeFailure 10006.
    """
    temp = path.with_name(f".{path.name}.tmp")
    try:
        with open(temp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except OSError as e:
        try:
            temp.unlink(missing_ok=True)
        except OSError:
            pass  # (the temp name taken by a folder, a directory gone): the write failed either way
        raise RuntimeFailure(f"file: {path} - cannot be written: {e}", 10006) from e
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# sync_file_range(2) flag: start writing the range's dirty pages out, without waiting.
_SYNC_FILE_RANGE_WRITE = 2
_sync_file_range: Callable[[int, int, int, int], int] | None = None
_looked_up = False


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Ask the kernel to start writing ``length`` bytes of ``fd`` from ``offset`` to disk now.

    Only a hint, never an error: it returns at once (Linux's ``sync_file_range`` with
    ``SYNC_FILE_RANGE_WRITE``; nothing elsewhere). A writer calls it every few MiB so the
    kernel writes behind it on another core, and the fsync that makes the output durable
    (a checkpoint, the end of a batch run) waits for the last few MiB, not the whole file.
    """
    global _sync_file_range, _looked_up
    if not _looked_up:
        _looked_up = True
        try:
            import ctypes  # first use only: a small run never imports it

            func = ctypes.CDLL(None, use_errno=True).sync_file_range
            func.argtypes = (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint)
            func.restype = ctypes.c_int
            _sync_file_range = func
        except (OSError, AttributeError):
            _sync_file_range = None
    if _sync_file_range is not None:
        _sync_file_range(fd, offset, length, _SYNC_FILE_RANGE_WRITE)
