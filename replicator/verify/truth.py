"""The source of truth: the config's redo decoded again, as the daemon decoded it.

The redo files are found as the config finds them (a batch reader's ``redo-log`` list; for
the offline and online readers the archived logs of the schema checkpoint's
``log-archive-dest``, the recovery area and ``redo-log``), through the config's redo source
(local, SFTP, ASM), from the schema checkpoint at or below the start SCN on. They run
through the batch :class:`~replicator.runner.pipeline.Pipeline` with the config's
dictionary, filter and format (the native engine when built) into a sink that hands every
message body, in stream order, to a :class:`~replicator.verify.sinks.ChangeOut`; the
message's ordinal in that order is its place. Its own swap files go to a private directory,
never to the daemon's ``swap-path``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from replicator.errors import RuntimeFailure
from replicator.events import Message
from replicator.flags import DISABLE_CHECKS_BLOCK_SUM
from replicator.formats.olr_digest import decode
from replicator.redo.reader import RedoFile, list_batch_files
from replicator.verify.sinks import UNSUPPORTED, ChangeOut

OLR_JSON = ("json", "debezium")


@dataclass(slots=True)
class RedoStats:
    """What decoding the redo took."""

    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    messages: int = 0
    checkpoints: int = 0  # of the messages
    transactions: int = 0
    engine: str = ""
    first_scn: int = 0  # the start: commits after it are replicated


class _Bodies:
    """The pipeline's sink: every message body (checkpoint messages too), in order, to ``take``.

    A native MessageRun holds its messages' bodies each followed by a newline (JSON bodies
    hold no raw newline), so it is cut without making a Message per row."""

    def __init__(self, take: Callable[[bytes], None]) -> None:
        self.take = take

    def write(self, batch: list[Message]) -> None:
        take = self.take
        for message in batch:
            take(message.data)

    def write_runs(self, batch: list[Any]) -> None:
        take = self.take
        for item in batch:
            if type(item) is Message:
                take(item.data)
            else:
                for body in item.data.split(b"\n")[:-1]:
                    take(body)

    def flush(self) -> None:
        pass


class RedoTruth:
    """The config's redo, from ``from_scn`` (default: reader.start-scn, else the oldest schema
    checkpoint in the state directory) on; ``redo`` names the files (or directories) instead
    of the config's."""

    def __init__(
        self,
        config: Any,
        *,
        from_scn: int | None = None,
        redo: list[str] | None = None,
        engine: str | None = None,
        work_dir: Path,
    ) -> None:
        from replicator.redo.sources import open_source
        from replicator.runner.assembly import source_facts

        source = config.source[0]
        self.config, self.source = config, source
        self.format_type = source.format.type
        if self.format_type not in OLR_JSON:
            raise RuntimeFailure(
                f"format {self.format_type!r}: verify reads OpenLogReplicator JSON sinks only "
                f"(format type json or debezium)",
                UNSUPPORTED,
            )
        self.checkpoint = None if source.schemaless else self._start_checkpoint(from_scn)
        start = from_scn or source.reader.start_scn or (self.checkpoint.scn if self.checkpoint is not None else 0)
        parser, fmt, archive_format, _ = source_facts(config, source, self.checkpoint)
        self.parser = replace(parser, first_data_scn=start)
        self.format_options = fmt
        self.first_scn = start
        self._open_source = lambda: open_source(source.reader)
        listing = self._open_source()
        try:
            self.files = self._files(redo, archive_format, listing)
        finally:
            listing.close()
        if not self.files:
            raise RuntimeFailure(
                "no redo log files to verify against (reader.redo-log, the archive directories, or --redo)", 10001
            )
        self.engine = engine
        self.work_dir = work_dir
        self.label = (
            f"redo of {source.name}: {len(self.files)} file(s), sequence {self.files[0].sequence}"
            f"-{self.files[-1].sequence}, from SCN {start}"
        )

    def _start_checkpoint(self, from_scn: int | None) -> Any:
        from replicator.schema.store import list_schema_checkpoints, load_best_schema_checkpoint

        state, name = self.config.state.path, self.source.name
        if not os.path.isdir(state):
            raise RuntimeFailure(f"state directory {state} does not exist or is not a directory", 10012)
        scn = from_scn or self.source.reader.start_scn
        if not scn:
            available = list_schema_checkpoints(state, name)
            scn = available[0][0] if available else 0
        cp = load_best_schema_checkpoint(state, name, scn) if scn else None
        if cp is None:
            raise RuntimeFailure(
                f"schema checkpoint for database {name} at or below SCN {scn} not found in {state}", 10052
            )
        return cp

    def _files(self, redo: list[str] | None, archive_format: str, redo_source: Any) -> list[RedoFile]:
        reader = self.source.reader
        cp = self.checkpoint
        if redo:
            entries = list(redo)
        elif reader.type == "batch":
            entries = list(reader.redo_log)
        else:
            from replicator.redo.online import LogLocator

            dirs = [
                d
                for d in (cp.log_archive_dest if cp is not None else "", *self._recovery_area(), *reader.redo_log)
                if d
            ]
            locator = LogLocator(
                online_groups=[],
                archive_dirs=dirs,
                archive_format=archive_format,
                path_mapping=list(reader.path_mapping_pairs),
                source=redo_source,
            )
            entries = [path for _, path in sorted(locator.archive_files())]
        start_seq = cp.restart_position[0] if cp is not None and reader.type != "batch" else (reader.start_seq or 0)
        return list_batch_files(entries, archive_format, start_seq, redo_source) if entries else []

    def _recovery_area(self) -> list[str]:
        cp = self.checkpoint
        if cp is None or not cp.db_recovery_file_dest:
            return []
        return [os.path.join(cp.db_recovery_file_dest, cp.context, "archivelog")]

    def key_columns(self) -> dict[tuple[str, str], list[str]]:
        """(owner, table) -> primary key column names, from the dictionary (for the report)."""
        return {
            (t.owner, t.name): [t.columns[i].name for i in t.key_columns if i < len(t.columns)]
            for t in self.parser.tables.values()
        }

    def _run(self, take: Callable[[bytes], None]) -> RedoStats:
        from replicator.native import resolve_engine
        from replicator.runner.assembly import create_format_for
        from replicator.runner.pipeline import Pipeline
        from replicator.txn.pool import MemoryPool

        engine = resolve_engine(self.engine)
        memory = self.config.memory
        pool = MemoryPool(memory.max_mb, memory.swap_mb, str(self.work_dir), memory.min_mb)
        verify_checksum = not (self.source.reader.disable_checks & DISABLE_CHECKS_BLOCK_SUM)
        redo_source = self._open_source()
        try:
            pipeline = Pipeline(
                self.parser,
                create_format_for(self.format_options),
                _Bodies(take),
                verify_checksum=verify_checksum,
                pool=pool,
                source=redo_source,
                engine=engine,
            )
            started = time.perf_counter()
            stats = pipeline.run(self.files)
        finally:
            redo_source.close()
        return RedoStats(
            stats.files,
            stats.bytes_read,
            time.perf_counter() - started,
            stats.messages,
            0,
            stats.transactions,
            engine,
            self.first_scn,
        )

    def scan(self, out: ChangeOut) -> RedoStats:
        """Decode the redo; every message goes to ``out`` with its ordinal in the stream."""
        counts = [0, 0]  # messages, checkpoint messages

        def take(body: bytes) -> None:
            if out.message(body, counts[0]) is None:
                counts[1] += 1
            counts[0] += 1

        stats = self._run(take)
        stats.messages, stats.checkpoints = counts
        return stats

    def locate(self, ordinals: set[int]) -> dict[int, dict[str, Any]]:
        """Decode the redo once more and keep the messages at ``ordinals`` (for the report)."""
        found: dict[int, dict[str, Any]] = {}
        ordinal = [0]

        def take(body: bytes) -> None:
            if ordinal[0] in ordinals:
                found[ordinal[0]] = decode(body)
            ordinal[0] += 1

        self._run(take)
        return found
