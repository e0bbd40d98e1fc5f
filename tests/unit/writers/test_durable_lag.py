"""DurableLag: saves off the caller's thread, bounds the unsaved confirmations, never blocks on a failing disk."""

from __future__ import annotations

import threading

import pytest

from replicator.writers.durable import DurableLag


def test_saves_when_due_and_bounds_the_lag() -> None:
    saved: list[int] = []
    confirmed = [0]

    def save() -> bool:
        saved.append(confirmed[0])
        return True

    lag = DurableLag(save, every=10, limit=20, interval_s=60.0)
    for _ in range(100):
        lag.wait_room()
        assert lag.unsaved < 20
        confirmed[0] += 3
        lag.confirmed(3)
    lag.close()
    assert lag.unsaved == 0 and saved[-1] == 300 and lag.saves == len(saved) >= 10


def test_a_failing_save_does_not_block_the_producer() -> None:
    attempts = threading.Semaphore(0)

    def save() -> bool:
        attempts.release()
        return False  # a full disk

    lag = DurableLag(save, every=1, limit=2, interval_s=60.0)
    lag.confirmed(5)
    assert attempts.acquire(timeout=10)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (lag.wait_room(), done.set()), daemon=True)
    worker.start()
    assert done.wait(10), "wait_room blocked although saves are failing"
    lag.close()
    assert lag.unsaved == 5 and lag.saves == 0


def test_an_exception_of_a_save_is_raised_on_the_producer_thread() -> None:
    def save() -> bool:
        raise RuntimeError("nothing could be saved")

    lag = DurableLag(save, every=1, limit=2, interval_s=60.0)
    lag.confirmed(5)
    with pytest.raises(RuntimeError, match="nothing could be saved"):
        for _ in range(100):  # the save runs on the lag's thread; its error shows up here
            lag.wait_room()
            lag.confirmed(0)
    lag.close()  # no final save after a failed one
