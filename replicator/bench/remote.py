"""``replicator bench -f CONFIG --compare-local``: a remote redo source against local reads.

For a config whose ``reader.redo-source`` is remote (sftp) and whose server is this
machine (loopback: the remote path after ``path-mapping`` is readable here too), it
measures the same redo twice: the raw read (every block of every file through the
source's read-ahead) and the whole batch pipeline (parse, format, discard), once from
local files and once through the remote source, and prints MB/s, the ratio, and the CPU
seconds of this process and its reader processes (started and ended within each
measurement, so their start is counted; the SSH server's CPU is not).

"run remote" starts cold: the reader processes start inside the measurement (about
0.3-0.5 s before they deliver) and the run waits for the first to answer its first file
header. A whole ``replicator run`` hides most of that: it starts them first thing, beside
its own imports and config load (time that process from outside to see it). "run remote
warm" is the same run with the reader processes logged in before the clock starts (every
later file of a run, and the daemon); the time they took is printed as "reader start".
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from replicator.redo.reader import RedoFile
from replicator.redo.source import LOCAL, RedoSource

if TYPE_CHECKING:
    from replicator.runner.batch import BatchJob


def read_all(files: list[RedoFile], source: RedoSource) -> tuple[int, float]:
    """Bytes read and seconds to stream every file whole through ``source``."""
    t0 = time.perf_counter()
    total = 0
    for redo in files:
        with source.open(redo.path) as handle:
            for piece in handle.stream(0, handle.size(), source.batch_chunk):
                total += len(piece)
    return total, time.perf_counter() - t0


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def compare_main(args: argparse.Namespace) -> int:
    """Print remote vs local MB/s for the raw read and the pipeline (best of ``--repeat``)."""
    from replicator.runner.batch import build_job

    job = build_job(args.file)
    remote = job.source
    if remote is LOCAL:
        raise SystemExit("replicator bench --compare-local: the config's reader.redo-source is local")
    mapper = getattr(remote, "remote", lambda p: p)
    local_files = [RedoFile(mapper(f.path), f.sequence) for f in job.files]
    rows: dict[str, list[float]] = {"read local": [], "read remote": [], "run local": [], "run remote": [],
                                    "run remote warm": []}
    cpu: dict[str, list[float]] = {name: [] for name in rows}
    start: list[float] = []
    mb = 0.0
    for _ in range(max(1, args.repeat)):
        for label, files, source in (("local", local_files, LOCAL), ("remote", job.files, remote)):
            c0 = _cpu()
            n, secs = read_all(files, source)
            source.close()  # ends the reader processes: their CPU is counted here
            mb = n / 1e6
            rows[f"read {label}"].append(mb / secs)
            cpu[f"read {label}"].append(_cpu() - c0)
            c0 = _cpu()
            t0 = time.perf_counter()
            rows[f"run {label}"].append(_run(job, files, source, args) / 1e6 / (time.perf_counter() - t0))
            cpu[f"run {label}"].append(_cpu() - c0)
        # Warm: the session and the reader processes logged in before the clock starts, as for
        # every file after a run's first and in the daemon. Their start is timed apart; its CPU
        # is counted in the row (the processes end inside it).
        c0 = _cpu()
        t0 = time.perf_counter()
        getattr(remote, "wait_ready", lambda: None)()
        start.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        rows["run remote warm"].append(_run(job, job.files, remote, args) / 1e6 / (time.perf_counter() - t0))
        cpu["run remote warm"].append(_cpu() - c0)
    print(f"redo              {len(job.files)} files ({mb:.1f} MB) via {remote.label}")
    for name, values in rows.items():
        print(f"{name:<17} {max(values):.1f} MB/s  {min(cpu[name]):.2f} CPU-s")
    print(f"reader start      {min(start):.2f} s (reader processes logged in; inside \"run remote\", "
          "before \"run remote warm\")")
    for what, remote_row in (("read", "read remote"), ("run", "run remote"), ("run warm", "run remote warm")):
        ratio = max(rows[remote_row]) / max(rows[f"{what.split()[0]} local"])
        print(f"{what + ' remote/local':<17} {ratio * 100:.0f} %")
    return 0


def _run(job: BatchJob, files: list[RedoFile], source: RedoSource, args: argparse.Namespace) -> int:
    """Bytes of redo through the whole pipeline (parse, format, discard); the run closes ``source``."""
    from replicator.bench.sinks import CountingSink
    from replicator.runner.batch import run_job

    stats = run_job(replace(job, files=files, source=source, parser=replace(job.parser)), sink=CountingSink(),
                    engine=getattr(args, "engine", None))
    return int(stats.bytes_read)
