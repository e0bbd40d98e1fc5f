"""A transaction far bigger than the swap threshold: swapped to disk, streamed at commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicator.bench.huge import run_measured
from replicator.redogen import workloads
from replicator.redogen.generate import generate

pytestmark = pytest.mark.slow  # 40,000-row transactions through the swap: 6-35 s each


@pytest.mark.parametrize("reader", ["batch", "offline"])
def test_big_transaction_swaps_and_streams(tmp_path: Path, reader: str) -> None:
    result = generate(workloads.huge_transaction(40_000), tmp_path / "gen")
    cfg = json.loads(Path(result.config).read_text())
    if reader == "offline":
        # The daemon: archives found through the checkpoint, soft stop after the last log.
        cfg = result.offline_config()
        cfg["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    swap = tmp_path / "swap"
    swap.mkdir()
    cfg["memory"] = {"min-mb": 32, "max-mb": 32, "swap-mb": 4, "swap-path": str(swap)}
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(cfg))
    # VmHWM of the child, not ru_maxrss: the latter survives execve and would report pytest's own peak.
    proc, peak_mb = run_measured(path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(f"big transaction: {result.stats} peak RSS {peak_mb} MB")
    assert peak_mb < 200, "a streamed transaction must not be held in memory"
    assert result.output.read_bytes() == result.expected.read_bytes()
    assert not list(swap.glob("*.swap")), "swap files left behind"


def test_huge_transaction_benchmark_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m replicator.bench.huge`` at a small size: it swaps, checks and reports."""
    from replicator.bench.huge import main

    assert main(["--size", "20MB", "--max-mb", "32", "--swap-mb", "8", "--check-rows", "500"]) == 0
    out = capsys.readouterr().out
    assert "output: correct" in out and "swap files left: 0" in out and "peak RSS" in out
