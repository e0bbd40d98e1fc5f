"""The ``zeromq`` writer: the stream protocol over a ZeroMQ PAIR socket (§4.3).

The writer binds ``uri``; a client connects its own PAIR socket. One ZeroMQ message is
one frame (no length prefix). libzmq attaches one peer at a time: the messages of a
second client are discarded by libzmq, so it never gets an answer, while the first one
is served on.

libzmq hides connections, so (as in OpenLogReplicator) the protocol, not the socket,
tells a returning client apart: its INFO stops streaming and its CONTINUE rewinds to
the oldest unconfirmed message. A socket monitor adds what OpenLogReplicator lacks:
when no connection at all is left, streaming stops at once. Heartbeats drop a vanished
peer, a handshake time limit (``HANDSHAKE_S``) drops a silent raw TCP connection, and
``ZMQ_MAXMSGSIZE`` makes libzmq disconnect a peer that sends a request longer than 1024
bytes. The same limits as the network writer's apply: at most ``MAX_CONNECTIONS`` TCP
connections are kept (more are shut down as they arrive), and a peer that has not
started replication (START/CONTINUE) within ``HANDSHAKE_S`` is disconnected, so junk or
idle peers cannot keep the PAIR slot from the real client.
"""

from __future__ import annotations

import socket
import time
from collections import deque

import zmq
from zmq.utils.monitor import recv_monitor_message

from replicator import log
from replicator.config.writer import ZeroMQWriterConfig
from replicator.errors import RuntimeFailure
from replicator.writers.stream import MAX_REQUEST
from replicator.writers.stream_writer import StreamWriter
from replicator.writers.transport import Transport, TransportEvents, Waker

STAGED_LIMIT = 1000  # frames held for a busy or absent peer before the pump waits
HANDSHAKE_S = 5.0  # ZMTP handshake, and then START/CONTINUE, within this (capped by client_timeout_s)
MAX_CONNECTIONS = 4  # TCP connections kept at once (one PAIR peer, a few reconnecting)
_EVENTS = zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED


class ZmqTransport(Transport):
    """A bound ZMQ_PAIR socket plus its monitor (see the module docstring)."""

    def __init__(self, uri: str, events: TransportEvents, client_timeout_s: float) -> None:
        self.uri = uri
        self.events = events
        self.client_timeout_s = client_timeout_s
        self.waker = Waker()
        self._context: zmq.Context[zmq.Socket[bytes]] | None = None
        self._socket: zmq.Socket[bytes] | None = None
        self._monitor: zmq.Socket[bytes] | None = None
        self._poller = zmq.Poller()
        self._staged: deque[bytes] = deque()
        self._connections: set[int] = set()
        self.handshake_s = min(HANDSHAKE_S, client_timeout_s)
        self._idle_since: float | None = None  # connected but not started since

    def open(self) -> None:
        """Create the context and socket, set the limits and bind (10064/10065/10066 on failure)."""
        try:
            self._context = zmq.Context()
            # Every socket of this context (the monitor's too) closes without lingering, so a
            # context reclaimed by the garbage collector can never block in term().
            self._context.setsockopt(zmq.LINGER, 0)
        except zmq.ZMQError as exc:
            raise RuntimeFailure(f"ZeroMQ context creation failed: {exc}", 10065) from exc
        try:
            sock = self._context.socket(zmq.PAIR)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.MAXMSGSIZE, MAX_REQUEST)
            ivl = max(1, int(self.client_timeout_s * 1000))
            sock.setsockopt(zmq.HANDSHAKE_IVL, max(1, int(self.handshake_s * 1000)))
            sock.setsockopt(zmq.HEARTBEAT_IVL, max(1, ivl // 6))
            sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, ivl)
        except zmq.ZMQError as exc:
            raise RuntimeFailure(f"ZeroMQ socket creation failed: {exc}", 10066) from exc
        try:
            sock.bind(self.uri)
        except zmq.ZMQError as exc:
            sock.close()
            raise RuntimeFailure(f"ZeroMQ bind to {self.uri} failed: {exc}", 10064) from exc
        self._socket = sock
        self._monitor = sock.get_monitor_socket(_EVENTS)
        self._poller.register(sock, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)
        self._poller.register(self.waker.fileno(), zmq.POLLIN)

    @property
    def address(self) -> str:
        """The bound endpoint (``tcp://127.0.0.1:PORT`` when port 0 was asked for)."""
        assert self._socket is not None
        endpoint = self._socket.getsockopt(zmq.LAST_ENDPOINT)
        return endpoint.decode() if isinstance(endpoint, bytes) else str(endpoint)

    def close(self) -> None:
        """Close the sockets and terminate the context."""
        if self._socket is not None:
            self._socket.disable_monitor()
            if self._monitor is not None:
                self._monitor.close(linger=0)
            self._socket.close(linger=0)
            self._socket = None
        if self._context is not None:
            self._context.term()
            self._context = None
        self.waker.close()

    def run_once(self, timeout: float) -> None:
        """Poll the socket, the monitor and the wake-up pipe once."""
        sock = self._socket
        assert sock is not None
        self._poller.modify(sock, zmq.POLLIN | (zmq.POLLOUT if self._staged else 0))
        ready = dict(self._poller.poll(max(0, int(timeout * 1000))))
        if self._monitor in ready:
            self._monitor_events()
        if ready.get(self.waker.fileno()):
            self.waker.drain()
        flags = ready.get(sock, 0)
        if flags & zmq.POLLIN:
            self._receive(sock)
        if flags & zmq.POLLOUT:
            self.flush_pending()
        self._check_handshake()

    def _check_handshake(self) -> None:
        """Disconnect peers that are connected but have not started replication in time."""
        if not self._connections or self.events.idle_allowed():
            self._idle_since = None
            return
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        elif now - self._idle_since >= self.handshake_s:
            self._idle_since = None
            log.warning(60081, f"ZeroMQ peers dropped: no START or CONTINUE within {self.handshake_s:.0f}s")
            for fd in list(self._connections):
                _shutdown(fd)

    def _receive(self, sock: zmq.Socket[bytes]) -> None:
        for _ in range(1024):  # bounded, so sending is not starved by a chatty client
            try:
                frame = sock.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            self.events.on_request(frame)

    def _monitor_events(self) -> None:
        assert self._monitor is not None
        while self._monitor.poll(0):
            event = recv_monitor_message(self._monitor)
            kind, fd = event["event"], int(event["value"])
            if kind == zmq.EVENT_ACCEPTED:
                if len(self._connections) >= MAX_CONNECTIONS:
                    _shutdown(fd)  # libzmq then closes it (DISCONNECTED for an fd never counted)
                    continue
                if not self._connections:
                    self.session += 1
                    self.events.on_connect()
                self._connections.add(fd)
            elif kind == zmq.EVENT_DISCONNECTED:
                self._connections.discard(fd)
                if not self._connections:
                    self._staged.clear()
                    self.events.on_disconnect("no ZeroMQ connection left")

    def connected(self) -> bool:
        """True while any TCP connection to the socket exists."""
        return bool(self._connections)

    def can_send(self) -> bool:
        """True while fewer than STAGED_LIMIT frames wait for the peer."""
        return len(self._staged) < STAGED_LIMIT

    def send(self, data: bytes) -> None:
        """Stage one frame; it leaves when the peer's pipe has room."""
        self._staged.append(data)
        if len(self._staged) == 1:
            self.flush_pending()

    def flush_pending(self) -> None:
        """Hand staged frames to libzmq until its high-water mark is reached."""
        sock = self._socket
        while self._staged and sock is not None:
            try:
                sock.send(self._staged[0], zmq.NOBLOCK, copy=len(self._staged[0]) < 65536)
            except zmq.Again:
                return
            self._staged.popleft()

    def drop_client(self, reason: str) -> None:
        """libzmq cannot drop one peer: forget staged frames and stop streaming."""
        log.warning(60081, f"ZeroMQ client dropped: {reason}")
        self._staged.clear()
        self.events.on_disconnect(reason)


def _shutdown(fd: int) -> None:
    """End one of libzmq's TCP connections: shut down a duplicate of its descriptor (libzmq
    keeps and closes its own); libzmq sees the end and disconnects that peer."""
    try:
        dup = socket.fromfd(fd, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return
    try:
        dup.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already gone
    finally:
        dup.close()


class ZeroMQWriter(StreamWriter):
    """``type: zeromq``: serves one ZMQ_PAIR client at ``uri``."""

    type_name = "zeromq"

    def make_transport(self) -> Transport:
        """A bound PAIR socket for the configured endpoint."""
        config: ZeroMQWriterConfig = self.config
        return ZmqTransport(config.uri, self, self.client_timeout_s)
