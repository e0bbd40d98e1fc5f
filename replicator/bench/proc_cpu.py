"""CPU seconds from a Linux ``/proc/<pid>/stat`` line, for the benchmarks that time processes
from outside (``bench --compare-local``, ``spark bench``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import overload

# Fields after "pid (comm) " (the command name may hold spaces: split after its last ')'):
# utime, stime (the process's own), cutime, cstime (its reaped children's), in clock ticks.
_UTIME = 11


@overload
def stat_fields(stat: str) -> list[str]: ...
@overload
def stat_fields(stat: bytes) -> list[bytes]: ...
def stat_fields(stat: str | bytes) -> list[str] | list[bytes]:
    """The fields of a ``/proc/<pid>/stat`` line after its command name."""
    if isinstance(stat, bytes):
        return stat.rsplit(b")", 1)[1].split()
    return stat.rsplit(")", 1)[1].split()


def stat_cpu(fields: Sequence[str | bytes]) -> tuple[float, float]:
    """(own CPU-s, reaped children's CPU-s), user + system, from :func:`stat_fields`."""
    tick = os.sysconf("SC_CLK_TCK")
    own = (int(fields[_UTIME]) + int(fields[_UTIME + 1])) / tick
    children = (int(fields[_UTIME + 2]) + int(fields[_UTIME + 3])) / tick
    return own, children
