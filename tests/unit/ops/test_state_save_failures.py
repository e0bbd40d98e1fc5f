"""A state directory that cannot be written (full disk): back off, report once per interval, then stop (issue 15, fault 7).

It used to retry at every LWN and log the same warning each time (4,864 warnings in one
run). The failure here is real: the state directory is removed under the manager.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from replicator.errors import RuntimeFailure
from replicator.runner.checkpoint import CheckpointManager, Confirmed, SaveFailures


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _manager(tmp_path: Path) -> tuple[Path, CheckpointManager, Clock, Confirmed]:
    """A checkpoint manager on a fresh state directory whose save failures run on a test clock
    (report every 30 s, give up after 120 s), and a position to save."""
    state = tmp_path / "state"
    state.mkdir()
    manager = CheckpointManager(str(state), "DB")
    clock = Clock()
    manager.save_failures = SaveFailures(report_every_s=30, give_up_s=120, clock=clock)
    return state, manager, clock, Confirmed("DB", 1, 0, 0, 0, (1, 0, 0, 0))


def test_failures_back_off_report_once_per_interval_and_give_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state, manager, clock, position = _manager(tmp_path)
    assert manager.save_confirmed(position)
    shutil.rmtree(state)  # from now on every write fails for real
    attempts = 0
    with pytest.raises(RuntimeFailure) as stop:
        for _ in range(100_000):  # one call per 10 ms of "time": an LWN rate
            clock.now += 0.01
            attempts += manager.save_failures.allowed()
            manager.save_confirmed(position)
    assert stop.value.code == 10102 and "nothing could be saved for 12" in stop.value.message
    warnings = [r for r in caplog.records if getattr(r, "olr_code", 0) == 60018]
    assert 4 <= len(warnings) <= 5, f"{len(warnings)} warnings in 120 s (one per 30 s expected)"
    assert attempts <= 20, f"{attempts} write attempts in 120 s: no back-off"


def test_success_ends_the_streak(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    state, manager, clock, position = _manager(tmp_path)
    shutil.rmtree(state)
    assert not manager.save_confirmed(position)
    state.mkdir()  # space again
    clock.now += 100
    assert manager.save_confirmed(position)
    clock.now += 100  # a later failure starts a new streak: no give-up yet
    shutil.rmtree(state)
    assert not manager.save_confirmed(position)
    assert "state saved again" in caplog.text
