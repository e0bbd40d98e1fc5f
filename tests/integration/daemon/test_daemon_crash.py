"""Crash safety: SIGKILL the daemon at random points; the output must equal an uninterrupted run.

The restart uses the confirmed position (``<name>-chkpt.json``) and cuts the output file
back to the size saved with it, so the expectation is exact: no duplicate and no loss.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from daemon_proc import Daemon, wait_for
from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import generate

KILLS = 20


def _offline_config(result, tmp_path: Path) -> Path:
    return write_config(tmp_path, fast_offline_config(result), "offline.json")


@pytest.mark.slow
def test_sigkill_at_random_points(tmp_path: Path) -> None:
    seed = int(os.environ.get("REPLICATOR_CRASH_SEED", time.time_ns() % 100000))
    print(f"crash test seed {seed}")
    rng = random.Random(seed)
    sc = workloads.oltp(seed=11, target_bytes=6 << 20)
    sc.log_blocks = 2048
    result = generate(sc, tmp_path / "gen")
    cfg = _offline_config(result, tmp_path)
    expected = result.expected.read_bytes()
    output = result.output
    # Kill points: after start-up, once the output reached a random share of its final size
    # (in increasing order, so every run makes progress before its kill).
    shares = sorted(rng.uniform(0.02, 0.95) for _ in range(KILLS))
    mid_stream = 0
    for share in shares:
        proc = Daemon(cfg, tmp_path)
        try:
            proc.wait_ready(120)
            assert wait_for(lambda: output.exists() and output.stat().st_size >= share * len(expected)
                            or proc.proc.poll() is not None, 120), "the output stopped growing"
            assert proc.proc.poll() is None, f"exited early: {proc.log()[-2000:]}"
            err = proc.kill()
        finally:
            proc.close()
        mid_stream += output.stat().st_size < len(expected)
        assert "Traceback" not in err, err[-2000:]
    assert mid_stream >= KILLS // 2, f"only {mid_stream} of {KILLS} kills landed before the end of the output"
    proc = Daemon(cfg, tmp_path)
    try:
        assert wait_for(lambda: output.exists() and output.stat().st_size >= len(expected), 180)
        rc, err = proc.stop()
    finally:
        proc.close()
    assert rc == 0, err[-2000:]
    lines = output.read_bytes().splitlines()
    expected_lines = expected.splitlines()
    # (c_scn, c_idx) is not a unique key under OpenLogReplicator's numbering (c_scn is the
    # begin SCN, and concurrent transactions may share one), so compare line for line:
    # this is stricter than deduplicating by (c_scn, c_idx).
    duplicates = len(lines) - len(expected_lines)
    print(f"crash test: {len(lines)} lines, {duplicates} duplicates after {KILLS} SIGKILLs")
    assert lines == expected_lines, "output after the crashes differs from the uninterrupted run"
