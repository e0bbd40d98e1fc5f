"""Online mode: a ring of online redo groups written as a running database writes them.

Each log sequence goes into the next group file of a fixed ring (``redo01.log``...): the
header is rewritten first (next SCN "none", NAB 0xFFFFFFFF: the log is current), then
every LWN is written in place as it is produced, optionally throttled to a MB/s rate, so a
reader sees the current log grow. Blocks past the write position still hold the previous
sequence of that group (a reader must stop there). At a log switch the header is closed
(next SCN, NAB) and the log is archived into an FRA-style directory
``<fra>/<DB>/archivelog/<YYYY_MM_DD>/``, after which the group may be reused.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from replicator.redogen import expected, schema
from replicator.redogen.blocks import seal
from replicator.redogen.fileheader import NO_SCN, LogHeader, file_header_block, redo_header_block
from replicator.redogen.generate import GenerationResult
from replicator.redogen.generator import RedoGenerator
from replicator.redogen.ids import redo_time_to_epoch
from replicator.redogen.scenario import Scenario
from replicator.redogen.writer import ArchivedLog

CURRENT_NAB = 0xFFFFFFFF  # OLR's "zero block": the log is still being written


class OnlineRing:
    """The online groups and the archive destination; a SinkFactory for :class:`RedoStream`."""

    def __init__(self, sc: Scenario, online_dir: Path, fra: Path, groups: int = 3, rate_mb_s: float = 0.0):
        if groups < 2:
            raise ValueError("an online redo ring needs at least 2 groups")
        self.sc = sc
        self.fra = fra
        if sc.threads > 1:  # RAC: a ring of groups per redo thread
            self.rings = {
                t: [online_dir / f"redo_t{t}_g{(t - 1) * groups + g + 1}.log" for g in range(groups)]
                for t in range(1, sc.threads + 1)
            }
        else:
            self.rings = {sc.thread: [online_dir / f"redo{g + 1:02d}.log" for g in range(groups)]}
        self.paths = [path for ring in self.rings.values() for path in ring]
        online_dir.mkdir(parents=True, exist_ok=True)
        for path in self.paths:  # fresh groups: preallocated, never written (zero blocks)
            with open(path, "wb") as fh:
                fh.truncate(sc.log_blocks * sc.block_size)
        self.rate = rate_mb_s * 1e6
        self._start = time.monotonic()
        self._bytes = 0
        self.current: Path | None = None
        # Called once every thread's first log has a readable header (before that a replicator
        # started against the ring finds no redo log at all: error 10009).
        self.on_ready: Callable[[], None] | None = None
        self._opened: set[int] = set()

    def __call__(self, name: str, header: LogHeader) -> OnlineLog:
        ring = self.rings[header.thread]
        path = ring[(header.sequence - self.sc.first_sequence) % len(ring)]
        header.file_number = self.paths.index(path) + 1
        self.current = path
        log = OnlineLog(self, path, name, header)
        if self.on_ready is not None and header.thread not in self._opened:
            self._opened.add(header.thread)
            if len(self._opened) == len(self.rings):
                self.on_ready()
        return log

    def throttle(self, nbytes: int) -> None:
        """Sleep so that redo is produced no faster than the configured rate."""
        self._bytes += nbytes
        if self.rate > 0:
            ahead = self._bytes / self.rate - (time.monotonic() - self._start)
            if ahead > 0:
                time.sleep(ahead)

    def archive_dir(self, next_time: int) -> Path:
        """FRA day directory of a log closed at redo time ``next_time``."""
        day = datetime.fromtimestamp(redo_time_to_epoch(next_time), tz=UTC).strftime("%Y_%m_%d")
        d = self.fra / self.sc.database / "archivelog" / day
        d.mkdir(parents=True, exist_ok=True)
        return d


class OnlineLog:
    """One sequence being written into an online group file."""

    def __init__(self, ring: OnlineRing, path: Path, archive_name: str, header: LogHeader):
        self.ring, self.path, self.archive_name, self.header = ring, path, archive_name, header
        self.next_block = 2
        self.fh = open(path, "r+b")
        bs = header.block_size
        current = replace(header, next_scn=NO_SCN, nab=CURRENT_NAB)
        self.fh.write(file_header_block(bs, ring.sc.log_blocks - 1, header.compat))
        self.fh.write(redo_header_block(current))
        self.fh.flush()

    def append(self, blocks: bytearray) -> None:
        """Write one LWN in place (sealed) and make it visible to readers, once it is due at the
        ring's rate (a wait after the write would make the LWN look written later than it was)."""
        seal(blocks, self.header.block_size)
        self.ring.throttle(len(blocks))
        os.pwrite(self.fh.fileno(), blocks, self.next_block * self.header.block_size)
        self.next_block += len(blocks) // self.header.block_size

    def close(self, next_scn: int, next_time: int) -> ArchivedLog:
        """Log switch: close the header, then archive the used part of the group."""
        h = self.header
        h.next_scn, h.next_time, h.nab = next_scn, next_time, self.next_block
        os.pwrite(self.fh.fileno(), redo_header_block(h), h.block_size)
        self.fh.close()
        target = self.ring.archive_dir(next_time) / self.archive_name
        with open(self.path, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
            dst.truncate(self.next_block * h.block_size)
            dst.seek(0)
            dst.write(file_header_block(h.block_size, self.next_block - 1, h.compat))
        return ArchivedLog(target, h.sequence, h.first_scn, next_scn, self.next_block, h.thread)


class OnlineRun:
    """:func:`generate_online` running on a daemon thread (a live database for tailing tests)."""

    def __init__(self, sc: Scenario, out_dir: str | Path, ready_timeout: float = 30.0, **kwargs: Any) -> None:
        """Start it and return once its online groups and config can be read (RuntimeError
        when that takes over ``ready_timeout`` seconds); ``kwargs`` go to generate_online."""
        ready = threading.Event()
        self.results: list[GenerationResult] = []
        self.errors: list[BaseException] = []

        def generate() -> None:
            try:
                self.results.append(generate_online(sc, out_dir, ready=ready, **kwargs))
            except BaseException as e:  # shown by the caller, not lost in a thread
                self.errors.append(e)
                raise

        self.thread = threading.Thread(target=generate, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + ready_timeout
        while not ready.wait(0.05):
            if self.errors:
                raise RuntimeError(f"the online generator failed: {self.errors[0]!r}") from self.errors[0]
            if not self.thread.is_alive() and not ready.is_set():
                break  # ended before every thread opened a log: the caller still gets its result
            if time.monotonic() > deadline:
                raise RuntimeError(f"the online generator was not ready within {ready_timeout} s")

    def finish(self, timeout: float) -> GenerationResult:
        """Wait for the end of the generation; its result (RuntimeError if it did not finish)."""
        self.thread.join(timeout)
        if not self.results:
            raise RuntimeError("the online generator did not finish")
        return self.results[0]


def generate_online(
    sc: Scenario,
    out_dir: str | Path,
    *,
    groups: int = 3,
    rate_mb_s: float = 0.0,
    final_switch: bool = False,
    with_expected: bool = True,
    ready: threading.Event | None = None,
    on_lwn_written: Callable[[int, int], None] | None = None,
) -> GenerationResult:
    """Run ``sc`` as a live database: online groups in ``out/online``, archives in ``out/fra``.

    Without ``final_switch`` the last log stays current (next SCN none), as on a running
    database. The config uses OLR's ``offline`` reader (online groups from the checkpoint,
    archives found under db-recovery-file-dest).
    """
    out = Path(out_dir).resolve()
    ring = OnlineRing(sc, *_fresh_dirs(out), groups, rate_mb_s)
    engine = RedoGenerator(sc, out, keep_expected=with_expected, sink=ring)
    engine.stream.on_lwn_written = on_lwn_written
    config_path, checkpoint = _start_files(sc, out, engine, ring)
    ring.on_ready = ready.set if ready is not None else None
    gen = engine.run(close=final_switch)  # without a final switch the last log stays current
    expected_path = None
    if with_expected:
        expected_path = out / "expected.json"
        expected_path.write_bytes(expected.render(gen, sc, engine.stream.lwn_log, shutdown=final_switch))
    return GenerationResult(
        out, gen.logs, config_path, checkpoint, out / "output.json", expected_path, dict(gen.stats, logs=len(gen.logs))
    )


def _fresh_dirs(out: Path) -> tuple[Path, Path]:
    """Empty online, fra and checkpoint directories under ``out``: (online, fra)."""
    for sub in ("online", "fra", "checkpoint"):
        shutil.rmtree(out / sub, ignore_errors=True)
    (out / "checkpoint").mkdir(parents=True)
    return out / "online", out / "fra"


def _start_files(sc: Scenario, out: Path, engine: RedoGenerator, ring: OnlineRing) -> tuple[Path, Path]:
    """The schema checkpoint and the config a replicator tails the ring with: (config, checkpoint)."""
    state = out / "checkpoint"
    # The checkpoint, the config and each thread's first log header exist before the first
    # LWN, so a replicator can start tailing while the "database" runs (``ready`` tells a
    # caller in another thread).
    doc = schema.schema_checkpoint(sc, engine)
    doc["online-redo"] = [{"group": i + 1, "path": [str(p)]} for i, p in enumerate(ring.paths)]
    doc["db-recovery-file-dest"] = str(out / "fra")
    checkpoint = state / f"{sc.name}-chkpt-{sc.start_scn}.json"
    schema.write_json(checkpoint, doc)
    config = schema.olr_config(sc, [], state, out / "output.json")
    reader = config["source"][0]["reader"]
    reader["type"] = "offline"
    del reader["redo-log"]
    config_path = out / "OpenLogReplicator.json"
    schema.write_json(config_path, config)
    return config_path, checkpoint


class OnlineRecording:
    """A live database's writes, generated ahead into memory and replayed into the ring at a
    rate (:func:`record_online`): the generator itself produces redo at a few MB/s, and in the
    process of a lag benchmark it would compete for the cores with what is measured."""

    def __init__(self, ring: OnlineRing, config_path: Path) -> None:
        self.ring = ring
        self.config_path = config_path
        # ("open", name, header) | ("lwn", sealed blocks, first SCN, last SCN)
        # | ("close", next SCN, next time, largest LWN)
        self.ops: list[tuple[Any, ...]] = []
        self.bytes = 0

    def __call__(self, name: str, header: LogHeader) -> _RecordedLog:
        self.ops.append(("open", name, replace(header)))  # as it is when the log is opened
        return _RecordedLog(self, name, header)

    def replay(
        self,
        rate_mb_s: float,
        *,
        ready: threading.Event | None = None,
        on_lwn_written: Callable[[int, int], None] | None = None,
        pause_after: int = 0,
        at_pause: Callable[[], None] | None = None,
    ) -> None:
        """Write the recorded logs into the ring at ``rate_mb_s`` (``ready`` is set once the
        first log's header is readable); once ``pause_after`` bytes of LWNs are written, call
        ``at_pause`` and go on at the rate from its return."""
        ring = self.ring
        ring.rate = rate_mb_s * 1e6
        ring.on_ready = ready.set if ready is not None else None
        ring._start, ring._bytes = time.monotonic(), 0
        log: OnlineLog | None = None
        written = 0
        for op in self.ops:
            if op[0] == "open":
                log = ring(op[1], op[2])
            elif op[0] == "lwn":
                assert log is not None
                log.append(bytearray(op[1]))
                if on_lwn_written is not None:
                    on_lwn_written(op[2], op[3])
                before, written = written, written + len(op[1])
                if at_pause is not None and before < pause_after <= written:
                    at_pause()
                    ring._start, ring._bytes = time.monotonic(), 0
            else:
                assert log is not None
                log.header.largest_lwn = op[3]
                log.close(op[1], op[2])


class _RecordedLog:
    """One sequence of an :class:`OnlineRecording` (what the redo stream writes to)."""

    def __init__(self, recording: OnlineRecording, name: str, header: LogHeader) -> None:
        self.recording, self.name, self.header = recording, name, header
        self.next_block = 2

    def append(self, blocks: bytearray) -> None:
        seal(blocks, self.header.block_size)
        self.recording.ops.append(("lwn", bytes(blocks), 0, 0))
        self.recording.bytes += len(blocks)
        self.next_block += len(blocks) // self.header.block_size

    def close(self, next_scn: int, next_time: int) -> ArchivedLog:
        h = self.header
        self.recording.ops.append(("close", next_scn, next_time, h.largest_lwn))
        # Where the replay archives it (the generator only counts the logs).
        return ArchivedLog(
            self.recording.ring.fra / self.name, h.sequence, h.first_scn, next_scn, self.next_block, h.thread
        )


def record_online(sc: Scenario, out_dir: str | Path, *, groups: int = 3) -> OnlineRecording:
    """Generate ``sc`` for an online ring in ``out/online`` (see :func:`generate_online`, without
    a final switch) into memory; :meth:`OnlineRecording.replay` writes it. The schema checkpoint
    and the config are written now (single-instance scenarios)."""
    out = Path(out_dir).resolve()
    ring = OnlineRing(sc, *_fresh_dirs(out), groups)
    recording = OnlineRecording(ring, out / "OpenLogReplicator.json")
    engine = RedoGenerator(sc, out, keep_expected=False, sink=recording)

    def written(first: int, last: int) -> None:
        op = recording.ops[-1]
        recording.ops[-1] = (op[0], op[1], first, last)

    engine.stream.on_lwn_written = written
    _start_files(sc, out, engine, ring)
    engine.run(close=False)
    return recording
