"""One process per config file: the exclusive lock ``replicator run`` holds (10002).

The daemon and a batch run take the same lock, so a second run of one config (either
mode) stops at once instead of writing the same output and checkpoints twice.
"""

from __future__ import annotations

import fcntl
import os

from replicator.errors import RuntimeFailure


def lock_config(path: str) -> int:
    """Hold an exclusive lock on the config file for the life of the process (10002)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise RuntimeFailure(f"file: {path} - open for read returned: {e.strerror}", 10001) from e
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        raise RuntimeFailure(f"file: {path} - is locked by another process (another instance running?)", 10002) from e
    return fd
