"""ZMTP 3, server side: ZeroMQ's wire protocol as a ZMQ_PAIR peer of libzmq 4 speaks it (RFC 23, 24, 37).

The zeromq writer serves its client with this instead of a libzmq socket (see
:mod:`replicator.writers.zeromq` for why). A connection is

* the greeting, 64 bytes each way: signature ``FF <8 bytes> 7F``, version 3.1, the
  security mechanism (20 bytes, NUL-padded), as-server, 31 bytes of filler;
* the mechanism's handshake, in command frames: NULL -- each side sends READY with its
  properties; PLAIN (the writer has an ``auth-token``) -- the client sends HELLO with a
  user name (ignored) and the token as password, the writer answers WELCOME or ERROR,
  the client sends INITIATE with its properties and the writer READY. The client's
  ``Socket-Type`` property must be ``PAIR``: only a PAIR socket talks to a PAIR socket;
* frames: a flags byte (MORE 1, LONG 2, COMMAND 4), the size in 1 byte or, with LONG,
  8 bytes big-endian, and the body. Every request is one frame of at most 1024 bytes
  (10055 beyond); a PING command is answered with PONG.

Anything else -- a peer that is not ZMTP 3, another mechanism, another socket type,
undefined flags -- is a :class:`~replicator.writers.transport.WireError` (60084; a
missing or wrong token: 60103): the listener closes the connection.
"""

from __future__ import annotations

import hmac
import struct
from collections.abc import Iterator
from typing import Any

from replicator import native
from replicator.writers.stream import MAX_REQUEST
from replicator.writers.transport import WireError

SIGNATURE = b"\xff" + (1).to_bytes(8, "big") + b"\x7f"  # padding as libzmq writes it
GREETING_SIZE = 64
MAX_COMMAND = 8192  # handshake commands carry properties: larger than a request, still bounded
PROTOCOL_CODE = 60084
AUTH_CODE = 60103
MORE, LONG, COMMAND = 0x01, 0x02, 0x04
_SIZE64 = struct.Struct(">Q")

_GREETING, _HANDSHAKE, _INITIATE, _READY = "greeting", "handshake", "initiate", "ready"


def greeting(mechanism: bytes, as_server: bool) -> bytes:
    """The 64-byte greeting for ``mechanism`` (``NULL`` or ``PLAIN``)."""
    return SIGNATURE + b"\x03\x01" + mechanism.ljust(20, b"\0") + (b"\x01" if as_server else b"\x00") + b"\0" * 31


def frame(body: bytes, flags: int = 0) -> bytes:
    """One frame: flags (LONG added when needed), size, body."""
    if len(body) < 256:
        return bytes((flags, len(body))) + body
    return bytes((flags | LONG,)) + _SIZE64.pack(len(body)) + body


def command(name: bytes, data: bytes = b"") -> bytes:
    """A command frame."""
    return frame(bytes((len(name),)) + name + data, COMMAND)


def properties(pairs: dict[bytes, bytes]) -> bytes:
    """Metadata as READY and INITIATE carry it: name size (1), name, value size (4, big-endian), value."""
    return b"".join(bytes((len(k),)) + k + len(v).to_bytes(4, "big") + v for k, v in pairs.items())


def parse_properties(data: bytes) -> dict[bytes, bytes]:
    """Inverse of :func:`properties`; names lower-cased (they are case-insensitive)."""
    out: dict[bytes, bytes] = {}
    i = 0
    while i < len(data):
        size = data[i]
        name = data[i + 1 : i + 1 + size]
        i += 1 + size
        if len(name) != size or i + 4 > len(data):
            raise _violation("malformed properties")
        value_size = int.from_bytes(data[i : i + 4], "big")
        value = data[i + 4 : i + 4 + value_size]
        if len(value) != value_size:
            raise _violation("malformed properties")
        i += 4 + value_size
        out[name.lower()] = value
    return out


def error_command(reason: str) -> bytes:
    """An ERROR command (ZMTP 3.1): reason size (1), reason."""
    text = reason.encode()[:255]
    return command(b"ERROR", bytes((len(text),)) + text)


def _shown(raw: bytes) -> str:
    """Bytes from the peer as printable text for a log line (escaped, never a line break)."""
    return repr(bytes(raw))[2:-1]


def _reason(data: bytes) -> str:
    """The reason text of an ERROR command's data."""
    return _shown(data[1 : 1 + data[0]]) if data else ""


def _violation(what: str) -> WireError:
    return WireError(PROTOCOL_CODE, f"ZMTP: {what}", "ZMTP protocol error", error_command(what))


def _header(size: int) -> bytes:
    if size < 256:
        return bytes((0, size))
    return b"\x02" + _SIZE64.pack(size)


class ZmtpServer:
    """One connection's ZMTP state (a :class:`~replicator.writers.transport.Wire`)."""

    def __init__(self, token: bytes | None = None) -> None:
        self._token = token  # PLAIN password required, or None for NULL
        self._mechanism = b"PLAIN" if token is not None else b"NULL"
        self._state = _GREETING
        self._buf = bytearray()
        self._out = bytearray(greeting(self._mechanism, as_server=token is not None))

    @property
    def ready(self) -> bool:
        """True once the handshake is done (requests may flow)."""
        return self._state == _READY

    @property
    def partial(self) -> bool:
        """True while part of a greeting or frame is buffered."""
        return bool(self._buf)

    def header(self, size: int) -> bytes:
        """The ZMTP header of a data frame of ``size`` bytes."""
        return _header(size)

    def frame_run(self, run: Any, first: int, stop: int) -> bytes:
        """A run's messages [first, stop), each a data frame (built in C)."""
        frames = native.runframes()
        return bytes(frames.run_frames(run, first, stop, frames.FRAME_ZMTP))

    def take_output(self) -> bytes:
        """Greeting and handshake bytes waiting to be sent."""
        out, self._out = bytes(self._out), bytearray()
        return out

    def feed(self, data: bytes) -> list[bytes]:
        """The request frames completed by ``data``; WireError when the peer breaks ZMTP."""
        self._buf += data
        if self._state == _GREETING and not self._greeting():
            return []
        requests: list[bytes] = []
        for flags, body in self._frames():
            if self._state != _READY:
                self._handshake(flags, body)
            elif flags & COMMAND:
                self._command(body)
            else:
                requests.append(body)
        return requests

    # -- greeting and handshake --------------------------------------------------------------

    def _greeting(self) -> bool:
        buf = self._buf
        if (buf and buf[0] != 0xFF) or (len(buf) >= 10 and not buf[9] & 0x01):
            raise _violation("not a ZeroMQ peer (no ZMTP signature)")
        if len(buf) >= 11 and buf[10] < 3:
            raise _violation(f"ZMTP {buf[10]}.x is too old (ZeroMQ 4 or later speaks ZMTP 3)")
        if len(buf) < GREETING_SIZE:
            return False
        mechanism = bytes(buf[12:32]).rstrip(b"\0")
        del buf[:GREETING_SIZE]
        if mechanism != self._mechanism:
            if self._token is not None and mechanism == b"NULL":
                raise WireError(
                    AUTH_CODE,
                    "did not authenticate (no auth-token: ZMTP mechanism NULL, the writer expects PLAIN)",
                    "authentication failed",
                )
            raise _violation(f"security mechanism {_shown(mechanism)} (the writer speaks {self._mechanism.decode()})")
        self._state = _HANDSHAKE
        if self._token is None:
            self._out += command(b"READY", properties({b"Socket-Type": b"PAIR"}))
        return True

    def _handshake(self, flags: int, body: bytes) -> None:
        if not flags & COMMAND:
            raise _violation("a message before the handshake ended")
        name, data = _split(body)
        if name == b"ERROR":
            raise _violation(f"peer sent ERROR: {_reason(data)}")
        if self._state == _HANDSHAKE and self._token is not None:
            if name != b"HELLO":
                raise _violation(f"{_shown(name)} instead of HELLO")
            user_size = data[0] if data else 0
            at = 1 + user_size
            password = data[at + 1 : at + 1 + data[at]] if len(data) > at else b""
            if not hmac.compare_digest(password, self._token):
                raise WireError(
                    AUTH_CODE,
                    "did not authenticate (auth-token)",
                    "authentication failed",
                    error_command("auth-token refused"),
                )
            self._out += command(b"WELCOME")
            self._state = _INITIATE
            return
        expected = b"INITIATE" if self._token is not None else b"READY"
        if name != expected:
            raise _violation(f"{_shown(name)} instead of {expected.decode()}")
        kind = parse_properties(data).get(b"socket-type", b"")
        if kind != b"PAIR":
            raise _violation(
                f"socket type {_shown(kind) or 'missing'} (the writer is a PAIR socket: connect a PAIR socket)"
            )
        if self._token is not None:
            self._out += command(b"READY", properties({b"Socket-Type": b"PAIR"}))
        self._state = _READY

    def _command(self, body: bytes) -> None:
        name, data = _split(body)
        if name == b"PING":  # ZMTP 3.1 heartbeat: TTL (2 bytes), then a context to echo
            self._out += command(b"PONG", data[2:18])
        elif name == b"ERROR":
            raise _violation(f"peer sent ERROR: {_reason(data)}")
        # PONG and commands a PAIR peer has no use for are ignored

    def _frames(self) -> Iterator[tuple[int, bytes]]:
        """Complete frames, one at a time (the size limit depends on the state the last one left)."""
        buf = self._buf
        while len(buf) >= 2:
            flags = buf[0]
            if flags & ~(MORE | LONG | COMMAND):
                raise _violation(f"undefined frame flags 0x{flags:02x}")
            if flags & LONG:
                if len(buf) < 9:
                    break
                size, start = _SIZE64.unpack_from(buf, 1)[0], 9
            else:
                size, start = buf[1], 2
            limit = MAX_COMMAND if flags & COMMAND or self._state != _READY else MAX_REQUEST
            if size > limit:
                raise WireError(
                    10055, f"message from client exceeds buffer size ({size} > {limit})", "oversized request"
                )
            if len(buf) < start + size:
                break
            body = bytes(buf[start : start + size])
            del buf[: start + size]
            yield flags, body


def _split(body: bytes) -> tuple[bytes, bytes]:
    """A command's name and data."""
    if not body or len(body) < 1 + body[0]:
        raise _violation("malformed command")
    return body[1 : 1 + body[0]], body[1 + body[0] :]
