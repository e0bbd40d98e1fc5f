"""RAC: several redo threads (one per instance) sharing one cluster-wide SCN clock.

:class:`ClusterStream` looks like a :class:`~replicator.redogen.writer.RedoStream` to the
emitter, but routes every record to the redo thread of the instance running the current
statement. Each thread has its own LWNs, sequences, log switches and archived files (the
thread number is in block 1 +176 and in ``%t`` of the file names).

SCNs follow RAC's Lamport scheme in its strictest form (broadcast on commit, every message
carrying the SCN): one cluster clock that every record advances. With
``Scenario.scn_per_record`` (the default with several threads) a record's SCN depends only on
its place in the timeline, never on the thread or LWN it lands in, so the same timeline
generated into one thread commits at the very same SCNs -- the basis of the
single-thread-vs-RAC equivalence tests. LWNs of different threads still overlap in SCN
range and are written late (a thread's pending LWN waits for its next record), which is
what the reader's merge has to get right.

Every thread starts with a heartbeat LWN at the scenario's start SCN (a record with no
change vector), so an idle thread still has a log whose header bounds its SCNs.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from replicator.errors import ConfigError
from replicator.redogen.blocks import Record
from replicator.redogen.scenario import Event, Scenario
from replicator.redogen.writer import ArchivedLog, RedoStream, SinkFactory


class ClusterStream:
    """The redo threads of a RAC database; records go to the :attr:`current` thread."""

    def __init__(self, sc: Scenario, out_dir: Path, con_uid: int, sink: SinkFactory | None = None):
        if sc.threads < 1 or sc.idle_threads >= sc.threads:
            raise ConfigError(
                f"scenario: threads {sc.threads} must be >= 1 and more than idle-threads {sc.idle_threads}"
            )
        self.sc = sc
        self.con_uid = con_uid
        self.threads = {t: RedoStream(sc, out_dir, con_uid, sink, thread=t) for t in range(1, sc.threads + 1)}
        self.scn = sc.start_scn
        self.current = self.threads[1]
        self._rng = random.Random(sc.seed * 7919 + 17)
        self._session_thread: dict[int, int] = {}
        self._busy = sc.threads - sc.idle_threads
        self.moves = 0  # statements of an open transaction run on another instance than the previous one
        self.heartbeats = 0
        self._epoch = sc.start_epoch
        for stream in self.threads.values():  # heartbeat: every thread has a log from the start
            stream.scn = sc.start_scn - 1
            scn, sub = stream.open_record(sc.start_epoch)
            stream.add(Record(scn, sub, b""))
            stream.flush_lwn()
            stream.scn = sc.start_scn

    # -- which instance runs a statement ------------------------------------------------------
    def select(self, e: Event, session_thread: int, in_transaction: bool) -> None:
        """Make the thread of the instance running ``e`` current.

        The event's ``thread`` wins; otherwise the session stays where it was (its SessionSpec
        thread, or threads dealt round-robin by session id at first use), except that with
        ``migrate`` a statement of an open transaction may move to another instance (XA
        branches resumed elsewhere): the transaction then spans threads.
        """
        sid = e.session
        thread = e.thread
        if thread is None:
            thread = self._session_thread.get(sid) or session_thread or 1 + (sid - 1) % self._busy
            if in_transaction and self.sc.migrate and self._busy > 1 and self._rng.random() < self.sc.migrate:
                thread = self._rng.choice([t for t in range(1, self._busy + 1) if t != thread])
        if in_transaction and thread != self._session_thread.get(sid, thread):
            self.moves += 1
        if thread not in self.threads:
            raise ConfigError(f"timeline event {e.op}: thread {thread} does not exist (threads: {self.sc.threads})")
        self._session_thread[sid] = thread
        self.current = self.threads[thread]

    # -- the RedoStream interface the emitter uses ---------------------------------------------
    def open_record(self, epoch: int, commit: bool = False) -> tuple[int, int]:
        """SCN and sub-SCN of the next record of the current thread, from the cluster clock."""
        if epoch != self._epoch:
            self._epoch = epoch
            if self.sc.heartbeat_s:
                self._lgwr_timeouts(epoch)
        stream = self.current
        stream.scn = self.scn
        out = stream.open_record(epoch, commit)
        self.scn = stream.scn
        return out

    def _lgwr_timeouts(self, epoch: int) -> None:
        """The other instances' log writers: flush a pending LWN from an earlier second, and
        write a heartbeat LWN (one record without vectors, at the current SCN) when idle."""
        for stream in self.threads.values():
            if stream is self.current:
                continue
            if stream._lwn and stream._lwn_epoch < epoch:
                stream.flush_lwn()
            elif not stream._lwn and epoch - stream.last_epoch >= self.sc.heartbeat_s:
                stream.scn = self.scn - 1  # the heartbeat takes the current SCN, it does not advance it
                scn, sub = stream.open_record(epoch)
                stream.add(Record(scn, sub, b""))
                stream.flush_lwn()
                stream.scn = self.scn
                self.heartbeats += 1

    def add(self, record: Record, commit: bool = False) -> None:
        """Queue a record into the current thread's LWN."""
        self.current.add(record, commit)

    def flush_lwn(self) -> None:
        """Write every thread's pending LWN."""
        for stream in self.threads.values():
            stream.scn = self.scn
            stream.flush_lwn()

    def switch(self, thread: int | None = None) -> None:
        """Log switch of one thread, or of all (ALTER SYSTEM ARCHIVE LOG CURRENT)."""
        for t, stream in self.threads.items():
            if thread is None or t == thread:
                stream.scn = self.scn
                stream.switch()
                self.scn = max(self.scn, stream.scn)

    def close(self) -> list[ArchivedLog]:
        """Close every thread's log at the same next SCN; all logs, by thread then sequence."""
        self.flush_lwn()
        end_epoch = max(s.last_epoch for s in self.threads.values())
        for stream in self.threads.values():
            stream.scn = self.scn
            stream.last_epoch = end_epoch
            stream.close()
        return self.logs

    @property
    def on_lwn_written(self) -> Callable[[int, int], None] | None:
        """Called with (first SCN, last SCN) once an LWN of any thread is in its file."""
        return self.threads[1].on_lwn_written

    @on_lwn_written.setter
    def on_lwn_written(self, hook: Callable[[int, int], None] | None) -> None:
        for stream in self.threads.values():
            stream.on_lwn_written = hook

    @property
    def logs(self) -> list[ArchivedLog]:
        """The archived logs written so far, by thread then sequence."""
        return [log for stream in self.threads.values() for log in stream.logs]

    @property
    def bytes_written(self) -> int:
        """Redo bytes packed so far, all threads."""
        return sum(s.bytes_written for s in self.threads.values())

    @property
    def lwn_log(self) -> list[tuple[int, int, int, int, int]]:
        """LWN log of thread 1 (expected checkpoints are not predicted for RAC runs)."""
        return self.threads[1].lwn_log
