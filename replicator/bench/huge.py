"""Huge-transaction benchmark: one transaction far larger than the memory pool.

Generates redogen's ``huge-transaction`` workload (fat rows, one commit) of ``--size``
bytes of redo, runs the daemon (``reader.type: offline``) over it in a subprocess with
``memory.max-mb``/``swap-mb`` as given, and prints: redo size, rows, wall time, MB/s,
the daemon's peak RSS (VmHWM of the process, not ru_maxrss, which survives execve), swap
files left behind, and whether the output is right.

Rightness without holding gigabytes of expected output: the same workload is generated
small (``--check-rows``) with its expected output; the big run's output must start with
exactly those lines (the workload is deterministic, so every message but the commit is
the same), have the expected number of lines, and end with the commit.

Run: ``python -m replicator.bench.huge --size 2GB --max-mb 256 [--swap-mb 192] [--dir D]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from replicator.redogen import workloads
from replicator.redogen.commands import parse_size
from replicator.redogen.generate import GenerationResult, generate

ROW_BYTES = 3000
# Prints the process's peak RSS (MB) after the run: VmHWM is per process image.
_RUN = (
    "import sys; from replicator.cli import main; rc = main(['run', '-f', sys.argv[1], '--progress', 'off']); "
    "print('VmHWM', [int(l.split()[1]) // 1024 for l in open('/proc/self/status') "
    "if l.startswith('VmHWM')][0]); sys.exit(rc)"
)


def run_measured(config: Path, timeout: float | None = None) -> tuple[subprocess.CompletedProcess[str], int]:
    """``replicator run -f config`` in a child process; returns it and its peak RSS in MB (0 on failure)."""
    proc = subprocess.run([sys.executable, "-c", _RUN, str(config)], capture_output=True, text=True, timeout=timeout)
    peak = int(proc.stdout.split("VmHWM")[-1].split()[0]) if proc.returncode == 0 else 0
    return proc, peak


def offline_config(result: GenerationResult, memory: dict[str, object]) -> Path:
    """redogen's config for the offline daemon, stopping after the last log, with ``memory``."""
    cfg = result.offline_config()
    cfg["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    cfg["memory"] = memory
    path = result.out_dir / "daemon.json"
    path.write_text(json.dumps(cfg))
    return path


def check_output(output: Path, reference: list[bytes], changes: int) -> str | None:
    """None when ``output`` is right (see the module doc), else what is wrong."""
    expected_lines = 2 + changes  # begin, every row change, commit
    head = reference[:-1]  # all but the small run's commit
    count = 0
    last = b""
    with open(output, "rb") as f:
        for line in f:
            if count < len(head) and line.rstrip(b"\n") != head[count]:
                return f"line {count + 1} differs from the small run's expected output"
            count += 1
            last = line
    if count != expected_lines:
        return f"{count} lines, {expected_lines} expected"
    if b'"op":"commit"' not in last:
        return "the last message is not the commit"
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser(prog="python -m replicator.bench.huge")
    ap.add_argument("--size", default="2GB", help="redo of the one transaction (default 2GB)")
    ap.add_argument("--max-mb", type=int, default=256)
    ap.add_argument("--swap-mb", type=int, help="default: max-mb * 3 / 4")
    ap.add_argument("--check-rows", type=int, default=5000, help="rows of the small reference run")
    ap.add_argument("--dir", help="work directory (default: a temporary one, removed afterwards)")
    args = ap.parse_args(argv)
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench-huge-"))
    try:
        small = generate(workloads.huge_transaction(args.check_rows, row_bytes=ROW_BYTES), work / "small")
        assert small.expected is not None
        reference = small.expected.read_bytes().splitlines()

        t0 = time.monotonic()
        sc = workloads.huge_transaction(target_bytes=parse_size(args.size), row_bytes=ROW_BYTES)
        big = generate(sc, work / "big", with_expected=False)
        gen_s = time.monotonic() - t0
        swap = work / "swap"
        swap.mkdir(exist_ok=True)
        max_mb = args.max_mb
        swap_mb = args.swap_mb if args.swap_mb is not None else max_mb * 3 // 4
        config = offline_config(big, {"min-mb": 32, "max-mb": max_mb, "swap-mb": swap_mb, "swap-path": str(swap)})
        t0 = time.monotonic()
        proc, peak = run_measured(config)
        run_s = time.monotonic() - t0
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return proc.returncode
        problem = check_output(big.output, reference, big.stats["rows"])
        left = len(list(swap.glob("*.swap")))
        mb = big.redo_bytes / 1e6
        print(
            f"redo {mb:,.0f} MB in {len(big.logs)} logs, one transaction of {big.stats['rows']:,} rows "
            f"(generated in {gen_s:.0f} s)"
        )
        print(
            f"daemon: {run_s:.1f} s, {mb / run_s:.1f} MB/s, {big.stats['rows'] / run_s:,.0f} rows/s, "
            f"peak RSS {peak} MB (max-mb {max_mb}, swap-mb {swap_mb})"
        )
        print(f"swap files left: {left}; output: {'correct' if problem is None else problem}")
        return 0 if problem is None and left == 0 else 1
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
