"""Build and run the batch job a config file describes (``replicator run -f CONFIG``).

Config -> schema checkpoint -> dictionary -> table map -> parser options; config ->
format and writer (the start-up steps of :mod:`replicator.runner.preflight`, which
``check-config`` runs too); then the pipeline over the ``redo-log`` list, in sequence order.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replicator import log
from replicator.errors import RuntimeFailure
from replicator.events import Checkpoint
from replicator.flags import DISABLE_CHECKS_BLOCK_SUM, FLAG_KEEP_CHECKPOINTS
from replicator.formats.base import FormatOptions
from replicator.ops import startup_gc
from replicator.ops.notify import Notifier
from replicator.ops.progress import Pacer, Progress, progress_wanted
from replicator.redo.identity import DatabaseIdentity
from replicator.redo.parser import ParserOptions
from replicator.redo.reader import RedoFile
from replicator.redo.source import LOCAL, RedoSource
from replicator.runner.assembly import (
    checkpoint_digests,
    container_checkpoints,
    create_format_for,
    file_size,
    memory_pool,
)
from replicator.runner.batch_output import finish_record, plan_output, prepare_writer, start_record
from replicator.runner.checkpoint import CheckpointManager
from replicator.runner.container_checkpoints import ContainerCheckpoints, write_rac_cut
from replicator.runner.lock import lock_config
from replicator.runner.pipeline import Pipeline, Sink
from replicator.runner.preflight import BatchStartup, run_steps
from replicator.runner.runstats import RunStats
from replicator.runner.runwatch import RunWatch
from replicator.runner.stop import SoftStop
from replicator.writers.capabilities import DeliveryShortfall

if TYPE_CHECKING:  # prometheus-client is imported only by a run that serves metrics
    from replicator.ops.metrics import Metrics
    from replicator.writers.base import Writer


@dataclass
class BatchJob:
    """Everything a batch run needs, resolved from the config."""

    name: str
    files: list[RedoFile]
    parser: ParserOptions
    format_options: FormatOptions
    writer_config: Any
    verify_checksum: bool
    memory: Any = None  # the config's `memory` section (pool limits, swap); None = defaults
    # Schema checkpoints: the checkpoint the run started from (None: schemaless) and the
    # config's `state` section; with both, the run writes `<name>-chkpt-<scn>.json` files.
    checkpoint: Any = None
    state: Any = None
    keep_all_checkpoints: bool = False  # source flag 0x2000
    source: RedoSource = LOCAL  # where the redo files are read (reader.redo-source)
    start_scn: int = 0  # reader.start-scn (the batch output record keeps it)
    # source.containers: (state folder, schema checkpoint) of each other PDB of the run
    containers: list[tuple[str, Any]] = field(default_factory=list)


def build_job(config_path: str, config: Any = None) -> BatchJob:
    """Resolve a config file (or its already loaded ``config``) into a :class:`BatchJob`.

    The start-up steps are :class:`~replicator.runner.preflight.BatchStartup`'s, the ones
    ``check-config`` runs; the first error stops here. The output is planned by :func:`run_job`.
    """
    from replicator.config import load_config

    if config is None:
        config = load_config(config_path)
    log.set_log_level(config.log_level)
    startup = BatchStartup(config)
    run_steps(startup.steps(output=False))
    source = startup.source
    parser, fmt, _, _ = startup.facts
    verify = not (source.reader.disable_checks & DISABLE_CHECKS_BLOCK_SUM)
    return BatchJob(
        source.name,
        startup.files,
        parser,
        fmt,
        config.target[0].writer,
        verify,
        config.memory,
        checkpoint=startup.checkpoint,
        state=config.state,
        keep_all_checkpoints=bool(source.flags & FLAG_KEEP_CHECKPOINTS),
        source=startup.redo_source,
        start_scn=source.reader.start_scn or 0,
        containers=container_checkpoints(source, startup.checkpoint) if source.containers else [],
    )


def schema_checkpoints(pipeline: Pipeline, job: BatchJob, metrics: Metrics | None = None) -> CheckpointManager:
    """Write schema checkpoints during a batch run, as OpenLogReplicator does in every mode.

    The cadence is the daemon's (docs/operations.md, checkpoints): the first LWN checkpoint,
    every log switch, ``interval-s`` of redo time or ``interval-mb`` of redo, one forced at
    the end of the run (or at a stop on a signal), and one at once after a dictionary change,
    holding the full schema. A later run whose ``start-scn`` selects such a file starts with
    those definitions. Each file written sets the checkpoint metrics (SCN, age).
    An unwritable state directory stops the run before it starts (10122), a failed write of
    the final checkpoint ends it with 10120 (not with exit 0 and no checkpoint).
    """
    state = job.state
    manager = CheckpointManager(
        state.path,
        job.name,
        state.keep_checkpoints,
        state.schema_force_interval,
        state.interval_s,
        state.interval_mb,
        keep_all=job.keep_all_checkpoints,
        start_scn=job.start_scn,
    )
    base = [job.checkpoint]
    # source.containers: each other PDB's schema checkpoints go to its own state folder, at
    # the same SCNs (a rerun from a later start-scn finds every container's dictionary).
    others = ContainerCheckpoints(manager, job.containers) if job.containers else None

    def on_checkpoint(cp: Checkpoint, parser: Any, final: bool) -> None:
        force = final or (others is not None and others.changed(parser))
        base[0], path = manager.after_lwn(base[0], cp, parser, force=force, final=final)
        if path is not None and metrics is not None:
            metrics.checkpoint_written(cp.scn)
        if others is not None:
            others.after_lwn(cp, parser, final)

    pipeline.on_schema_checkpoint = on_checkpoint
    pipeline.checkpoint_manager = manager if others is None else None

    def on_rac_checkpoint(cut_scn: int, time_raw: int, threads: list[tuple[int, int, int, int]]) -> None:
        # RAC (replicator.runner.rac): one restart point at the end, with each thread's position.
        base[0] = write_rac_cut(
            manager,
            others,
            base[0],
            pipeline.parser,
            cut_scn,
            time_raw,
            lambda: threads,
            floor_scn=job.checkpoint.scn,
            final=True,
            metrics=metrics,
        )

    pipeline.on_rac_checkpoint = on_rac_checkpoint
    return manager


def run_job(
    job: BatchJob,
    sink: Sink | None = None,
    progress: str = "off",
    watch: RunWatch | None = None,
    engine: str | None = None,
) -> RunStats:
    """Run a resolved job; the writer from the config unless ``sink`` is given.

    With the config's writer, the output is planned first (:mod:`replicator.runner.batch_output`:
    a rerun cuts back what the previous run of the config wrote, output no run of it wrote is
    refused) and the run is recorded in the state folder. ``watch`` (metrics, systemd, pacing,
    a stop on a signal) observes the run; ``progress`` (on/off/auto) adds a progress display to
    it when stderr is wanted for one. ``engine`` is python or native (None: ``$REPLICATOR_ENGINE``,
    else native when built; see replicator.native).
    """
    from replicator.native import resolve_engine

    engine = resolve_engine(engine)
    plan = record = None
    owned: Writer | None = None  # the config's writer: this run connects and closes it
    writer: Sink
    if sink is not None:
        writer = sink
    else:
        from replicator.writers.base import create_writer

        plan = plan_output(job.writer_config, job.state.path, job.name, job.files, job.start_scn)
        owned = create_writer(job.writer_config, lambda scn, idx: None)
        prepare_writer(plan, owned)
        owned.connect()
        record = start_record(plan, owned, job.files, job.start_scn)
        writer = owned
    pool = memory_pool(job.memory)
    pool.remove_stale_swap_files()
    pipeline = Pipeline(
        job.parser,
        create_format_for(job.format_options),
        writer,
        verify_checksum=job.verify_checksum,
        pool=pool,
        source=job.source,
        engine=engine,
    )
    if job.checkpoint is not None:
        cp = job.checkpoint
        pipeline.identity = DatabaseIdentity(cp.resetlogs, cp.activation, list(cp.incarnations))
    if job.checkpoint is not None and job.state is not None:
        schema_checkpoints(pipeline, job, watch.metrics if watch is not None else None)
    if job.format_options.checkpoint_digests:
        pipeline.checkpoint_digests = checkpoint_digests(len({f.thread for f in job.files}), job.checkpoint)
    if progress_wanted(progress, sys.stderr):
        watch = watch or RunWatch(job.files)
        watch.progress = Progress(len(job.files), sum(file_size(f, job.source) for f in job.files))
    if watch is not None:
        watch.attach(pipeline, writer)
        watch.started()
    # What exists now (config, dictionary, modules) lives as long as the run: the collector
    # need not scan it again at every full collection of the objects the run makes.
    gc.freeze()
    startup_gc.resume()
    ok = False
    try:
        stats = pipeline.run(job.files, watch.on_file if watch is not None else None)
        ok = True
    finally:
        job.source.close()
        if owned is not None:
            owned.close()
        if watch is not None:
            watch.finished(ok)
    undelivered = writer.undelivered if isinstance(writer, DeliveryShortfall) else 0
    if undelivered:  # a batch run that did not deliver everything has failed
        raise RuntimeFailure(
            f"{undelivered} of {stats.messages} messages were not delivered by the "
            f"{job.writer_config.type} writer before the end of the run",
            10101,
        )
    if plan is not None and not stats.stopped:
        finish_record(plan, record)
    return stats


def _linger(seconds: float, bind: str, progress: str, stop: SoftStop) -> None:
    """Keep serving /metrics for ``seconds`` after a batch run, saying so (a countdown on a TTY);
    a signal ends the wait."""
    from replicator.ops.ticker import Ticker

    log.info(f"serving /metrics on {bind} for {seconds:g} more seconds (--metrics-linger), then exiting")
    end = time.monotonic() + seconds
    with Ticker(
        lambda _: f"lingering for a final scrape of /metrics: {max(end - time.monotonic(), 0):.0f} s left",
        mode=progress,
    ):
        while not stop.signum and time.monotonic() < end:
            time.sleep(min(0.2, max(end - time.monotonic(), 0)))


def run_config(
    config_path: str,
    progress: str = "auto",
    *,
    read_limit_mbps: float | None = None,
    metrics_linger: float = 0.0,
    engine: str | None = None,
) -> int:
    """``replicator run``: process the batch and stop softly; returns the exit code.

    The config file is locked for the run, as the daemon locks it (10002 for a second run).
    SIGTERM/SIGINT stop the run at the next LWN with a final checkpoint (:mod:`replicator.runner.stop`;
    exit code 128 + the signal). With a ``metrics`` section, ``/metrics`` is served from the
    moment the config is read until the run ends, plus ``metrics_linger`` seconds so a final
    scrape sees the totals. Under systemd (``NOTIFY_SOCKET``) READY, STATUS, WATCHDOG and
    STOPPING are sent. ``read_limit_mbps`` caps the redo read rate.
    """
    from replicator.config import load_config
    from replicator.ops import early_signals

    try:
        config = load_config(config_path)
    except BaseException:
        early_signals.release()
        raise
    if config.source[0].reader.type in ("offline", "online"):  # the long-running service
        from replicator.runner.daemon import run_daemon

        # The collector stays paused through the service's start-up too: Daemon.main resumes
        # it once the engine is built, after gc.freeze() (as run_job does).
        return run_daemon(config_path, engine, read_limit_mbps=read_limit_mbps, metrics_linger=metrics_linger)
    stop = SoftStop()
    stop.install()  # instead of early_signals' capture: a signal from here on stops the run softly
    try:
        fd = lock_config(config_path)
        try:
            return _run_batch(config_path, config, stop, progress, read_limit_mbps, metrics_linger, engine)
        finally:
            os.close(fd)
    finally:
        stop.uninstall()


def _run_batch(
    config_path: str,
    config: Any,
    stop: SoftStop,
    progress: str,
    read_limit_mbps: float | None,
    metrics_linger: float,
    engine: str | None,
) -> int:
    if stop.signum:
        log.error(10015, f"caught signal {stop.signum} during start-up: stopped before reading any redo")
        return stop.exit_code
    metrics = None
    if config.metrics.enabled:  # prometheus-client is imported only by a run that serves metrics
        from replicator.ops.metrics import metrics_from_config

        metrics = metrics_from_config(config)
    notifier = Notifier()
    bound = ("", 0)
    if metrics is not None:
        bound = metrics.start_server(config.metrics.bind or "")
    try:
        if metrics is not None:
            metrics.set_state("starting")
        job = build_job(config_path, config)
        pacer = Pacer(read_limit_mbps) if read_limit_mbps else None
        watch = RunWatch(job.files, metrics=metrics, notifier=notifier, pacer=pacer)
        watch.stop = stop
        stats = run_job(job, progress=progress, watch=watch, engine=engine)
        if stats.stopped:
            log.error(
                10015,
                f"caught signal {stop.signum}: stopped after {stats.transactions} transactions, "
                f"{stats.messages} messages (SCN {stats.last_scn}), final checkpoint written; the "
                f"output holds part of the run: run the same command again to write it whole (a rerun "
                f"cuts back what this run wrote first)",
            )
        else:
            log.info(
                f"finished batch processing, exiting: {stats.files} files, {stats.transactions} transactions, "
                f"{stats.rows} rows, {stats.messages} messages in {stats.seconds:.2f}s"
            )
        if metrics is not None and metrics_linger > 0:
            _linger(metrics_linger, f"{bound[0]}:{bound[1]}", progress, stop)
    except BaseException:
        if metrics is not None:
            metrics.set_state("aborting")
        raise
    finally:
        notifier.close()
        if metrics is not None:
            metrics.stop_server()
    return stop.exit_code if stats.stopped else 0
