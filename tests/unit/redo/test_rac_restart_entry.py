"""RAC restart-point entries: where each thread is re-read from and the bound it restarts with."""

from __future__ import annotations

from collections import deque

from replicator.redo.merge import restart_entry, start_bound


def test_a_thread_between_logs_carries_the_finished_logs_next_scn() -> None:
    # Read its log 1 to the end (next SCN 900), nothing of log 2 yet, no open transaction.
    assert restart_entry(3, (2, 0), deque(), None, lwn_scn=500, bound=900) == (3, 2, 0, 900)
    assert start_bound(0, 900) == 900  # every record of log 2 on has an SCN >= 900


def test_a_thread_inside_a_log_carries_its_last_lwn_scn_and_restarts_unbounded() -> None:
    assert restart_entry(1, (4, 10240), deque(), None, lwn_scn=700, bound=720) == (1, 4, 10240, 700)
    assert start_bound(10240, 700) == 0  # re-read from an LWN that may hold lower SCNs


def test_an_open_transaction_moves_the_position_back_and_drops_the_bound() -> None:
    # Between logs, but a transaction begun at SCN 650 has records in log 1 from offset 4096.
    history = deque([(640, 1, 2048), (660, 1, 4096)])
    entry = restart_entry(2, (2, 0), history, 650, lwn_scn=680, bound=900)
    assert entry == (2, 1, 4096, 680)
    assert start_bound(entry[2], entry[3]) == 0
