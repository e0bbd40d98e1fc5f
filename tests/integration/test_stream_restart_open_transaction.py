"""OLR #330 over real sockets (127.0.0.1): a restart from a confirmed position below a
transaction still open at the confirm drops nothing.

A message's position is its transaction's begin SCN (OLR JSON's c_scn), so positions do not
grow along the stream; OpenLogReplicator drops, after a restart, every message at or below the
client's position, and a transaction that began earlier but committed later (T1 here) is lost.
Two restarts are checked: from a writer checkpoint without a stream position (an OLR
checkpoint: the replay comes again through the client's message, which the writer holds for)
and from our stream position (the daemon's engine restarts exactly after the client's message
and the writer skips nothing).
"""

from __future__ import annotations

import threading
import time

import orjson
import pytest
from stream_harness import client, make_writer

from replicator.events import Message
from replicator.proto import olr_pb2 as pb
from replicator.tools.stream_client import position_of

# The order the replay produces them: T2 (begin SCN 150) commits first, then T1 (begin SCN
# 100, open while T2 was sent and confirmed), then T3.
STREAM = [("T2", 150, 0), ("T2", 150, 1), ("T1", 100, 0), ("T1", 100, 1), ("T3", 160, 0)]


def _message(name: str, scn: int, idx: int) -> Message:
    data = orjson.dumps({"c_scn": scn, "c_idx": idx + 1, "payload": [{"op": "c", "txn": name, "idx": idx}]})
    return Message(data=data, scn=scn, idx=idx)


def _names(frames: list[bytes]) -> list[tuple[str, int]]:
    return [(orjson.loads(f)["payload"][0]["txn"], orjson.loads(f)["payload"][0]["idx"]) for f in frames]


@pytest.mark.parametrize("skip", [True, False], ids=["olr-checkpoint", "stream-position"])
@pytest.mark.parametrize("kind", ["network", "zeromq"])
def test_a_restart_below_an_open_transaction_drops_nothing(kind: str, skip: bool) -> None:
    confirmed: list[tuple[int, int]] = []
    first = make_writer(kind, confirmed, drain_timeout_s=0.2)
    # The daemon: waits for the client's START, then sends T2 only (T1 is still open in the redo).
    daemon = threading.Thread(
        target=lambda: (first.connect(timeout=20), first.write([_message(*m) for m in STREAM[:2]])), daemon=True
    )
    first.open()
    daemon.start()
    stream = client(kind, first)
    try:
        assert stream.start("now").code == pb.REPLICATE
        got = []
        while len(got) < 2:
            frame = stream.receive(5.0)
            assert frame is not None
            got.append(frame)
        stream.confirm(position_of(got[-1], "json"))  # the client processed T2
        deadline = time.monotonic() + 10
        while len(confirmed) < 2 and time.monotonic() < deadline:
            first.flush()
            time.sleep(0.01)
    finally:
        stream.close()
        daemon.join(10)
        first.close()  # the daemon stops before T1 commits
    assert _names(got) == [("T2", 0), ("T2", 1)]
    assert confirmed[-1] == (150, 1)

    # Restart: the checkpoint is below T1's begin, so the replay produces T2 again, then T1, T3.
    second_confirmed: list[tuple[int, int]] = []
    second = make_writer(kind, second_confirmed, drain_timeout_s=5)
    second.restore(*confirmed[-1], first_data_scn=100, skip=skip)
    assert second.connect(timeout=20) is None  # restored: replicates at once
    stream = client(kind, second)
    try:
        reply = stream.request(pb.CONTINUE, c_scn=150, c_idx=2)  # printed c_idx: internal + 1
        assert reply.code == pb.REPLICATE
        replay = STREAM if skip else STREAM[2:]  # our stream position: the engine resumes after T2
        second.write([_message(*m) for m in replay])
        rest = []
        while len(rest) < 3:
            frame = stream.receive(5.0)
            assert frame is not None
            rest.append(frame)
            stream.confirm(position_of(frame, "json"))
        assert _names(rest) == [("T1", 0), ("T1", 1), ("T3", 0)]  # T1 is not dropped, T2 not re-sent
        assert stream.receive(0.2) is None
    finally:
        stream.close()
        second.close()
