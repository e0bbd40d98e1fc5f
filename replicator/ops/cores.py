"""How many processors this process may really use (defaults that size threads by it)."""

from __future__ import annotations

import math
import os

CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"  # cgroup v2: "<quota> <period>" or "max <period>"


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
