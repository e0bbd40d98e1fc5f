"""The long-running service (``reader.type: offline`` or ``online``): lifecycle around the engine.

Lock the config file, resolve the restart point from the checkpoints, run the engine,
write checkpoints, reload the table filter when the config file changes, and stop
cleanly on SIGTERM/SIGINT (a second signal exits at once).
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replicator import log
from replicator.errors import ConfigError, DataError, ReplicatorError, RuntimeFailure
from replicator.events import Checkpoint
from replicator.flags import DISABLE_CHECKS_BLOCK_SUM, FLAG_ARCHIVE_ONLY, FLAG_KEEP_CHECKPOINTS
from replicator.ops import startup_gc
from replicator.ops.metrics_tally import Tally
from replicator.ops.notify import Notifier
from replicator.ops.readiness import DeliveryProbe
from replicator.redo.identity import DatabaseIdentity
from replicator.redo.online import FollowSettings, LogLocator, ReadLimit, RedoFollower, read_header
from replicator.redo.parser import Parser
from replicator.redo.sources import open_source
from replicator.runner.checkpoint import POSITION_ZERO, CheckpointManager, Confirmed, Position, check_state_directory
from replicator.runner.container_checkpoints import ContainerCheckpoints, write_rac_cut
from replicator.runner.daemon_engine import DaemonEngine
from replicator.runner.lock import lock_config
from replicator.runner.position_check import check_in_output, check_in_redo
from replicator.schema.document import SchemaCheckpoint
from replicator.txn.pool import MemoryPool
from replicator.writers.capabilities import RestorableStream, ResumableOutput, Syncable

if TYPE_CHECKING:
    from replicator.ops.metrics import Metrics
    from replicator.runner.rac_engine import RacEngine

POLL_SAVE_S = 0.25  # the confirmed position is saved at most this often (and at every stop)
STREAM_WRITERS = ("network", "zeromq")  # writers that wait for a client (OLR stream protocol)


class Daemon:
    """One replication service for one source and one target."""

    def __init__(self, config_path: str, engine: str | None = None, read_limit_mbps: float | None = None):
        from replicator.config import load_config

        self.config_path = config_path
        self.engine_name = engine  # python/native (replicator.native.resolve_engine)
        self.config = load_config(config_path)
        log.set_log_level(self.config.log_level)
        self.source = self.config.source[0]
        self.stop_event = threading.Event()
        self.read_limit = ReadLimit(read_limit_mbps, self.stop_event) if read_limit_mbps else None
        if self.read_limit is not None:
            log.info(f"redo read rate limited to {read_limit_mbps:g} MB/s (--read-limit)")
        self._signals = 0
        from replicator.config.loader import decode_config_bytes
        from replicator.config.reload import ConfigWatch

        content = Path(config_path).read_bytes()
        self._config_doc = decode_config_bytes(content, config_path)  # the last content seen, for reload diffs
        self._running_doc = self._config_doc  # what runs (the filter as applied live)
        self._watch = ConfigWatch(config_path, content)
        self._last_save = 0.0
        self._saved: Position | None = None
        self._saved_count = -1  # Confirmations.count of the saved position: an older snapshot never overwrites it
        self._save_lock = threading.Lock()  # the writer thread (persist_confirmed) and the event loop both save
        self._switches = 0
        state = self.config.state
        check_state_directory(state.path)
        self.manager = CheckpointManager(
            state.path,
            self.source.name,
            state.keep_checkpoints,
            state.schema_force_interval,
            state.interval_s,
            state.interval_mb,
            keep_all=bool(self.source.flags & FLAG_KEEP_CHECKPOINTS),
            start_scn=self.source.reader.start_scn or 0,
        )
        memory = self.config.memory
        self.pool = MemoryPool(memory.max_mb, memory.swap_mb, memory.swap_path or ".", memory.min_mb)
        self.metrics: Metrics | None = None
        if self.config.metrics.enabled:  # prometheus-client is imported only when metrics are served
            from replicator.ops.metrics import metrics_from_config

            self.metrics = metrics_from_config(self.config)
        self.notifier = Notifier()
        self.online_db: Any = None  # reader.type online: the database session (replicator.online)
        if self.source.reader.type == "online":
            from replicator.online.startup import open_database

            self.online_db = open_database(self.source.reader)
        self._last_publish = 0.0
        self.writer: Any = None
        # The writer's optional abilities (writers/capabilities.py), looked up once in _build:
        # an output position recorded with each confirmed position, and fsync before a save.
        self._output: ResumableOutput | None = None
        self._sync: Callable[[], None] | None = None
        self.rac: RacEngine | None = None  # the engine when it merges RAC threads (set in _build)
        self.containers: ContainerCheckpoints | None = None  # source.containers (set in _build)
        self._container_cps: list[tuple[str, SchemaCheckpoint]] = []
        self._start_scn: int | None = None  # a stream client's START SCN the engine is built for (None: config)
        self._rebuild = False  # the engine's redo source was closed for a START that then failed

    # ----------------------------------------------------------------- setup
    def _restart_point(self, start_scn: int | None = None) -> tuple[SchemaCheckpoint, Confirmed | None]:
        confirmed = self.manager.load_confirmed()
        # A zero position (saved at a first start) confirms nothing: the start checkpoint it names again,
        # unless a stream client's START asks for another SCN.
        cp = self.manager.restart_checkpoint(confirmed, start_scn)
        if cp is None and self.online_db is not None:
            from replicator.online.startup import first_schema_checkpoint

            cp = first_schema_checkpoint(self.online_db, self.source, self.config.state.path)
        if cp is None:
            raise RuntimeFailure(
                f"schema checkpoint for database {self.source.name} not found in "
                f"{self.config.state.path} (offline mode needs one)",
                10040,
            )
        return cp, confirmed

    def _build(self, start_scn: int | None = None) -> tuple[DaemonEngine, int, int]:
        """The engine, starting sequence and offset (``start_scn``: a stream client's START SCN
        instead of ``reader.start-scn``; the writer already made is kept)."""
        from replicator.formats.registry import create_format
        from replicator.runner.assembly import source_facts
        from replicator.writers.base import create_writer

        cp, confirmed = self._restart_point(start_scn)
        saved = confirmed
        start_output = None
        if confirmed is not None and confirmed.confirms_nothing:  # saved at start, nothing confirmed since
            start_output, confirmed = confirmed.output, None
        self._fresh_start = confirmed is None  # (again after a record of a first start: a START may change it)
        self.base_checkpoint = cp
        others = self._container_checkpoints(cp, confirmed, start_scn)
        parser_opts, fmt_opts, archive_format, self.dictionary = source_facts(
            self.config, self.source, cp, others if self.source.containers else None
        )
        # source.containers: each other PDB's schema checkpoints, at the first container's SCNs
        self.containers = ContainerCheckpoints(self.manager, others) if others else None
        self._container_cps = others
        if confirmed is not None:
            parser_opts = replace(parser_opts, first_data_scn=0)
        elif start_scn is not None:
            parser_opts = replace(parser_opts, first_data_scn=start_scn)
        elif self.online_db is not None and not parser_opts.first_data_scn:
            parser_opts = replace(parser_opts, first_data_scn=cp.scn)  # commits up to the start SCN are in the schema
        parser = Parser(parser_opts, lambda t: None, None, pool=self.pool)
        from replicator.native import resolve_engine

        native = resolve_engine(self.engine_name) == "native"
        archive_dirs = [d for d in (cp.log_archive_dest, *self._fra_dirs(cp), *self.source.reader.redo_log) if d]
        self.redo_source = open_source(self.source.reader)
        if self.online_db is not None:
            from replicator.online.startup import online_locator

            locator: LogLocator = online_locator(
                self.online_db, self.source, cp, archive_format, archive_dirs, self.redo_source
            )
        else:
            locator = LogLocator(
                online_groups=[list(g.paths) for g in cp.online_redo],
                archive_dirs=archive_dirs,
                archive_format=archive_format,
                path_mapping=list(self.source.reader.path_mapping_pairs),
                source=self.redo_source,
                resetlogs=self._expected_resetlogs(saved, cp),
            )
        identity = DatabaseIdentity(
            locator.resetlogs, (saved.activation if saved else 0) or cp.activation, list(cp.incarnations)
        )
        src = self.source
        settings = FollowSettings(
            src.redo_read_sleep_us / 1e6,
            src.arch_read_sleep_us / 1e6,
            src.arch_read_tries,
            src.redo_verify_delay_us / 1e6,
            not (src.reader.disable_checks & DISABLE_CHECKS_BLOCK_SUM),
            bool(src.flags & FLAG_ARCHIVE_ONLY),
        )
        locator.verify_checksum = settings.verify_checksum
        follower = RedoFollower(locator, settings, self.stop_event, identity, self.read_limit)
        writer_cfg = self.config.target[0].writer
        extra = {"database": self.source.name} if writer_cfg.type in STREAM_WRITERS else {}
        writer = (
            self.writer
            if self.writer is not None
            else create_writer(writer_cfg, lambda scn, idx: self.engine.confirmations.confirm(scn, idx), **extra)
        )
        if writer_cfg.type in (*STREAM_WRITERS, "kafka"):
            writer.stopping = self.stop_event  # a stop ends a wait for room in a full queue
        output = writer if isinstance(writer, ResumableOutput) else None
        if output is None:  # a file writer's position must match a flushed size
            writer.persist_confirmed = self._persist_confirmed
        if confirmed is not None and isinstance(writer, RestorableStream):
            # OLR's Writer::readCheckpoint: a writer checkpoint means REPLICATING at once, so
            # INFO answers REPLICATE and a client resumes with CONTINUE (StreamClient `next`,
            # Debezium's adapter) instead of being asked for a START position (READY).
            # With our stream position the engine skips exactly what was confirmed; a skip by
            # (c_scn, idx) on top would drop or re-send messages (positions do not grow).
            writer.restore(
                confirmed.scn,
                confirmed.idx,
                confirmed.scn,
                skip=confirmed.pos is None,
            )
        restart_pos = confirmed.pos if confirmed is not None and confirmed.pos else POSITION_ZERO
        skip_scn = confirmed.scn if confirmed is not None and confirmed.pos is None else 0
        threads = locator.threads()
        if confirmed is not None:  # where it says the confirmed message lies: in this redo, and in the output
            where = f"file: {self.manager.position_path}"
            check_in_redo(confirmed, locator, where, threads)
            if writer_cfg.type == "file":
                check_in_output(confirmed, writer_cfg.newline_bytes, self.source.format.type == "json", where)
        engine: DaemonEngine
        if len(threads) > 1:  # RAC: one follower per redo thread, merged by SCN (rac_engine.py)
            from replicator.redo.merge import start_bound
            from replicator.runner.rac_engine import RacEngine

            locators = {t: replace(locator, thread=t) for t in threads}
            rac = RacEngine(
                parser,
                create_format(fmt_opts),
                writer,
                {
                    t: RedoFollower(loc, settings, self.stop_event, identity, self.read_limit)
                    for t, loc in locators.items()
                },
                restart_pos=restart_pos,
                on_file_end=self._on_file_end,
            )
            rac_starts = {t: (seq, offset) for t, seq, offset, _ in cp.threads}  # a RAC restart point
            rac.starts = {
                t: rac_starts.get(t) or (self._first_sequence(loc, parser_opts.first_data_scn or cp.scn), 0)
                for t, loc in locators.items()
            }
            rac.start_bounds = {t: start_bound(offset, scn) for t, _, offset, scn in cp.threads}
            rac.on_rac_checkpoint = self._on_rac_checkpoint
            log.info(
                f"RAC: {len(threads)} redo threads, "
                + ", ".join(
                    f"thread {t} from sequence {seq} offset {offset}" for t, (seq, offset) in rac.starts.items()
                )
            )
            engine = rac
        else:
            engine = DaemonEngine(
                parser,
                create_format(fmt_opts),
                writer,
                follower,
                restart_pos=restart_pos,
                skip_commit_scn=skip_scn,
                on_checkpoint=self._on_lwn_checkpoint,
                on_file_end=self._on_file_end,
            )
            # The native loop's C checkpoint step consults the first container's manager only:
            # with debug.stop-transactions (every LWN counts transactions) or several
            # containers (each PDB's tracker and folder), python takes every LWN's step.
            if not self.source.debug.stop_transactions and self.containers is None:
                engine.checkpoint_manager = self.manager
        if fmt_opts.checkpoint_digests:
            from replicator.runner.assembly import checkpoint_digests

            engine.checkpoint_digests = checkpoint_digests(len(threads), cp)
        if self.metrics is not None:  # before attach: the native committer counts into it too
            engine.tally = Tally(self.config.metrics.tag_names or "none")
        if native:
            from replicator.native.wiring import attach

            attach(engine)  # native record dispatch and commit (the python engine's fallbacks stay)
        self.engine, self.writer = engine, writer
        self.rac = engine if len(threads) > 1 else None  # type: ignore[assignment]
        self._output, self._sync = output, writer.sync if isinstance(writer, Syncable) else None
        if output is not None:
            if confirmed is not None and confirmed.output is not None:
                output.resume_at = confirmed.output  # cut the output back to what the checkpoint covers
            elif start_output is not None:
                output.resume_at = start_output  # a crash before anything was confirmed: back to the start
            else:
                existing = output.existing_output()
                if existing and confirmed is None:
                    log.warning(
                        60101,
                        f"output {existing[-1]} already holds messages, but there is no confirmed "
                        f"position ({self.manager.position_path.name} deleted, or a new state "
                        f"directory?): the replay from the start is appended after them (duplicates)",
                    )
                elif existing:
                    log.warning(
                        60101,
                        f"output {existing[-1]} already holds messages, but the confirmed position "
                        f"({self.manager.position_path.name}) does not say how much of it: messages "
                        f"after the position are appended after them (duplicates if they were written)",
                    )
        self._locator = locator
        seq, offset = cp.restart_position
        if seq == 0:  # a client's START reads from the log of the schema (the transactions open at N)
            seq = self._first_sequence(locator, cp.scn if start_scn is not None else parser_opts.first_data_scn)
        self._start_at = (seq, offset)
        return engine, seq, offset

    def _container_checkpoints(
        self, cp: SchemaCheckpoint, confirmed: Confirmed | None, start_scn: int | None
    ) -> list[tuple[str, SchemaCheckpoint]]:
        """``source.containers``: each other PDB's schema checkpoint. A first start (nothing
        confirmed, no client START) takes each one as a batch run does (by ``reader.start-scn``);
        a restart takes the one written at the SCN of the first container's restart checkpoint
        (written with it; 10123 when missing)."""
        if not self.source.containers:
            return []
        from replicator.runner.assembly import container_checkpoints

        first = start_scn is None and (confirmed is None or confirmed.confirms_nothing)
        if first and self.source.reader.start_scn:
            return container_checkpoints(self.source, cp)
        return container_checkpoints(self.source, cp, at_scn=cp.scn)

    def _expected_resetlogs(self, saved: Confirmed | None, cp: SchemaCheckpoint) -> int:
        """The RESETLOGS_ID the run reads: the confirmed position's and the schema checkpoint's
        must agree (20122); 0 (neither knows) takes the first log's."""
        if saved is not None and saved.resetlogs and cp.resetlogs and saved.resetlogs != cp.resetlogs:
            raise DataError(
                f"file: {self.manager.position_path} - resetlogs {saved.resetlogs} differs from the "
                f"schema checkpoint's ({cp.resetlogs}, scn {cp.scn}): they are of different "
                f"incarnations; move one of them away",
                20122,
            )
        return (saved.resetlogs if saved is not None else 0) or cp.resetlogs

    @staticmethod
    def _fra_dirs(cp: SchemaCheckpoint) -> list[str]:
        if not cp.db_recovery_file_dest:
            return []
        return [os.path.join(cp.db_recovery_file_dest, cp.context, "archivelog")]

    @staticmethod
    def _log_spans(locator: LogLocator) -> list[tuple[int, int, int]]:
        """(sequence, first SCN, next SCN) of every redo log on disk (online groups, archives)."""
        spans: list[tuple[int, int, int]] = []
        for members in locator.online_groups:
            for m in members:
                h = read_header(locator.map_path(m), locator.source)
                if h is not None and h.sequence and (not locator.thread or h.thread == locator.thread):
                    spans.append((h.sequence, h.first_scn, h.next_scn))
        for _, path in locator.archive_files():
            h = read_header(path, locator.source)
            if h is not None:
                spans.append((h.sequence, h.first_scn, h.next_scn))
        return spans

    def _first_sequence(self, locator: LogLocator, scn: int) -> int:
        """The lowest sequence on disk that holds ``scn`` (or the lowest one at all)."""
        candidates = self._log_spans(locator)
        if not candidates:
            raise RuntimeFailure("no redo log found in the online groups or archive directories", 10009)
        holding = [c[0] for c in candidates if c[1] <= scn < c[2]]
        return min(holding) if holding else min(c[0] for c in candidates)

    # ----------------------------------------------------------------- debug stop counters
    def _on_file_end(self, header: Any) -> None:
        """``debug.stop-log-switches``: stop softly after that many redo logs (OLR semantics),
        parsing nothing of the next one (the engine halts at this file's end)."""
        debug = self.source.debug
        self._switches += 1
        if debug.stop_log_switches and self._switches >= debug.stop_log_switches:
            self._debug_stop("exhausted number of log switches")

    def _check_stop_transactions(self) -> None:
        """``debug.stop-transactions``: stop softly at the end of the LWN whose commits reach that
        many transactions not confirmed before (OLR counts with isNewData), in both engines."""
        debug = self.source.debug
        if not debug.stop_transactions:
            return
        barrier = self.engine.native_barrier
        if barrier is not None:
            barrier()  # stage 2 (decode workers): count the transactions it still holds
        if self.engine.state.new_transactions >= debug.stop_transactions:
            self._debug_stop("exhausted number of transactions")

    def _debug_stop(self, why: str) -> None:
        if not self.stop_event.is_set():
            log.info(f"shutdown started - {why}")
        self.engine.halted = True
        self.stop_event.set()

    # ----------------------------------------------------------------- checkpoints
    def _on_lwn_checkpoint(self, cp: Checkpoint, parser: Parser, force: bool = False, final: bool = False) -> None:
        self._check_stop_transactions()
        containers = self.containers
        force = force or (containers is not None and containers.changed(parser))
        self.base_checkpoint, path = self.manager.after_lwn(self.base_checkpoint, cp, parser, force, final)
        if path is not None and self.metrics is not None:
            self.metrics.checkpoint_written(cp.scn)
        if containers is not None:  # every other PDB's folder at the same SCN
            containers.after_lwn(cp, parser, final)

    async def flush_and_save(self, force: bool = False, final: bool = False) -> None:
        """Flush the writer (OLR flushes on every poll), then persist the confirmed position
        (``final``, at a stop: a failed save is RuntimeFailure 10120).

        Flushing first matters: the file writer confirms after a buffered write, and a
        position must never be saved for bytes that could still be lost. The position,
        and the output file size that matches it, are read while no write can run.
        """
        async with self.engine.writer_lock:
            await asyncio.to_thread(self.writer.flush)
            snapshot = self.engine.confirmations.snapshot()
            output = self._output.output_position() if self._output is not None else None
            sync = self._sync
            if output is not None and sync is not None and self._save_due(snapshot[0], force, snapshot[3]):
                await asyncio.to_thread(sync)  # the checkpoint must not claim bytes a power loss can take
        self.save_position(snapshot, output, force, final)

    def _on_rac_checkpoint(
        self, cut_scn: int, time_raw: int, redo_bytes: int, force: bool, final: bool = False
    ) -> None:
        """RAC: a restart point at the merge's cut, with each thread's position (rac_engine.py)."""
        self._check_stop_transactions()
        assert self.rac is not None, "a RAC checkpoint without the RAC engine"
        self.base_checkpoint = write_rac_cut(
            self.manager,
            self.containers,
            self.base_checkpoint,
            self.engine.parser,
            cut_scn,
            time_raw,
            self.rac.rac_positions,
            floor_scn=self.base_checkpoint.scn,
            redo_bytes=redo_bytes,
            force=force,
            final=final,
            metrics=self.metrics,
        )

    def _final_schema_checkpoint(self) -> None:
        """A soft stop writes a schema checkpoint at the last LWN read (as OLR does); a failure
        is RuntimeFailure 10120 (the restart would re-read more than needed, or fail)."""
        parser = self.engine.parser
        if self.rac is not None:
            lwn = parser.last_lwn
            self._on_rac_checkpoint(self.rac.cut_scn, lwn.time if lwn else 0, 0, True, final=True)
            return
        lwn, header = parser.last_lwn, parser.header
        if lwn is None or header is None:
            return
        cp = Checkpoint(
            lwn.scn,
            parser.epoch(lwn.time),
            header.sequence,
            lwn.end_block * header.block_size,
            True,
            header.thread,
            lwn.first_block,
        )
        self._on_lwn_checkpoint(cp, parser, force=True, final=True)

    def _save_due(self, confirmed: Any, force: bool, count: int | None = None) -> bool:
        # Two checkpoint messages of one LWN (its LWN checkpoint and the end of the file) share
        # a position: the confirmed count tells the later one apart, so the last one is saved.
        if confirmed is None or (confirmed == self._saved and (count is None or count == self._saved_count)):
            return False
        return force or time.monotonic() - self._last_save >= POLL_SAVE_S

    def _save_start_position(self) -> None:
        """Before the first message of a fresh start: save a zero position naming the schema
        checkpoint the run starts from, with the output's size (file writer).

        Without it, a crash before the first confirmed position is saved leaves output that a
        restart cannot tell from its own (the replay would be appended to it twice), and a
        restart before anything was confirmed (a stream client that never confirmed, Kafka
        without a delivery) could start from a later checkpoint, skipping what was never
        delivered; pruning keeps the checkpoint it names. A failure stops the start (10121)
        before any message is written.
        """
        output = None
        if self._output is not None:
            output = self._output.output_position()
            if output is None:  # not opened yet: fixed name or %i number
                output = self._output.start_position()
        cp = self.base_checkpoint
        start = Confirmed(self.source.name, cp.scn, 0, cp.resetlogs, cp.activation, POSITION_ZERO, output)
        try:
            self.manager.save_confirmed(start, final=True)
        except RuntimeFailure as e:
            cause = e.__cause__ if isinstance(e.__cause__, RuntimeFailure) else e
            raise RuntimeFailure(
                f"the start position could not be saved, nothing was replicated: {cause.message}", 10121
            ) from e

    def _persist_confirmed(self) -> bool:
        """Writer callback (its own thread): save the confirmed position now; True when it is on disk."""
        snapshot = self.engine.confirmations.snapshot()
        self.save_position(snapshot, None, force=True)
        return self._saved_count >= snapshot[3] or snapshot[0] == self._saved

    def save_position(
        self,
        snapshot: tuple[Position | None, tuple[int, int], int, int],
        output: tuple[str, int] | None,
        force: bool = False,
        final: bool = False,
    ) -> None:
        """Persist a confirmed position if it moved (at most every POLL_SAVE_S unless forced).

        The output size is stored with it: only the file writer reports one, and it
        confirms each message as it writes it, so after the flush the file holds exactly
        the confirmed messages (messages handed on but not yet written, counted in
        ``pending``, are not in it) and a restart may cut it back to that size. (Storing
        it only when nothing was pending left checkpoints without it under load; the
        restart then appended a full replay after the checkpoint: duplicated lines.)
        """
        confirmed, (scn, idx), _pending, count = snapshot
        with self._save_lock:
            if count < self._saved_count or not self._save_due(confirmed, force, count):
                return
            now = time.monotonic()
            header = self.engine.parser.header
            if self.manager.save_confirmed(
                Confirmed(
                    self.source.name,
                    scn,
                    idx,
                    header.resetlogs if header else 0,
                    header.activation if header else 0,
                    confirmed,
                    output,
                ),
                final,
            ):
                self._last_save, self._saved, self._saved_count = now, confirmed, count

    # ----------------------------------------------------------------- hot reload
    def _maybe_reload(self) -> None:
        """Apply a changed table filter live; name the changed keys that need a restart.

        Only complete files are considered (content hash, settled; see config/reload.py),
        and each new content is judged once, so a bad file is reported once.
        """
        data = self._watch.poll()
        if data is None:
            return
        from replicator.config.loader import decode_config_bytes, parse_config
        from replicator.config.reload import restart_keys
        from replicator.runner.assembly import table_map

        try:
            doc = decode_config_bytes(data, self.config_path)
            new = parse_config(doc, filename=self.config_path)
            src = new.source[0]
            if set(src.owners) != set(self.source.owners):
                raise ConfigError("the set of owners in filter.table changed: a restart is needed", 20007)
            others = self._container_cps  # source.containers: every PDB's owners, tables, tracker
            users = set(self.base_checkpoint.users).union(*(o.users for _, o in others)) if others else None
            dictionary = self.dictionary  # None: schemaless (source flag 0x2), no table to rebuild
            tables = table_map(src, dictionary, self.base_checkpoint, users) if dictionary is not None else {}
            container_tables = {
                o.con_id: table_map(src, self._container_dictionary(o.con_id), o, users) for _, o in others
            }
        except ReplicatorError as e:
            log.error(e.code, f"config reload rejected, keeping the running configuration: {e.message}")
            return
        # Restart-only keys are judged against what runs, not against the last file seen: a
        # change already reported is not reported again, one undone says so.
        seen, self._config_doc = self._config_doc, doc
        pending = set(restart_keys(self._running_doc, doc))
        changed = set(restart_keys(seen, doc))
        fresh, undone = sorted(pending & changed), sorted(changed - pending)
        if fresh:
            log.warning(60105, f"config changed in keys that only a restart applies (not applied now): {_shown(fresh)}")
        if undone:
            log.info(f"config keys back to the values that run (nothing to restart for them): {_shown(undone)}")
        if _filter_of(doc) == _filter_of(self._running_doc):
            if not changed:
                log.info("config file rewritten without a change to apply")
            return
        from replicator.runner.assembly import dictionary_tracker

        primary = self.engine.parser.primary
        primary.tables = tables
        tracker = primary.tracker
        if tracker is not None and dictionary is not None:  # later dictionary changes are filtered by the new rules
            tracker.rebuild = dictionary_tracker(src, dictionary, self.base_checkpoint, users).rebuild
        for _, other in self._container_cps:
            view = primary.containers[other.con_id]
            view.tables = container_tables[other.con_id]
            if view.tracker is not None:
                view.tracker.rebuild = dictionary_tracker(src, view.tracker.dictionary, other, users).rebuild
        self.source = src
        self._running_doc = {
            **self._running_doc,
            "source": [{**self._running_doc["source"][0], "filter": _filter_of(doc)}],
        }
        found = [*tables.values(), *(t for v in container_tables.values() for t in v.values())]
        for t in sorted({(t.owner, t.name) for t in found if not t.system}):
            log.info(f"- found: {t[0]}.{t[1]}")
        log.info("config reloaded: table filter updated")

    def _container_dictionary(self, con_id: int) -> Any:
        """The dictionary a container's tracker keeps current (source.containers)."""
        tracker = self.engine.parser.primary.containers[con_id].tracker
        assert tracker is not None, "a container of source.containers without dictionary tracking"
        return tracker.dictionary

    # ----------------------------------------------------------------- run
    def _on_signal(self, signum: int) -> None:
        self._signals += 1
        if self._signals > 1:
            log.error(10015, f"caught signal {signum} again, exiting immediately")
            os._exit(1)
        log.info(f"caught signal {signum}, stopping: draining writers and writing a final checkpoint")
        self.stop_event.set()

    def _report(self) -> None:
        """Once a second: metrics, systemd STATUS, and WATCHDOG while the parser is alive.

        STATUS reads ``replicating: ...``, or ``degraded: ... (why)`` while the writer cannot
        deliver (ops/readiness.py)."""
        now = time.monotonic()
        engine = self.engine
        if now - engine.state.heartbeat < max(5.0, 2 * (self.notifier.interval or 0)):
            self.notifier.maybe_watchdog()  # a stuck parser thread stops the pings
        if now - self._last_publish < 1.0:
            return
        self._last_publish = now
        st = engine.state
        threads = self.rac.thread_status if self.rac is not None else None  # RAC: where each redo thread is
        where = f"{threads()}" if threads is not None else f"sequence {st.sequence}"
        problem = self.writer.delivery_problem() if isinstance(self.writer, DeliveryProbe) else None
        self.notifier.status(
            f"{'degraded' if problem else 'replicating'}: {where}, SCN {st.last_scn}, "
            f"{st.transactions} transactions, {st.messages} messages" + (f" ({problem})" if problem else "")
        )
        if self.metrics is not None:
            self.metrics.publish(
                engine.tally,
                pool=self.pool,
                writers=[self.writer],
                parser=engine.parser,
                queues={"unconfirmed": engine.confirmations.pending},
            )

    async def _housekeeping(self, stopping: asyncio.Event) -> None:
        """Every poll interval: a reload check, the writer flushed and the position saved, the
        reports. (The output does not wait for it: the engine flushes the writer whenever the
        parser has caught up with the redo.) ``stopping`` ends the wait at once."""
        poll = max(self.config.target[0].writer.poll_interval_us / 1e6, 0.01)
        while not self.stop_event.is_set():
            try:
                await asyncio.wait_for(stopping.wait(), poll)
            except TimeoutError:
                pass
            self._maybe_reload()
            try:
                await self.flush_and_save()
            except ReplicatorError as e:  # e.g. 10102: nothing could be saved for too long
                self.engine.state.errors.append(e)
                self.stop_event.set()
                return
            self._report()

    async def _connect_writer(self) -> bool:
        """Connect the writer off the event loop; a stream writer waits for its client.

        Returns False when a stop was asked for while waiting.
        """
        if self.config.target[0].writer.type not in STREAM_WRITERS:
            await asyncio.to_thread(self.writer.connect)
            return await self._wait_deliverable()
        # Bind first: a client that reads this line may connect at once.
        await asyncio.to_thread(self.writer.open)
        log.info("waiting for a client to START or CONTINUE the stream")
        while not self.stop_event.is_set():
            try:
                await asyncio.to_thread(self.writer.connect, self._client_start, 1.0)
                return True
            except RuntimeFailure as e:
                if e.code != 10091:  # 10091: no client asked yet
                    raise
        return False

    def _client_start(self, start: Any) -> int:
        """A stream client's START (the writer's boot; an error is its FAILED_START): honour its
        position as OpenLogReplicator does, or refuse it (:mod:`replicator.runner.client_start`)."""
        from replicator.runner.client_start import check_within_redo, requested_scn

        scn = requested_scn(start, online=self.online_db is not None, configured=self.source.reader.start_scn or 0)
        if scn != self._start_scn or self._rebuild:
            if scn is not None:
                check_within_redo(scn, [span[2] for span in self._log_spans(self._locator)])
            self._rebuild = True
            self.redo_source.close()
            try:
                self._build(scn)
            except RuntimeFailure as exc:
                if exc.code == 10040 and scn is not None:
                    raise RuntimeFailure(
                        f"START at scn {scn}: no schema checkpoint of {self.source.name} at or "
                        f"below it in {self.config.state.path}",
                        10040,
                    ) from exc
                raise
            self._start_scn, self._rebuild = scn, False
            log.info(f"client START: replicating from scn {scn if scn is not None else 'as configured'}")
        return self.engine.parser.opt.first_data_scn or self.base_checkpoint.scn

    async def _wait_deliverable(self) -> bool:
        """A writer that delivers to a broker: wait until it answers (ops/readiness.py); False
        when a stop was asked for meanwhile."""
        writer = self.writer
        if not isinstance(writer, DeliveryProbe):
            return True
        problem = await asyncio.to_thread(writer.unreachable, 1.0)
        if problem is None:
            return True
        log.warning(
            60120,
            f"the {self.config.target[0].writer.type} writer cannot deliver ({problem}): waiting for "
            f"it before replicating",
        )
        while problem is not None and not self.stop_event.is_set():
            self.notifier.status(f"waiting for the {self.config.target[0].writer.type} broker: {problem}")
            problem = await asyncio.to_thread(writer.unreachable, 1.0)
        if problem is None:
            log.info(f"the {self.config.target[0].writer.type} writer reaches its broker now")
        return problem is None

    async def main(self) -> None:
        """Run until stopped; errors from the reader thread are re-raised here."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_signal, sig)
        from replicator.ops import early_signals

        for early in early_signals.take():  # arrived during startup: stop now, cleanly
            self._on_signal(early)
        if self.stop_event.is_set():
            log.info("stopped during startup, before replication began")
            self.notifier.close()
            return
        if self.metrics is not None:
            self.metrics.start_server(self.config.metrics.bind or "")
            self.metrics.set_state("starting")
        engine, seq, offset = self._build()
        self.pool.remove_stale_swap_files()
        # What exists now (config, dictionary, modules) lives as long as the service: the
        # collector need not walk it again at every full collection (runner.batch.run_job does
        # the same); the start-up paused it (replicator.ops.startup_gc), it collects from here.
        gc.freeze()
        startup_gc.resume()
        if self.metrics is not None:
            self.metrics.set_state("ready")
        if not await self._connect_writer():
            self.writer.close()
            return
        engine, (seq, offset) = self.engine, self._start_at  # a client's START may have rebuilt them
        if self._fresh_start:
            try:
                self._save_start_position()
            except ReplicatorError:
                self.writer.close()
                self.redo_source.close()
                self._close_reporting()
                raise
        if self.metrics is not None:
            self.metrics.set_state("replicating")
        self.notifier.ready(f"replicating {self.source.name} from sequence {seq}")
        log.info(f"replicating {self.source.name} from sequence {seq} offset {offset}")
        stopping = asyncio.Event()
        house = asyncio.create_task(self._housekeeping(stopping))
        try:
            await engine.run(seq, offset, self.stop_event)
        finally:
            self.stop_event.set()
            stopping.set()  # a long poll-interval-us does not hold the stop
            self.notifier.stopping("stopping: draining the writer, writing a final checkpoint")
            if self.metrics is not None:
                self.metrics.set_state("aborting" if engine.state.errors else "finishing")
            await house
            final_errors = await self._final_saves(engine)
        self._report()
        self._close_reporting()
        if engine.state.errors:
            for e in final_errors:  # the first error is the one raised; these are logged
                log.error(e.code, e.message)
            raise engine.state.errors[0]
        if final_errors:
            raise final_errors[0]
        engine.parser.report_skips()
        log.info(f"stopped: {engine.state.transactions} transactions, {engine.state.messages} messages")

    async def _final_saves(self, engine: DaemonEngine) -> list[ReplicatorError]:
        """At a stop: the confirmed position, the writer closed, then (after a clean run) the
        final schema checkpoint. A save that fails is returned (10120): the stop is then not
        clean, and the exit code says so."""
        errors: list[ReplicatorError] = []
        try:
            await self.flush_and_save(force=True, final=True)
        except ReplicatorError as e:
            errors.append(e)
        self.writer.close()
        self.redo_source.close()
        if not engine.state.errors:
            try:
                self._final_schema_checkpoint()
            except ReplicatorError as e:
                errors.append(e)
        return errors

    def _close_reporting(self) -> None:
        if self.metrics is not None:
            self.metrics.stop_server()
        self.notifier.close()


def _shown(keys: list[str]) -> str:
    return ", ".join(keys[:12]) + (f" and {len(keys) - 12} more" if len(keys) > 12 else "")


def _filter_of(doc: Any) -> Any:
    try:
        return doc["source"][0].get("filter")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def run_daemon(
    config_path: str, engine: str | None = None, *, read_limit_mbps: float | None = None, metrics_linger: float = 0.0
) -> int:
    """``replicator run`` for the offline and online readers: lock, run, exit 0 after a clean stop.

    ``--read-limit`` caps the redo read rate (all redo threads together); ``--metrics-linger``
    is for batch runs (a service serves /metrics as long as it runs) and is refused (30002).
    """
    if metrics_linger:
        raise ConfigError(
            "--metrics-linger keeps /metrics served after a batch run ends; the "
            "offline/online service serves it for as long as it runs: leave the option out",
            30002,
        )
    fd = lock_config(config_path)
    try:
        daemon = Daemon(config_path, engine, read_limit_mbps=read_limit_mbps)
        try:
            import uvloop

            runner: Any = uvloop.run
        except ImportError:
            runner = asyncio.run
        runner(daemon.main())
        return 0
    finally:
        os.close(fd)
