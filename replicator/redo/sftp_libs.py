"""Importing asyncssh without its slow search for optional C libraries.

asyncssh looks for liboqs and nettle with ``ctypes.util.find_library`` when it is
imported; on Linux, for a library missing from ldconfig's cache that runs gcc and ld as
well: about 0.1 CPU-s and as much wall time, paid by the replicator and again by every
SFTP reader process it starts. :func:`quick_library_lookup` limits the search to
ldconfig's cache while asyncssh is imported (a library found only through gcc's paths
then leaves an optional algorithm off, which the server negotiates around).
"""

from __future__ import annotations

import ctypes.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quick_library_lookup() -> Iterator[None]:
    """Within the block, ``ctypes.util.find_library`` asks only ldconfig's cache (Linux; a no-op elsewhere)."""
    original = ctypes.util.find_library
    cached = getattr(ctypes.util, "_findSoname_ldconfig", None)  # CPython's first Linux lookup
    if cached is not None and sys.platform.startswith("linux"):
        ctypes.util.find_library = cached
    try:
        yield
    finally:
        ctypes.util.find_library = original
