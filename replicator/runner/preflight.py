"""The start-up checks of ``replicator run``, run one by one by ``replicator check-config``.

A batch run resolves its config through the steps of :class:`BatchStartup` (state folder,
schema checkpoint, filter patterns, filter against the schema, redo files, output) and stops
at the first error. ``check-config`` runs the same steps, each one even when an earlier one
failed (a step that needs an earlier step's result is reported as skipped), and lists every
result with the warnings it logged. One implementation: the two cannot disagree. Nothing is
written: the output step only says what the run would do (write a new file, cut a rerun's
output back, or refuse). ``check-config`` adds one step of its own, the writer's reachability
(Kafka brokers answering, a listening address free), as a warning: ``run`` finds out by
connecting.

The long-running modes (``offline``, ``online``) get the checks their start shares with a
batch run (state folder, schema checkpoint by the daemon's restart rule, filter, output
directory, writer).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from replicator import log
from replicator.errors import ConfigError, ReplicatorError, RuntimeFailure
from replicator.flags import FLAG_SCHEMALESS

if TYPE_CHECKING:
    from replicator.runner.batch_output import OutputPlan

Level = Literal["ok", "warning", "error", "skipped"]
UNREACHABLE = 60111  # errors.CATALOGUE: check-config: the writer's brokers or address are not reachable


@dataclass(frozen=True)
class Finding:
    """The result of one step (or one warning it logged)."""

    step: str
    level: Level
    text: str
    code: int = 0

    def line(self) -> str:
        """``step: OK text``, ``step: WARN CCCCC text``, ``step: ERROR CCCCC text`` or ``step: skipped (...)``."""
        if self.level == "ok":
            return f"{self.step}: OK {self.text}".rstrip()
        if self.level == "skipped":
            return f"{self.step}: skipped ({self.text})"
        return f"{self.step}: {'WARN' if self.level == 'warning' else 'ERROR'} {self.code:05d} {self.text}"


@dataclass(frozen=True)
class Step:
    """One start-up check: ``check`` returns what it found (the OK text) or raises what run stops with."""

    name: str
    check: Callable[[], str]
    needs: tuple[str, ...] = ()
    in_run: bool = True  # False: check-config only (the run finds out by connecting)


class _Warnings(logging.Handler):
    """Collects the warnings a step logs (they are printed as its findings)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _collected() -> Iterator[_Warnings]:
    """Warnings of the ``replicator`` loggers go to the findings instead of stderr meanwhile."""
    logger = logging.getLogger(log.LOGGER_NAME)
    handler = _Warnings()
    saved = logger.propagate, list(logger.handlers)
    logger.handlers = [handler]
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.propagate, logger.handlers = saved[0], saved[1]


def findings(steps: list[Step]) -> list[Finding]:
    """Run every step; a step whose prerequisite failed or was skipped is skipped."""
    found: list[Finding] = []
    failed: set[str] = set()
    for step in steps:
        missing = [name for name in step.needs if name in failed]
        if missing:
            found.append(Finding(step.name, "skipped", f"needs the {', '.join(missing)}"))
            failed.add(step.name)
            continue
        with _collected() as warnings:
            try:
                text = step.check()
            except ReplicatorError as exc:
                failed.add(step.name)
                result = Finding(step.name, "error", exc.message, exc.code)
            else:
                result = Finding(step.name, "ok", text)
        found.append(result)
        found.extend(
            Finding(step.name, "warning", record.getMessage(), int(getattr(record, "olr_code", 0)))
            for record in warnings.records
        )
    return found


def run_steps(steps: list[Step]) -> None:
    """What ``run`` does: every step it makes, in order; the first error stops it."""
    for step in steps:
        if step.in_run:
            step.check()


class BatchStartup:
    """A batch config resolved step by step into what :func:`replicator.runner.batch.run_job` needs."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.source = config.source[0]
        self.schemaless = bool(self.source.flags & FLAG_SCHEMALESS)
        self.checkpoint: Any = None
        self.facts: Any = None  # (parser options, format options, archive format, dictionary)
        self.files: list[Any] = []
        self.redo_source: Any = None
        # source.containers: the other PDBs' checkpoints when the caller chose them (the
        # daemon's restart rule, ServiceStartup); None: chosen by start-scn as the first's is
        self.containers: list[tuple[str, Any]] | None = None

    def steps(self, *, output: bool = True) -> list[Step]:
        """The steps in run's order; ``output`` False for a job whose messages go elsewhere (bench)."""
        steps = [
            Step("reader", self.reader_type),
            Step("state folder", self.state_folder),
            Step("schema checkpoint", self.schema_checkpoint, ("state folder",)),
            Step("filter", self.filter_patterns),
            Step("filter vs schema", self.filter_schema, ("schema checkpoint", "filter")),
            Step("redo files", self.redo_files),
        ]
        if self.source.reader.redo_source.type != "local":
            steps.insert(-1, Step("redo source", self.redo_source_text, in_run=False))
        if output:
            steps += [
                Step("output", self.output_plan, ("redo files",)),
                Step("writer", self.writer_reachable, in_run=False),
            ]
        return steps

    # ------------------------------------------------------------------ the steps
    def reader_type(self) -> str:
        """``reader.type`` is one this version runs (30001 otherwise)."""
        kind = self.source.reader.type
        if kind != "batch":
            raise ConfigError(f'reader type {kind!r} is not supported by this version yet; use "batch"', 30001)
        return "batch"

    def state_folder(self) -> str:
        """The state folder exists and takes files (it holds the schema checkpoints and the batch
        output record; 10012, 10122)."""
        from replicator.runner.checkpoint import check_state_directory

        path: str = self.config.state.path
        if self.schemaless and not os.path.isdir(path):
            return f"{path} absent: not needed (schemaless, source flag 0x2); reruns are not recorded"
        check_state_directory(path)
        return path

    def schema_checkpoint(self) -> str:
        """The schema checkpoint ``start-scn`` selects (10052 when there is none)."""
        from replicator.runner.assembly import start_checkpoint

        if self.schemaless:
            return "none used (schemaless, source flag 0x2)"
        self.checkpoint = start_checkpoint(self.config, self.source)
        cp = self.checkpoint
        return f"{self.source.name}-chkpt-{cp.scn}.json (SCN {cp.scn}, owners {', '.join(sorted(cp.users)) or 'none'})"

    def filter_patterns(self) -> str:
        """Every ``filter.table`` owner/table pattern compiles (30001, naming the rule)."""
        from replicator.runner.assembly import filter_rules
        from replicator.schema.filter import check_patterns

        rules = filter_rules(self.source)
        check_patterns(rules)
        if self.schemaless:
            return "ignored (schemaless, source flag 0x2)"
        return f"{len(rules)} rule(s)" if rules else "no filter.table rules"

    def filter_schema(self) -> str:
        """The filter against the schema checkpoint: owners (20007), key/tag columns, conditions, matches."""
        from replicator.runner.assembly import source_facts

        self.facts = source_facts(self.config, self.source, self.checkpoint, self.containers)
        if self.schemaless:
            return "every table (schemaless)"
        parser = self.facts[0]
        views = [parser, *parser.containers.values()]  # source.containers: every PDB's tables
        tables = sorted(
            {
                (f"{v.con_name}/" if len(views) > 1 else "") + f"{t.owner}.{t.name}"
                for v in views
                for t in v.tables.values()
                if not t.system
            }
        )
        shown = ", ".join(tables[:6]) + (f" and {len(tables) - 6} more" if len(tables) > 6 else "")
        where = f" from {len(views)} containers" if len(views) > 1 else ""
        return f"{len(tables)} table(s) replicated{where}" + (f": {shown}" if tables else "")

    def redo_source_text(self) -> str:
        """check-config only: where the redo is read from, and how (sftp, asm)."""
        from replicator.config.redosource import explain_redo_source

        return "; ".join(
            line.removeprefix("reader.redo-source: ") for line in explain_redo_source(self.source.reader.redo_source)
        )

    def redo_files(self) -> str:
        """The ``redo-log`` entries exist, list at least one redo file, and each one is readable."""
        from replicator.redo.reader import list_batch_files
        from replicator.redo.source import LOCAL
        from replicator.redo.sources import open_source
        from replicator.runner.assembly import file_size

        reader = self.source.reader
        archive_format = self.facts[2] if self.facts is not None else reader.log_archive_format or ""
        self.redo_source = open_source(reader)
        self.files = list_batch_files(list(reader.redo_log), archive_format, reader.start_seq or 0, self.redo_source)
        if not self.files:
            raise RuntimeFailure("no redo log files to process (reader.redo-log)", 10001)
        if self.redo_source is LOCAL:
            for redo in self.files:
                if not os.access(redo.path, os.R_OK):
                    raise RuntimeFailure(
                        f"redo log {redo.path} is not readable by this user (uid {os.getuid()})", 10001
                    )
        sequences = sorted(f.sequence for f in self.files)
        size = sum(file_size(f, self.redo_source) for f in self.files)
        span = f"{sequences[0]}-{sequences[-1]}" if len(sequences) > 1 else f"{sequences[0]}"
        amount = f"{size / 1e6:.1f} MB" if size >= 1e5 else f"{size / 1e3:.1f} kB"
        return f"{len(self.files)} file(s), sequence {span}, {amount}"

    def output_plan(self) -> str:
        """What the run does with its output (new, rerun cut back, or refused: 10110)."""
        return self.plan().text

    def plan(self) -> OutputPlan:
        """The run's :class:`~replicator.runner.batch_output.OutputPlan`."""
        from replicator.runner.batch_output import plan_output

        return plan_output(
            self.config.target[0].writer,
            self.config.state.path,
            self.source.name,
            self.files,
            self.source.reader.start_scn or 0,
        )

    def writer_reachable(self) -> str:
        """check-config only: can the writer reach its brokers or bind its address (a warning if not)."""
        return writer_reachable(self.config)


def writer_reachable(config: Any) -> str:
    """The writer's reachability, as check-config reports it (WARN 60111, never an error)."""
    from replicator.config.exposure import EXPOSURE_CODE, exposure_warnings

    writer = config.target[0].writer
    kind: str = writer.type
    for warning in exposure_warnings(config):
        log.warning(EXPOSURE_CODE, warning.removeprefix(f"WARN {EXPOSURE_CODE} "))
    if writer.type == "kafka":
        from replicator.ops.brokers import brokers_answer

        servers = writer.properties.get("bootstrap.servers", "")
        if not brokers_answer(servers, {k: v for k, v in writer.properties.items() if k != "bootstrap.servers"}):
            log.warning(UNREACHABLE, f"Kafka brokers {servers} do not answer (2 s): a run would wait for them")
            return "kafka"
        return f"kafka: brokers {servers} answer"
    if writer.type in ("network", "zeromq"):
        address = _listen_address(writer)
        if address is not None:
            try:
                import socket

                with socket.create_server(address):
                    pass
            except OSError as exc:
                log.warning(
                    UNREACHABLE,
                    f"{writer.type} writer: cannot listen on {address[0]}:{address[1]} now "
                    f"({exc.strerror or exc}): another process holds it?",
                )
                return kind
            return f"{writer.type}: {address[0]}:{address[1]} free to listen on"
    return kind


def _listen_address(writer: Any) -> tuple[str, int] | None:
    """(host, port) a network or tcp:// zeromq writer binds, None when it cannot be told."""
    from replicator.config.exposure import listen_host

    host = listen_host(writer)
    uri = str(writer.uri)
    port = uri.rsplit(":", 1)[-1]
    if host is None or not port.isdigit():
        return None
    host = host.strip("[]")
    return ("" if host in ("*", "0.0.0.0") else host or "127.0.0.1"), int(port)


class ServiceStartup:
    """The checks an ``offline`` or ``online`` start shares with a batch run (see the module docstring)."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.source = config.source[0]
        self.checkpoint: Any = None
        self.batch = BatchStartup(config)  # the steps both modes share

    def steps(self) -> list[Step]:
        """State folder, schema checkpoint, filter, output directory, writer."""
        return [
            Step("state folder", self.batch.state_folder),
            Step("schema checkpoint", self.schema_checkpoint, ("state folder",)),
            Step("filter", self.batch.filter_patterns),
            Step("filter vs schema", self.filter_schema, ("schema checkpoint", "filter")),
            Step("writer", self.writer_reachable, in_run=False),
        ]

    def schema_checkpoint(self) -> str:
        """The daemon's restart rule: after the confirmed position, else the largest SCN not above start-scn."""
        from replicator.runner.checkpoint import CheckpointManager

        state = self.config.state
        start_scn = self.source.reader.start_scn or 0
        manager = CheckpointManager(state.path, self.source.name, state.keep_checkpoints, start_scn=start_scn)
        confirmed = manager.load_confirmed()
        chosen = confirmed if confirmed is not None and not confirmed.confirms_nothing else None
        self.checkpoint = manager.restart_checkpoint(confirmed)  # the run's rule (pruning.py)
        if self.checkpoint is None:
            if self.source.reader.type == "online":
                return "none stored: the first one is read from the database at start"
            raise RuntimeFailure(
                f"schema checkpoint for database {self.source.name} not found in {state.path} (offline mode needs one)",
                10040,
            )
        where = f"after the confirmed position (SCN {chosen.scn})" if chosen else f"for start-scn {start_scn}"
        if self.source.containers and not self.source.schemaless and (chosen is not None or not start_scn):
            from replicator.runner.assembly import container_checkpoints

            # a restart: every other PDB's checkpoint of that SCN (10123), as the daemon takes them
            self.batch.containers = container_checkpoints(self.source, self.checkpoint, at_scn=self.checkpoint.scn)
            where += f", and at that SCN in the folders of the {len(self.batch.containers)} other container(s)"
        return f"{self.source.name}-chkpt-{self.checkpoint.scn}.json {where}"

    def filter_schema(self) -> str:
        """As in a batch run (checked only when a checkpoint is stored)."""
        if self.checkpoint is None:
            return "checked at start, against the schema read from the database"
        self.batch.checkpoint = self.checkpoint
        return self.batch.filter_schema()

    def writer_reachable(self) -> str:
        """The output directory of a file writer, then the writer's reachability."""
        writer = self.config.target[0].writer
        if writer.type == "file" and writer.output:
            from replicator.runner.batch_output import check_output_directory

            check_output_directory(writer)
        return writer_reachable(self.config)


def check_startup(config: Any) -> list[Finding]:
    """``check-config``: every start-up step of the config's mode, each one's findings."""
    if config.source[0].reader.type in ("offline", "online"):
        return findings(ServiceStartup(config).steps())
    startup = BatchStartup(config)
    try:
        return findings(startup.steps())
    finally:
        if startup.redo_source is not None:
            startup.redo_source.close()  # a remote source's connection
