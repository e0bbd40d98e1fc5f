"""The confirm queue: order, silent entries, client positions, capacity."""

from __future__ import annotations

import threading

import pytest
from writer_helpers import msg

from replicator import native
from replicator.writers.queue import AnyEntry, ConfirmQueue, Entry, RunEntry, client_position, wire_position


def _positions(queue: ConfirmQueue) -> list[tuple[int, int]]:
    return [(m.scn, m.idx) for m in queue.take_confirmed()]


def test_wire_positions_use_the_printed_index() -> None:
    assert client_position(100, 3) == (100, 2)  # printed 3 = internal 2
    assert client_position(100, 0) == (100, -1)  # nothing of scn 100
    assert wire_position((100, 2)) == (100, 3)
    assert wire_position(None) == (0, 0)


def test_done_entries_leave_only_from_the_front() -> None:
    queue = ConfirmQueue(10)
    entries = [Entry(msg(b"x", 1, i)) for i in range(3)]
    for entry in entries:
        queue.put(entry)
    queue.mark_done(entries[2])
    queue.mark_done(entries[1])
    assert _positions(queue) == []  # the oldest is still out: nothing is confirmed past it
    queue.mark_done(entries[0])
    assert _positions(queue) == [(1, 0), (1, 1), (1, 2)]
    assert queue.confirmed == (1, 2) and len(queue) == 0


def test_silent_entries_wait_for_their_turn() -> None:
    queue = ConfirmQueue(10)
    first = Entry(msg(b"a", 1, 0))
    queue.put(first)
    queue.put(Entry(msg(b"chk", 1, 1, checkpoint=True), silent=True))
    assert _positions(queue) == []
    queue.mark_done(first)
    assert _positions(queue) == [(1, 0), (1, 1)]


def test_confirm_covers_only_sent_entries() -> None:
    queue = ConfirmQueue(10)
    for i in range(4):
        queue.put(Entry(msg(b"x", 5, i)))
    sent = queue.take_unsent(2)
    assert [e.position for e in sent] == [(5, 0), (5, 1)] and queue.max_sent == (5, 1)
    assert queue.confirm_through((5, 9)) == 2  # a higher position never releases unsent messages
    assert _positions(queue) == [(5, 0), (5, 1)]
    assert queue.cursor == 0 and len(queue) == 2


def test_resume_after_drops_only_through_the_sent_message_it_names() -> None:
    queue = ConfirmQueue(10)
    for i in range(3):
        queue.put(Entry(msg(b"x", 7, i)))
    queue.take_unsent(3)
    queue.resume_after((7, 0))
    assert _positions(queue) == [(7, 0)]
    assert queue.cursor == 0 and [e.position for e in queue.take_unsent(5)] == [(7, 1), (7, 2)]
    # A position above everything queued (issue 31: c_scn 2^63) drops nothing, now or later.
    queue.resume_after((1 << 63, 4))
    queue.put_many([Entry(msg(b"x", 9, i)) for i in range(2)])
    assert _positions(queue) == []
    assert [e.position for e in queue.take_unsent(5)] == [(7, 1), (7, 2), (9, 0), (9, 1)]


def test_resume_after_a_position_queued_but_never_sent_drops_nothing() -> None:
    queue = ConfirmQueue(10)
    for scn in (10, 30, 20):  # positions need not grow (begin SCN order)
        queue.put(Entry(msg(b"x", scn, 0)))
    queue.take_unsent(1)
    queue.resume_after((30, 0))  # queued, but no client was ever given it
    queue.resume_after((25, 0))  # not queued at all: "at or below" cannot tell what the client has
    assert _positions(queue) == []
    assert [e.position for e in queue.take_unsent(5)] == [(10, 0), (30, 0), (20, 0)]  # all again, none lost


def test_rewind_sends_everything_unconfirmed_again() -> None:
    queue = ConfirmQueue(10)
    queue.put_many([Entry(msg(b"x", 1, i)) for i in range(3)])
    queue.take_unsent(3)
    queue.rewind()
    assert [e.position for e in queue.take_unsent(3)] == [(1, 0), (1, 1), (1, 2)]


def test_capacity_and_waiting() -> None:
    queue = ConfirmQueue(2)
    assert queue.put_many([Entry(msg(b"x", 1, i)) for i in range(3)]) == 2
    assert not queue.wait_for_space(0.01)
    head = queue.take_unsent(1)[0]
    threading.Timer(0.05, queue.confirm_through, args=(head.position,)).start()
    assert queue.wait_for_space(2.0)
    assert queue.wait_empty(0.01) is False


def test_exact_confirm_does_not_release_later_lower_positions() -> None:
    """OLR #330: c_scn is a begin SCN, so a later transaction may carry a lower position."""
    queue = ConfirmQueue(10)
    order = [(150, 0), (150, 1), (100, 0), (100, 1)]  # T2 (begin 150) commits before T1 (begin 100)
    queue.put_many([Entry(msg(b"x", scn, idx)) for scn, idx in order])
    queue.take_unsent(4)
    queue.confirm_through((150, 1))  # the client processed T2 only
    assert _positions(queue) == [(150, 0), (150, 1)]
    assert [e.position for e in queue.unconfirmed()] == [(100, 0), (100, 1)]  # T1 is kept
    queue.rewind()
    queue.put(Entry(msg(b"x", 160, 0)))
    queue.resume_after((100, 0))  # exact: through that message, not beyond
    assert _positions(queue) == [(100, 0)]
    assert [e.position for e in queue.take_unsent(5)] == [(100, 1), (160, 0)]


def test_a_resumed_position_not_replayed_yet_holds_until_it_comes_again() -> None:
    """After a restart the replay reaches the client's message later; positions do not grow
    (begin SCNs), so a skip "at or below" would end early and re-send what the client has."""
    queue = ConfirmQueue(10)
    queue.resume_at((200, 1))  # the client printed (200, 1) before the daemon died
    for scn, idx in [(300, 0), (150, 0), (200, 0), (200, 1)]:  # (300, 0) is above it, yet the client has it
        queue.put(Entry(msg(b"old", scn, idx)))
    assert queue.take_unsent(10) == []
    assert _positions(queue) == [(300, 0), (150, 0), (200, 0), (200, 1)]  # dropped without sending
    queue.put(Entry(msg(b"new", 100, 0)))  # lower than the client's position, but new: sent
    assert [e.position for e in queue.take_unsent(10)] == [(100, 0)]


def test_a_resumed_position_that_never_comes_again_is_given_up_at_capacity() -> None:
    queue = ConfirmQueue(3)
    queue.resume_at((999, 0))
    for i in range(2):
        queue.put(Entry(msg(b"x", 1, i)))
    assert queue.take_unsent(10) == []  # still holding
    queue.put(Entry(msg(b"x", 1, 2)))
    assert [e.position for e in queue.take_unsent(10)] == [(1, 0), (1, 1), (1, 2)]  # duplicates, not a loss


def test_a_silent_checkpoint_with_the_same_position_is_not_the_clients_message() -> None:
    """A checkpoint message (LWN SCN, 0) can share a transaction's (begin SCN, 0): popping it
    must not look as if the client's own message had left the queue."""
    queue = ConfirmQueue(10)
    queue.resume_at((200, 0))
    queue.put(Entry(msg(b"chk", 200, 0, checkpoint=True), silent=True))
    assert queue.confirmed == (200, 0) and queue.client_has is None and queue.hold == (200, 0)
    queue.put(Entry(msg(b"old", 200, 0)))
    assert queue.client_has == (200, 0) and queue.hold is None and len(queue) == 0


# -- native MessageRuns as entries: every rule holds message by message ----------------------

needs_native = pytest.mark.skipif(not native.available(), reason="native core not built")


def _run(scn: int, idxs: list[int]) -> RunEntry:
    return RunEntry(native.runframes().make_run([msg(b"r%d" % i, scn, i) for i in idxs]))


def _sent(entries: list[AnyEntry]) -> list[tuple[int, int]]:
    out = []
    for entry in entries:
        if isinstance(entry, RunEntry):
            out.extend((m.scn, m.idx) for m in entry.messages())
        else:
            out.append(entry.position)
    return out


@needs_native
def test_a_run_counts_its_messages_against_capacity_and_is_split_to_fit() -> None:
    queue = ConfirmQueue(5)
    entries: list[AnyEntry] = [Entry(msg(b"x", 1, 0)), _run(2, [0, 1, 2, 3, 4, 5])]
    assert queue.put_many(entries) == 1 and len(queue) == 5  # the run's head fits, the rest waits
    rest = entries[1]
    assert isinstance(rest, RunEntry) and (rest.first, rest.stop) == (4, 6)
    assert _sent(queue.take_unsent(100)) == [(1, 0), (2, 0), (2, 1), (2, 2), (2, 3)]
    assert queue.confirm_through((2, 3)) == 5 and len(queue) == 0
    assert queue.put_many([rest]) == 1 and _sent(queue.take_unsent(100)) == [(2, 4), (2, 5)]


@needs_native
def test_a_confirm_inside_a_run_releases_it_through_that_message_only() -> None:
    queue = ConfirmQueue(10)
    queue.put_many([_run(7, [0, 1, 2, 3])])
    queue.take_unsent(10)
    assert queue.confirm_through((7, 1)) == 2
    assert _positions(queue) == [(7, 0), (7, 1)] and queue.confirmed == (7, 1) and len(queue) == 2
    queue.rewind()
    assert _sent(queue.take_unsent(10)) == [(7, 2), (7, 3)]  # only the unconfirmed part again
    assert queue.confirm_through((9, 0)) == 2  # at or below: the rest of the run
    assert _positions(queue) == [(7, 2), (7, 3)]


@needs_native
def test_an_exact_confirm_in_a_run_does_not_release_later_lower_positions() -> None:
    queue = ConfirmQueue(10)
    queue.put_many([_run(150, [0, 1]), _run(100, [0, 1])])  # OLR #330 with runs
    queue.take_unsent(10)
    queue.confirm_through((150, 1))
    assert _positions(queue) == [(150, 0), (150, 1)]
    queue.confirm_through((100, 0))
    assert _positions(queue) == [(100, 0)] and len(queue) == 1


@needs_native
def test_resume_after_and_resume_at_find_a_position_inside_a_run() -> None:
    queue = ConfirmQueue(10)
    queue.put_many([_run(7, [0, 1, 2])])
    queue.take_unsent(10)
    queue.resume_after((7, 1))
    assert _positions(queue) == [(7, 0), (7, 1)] and queue.client_has == (7, 1)
    assert _sent(queue.take_unsent(10)) == [(7, 2)]

    held = ConfirmQueue(10)
    held.resume_at((200, 1))
    held.put(_run(300, [0]))
    assert held.take_unsent(10) == []
    held.put(_run(200, [0, 1, 2]))  # the client's message is inside: dropped through it
    assert _positions(held) == [(300, 0), (200, 0), (200, 1)] and held.hold is None
    assert _sent(held.take_unsent(10)) == [(200, 2)]


@needs_native
def test_a_restored_skip_position_inside_a_run_silences_only_its_head() -> None:
    queue = ConfirmQueue(10)
    queue.skip = (5, 1)
    queue.put(_run(5, [0, 1, 2, 3]))
    assert _positions(queue) == [(5, 0), (5, 1)] and queue.skip is None and len(queue) == 2
    assert _sent(queue.take_unsent(10)) == [(5, 2), (5, 3)]
