"""Done-when 1: scrape /metrics while ``replicator run`` works and watch the series move.

The free23 fixture is read at 0.15 MB/s (``--read-limit``) so the run lasts ~2 s, and
``--metrics-linger`` keeps the endpoint up after the end so the final totals can be
checked too. Everything is bounded: the process is killed at the end whatever happens.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
from pathlib import Path

from ops_helpers import free23_config, free_port, parse_metrics, scrape, value

DEADLINE_S = 30


def _series(samples: dict, name: str, **labels: str) -> float:
    found = value(samples, name, **labels)
    return -1.0 if found is None else found


def test_series_move_during_a_batch_run(free23: Path, tmp_path: Path) -> None:
    port = free_port()
    metrics = {"type": "prometheus", "bind": f"127.0.0.1:{port}", "tag-names": "filter"}
    cfg = free23_config(free23, tmp_path, metrics=metrics)
    total = sum(os.path.getsize(free23 / n) for n in ("arch1_15_1224959854.dbf", "arch1_16_1224959854.dbf"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg), "--read-limit", "0.15", "--metrics-linger", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    snapshots: list[dict] = []
    try:
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                samples = parse_metrics(scrape(port, timeout=1))
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.05)  # not listening yet
                continue
            snapshots.append(samples)
            if _series(samples, "service_state", state="finishing") == 1:
                break
            time.sleep(0.1)
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=10)
    assert snapshots, f"/metrics never answered; stderr:\n{err}"
    final = snapshots[-1]
    assert _series(final, "service_state", state="finishing") == 1, err

    parsed = [_series(s, "bytes_parsed_total") for s in snapshots]
    assert parsed == sorted(parsed), "a counter went backwards"
    midway = [p for p in parsed if 0 < p < total]
    assert len(set(midway)) >= 2, f"bytes_parsed did not move during the run: {parsed}"
    assert any(_series(s, "service_state", state="replicating") == 1 for s in snapshots)
    assert any(_series(s, "replicator_redo_sequence") == 15 for s in snapshots)
    checkpoints = [_series(s, "checkpoints_total", filter="out") for s in snapshots]
    assert checkpoints == sorted(checkpoints) and checkpoints[-1] > checkpoints[0]

    # The totals of the whole run: both files, one transaction with one insert, 3 messages.
    assert _series(final, "bytes_read_total") == total and _series(final, "bytes_parsed_total") == total
    assert _series(final, "log_switches_total", type="archived") == 2
    assert _series(final, "dml_ops_total", type="insert", filter="out", owner="OLR_TEST", table="TEST_CDC") == 1
    assert _series(final, "dml_ops_total", type="commit", filter="out", owner="", table="") == 1
    output = (tmp_path / "output.json").read_bytes()
    assert _series(final, "messages_sent_total") == 3 == _series(final, "messages_confirmed_total")
    assert _series(final, "bytes_sent_total") == len(output)  # the file writer counts its newlines
    assert _series(final, "replicator_writer_messages_total", writer="file") == 3
    assert _series(final, "replicator_scn") == 2267720
    assert _series(final, "checkpoint_lag") > 0 and _series(final, "memory_allocated_mb") >= 0
    assert _series(final, "process_resident_memory_bytes") > 0
