"""The stream protocol state machine, without sockets."""

from __future__ import annotations

import pytest
from writer_helpers import msg

from replicator.proto import olr_pb2 as pb
from replicator.writers.queue import NO_SCN, ConfirmQueue, Entry
from replicator.writers.stream import MAX_REQUEST, READY, REPLICATING, STARTING, StreamProtocol


class Harness:
    """A protocol with a queue, recording replies."""

    def __init__(self, database: str = "DB") -> None:
        self.replies: list[pb.RedoResponse] = []
        self.queue = ConfirmQueue(100)
        self.protocol = StreamProtocol(self.queue, database, self.replies.append)

    def request(self, code: int, database: str = "DB", session: int = 1, **fields: int) -> pb.RedoResponse | None:
        self.replies.clear()
        start = self.protocol.handle(
            pb.RedoRequest(code=code, database_name=database, **fields).SerializeToString(), session
        )
        if start is not None:
            self.protocol.finish_start(True, start.first_data_scn, session)
        return self.replies[-1] if self.replies else None

    def confirmed(self) -> list[tuple[int, int]]:
        return [(m.scn, m.idx) for m in self.queue.take_confirmed()]


def test_start_info_and_already_started() -> None:
    h = Harness()
    assert h.request(pb.INFO).code == pb.READY
    reply = h.request(pb.START, scn=500)
    assert reply.code == pb.REPLICATE and reply.scn == 500 and h.protocol.streaming
    assert h.protocol.status == REPLICATING
    reply = h.request(pb.INFO)
    assert reply.code == pb.REPLICATE and not h.protocol.streaming  # INFO stops the stream
    assert h.request(pb.START, scn=1).code == pb.ALREADY_STARTED


def test_start_needs_a_starting_point_and_a_known_database() -> None:
    h = Harness()
    assert h.request(pb.START).code == pb.INVALID_COMMAND
    assert h.request(pb.INFO, database="OTHER").code == pb.INVALID_DATABASE
    assert h.protocol.status == READY


def test_info_while_starting_says_starting() -> None:
    h = Harness()
    start = h.protocol.handle(
        pb.RedoRequest(code=pb.START, database_name="DB", tms="2024-01-01 00:00:00").SerializeToString(), 1
    )
    assert start is not None and start.kind == "time" and h.protocol.status == STARTING
    assert h.request(pb.INFO).code == pb.STARTING  # OLR falls through to REPLICATE here
    assert h.request(pb.START, scn=NO_SCN).code == pb.STARTING
    h.protocol.finish_start(False, 0, 1)
    assert h.protocol.status == READY and h.replies[-1].code == pb.FAILED_START


def test_confirm_and_continue_use_printed_indexes() -> None:
    h = Harness()
    h.request(pb.START, scn=10)
    h.queue.put_many([Entry(msg(b"x", 10, i)) for i in range(4)])
    h.queue.take_unsent(4)
    assert h.request(pb.CONFIRM, c_scn=10, c_idx=2) is None  # printed 2 = the second message
    assert h.confirmed() == [(10, 0), (10, 1)]
    h.request(pb.INFO)
    reply = h.request(pb.CONTINUE, c_scn=10, c_idx=3)
    assert reply.code == pb.REPLICATE and (reply.c_scn, reply.c_idx) == (10, 3)
    assert h.confirmed() == [(10, 2)]
    assert [e.position for e in h.queue.take_unsent(5)] == [(10, 3)]


def test_confirm_of_a_position_never_sent_is_refused() -> None:
    h = Harness()
    h.request(pb.START, scn=10)
    h.queue.put(Entry(msg(b"x", 10, 0)))
    h.queue.take_unsent(1)
    assert h.request(pb.CONFIRM, c_scn=11, c_idx=1).code == pb.INVALID_COMMAND
    assert h.request(pb.CONFIRM, c_scn=10, c_idx=2).code == pb.INVALID_COMMAND
    assert h.confirmed() == [] and len(h.queue) == 1
    assert h.request(pb.CONFIRM) is None  # no c_scn: warning only
    assert h.request(pb.CONFIRM, c_scn=10, c_idx=1) is None and h.confirmed() == [(10, 0)]


def test_continue_when_ready_is_refused() -> None:
    """Nothing was sent or confirmed: no position can be continued from (OLR answers REPLICATE
    and streams nothing; a former version started replication skipping everything at or below it)."""
    h = Harness()
    assert h.request(pb.CONTINUE).code == pb.INVALID_COMMAND
    assert h.request(pb.CONTINUE, c_scn=1 << 63, c_idx=5).code == pb.INVALID_COMMAND
    assert h.protocol.status == READY and not h.protocol.streaming


def test_continue_from_a_position_never_sent_is_refused_and_skips_nothing() -> None:
    """Issue 31: one CONTINUE (c_scn 2^63) from any process confirmed every queued and later message."""
    h = Harness()
    h.request(pb.START, scn=10)
    h.queue.put_many([Entry(msg(b"x", 10, 0)), Entry(msg(b"x", 10, 1)), Entry(msg(b"x", 9, 0))])
    h.queue.take_unsent(2)
    h.request(pb.INFO)
    for c_scn, c_idx in [(1 << 63, 5), (10, 3), (11, 1)]:  # beyond the highest sent, printed (10, 2)
        assert h.request(pb.CONTINUE, c_scn=c_scn, c_idx=c_idx).code == pb.INVALID_COMMAND
        assert not h.protocol.streaming
    h.queue.put(Entry(msg(b"x", 12, 0)))
    assert h.confirmed() == [] and len(h.queue) == 4
    assert h.request(pb.CONTINUE, c_scn=9, c_idx=1).code == pb.REPLICATE  # queued, never sent: nothing dropped
    assert h.confirmed() == []
    assert [e.position for e in h.queue.take_unsent(9)] == [(10, 0), (10, 1), (9, 0), (12, 0)]


def test_continue_after_a_restart_is_held_for_only_until_something_was_sent() -> None:
    h = Harness()
    h.protocol.restore((30, 1), 25, skip=False)
    assert h.request(pb.CONTINUE, c_scn=20, c_idx=1).code == pb.REPLICATE  # the previous run sent it
    assert h.queue.hold == (20, 0)  # lower than the checkpoint (a begin SCN), yet maybe the client's
    h.request(pb.INFO)
    assert h.request(pb.CONTINUE, c_scn=40, c_idx=1).code == pb.REPLICATE
    assert h.queue.hold == (40, 0)
    h.queue.put_many([Entry(msg(b"x", 35, 0)), Entry(msg(b"x", 40, 0)), Entry(msg(b"x", 41, 0))])
    assert h.confirmed() == [(35, 0), (40, 0)]  # the replay reached it: the client has these
    h.queue.take_unsent(1)
    h.request(pb.INFO)
    assert h.request(pb.CONTINUE, c_scn=50, c_idx=1).code == pb.INVALID_COMMAND  # sent since: must be known
    assert h.request(pb.CONTINUE, c_scn=41, c_idx=1).code == pb.REPLICATE


def test_garbage_oversize_and_unknown_codes() -> None:
    h = Harness()
    h.protocol.handle(b"\xff\xff\xff", 1)
    assert h.replies[-1].code == pb.INVALID_COMMAND
    h.protocol.handle(b"\x08\x02" * (MAX_REQUEST // 2 + 1), 1)
    assert h.replies[-1].code == pb.INVALID_COMMAND
    assert h.request(17).code == pb.INVALID_COMMAND
    h.request(pb.START, scn=1)
    assert h.request(pb.START, scn=1).code == pb.INVALID_COMMAND  # while streaming


@pytest.mark.parametrize("database", ["", "DB"])
def test_restore_replicates_and_skips(database: str) -> None:
    h = Harness(database)
    h.protocol.restore((30, 1), 25)
    reply = h.request(pb.INFO)
    assert reply.code == pb.REPLICATE and (reply.scn, reply.c_scn, reply.c_idx) == (25, 30, 2)
    h.queue.put_many([Entry(msg(b"x", 30, i)) for i in range(3)])
    assert h.confirmed() == [(30, 0), (30, 1)]
