"""SIGKILLs that are sure to land mid-stream (issue 15: "tests that mean something").

A kill after a random sleep can land before the daemon wrote its first byte (20 of 20
did under load), and then proves nothing. :func:`kill_mid_stream` instead waits until
the output has grown by a random amount beyond what it held before this run started,
kills, and returns what the output held at that moment, so the caller can assert that
every kill landed between the first new byte and the end of the stream.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Kill:
    """One SIGKILL: output bytes before the run started and when the kill was sent."""

    before: int
    at: int
    total: int  # bytes of the complete stream

    @property
    def mid_stream(self) -> bool:
        return self.before < self.at < self.total


def start_daemon(cfg: Path) -> subprocess.Popen:
    """``replicator run -f cfg`` with its stderr captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_mid_stream(
    cfg: Path,
    size: Callable[[], int],
    total: int,
    rng: random.Random,
    *,
    grow: tuple[float, float] = (0.02, 0.12),
    timeout: float = 120.0,
) -> Kill:
    """Start the daemon, SIGKILL it once ``size()`` grew by a random share of ``total``."""
    before = size()
    step = max(1, int(total * rng.uniform(*grow)))
    target = min(before + step, total - 1)
    proc = start_daemon(cfg)
    try:
        deadline = time.monotonic() + timeout
        while size() < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        at = size()
    finally:
        proc.send_signal(signal.SIGKILL)  # also when size() failed: never leave the daemon running
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err[-3000:]
    assert proc.returncode == -signal.SIGKILL, f"the daemon ended by itself (rc {proc.returncode}): {err[-3000:]}"
    return Kill(before, at, total)


def run_to_end(cfg: Path, size: Callable[[], int], total: int, timeout: float = 180.0) -> str:
    """Start the daemon, wait until the output is complete, stop it with SIGTERM; its stderr."""
    proc = start_daemon(cfg)
    try:
        deadline = time.monotonic() + timeout
        while size() < total and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # anything written beyond the expected stream would show now
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    return err


def assert_all_mid_stream(kills: list[Kill]) -> None:
    """Every kill came after new output and before the end (else the test tested nothing)."""
    print("kills (bytes before run, at kill, total):", [(k.before, k.at, k.total) for k in kills])
    early = [k for k in kills if not k.mid_stream]
    assert not early, f"{len(early)} of {len(kills)} kills did not land mid-stream: {early}"
