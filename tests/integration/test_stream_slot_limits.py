"""Peers that do not start replication cannot hold a stream writer's single client slot (issue 15, fault 4).

A peer sending INFO now and then, or dripping a request one byte at a time, used to
lock the real client out for as long as it liked (every byte reset the idle timer).
Now: a request must be complete within REQUEST_S, START/CONTINUE must come within
HANDSHAKE_S, and a new connection replaces a client that has not started. With
``auth-token`` a client must authenticate first (network: its first frame; ZeroMQ: the
ZMTP PLAIN password). ZeroMQ follows the same rules: of many idle raw connections each
new one replaces the last at once, and the last is closed after the handshake limit.
Real sockets on 127.0.0.1, bounded in time.
"""

from __future__ import annotations

import socket
import time

import pytest
from stream_harness import DATABASE, Producer, client, make_writer, number_of

from replicator.errors import RuntimeFailure
from replicator.proto import olr_pb2 as pb
from replicator.tools.stream_client import StreamClient
from replicator.writers.stream_writer import StreamWriter


def _raw(writer: StreamWriter) -> socket.socket:
    host, port = writer.address.removeprefix("tcp://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


def _closed(sock: socket.socket) -> bool:
    """True when the server has closed ``sock`` (EOF or reset); False while it is open.
    Bytes the server sent first (ZeroMQ's greeting) are read and ignored."""
    sock.setblocking(False)
    try:
        while True:
            if sock.recv(65536) == b"":
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def _info(writer: StreamWriter) -> StreamClient:
    """A client that asks INFO and never starts."""
    idle = client("network", writer)
    assert idle.request(pb.INFO).code == pb.READY
    return idle


def test_a_real_client_replaces_one_that_never_started() -> None:
    writer = make_writer("network", [], drain_timeout_s=0.5)
    producer = Producer(writer, 20).start()
    idle = _info(writer)
    dripper = _raw(writer)
    dripper.sendall(b"\x10")  # one byte of a length prefix
    real = client("network", writer)
    try:
        assert real.start("now").code == pb.REPLICATE  # it took the slot at once
        frames = [real.receive(5.0) for _ in range(20)]
        assert [number_of(f) for f in frames if f is not None] == list(range(20))
    finally:
        real.close()
        idle.close()
        dripper.close()
        producer.join()


def test_info_every_half_second_is_dropped_without_start() -> None:
    writer = make_writer("network", [], client_timeout_s=2.0, drain_timeout_s=0.1)
    try:
        idle = _info(writer)
        deadline = time.monotonic() + 5
        dropped = False
        while time.monotonic() < deadline and not dropped:
            time.sleep(0.5)
            try:
                idle.request(pb.INFO)
            except RuntimeFailure:
                dropped = True
        assert dropped, "a client that only sends INFO kept the slot"
        idle.close()
    finally:
        writer.close()


def test_a_request_dripped_byte_by_byte_is_dropped() -> None:
    writer = make_writer("network", [], client_timeout_s=2.0, drain_timeout_s=0.1)
    try:
        writer.open()
        dripper = _raw(writer)
        deadline = time.monotonic() + 5
        sent = 0
        while time.monotonic() < deadline and not _closed(dripper):
            try:
                dripper.send(b"\x00")
            except OSError:
                break
            sent += 1
            time.sleep(0.3)
        assert time.monotonic() < deadline, f"a request dripped for 5 s ({sent} bytes) kept the connection"
        dripper.close()
    finally:
        writer.close()


def test_auth_token() -> None:
    writer = make_writer("network", [], auth_token="s3cret-token-0123", drain_timeout_s=0.5)
    producer = Producer(writer, 5).start()
    try:
        stranger = client("network", writer)
        with pytest.raises(RuntimeFailure):
            stranger.request(pb.INFO)  # not authenticated: the connection is closed, no reply
        stranger.close()
        wrong = StreamClient("network", writer.address, DATABASE, "json", 5.0, token="guess")
        wrong.open()
        with pytest.raises(RuntimeFailure):
            wrong.request(pb.INFO)
        wrong.close()
        _member_receives(writer, 5, token="s3cret-token-0123")
    finally:
        producer.join()


def test_zeromq_auth_token() -> None:
    """ZMTP PLAIN with the token as password: a NULL peer or a wrong password never gets an answer."""
    writer = make_writer("zeromq", [], auth_token="s3cret-token-0123", drain_timeout_s=0.5)
    producer = Producer(writer, 5).start()
    try:
        for token in (None, "a-wrong-token-guess"):
            stranger = StreamClient("zeromq", writer.address, DATABASE, "json", 1.0, token=token)
            stranger.open()
            with pytest.raises(RuntimeFailure):
                stranger.request(pb.INFO)  # closed in the handshake (its libzmq retries): no reply
            stranger.close()
        _member_receives(writer, 5, kind="zeromq", token="s3cret-token-0123")
    finally:
        producer.join()


def _member_receives(writer, count: int, kind: str = "network", **credentials: str) -> None:
    """A client with ``credentials`` starts at "now" and gets messages 0..count-1 in order."""
    member = StreamClient(kind, writer.address, DATABASE, "json", 5.0, **credentials)
    member.open()
    assert member.start("now").code == pb.REPLICATE
    assert [number_of(member.receive(5.0) or b"") for _ in range(count)] == list(range(count))
    member.close()


def test_zeromq_closes_idle_and_excess_connections() -> None:
    writer = make_writer("zeromq", [], drain_timeout_s=0.1)  # default client_timeout_s (30 s)
    try:
        writer.open()
        idle = [_raw(writer) for _ in range(20)]
        soon = time.monotonic() + 2  # well before the 5 s handshake limit
        while time.monotonic() < soon and sum(_closed(s) for s in idle) < 19:
            time.sleep(0.05)
        at_once = sum(_closed(s) for s in idle)
        assert at_once >= 19, f"only {at_once} of 20 idle connections were replaced at once"
        deadline = time.monotonic() + 8  # the handshake limit is 5 s (it was the 30 s client timeout)
        while time.monotonic() < deadline and not all(_closed(s) for s in idle):
            time.sleep(0.2)
        assert all(_closed(s) for s in idle), "idle raw connections stayed open past the handshake limit"
        for s in idle:
            s.close()
    finally:
        writer.close()


def _self_signed(tmp_path) -> tuple[str, str]:
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return str(cert), str(key)


def test_tls_with_token(tmp_path) -> None:
    cert, key = _self_signed(tmp_path)
    writer = make_writer("network", [], auth_token="s3cret-token-0123", tls_cert=cert, tls_key=key, drain_timeout_s=0.5)
    producer = Producer(writer, 50).start()
    try:
        plain = client("network", writer)  # no TLS: the handshake fails, the connection is closed
        with pytest.raises(RuntimeFailure):
            plain.request(pb.INFO)
        plain.close()
        _member_receives(writer, 50, token="s3cret-token-0123", tls_ca=cert)
    finally:
        producer.join()
