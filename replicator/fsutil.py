"""Durable file writes shared by every state file (checkpoints, schema checkpoints)."""

from __future__ import annotations

import os
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
