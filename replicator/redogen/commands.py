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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replicator.cli_args import ArgumentParser, int_at_least, non_negative_float, non_negative_int, positive_int
from replicator.errors import ConfigError, ReplicatorError, RuntimeFailure
from replicator.ops.progress import format_duration
from replicator.ops.ticker import Ticker

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``512``, ``64k``, ``10MB``, ``1.5GiB`` -> bytes."""
    m = _SIZE.fullmatch(text.strip())
    if m is None:
        raise ConfigError(f"cannot parse size {text!r}", 30002)
    unit = m[2].lower()
    size = int(float(m[1]) * 1024 ** ("_kmgt".index(unit) if unit else 0))
    if size <= 0:
        raise ConfigError(f"size {text!r} is not above 0 bytes", 30002)
    return size


def db_version(text: str) -> str:
    """``--db-version``: a release redogen writes (11.2 ... 23, or an alias such as 19c)."""
    from replicator.redogen.scenario import _ALIASES, VERSIONS

    if text in VERSIONS or text.lower() in _ALIASES:
        return text
    raise argparse.ArgumentTypeError(f"{text!r} is not a database version redogen writes ({', '.join(VERSIONS)})")


def _untyped(raw: str) -> Any:
    for conv in (int, float):
        try:
            return conv(raw)
        except ValueError:
            pass
    return raw


def _typed(key: str, raw: str, default: Any) -> Any:
    """``raw`` converted to the type of the parameter's ``default`` (ConfigError 30002 if it is not one)."""

    def bad(what: str) -> ConfigError:
        return ConfigError(f"--param {key}={raw}: {what}", 30002)

    if isinstance(default, bool):
        if raw.lower() in ("1", "true", "yes"):
            return True
        if raw.lower() in ("0", "false", "no"):
            return False
        raise bad("expects 0 or 1")
    if isinstance(default, (int, float)):
        value = _untyped(raw)
        if isinstance(value, str) or (isinstance(default, int) and not isinstance(value, int)):
            raise bad(f"expects {'an integer' if isinstance(default, int) else 'a number'}")
        return type(default)(value)
    if isinstance(default, tuple):
        parts = [_untyped(p) for p in raw.split(",")]
        if len(parts) != len(default) or any(isinstance(p, str) for p in parts):
            raise bad(f"expects {len(default)} comma-separated numbers, like {','.join(str(d) for d in default)}")
        return tuple(type(d)(p) for d, p in zip(default, parts, strict=True))
    if isinstance(default, str):
        return raw
    if default is None:
        return _untyped(raw)
    raise bad("cannot be set from the command line")


def _param(text: str, defaults: dict[str, Any]) -> tuple[str, Any]:
    """One ``--param KEY=VALUE``, typed as the parameter it sets (``defaults``: name -> default)."""
    key, sep, raw = text.partition("=")
    if not sep:
        raise ConfigError(f"--param expects KEY=VALUE, got {text!r}", 30002)
    key = key.replace("-", "_")
    if key not in defaults:
        raise ConfigError(f"--param {key}: unknown parameter (known: {', '.join(sorted(defaults))})", 30002)
    return key, _typed(key, raw, defaults[key])


def _defaults(func: Any = None) -> dict[str, Any]:
    """Settable parameters and their defaults: a workload function's, then the Scenario's fields."""
    import dataclasses
    import inspect

    from replicator.redogen.scenario import Scenario

    out: dict[str, Any] = {}
    for f in dataclasses.fields(Scenario):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
    if func is not None:
        for name, param in inspect.signature(func).parameters.items():
            if param.default is not inspect.Parameter.empty:
                out[name] = param.default
    return out


def output_dir(text: str) -> Path:
    """The output directory, created if needed (RuntimeFailure 10006 when it cannot be)."""
    path = Path(text)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise RuntimeFailure(f"output directory {text}: exists and is not a directory", 10006) from None
    except OSError as exc:
        raise RuntimeFailure(f"output directory {text}: cannot be created: {exc.strerror or exc}", 10006) from None
    if not path.is_dir():
        raise RuntimeFailure(f"output directory {text}: not a directory", 10006)
    return path


def _build(args: argparse.Namespace):
    from replicator.redogen import workloads
    from replicator.redogen.demo import demo_scenario
    from replicator.redogen.scenario import Scenario

    func = workloads.WORKLOADS.get(args.source)
    params = dict(_param(p, _defaults(func)) for p in args.param)
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
            raise ConfigError(
                f"{args.source}: no such scenario file or workload ({', '.join(['demo', *workloads.WORKLOADS])})", 30002
            )
        if path.suffix.lower() == ".sql":
            from replicator.redogen.sqlscript import load_sql

            notes: list[str] = []
            sc = load_sql(path, args.schema, strict=args.strict, warnings=notes)
            for note in notes:
                print(f"WARN  60380 {note}", file=sys.stderr)
        else:
            if args.schema:
                raise ConfigError("--schema applies to a .sql script only", 30002)
            sc = Scenario.from_file(path)
        for key, value in {**common, **params}.items():
            setattr(sc, key, value)
        if args.seed is not None:
            sc.seed = args.seed
    if args.format:
        try:
            sc.format = json.loads(args.format)
        except ValueError as exc:
            raise ConfigError(f"--format is not JSON: {exc}", 30002) from None
        if not isinstance(sc.format, dict):
            raise ConfigError('--format must be a JSON object such as \'{"type":"json"}\'', 30002)
    if args.flags is not None:
        sc.flags = args.flags
    if args.log_blocks:
        sc.log_blocks = args.log_blocks
    if args.threads:
        sc.threads = args.threads
    if args.size and args.source not in ("oltp", "huge-transaction"):
        sc.max_redo_bytes = parse_size(args.size)
    return sc


def _redo_written(out: Path, args: argparse.Namespace, engines: list[Any]) -> Callable[[float], str]:
    """The progress text of a generation: redo MB written so far (of --size when given)."""
    target = f"/{parse_size(args.size) / 1e6:.1f}" if args.size else ""
    fra = out / "fra"  # online groups are preallocated: count what was archived

    def text(elapsed: float) -> str:
        if engines:
            done = engines[0].stream.bytes_written
        else:
            done = sum(f.stat().st_size for f in fra.rglob("*") if f.is_file()) if fra.is_dir() else 0
        return f"writing redo: {done / 1e6:.1f}{target} MB  {format_duration(elapsed)}"

    return text


def redogen_main(argv: list[str]) -> int:
    """``replicator redogen SCENARIO_OR_WORKLOAD -o DIR [options]``; returns the exit code."""
    from replicator.redogen import workloads

    p = ArgumentParser(
        prog="replicator redogen",
        description="write synthetic Oracle redo logs, "
        "a schema checkpoint, OpenLogReplicator.json and the expected output",
    )
    p.add_argument(
        "source",
        help=f"scenario file (.json/.yaml), SQL*Plus script (.sql) or workload: demo, {', '.join(workloads.WORKLOADS)}",
    )
    p.add_argument("-o", "--output-dir", required=True, help="directory to write into")
    p.add_argument(
        "--schema",
        help="with a .sql script: an OLR schema checkpoint (file or directory) the script's tables are taken from",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="with a .sql script: stop at a statement the "
        "database would refuse (default: skip it with a warning, as SQL*Plus goes on)",
    )
    p.add_argument("--db-version", type=db_version, help="database version: 11.2, 12.1, 12.2, 18, 19, 21, 23")
    p.add_argument("--block-size", type=int, choices=(512, 1024, 4096), help="redo block size")
    p.add_argument("--seed", type=int, help="random seed of a workload")
    p.add_argument("--size", help="redo to write, e.g. 100MB (oltp and huge-transaction target; a cap otherwise)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="workload parameter (rows=, count=, columns=, sessions=...) or scenario field",
    )
    p.add_argument("--format", help='OLR format section as JSON, e.g. \'{"type":"json","rid":1}\'')
    p.add_argument("--flags", type=non_negative_int, help="OLR source.flags")
    p.add_argument("--log-blocks", type=positive_int, help="online log size in blocks (log switch when full)")
    p.add_argument("--threads", type=positive_int, help="RAC: redo threads (instances); sessions are dealt over them")
    p.add_argument("--no-expected", action="store_true", help="skip the expected output (benchmarks)")
    p.add_argument(
        "--online",
        action="store_true",
        help="write a ring of online redo groups that grow "
        "in place and are archived at each switch (config uses the offline reader)",
    )
    p.add_argument(
        "--groups", type=int_at_least(2), default=3, help="online redo groups (with --online; default: %(default)s)"
    )
    p.add_argument(
        "--rate", type=non_negative_float, default=0.0, help="redo MB/s to produce at (with --online; 0 = max)"
    )
    p.add_argument("--final-switch", action="store_true", help="archive the last online log too")
    p.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="a progress line on stderr (default: auto = when stderr is a TTY)",
    )
    p.add_argument(
        "--endian",
        choices=("little", "big"),
        default="little",
        help="platform byte order: little (Linux x86) or big (AIX, Solaris SPARC, HP-UX); default: %(default)s",
    )
    args = p.parse_args(argv)
    from replicator.redogen.byteorder import big_endian

    try:
        output_dir(args.output_dir)
        sc = _build(args)
        start = time.monotonic()
        engines: list[Any] = []
        with (
            Ticker(_redo_written(Path(args.output_dir), args, engines), mode=args.progress),
            big_endian(args.endian == "big"),
        ):
            result = _generate(args, sc, engines.append)
        took = time.monotonic() - start
    except ReplicatorError as exc:
        print(f"ERROR {exc.code:05d} {exc.message}", file=sys.stderr)
        return 1
    return _report(result, took)


def _generate(args: argparse.Namespace, sc: Any, on_engine: Callable[[Any], None] | None = None) -> Any:
    from replicator.redogen.generate import generate

    if args.online:
        from replicator.redogen.online import generate_online

        return generate_online(
            sc,
            args.output_dir,
            groups=args.groups,
            rate_mb_s=args.rate,
            final_switch=args.final_switch,
            with_expected=not args.no_expected,
        )
    return generate(sc, args.output_dir, with_expected=not args.no_expected, on_engine=on_engine)


def _report(result: Any, took: float) -> int:
    mb = result.redo_bytes / 1e6
    print(
        f"{len(result.logs)} redo log(s), {mb:.1f} MB in {took:.1f}s ({mb / max(took, 1e-9):.1f} MB/s); "
        f"{result.stats['transactions']} committed, {result.stats['rollbacks']} rolled back, "
        f"{result.stats['rows']} row changes kept"
    )
    threads = len({log.thread for log in result.logs})
    for log in result.logs:
        print(
            f"  {f'thread {log.thread} ' if threads > 1 else ''}seq {log.sequence}: {log.path} "
            f"SCN {log.first_scn}-{log.next_scn}"
        )
    print(f"config:   {result.config}\ncheckpoint: {result.checkpoint}")
    if result.expected:
        print(f"expected: {result.expected}")
    return 0


def demo_main(argv: list[str]) -> int:
    """``replicator demo [-o DIR] [--db-version V] [--block-size N]``: generate, replicate, compare."""
    from replicator.redogen.demo import demo_scenario
    from replicator.redogen.generate import generate

    p = ArgumentParser(
        prog="replicator demo",
        description="generate a small redo set, run the replicator on it and compare with the expected output",
    )
    p.add_argument("-o", "--output-dir", help="where to write (default: a temporary directory)")
    p.add_argument(
        "--db-version",
        type=db_version,
        default="19",
        help="Oracle release whose redo is generated: 11.2, 12.1, 12.2, 18, 19, 21, 23 or an alias "
        "such as 19c (default: %(default)s)",
    )
    p.add_argument(
        "--block-size",
        type=int,
        default=512,
        choices=(512, 1024, 4096),
        help="redo block size in bytes (default: %(default)s)",
    )
    p.add_argument("--lines", type=non_negative_int, default=6, help="output lines to show (default: %(default)s)")
    args = p.parse_args(argv)
    tmp = None if args.output_dir else tempfile.TemporaryDirectory(prefix="replicator-demo-")
    out_dir = Path(args.output_dir or tmp.name)  # type: ignore[union-attr]
    try:
        if args.output_dir:
            output_dir(args.output_dir)
        sc = demo_scenario(args.db_version, args.block_size)
        result = generate(sc, out_dir)
        print(f"Generated Oracle {args.db_version} redo ({args.block_size}-byte blocks) in {out_dir}:")
        for archived in result.logs:
            print(
                f"  {archived.path.name}: sequence {archived.sequence}, {archived.blocks} blocks, "
                f"SCN {archived.first_scn}-{archived.next_scn}"
            )
        print(
            f"  {result.stats['transactions']} transactions committed, {result.stats['rollbacks']} rolled back, "
            f"{result.stats['rows']} row changes to replicate"
        )
        from replicator import log
        from replicator.runner.batch import run_config

        print(f"\nRunning: replicator run -f {result.config}")
        try:
            rc = run_config(str(result.config))
        except ReplicatorError as exc:  # shown like `replicator run` shows it; the comparison says NO
            log.error(exc.code, exc.message)
            rc = 1
        output = result.output.read_bytes() if result.output.exists() else b""
        lines = output.decode("utf-8", "replace").splitlines()
        print(f"\n{len(lines)} messages written to {result.output.name}; the first {min(args.lines, len(lines))}:")
        for line in lines[: args.lines]:
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
