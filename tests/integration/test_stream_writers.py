"""Network (TCP) and ZeroMQ writers with real sockets on 127.0.0.1: reconnects, backpressure, restarts."""

from __future__ import annotations

import random
import subprocess
import sys
import time

import pytest
from stream_harness import DATABASE, Producer, client, make_writer, message, number_of, position, started_client

from replicator.errors import ReplicatorError, RuntimeFailure
from replicator.proto import olr_pb2 as pb
from replicator.tools.stream_client import is_data, position_of

KINDS = ["network", "zeromq"]


@pytest.mark.parametrize("kind", KINDS)
def test_random_disconnects_confirmed_union_is_the_stream(kind: str) -> None:
    """A client that drops at random points and resumes from its last CONFIRM sees every message once."""
    count = 2000
    confirmed: list[tuple[int, int]] = []
    writer = make_writer(kind, confirmed, queue_size=300, drain_timeout_s=10)
    producer = Producer(writer, count).start()
    rng = random.Random(1234)
    union: list[int] = []  # messages the client processed and confirmed, across sessions
    last: tuple[int, int] | None = None  # last confirmed (c_scn, printed c_idx)
    sessions = 0
    deadline = time.monotonic() + 60
    while len(union) < count and time.monotonic() < deadline:
        sessions += 1
        stream, reply = started_client(kind, writer, "scn:1000", last)  # retried while the last one is dropped
        try:
            assert reply.code == pb.REPLICATE, reply
            pending: list[int] = []
            for _ in range(rng.randint(1, 400)):
                frame = stream.receive(5.0)
                if frame is None:
                    break
                assert is_data(frame)
                n = number_of(frame)
                assert n == (union[-1] + 1 if union else 0) + len(pending), "gap or duplicate after resume"
                pending.append(n)
                if rng.random() < 0.05 or n == count - 1:
                    stream.confirm(position_of(frame, "json"))
                    last = position_of(frame, "json")
                    union.extend(pending)
                    pending = []
                if n == count - 1:
                    break  # the writer closes once everything is confirmed
        finally:
            stream.close()  # unconfirmed messages in `pending` must come again
    producer.join()
    assert union == list(range(count)) and sessions > 3
    assert confirmed == [position(n) for n in range(count)]  # on_confirm: everything, in order, once


@pytest.mark.parametrize("kind", KINDS)
def test_backpressure_without_deadlock(kind: str) -> None:
    """A full queue blocks write(); the writer still serves INFO/CONFIRM, and confirming unblocks it."""
    confirmed: list[tuple[int, int]] = []
    writer = make_writer(kind, confirmed, queue_size=20, drain_timeout_s=5)
    producer = Producer(writer, 100, batch=7).start()
    stream = client(kind, writer)
    try:
        assert stream.start("now").code == pb.REPLICATE
        frames = [stream.receive(5.0) for _ in range(20)]
        assert all(frames) and stream.receive(0.3) is None  # nothing beyond queue-size unconfirmed
        assert producer.written < 100 and len(writer.queue) == 20
        stream.confirm(position_of(frames[9], "json"))  # frees 10
        more = [stream.receive(5.0) for _ in range(10)]
        assert [number_of(f) for f in more if f] == list(range(20, 30))
        assert stream.request(pb.INFO).code == pb.REPLICATE  # served while the producer waits
        assert stream.request(pb.CONTINUE).code == pb.REPLICATE  # INFO stopped the stream: resume it
        received = []
        while not received or received[-1] != 99:
            frame = stream.receive(5.0)
            assert frame is not None
            received.append(number_of(frame))
            stream.confirm(position_of(frame, "json"))
        assert received == list(range(10, 100))  # CONTINUE without a position: all unconfirmed again
        producer.join()
    finally:
        stream.close()
        writer.close()
    assert confirmed == [position(n) for n in range(100)]


@pytest.mark.parametrize("kind", KINDS)
def test_failed_boot_answers_failed_start_then_starts(kind: str) -> None:
    confirmed: list[tuple[int, int]] = []
    writer = make_writer(kind, confirmed, drain_timeout_s=0.5)
    calls: list[int] = []

    def boot(request) -> int:  # type: ignore[no-untyped-def]
        calls.append(request.scn)
        if len(calls) == 1:
            raise RuntimeFailure("schema for that SCN not found", 10052)
        return request.scn

    stream = client(kind, writer)
    try:
        import threading

        result: list[object] = []
        thread = threading.Thread(target=lambda: result.append(writer.connect(boot=boot, timeout=10)))
        thread.start()
        assert stream.request(pb.INFO).code == pb.READY
        assert stream.request(pb.START, scn=77).code == pb.FAILED_START
        reply = stream.request(pb.START, scn=78)
        assert reply.code == pb.REPLICATE and reply.scn == 78
        thread.join(5)
        assert calls == [77, 78] and result[0].scn == 78
    finally:
        stream.close()
        writer.close()


@pytest.mark.parametrize("kind", KINDS)
def test_restart_from_restored_position_then_continue(kind: str) -> None:
    """A restarted daemon replays from its checkpoint; the client continues after what it confirmed."""
    confirmed: list[tuple[int, int]] = []
    first = make_writer(kind, confirmed, drain_timeout_s=0.2)
    Producer(first, 40, close=False).start()
    stream = client(kind, first)
    received = []
    try:
        assert stream.start("now").code == pb.REPLICATE
        for _ in range(25):
            frame = stream.receive(5.0)
            assert frame is not None
            received.append(number_of(frame))
        stream.confirm(position(14)[0:1] + (position(14)[1] + 1,))  # confirm message 14 (printed idx)
        client_last = position_of(frame, "json")  # the client processed up to 24
        deadline = time.monotonic() + 10
        while len(confirmed) < 15 and time.monotonic() < deadline:  # the CONFIRM reached the writer
            first.flush()
            time.sleep(0.01)
    finally:
        stream.close()
        first.close()
    assert confirmed == [position(n) for n in range(15)]
    second_confirmed: list[tuple[int, int]] = []
    second = make_writer(kind, second_confirmed, drain_timeout_s=5)
    second.restore(*confirmed[-1], first_data_scn=1000)
    producer = Producer(second, 40).start()  # the replay starts at message 0 again
    stream = client(kind, second)
    try:
        info = stream.request(pb.INFO)
        assert info.code == pb.REPLICATE and (info.c_scn, info.c_idx) == (position(14)[0], position(14)[1] + 1)
        assert stream.request(pb.CONTINUE, c_scn=client_last[0], c_idx=client_last[1]).code == pb.REPLICATE
        rest = []
        while len(rest) < 15:
            frame = stream.receive(5.0)
            assert frame is not None
            rest.append(number_of(frame))
            stream.confirm(position_of(frame, "json"))
        assert received + rest == list(range(40))
    finally:
        producer.join()
        stream.close()
    assert second_confirmed == [position(n) for n in range(40)]  # replayed ones are confirmed unsent


def test_client_command_prints_and_confirms() -> None:
    """``replicator client`` (a subprocess) reads the stream, prints every message and confirms."""
    confirmed: list[tuple[int, int]] = []
    writer = make_writer("network", confirmed, drain_timeout_s=10)
    producer = Producer(writer, 300).start()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "replicator",
            "client",
            "network",
            writer.address,
            DATABASE,
            "--start",
            "scn:1000",
            "--confirm-every",
            "100",
            "--count",
            "300",
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    producer.join()
    assert result.returncode == 0, result.stderr.decode()
    lines = result.stdout.splitlines()
    assert [number_of(line) for line in lines] == list(range(300))
    assert confirmed == [position(n) for n in range(300)]


def test_connect_times_out_without_a_client() -> None:
    writer = make_writer("network", [])
    try:
        with pytest.raises(ReplicatorError) as info:
            writer.connect(timeout=0.2)
        assert info.value.code == 10091
    finally:
        writer.close()
    assert message(0).data.startswith(b"{")
