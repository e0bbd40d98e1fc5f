"""A client of the stream writers' protocol (TCP or ZeroMQ): the library behind ``replicator client``.

It speaks what OpenLogReplicator's StreamClient and Debezium's adapter speak: requests are
serialized ``RedoRequest`` frames, control replies ``RedoResponse`` frames, and data frames
are whatever the server's format builds (JSON text or a ``RedoResponse`` with code
PAYLOAD). On TCP a frame is a 4-byte little-endian length plus the bytes; on ZeroMQ one
PAIR message.

Positions are the ones printed in the data: (c_scn, c_idx). :func:`position_of` reads them
from a data frame; CONFIRM and CONTINUE send them back unchanged.
"""

from __future__ import annotations

import re
import socket
import struct
import time
from typing import Any

from replicator.errors import RuntimeFailure
from replicator.proto import olr_pb2 as pb

_LEN = struct.Struct("<I")
_JSON_POSITION = re.compile(rb'"c_scn":(\d+),"c_idx":(\d+)')
NO_SCN = (1 << 64) - 1


def position_of(frame: bytes, fmt: str) -> tuple[int, int]:
    """(c_scn, c_idx) of a data frame in format ``json`` or ``protobuf``."""
    if fmt == "protobuf":
        response = pb.RedoResponse.FromString(frame)
        return response.c_scn, response.c_idx
    match = _JSON_POSITION.search(frame)  # the header precedes the payload: first match is it
    if match is None:
        raise RuntimeFailure(f"data message without c_scn/c_idx: {frame[:80]!r}", 10053)
    return int(match.group(1)), int(match.group(2))


def is_data(frame: bytes) -> bool:
    """True for a data frame (JSON text or a PAYLOAD response), False for a control reply."""
    if frame[:1] == b"{":
        return True
    try:
        return pb.RedoResponse.FromString(frame).code == pb.PAYLOAD
    except Exception:  # noqa: BLE001 - anything unparsable is treated as data and skipped
        return True


class TcpChannel:
    """Length-prefixed frames over one blocking TCP connection."""

    def __init__(self, uri: str, timeout: float, tls_ca: str | None = None) -> None:
        host, _, port = uri.rpartition(":")
        try:
            self.sock = socket.create_connection((host, int(port)), timeout=timeout)
            if tls_ca:
                import ssl

                context = ssl.create_default_context(cafile=tls_ca)
                self.sock = context.wrap_socket(self.sock, server_hostname=host)
        except OSError as exc:  # ssl.SSLError included
            raise RuntimeFailure(f"cannot connect to {uri}: {exc}", 10062) from exc
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = bytearray()

    def send(self, data: bytes) -> None:
        """Send one frame."""
        try:
            self.sock.sendall(_LEN.pack(len(data)) + data)
        except OSError as exc:
            raise RuntimeFailure(f"send failed: {exc}", 10054) from exc

    def send_raw(self, data: bytes) -> None:
        """Send bytes without framing (for tests of hostile input)."""
        self.sock.sendall(data)

    def recv(self, timeout: float) -> bytes | None:
        """One frame, or None if none arrived within ``timeout``; RuntimeFailure 10056 on EOF."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self._buf) >= 4:
                size = _LEN.unpack_from(self._buf)[0]
                if len(self._buf) >= 4 + size:
                    frame = bytes(self._buf[4 : 4 + size])
                    del self._buf[: 4 + size]
                    return frame
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 20)
            except TimeoutError:  # socket.timeout; an SSL read timeout is the same class
                return None
            except OSError as exc:
                raise RuntimeFailure(f"receive failed: {exc}", 10053) from exc
            if not chunk:
                raise RuntimeFailure("server closed the connection", 10056)
            self._buf += chunk

    def recv_many(self, timeout: float, limit: int) -> list[bytes]:
        """Up to ``limit`` frames: those already received, else the first within ``timeout`` and
        whatever came with it ([] if none arrived); RuntimeFailure 10056 on EOF."""
        first = self.recv(timeout)
        if first is None:
            return []
        frames = [first]
        buf, unpack = self._buf, _LEN.unpack_from
        at, size_of = 0, len(buf)
        while len(frames) < limit and size_of - at >= 4:
            size = unpack(buf, at)[0]
            if size_of - at < 4 + size:
                break
            frames.append(bytes(buf[at + 4 : at + 4 + size]))
            at += 4 + size
        del buf[:at]
        return frames

    def close(self) -> None:
        """Close the connection."""
        self.sock.close()


class ZmqChannel:
    """One ZMQ_PAIR socket connected to the writer.

    libzmq reconnects a PAIR socket silently, so a restarted writer would never learn
    that this client is back (it waits for CONTINUE, the client waits for data). A socket
    monitor turns a lost connection into RuntimeFailure 10056, as EOF does on TCP, so the
    client handshakes again. With ``token`` the ZMTP mechanism is PLAIN, the token its
    password (the writer's ``auth-token``).
    """

    def __init__(self, uri: str, timeout: float, token: str | None = None) -> None:
        import zmq

        self._zmq = zmq
        self.context = zmq.Context()
        self.context.setsockopt(zmq.LINGER, 0)  # the monitor socket too: term() never waits on them
        self.sock = self.context.socket(zmq.PAIR)
        self.sock.setsockopt(zmq.LINGER, 0)
        if token:
            self.sock.setsockopt(zmq.PLAIN_USERNAME, b"replicator")
            self.sock.setsockopt(zmq.PLAIN_PASSWORD, token.encode())
        self.monitor = self.sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self.poller = zmq.Poller()
        self.poller.register(self.sock, zmq.POLLIN)
        self.poller.register(self.monitor, zmq.POLLIN)
        try:
            self.sock.connect(uri)
        except zmq.ZMQError as exc:  # a malformed endpoint, e.g. no tcp:// scheme
            self.close()
            raise RuntimeFailure(f"cannot connect to {uri}: {exc}", 10062) from None

    def send(self, data: bytes) -> None:
        """Send one frame."""
        self.sock.send(data)

    def send_raw(self, data: bytes) -> None:
        """Same as send: ZeroMQ has no framing to break."""
        self.sock.send(data)

    def recv(self, timeout: float) -> bytes | None:
        """One frame, or None if none arrived within ``timeout``; RuntimeFailure 10056 when
        the connection to the writer was lost (frames that arrived before are read first)."""
        ready = dict(self.poller.poll(int(timeout * 1000)))
        if ready.get(self.sock):
            return bytes(self.sock.recv())
        if ready.get(self.monitor):
            raise RuntimeFailure("connection to the ZeroMQ writer lost (it restarted, or serves another client)", 10056)
        return None

    def recv_many(self, timeout: float, limit: int) -> list[bytes]:
        """Up to ``limit`` frames: the first within ``timeout`` and those queued behind it ([] if
        none arrived); RuntimeFailure 10056 as :meth:`recv`."""
        first = self.recv(timeout)
        if first is None:
            return []
        frames = [first]
        zmq = self._zmq
        while len(frames) < limit:
            try:
                frames.append(bytes(self.sock.recv(zmq.NOBLOCK)))
            except zmq.Again:
                break
        return frames

    def close(self) -> None:
        """Close the socket and its context.

        ZeroMQ has no acknowledgement: a CONFIRM sent just before the connection drops can be
        discarded with it, so the close waits a moment and then lingers up to half a second.
        """
        time.sleep(0.1)
        self.sock.disable_monitor()
        self.monitor.close(linger=0)
        self.sock.close(linger=500)
        self.context.term()


class StreamClient:
    """Connects to a stream writer, runs the handshake, reads data and confirms positions."""

    def __init__(
        self,
        kind: str,
        uri: str,
        database: str,
        fmt: str = "json",
        timeout: float = 10.0,
        token: str | None = None,
        tls_ca: str | None = None,
    ) -> None:
        self.kind, self.uri, self.database, self.fmt, self.timeout = kind, uri, database, fmt, timeout
        self.token, self.tls_ca = token, tls_ca
        self.channel: Any = None

    def open(self) -> None:
        """Connect the channel; with a token, authenticate (network: first frame; zeromq: PLAIN)."""
        if self.kind == "network":
            self.channel = TcpChannel(self.uri, self.timeout, self.tls_ca)
            if self.token:
                from replicator.writers.stream import AUTH_PREFIX

                self.channel.send(AUTH_PREFIX + self.token.encode())
        else:
            self.channel = ZmqChannel(self.uri, self.timeout, self.token)

    def close(self) -> None:
        """Disconnect (the server keeps what was not confirmed)."""
        if self.channel is not None:
            self.channel.close()
            self.channel = None

    def request(self, code: pb.RequestCode, **fields: Any) -> pb.RedoResponse:
        """Send one request and wait for its reply (data frames in between are skipped)."""
        self.send(code, **fields)
        deadline = time.monotonic() + self.timeout
        while True:
            frame = self.channel.recv(max(0.0, deadline - time.monotonic()))
            if frame is None:
                raise RuntimeFailure(f"no reply to request {pb.RequestCode.Name(code)} in {self.timeout}s", 10053)
            if not is_data(frame):
                return pb.RedoResponse.FromString(frame)

    def send(self, code: pb.RequestCode, **fields: Any) -> None:
        """Send one request without waiting (CONFIRM has no reply)."""
        self.channel.send(pb.RedoRequest(code=code, database_name=self.database, **fields).SerializeToString())

    def start(self, mode: str = "now", position: tuple[int, int] | None = None) -> pb.RedoResponse:
        """INFO, then START (server READY) or CONTINUE (server replicating); returns the reply.

        ``position`` (c_scn, c_idx as printed) is where to continue; ``mode`` is the
        StreamClient start mode: ``now``, ``scn:N``, ``time:TS``, ``time_rel:S`` (each
        with an optional ``,SEQ``), ``c:SCN,IDX`` or ``next``. A READY server has nothing
        to continue from (it lost or never had a confirmed position): it is started with
        ``mode`` even when a position is given, so what the client had comes again
        (``replicator client`` drops such repeats); ``c:``/``next`` cannot start one.
        """
        info = self.request(pb.INFO)
        if mode.startswith("c:") and position is None:
            scn, _, idx = mode[2:].partition(",")
            position = (int(scn), int(idx or 0))
        if info.code == pb.READY:
            if mode == "next" or mode.startswith("c:"):
                raise RuntimeFailure(
                    f"the writer has not started replication (READY): --start {mode} can only "
                    "continue a replicating writer; start it with now or scn:N",
                    10053,
                )
            return self.request(pb.START, **_start_fields(mode))
        if info.code == pb.REPLICATE:
            if position is None:
                return self.request(pb.CONTINUE)
            return self.request(pb.CONTINUE, c_scn=position[0], c_idx=position[1])
        return info

    def receive(self, timeout: float) -> bytes | None:
        """The next frame (data, or an unsolicited reply such as INVALID_COMMAND)."""
        return self.channel.recv(timeout)

    def receive_many(self, timeout: float, limit: int = 4096) -> list[bytes]:
        """The next frames, up to ``limit``, as :meth:`receive` would return them one by one
        ([] when none arrived within ``timeout``)."""
        frames: list[bytes] = self.channel.recv_many(timeout, limit)
        return frames

    def confirm(self, position: tuple[int, int]) -> None:
        """CONFIRM (c_scn, c_idx): the server may drop everything up to that message."""
        self.send(pb.CONFIRM, c_scn=position[0], c_idx=position[1])


def check_start_mode(mode: str) -> None:
    """Raise RuntimeFailure 30002 unless ``mode`` is a start mode :meth:`StreamClient.start` takes."""
    if mode.startswith("c:"):
        scn, _, idx = mode[2:].partition(",")
        if not (scn.isdigit() and (not idx or idx.isdigit())):
            raise RuntimeFailure(f"bad start mode: {mode} (c:SCN,IDX)", 30002)
    elif mode != "next":
        _start_fields(mode)


def _start_fields(mode: str) -> dict[str, Any]:
    """The START request fields of a start mode (RuntimeFailure 30002 when malformed)."""
    body, _, seq = mode.partition(",")
    head, _, value = body.partition(":")  # a time value keeps its own colons
    fields: dict[str, Any] = {}
    try:
        if head == "now" and not value:
            fields["scn"] = NO_SCN
        elif head == "scn":
            fields["scn"] = int(value)
        elif head == "time":
            fields["tms"] = value
        elif head == "time_rel":
            fields["tm_rel"] = int(value)
        else:
            raise ValueError(head)
        if seq:
            fields["seq"] = int(seq)
    except ValueError:
        raise RuntimeFailure(
            f"bad start mode: {mode} (now, scn:N, time:TS, time_rel:S, each with an optional ,SEQ; or c:SCN,IDX, next)",
            30002,
        ) from None
    return fields
