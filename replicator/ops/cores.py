"""How many processors this process may really use (defaults that size threads by it)."""

from __future__ import annotations

import math
import os

CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "<quota> <period>" or "max <period>"
MAX_DEFAULT_CONNECTIONS = 2


def usable_cores(cpu_max: str = CGROUP_CPU_MAX) -> int:
    """The processors the kernel lets this process run on, capped by a cgroup v2 CPU quota
    (a container started with ``--cpus 1.5`` counts 2, ``--cpus 1`` counts 1); at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    try:
        with open(cpu_max, encoding="ascii") as f:
            quota, period = f.read().split()[:2]
        if quota != "max" and int(period) > 0:
            cores = min(cores, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):  # no cgroup v2 (or no quota file): the affinity decides
        pass
    return max(1, cores)


def default_connections() -> int:
    """An sftp ``redo-source``'s ``connections`` when the config leaves it out: the cores this
    process may use minus one (the parser's), at least 1, at most :data:`MAX_DEFAULT_CONNECTIONS`.

    Measured on 2 cores (loopback OpenSSH, 100 MB of OLTP redo): one reader process is the
    fastest; a second one only adds its start and competes with the parser and sshd. Here, not
    beside the SFTP settings: the config model reads it without importing those (start-up time).
    """
    return max(1, min(MAX_DEFAULT_CONNECTIONS, usable_cores() - 1))
