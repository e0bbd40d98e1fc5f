"""``replicator verify -f CONFIG``: the redo decoded again against what the sink holds.

    replicator verify -f OpenLogReplicator.json                  # the config's file or Kafka writer
    replicator verify -f OpenLogReplicator.json --sink capture:client.out --json

Exit status: 0 the sink holds exactly what the redo holds (within the bounds printed);
3 it does not (``ERROR 10400``, every difference with its position); 1 nothing could be
verified (a coded error: unreadable sink, unsupported format, no redo); 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from replicator import log
from replicator.cli_args import ArgumentParser, non_negative_int, positive_float
from replicator.errors import ReplicatorError, RuntimeFailure
from replicator.formats.olr_digest import Change, ChangeId, decode
from replicator.verify.compare import Bounds, compare
from replicator.verify.delta import DeltaSink, RedoFold, check_state, lake_element, lake_keys, lake_table
from replicator.verify.report import Finding, Report, details
from replicator.verify.sinks import UNSUPPORTED, FileSink, KafkaSink, SinkReader, consumer_config, output_files
from replicator.verify.spool import Spool, TableNames, bucket_count
from replicator.verify.truth import RedoTruth

DIFFERENCES = 10400
EXIT_DIFFERENCES = 3
REDO_BYTES_PER_CHANGE = 200  # a low estimate (OLTP redo has about 700): sizes the buckets


class Side:
    """A :class:`~replicator.verify.sinks.ChangeOut` that spools one side's changes and keeps
    its claims and findings."""

    def __init__(self, spool: Spool) -> None:
        self.spool = spool
        self.claims: list[ChangeId] = []
        self.findings: list[Finding] = []
        self.fold: RedoFold | None = None  # a lake's current state: the redo's messages folded

    def message(self, body: bytes, place: int) -> ChangeId | None:
        doc = decode(body)
        if self.fold is not None:
            self.fold.observe(doc, place)
        last = self.spool.add_message(doc, place)
        if last is None:  # a checkpoint message: a position a confirmation may name
            self.spool.position(int(doc["c_scn"]), int(doc["c_idx"]), place)
        return last

    def change(self, change: Change, place: int) -> None:
        self.spool.add(change, place)

    def claim(self, cid: ChangeId) -> None:
        self.claims.append(cid)

    def finding(self, kind: str, text: str, where: str) -> None:
        self.findings.append(Finding(kind, text, where))


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``replicator verify``."""
    p = ArgumentParser(
        prog="replicator verify",
        description="compare what a sink holds with the redo, change by "
        "change (counts and content digests per table and transaction)",
    )
    p.add_argument(
        "-f",
        "--file",
        default="OpenLogReplicator.json",
        help="the config the sink was written with (its source, dictionary, filter and format; default: %(default)s)",
    )
    p.add_argument(
        "--sink",
        metavar="SPEC",
        help="what to read instead of the config's writer: file:OUTPUT (a file "
        "writer output pattern, %%i allowed), capture:FILE (what `replicator client` printed), "
        "kafka:TOPIC[,TOPIC...], delta:LAKE (the Spark job's lake: its change log and current-state "
        "tables at its applied SCN)",
    )
    p.add_argument(
        "--bootstrap-servers",
        metavar="HOSTS",
        help="Kafka brokers for --sink kafka: (default: the config's kafka writer)",
    )
    p.add_argument(
        "--from-scn",
        type=non_negative_int,
        metavar="SCN",
        help="start: transactions committed after this SCN "
        "(default: reader.start-scn, else the oldest schema checkpoint)",
    )
    p.add_argument(
        "--to-scn",
        type=non_negative_int,
        metavar="SCN",
        help="compare only transactions that began at or before this SCN",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every change of the redo read must be in the sink (default: "
        "up to the sink's last message or the confirmed position, whichever is later)",
    )
    p.add_argument("--redo", nargs="+", metavar="PATH", help="redo files or directories (default: the config's)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document")
    p.add_argument(
        "--max-report",
        type=non_negative_int,
        default=50,
        metavar="N",
        help="differences listed with their keys (default: %(default)s; counts are always complete)",
    )
    p.add_argument(
        "--kafka-timeout",
        type=positive_float,
        default=30.0,
        metavar="S",
        help="give up reading Kafka after S seconds without progress (default: %(default)s)",
    )
    p.add_argument("--work-dir", metavar="DIR", help="where the spool files go (default: the system temp directory)")
    p.add_argument(
        "--engine",
        choices=("python", "native"),
        default=None,
        help="decode engine (default: $REPLICATOR_ENGINE, else native when built)",
    )
    return p


def _topic_pattern(template: str) -> re.Pattern[str]:
    """The topics ``topic-per-table`` can produce ({owner} and {table} stand for any name)."""
    parts = re.split(r"(\{owner\}|\{table\})", template)
    bad = re.compile(r"[^A-Za-z0-9._-]")
    return re.compile(
        "".join(".+" if part in ("{owner}", "{table}") else re.escape(bad.sub("_", part)) for part in parts)
    )


def open_sink(spec: str | None, config: Any, args: argparse.Namespace) -> SinkReader:
    """The sink to read: ``spec`` (``--sink``) or the config's writer."""
    from replicator.config.writer import parse_output_pattern

    writer = config.target[0].writer
    if spec is None:
        if writer.type == "file":
            if writer.pattern is None:
                raise RuntimeFailure(
                    "the file writer writes to stdout: give the file it was saved in (--sink capture:FILE)", UNSUPPORTED
                )
            return _file_sink(writer.pattern, writer.output, writer.newline_bytes)
        if writer.type == "kafka":
            pattern = _topic_pattern(writer.topic_per_table) if writer.topic_per_table else None
            return KafkaSink([writer.topic], consumer_config(writer.properties), args.kafka_timeout, pattern)
        raise RuntimeFailure(
            f"a {writer.type} writer keeps nothing to read back: verify what a client saved "
            "(--sink capture:FILE, e.g. the output of `replicator client`)",
            UNSUPPORTED,
        )
    kind, _, rest = spec.partition(":")
    if not rest:
        raise RuntimeFailure(
            f"--sink {spec!r}: expected file:OUTPUT, capture:FILE, kafka:TOPIC or delta:LAKE", UNSUPPORTED
        )
    if kind == "file":
        newline = writer.newline_bytes if writer.type == "file" else b"\n"
        return _file_sink(parse_output_pattern(rest, 1, 1), rest, newline)  # rotation size: not read
    if kind == "capture":
        return FileSink([rest], f"capture {rest}")
    if kind == "kafka":
        properties = dict(writer.properties) if writer.type == "kafka" else {}
        if args.bootstrap_servers:
            properties["bootstrap.servers"] = args.bootstrap_servers
        if "bootstrap.servers" not in properties and "metadata.broker.list" not in properties:
            raise RuntimeFailure(
                "--sink kafka: needs --bootstrap-servers (the config has no kafka writer)", UNSUPPORTED
            )
        return KafkaSink(rest.split(","), consumer_config(properties), args.kafka_timeout)
    if kind == "delta":
        return DeltaSink(rest)
    raise RuntimeFailure(f"--sink {spec!r}: unknown kind {kind!r} (file, capture, kafka, delta)", UNSUPPORTED)


def _file_sink(pattern: Any, output: str, newline: bytes) -> FileSink:
    if not newline:
        raise RuntimeFailure("new-line 0: the output has no message boundaries to read back", UNSUPPORTED)
    files, findings = output_files(pattern)
    return FileSink(files, f"file {output}", newline, findings)


def _confirmed(config: Any) -> tuple[int, int] | None:
    """The daemon's confirmed position (c_scn, printed c_idx) from ``<name>-chkpt.json``, if any."""
    path = Path(config.state.path) / f"{config.source[0].name}-chkpt.json"
    try:
        doc = json.loads(path.read_bytes()[:4096])
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not doc.get("pos") or not any(doc["pos"]):
        return None  # nothing confirmed yet (a position saved at the start)
    return int(doc.get("scn", 0)), int(doc.get("idx", 0)) + 1


def _cut(
    redo: Spool, sink: Side, confirmed: tuple[int, int] | None, everything: bool, notes: list[str]
) -> tuple[int | None, bool, str]:
    """(the last redo ordinal the sink must hold, None for all; whether the sink holds changes
    past the redo read; the bounds in words)."""
    if everything:
        return None, False, "every change of the redo read"
    cut, said, ahead = -1, [], False
    for cid in sink.claims:
        found = redo.found.get(cid)
        if found is None:
            ahead = True
        else:
            cut = max(cut, found)
    if ahead:
        notes.append(
            "the sink holds changes after the redo read (redo not archived yet?): every change of the "
            "redo read must be in it, the sink's later ones are not checked"
        )
    elif sink.claims:
        said.append(f"the sink's last message{'s' if len(sink.claims) > 1 else ''}")
    if confirmed is not None:
        found = redo.found_positions.get(confirmed)
        if found is None:
            notes.append(
                f"the confirmed position (c_scn {confirmed[0]}, c_idx {confirmed[1]}) is after the redo "
                "read: every change of the redo read must be in the sink"
            )
            ahead = True
        else:
            said.append(f"the confirmed position c_scn {confirmed[0]} c_idx {confirmed[1]}")
            cut = max(cut, found)
    if ahead:
        return None, True, "every change of the redo read"
    if cut < 0:
        return (
            -1,
            False,
            "nothing: the sink holds no change and no position was confirmed (--all checks the whole redo)",
        )
    return cut, False, "redo changes up to " + " and ".join(said)


def verify(args: argparse.Namespace) -> Report:
    """Run one verification (see the module docstring)."""
    from replicator.config import load_config

    started = time.perf_counter()
    config = load_config(args.file)
    with tempfile.TemporaryDirectory(prefix="replicator-verify-", dir=args.work_dir) as work:
        work_dir = Path(work)
        truth = RedoTruth(config, from_scn=args.from_scn, redo=args.redo, engine=args.engine, work_dir=work_dir)
        sink = open_sink(args.sink, config, args)
        redo_bytes = sum(
            f.size if f.size >= 0 else os.path.getsize(f.path)
            for f in truth.files
            if f.size >= 0 or os.path.exists(f.path)
        )
        buckets = bucket_count(redo_bytes // REDO_BYTES_PER_CHANGE)
        tables = TableNames()
        sink_side = Side(Spool(work_dir, "sink", buckets, tables))
        redo_side = Side(Spool(work_dir, "redo", buckets, tables))
        notes: list[str] = []
        hints = None
        if isinstance(sink, DeltaSink):  # the lake keeps text images, up to its applied SCN: the redo first
            from replicator.spark.options import olr_format_hints

            hints = olr_format_hints(args.file)  # as the job reads them (--olr-config)
            redo_side.spool.element = lake_element
            redo_side.fold = RedoFold(sink.through_scn, hints.scn_is_commit, lake_keys(sink))
        else:
            sink_stats = sink.scan(sink_side)
            sink_side.spool.flush()
            redo_side.spool.watch_for(sink_side.claims)
        confirmed = None if args.all or args.sink else _confirmed(config)
        if confirmed is not None:
            redo_side.spool.watch_positions.add(confirmed)
        redo_stats = truth.scan(redo_side)
        redo_side.spool.flush()
        fold = redo_side.fold
        lake_ahead = False  # the lake holds changes beyond the redo read: its current state is not compared
        if isinstance(sink, DeltaSink) and fold is not None:
            lake_ahead = fold.last_commit < sink.through_scn
            if lake_ahead:
                notes.append(
                    f"the lake is applied up to SCN {sink.through_scn}, the redo read ends at commit SCN "
                    f"{fold.last_commit} (not archived yet?): the change log is compared up to it, the "
                    "current-state tables are not compared (they hold later changes)"
                )
                sink.through_scn = fold.last_commit
            sink_stats = sink.scan(sink_side)
            sink_side.spool.flush()
        findings = sink_side.findings + redo_side.findings
        cut: int | None  # the last redo ordinal the sink must hold (None: all)
        if isinstance(sink, DeltaSink) and fold is not None:
            cut, ahead = fold.cut, False
            bounds = f"redo changes committed up to SCN {sink.through_scn} (no begin/commit markers)"
        else:
            cut, ahead, bounds = _cut(redo_side.spool, sink_side, confirmed, args.all, notes)
        bounds += f"; sink changes after SCN {truth.first_scn}"
        if args.to_scn is not None:
            bounds += f"; c_scn at most {args.to_scn}"
        result = compare(
            redo_side.spool,
            sink_side.spool,
            Bounds(cut, truth.first_scn, args.to_scn, sink.kinds, ahead, sink.part_shift),
            args.max_report,
        )
        wanted_redo = {d.redo for d in result.differences if d.redo is not None}
        wanted_sink = {p for d in result.differences for p in d.sink}
        redo_docs = truth.locate(wanted_redo) if wanted_redo else {}
        sink_docs = sink.locate(wanted_sink) if wanted_sink else {}
        keys = truth.key_columns()
        if fold is not None:  # the lake's own keys: a table it keys by ROWID shows its rid
            keys.update({lake_table(name): cols or [] for name, cols in fold.keys.items()})
        reported = details(result, tables, redo_docs, sink_docs, keys)
        state = None
        if isinstance(sink, DeltaSink) and fold is not None and not lake_ahead:
            state = check_state(sink, fold, hints, args.max_report)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return Report(
        truth.label,
        sink.label,
        bounds,
        redo_stats,
        sink_stats,
        result,
        tables,
        reported,
        findings,
        notes,
        time.perf_counter() - started,
        rss,
        state,
    )


def verify_main(argv: list[str]) -> int:
    """Entry point of ``replicator verify``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        report = verify(args)
    except ReplicatorError as exc:
        log.error(exc.code, exc.message)
        return 1
    out = json.dumps(report.as_json(), indent=1) if args.json else report.text()
    sys.stdout.write(out + "\n")
    sys.stdout.flush()
    if report.ok:
        return 0
    r = report.result
    state = ""
    if report.state is not None:
        c = report.state.counts
        state = f"; current-state rows: {c['missing']} missing, {c['extra']} extra, {c['differs']} differing"
    log.error(
        DIFFERENCES,
        f"the sink does not hold exactly what the redo holds: {r.counts['missing']} missing, "
        f"{r.counts['duplicated']} duplicated, {r.counts['differs']} differing, "
        f"{r.counts['extra']} extra changes, {len(report.findings)} other finding(s){state}",
    )
    return EXIT_DIFFERENCES
