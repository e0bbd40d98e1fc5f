"""The ``network`` writer: the stream protocol over TCP (olr-interfaces.md §4.3).

Frames are a 4-byte little-endian length and the bytes. A frame of 4 GiB or more would
use the marker ``FFFFFFFF`` followed by an 8-byte little-endian length (written
correctly here; OpenLogReplicator's version of that path is broken). Requests longer
than 1024 bytes are refused (10055) by closing the connection before reading them.

One client at a time. A new connection replaces the current client unless that one
has completed its handshake (START/CONTINUE accepted: streaming, or its start is
booting) and is still there; then the new one is closed at once (WARN 60080). So a peer
that connects and never starts, sends INFO now and then, or drips a request byte by
byte cannot hold the slot: the real client takes it over, and such a peer is dropped
anyway once it has not handshaken within ``HANDSHAKE_S`` or left a request incomplete
for ``REQUEST_S`` (10056). A length prefix above 1024 bytes is refused before the body
is read (10055). Half-open connections are dropped by TCP keepalive and
``TCP_USER_TIMEOUT`` while streaming, and by ``client_timeout_s`` otherwise.

With ``auth-token`` set (an extension), a client's first frame must be
``AUTH_PREFIX + token`` (``replicator client --token``); anything else closes the
connection (WARN 60103) before a single request is handled. With ``tls-cert`` and
``tls-key`` (PEM files, an extension) the connection is TLS (``ssl`` module; clients use
``replicator client --tls-ca``); the TLS handshake counts against ``HANDSHAKE_S``. Only
loopback addresses should be served without authentication: ``check-config`` warns otherwise, and an ``uri`` without a
host binds 127.0.0.1 (OLR binds every interface). Unlike OpenLogReplicator the listener
does not set SO_REUSEPORT, so a second process cannot share the port.
"""

from __future__ import annotations

import hmac
import selectors
import socket
import ssl
import struct
import time
from collections import deque

from replicator import log
from replicator.config.writer import NetworkWriterConfig
from replicator.errors import RuntimeFailure
from replicator.writers.stream import AUTH_PREFIX, MAX_REQUEST
from replicator.writers.stream_writer import StreamWriter
from replicator.writers.transport import Transport, TransportEvents, Waker

OUT_LIMIT = 4 * 1024 * 1024  # bytes queued for the socket before the pump waits
IOV_MAX = 512  # buffers per sendmsg call
HANDSHAKE_S = 10.0  # a client must START/CONTINUE within this (capped by client_timeout_s)
REQUEST_S = 5.0  # a request's bytes must all arrive within this of its first byte
_LEN32 = struct.Struct("<I")
_LEN64 = struct.Struct("<IQ")


def frame_header(size: int) -> bytes:
    """The length prefix of a frame of ``size`` bytes."""
    if size < 0xFFFFFFFF:
        return _LEN32.pack(size)
    return _LEN64.pack(0xFFFFFFFF, size)


class TcpTransport(Transport):
    """A non-blocking TCP listener with one client connection (see the module docstring)."""

    def __init__(self, host: str, port: str, events: TransportEvents, client_timeout_s: float,
                 auth_token: str | None = None, tls: ssl.SSLContext | None = None) -> None:
        self.host, self.port = host, port
        self.events = events
        self.client_timeout_s = client_timeout_s
        self.handshake_s = min(HANDSHAKE_S, client_timeout_s)
        self.request_s = min(REQUEST_S, client_timeout_s)
        self._token = AUTH_PREFIX + auth_token.encode() if auth_token else None
        self._authenticated = False
        self._tls = tls
        self._tls_pending = False  # TLS handshake of the current client not finished
        self._handshaken = False  # the client's START/CONTINUE was accepted at least once
        self._connected_at = 0.0
        self._request_started = 0.0  # when the first byte of the pending request arrived
        self.waker = Waker()
        self._selector = selectors.DefaultSelector()
        self._listener: socket.socket | None = None
        self._client: socket.socket | None = None
        self._peer = ""
        self._rbuf = bytearray()
        self._out: deque[memoryview] = deque()
        self._out_bytes = 0
        self._last_activity = 0.0

    # -- setup -------------------------------------------------------------------------------

    def open(self) -> None:
        """Resolve ``host:port`` passively and listen (backlog 1, as OpenLogReplicator)."""
        try:
            infos = socket.getaddrinfo(self.host or None, self.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        except socket.gaierror as exc:
            raise RuntimeFailure(f"network: cannot resolve {self.host}:{self.port}: {exc}", 10061) from exc
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
            sock.setblocking(False)
            self._listener = sock
            from replicator.config.exposure import EXPOSURE_CODE, is_loopback

            if self._token is None and not is_loopback(str(address[0])):
                log.warning(EXPOSURE_CODE, f"network writer listens on {address[0]}, beyond loopback, without "
                                           "auth-token: anyone who reaches it reads every change")
            self._selector.register(sock, selectors.EVENT_READ, "listen")
            self._selector.register(self.waker, selectors.EVENT_READ, "wake")
            return
        raise RuntimeFailure(f"network: cannot listen on {self.host}:{self.port}: {error}", 10061)

    @property
    def address(self) -> str:
        """``host:port`` actually bound."""
        assert self._listener is not None
        host, port = self._listener.getsockname()[:2]
        return f"{host}:{port}"

    def close(self) -> None:
        """Close the client, the listener and the selector."""
        if self._client is not None:
            self._close_client()
        if self._listener is not None:
            self._selector.unregister(self._listener)
            self._listener.close()
            self._listener = None
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
                    while self._client is not None and isinstance(self._client, ssl.SSLSocket) \
                            and self._client.pending() and self._read():
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
        if self._client is not None and self._client_alive():
            if self.events.idle_allowed():
                log.warning(60080, f"client {_peer(peer)} rejected: another client ({self._peer}) is connected")
                sock.close()
                return
            self.drop_client(f"replaced by {_peer(peer)} (it had not started replication)")
        sock.setblocking(False)
        _tune(sock)
        if self._tls is not None:
            try:
                sock = self._tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            except (ssl.SSLError, OSError) as exc:
                log.warning(60103, f"client {_peer(peer)}: TLS setup failed: {exc}")
                sock.close()
                return
            self._tls_pending = True
        self._client, self._peer = sock, _peer(peer)
        self._rbuf.clear()
        self._last_activity = self._connected_at = time.monotonic()
        self._authenticated = self._token is None
        self._handshaken = False
        self.session += 1
        self._selector.register(sock, selectors.EVENT_READ, "client")
        self.events.on_connect()

    def _client_alive(self) -> bool:
        """Read what the current client sent (a last CONFIRM counts) and see if it closed."""
        while self._client is not None:
            if not self._read():
                break
        return self._client is not None

    def _read(self) -> bool:
        """Read and dispatch one chunk; False when nothing more is readable now."""
        assert self._client is not None
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
        if not self._rbuf:
            self._request_started = now
        self._rbuf += data
        self._last_activity = now
        while self._client is not None and len(self._rbuf) >= 4:
            size = _LEN32.unpack_from(self._rbuf)[0]
            if size > MAX_REQUEST:
                log.warning(10055, f"message from client exceeds buffer size ({size} > {MAX_REQUEST}); "
                                   "closing the connection")
                self.drop_client("oversized request")
                return False
            if len(self._rbuf) < 4 + size:
                break
            frame = bytes(self._rbuf[4:4 + size])
            del self._rbuf[:4 + size]
            self._request_started = now
            if not self._authenticated:
                if not hmac.compare_digest(frame, self._token or b""):
                    log.warning(60103, f"client {self._peer} did not authenticate (auth-token); closing the "
                                       "connection")
                    self.drop_client("authentication failed")
                    return False
                self._authenticated = True
                continue
            self.events.on_request(frame)
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
            log.warning(60103, f"client {self._peer}: TLS handshake failed: {exc}")
            self.drop_client("TLS handshake failed")
            return False
        self._tls_pending = False
        self._selector.modify(client, selectors.EVENT_READ | (selectors.EVENT_WRITE if self._out else 0), "client")
        return True

    def _check_timeouts(self) -> None:
        if self._client is None:
            return
        now = time.monotonic()
        if self._rbuf and now - self._request_started >= self.request_s:
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
        if self._rbuf:
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
        if self._client is None:
            return
        header = frame_header(len(data))
        self._out.append(memoryview(header))
        if data:  # an empty view would make sendmsg return 0 forever (READY replies are empty)
            self._out.append(memoryview(data))
        self._out_bytes += len(header) + len(data)
        if self._out_bytes >= 65536 or len(self._out) >= IOV_MAX:
            self._flush()

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
        self._tls_pending = False
        self._rbuf.clear()
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


class NetworkWriter(StreamWriter):
    """``type: network``: serves one TCP client at ``uri`` (``host:port``)."""

    type_name = "network"

    def make_transport(self) -> Transport:
        """A TCP listener for the configured ``host:port``."""
        config: NetworkWriterConfig = self.config
        tls = None
        if config.tls_cert:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            try:
                tls.load_cert_chain(config.tls_cert, config.tls_key or None)
            except (OSError, ssl.SSLError) as exc:
                raise RuntimeFailure(f"network writer: cannot load tls-cert {config.tls_cert}: {exc}", 10061) from exc
        return TcpTransport(config.host, config.port, self, self.client_timeout_s, config.auth_token, tls)
