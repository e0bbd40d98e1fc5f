"""Checkpoints: the confirmed output position and the schema/redo restart points.

Two kinds of files live in the state directory (olr-interfaces.md §5):

* ``<name>-chkpt.json``: the position confirmed by the writer (or its client). Besides
  OpenLogReplicator's keys (``scn``/``idx`` = the last confirmed message's c_scn and
  internal index) we store ``pos`` = ``[sequence, LWN byte offset, record rank, message index]``
  of that message. OpenLogReplicator's c_scn is the transaction's *begin* SCN, which does
  not order the output stream (commits do); ``pos`` does, so a restart skips exactly what
  was confirmed. A file without ``pos`` (written by OpenLogReplicator) is still read, with
  OLR's semantics.
* ``<name>-chkpt-<scn>.json``: where parsing can restart (LWN position and the oldest open
  transaction) plus the dictionary, written at log switches, every ``interval-s`` of redo
  time or ``interval-mb`` of redo, and at shutdown.

Every file is written atomically (temp file, fsync, rename).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from replicator import log
from replicator.errors import DataError, RuntimeFailure
from replicator.events import Checkpoint
from replicator.fsutil import atomic_write
from replicator.schema.document import MinTran, SchemaCheckpoint
from replicator.schema.store import (
    list_schema_checkpoints,
    load_schema_checkpoint,
    write_schema_checkpoint,
)

Position = tuple[int, int, int, int]  # (sequence, LWN byte offset, record rank, message index)
POSITION_ZERO: Position = (0, 0, 0, 0)


@dataclass(slots=True)
class Confirmed:
    """The content of ``<name>-chkpt.json``."""

    database: str
    scn: int  # c_scn of the last confirmed message (OLR key)
    idx: int  # its internal index (OLR key)
    resetlogs: int
    activation: int
    pos: Position | None = None  # our stream position (None in files written by OLR)
    output: tuple[str, int] | None = None  # file writer: (file, size) holding exactly the confirmed messages


class SaveFailures:
    """Back-off and reporting for state files that cannot be written (a full disk).

    Without it every LWN retried the write and logged the same warning (4,864 of them
    in one run). After a failure, writes are skipped for a growing back-off (0.5 s up to
    ``max_backoff_s``); the warning (60018) appears at most once per ``report_every_s``
    with the number of failures; when nothing could be saved for ``give_up_s`` the run
    stops with RuntimeFailure 10102.
    """

    def __init__(self, report_every_s: float = 30.0, give_up_s: float = 300.0, max_backoff_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
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
            raise RuntimeFailure(f"state directory: nothing could be saved for {now - self._since:.0f}s "
                                 f"({self.failures} attempts; disk full?): {error.message}", 10102)
        if now - self._last_report >= self.report_every_s:
            log.warning(60018, f"{error.message} ({self._unreported} failed attempt(s); retrying with back-off, "
                               f"stopping if nothing can be saved for {self.give_up_s:.0f}s)")
            self._last_report, self._unreported = now, 0

    def succeeded(self) -> None:
        """A write went through: the streak ends."""
        if self._since is not None:
            log.info(f"state saved again after {self.clock() - self._since:.0f}s of failures")
        self._since, self._backoff, self._unreported = None, 0.0, 0


class CheckpointManager:
    """Reads and writes the checkpoint files of one source in the state directory."""

    def __init__(self, state_dir: str, name: str, keep: int = 100, force_interval: int = 20,
                 interval_s: int = 600, interval_mb: int = 500, keep_all: bool = False):
        self.save_failures = SaveFailures()
        self.state_dir = Path(state_dir)
        self.name = name
        self.keep = keep
        self.force_interval = force_interval
        self.interval_s = interval_s
        self.interval_mb = interval_mb
        self.keep_all = keep_all
        self._written: list[int] = []  # SCNs of schema checkpoints written by this process
        self._refs_since_full = 0
        self._last_full_scn: int | None = None
        self._last_time = 0
        self._bytes_since = 0
        self.schema_changed = False

    # ----------------------------------------------------------------- confirmed position
    @property
    def position_path(self) -> Path:
        return self.state_dir / f"{self.name}-chkpt.json"

    def load_confirmed(self) -> Confirmed | None:
        """Read ``<name>-chkpt.json`` (None when absent)."""
        path = self.position_path
        if not path.exists():
            return None
        try:
            doc = json.loads(path.read_bytes()[:4096])
        except (OSError, ValueError) as e:
            raise DataError(f"file: {path} - parse error: {e}", 20001) from e
        if doc.get("database") != self.name:
            raise DataError(f"file: {path} - invalid database name: {doc.get('database')!r}, expected {self.name!r}",
                            20001)
        pos = doc.get("pos")
        position = tuple(int(v) for v in pos) if isinstance(pos, list) and len(pos) == 4 else None
        out = doc.get("output")
        output = (str(out[0]), int(out[1])) if isinstance(out, list) and len(out) == 2 else None
        return Confirmed(self.name, int(doc.get("scn", 0)), int(doc.get("idx", 0)), int(doc.get("resetlogs", 0)),
                         int(doc.get("activation", 0)), position, output)  # type: ignore[arg-type]

    def save_confirmed(self, c: Confirmed) -> bool:
        """Persist the confirmed position (one line, OLR's keys first); False when skipped or failed
        (see :class:`SaveFailures`: the caller tries again later)."""
        doc = {"database": c.database, "scn": c.scn, "idx": c.idx, "resetlogs": c.resetlogs,
               "activation": c.activation}
        if c.pos is not None:
            doc["pos"] = list(c.pos)
        if c.output is not None:
            doc["output"] = list(c.output)
        if not self.save_failures.allowed():
            return False
        try:
            atomic_write(self.position_path, json.dumps(doc, separators=(",", ":")).encode())
        except RuntimeFailure as e:
            self.save_failures.failed(e)
            return False
        self.save_failures.succeeded()
        return True

    # ----------------------------------------------------------------- restart point
    def restart_checkpoint(self, confirmed: Confirmed | None, start_scn: int) -> SchemaCheckpoint | None:
        """The newest schema checkpoint from which re-reading loses nothing.

        With our position, a checkpoint taken after an LWN that ends at or before the LWN
        of the last confirmed message is safe. Without it (an OLR file, or a first start),
        OLR's rule applies: the largest checkpoint SCN not above the start SCN.
        """
        candidates = sorted(list_schema_checkpoints(self.state_dir, self.name), reverse=True)
        for scn, path in candidates:
            try:
                cp = load_schema_checkpoint(path, self.name)
            except (DataError, RuntimeFailure) as e:
                log.warning(60018, f"checkpoint {path.name} unusable: {e.message}")
                continue
            if confirmed is not None and confirmed.pos is not None:
                # Safe when the checkpoint's LWN ended no later than the confirmed message's LWN began.
                # RAC (cp.threads): positions are (commit SCN, thread, ...); every commit analysed
                # before a RAC checkpoint has an SCN at most its own, so it must be below the confirmed one.
                if cp.threads:
                    if cp.scn >= confirmed.pos[0]:
                        continue
                elif (cp.seq, cp.offset) > (confirmed.pos[0], confirmed.pos[1]):
                    continue
            elif start_scn and scn > start_scn:
                continue
            return self._with_schema(cp)
        return None

    def _with_schema(self, cp: SchemaCheckpoint) -> SchemaCheckpoint | None:
        if cp.schema_ref_scn is None:
            return cp
        ref_path = self.state_dir / f"{self.name}-chkpt-{cp.schema_ref_scn}.json"
        try:
            ref = load_schema_checkpoint(ref_path, self.name)
        except (DataError, RuntimeFailure):
            log.warning(60019, f"reference schema {ref_path.name} missing for checkpoint {cp.scn}")
            return None
        return replace(cp, schema_scn=ref.schema_scn, rows=ref.rows, schema_ref_scn=None)

    # ----------------------------------------------------------------- writing schema checkpoints
    def due(self, redo_time_epoch: int, redo_bytes: int, force: bool) -> bool:
        """Whether a schema checkpoint should be written now (OLR's cadence rules)."""
        self._bytes_since += redo_bytes
        if force or not self._written:
            return True
        return (redo_time_epoch - self._last_time >= self.interval_s
                or self._bytes_since >= self.interval_mb * 1024 * 1024)

    def after_lwn(self, base: SchemaCheckpoint, cp: Checkpoint, parser: Any,
                  force: bool = False) -> tuple[SchemaCheckpoint, Path | None]:
        """The schema checkpoint step after an LWN (daemon and batch runs alike).

        ``base`` holds the database facts and the dictionary rows of the last checkpoint
        loaded or written; it is returned updated when dictionary tracking changed the
        schema (the tracker's rows replace it and the next file stores them in full,
        written at once so a restart from there reloads the new definitions). ``force``
        (and a log switch) writes regardless of ``interval-s``/``interval-mb``; a checkpoint
        SCN already written is not written again (OLR's ``lastCheckpointScn`` rule). Returns
        (base, path of the file written or None).
        """
        header = parser.header
        if header is None:
            return base, None
        lwn = parser.last_lwn
        redo_bytes = (lwn.end_block - lwn.first_block) * header.block_size if lwn else 0
        force = force or cp.redo_switch
        tracker = parser.opt.tracker
        if tracker is not None and tracker.pending:
            base = replace(base, rows=tracker.dictionary.snapshot(), schema_scn=tracker.schema_scn,
                           schema_ref_scn=None)
            self.schema_changed = True
            tracker.pending = False
            force = True
        if self._written and self._written[-1] == cp.scn:
            return base, None
        if not self.due(cp.time, redo_bytes, force):
            return base, None
        oldest = parser.buffer.oldest_begin()
        min_tran = MinTran(oldest[0], oldest[1], xid_text(oldest[2])) if oldest else None
        stamped = replace(base, resetlogs=header.resetlogs, activation=header.activation)
        path = self.write_schema(stamped, cp.scn, lwn.time if lwn else 0, cp.time, cp.seq, cp.offset, min_tran)
        return base, path

    def write_schema(self, base: SchemaCheckpoint, scn: int, time_raw: int, time_epoch: int, seq: int, offset: int,
                     min_tran: MinTran | None) -> Path | None:
        """Write ``<name>-chkpt-<scn>.json`` for the current position; WARN 60018 on failure."""
        full = (self._last_full_scn is None or self.schema_changed
                or self._refs_since_full >= self.force_interval)
        cp = replace(base, scn=scn, time=time_raw, seq=seq, offset=offset, min_tran=min_tran)
        if full:
            cp = replace(cp, schema_scn=base.schema_scn or scn, schema_ref_scn=None)
        else:
            cp = replace(cp, schema_ref_scn=self._last_full_scn, rows={})
        if not self.save_failures.allowed():
            return None
        try:
            path = write_schema_checkpoint(self.state_dir, cp)
        except RuntimeFailure as e:
            self.save_failures.failed(e)
            return None
        self.save_failures.succeeded()
        if full:
            self._last_full_scn, self._refs_since_full, self.schema_changed = scn, 0, False
        else:
            self._refs_since_full += 1
        if scn not in self._written:
            self._written.append(scn)
        self._last_time = time_epoch
        self._bytes_since = 0
        self._prune()
        return path

    def _prune(self) -> None:
        """Delete old schema checkpoints: keep the newest ``keep`` and one full schema behind them."""
        if self.keep_all or len(self._written) < self.keep:
            return
        files = sorted(list_schema_checkpoints(self.state_dir, self.name), reverse=True)
        kept = 0
        full_seen = False
        for scn, path in files:
            if kept < self.keep - 1:
                kept += 1
                if scn == self._last_full_scn:
                    full_seen = True
                continue
            if not full_seen:
                full_seen = scn == self._last_full_scn or scn not in self._written
                continue
            path.unlink(missing_ok=True)


def xid_text(xid: int) -> str:
    """An XID as OLR writes it in ``min-tran``: ``0xUUUU.SSS.QQQQQQQQ``."""
    return f"0x{xid >> 48:04x}.{(xid >> 32) & 0xFFFF:03x}.{xid & 0xFFFFFFFF:08x}"
