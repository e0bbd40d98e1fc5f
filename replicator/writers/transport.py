"""What a stream writer needs from its transport, the framing a transport speaks, a wake-up.

A transport is driven by the writer's I/O thread only: :meth:`Transport.run_once` waits
for socket events (at most ``timeout`` seconds) and reports them to the
:class:`TransportEvents` the writer implements. Only :meth:`Transport.wakeup` may be
called from another thread. Both stream writers use one listener
(:mod:`replicator.writers.listener`); what differs is the :class:`Wire` of each
connection: 4-byte length prefixes (network) or ZMTP (zeromq).
"""

from __future__ import annotations

import socket
from abc import ABC, abstractmethod
from typing import Any, Protocol


class TransportEvents(Protocol):
    """Callbacks from a transport to the protocol, all on the I/O thread."""

    def on_connect(self) -> None:
        """A client connected (a new session begins)."""

    def on_request(self, data: bytes) -> None:
        """One complete request frame arrived."""

    def on_disconnect(self, reason: str) -> None:
        """The client went away or was dropped."""

    def idle_allowed(self) -> bool:
        """True while a silent client is expected (streaming, or its start is booting)."""
        ...


class WireError(Exception):
    """The client broke the wire protocol (or failed to authenticate): close its connection.

    ``code`` and ``message`` are logged (WARN); ``farewell`` is sent first if it fits
    (ZMTP's ERROR command).
    """

    def __init__(self, code: int, message: str, reason: str, farewell: bytes = b"") -> None:
        super().__init__(message)
        self.code, self.message, self.reason, self.farewell = code, message, reason, farewell


class Wire(Protocol):
    """Framing (and handshake) of one client connection; a new one per connection."""

    def feed(self, data: bytes) -> list[bytes]:
        """Take received bytes; return the request frames they complete (raises WireError)."""
        ...

    def take_output(self) -> bytes:
        """Bytes the wire itself must send now (greeting, handshake, PONG): b"" if none."""
        ...

    def header(self, size: int) -> bytes:
        """The prefix of an outgoing frame of ``size`` bytes."""
        ...

    def frame_run(self, run: Any, first: int, stop: int) -> bytes:
        """Messages [first, stop) of a native MessageRun as outgoing frames, in one buffer
        (the bytes :meth:`header` and each body would make)."""
        ...

    @property
    def partial(self) -> bool:
        """True while an incomplete frame (or greeting) is buffered."""
        ...


class Transport(ABC):
    """One listening endpoint serving at most one client at a time."""

    #: incremented for every new client; lets deferred replies find their session
    session = 0

    @abstractmethod
    def open(self) -> None:
        """Bind and listen; raises RuntimeFailure (10061/10064) on failure."""

    @abstractmethod
    def run_once(self, timeout: float) -> None:
        """Wait for events up to ``timeout`` seconds and dispatch them."""

    @abstractmethod
    def connected(self) -> bool:
        """True while a client is connected."""

    @abstractmethod
    def can_send(self) -> bool:
        """True when another frame may be queued without growing buffers past the limit."""

    @abstractmethod
    def send(self, data: bytes) -> None:
        """Queue one frame for the current client (dropped if none is connected)."""

    def send_many(self, frames: list[bytes]) -> None:
        """Queue frames in order (the pump's batches). Default: one :meth:`send` each."""
        for data in frames:
            self.send(data)

    def send_run(self, run: Any, first: int, stop: int) -> None:
        """Queue messages [first, stop) of a native MessageRun as frames, in order."""
        raise NotImplementedError(f"{type(self).__name__} does not take MessageRuns")

    def flush_pending(self) -> None:
        """Push queued frames to the socket now (after each pump step). Default: nothing."""

    @abstractmethod
    def drop_client(self, reason: str) -> None:
        """Disconnect the current client (reported through on_disconnect)."""

    @abstractmethod
    def close(self) -> None:
        """Release every socket."""

    @property
    @abstractmethod
    def address(self) -> str:
        """The bound endpoint (with the real port when 0 was asked for)."""

    def wakeup(self) -> None:
        """Interrupt a blocking :meth:`run_once` (thread-safe)."""
        self.waker.wake()

    waker: Waker


class Waker:
    """A socket pair: another thread writes one byte to end the I/O thread's poll."""

    def __init__(self) -> None:
        self.reader, self.writer = socket.socketpair()
        self.reader.setblocking(False)
        self.writer.setblocking(False)
        self._pending = False

    def fileno(self) -> int:
        """The descriptor to poll for reading."""
        return self.reader.fileno()

    def wake(self) -> None:
        """Make the reader readable (one byte is enough; extra wakes are coalesced)."""
        if self._pending:
            return
        self._pending = True
        try:
            self.writer.send(b"\0")
        except (BlockingIOError, OSError):
            pass  # already full of wake bytes: the poll will end anyway

    def drain(self) -> None:
        """Consume the wake bytes (on the I/O thread, after the poll).

        The flag is cleared after reading: a wake coalesced in between is harmless because
        the I/O thread looks for work right after draining.
        """
        try:
            while self.reader.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass
        self._pending = False

    def close(self) -> None:
        """Close both ends."""
        self.reader.close()
        self.writer.close()
