"""Command line: ``replicator run|dump|bench|check-config|config|redogen|demo|verify``.

Every command turns a :class:`~replicator.errors.ReplicatorError` into one log line
``ERROR CCCCC message`` and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from replicator import __version__
from replicator.cli_args import ArgumentParser, non_negative_float, positive_int
from replicator.errors import ReplicatorError


def _cmd_run(args: argparse.Namespace) -> int:
    from replicator.ops import early_signals, startup_gc

    early_signals.capture()  # before the slow imports: a SIGTERM during startup stops cleanly
    startup_gc.pause()  # until the run starts (see replicator.ops.startup_gc)
    from replicator.redo import sftp_early

    sftp_early.prestart(args.file)  # remote reader processes start beside the imports below
    try:
        from replicator.runner.batch import run_config

        return run_config(
            args.file,
            progress=args.progress,
            read_limit_mbps=args.read_limit,
            metrics_linger=args.metrics_linger,
            engine=args.engine,
        )
    finally:
        sftp_early.discard()
        startup_gc.resume()


def _cmd_dump(args: argparse.Namespace) -> int:
    from replicator.tools.dump import dump_file

    for path in args.files:
        dump_file(path, sys.stdout, verify_checksum=not args.no_checksum)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.compare_local:
        from replicator.bench.remote import compare_main

        return compare_main(args)
    from replicator.ops import startup_gc
    from replicator.redo import sftp_early

    startup_gc.pause()  # until the run starts (see replicator.ops.startup_gc)
    if not args.files:
        sftp_early.prestart(args.file)  # remote reader processes start beside the imports below
    try:
        from replicator.bench.redo import bench_main

        return bench_main(args)
    finally:
        sftp_early.discard()
        startup_gc.resume()


def _cmd_check_config(args: argparse.Namespace) -> int:
    from replicator.config import explain_config, explain_dialect

    for line in explain_dialect(args.file):
        print(f"{args.file}: {line}")
    problems = explain_config(args.file)
    if problems:
        for problem in problems:
            print(f"{args.file}: {problem}")
        return 1
    from replicator.config import load_config

    config = load_config(args.file)
    if args.config_only:
        from replicator.config.exposure import exposure_warnings
        from replicator.config.redosource import explain_redo_source

        for line in [*exposure_warnings(config), *explain_redo_source(config.source[0].reader.redo_source)]:
            print(f"{args.file}: {line}")
        print(f"{args.file}: OK")
        return 0
    from replicator.runner.preflight import check_startup

    print(f"{args.file}: config: OK keys and values")
    results = check_startup(config)
    for finding in results:
        print(f"{args.file}: {finding.line()}")
    errors = [f for f in results if f.level == "error"]
    if errors:
        print(f"{args.file}: {len(errors)} problem(s); `replicator run` stops at the first ({errors[0].step})")
        return 1
    print(f"{args.file}: OK")
    return 0


def _cmd_config_upgrade(args: argparse.Namespace) -> int:
    from replicator.config import read_config_text
    from replicator.config.upgrade import render_config, upgrade_config

    result, notes = upgrade_config(read_config_text(args.file), args.to, filename=args.file)
    for note in notes:
        print(f"{args.file}: {note}", file=sys.stderr)
    text = render_config(result)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        from pathlib import Path

        from replicator.fsutil import atomic_write

        atomic_write(Path(args.output), text.encode("utf-8"))
        print(f"{args.file}: written to {args.output}", file=sys.stderr)
    return 0


def _cmd_redogen(args: argparse.Namespace) -> int:
    from replicator.redogen.commands import redogen_main

    return redogen_main(args.rest)


def _cmd_client(args: argparse.Namespace) -> int:
    from replicator.tools.client import client_main

    return client_main(args.rest)


def _cmd_bench_writers(args: argparse.Namespace) -> int:
    from replicator.bench.writers import main as bench_writers_main

    return bench_writers_main(args.rest)


def _cmd_spark(args: argparse.Namespace) -> int:
    from replicator.spark.cli import spark_main

    return spark_main(args.rest)


def _cmd_verify(args: argparse.Namespace) -> int:
    from replicator.verify.command import verify_main

    return verify_main(args.rest)


def _cmd_demo(args: argparse.Namespace) -> int:
    from replicator.redogen.commands import demo_main

    return demo_main(args.rest)


class _DecodeWorkers(argparse.Action):
    """--decode-workers N: recorded where the native engine reads it (replicator.native)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        from replicator.native import set_decode_workers

        set_decode_workers(int(values))  # type: ignore[call-overload]
        setattr(namespace, self.dest, values)


if TYPE_CHECKING:  # what `add_subparsers` returns (argparse names it only privately)
    _Subparsers = argparse._SubParsersAction[ArgumentParser]


def _config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--file", default="OpenLogReplicator.json", help="config file (default: %(default)s)")


def _engine_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=("python", "native"),
        default=None,
        help="decode engine (default: $REPLICATOR_ENGINE, else native when built)",
    )
    parser.add_argument(
        "--decode-workers",
        type=int,
        choices=range(0, 17),
        default=None,
        metavar="N",
        action=_DecodeWorkers,
        help="native engine: threads formatting committed transactions while the redo "
        "is parsed (0: one thread; default: $REPLICATOR_DECODE_WORKERS, else 1 with 2 usable cores or more, else 0)",
    )


def _add_run(sub: _Subparsers) -> None:
    run = sub.add_parser("run", help="replicate as the config file says (OpenLogReplicator.json)")
    _config_argument(run)
    run.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="progress display on a terminal (default: auto = when stderr is a TTY)",
    )
    run.add_argument(
        "--read-limit",
        type=non_negative_float,
        default=None,
        metavar="MB_PER_S",
        help="cap the redo read rate (spare the disks a catch-up shares with the database)",
    )
    run.add_argument(
        "--metrics-linger",
        type=non_negative_float,
        default=0.0,
        metavar="SECONDS",
        help="keep serving /metrics this long after a batch run ends (final scrape)",
    )
    _engine_argument(run)
    run.set_defaults(func=_cmd_run)


def _add_dump(sub: _Subparsers) -> None:
    dump = sub.add_parser("dump", help="list the headers, records and change vectors of redo files")
    dump.add_argument("files", nargs="+", metavar="FILE", help="a redo log file (online or archived)")
    dump.add_argument("--no-checksum", action="store_true", help="do not verify block checksums")
    dump.set_defaults(func=_cmd_dump)


def _add_bench(sub: _Subparsers) -> None:
    bench = sub.add_parser("bench", help="measure redo MB/s, rows/s and peak RSS on redo files")
    bench.add_argument("-f", "--file", help="config whose source/format/filter to use (default: schemaless)")
    bench.add_argument(
        "--writer",
        choices=("discard", "file"),
        default="discard",
        help="where the messages go: discard (decoding and formatting only) or file "
        "(written as the file writer writes; default: %(default)s)",
    )
    bench.add_argument(
        "--output",
        default=None,
        metavar="FILE",
        help="output file for --writer file (default: a new temporary file; an existing FILE is appended to)",
    )
    bench.add_argument(
        "--repeat", type=positive_int, default=1, help="process the files this many times (default: %(default)s)"
    )
    bench.add_argument("--log-archive-format", default="", help="archive name format to order files")
    bench.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="progress line on stderr (default: auto = when stderr is a TTY)",
    )
    bench.add_argument(
        "--compare-local",
        action="store_true",
        help="with a remote reader.redo-source on this machine: remote vs local MB/s",
    )
    bench.add_argument("files", nargs="*", help="redo files or directories (default: those of the config)")
    _engine_argument(bench)
    bench.set_defaults(func=_cmd_bench)


def _add_check_config(sub: _Subparsers) -> None:
    check = sub.add_parser(
        "check-config",
        help="run every start-up check of `run` and explain each problem",
        description="Validate a config file, then run every check `replicator run` makes "
        "before it touches data (state folder, schema checkpoint, filter against "
        "the schema, redo files, output; the writer's reachability as a warning) "
        "and list each result. Exit code 1 when `run` would stop.",
    )
    _config_argument(check)
    check.add_argument(
        "--config-only",
        action="store_true",
        help="check the file's keys and values only (a config written for another machine)",
    )
    check.set_defaults(func=_cmd_check_config)


def _add_config(sub: _Subparsers) -> None:
    config = sub.add_parser("config", help="rewrite a config file (upgrade between OpenLogReplicator dialects)")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    upgrade = config_sub.add_parser(
        "upgrade",
        help="rewrite a 1.9 config as a 2.0 one (or back with --to 1.9)",
        description="Rewrite a config between the OpenLogReplicator 1.9 and 2.0 dialects: the "
        "version string, and memory/state moved from source[0] to the top level for 2.0. "
        "The result is validated in the target dialect; what it cannot express is refused "
        "(error 30151) and nothing is written.",
    )
    _config_argument(upgrade)
    upgrade.add_argument("--to", choices=("2.0", "1.9"), default="2.0", help="target dialect (default: %(default)s)")
    upgrade.add_argument(
        "-o", "--output", default="-", help="where to write the result (default: standard output; may be the input)"
    )
    upgrade.set_defaults(func=_cmd_config_upgrade)


def _add_redogen(sub: _Subparsers) -> None:
    gen = sub.add_parser("redogen", help="generate Oracle redo files from a scenario", add_help=False)
    gen.add_argument("rest", nargs=argparse.REMAINDER)
    gen.set_defaults(func=_cmd_redogen)


def _add_bench_writers(sub: _Subparsers) -> None:
    bench_writers = sub.add_parser("bench-writers", help="measure each writer's messages/s and MB/s", add_help=False)
    bench_writers.add_argument("rest", nargs=argparse.REMAINDER)
    bench_writers.set_defaults(func=_cmd_bench_writers)


def _add_client(sub: _Subparsers) -> None:
    client = sub.add_parser("client", help="read a network/zeromq writer's stream (StreamClient)", add_help=False)
    client.add_argument("rest", nargs=argparse.REMAINDER)
    client.set_defaults(func=_cmd_client)


def _add_spark(sub: _Subparsers) -> None:
    spark = sub.add_parser("spark", help="the PySpark consumer: Kafka change stream -> lake tables", add_help=False)
    spark.add_argument("rest", nargs=argparse.REMAINDER)
    spark.set_defaults(func=_cmd_spark)


def _add_verify(sub: _Subparsers) -> None:
    verify = sub.add_parser("verify", help="prove a sink holds exactly what the redo holds", add_help=False)
    verify.add_argument("rest", nargs=argparse.REMAINDER)
    verify.set_defaults(func=_cmd_verify)


def _add_demo(sub: _Subparsers) -> None:
    demo = sub.add_parser("demo", help="generate a redo stream, replicate it and show the result", add_help=False)
    demo.add_argument("rest", nargs=argparse.REMAINDER)
    demo.set_defaults(func=_cmd_demo)


# Each subcommand's parser, in the order `replicator --help` lists them.
_SUBCOMMANDS: dict[str, Callable[[_Subparsers], None]] = {
    "run": _add_run,
    "dump": _add_dump,
    "bench": _add_bench,
    "check-config": _add_check_config,
    "config": _add_config,
    "redogen": _add_redogen,
    "bench-writers": _add_bench_writers,
    "client": _add_client,
    "spark": _add_spark,
    "verify": _add_verify,
    "demo": _add_demo,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``replicator`` command.

    With ``command`` (a subcommand name) only that subcommand's parser is added: its usage,
    help and errors are the same, and a run's start-up does not pay for building the others'.
    """
    p = ArgumentParser(prog="replicator", description="Oracle redo-log change data capture")
    p.add_argument("-v", "--version", action="version", version=f"replicator {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    for name, add in _SUBCOMMANDS.items():
        if command is None or name == command:
            add(sub)
    return p


def _parse(argv: list[str]) -> argparse.Namespace:
    """``build_parser().parse_args(argv)``, building only the parser of the subcommand named."""
    if not argv or argv[0] not in _SUBCOMMANDS:
        return build_parser().parse_args(argv)
    args, unknown = build_parser(argv[0]).parse_known_args(argv)
    if unknown:  # the whole parser reports them, with its usage line (it exits)
        build_parser().parse_args(argv)
    return args


# Subcommands with their own parser get the rest of the line untouched: argparse's
# REMAINDER rejects a leading option (``replicator demo -o DIR``).
_OWN_PARSER = {
    "redogen": _cmd_redogen,
    "demo": _cmd_demo,
    "client": _cmd_client,
    "bench-writers": _cmd_bench_writers,
    "spark": _cmd_spark,
    "verify": _cmd_verify,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``replicator`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _OWN_PARSER:
        args = argparse.Namespace(rest=argv[1:], func=_OWN_PARSER[argv[0]])
    else:
        args = _parse(argv)
    from replicator import log  # here: --help, --version and bad arguments need no logging set up

    log.configure_logging()
    try:
        return int(args.func(args) or 0)
    except ReplicatorError as e:
        log.error(e.code, e.message)
        return 1
    except KeyboardInterrupt:
        log.error(10015, "interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # a file named on the command line that a command did not check first
        log.error(10001, f"file: {e.filename} - {e.strerror or e}" if e.filename else f"{e.strerror or e}")
        return 1


def console_main() -> int:
    """Entry point of the ``replicator`` console script and ``python -m replicator``: :func:`main`,
    then the exit without the interpreter's teardown when that is safe.

    At exit CPython frees every object of the run (dictionary, modules, buffers) one by one;
    the process gives the memory back at once. The atexit handlers (log flush and any
    other) run as in a normal exit, stdout and stderr are flushed; a non-daemon thread
    still running, or a flush that fails, leaves the exit to the interpreter.
    """
    code = main()
    import atexit
    import os
    import threading

    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return code
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return code
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(console_main())
