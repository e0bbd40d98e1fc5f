"""``replicator spark run|tables|bench``: the command line of the Spark consumer.

Also the driver script of ``deploy/spark-submit.sh`` (``spark-submit .../cli.py run ...``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING

from replicator.cli_args import ArgumentParser
from replicator.errors import ConfigError, ReplicatorError

if TYPE_CHECKING:  # the job's modules are imported only by the commands that run one
    from replicator.spark.options import JobOptions


def _pair(text: str, what: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ConfigError(f"{what} expects NAME=VALUE, got {text!r}", 30002)
    return key.strip(), value.strip()


def add_job_arguments(p: argparse.ArgumentParser) -> None:
    """Options shared by ``run`` and ``bench``."""
    p.add_argument(
        "--lake",
        "--output",
        dest="lake",
        required=True,
        help="lake directory or URI (file:, s3://, abfss://...): Delta tables, change log, job state",
    )
    p.add_argument(
        "-f",
        "--olr-config",
        help="the replicator's OpenLogReplicator.json: format options, "
        "Kafka topic and brokers, key rules, schema checkpoint (primary keys)",
    )
    p.add_argument("--olr-format", help="the producer's format section as JSON (instead of --olr-config)")
    p.add_argument("--bootstrap-servers", default="", help="Kafka brokers host:port[,...]")
    p.add_argument("--topic", default="", help="Kafka topic(s), comma-separated")
    p.add_argument("--topic-pattern", default="", help="regular expression of Kafka topics (instead of --topic)")
    p.add_argument("--checkpoint", default="", help="Spark checkpoint directory (default: LAKE/_checkpoint)")
    p.add_argument(
        "--source",
        default="auto",
        choices=("auto", "kafka", "python"),
        help="kafka = Spark's kafka format (needs the jar); python = confluent-kafka data source; "
        "auto = kafka when its jar is on the classpath (default: %(default)s)",
    )
    p.add_argument(
        "--store",
        default="auto",
        choices=("auto", "delta-rs", "spark-delta"),
        help="Delta writer: delta-rs (no JVM jars) or Spark's Delta (delta-spark jars); auto = Spark's "
        "when its jars are on the classpath (default: %(default)s)",
    )
    p.add_argument(
        "--storage-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="delta-rs object store option (AWS_REGION, AZURE_STORAGE_ACCOUNT_NAME...)",
    )
    p.add_argument(
        "--binary-handling-mode",
        default=None,
        choices=("bytes", "base64", "base64-url-safe", "hex"),
        help="how the producer's Debezium events encode bytes (its binary.handling.mode; default bytes = "
        "base64, or what --olr-config says)",
    )
    p.add_argument(
        "--starting-offsets",
        default="earliest",
        choices=("earliest", "latest"),
        help="where a job without a checkpoint starts reading the topic (default: %(default)s)",
    )
    p.add_argument(
        "--max-offsets-per-trigger",
        type=int,
        default=200_000,
        help="records per batch (default 200000; 0 = all available)",
    )
    p.add_argument(
        "--trigger-seconds", type=float, default=1.0, help="micro-batch interval in seconds (default: %(default)s)"
    )
    p.add_argument("--available-now", action="store_true", help="process what the topic holds now, then stop")
    p.add_argument("--until-idle", type=float, default=0.0, help="stop after SECONDS without input")
    p.add_argument("--key", action="append", default=[], metavar="OWNER.TABLE=COL1,COL2", help="key columns")
    p.add_argument("--rowid-table", action="append", default=[], metavar="OWNER.TABLE", help="key by ROWID")
    p.add_argument(
        "--no-atomic",
        action="store_true",
        help="apply row changes without waiting for whole transactions (streams without begin/commit)",
    )
    p.add_argument(
        "--kafka-property",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra Kafka client property (security, timeouts...)",
    )
    p.add_argument(
        "--unbounded-number",
        default="string",
        choices=("string", "decimal", "double"),
        help="Spark type of NUMBER columns without precision (default: exact text)",
    )
    p.add_argument(
        "--pending-timeout",
        type=float,
        default=300.0,
        help="seconds before a partial replay of an applied transaction is dropped (default: %(default)s)",
    )
    p.add_argument(
        "--mode",
        default="copy-on-write",
        choices=("copy-on-write", "merge-on-read"),
        help="new tables: copy-on-write (each batch rewrites the files of the keys it changes) or "
        "merge-on-read (each batch appends its records; readers and compaction merge them; "
        "default: %(default)s)",
    )
    p.add_argument(
        "--buckets",
        type=int,
        default=8,
        help="_bucket partitions of a new current-state table (fixed when it is created; default 8; "
        "about one per 2 million rows the table will hold)",
    )
    p.add_argument(
        "--fold-partitions",
        type=int,
        default=0,
        help="Spark tasks of the fold (default: twice the default parallelism)",
    )
    p.add_argument(
        "--whole-below-mb",
        type=float,
        default=64.0,
        metavar="MB",
        help="a table whose stored files total less than this folds in one task per batch instead of one "
        "per bucket it touches (default: %(default)s; 0: always by bucket)",
    )
    p.add_argument(
        "--compact-every",
        type=int,
        default=0,
        metavar="BATCHES",
        help="compact the buckets that gathered many files every N batches (default: never)",
    )
    p.add_argument(
        "--vacuum-every",
        type=int,
        default=0,
        metavar="BATCHES",
        help="vacuum unreferenced files (older than 7 days) every N batches (default: never)",
    )
    p.add_argument(
        "--tombstone-retention-scn",
        type=int,
        default=0,
        metavar="SCNS",
        help="vacuum drops tombstones more than SCNS below the applied SCN (default: kept)",
    )
    p.add_argument("--master", default=None, help="Spark master when not started by spark-submit (local[*])")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark configuration")


def options_from(args: argparse.Namespace) -> JobOptions:
    """JobOptions from parsed arguments (config file first, then explicit options)."""
    from replicator.spark.options import FormatHints, JobOptions, apply_olr_config

    opts = JobOptions(
        lake=args.lake,
        bootstrap_servers=args.bootstrap_servers,
        topic=args.topic,
        checkpoint=args.checkpoint,
        source=args.source,
        store=args.store,
        starting_offsets=args.starting_offsets,
        max_offsets_per_trigger=args.max_offsets_per_trigger,
        trigger_seconds=args.trigger_seconds,
        available_now=args.available_now,
        until_idle=args.until_idle,
        atomic=not args.no_atomic,
        topic_pattern=args.topic_pattern,
        rowid_tables=list(args.rowid_table),
        unbounded_number=args.unbounded_number,
        mode=args.mode,
        buckets=args.buckets,
        fold_partitions=args.fold_partitions,
        whole_below_mb=args.whole_below_mb,
        compact_every=args.compact_every,
        vacuum_every=args.vacuum_every,
        tombstone_retention_scn=args.tombstone_retention_scn,
    )
    if args.olr_config:
        apply_olr_config(opts, args.olr_config)
    if args.olr_format:
        try:
            opts.hints = FormatHints.from_format(json.loads(args.olr_format))
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"--olr-format is not a JSON object of format options: {exc}", 30002) from None
    for text in args.key:
        table, cols = _pair(text, "--key")
        opts.keys[table] = [c.strip() for c in cols.split(",") if c.strip()]
    opts.kafka_properties.update(_pair(t, "--kafka-property") for t in args.kafka_property)
    opts.storage_options.update(_pair(t, "--storage-option") for t in args.storage_option)
    if args.binary_handling_mode:
        opts.hints.binary_handling_mode = args.binary_handling_mode
    if opts.topic_pattern and args.topic:
        opts.topic_pattern = ""  # an explicit --topic wins over the config's per-table topics
    return opts


def _configure_logging() -> None:
    from replicator import log as rlog

    rlog.configure_logging()
    logging.getLogger("replicator.spark").setLevel(logging.INFO)
    logging.getLogger("py4j").setLevel(logging.WARNING)


def spark_main(argv: list[str]) -> int:
    """Entry point of ``replicator spark ...``; returns the exit code."""
    p = ArgumentParser(prog="replicator spark", description="Kafka change stream -> lake tables (PySpark)")
    sub = p.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run the streaming job")
    add_job_arguments(run)
    run.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="a line on stderr while waiting for the brokers (default: auto = on a TTY)",
    )
    tables = sub.add_parser("tables", help="list the tables of a lake and how rows are keyed")
    tables.add_argument("--lake", required=True, help="lake directory or URI the job writes")
    compact = sub.add_parser("compact", help="rewrite the buckets that gathered many files (job stopped)")
    compact.add_argument("--lake", required=True, help="lake directory or URI the job writes")
    compact.add_argument(
        "--min-files", type=int, default=8, help="compact a bucket holding this many files (default: %(default)s)"
    )
    compact.add_argument(
        "--storage-option", action="append", default=[], metavar="NAME=VALUE", help="delta-rs object store option"
    )
    vacuum = sub.add_parser("vacuum", help="delete files no recent table version uses (job stopped)")
    vacuum.add_argument("--lake", required=True, help="lake directory or URI the job writes")
    vacuum.add_argument(
        "--retention-hours", type=float, default=168.0, help="keep files a version of the last HOURS uses (default 168)"
    )
    vacuum.add_argument(
        "--tombstone-retention-scn",
        type=int,
        default=0,
        metavar="SCNS",
        help="drop tombstones more than SCNS below the applied SCN (default: kept)",
    )
    vacuum.add_argument(
        "--storage-option", action="append", default=[], metavar="NAME=VALUE", help="delta-rs object store option"
    )
    bench = sub.add_parser("bench", help="measure rows/s applied and commit-to-visible latency")
    from replicator.spark.bench import add_bench_arguments

    add_bench_arguments(bench)
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["run", *argv]  # `run` is the default command (container entry points pass options only)
    args = p.parse_args(argv)
    _configure_logging()
    try:
        from replicator.spark.preflight import require_extra

        require_extra(args.cmd)  # before anything waits on Kafka or starts a JVM
        if args.cmd == "tables":
            from replicator.spark.reader import list_tables

            for name, info in list_tables(args.lake).items():
                print(
                    f"{name}: key {info['key'] or 'ROWID'} ({info['key_origin']}), {info['columns']} columns, "
                    f"{info['buckets']} buckets"
                )
            return 0
        if args.cmd in ("compact", "vacuum"):
            from replicator.spark import housekeeping
            from replicator.spark.lakestore import DeltaLake

            lake = DeltaLake(args.lake, dict(_pair(t, "--storage-option") for t in args.storage_option))
            rep = (
                housekeeping.compact(lake, args.min_files)
                if args.cmd == "compact"
                else housekeeping.vacuum(lake, args.retention_hours, args.tombstone_retention_scn)
            )
            print(rep.line())
            return 0
        if args.cmd == "bench":
            from replicator.spark.bench import bench_main

            return bench_main(args)
        from replicator.spark.job import run_job

        opts = options_from(args)
        opts.require_kafka()  # before a JVM starts: a missing topic is an argument error
        if args.source != "kafka":  # the confluent-kafka source: the brokers must answer first
            from replicator.spark.preflight import wait_for_brokers

            wait_for_brokers(opts.bootstrap_servers, opts.kafka_properties, args.progress)
        return run_job(
            opts,
            master=args.master,
            pending_timeout=args.pending_timeout,
            conf=dict(_pair(c, "--conf") for c in args.conf),
        )
    except ImportError as exc:  # installed, but a module of the extra does not import
        from replicator.spark.preflight import INSTALL_HINT

        print(f"ERROR 30002 a module of the spark extra cannot be imported ({exc}): {INSTALL_HINT}", file=sys.stderr)
        return 1
    except ReplicatorError as exc:
        print(f"ERROR {exc.code:05d} {exc.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # spark-submit runs this file
    raise SystemExit(spark_main(sys.argv[1:]))
