"""The daemon tails redogen's live ring of online groups while the "database" writes it.

A slow poll (redo-read-sleep-us) makes the daemon fall behind so that an online group
is reused before it was read to the end; the output must still equal the generator's.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from replicator.redogen import workloads
from replicator.redogen.online import generate_online


def _wait(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.parametrize("read_sleep_us,expect_overwrite", [(20_000, False), (1_500_000, True)])
def test_tail_live_ring(tmp_path: Path, read_sleep_us: int, expect_overwrite: bool) -> None:
    sc = workloads.oltp(seed=7, target_bytes=3 << 20)
    sc.log_blocks = 1024  # 512 KB logs: many switches, quick group reuse with 2 groups
    ready = threading.Event()
    result: list = []
    gen = threading.Thread(target=lambda: result.append(
        generate_online(sc, tmp_path, groups=2, rate_mb_s=1.0, ready=ready)), daemon=True)
    gen.start()
    assert ready.wait(30)
    cfg_path = tmp_path / "OpenLogReplicator.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["source"][0]["redo-read-sleep-us"] = read_sleep_us
    cfg["source"][0]["arch-read-sleep-us"] = 100_000
    cfg["source"][0]["arch-read-tries"] = 600
    cfg["target"][0]["writer"]["poll-interval-us"] = 50_000
    cfg_path.write_text(json.dumps(cfg))
    proc = subprocess.Popen([sys.executable, "-m", "replicator", "run", "-f", str(cfg_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        gen.join(120)
        assert result, "generator did not finish"
        expected = result[0].expected.read_bytes()
        output = tmp_path / "output.json"
        assert _wait(lambda: output.exists() and output.stat().st_size >= len(expected), 120)
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    assert output.read_bytes() == expected
    if expect_overwrite:
        assert "60024" in err, "the daemon never had to fall back to an archived copy"
