"""The stream writers take native MessageRuns: the bytes on the socket are exactly those the
same messages give one by one.

The batch run of a real redo stream (native engine) hands over Messages and MessageRuns; the
same items go to a network and a zeromq writer once as they are (``write_runs``) and once as
Messages (``write``). A raw client records every byte it receives, confirms a position that
lies inside a run, drops the connection and continues: both sessions must see identical
bytes on both paths (the framing, the redelivery of what was not confirmed), and the
writer must report the same confirmed positions.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from run_capture import RunSink
from stream_harness import DATABASE, make_writer

from replicator import native
from replicator.events import Message
from replicator.proto import olr_pb2 as pb
from replicator.redogen import generate, workloads
from replicator.runner.batch import build_job, run_job
from replicator.tools.stream_client import position_of
from replicator.writers import zmtp
from replicator.writers.queue import client_position

pytestmark = pytest.mark.skipif(not native.available(), reason="native core not built")

_LEN = struct.Struct("<I")


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """What the native batch run of a small OLTP stream hands a run-taking sink."""
    gen = generate(workloads.oltp(seed=11, target_bytes=1 << 19), tmp_path_factory.mktemp("gen"), with_expected=False)
    cfg = json.loads(Path(gen.config).read_text())
    cfg["target"][0]["writer"] = {"type": "discard"}
    path = tmp_path_factory.mktemp("work") / "config.json"
    path.write_text(json.dumps(cfg))
    sink = RunSink()
    run_job(build_job(str(path)), sink=sink, engine="native")
    assert sum(1 for item in sink.items if type(item) is not Message and len(item) > 2) > 20
    return sink.items


class RawClient:
    """A client speaking the wire by hand, keeping every byte the writer sent after its reply."""

    def __init__(self, kind: str, address: str) -> None:
        self.kind = kind
        if kind == "network":
            host, _, port = address.rpartition(":")
        else:
            host, _, port = address.removeprefix("tcp://").rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.buf = bytearray()
        self.raw = bytearray()  # everything received after the handshake
        if kind == "zeromq":
            self.sock.sendall(zmtp.greeting(b"NULL", as_server=False))
            self.sock.sendall(zmtp.command(b"READY", zmtp.properties({b"Socket-Type": b"PAIR"})))
            self._read_exactly(zmtp.GREETING_SIZE)
            del self.buf[: zmtp.GREETING_SIZE]
            flags, body = self.frame()
            assert flags & zmtp.COMMAND and body[1 : 1 + body[0]] == b"READY"

    def request(self, code: int, **fields: Any) -> None:
        body = pb.RedoRequest(code=code, database_name=DATABASE, **fields).SerializeToString()
        self.sock.sendall(_LEN.pack(len(body)) + body if self.kind == "network" else zmtp.frame(body))

    def _read_exactly(self, size: int) -> None:
        while len(self.buf) < size:
            chunk = self.sock.recv(1 << 16)
            assert chunk, "the writer closed the connection"
            self.buf += chunk
            self.raw += chunk

    def frame(self) -> tuple[int, bytes]:
        """The next frame: (ZMTP flags or 0, body)."""
        if self.kind == "network":
            self._read_exactly(4)
            size = _LEN.unpack_from(self.buf)[0]
            start, flags = 4, 0
        else:
            self._read_exactly(2)
            flags = self.buf[0]
            if flags & zmtp.LONG:
                self._read_exactly(9)
                size, start = struct.unpack_from(">Q", self.buf, 1)[0], 9
            else:
                size, start = self.buf[1], 2
        self._read_exactly(start + size)
        body = bytes(self.buf[start : start + size])
        del self.buf[: start + size]
        return flags, body

    def record(self) -> None:
        """Keep the bytes from here on (those received but not read yet included)."""
        self.raw = bytearray(self.buf)

    def reply(self) -> pb.RedoResponse:
        return pb.RedoResponse.FromString(self.frame()[1])

    def close(self) -> None:
        self.sock.close()


def _inside_a_run(items: list[Any], at: int) -> int:
    """The number of the first message from ``at`` on that lies inside a run, not at its end."""
    n = 0
    for item in items:
        size = 1 if type(item) is Message else len(item)
        if size > 1 and n + size - 1 > at:
            return max(at, n)
        n += size
    raise AssertionError("no run long enough")


def _sessions(kind: str, items: list[Any], as_runs: bool, tmp_path: Path) -> tuple[bytes, bytes, list[Any], int]:
    """Write ``items`` (as runs or as Messages); a first client session reads a part of the
    data and confirms a message inside a run, then leaves; a second one continues and
    reads the rest. Returns both sessions' bytes, the confirmations and messages_confirmed."""
    messages = [m for item in items for m in ([item] if type(item) is Message else list(item))]
    total = len(messages)
    confirmed: list[tuple[int, int]] = []
    writer = make_writer(kind, confirmed, queue_size=total + 10, drain_timeout_s=10.0)
    first = RawClient(kind, writer.address)
    first.request(pb.INFO)
    assert first.reply().code == pb.READY
    first.request(pb.START, scn=1)
    assert writer.connect(timeout=10) is not None
    assert first.reply().code == pb.REPLICATE
    first.record()
    if as_runs:
        writer.write_runs(items)
    else:
        writer.write(messages)
    cut = _inside_a_run(items, total // 4)
    frames = [first.frame()[1] for _ in range(cut + total // 10)]
    c_scn, c_idx = position_of(frames[cut], "json")
    first.request(pb.CONFIRM, c_scn=c_scn, c_idx=c_idx)
    kept = len(first.raw) - len(first.buf)  # the bytes of the frames read (what follows depends on timing)
    session1 = bytes(first.raw[:kept])
    deadline = time.monotonic() + 10
    while writer.queue.client_has != client_position(c_scn, c_idx):  # closing with unread bytes resets the
        assert time.monotonic() < deadline, "the writer did not take the CONFIRM"  # connection: CONFIRM first
        time.sleep(0.01)
    first.close()
    while writer.protocol.streaming:
        assert time.monotonic() < deadline, "the writer did not notice the client leaving"
        time.sleep(0.01)
    second = RawClient(kind, writer.address)
    second.request(pb.INFO)
    assert second.reply().code == pb.REPLICATE
    second.request(pb.CONTINUE)
    assert second.reply().code == pb.REPLICATE
    second.record()
    last = b""
    while last != messages[-1].data:  # the unconfirmed messages again, then the rest
        last = second.frame()[1]
    c_scn, c_idx = position_of(last, "json")
    second.request(pb.CONFIRM, c_scn=c_scn, c_idx=c_idx)
    session2 = bytes(second.raw)
    closer = threading.Thread(target=writer.close)
    closer.start()
    closer.join(15)
    assert not closer.is_alive()
    second.close()
    assert len(writer.queue) == 0
    return session1, session2, confirmed, writer.messages_confirmed


@pytest.mark.parametrize("kind", ["network", "zeromq"])
def test_runs_put_the_same_bytes_on_the_wire_as_messages(kind: str, items: list[Any], tmp_path: Path) -> None:
    runs = _sessions(kind, items, True, tmp_path)
    one_by_one = _sessions(kind, items, False, tmp_path)
    assert runs[0] == one_by_one[0] and runs[1] == one_by_one[1]
    assert len(runs[1]) > 1000
    assert runs[3] == one_by_one[3] == sum(1 if type(i) is Message else len(i) for i in items)
    # Each path reports the same positions: one by one on the message path; on the run path
    # one per run (or per part of a run a client position cut), all of them among those.
    assert runs[2][-1] == one_by_one[2][-1]
    assert set(runs[2]) <= set(one_by_one[2]) and len(runs[2]) < len(one_by_one[2])
