"""The hand-off between an SFTP reader process and the replicator (sftp_pool / sftp_worker), without SSH:
the shared ring with its slots given back over the ack pipe, and the frames read without read-ahead."""

from __future__ import annotations

import json
import os
import select
import threading

import pytest

from replicator.redo.sftp_pool import FRAME, LOG, PIECE, READY, SLOT, _make_ring, _Worker, write_piece
from replicator.redo.sftp_worker import RingWriter


def _side(out: int, ring=None, ack: int = -1) -> _Worker:
    """The replicator's side of a reader process that is only a pipe (no process started)."""
    w = object.__new__(_Worker)
    w.out, w.ring, w.ack, w.ready = out, ring, ack, False
    return w


def test_ring_hands_pieces_over_in_order_through_two_slots() -> None:
    made = _make_ring(4096, 2)
    if made is None:
        pytest.skip("no memfd on this system: the pieces go through the pipe")
    memfd, ring = made
    ack_r, ack_w = os.pipe()
    frames_r, frames_w = os.pipe()
    writer = RingWriter({"fd": memfd, "ack": ack_r, "slot": 4096, "slots": 2})
    pieces = [bytes([i + 1]) * (4096 - 7 * i) for i in range(7)]  # more pieces than slots: needs the acks
    lock = threading.Lock()
    sent: list[bool] = []

    def produce() -> None:
        for p in pieces:
            sent.append(writer.put(frames_w, [p[:100], p[100:]], lock))  # a piece made of two reads

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    side = _side(frames_r, ring, ack_w)
    try:
        got = []
        for _ in pieces:
            assert select.select([frames_r], [], [], 10)[0], "the reader side stopped handing pieces over"
            kind, place = side.frame()
            assert kind == SLOT
            got.append(side.take(place))  # copies the piece out, gives its slot back
        thread.join(10)
        assert not thread.is_alive() and sent == [True] * len(pieces)
        assert got == pieces
        assert not writer.put(frames_w, [b"x" * 4097], lock)  # larger than a slot: the caller uses the pipe
    finally:
        for fd in (ack_r, ack_w, frames_r, frames_w):
            os.close(fd)
        ring.close()


def test_a_log_frame_before_ready_does_not_hide_ready() -> None:
    # Both frames arrive in one write: reading the first must not take the second off the
    # pipe into a buffer that select() cannot see (the stream then never used the process).
    r, w = os.pipe()
    try:
        payload = json.dumps({"level": 10, "code": 0, "message": "logged in"}).encode()
        os.write(w, FRAME.pack(LOG, len(payload)) + payload + FRAME.pack(READY, 0))
        assert _side(r).poll_ready()
        write_piece(w, [b"ab", b"cd"])
        assert _side(r).frame() == (PIECE, b"abcd")
    finally:
        os.close(r)
        os.close(w)
