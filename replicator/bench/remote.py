"""``replicator bench -f CONFIG --compare-local``: a remote redo source against local reads.

For a config whose ``reader.redo-source`` is remote (sftp) and whose server is this
machine (loopback: the remote path after ``path-mapping`` is readable here too), it
measures the same redo twice: the raw read (every block of every file through the
source's read-ahead) and the whole batch pipeline (parse, format, discard), once from
local files and once through the remote source, and prints MB/s, the ratio, and the CPU
seconds of this process and its reader processes (started and ended within each
measurement, so their start is counted; the SSH server's CPU is not).
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace

from replicator.redo.reader import RedoFile
from replicator.redo.source import LOCAL, RedoSource


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
    from replicator.bench.sinks import CountingSink
    from replicator.runner.batch import build_job, run_job

    job = build_job(args.file)
    remote = job.source
    if remote is LOCAL:
        raise SystemExit("replicator bench --compare-local: the config's reader.redo-source is local")
    mapper = getattr(remote, "remote", lambda p: p)
    local_files = [RedoFile(mapper(f.path), f.sequence) for f in job.files]
    rows: dict[str, list[float]] = {"read local": [], "read remote": [], "run local": [], "run remote": []}
    cpu: dict[str, list[float]] = {name: [] for name in rows}
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
            stats = run_job(replace(job, files=files, source=source, parser=replace(job.parser)), sink=CountingSink(),
                            engine=getattr(args, "engine", None))
            rows[f"run {label}"].append(stats.bytes_read / 1e6 / (time.perf_counter() - t0))
            cpu[f"run {label}"].append(_cpu() - c0)
    print(f"redo              {len(job.files)} files ({mb:.1f} MB) via {remote.label}")
    for name, values in rows.items():
        print(f"{name:<17} {max(values):.1f} MB/s  {min(cpu[name]):.2f} CPU-s")
    for what in ("read", "run"):
        ratio = max(rows[f"{what} remote"]) / max(rows[f"{what} local"])
        print(f"{what} remote/local  {ratio * 100:.0f} %")
    return 0
