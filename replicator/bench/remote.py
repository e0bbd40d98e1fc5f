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
its own imports and config load. "run remote warm" is the same run with the reader
processes logged in before the clock starts (every later file of a run, and the daemon);
the time they took is printed as "reader start".

"whole" is what a ``replicator run`` of these files costs from outside: ``replicator
bench -f CONFIG`` as a process of its own, timed from its start to its exit, once with
the config and once with a copy reading the same files locally, in interleaved pairs
(``max(3, --repeat)``), so a machine shared with other work slows both alike. It prints
min / median / max seconds, the median remote/local ratio with its range (the issue's
figure), and the CPU seconds of the replicator process and of its reader processes apart.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from replicator.bench.proc_cpu import stat_cpu, stat_fields
from replicator.errors import RuntimeFailure
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
    rows: dict[str, list[float]] = {
        "read local": [],
        "read remote": [],
        "run local": [],
        "run remote": [],
        "run remote warm": [],
    }
    cpu: dict[str, list[float]] = {name: [] for name in rows}
    start: list[float] = []
    waits: list[float] = []  # seconds the parser waited for the reader processes in "run remote warm"
    pool = getattr(remote, "pool", None)
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
        waited = pool.waited if pool is not None else 0.0
        t0 = time.perf_counter()
        rows["run remote warm"].append(_run(job, job.files, remote, args) / 1e6 / (time.perf_counter() - t0))
        cpu["run remote warm"].append(_cpu() - c0)
        if pool is not None:
            waits.append(pool.waited - waited)
    print(f"redo              {len(job.files)} files ({mb:.1f} MB) via {remote.label}")
    for name, values in rows.items():
        print(f"{name:<17} {max(values):.1f} MB/s  {min(cpu[name]):.2f} CPU-s")
    print(
        f'reader start      {min(start):.2f} s (reader processes logged in; inside "run remote", '
        'before "run remote warm")'
    )
    if waits:
        print(
            f'hand-off wait     {min(waits):.2f} s (in "run remote warm": the parser waiting for a piece the '
            "reader processes had not delivered yet)"
        )
    for what, remote_row in (("read", "read remote"), ("run", "run remote"), ("run warm", "run remote warm")):
        ratio = max(rows[remote_row]) / max(rows[f"{what.split()[0]} local"])
        print(f"{what + ' remote/local':<17} {ratio * 100:.0f} %")
    whole(args, mapper, mb, max(3, args.repeat))
    return 0


def whole(args: argparse.Namespace, mapper: Callable[[str], str], mb: float, pairs: int) -> None:
    """Time ``replicator bench`` as whole processes, local and remote in turn, and print the figures."""
    with open(args.file, "rb") as f:
        cfg = json.loads(f.read())
    reader = cfg["source"][0]["reader"]
    del reader["redo-source"]
    reader["redo-log"] = [mapper(p) for p in reader["redo-log"]]
    with tempfile.TemporaryDirectory(prefix="replicator-compare-") as tmp:
        local_cfg = os.path.join(tmp, "local.json")
        with open(local_cfg, "w") as f:
            json.dump(cfg, f)
        runs: dict[str, list[tuple[float, float, float]]] = {"local": [], "remote": []}
        for _ in range(pairs):
            for name, path in (("local", local_cfg), ("remote", args.file)):
                runs[name].append(_whole_process(path, args, tmp))
    secs = {name: [r[0] for r in values] for name, values in runs.items()}
    for name in ("local", "remote"):
        t = sorted(secs[name])
        print(
            f"{'whole ' + name:<17} {mb / statistics.median(t):.1f} MB/s median, {t[0]:.2f} / "
            f"{statistics.median(t):.2f} / {t[-1]:.2f} s (min / median / max of {pairs}, interleaved)"
        )
    ratios = sorted(lo / re for lo, re in zip(secs["local"], secs["remote"]))
    print(
        f"whole remote/local {statistics.median(ratios) * 100:.0f} % median ({ratios[0] * 100:.0f}-"
        f"{ratios[-1] * 100:.0f} %; the issue's goal: 80 %)"
    )
    cpu = {name: [statistics.median(r[i] for r in values) for i in (1, 2)] for name, values in runs.items()}
    print(
        f"whole CPU-s       local {cpu['local'][0]:.2f}; remote {cpu['remote'][0]:.2f} replicator + "
        f"{cpu['remote'][1]:.2f} reader processes (medians; the SSH server's not counted)"
    )


def _whole_process(config: str, args: argparse.Namespace, tmp: str) -> tuple[float, float, float]:
    """Seconds from start to exit of ``replicator bench -f config``, its own CPU-s and its children's."""
    cmd = [sys.executable, "-m", "replicator", "bench", "-f", config, "--progress", "off"]
    if getattr(args, "engine", None):
        cmd += ["--engine", args.engine]
    with open(os.path.join(tmp, "stdout"), "wb") as out, open(os.path.join(tmp, "stderr"), "w+b") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        own, kids = _exit_cpu(proc)
        secs = time.perf_counter() - t0
        if proc.returncode:
            err.seek(0)
            last = (err.read().decode(errors="replace").strip().splitlines() or ["?"])[-1]
            raise RuntimeFailure(f"replicator bench --compare-local: the whole run of {config} failed: {last}", 10310)
    return secs, own, kids


def _exit_cpu(proc: subprocess.Popen[Any]) -> tuple[float, float]:
    """Wait for ``proc``; its own CPU-s and its reaped children's (read from /proc before it is
    reaped; elsewhere all of it counts as its own)."""
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        with open(f"/proc/{proc.pid}/stat", "rb") as f:
            own, kids = stat_cpu(stat_fields(f.read()))
        proc.wait()
        return own, kids
    except (AttributeError, OSError, IndexError, ValueError):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 0.0


def _run(job: BatchJob, files: list[RedoFile], source: RedoSource, args: argparse.Namespace) -> int:
    """Bytes of redo through the whole pipeline (parse, format, discard); the run closes ``source``."""
    from replicator.bench.sinks import CountingSink
    from replicator.runner.batch import run_job

    stats = run_job(
        replace(job, files=files, source=source, parser=replace(job.parser)),
        sink=CountingSink(),
        engine=getattr(args, "engine", None),
    )
    return int(stats.bytes_read)
