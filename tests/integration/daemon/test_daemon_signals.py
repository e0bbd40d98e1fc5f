"""SIGTERM during the daemon's startup stops it cleanly (issue 15, fault 9).

The handlers used to be installed only once the event loop ran, seconds after the
start: a SIGTERM before that killed the daemon with rc -15. Now ``replicator run``
catches the signals first. The test waits until the process catches SIGTERM (the
SigCgt mask in /proc) and sends it at once: that must be a clean stop (rc 0) before
replication began.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from daemon_proc import catches_signal
from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import generate


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_sigterm_during_startup_is_a_clean_stop(tmp_path: Path) -> None:
    result = generate(workloads.oltp(seed=3, target_bytes=256 << 10), tmp_path / "gen")
    cfg = write_config(tmp_path, fast_offline_config(result), "offline.json")
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not catches_signal(proc.pid, signal.SIGTERM) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "stopped during startup" in err and "replicating" not in err, err[-2000:]
