"""The one-client listener both stream writers serve from (TCP, or a Unix socket for ZeroMQ ipc://).

What travels on a connection is a :class:`~replicator.writers.transport.Wire` made for it
(4-byte length prefixes for ``network``, ZMTP for ``zeromq``); the rest is common.

One client at a time. A new connection replaces the current client unless that one has
completed its handshake (START/CONTINUE accepted: streaming, or its start is booting)
and is still there; then the new one is closed at once (WARN 60080). So a peer that
connects and never starts, sends INFO now and then, or drips a request byte by byte
cannot hold the slot: the real client takes it over, and such a peer is dropped anyway
once it has not handshaken within ``handshake_s`` or left a request incomplete for
``REQUEST_S`` (10056). A ZeroMQ client turned away reconnects by itself (libzmq retries
every 100 ms), so it gets in as soon as the slot is free; repeated WARNs about it are
throttled. Half-open connections are dropped by TCP keepalive and ``TCP_USER_TIMEOUT``
while streaming, and by ``client_timeout_s`` otherwise. Unlike OpenLogReplicator the
listener does not set SO_REUSEPORT, so a second process cannot share the port.
"""

from __future__ import annotations

import os
import selectors
import socket
import ssl
import stat
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from replicator import log
from replicator.config.exposure import EXPOSURE_CODE, is_loopback
from replicator.errors import RuntimeFailure
from replicator.writers.transport import Transport, TransportEvents, Waker, Wire, WireError

OUT_LIMIT = 4 * 1024 * 1024  # bytes queued for the socket before the pump waits
IOV_MAX = 512  # buffers per sendmsg call
COPY_LIMIT = 16384  # frames below this are copied into their batch's buffer, larger ones sent from their own
REQUEST_S = 5.0  # a request's bytes must all arrive within this of its first byte
THROTTLE_S = 10.0  # a repeated WARN about turned-away clients is logged once per this


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a listener binds: ``host`` and ``port`` (TCP), or a Unix socket ``path``."""

    host: str = ""
    port: str = ""
    path: str = ""
    scheme: str = ""  # how :attr:`Listener.address` is written: "" (host:port), "tcp://", "ipc://"

    def display(self, host: str, port: int | str) -> str:
        """The endpoint as clients name it, with the port actually bound."""
        if self.path:
            return f"{self.scheme}{self.path}"
        shown = f"[{host}]" if ":" in host and self.scheme else host
        return f"{self.scheme}{shown}:{port}"


class _Throttle:
    """Logs a WARN at most once per THROTTLE_S, telling how many were held back."""

    def __init__(self) -> None:
        self._last: dict[int, float] = {}
        self._held: dict[int, int] = {}

    def warning(self, code: int, message: str) -> None:
        now = time.monotonic()
        if now - self._last.get(code, -THROTTLE_S) < THROTTLE_S:
            self._held[code] = self._held.get(code, 0) + 1
            return
        held = self._held.pop(code, 0)
        self._last[code] = now
        log.warning(code, message + (f" ({held} more like it in the last {THROTTLE_S:.0f}s)" if held else ""))


class Listener(Transport):
    """A non-blocking listener with one client connection (see the module docstring)."""

    def __init__(
        self,
        endpoint: Endpoint,
        events: TransportEvents,
        wire: Callable[[], Wire],
        *,
        label: str,
        client_timeout_s: float,
        handshake_s: float,
        authenticated: bool,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.events = events
        self.label = label  # "network writer", "ZeroMQ writer"
        self._new_wire = wire
        self.client_timeout_s = client_timeout_s
        self.handshake_s = min(handshake_s, client_timeout_s)
        self.request_s = min(REQUEST_S, client_timeout_s)
        self._authenticated = authenticated
        self._tls = tls
        self._tls_pending = False  # TLS handshake of the current client not finished
        self._handshaken = False  # the client's START/CONTINUE was accepted at least once
        self._connected_at = 0.0
        self._request_started = 0.0  # when the first byte of the pending request arrived
        self.waker = Waker()
        self._selector = selectors.DefaultSelector()
        self._listener: socket.socket | None = None
        self._client: socket.socket | None = None
        self._wire: Wire | None = None
        self._peer = ""
        self._out: deque[memoryview] = deque()
        self._out_bytes = 0
        self._last_activity = 0.0
        self._throttle = _Throttle()

    # -- setup -------------------------------------------------------------------------------

    def open(self) -> None:
        """Bind and listen (backlog 1, as OpenLogReplicator); RuntimeFailure 10061 on failure."""
        sock = self._bind_unix() if self.endpoint.path else self._bind_tcp()
        sock.setblocking(False)
        self._listener = sock
        self._selector.register(sock, selectors.EVENT_READ, "listen")
        self._selector.register(self.waker, selectors.EVENT_READ, "wake")

    def _bind_tcp(self) -> socket.socket:
        host, port = self.endpoint.host, self.endpoint.port
        try:
            infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as exc:
            raise RuntimeFailure(f"{self.label}: cannot resolve {host}:{port}: {exc}", 10061) from exc
        error: OSError | None = None
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(address)
                sock.listen(1)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            if not self._authenticated and not is_loopback(str(address[0])):
                log.warning(
                    EXPOSURE_CODE,
                    f"{self.label} listens on {address[0]}, beyond loopback, without "
                    "auth-token: anyone who reaches it reads every change",
                )
            return sock
        raise RuntimeFailure(f"{self.label}: cannot listen on {host}:{port}: {error}", 10061)

    def _bind_unix(self) -> socket.socket:
        path = self.endpoint.path
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)  # a socket left by an earlier run (libzmq does the same)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise RuntimeFailure(f"{self.label}: cannot replace {path}: {exc}", 10061) from exc
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(path)
            sock.listen(1)
        except OSError as exc:
            sock.close()
            raise RuntimeFailure(f"{self.label}: cannot listen on {path}: {exc}", 10061) from exc
        return sock

    @property
    def address(self) -> str:
        """The endpoint actually bound (with the real port when 0 was asked for)."""
        assert self._listener is not None
        if self.endpoint.path:
            return self.endpoint.display("", "")
        host, port = self._listener.getsockname()[:2]
        return self.endpoint.display(host, port)

    def close(self) -> None:
        """Close the client, the listener and the selector."""
        if self._client is not None:
            self._close_client()
        if self._listener is not None:
            self._selector.unregister(self._listener)
            self._listener.close()
            self._listener = None
            if self.endpoint.path:
                try:
                    os.unlink(self.endpoint.path)
                except OSError:
                    pass
        self._selector.close()
        self.waker.close()

    # -- events ------------------------------------------------------------------------------

    def run_once(self, timeout: float) -> None:
        """Poll once; client events are handled before new connections (see _accept)."""
        events = self._selector.select(timeout)
        events.sort(key=lambda item: item[0].data != "client")
        for key, mask in events:
            if key.data == "client" and self._client is not None:
                if mask & selectors.EVENT_READ or self._tls_pending:
                    self._read()
                    while (
                        self._client is not None
                        and isinstance(self._client, ssl.SSLSocket)
                        and self._client.pending()
                        and self._read()
                    ):
                        pass  # decrypted bytes already buffered: the selector will not report them
                if mask & selectors.EVENT_WRITE and self._client is not None:
                    self._flush()
            elif key.data == "listen":
                self._accept()
            elif key.data == "wake":
                self.waker.drain()
        self._check_timeouts()

    def _accept(self) -> None:
        assert self._listener is not None
        try:
            sock, peer = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        peer_name = _peer(peer) if not self.endpoint.path else "local"
        if self._client is not None and self._client_alive():
            if self.events.idle_allowed():
                self._throttle.warning(
                    60080, f"client {peer_name} rejected: another client ({self._peer}) is connected"
                )
                sock.close()
                return
            self.drop_client(f"replaced by {peer_name} (it had not started replication)")
        sock.setblocking(False)
        if not self.endpoint.path:
            _tune(sock)
        if self._tls is not None:
            try:
                sock = self._tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            except (ssl.SSLError, OSError) as exc:
                self._throttle.warning(60103, f"client {peer_name}: TLS setup failed: {exc}")
                sock.close()
                return
            self._tls_pending = True
        self._client, self._peer = sock, peer_name
        self._wire = self._new_wire()
        self._last_activity = self._connected_at = time.monotonic()
        self._handshaken = False
        self.session += 1
        self._selector.register(sock, selectors.EVENT_READ, "client")
        self.events.on_connect()
        self._send_wire_output()

    def _client_alive(self) -> bool:
        """Read what the current client sent (a last CONFIRM counts) and see if it closed."""
        while self._client is not None:
            if not self._read():
                break
        return self._client is not None

    def _read(self) -> bool:
        """Read and dispatch one chunk; False when nothing more is readable now."""
        assert self._client is not None and self._wire is not None
        if self._tls_pending and not self._tls_handshake():
            return False
        try:
            data = self._client.recv(65536)
        except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return False
        except OSError as exc:
            self.drop_client(f"receive failed: {exc}")
            return False
        if not data:
            self.drop_client("connection closed by the client")
            return False
        now = time.monotonic()
        wire = self._wire
        if not wire.partial:
            self._request_started = now
        self._last_activity = now
        try:
            frames = wire.feed(data)
        except WireError as exc:
            self._throttle.warning(exc.code, f"client {self._peer}: {exc.message}; closing the connection")
            if exc.farewell:
                self._try_send_now(exc.farewell)
            self.drop_client(exc.reason)
            return False
        self._send_wire_output()
        for frame in frames:
            self._request_started = now
            self.events.on_request(frame)
            if self._client is None or self._wire is not wire:
                return False  # the request ended this connection
        return self._client is not None

    def _tls_handshake(self) -> bool:
        """Advance the TLS handshake; True once it is done."""
        client = self._client
        assert isinstance(client, ssl.SSLSocket)
        try:
            client.do_handshake()
        except ssl.SSLWantReadError:
            self._selector.modify(client, selectors.EVENT_READ, "client")
            return False
        except ssl.SSLWantWriteError:
            self._selector.modify(client, selectors.EVENT_READ | selectors.EVENT_WRITE, "client")
            return False
        except (ssl.SSLError, OSError) as exc:
            self._throttle.warning(60103, f"client {self._peer}: TLS handshake failed: {exc}")
            self.drop_client("TLS handshake failed")
            return False
        self._tls_pending = False
        self._selector.modify(client, selectors.EVENT_READ | (selectors.EVENT_WRITE if self._out else 0), "client")
        return True

    def _check_timeouts(self) -> None:
        if self._client is None or self._wire is None:
            return
        now = time.monotonic()
        partial = self._wire.partial
        if partial and now - self._request_started >= self.request_s:
            self.drop_client(f"request incomplete for {now - self._request_started:.1f}s")
            return
        if not self._handshaken:
            if self.events.idle_allowed():
                self._handshaken = True
            elif now - self._connected_at >= self.handshake_s:
                self.drop_client(f"no START or CONTINUE within {self.handshake_s:.0f}s")
                return
        idle = now - self._last_activity
        if idle < self.client_timeout_s:
            return
        if partial:
            self.drop_client(f"incomplete request for {idle:.1f}s")
        elif not self.events.idle_allowed():
            self.drop_client(f"no request for {idle:.1f}s")

    # -- sending -----------------------------------------------------------------------------

    def connected(self) -> bool:
        """True while a client socket is open."""
        return self._client is not None

    def can_send(self) -> bool:
        """True while less than OUT_LIMIT bytes wait for the socket."""
        return self._out_bytes < OUT_LIMIT

    def send(self, data: bytes) -> None:
        """Queue one frame and push what the socket accepts now."""
        if self._client is None or self._wire is None:
            return
        header = self._wire.header(len(data))
        self._out.append(memoryview(header))
        if data:  # an empty view would make sendmsg return 0 forever (READY replies are empty)
            self._out.append(memoryview(data))
        self._out_bytes += len(header) + len(data)
        if self._out_bytes >= 65536 or len(self._out) >= IOV_MAX:
            self._flush()

    def send_many(self, frames: list[bytes]) -> None:
        """Queue frames as one buffer of headers and bodies (big bodies stay views of their own:
        copying them would cost more than the iovec)."""
        if self._client is None or self._wire is None:
            return
        header = self._wire.header
        parts: list[bytes] = []
        for data in frames:
            parts.append(header(len(data)))
            if len(data) < COPY_LIMIT:
                parts.append(data)
                continue
            self._queue_views(b"".join(parts), data)
            parts = []
        self._queue_views(b"".join(parts))
        if self._out_bytes >= 65536 or len(self._out) >= IOV_MAX:
            self._flush()

    def send_run(self, run: Any, first: int, stop: int) -> None:
        """Queue a run's messages as one buffer of frames the wire built (in C)."""
        if self._client is None or self._wire is None:
            return
        self._queue_views(self._wire.frame_run(run, first, stop))
        if self._out_bytes >= 65536 or len(self._out) >= IOV_MAX:
            self._flush()

    def _queue_views(self, *chunks: bytes) -> None:
        for chunk in chunks:
            if chunk:
                self._out.append(memoryview(chunk))
                self._out_bytes += len(chunk)

    def _send_wire_output(self) -> None:
        """Queue the bytes the wire produced itself (greeting, handshake replies) and push them."""
        if self._wire is None:
            return
        raw = self._wire.take_output()
        if raw:
            self._out.append(memoryview(raw))
            self._out_bytes += len(raw)
            self._flush()

    def _try_send_now(self, data: bytes) -> None:
        """Best effort, before closing: whatever the socket takes without waiting."""
        if self._client is None or self._tls_pending:
            return
        self._flush()
        if not self._out:
            try:
                self._client.send(data)
            except (OSError, ssl.SSLError):
                pass

    def _flush(self) -> None:
        """sendmsg as much as the socket takes; keep EVENT_WRITE registered while data waits."""
        client = self._client
        if client is None or self._tls_pending:
            return
        tls = isinstance(client, ssl.SSLSocket)
        while self._out:
            chunks = [self._out[i] for i in range(min(IOV_MAX, len(self._out)))]
            try:
                # SSLSocket has no sendmsg: one joined write (TLS records are built from it anyway)
                sent = client.send(b"".join(chunks)) if tls else client.sendmsg(chunks)
            except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                break
            except OSError as exc:
                self.drop_client(f"send failed: {exc}")
                return
            self._out_bytes -= sent
            while sent:
                head = self._out[0]
                if len(head) <= sent:
                    sent -= len(head)
                    self._out.popleft()
                else:
                    self._out[0] = head[sent:]
                    sent = 0
        mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if self._out else 0)
        self._selector.modify(client, mask, "client")

    def flush_pending(self) -> None:
        """Push buffered frames (called after each pump so small replies go out at once)."""
        if self._out:
            self._flush()

    def drop_client(self, reason: str) -> None:
        """Close the client connection and tell the protocol."""
        if self._client is None:
            return
        peer = self._peer
        self._close_client()
        self.events.on_disconnect(f"{peer}: {reason}")

    def _close_client(self) -> None:
        assert self._client is not None
        self._selector.unregister(self._client)
        self._client.close()
        self._client = None
        self._wire = None
        self._tls_pending = False
        self._out.clear()
        self._out_bytes = 0


def _peer(address: object) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)


def _tune(sock: socket.socket) -> None:
    """Keepalive and user timeout so a vanished peer is noticed within about half a minute."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", 10), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 3), ("TCP_USER_TIMEOUT", 30000)):
        option = getattr(socket, name, None)
        if option is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, option, value)
            except OSError:
                pass  # not supported on this platform: keepalive defaults apply
