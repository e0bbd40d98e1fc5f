"""Checkpoints: the confirmed output position and the schema/redo restart points.

Two kinds of files live in the state directory (olr-interfaces.md §5):

* ``<name>-chkpt.json``: the position confirmed by the writer (or its client), read and
  written by :mod:`replicator.runner.position_file` (OLR's keys plus our stream position
  ``pos`` and the file writer's ``output``; validated field by field).
* ``<name>-chkpt-<scn>.json``: where parsing can restart (LWN position and the oldest open
  transaction) plus the dictionary, written at log switches, every ``interval-s`` of redo
  time or ``interval-mb`` of redo, and at shutdown. Which one a restart starts from, and so
  which ones pruning keeps, is one rule: :mod:`replicator.runner.pruning`.

Every file is written atomically (temp file, fsync, rename). A failed write is retried
with back-off (:class:`SaveFailures`), except the final ones (the stop, the record of a
first start), which raise.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from replicator import log
from replicator.errors import DataError, RuntimeFailure
from replicator.events import Checkpoint
from replicator.fsutil import atomic_write
from replicator.runner.position_file import POSITION_ZERO, Confirmed, Position, format_confirmed, read_confirmed
from replicator.runner.pruning import FileFacts, kept, may_restart_from, peek_facts, restart_scn, start_point_scn
from replicator.schema.document import MinTran, SchemaCheckpoint
from replicator.schema.store import (
    list_schema_checkpoints,
    load_schema_checkpoint,
    write_schema_checkpoint,
)

__all__ = [
    "POSITION_ZERO",
    "CheckpointManager",
    "Confirmed",
    "Position",
    "SaveFailures",
    "check_state_directory",
    "xid_text",
]


def check_state_directory(path: str) -> None:
    """Before anything is read or written: the state directory exists (10012) and a file can be
    created in it (10122). Without the second check a run with an unwritable directory went on
    with warnings only (60018, giving up after minutes) and could end with exit 0 and no
    checkpoint at all."""
    from replicator.runner.assembly import require_state_dir

    require_state_dir(path)
    probe = os.path.join(path, f".write-test-{os.getpid()}.tmp")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as e:
        raise RuntimeFailure(
            f"state directory {path} is not writable ({e.strerror}): no checkpoint could be "
            f"saved; give the service's user write access to it",
            10122,
        ) from e


class SaveFailures:
    """Back-off and reporting for state files that cannot be written (a full disk).

    Without it every LWN retried the write and logged the same warning (4,864 of them
    in one run). After a failure, writes are skipped for a growing back-off (0.5 s up to
    ``max_backoff_s``); the warning (60018) appears at most once per ``report_every_s``
    with the number of failures; when nothing could be saved for ``give_up_s`` the run
    stops with RuntimeFailure 10102.
    """

    def __init__(
        self,
        report_every_s: float = 30.0,
        give_up_s: float = 300.0,
        max_backoff_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.report_every_s, self.give_up_s, self.max_backoff_s = report_every_s, give_up_s, max_backoff_s
        self.clock = clock
        self._since: float | None = None  # first failure of the current streak
        self._next_try = 0.0
        self._backoff = 0.0
        self._last_report = -report_every_s
        self._unreported = 0
        self.failures = 0

    def allowed(self) -> bool:
        """False while backing off after a failure (the caller skips this write)."""
        return self._since is None or self.clock() >= self._next_try

    def failed(self, error: RuntimeFailure) -> None:
        """Record a failed write: back off, report once per interval, give up after ``give_up_s``."""
        now = self.clock()
        if self._since is None:
            self._since = now
        self.failures += 1
        self._unreported += 1
        self._backoff = min(self.max_backoff_s, max(0.5, self._backoff * 2))
        self._next_try = now + self._backoff
        if now - self._since >= self.give_up_s:
            raise RuntimeFailure(
                f"state directory: nothing could be saved for {now - self._since:.0f}s "
                f"({self.failures} attempts; disk full?): {error.message}",
                10102,
            )
        if now - self._last_report >= self.report_every_s:
            log.warning(
                60018,
                f"{error.message} ({self._unreported} failed attempt(s); retrying with back-off, "
                f"stopping if nothing can be saved for {self.give_up_s:.0f}s)",
            )
            self._last_report, self._unreported = now, 0

    def succeeded(self) -> None:
        """A write went through: the streak ends."""
        if self._since is not None:
            log.info(f"state saved again after {self.clock() - self._since:.0f}s of failures")
        self._since, self._backoff, self._unreported = None, 0.0, 0


class CheckpointManager:
    """Reads and writes the checkpoint files of one source in the state directory.

    ``start_scn`` is ``reader.start-scn`` (0 when unset): with nothing confirmed a restart
    starts from the checkpoint it selects, and pruning never deletes that one (see
    :mod:`replicator.runner.pruning`).
    """

    def __init__(
        self,
        state_dir: str,
        name: str,
        keep: int = 100,
        force_interval: int = 20,
        interval_s: int = 600,
        interval_mb: int = 500,
        keep_all: bool = False,
        start_scn: int = 0,
    ):
        self.save_failures = SaveFailures()
        self.state_dir = Path(state_dir)
        self.name = name
        self.keep = keep
        self.force_interval = force_interval
        self.interval_s = interval_s
        self.interval_mb = interval_mb
        self.keep_all = keep_all
        self.start_scn = start_scn
        self.saved: Confirmed | None = None  # what <name>-chkpt.json holds now (read or last written)
        self._facts: dict[int, FileFacts] = {}  # of the schema checkpoints seen (pruning)
        self.written_scns: list[int] = []  # SCNs of schema checkpoints written by this process
        self._refs_since_full = 0
        self._last_full_scn: int | None = None
        self.last_time = 0
        self.bytes_since = 0
        self.schema_changed = False
        # source.containers: another PDB's folder follows the first container's manager: pruning
        # keeps here the SCNs that folder still holds (its restart point among them).
        self.follows: CheckpointManager | None = None

    # ----------------------------------------------------------------- confirmed position
    @property
    def position_path(self) -> Path:
        return self.state_dir / f"{self.name}-chkpt.json"

    def load_confirmed(self) -> Confirmed | None:
        """Read and validate ``<name>-chkpt.json`` (None when absent; see position_file.py)."""
        self.saved = read_confirmed(self.position_path, self.name)
        return self.saved

    def save_confirmed(self, c: Confirmed, final: bool = False) -> bool:
        """Persist the confirmed position; False when skipped or failed (see :class:`SaveFailures`:
        the caller tries again later). ``final`` (a stop, or the record of a first start) is
        never skipped, and a failure raises RuntimeFailure 10120 instead."""
        if not final and not self.save_failures.allowed():
            return False
        try:
            atomic_write(self.position_path, format_confirmed(c))
        except RuntimeFailure as e:
            if final:
                raise RuntimeFailure(
                    f"the confirmed position could not be saved at the stop: {e.message}", 10120
                ) from e
            self.save_failures.failed(e)
            return False
        self.save_failures.succeeded()
        self.saved = c
        return True

    # ----------------------------------------------------------------- restart point
    def restart_checkpoint(self, confirmed: Confirmed | None, start_scn: int | None = None) -> SchemaCheckpoint | None:
        """The newest schema checkpoint from which re-reading loses nothing (pruning.py's rule):
        with our position, one taken at or before the LWN of the last confirmed message; with
        an OLR file, the largest checkpoint SCN not above its SCN; with nothing confirmed, the
        largest not above the start SCN (``start_scn``, a stream client's START, replaces the
        one of the config and of a first start's record). Files that fail to load are skipped
        (60018)."""
        if start_scn is not None and (confirmed is None or confirmed.confirms_nothing):
            confirmed = None
        else:
            start_scn = self.start_scn
        candidates = sorted(list_schema_checkpoints(self.state_dir, self.name), reverse=True)
        for scn, path in candidates:
            try:
                cp = load_schema_checkpoint(path, self.name)
            except (DataError, RuntimeFailure) as e:
                log.warning(60018, f"checkpoint {path.name} unusable: {e.message}")
                continue
            self._facts[scn] = _facts_of(cp)
            if may_restart_from(scn, self._facts[scn], confirmed, start_scn):
                full = self._with_schema(cp)
                if full is not None:
                    return full  # (else an older checkpoint may still serve: re-reading more loses nothing)
        return None

    def _with_schema(self, cp: SchemaCheckpoint) -> SchemaCheckpoint | None:
        """``cp`` with its dictionary: its own, or the one of the full-schema file it refers to
        (state folders of older versions may hold a reference to a reference: followed)."""
        ref_scn, seen = cp.schema_ref_scn, {cp.scn}
        while ref_scn is not None:
            ref_path = self.state_dir / f"{self.name}-chkpt-{ref_scn}.json"
            try:
                ref = load_schema_checkpoint(ref_path, self.name)
            except (DataError, RuntimeFailure):
                log.warning(60019, f"reference schema {ref_path.name} missing for checkpoint {cp.scn}")
                return None
            if ref.schema_ref_scn is None:
                return replace(cp, schema_scn=ref.schema_scn, rows=ref.rows, schema_ref_scn=None)
            if ref_scn in seen:
                log.warning(60019, f"reference schema {ref_path.name} of checkpoint {cp.scn} refers back to itself")
                return None
            seen.add(ref_scn)
            ref_scn = ref.schema_ref_scn
        return cp

    # ----------------------------------------------------------------- writing schema checkpoints
    def due(self, redo_time_epoch: int, redo_bytes: int, force: bool) -> bool:
        """Whether a schema checkpoint should be written now (OLR's cadence rules)."""
        self.bytes_since += redo_bytes
        if force or not self.written_scns:
            return True
        return redo_time_epoch - self.last_time >= self.interval_s or self.bytes_since >= self.interval_mb * 1024 * 1024

    def _take_schema_change(self, base: SchemaCheckpoint, parser: Any) -> tuple[SchemaCheckpoint, bool]:
        """A dictionary changed by tracking (its tracker pending): ``base`` with the tracker's
        rows, and the next file stores them in full, at once (True)."""
        tracker = parser.opt.tracker
        if tracker is None or not tracker.pending:
            return base, False
        self.schema_changed, tracker.pending = True, False
        return replace(
            base, rows=tracker.dictionary.snapshot(), schema_scn=tracker.schema_scn, schema_ref_scn=None
        ), True

    def after_lwn(
        self, base: SchemaCheckpoint, cp: Checkpoint, parser: Any, force: bool = False, final: bool = False
    ) -> tuple[SchemaCheckpoint, Path | None]:
        """The schema checkpoint step after an LWN (daemon and batch runs alike).

        ``base`` holds the database facts and the dictionary rows of the last checkpoint
        loaded or written; it is returned updated when dictionary tracking changed the
        schema (the tracker's rows replace it and the next file stores them in full,
        written at once so a restart from there reloads the new definitions). ``force``
        (and a log switch) writes regardless of ``interval-s``/``interval-mb``; a checkpoint
        SCN already written is not written again (OLR's ``lastCheckpointScn`` rule).
        ``final`` (the end of a run) forces it and makes a failed write RuntimeFailure 10120.
        Returns (base, path of the file written or None).
        """
        header = parser.header
        if header is None:
            return base, None
        lwn = parser.last_lwn
        redo_bytes = (lwn.end_block - lwn.first_block) * header.block_size if lwn else 0
        force = force or final or cp.redo_switch
        base, changed = self._take_schema_change(base, parser)
        force = force or changed
        if self.written_scns and self.written_scns[-1] == cp.scn:
            return base, None
        if not self.due(cp.time, redo_bytes, force):
            return base, None
        oldest = parser.buffer.oldest_begin()
        min_tran = MinTran(oldest[0], oldest[1], xid_text(oldest[2])) if oldest else None
        stamped = replace(base, resetlogs=header.resetlogs, activation=header.activation)
        path = self.write_schema(
            stamped, cp.scn, lwn.time if lwn else 0, cp.time, cp.seq, cp.offset, min_tran, final=final
        )
        return base, path

    def after_rac_cut(
        self,
        base: SchemaCheckpoint,
        parser: Any,
        cut_scn: int,
        time_raw: int,
        threads: Callable[[], list[tuple[int, int, int, int]]],
        *,
        floor_scn: int,
        redo_bytes: int = 0,
        force: bool = False,
        final: bool = False,
    ) -> tuple[SchemaCheckpoint, Path | None]:
        """The RAC restart point at the merge's cut (batch and daemon runs alike): OLR's file
        plus each thread's ``(thread, sequence, offset, ...)`` from ``threads()``.

        As :meth:`after_lwn`: a changed dictionary is stored in full, at once; the cut is
        never written at or below ``floor_scn`` (the checkpoint the run started from) or the
        parser's first data SCN, never twice, and otherwise when due (``interval-s`` /
        ``interval-mb``, or ``force``/``final``). Returns (base, path of the file written or None).
        """
        base, changed = self._take_schema_change(base, parser)
        force = force or changed
        header = parser.header
        if (
            header is None
            or cut_scn <= max(parser.opt.first_data_scn, floor_scn)
            or (self.written_scns and self.written_scns[-1] == cut_scn)
        ):
            return base, None
        epoch = parser.epoch(time_raw)
        if not self.due(epoch, redo_bytes, force or final):
            return base, None
        positions = threads()
        stamped = replace(base, resetlogs=header.resetlogs, activation=header.activation, threads=positions)
        path = self.write_schema(stamped, cut_scn, time_raw, epoch, positions[0][1], positions[0][2], None, final=final)
        return base, path

    def write_schema(
        self,
        base: SchemaCheckpoint,
        scn: int,
        time_raw: int,
        time_epoch: int,
        seq: int,
        offset: int,
        min_tran: MinTran | None,
        final: bool = False,
    ) -> Path | None:
        """Write ``<name>-chkpt-<scn>.json`` for the current position; WARN 60018 on failure
        (``final``: never skipped by the back-off, and RuntimeFailure 10120 on failure)."""
        full = (
            self._last_full_scn is None
            or self.schema_changed
            or self._refs_since_full >= self.force_interval
            or self._holds_full_schema(scn)
        )
        cp = replace(base, scn=scn, time=time_raw, seq=seq, offset=offset, min_tran=min_tran)
        if full:
            cp = replace(cp, schema_scn=base.schema_scn or scn, schema_ref_scn=None)
        else:
            cp = replace(cp, schema_ref_scn=self._last_full_scn, rows={})
        if not final and not self.save_failures.allowed():
            return None
        try:
            path = write_schema_checkpoint(self.state_dir, cp)
        except RuntimeFailure as e:
            if final:
                raise RuntimeFailure(f"the final schema checkpoint could not be written: {e.message}", 10120) from e
            self.save_failures.failed(e)
            return None
        self.save_failures.succeeded()
        self._facts[scn] = _facts_of(cp)
        if full:
            self._last_full_scn, self._refs_since_full, self.schema_changed = scn, 0, False
        else:
            self._refs_since_full += 1
        if scn not in self.written_scns:
            self.written_scns.append(scn)
        self.last_time = time_epoch
        self.bytes_since = 0
        self._prune()
        return path

    def _holds_full_schema(self, scn: int) -> bool:
        """Whether the file at ``scn`` exists with a full schema. After a restart the run re-reads
        from the oldest open transaction and meets the SCNs of files it did not write; one of
        them may be the full-schema file that other files refer to, so it is rewritten full,
        never as a reference (the others would lose their dictionary)."""
        path = self.state_dir / f"{self.name}-chkpt-{scn}.json"
        if scn in self.written_scns or not path.exists():
            return False
        facts = self._facts_of(scn, path)
        return facts is None or facts.ref is None

    # ----------------------------------------------------------------- pruning
    def _facts_of(self, scn: int, path: Path) -> FileFacts | None:
        """A file's facts: known when written or loaded here, else read from its first and last
        bytes, else from the whole file (None when it cannot be loaded)."""
        facts = self._facts.get(scn)
        if facts is None:
            facts = peek_facts(path)
            if facts is None:
                try:
                    facts = _facts_of(load_schema_checkpoint(path, self.name))
                except (DataError, RuntimeFailure):
                    return None
            self._facts[scn] = facts
        return facts

    def _prune(self) -> None:
        """Delete the schema checkpoints no restart can need (pruning.py: the newest ``keep``,
        the one a restart from the saved position starts from, the start checkpoint, and the
        full-schema files these refer to, stay)."""
        if self.keep_all or len(self.written_scns) < self.keep:
            return
        files = list_schema_checkpoints(self.state_dir, self.name)
        if self.follows is not None:  # the files of the same SCNs, and the ones they refer to
            held = [scn for scn, _ in list_schema_checkpoints(self.follows.state_dir, self.name)]
            keep = kept(files, 1, held, self._facts_of)
        else:
            restart = restart_scn(files, self._facts_of, self.saved, self.start_scn)
            pins = (restart, start_point_scn([s for s, _ in files], self.start_scn))
            keep = kept(files, self.keep, pins, self._facts_of)
        for scn, path in files:
            if scn not in keep:
                path.unlink(missing_ok=True)
                self._facts.pop(scn, None)


def _facts_of(cp: SchemaCheckpoint) -> FileFacts:
    return FileFacts(cp.seq, cp.offset, bool(cp.threads), cp.schema_ref_scn)


def xid_text(xid: int) -> str:
    """An XID as OLR writes it in ``min-tran``: ``0xUUUU.SSS.QQQQQQQQ``."""
    return f"0x{xid >> 48:04x}.{(xid >> 32) & 0xFFFF:03x}.{xid & 0xFFFFFFFF:08x}"
