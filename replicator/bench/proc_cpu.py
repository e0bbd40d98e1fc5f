"""CPU seconds from a Linux ``/proc/<pid>/stat`` line, for the benchmarks that time processes
from outside (``bench --compare-local``, ``spark bench``), and a process's own peak memory."""

from __future__ import annotations

import os
import resource
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


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MB.

    VmHWM where /proc exists: ru_maxrss survives execve on Linux and would include the
    peak of whatever process started us.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
