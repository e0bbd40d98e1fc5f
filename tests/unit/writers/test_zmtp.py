"""The zeromq writer's ZMTP server wire, fed the bytes a libzmq PAIR client sends (RFC 23, 24, 37).

Interoperability with real libzmq (pyzmq, OpenLogReplicator's StreamClient) is checked by
the stream writer integration tests; these pin the protocol cases one by one.
"""

from __future__ import annotations

import pytest

from replicator.writers.stream import MAX_REQUEST
from replicator.writers.transport import WireError
from replicator.writers.zmtp import ZmtpServer, command, frame, greeting, properties

PAIR = properties({b"Socket-Type": b"PAIR", b"Identity": b""})
TOKEN = b"s3cret-token-0123"


def _hello(password: bytes, user: bytes = b"replicator") -> bytes:
    return command(b"HELLO", bytes((len(user),)) + user + bytes((len(password),)) + password)


def _ready_server(token: bytes | None = None) -> ZmtpServer:
    wire = ZmtpServer(token)
    mechanism = b"PLAIN" if token else b"NULL"
    assert wire.take_output() == greeting(mechanism, as_server=token is not None)
    if token:
        assert wire.feed(greeting(b"PLAIN", False) + _hello(token)) == []
        assert wire.take_output() == command(b"WELCOME")
        assert wire.feed(command(b"INITIATE", PAIR)) == []
    else:
        assert wire.feed(greeting(b"NULL", False) + command(b"READY", PAIR)) == []
    assert wire.take_output() == command(b"READY", properties({b"Socket-Type": b"PAIR"}))
    assert wire.ready
    return wire


@pytest.mark.parametrize("token", [None, TOKEN])
def test_handshake_then_requests(token: bytes | None) -> None:
    wire = _ready_server(token)
    long_request = b"r" * 300  # above 255 bytes: the LONG flag and an 8-byte size
    data = frame(b"info") + frame(long_request)
    assert wire.feed(data[:3]) == [] and wire.partial  # frames may arrive in pieces
    assert wire.feed(data[3:]) == [b"info", long_request] and not wire.partial
    assert wire.header(5) == b"\x00\x05" and wire.header(300) == b"\x02" + (300).to_bytes(8, "big")


def test_greeting_bytes_in_pieces_and_ping() -> None:
    wire = ZmtpServer()
    client = greeting(b"NULL", False) + command(b"READY", PAIR)
    for i in range(len(client)):  # one byte at a time
        assert wire.feed(client[i : i + 1]) == []
    assert wire.ready
    wire.take_output()
    assert wire.feed(command(b"PING", b"\x00\x0actx")) == []
    assert wire.take_output() == command(b"PONG", b"ctx")


@pytest.mark.parametrize(
    ("client", "code", "text"),
    [
        (b"\x05\x00\x00\x00hello", 60084, "not a ZeroMQ peer"),  # a network-writer client
        (b"GET / HTTP/1.1\r\n", 60084, "not a ZeroMQ peer"),
        (b"\xff" + bytes(8) + b"\x7f\x02\x00" + bytes(52), 60084, "ZMTP 2.x is too old"),
        (greeting(b"CURVE", False), 60084, "security mechanism CURVE"),
        (greeting(b"PLAIN", False), 60084, "security mechanism PLAIN"),  # the writer has no token
        (
            greeting(b"NULL", False) + command(b"READY", properties({b"Socket-Type": b"DEALER"})),
            60084,
            "socket type DEALER",
        ),
        (greeting(b"NULL", False) + frame(b"info"), 60084, "a message before the handshake ended"),
        (greeting(b"NULL", False) + command(b"READY", PAIR) + b"\x40\x01x", 60084, "undefined frame flags"),
        (
            greeting(b"NULL", False) + command(b"READY", PAIR) + frame(b"x" * (MAX_REQUEST + 1)),
            10055,
            "exceeds buffer size",
        ),
    ],
)
def test_protocol_violations_close_the_connection(client: bytes, code: int, text: str) -> None:
    wire = ZmtpServer()
    with pytest.raises(WireError) as info:
        wire.feed(client)
    assert info.value.code == code and text in info.value.message, info.value.message


@pytest.mark.parametrize("client", [greeting(b"NULL", False), greeting(b"PLAIN", False) + _hello(b"guess-guess-guess")])
def test_plain_without_the_token_is_refused(client: bytes) -> None:
    wire = ZmtpServer(TOKEN)
    with pytest.raises(WireError) as info:
        wire.feed(client)
    assert info.value.code == 60103 and "did not authenticate" in info.value.message
    assert not wire.ready
