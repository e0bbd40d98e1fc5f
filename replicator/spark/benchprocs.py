"""CPU and memory of the benchmark's processes, for ``replicator spark bench``: the job's driver,
its JVM, the Python workers below the JVM, a standalone cluster's daemons and executors."""

from __future__ import annotations

import os
import time
from pathlib import Path

from replicator.bench.proc_cpu import stat_cpu, stat_fields
from replicator.spark.metrics import BatchMetrics, MetricsSink


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    """Create a topic of ``partitions`` partitions on the benchmark's broker."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(10)


def _tree() -> dict[int, list[tuple[int, str, list[str]]]]:
    """Parent pid -> [(pid, command name, /proc/<pid>/stat fields after the name)] (Linux; {} elsewhere)."""
    children: dict[int, list[tuple[int, str, list[str]]]] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return children
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = stat_fields(stat)
        children.setdefault(int(fields[1]), []).append(
            (int(entry.name), stat[stat.index("(") + 1 : stat.rindex(")")], fields)
        )
    return children


def component_cpu(exclude: set[int | None] | None = None, cluster: set[int] | None = None) -> dict[str, float]:
    """CPU seconds (user + system) used so far by this process (``driver``: the job's Python driver),
    Spark's JVM below it (``jvm``, its own threads) and every process below the JVM (``workers``: the
    Python workers and the streaming source's planner, with those already reaped); ``other``: any
    other process below this one; ``excluded``: the processes in ``exclude`` and below them (the
    broker, the lag run's producer: they share the machine's cores but are not the job); ``cluster``:
    the processes in ``cluster`` (a standalone cluster's daemons) and below them (its executors)."""
    own = os.times()
    out = {"driver": own.user + own.system, "jvm": 0.0, "workers": 0.0, "other": 0.0, "excluded": 0.0, "cluster": 0.0}
    children = _tree()
    todo = [
        (
            pid,
            "excluded"
            if exclude and pid in exclude
            else "cluster"
            if cluster and pid in cluster
            else "java"
            if comm == "java"
            else "other",
            fields,
        )
        for pid, comm, fields in children.get(os.getpid(), [])
    ]
    while todo:
        pid, kind, fields = todo.pop()
        own_cpu, reaped = stat_cpu(fields)
        if kind == "java":
            out["jvm"] += own_cpu
            out["workers"] += reaped  # the JVM's reaped children: Python workers
            below = "workers"
        else:
            out[kind] += own_cpu + reaped
            below = kind
        todo += [(p, below, f) for p, _, f in children.get(pid, [])]
    return out


def process_tree_cpu(exclude: set[int | None] | None = None, cluster: set[int] | None = None) -> float:
    """CPU seconds (user + system) used so far by this process and every process below it but those
    in ``exclude`` (the broker, the lag run's producer): the driver, Spark's JVM and its Python
    workers (Linux /proc; this process alone elsewhere)."""
    cpu = component_cpu(exclude, cluster)
    return cpu["driver"] + cpu["jvm"] + cpu["workers"] + cpu["other"] + cpu["cluster"]


class CpuSink(MetricsSink):
    """A metrics sink that also samples the CPU of the driver, the JVM and the workers at the end of
    every batch: a batch's CPU is the difference from the end of the batch before."""

    def __init__(self, lake: str, exclude: set[int | None], cluster: set[int] | None = None):
        super().__init__(lake)
        self.exclude, self.cluster = exclude, cluster
        self.cpu: list[tuple[int, float, dict[str, float]]] = [(-1, time.time(), self._sample())]

    def _sample(self) -> dict[str, float]:
        cpu = component_cpu(self.exclude, self.cluster)
        cpu["rss_mb"] = driver_rss_mb()
        return cpu

    def record(self, m: BatchMetrics) -> None:
        """Record the batch, then the CPU used so far by each component and the driver's memory."""
        super().record(m)
        self.cpu.append((m.batch, m.committed_at, self._sample()))


def driver_rss_mb() -> float:
    """Resident memory of this process (the job's Python driver), MB (0 without /proc)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
