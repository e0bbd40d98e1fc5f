"""The stream writer base: a synchronous writer API over a network I/O thread.

The pipeline calls :meth:`StreamWriter.write` on its own thread; messages go into the
bounded :class:`~replicator.writers.queue.ConfirmQueue` and the writer's I/O thread sends
them to the connected client and handles its requests (:mod:`replicator.writers.stream`).
When the queue holds ``queue-size`` unconfirmed messages, ``write`` waits; the I/O thread
keeps serving CONFIRMs meanwhile, so the wait ends as soon as the client confirms and
can never deadlock against the network. Confirmations reach ``on_confirm`` on the
caller's thread, in order, from ``write``, ``flush``, ``connect`` and ``close``.

Native MessageRuns (:meth:`StreamWriter.write_runs`) go into the queue as one entry each
and onto the wire as one buffer of frames built in C (``Wire.frame_run``): the bytes are
those of the run's messages written one by one. A client confirms by message, so a CONFIRM
or CONTINUE naming a message inside a run confirms the run through that message
(``on_confirm`` names it; the daemon's confirmations split the run there) and keeps the
rest queued for redelivery.

Start-up, as in OpenLogReplicator: :meth:`StreamWriter.connect` blocks until a client
sends START (or CONTINUE with a position), calls ``boot(request)`` -- the application's
chance to position the reader; it returns the first data SCN or raises a
:class:`~replicator.errors.ReplicatorError`, which the client sees as FAILED_START --
and returns the request (also kept in :attr:`StreamWriter.start_request`). After
:meth:`StreamWriter.restore` (a checkpoint position exists) it returns at once.
"""

from __future__ import annotations

import threading
import time
from abc import abstractmethod
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any

from replicator import log
from replicator.errors import ReplicatorError, RuntimeFailure
from replicator.events import Message
from replicator.proto import olr_pb2 as pb
from replicator.writers.base import ConfirmCallback, Writer
from replicator.writers.capabilities import WholeRunWriter
from replicator.writers.queue import AnyEntry, ConfirmQueue, Entry, RunEntry
from replicator.writers.stream import REPLICATING, StartRequest, StreamProtocol
from replicator.writers.transport import Transport

BootFn = Callable[[StartRequest], int]
SEND_BATCH = 256  # messages moved from the queue to the transport per step (whole runs at least one)


class StreamWriter(Writer, WholeRunWriter):
    """Common part of the ``network`` and ``zeromq`` writers (see the module docstring)."""

    # A run is one queue entry and one confirmation, unless a client names a message inside it.
    writes_runs_whole = True

    def __init__(
        self,
        config: Any,
        on_confirm: ConfirmCallback,
        *,
        show_checkpoints: bool = True,
        database: str = "",
        client_timeout_s: float = 30.0,
        drain_timeout_s: float = 10.0,
    ) -> None:
        super().__init__(config, on_confirm, show_checkpoints=show_checkpoints)
        self.queue = ConfirmQueue(config.queue_size)
        self.protocol = StreamProtocol(self.queue, database, self._reply)
        self.client_timeout_s = client_timeout_s  # a silent or half-sent client is dropped after this
        self.drain_timeout_s = drain_timeout_s  # close() waits this long for the last confirmations
        self.start_request: StartRequest | None = None
        self._poll_s = config.poll_interval_us / 1_000_000
        self._transport: Transport | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._open_lock = threading.Lock()
        self._closed = False
        self._address = ""
        self._starts: deque[tuple[StartRequest, int]] = deque()
        self._commands: deque[Callable[[], None]] = deque()
        self._io_error: BaseException | None = None
        self._waiting_logged = False
        # Set by the daemon (its stop event): a write waiting for room in a full queue gives up
        # when it is set, and from then on nothing more is queued (see _put).
        self._gave_up = False

    @abstractmethod
    def make_transport(self) -> Transport:
        """Build (not open) the transport for this writer's ``uri``."""

    # -- caller-thread API -------------------------------------------------------------------

    @property
    def address(self) -> str:
        """The bound endpoint; opens the listener if needed (port 0 becomes a real port)."""
        if not self._address:
            self.open()
        return self._address

    def restore(self, scn: int, idx: int, first_data_scn: int = 0, skip: bool = True) -> None:
        """Resume from a saved position (internal idx): replicate at once, skip what it covers
        (``skip=False``: the caller restarts exactly after it and skips nothing itself)."""
        self.protocol.restore((scn, idx), first_data_scn, skip)

    def open(self) -> None:
        """Bind the endpoint and start the I/O thread (idempotent and thread-safe)."""
        with self._open_lock:
            if self._address:
                return  # opened before (maybe closed since: the address stays readable)
            if self._closed:
                raise RuntimeFailure(f"{self.type_name} writer is closed", 10061)
            transport = self.make_transport()
            transport.open()
            self._transport = transport
            self._address = transport.address
            self._thread = threading.Thread(target=self._io_main, name=f"{self.type_name}-writer", daemon=True)
            self._thread.start()
        log.info(f"{self.type_name} writer listening on {transport.address}")

    def connect(  # type: ignore[override]  # also returns the START it booted from (Writer.connect: None)
        self, boot: BootFn | None = None, timeout: float | None = None
    ) -> StartRequest | None:
        """Open, then wait for a client's START/CONTINUE and boot (see the module docstring).

        Returns None at once after :meth:`restore`. Raises RuntimeFailure 10091 when no
        client asked within ``timeout`` seconds (None: wait forever).
        """
        self.open()
        if self.protocol.status == REPLICATING:
            return None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            start, session = self._next_start(deadline)
            try:
                first = boot(start) if boot is not None else start.first_data_scn
            except ReplicatorError as exc:
                log.error(exc.code, f"starting replication failed: {exc.message}")
                self._call(partial(self.protocol.finish_start, False, 0, session))
                continue
            self._call(partial(self.protocol.finish_start, True, first, session))
            self.start_request = start
            return start

    def _next_start(self, deadline: float | None) -> tuple[StartRequest, int]:
        with self._cond:
            while not self._starts:
                self._check_io()
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise RuntimeFailure("no client requested replication (START or CONTINUE) in time", 10091)
                self._cond.wait(0.5 if left is None else min(left, 0.5))
            return self._starts.popleft()

    def write(self, batch: list[Message]) -> None:
        """Queue ``batch`` for the client; waits while ``queue-size`` messages are unconfirmed."""
        self._check_io()
        self._put([Entry(m, silent=not self.must_send(m)) for m in batch])

    def write_runs(self, batch: list[Any]) -> None:
        """As :meth:`write` for Messages and native MessageRuns (one queue entry per run)."""
        self._check_io()
        self._put(
            [
                Entry(item, silent=not self.must_send(item)) if type(item) is Message else RunEntry(item)
                for item in batch
            ]
        )

    def _put(self, entries: list[AnyEntry]) -> None:
        """Queue ``entries``, waiting while the queue is full (a run may go in in parts).

        A stop (:attr:`stopping`) during that wait leaves the rest unqueued, and every later
        write too: those messages were never delivered nor confirmed, so the confirmed
        position stays before them and a restart reads them from the redo again. (Queuing
        a later one after that gap would let a client's CONFIRM of it confirm the gap.)"""
        if self._gave_up:
            return
        stopping = self.stopping
        while entries:
            taken = self.queue.put_many(entries)
            if taken:
                entries = entries[taken:]
                self._wake()
                continue
            if not self._waiting_logged:
                log.warning(
                    60031,
                    f"output queue full ({self.queue.capacity} unconfirmed messages), "
                    "waiting for the client to confirm",
                )
                self._waiting_logged = True
            while not self.queue.wait_for_space(self._poll_s):
                self._deliver()
                self._check_io()
                if stopping is not None and stopping.is_set():
                    self._gave_up = True
                    log.info(
                        f"stopping with the output queue full ({self.queue.capacity} unconfirmed "
                        "messages): the messages not queued are read from the redo again after a restart"
                    )
                    return
        if len(self.queue) < self.queue.capacity // 2:
            self._waiting_logged = False  # log the next stall again, not every full-queue wait
        self._deliver()

    def send(self, message: Message) -> None:
        """Queue one message (see :meth:`write`)."""
        self.write([message])

    def flush(self) -> None:
        """Report confirmations that arrived; raise a failure of the I/O thread."""
        self._deliver()
        self._check_io()

    def close(self) -> None:
        """Wait up to ``drain_timeout_s`` for the client to confirm everything, then stop."""
        with self._open_lock:
            if self._closed:
                return
            self._closed = True
        if self._thread is not None:
            deadline = time.monotonic() + self.drain_timeout_s
            while len(self.queue) and self._io_error is None and time.monotonic() < deadline:
                self.queue.wait_empty(min(self._poll_s, max(0.0, deadline - time.monotonic())))
                self._deliver()
            self._stop.set()
            self._wake()
            self._thread.join(timeout=5)
            self._thread = None
        if self._transport is not None:
            self._transport.close()
            self._transport = None
        self._deliver()
        left = len(self.queue)
        if left:
            log.warning(
                60083,
                f"{left} messages were not confirmed by the client before shutdown; "
                "they are sent again after a restart",
            )

    # -- helpers -----------------------------------------------------------------------------

    def _deliver(self) -> None:
        for entry in self.queue.take_released():
            if isinstance(entry, RunEntry):
                self.messages_confirmed += entry.count
                self.on_confirm(*entry.last)
            else:
                self.confirm(entry.message)

    def _check_io(self) -> None:
        if self._io_error is not None:
            error = self._io_error
            if isinstance(error, ReplicatorError):
                raise error
            raise RuntimeFailure(f"{self.type_name} writer I/O thread failed: {error!r}", 10061) from error

    def _wake(self) -> None:
        if self._transport is not None:
            self._transport.wakeup()

    def _call(self, command: Callable[[], None]) -> None:
        """Run ``command`` on the I/O thread (protocol state belongs to it)."""
        self._commands.append(command)
        self._wake()

    # -- I/O thread --------------------------------------------------------------------------

    def _io_main(self) -> None:
        transport = self._transport
        assert transport is not None
        try:
            while not self._stop.is_set():
                transport.run_once(self._poll_s)
                while self._commands:
                    self._commands.popleft()()
                self._pump(transport)
                transport.flush_pending()
        except Exception as exc:  # noqa: BLE001 - reported to the caller thread, which raises it
            self._io_error = exc
            log.error(getattr(exc, "code", 10061), f"{self.type_name} writer stopped: {exc!r}")
            log.logger.debug("I/O thread failure", exc_info=True)
        finally:
            with self._cond:
                self._cond.notify_all()

    def _pump(self, transport: Transport) -> None:
        """Move queued messages to the client while it is streaming and the transport has room."""
        if not self.protocol.streaming or not transport.connected():
            return
        while transport.can_send():
            entries = self.queue.take_unsent(SEND_BATCH)
            if not entries:
                return
            frames: list[bytes] = []
            for entry in entries:
                if isinstance(entry, RunEntry):
                    if frames:
                        self._send_frames(transport, frames)
                        frames = []
                    transport.send_run(entry.run, entry.first, entry.stop)
                    self.messages_sent += entry.count
                    self.bytes_sent += entry.body_bytes
                else:
                    frames.append(entry.message.data)
            if frames:
                self._send_frames(transport, frames)

    def _send_frames(self, transport: Transport, frames: list[bytes]) -> None:
        transport.send_many(frames)
        self.messages_sent += len(frames)
        self.bytes_sent += sum(map(len, frames))

    def _reply(self, response: pb.RedoResponse) -> None:
        if self._transport is not None:
            self._transport.send(response.SerializeToString())

    # TransportEvents, called by the transport on the I/O thread.

    def on_connect(self) -> None:
        """A client connected."""
        log.info(f"client connected to {self.type_name} writer")

    def on_request(self, data: bytes) -> None:
        """Handle one request; a new start request wakes :meth:`connect`."""
        assert self._transport is not None
        session = self._transport.session
        start = self.protocol.handle(data, session)
        if start is not None:
            with self._cond:
                self._starts.append((start, session))
                self._cond.notify_all()

    def on_disconnect(self, reason: str) -> None:
        """The client left: stop streaming; unconfirmed messages are sent again on CONTINUE."""
        self.protocol.stop_streaming()
        log.warning(10056, f"client disconnected: {reason}")

    def idle_allowed(self) -> bool:
        """Whether a silent client may stay connected (streaming or booting its start)."""
        return self._transport is not None and self.protocol.idle_allowed(self._transport.session)
