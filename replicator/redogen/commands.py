"""Command-line entry points: ``replicator redogen`` and ``replicator demo``.

``replicator redogen SCENARIO_OR_WORKLOAD -o DIR`` writes redo logs, the schema
checkpoint, OpenLogReplicator.json and expected.json into DIR. ``replicator demo``
generates the built-in scenario, runs the pipeline on it in-process and says whether the
output equals the expected file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from replicator.errors import ConfigError, ReplicatorError

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``512``, ``64k``, ``10MB``, ``1.5GiB`` -> bytes."""
    m = _SIZE.fullmatch(text.strip())
    if m is None:
        raise ConfigError(f"cannot parse size {text!r}", 30002)
    unit = m[2].lower()
    return int(float(m[1]) * 1024 ** ("_kmgt".index(unit) if unit else 0))


def _param(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep:
        raise ConfigError(f"--param expects KEY=VALUE, got {text!r}", 30002)
    for conv in (int, float):
        try:
            return key.replace("-", "_"), conv(raw)
        except ValueError:
            pass
    return key.replace("-", "_"), raw


def _build(args: argparse.Namespace):
    from replicator.redogen import workloads
    from replicator.redogen.demo import demo_scenario
    from replicator.redogen.scenario import Scenario

    params = dict(_param(p) for p in args.param)
    common = {k: v for k, v in (("version", args.db_version), ("block_size", args.block_size)) if v is not None}
    if args.source == "demo":
        sc = demo_scenario(**common)
    elif args.source in workloads.WORKLOADS:
        if args.source in ("oltp", "huge-transaction") and args.size:
            params["target_bytes"] = parse_size(args.size)
        if args.seed is not None:
            params["seed"] = args.seed
        sc = workloads.WORKLOADS[args.source](**params, **common)
    else:
        path = Path(args.source)
        if not path.is_file():
            raise ConfigError(f"{args.source}: no such scenario file or workload "
                              f"({', '.join(['demo', *workloads.WORKLOADS])})", 30002)
        sc = Scenario.from_file(path)
        for key, value in {**common, **params}.items():
            setattr(sc, key, value)
        if args.seed is not None:
            sc.seed = args.seed
    if args.format:
        sc.format = json.loads(args.format)
    if args.flags is not None:
        sc.flags = args.flags
    if args.log_blocks:
        sc.log_blocks = args.log_blocks
    if args.threads:
        sc.threads = args.threads
    if args.size and args.source not in ("oltp", "huge-transaction"):
        sc.max_redo_bytes = parse_size(args.size)
    return sc


def redogen_main(argv: list[str]) -> int:
    """``replicator redogen SCENARIO_OR_WORKLOAD -o DIR [options]``; returns the exit code."""
    from replicator.redogen import workloads
    from replicator.redogen.generate import generate

    p = argparse.ArgumentParser(prog="replicator redogen", description="write synthetic Oracle redo logs, "
                                "a schema checkpoint, OpenLogReplicator.json and the expected output")
    p.add_argument("source", help=f"scenario file (.json/.yaml) or workload: demo, {', '.join(workloads.WORKLOADS)}")
    p.add_argument("-o", "--output-dir", required=True, help="directory to write into")
    p.add_argument("--db-version", help="database version: 11.2, 12.1, 12.2, 18, 19, 21, 23")
    p.add_argument("--block-size", type=int, choices=(512, 1024, 4096), help="redo block size")
    p.add_argument("--seed", type=int, help="random seed of a workload")
    p.add_argument("--size", help="redo to write, e.g. 100MB (oltp and huge-transaction target; a cap otherwise)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="workload parameter (rows=, count=, columns=, sessions=...) or scenario field")
    p.add_argument("--format", help="OLR format section as JSON, e.g. '{\"type\":\"json\",\"rid\":1}'")
    p.add_argument("--flags", type=int, help="OLR source.flags")
    p.add_argument("--log-blocks", type=int, help="online log size in blocks (log switch when full)")
    p.add_argument("--threads", type=int, help="RAC: redo threads (instances); sessions are dealt over them")
    p.add_argument("--no-expected", action="store_true", help="skip the expected output (benchmarks)")
    p.add_argument("--online", action="store_true", help="write a ring of online redo groups that grow "
                   "in place and are archived at each switch (config uses the offline reader)")
    p.add_argument("--groups", type=int, default=3, help="online redo groups (with --online)")
    p.add_argument("--rate", type=float, default=0.0, help="redo MB/s to produce at (with --online; 0 = max)")
    p.add_argument("--final-switch", action="store_true", help="archive the last online log too")
    p.add_argument("--endian", choices=("little", "big"), default="little",
                   help="platform byte order: little (Linux x86) or big (AIX, Solaris SPARC, HP-UX)")
    args = p.parse_args(argv)
    from replicator.redogen.byteorder import big_endian

    try:
        sc = _build(args)
        start = time.monotonic()
        with big_endian(args.endian == "big"):
            result = _generate(args, sc)
        took = time.monotonic() - start
    except ReplicatorError as exc:
        print(f"ERROR {exc.code:05d} {exc.message}", file=sys.stderr)
        return 1
    return _report(result, took)


def _generate(args: argparse.Namespace, sc: Any) -> Any:
    from replicator.redogen.generate import generate

    if args.online:
        from replicator.redogen.online import generate_online

        return generate_online(sc, args.output_dir, groups=args.groups, rate_mb_s=args.rate,
                               final_switch=args.final_switch, with_expected=not args.no_expected)
    return generate(sc, args.output_dir, with_expected=not args.no_expected)


def _report(result: Any, took: float) -> int:
    mb = result.redo_bytes / 1e6
    print(f"{len(result.logs)} redo log(s), {mb:.1f} MB in {took:.1f}s ({mb / max(took, 1e-9):.1f} MB/s); "
          f"{result.stats['transactions']} committed, {result.stats['rollbacks']} rolled back, "
          f"{result.stats['rows']} row changes kept")
    threads = len({log.thread for log in result.logs})
    for log in result.logs:
        print(f"  {f'thread {log.thread} ' if threads > 1 else ''}seq {log.sequence}: {log.path} "
              f"SCN {log.first_scn}-{log.next_scn}")
    print(f"config:   {result.config}\ncheckpoint: {result.checkpoint}")
    if result.expected:
        print(f"expected: {result.expected}")
    return 0


def demo_main(argv: list[str]) -> int:
    """``replicator demo [-o DIR] [--db-version V] [--block-size N]``: generate, replicate, compare."""
    from replicator.redogen.demo import demo_scenario
    from replicator.redogen.generate import generate

    p = argparse.ArgumentParser(prog="replicator demo", description="generate a small redo set, run the "
                                "replicator on it and compare with the expected output")
    p.add_argument("-o", "--output-dir", help="where to write (default: a temporary directory)")
    p.add_argument("--db-version", default="19")
    p.add_argument("--block-size", type=int, default=512, choices=(512, 1024, 4096))
    p.add_argument("--lines", type=int, default=6, help="output lines to show")
    args = p.parse_args(argv)
    tmp = None if args.output_dir else tempfile.TemporaryDirectory(prefix="replicator-demo-")
    out_dir = Path(args.output_dir or tmp.name)  # type: ignore[union-attr]
    try:
        sc = demo_scenario(args.db_version, args.block_size)
        result = generate(sc, out_dir)
        print(f"Generated Oracle {args.db_version} redo ({args.block_size}-byte blocks) in {out_dir}:")
        for log in result.logs:
            print(f"  {log.path.name}: sequence {log.sequence}, {log.blocks} blocks, SCN {log.first_scn}-{log.next_scn}")
        print(f"  {result.stats['transactions']} transactions committed, {result.stats['rollbacks']} rolled back, "
              f"{result.stats['rows']} row changes to replicate")
        from replicator.cli import main as cli_main

        print(f"\nRunning: replicator run -f {result.config}")
        rc = cli_main(["run", "-f", str(result.config)])
        output = result.output.read_bytes() if result.output.exists() else b""
        lines = output.decode("utf-8", "replace").splitlines()
        print(f"\n{len(lines)} messages written to {result.output.name}; the first {min(args.lines, len(lines))}:")
        for line in lines[:args.lines]:
            print("  " + (line if len(line) <= 160 else line[:157] + "..."))
        assert result.expected is not None
        same = rc == 0 and output == result.expected.read_bytes()
        print(f"\noutput == expected: {'yes' if same else 'NO'} (replicator exit code {rc})")
        return 0 if same else 1
    except ReplicatorError as exc:
        print(f"ERROR {exc.code:05d} {exc.message}", file=sys.stderr)
        return 1
    finally:
        if tmp is not None:
            tmp.cleanup()
