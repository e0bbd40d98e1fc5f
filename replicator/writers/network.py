"""The ``network`` writer: the stream protocol over TCP (olr-interfaces.md §4.3).

Frames are a 4-byte little-endian length and the bytes. A frame of 4 GiB or more would
use the marker ``FFFFFFFF`` followed by an 8-byte little-endian length (written
correctly here; OpenLogReplicator's version of that path is broken). Requests longer
than 1024 bytes are refused (10055) by closing the connection before reading them.
Connections, the one-client rule and time limits: :mod:`replicator.writers.listener`.

With ``auth-token`` set (an extension), a client's first frame must be
``AUTH_PREFIX + token`` (``replicator client --token``); anything else closes the
connection (WARN 60103) before a single request is handled. With ``tls-cert`` and
``tls-key`` (PEM files, an extension) the connection is TLS (``ssl`` module; clients use
``replicator client --tls-ca``); the TLS handshake counts against ``HANDSHAKE_S``. Only
loopback addresses should be served without authentication: the writer and
``check-config`` warn otherwise (60104), and an ``uri`` without a host binds 127.0.0.1
(OLR binds every interface).
"""

from __future__ import annotations

import hmac
import ssl
import struct
from typing import Any

from replicator import native
from replicator.config.writer import NetworkWriterConfig
from replicator.errors import RuntimeFailure
from replicator.writers.listener import Endpoint, Listener
from replicator.writers.stream import AUTH_PREFIX, MAX_REQUEST
from replicator.writers.stream_writer import StreamWriter
from replicator.writers.transport import Transport, WireError

HANDSHAKE_S = 10.0  # a client must START/CONTINUE within this (capped by client_timeout_s)
_LEN32 = struct.Struct("<I")
_LEN64 = struct.Struct("<IQ")


def frame_header(size: int) -> bytes:
    """The length prefix of a frame of ``size`` bytes."""
    if size < 0xFFFFFFFF:
        return _LEN32.pack(size)
    return _LEN64.pack(0xFFFFFFFF, size)


class LengthPrefixed:
    """The network writer's wire: length-prefixed frames, the first one the token if required."""

    def __init__(self, token: bytes | None) -> None:
        self._token = token  # AUTH_PREFIX + auth-token, or None
        self._authenticated = token is None
        self._buf = bytearray()

    @property
    def partial(self) -> bool:
        """True while part of a frame is buffered."""
        return bool(self._buf)

    def header(self, size: int) -> bytes:
        """The length prefix."""
        return frame_header(size)

    def frame_run(self, run: Any, first: int, stop: int) -> bytes:
        """A run's messages [first, stop), each with its length prefix (built in C)."""
        frames = native.runframes()
        return bytes(frames.run_frames(run, first, stop, frames.FRAME_LENGTH_PREFIXED))

    def take_output(self) -> bytes:
        """Nothing: this wire has no handshake of its own."""
        return b""

    def feed(self, data: bytes) -> list[bytes]:
        """Complete frames; an oversized length or a wrong first frame raises WireError."""
        buf = self._buf
        buf += data
        frames = []
        while len(buf) >= 4:
            size = _LEN32.unpack_from(buf)[0]
            if size > MAX_REQUEST:
                raise WireError(
                    10055, f"message from client exceeds buffer size ({size} > {MAX_REQUEST})", "oversized request"
                )
            if len(buf) < 4 + size:
                break
            frame = bytes(buf[4 : 4 + size])
            del buf[: 4 + size]
            if not self._authenticated:
                if not hmac.compare_digest(frame, self._token or b""):
                    raise WireError(60103, "did not authenticate (auth-token)", "authentication failed")
                self._authenticated = True
                continue
            frames.append(frame)
        return frames


class NetworkWriter(StreamWriter):
    """``type: network``: serves one TCP client at ``uri`` (``host:port``)."""

    type_name = "network"

    def make_transport(self) -> Transport:
        """A listener for the configured ``host:port``."""
        config: NetworkWriterConfig = self.config
        tls = None
        if config.tls_cert:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            try:
                tls.load_cert_chain(config.tls_cert, config.tls_key or None)
            except (OSError, ssl.SSLError) as exc:
                raise RuntimeFailure(f"network writer: cannot load tls-cert {config.tls_cert}: {exc}", 10061) from exc
        token = AUTH_PREFIX + config.auth_token.encode() if config.auth_token else None
        return Listener(
            Endpoint(config.host, config.port),
            self,
            lambda: LengthPrefixed(token),
            label="network writer",
            client_timeout_s=self.client_timeout_s,
            handshake_s=HANDSHAKE_S,
            authenticated=token is not None,
            tls=tls,
        )
