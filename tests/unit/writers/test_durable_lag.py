"""DurableLag: saves off the caller's thread, bounds the unsaved confirmations, never blocks on a failing disk."""

from __future__ import annotations

import threading

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
