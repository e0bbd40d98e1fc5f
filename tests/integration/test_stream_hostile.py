"""Hostile clients get an error reply or a closed connection; the writer keeps serving and loses nothing."""

from __future__ import annotations

import socket
import time

import pytest
from stream_harness import Producer, client, make_writer, number_of, position, started_client

from replicator.errors import RuntimeFailure
from replicator.proto import olr_pb2 as pb
from replicator.tools.stream_client import StreamClient, ZmqChannel, is_data, position_of
from replicator.writers.stream_writer import StreamWriter

COUNT = 200


def _raw(writer: StreamWriter) -> socket.socket:
    """A plain TCP connection to the writer's port (works for the ZeroMQ port too)."""
    host, port = writer.address.removeprefix("tcp://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    """True when the server closes ``sock`` within the time (data before the EOF is ignored)."""
    sock.settimeout(within)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if sock.recv(65536) == b"":
                return True
    except TimeoutError:
        return False
    except OSError:
        return True  # reset
    return False


def _reply(stream: StreamClient, timeout: float = 3.0) -> pb.RedoResponse | None:
    """The next control reply, skipping data frames."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        frame = stream.receive(max(0.0, deadline - time.monotonic()))
        if frame is not None and not is_data(frame):
            return pb.RedoResponse.FromString(frame)
    return None


def _consume_all(kind: str, writer: StreamWriter, first: int = 0) -> list[int]:
    """A well-behaved client reads and confirms everything (retrying while it is turned away:
    started_client closes each turned-away client, which over ZeroMQ's single PAIR peer would
    otherwise keep the place the next one needs)."""
    stream, reply = started_client(kind, writer)
    assert reply.code == pb.REPLICATE
    numbers = []
    try:
        while not numbers or numbers[-1] != COUNT - 1:
            frame = stream.receive(5.0)
            assert frame is not None
            numbers.append(number_of(frame))
            stream.confirm(position_of(frame, "json"))
    finally:
        stream.close()
    return numbers


def test_network_hostile_clients() -> None:
    confirmed: list[tuple[int, int]] = []
    writer = make_writer("network", confirmed, client_timeout_s=1.0, drain_timeout_s=5)
    producer = Producer(writer, COUNT).start()
    # Garbage that frames as a small request: an error reply, the connection stays usable.
    garbage = _raw(writer)
    garbage.sendall(b"\x05\x00\x00\x00hello")
    garbage.settimeout(3)
    size = int.from_bytes(garbage.recv(4), "little")
    assert pb.RedoResponse.FromString(garbage.recv(size)).code in (pb.INVALID_COMMAND, pb.INVALID_DATABASE)
    garbage.sendall(bytes(range(256)) * 4)  # random-ish bytes: an impossible length -> closed
    assert _closed_by_server(garbage, 3)
    # A length prefix of 4 GB is refused before anything is read.
    huge = _raw(writer)
    huge.sendall(b"\xff\xff\xff\xff")
    assert _closed_by_server(huge, 3)
    # Half-open: two bytes of a length, then silence -> dropped after client_timeout_s.
    half = _raw(writer)
    half.sendall(b"\x10\x00")
    assert _closed_by_server(half, 5)
    # A client that confirms a position it was never sent gets INVALID_COMMAND and loses nothing.
    stream = client("network", writer)
    assert stream.start("now").code == pb.REPLICATE
    first = stream.receive(5.0)
    assert first is not None and number_of(first) == 0
    stream.confirm((99_999, 1))
    reply = _reply(stream)
    assert reply is not None and reply.code == pb.INVALID_COMMAND
    # A second client while this one is connected is closed at once.
    second = _raw(writer)
    assert _closed_by_server(second, 3)
    stream.close()
    assert _consume_all("network", writer) == list(range(COUNT))  # nothing was confirmed: all again
    producer.join()
    assert confirmed == [position(n) for n in range(COUNT)]


def test_zeromq_hostile_clients() -> None:
    confirmed: list[tuple[int, int]] = []
    # The handshake limit must leave a loaded machine's real client time between connect and START.
    writer = make_writer("zeromq", confirmed, client_timeout_s=3.0, drain_timeout_s=5)
    producer = Producer(writer, COUNT).start()
    # Garbage: an error reply.
    stream = StreamClient("zeromq", writer.address, "DB", timeout=3)
    stream.open()
    stream.channel.send_raw(b"\xff\xfe garbage")
    reply = _reply(stream)
    assert reply is not None and reply.code == pb.INVALID_COMMAND
    # A request over 1024 bytes: the writer closes that connection (no reply) and is unaffected.
    stream.channel.send_raw(b"\x08\x00" * 1000)
    try:
        assert _reply(stream, 1.0) is None
    except RuntimeFailure as exc:  # the client's monitor saw the disconnect (it would handshake again)
        assert exc.code == 10056
    stream.close()
    # Half-open raw TCP (no ZeroMQ handshake): dropped after the handshake limit.
    half = _raw(writer)
    assert _closed_by_server(half, 10)
    # CONFIRM of a position never sent: INVALID_COMMAND; a second client gets no answer meanwhile.
    stream, reply = started_client("zeromq", writer)  # retried while the dropped peers go
    assert reply.code == pb.REPLICATE
    assert stream.receive(5.0) is not None
    stream.confirm((99_999, 1))
    reply = _reply(stream)
    assert reply is not None and reply.code == pb.INVALID_COMMAND
    intruder = ZmqChannel(writer.address, 1.0)
    intruder.send(pb.RedoRequest(code=pb.INFO, database_name="DB").SerializeToString())
    try:  # one client at a time: the second is turned away (its libzmq retries), never answered
        assert intruder.recv(1.0) is None
    except RuntimeFailure as exc:
        assert exc.code == 10056  # its monitor saw the writer close the connection
    intruder.close()
    stream.close()
    assert _consume_all("zeromq", writer) == list(range(COUNT))  # retries while the last client goes
    producer.join()
    assert confirmed == [position(n) for n in range(COUNT)]


@pytest.mark.parametrize("kind", ["network", "zeromq"])
def test_wrong_database_is_refused(kind: str) -> None:
    writer = make_writer(kind, [], drain_timeout_s=0.1)
    try:
        stream = StreamClient(kind, writer.address, "OTHER", timeout=3)
        stream.open()
        assert stream.request(pb.INFO).code == pb.INVALID_DATABASE
        assert stream.request(pb.START, scn=1).code == pb.INVALID_DATABASE
        stream.close()
    finally:
        writer.close()
