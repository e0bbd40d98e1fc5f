"""``replicator bench``: throughput and memory of the batch pipeline on given redo files.

Prints redo MB/s, rows/s, transactions/s, messages/s and peak RSS. Figures are printed,
never asserted: speed is measured here, not in tests. With ``-f CONFIG`` the run writes its
schema checkpoints as ``run`` would (their cost is part of the figures), but into a temporary
directory removed afterwards: the config's state folder is only read.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import replace
from typing import Any

from replicator.bench.proc_cpu import peak_rss_mb
from replicator.bench.sinks import CountingSink, FileSink
from replicator.errors import ConfigError, RuntimeFailure
from replicator.flags import FLAG_SCHEMALESS
from replicator.formats.base import FormatOptions
from replicator.redo.header import parse_headers
from replicator.redo.parser import ParserOptions
from replicator.redo.reader import list_batch_files
from replicator.runner.runstats import RunStats


def _check_named_files(entries: list[str]) -> None:
    """A file named on the command line must be a redo log (RedoLogError 40005 as in run and dump)."""
    for entry in entries:
        if os.path.isfile(entry):
            try:
                with open(entry, "rb") as f:
                    head = f.read(8192)
            except OSError as exc:
                raise RuntimeFailure(f"cannot open redo log {entry}: {exc.strerror or exc}", 10001) from None
            parse_headers(head, entry)


def _job(args: argparse.Namespace):
    from replicator.runner.batch import BatchJob, build_job

    _check_named_files(args.files)
    if args.file:
        job = build_job(args.file)
        if args.files:
            job.files = list_batch_files(args.files, args.log_archive_format or "", 0)
    elif not args.files:
        raise ConfigError("replicator bench: give redo files/directories or -f CONFIG", 30002)
    else:
        files = list_batch_files(args.files, args.log_archive_format, 0)
        parser = ParserOptions(tables={}, schemaless=True, flags=FLAG_SCHEMALESS)
        fmt = FormatOptions(scn=1, timestamp=7, timestamp_metadata=7, xid=1, flags=FLAG_SCHEMALESS)
        job = BatchJob("BENCH", files, parser, fmt, None, True)
    if not job.files:
        raise ConfigError(f"no redo log files to measure in {', '.join(args.files) or args.file}", 30120)
    return job


def bench_main(args: argparse.Namespace) -> int:
    """Run the benchmark described by the parsed ``bench`` arguments and print figures."""
    job = _job(args)
    scratch = None
    if job.state is not None:  # the schema checkpoints of the runs go here, not to the config's state folder
        scratch = tempfile.TemporaryDirectory(prefix="replicator-bench-state-")
        job = replace(job, state=job.state.model_copy(update={"path": scratch.name}))
    try:
        return _bench(args, job)
    finally:
        if scratch is not None:
            scratch.cleanup()


def _bench(args: argparse.Namespace, job: Any) -> int:
    from replicator.native import resolve_engine
    from replicator.runner.batch import run_job

    engine = resolve_engine(getattr(args, "engine", None))
    total = RunStats()
    cpu0 = time.process_time()
    out_path = None
    for _ in range(max(1, args.repeat)):
        if args.writer == "file":
            out_path = args.output or os.path.join(tempfile.mkdtemp(prefix="replicator-bench-"), "output.json")
            sink: CountingSink = FileSink(out_path)
        else:
            sink = CountingSink()
        t0 = time.perf_counter()
        stats = run_job(replace(job, parser=replace(job.parser)), sink=sink, engine=engine, progress=args.progress)
        stats.seconds = time.perf_counter() - t0
        if isinstance(sink, FileSink):
            sink.close()
        for name in ("files", "bytes_read", "transactions", "rows", "messages", "seconds"):
            setattr(total, name, getattr(total, name) + getattr(stats, name))
    cpu = time.process_time() - cpu0
    mb = total.bytes_read / 1e6
    secs = total.seconds or 1e-9
    from replicator.native import wiring as native_wiring

    committer = native_wiring.last_committer if engine == "native" else None
    split = (
        f" ({committer.native_transactions} transactions native, {committer.python_transactions} python)"
        if committer is not None
        else ""
    )
    stage2 = getattr(committer, "stage2", None)  # --decode-workers: jobs the worker threads rendered
    if stage2 is not None:
        split += f", {stage2.workers} decode workers ({stage2.queued} transactions rendered there)"
    print(f"engine            {engine}{split}")
    print(f"redo files        {total.files} ({mb:.1f} MB)")
    print(f"writer            {args.writer}" + (f" -> {out_path}" if out_path else ""))
    print(f"elapsed           {secs:.2f} s")
    print(f"redo throughput   {mb / secs:.1f} MB/s")
    print(f"rows              {total.rows} ({total.rows / secs:,.0f} rows/s)")
    print(f"transactions      {total.transactions} ({total.transactions / secs:,.0f} txn/s)")
    print(f"messages          {total.messages} ({total.messages / secs:,.0f} msg/s)")
    print(f"CPU               {cpu:.2f} s ({mb / (cpu or 1e-9):.1f} MB per CPU-s)")
    # Interpreter start, imports, config, checkpoint and dictionary: what a `run` pays too.
    print(
        f"start-up CPU      {cpu0:.2f} s (whole process {cpu0 + cpu:.2f} s, "
        f"{mb / (cpu0 + cpu or 1e-9):.1f} MB per CPU-s)"
    )
    print(f"peak RSS          {peak_rss_mb():.0f} MB")
    pool = getattr(job.source, "pool", None)  # a remote source's reader processes (sftp)
    if pool is not None and pool.pieces:
        print(f"remote hand-off   {pool.pieces} pieces, the parser waited {pool.waited:.2f} s for them")
    return 0
