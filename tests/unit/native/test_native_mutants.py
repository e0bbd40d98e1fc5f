"""Mutated redo through the native engine: the python engine's coded errors, never a crash or hang.

The mutants run in a subprocess (mutant_worker.py), so a segmentation fault is an exit
status, not a dead test run; a hang is the subprocess timeout. The count is a parameter:
``REPLICATOR_MUTANTS`` (default 300). The 10,000-mutant run (about 20 minutes on two cores)
is manual: ``REPLICATOR_FUZZ_10K=1 pytest tests/unit/native/test_native_mutants.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).resolve().parent / "mutant_worker.py"


def _run(tmp_path: Path, count: int, seed: int, timeout: float, *extra: str) -> dict:
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(tmp_path), str(count), str(seed), *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode >= 0, f"native engine crashed (signal {-proc.returncode}):\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["mutants"] == count and summary["mismatches"] == 0
    return summary


def test_mutants(tmp_path: Path) -> None:
    count = int(os.environ.get("REPLICATOR_MUTANTS", "300"))
    summary = _run(tmp_path, count, seed=11, timeout=60 + count)
    assert summary["python_errors"] > 0  # the mutants do reach the error paths


def test_mutants_streamed(tmp_path: Path) -> None:
    """The same through the huge-transaction path: every transaction streamed and swapped."""
    count = int(os.environ.get("REPLICATOR_MUTANTS", "300")) // 2
    summary = _run(tmp_path, count, 13, 60 + count, "stream")
    assert summary["python_errors"] > 0


@pytest.mark.parametrize("fmt", ["debezium-envelope", "canal", "qlik", "oms-extended", "dts-avro", "avro", "protobuf"])
def test_mutants_other_native_formats(fmt: str, tmp_path: Path) -> None:
    """The same for the natively rendered Debezium and row-image formats (fewer mutants)."""
    count = max(1, int(os.environ.get("REPLICATOR_MUTANTS", "300")) // 4)
    _run(tmp_path, count, 14, 60 + 2 * count, fmt)


@pytest.mark.parametrize("fmt", ["debezium-envelope", "canal", "avro", "protobuf"])
def test_mutants_other_formats_streamed(fmt: str, tmp_path: Path) -> None:
    """The same through those formats' native streams (every transaction streamed)."""
    count = max(1, int(os.environ.get("REPLICATOR_MUTANTS", "300")) // 6)
    _run(tmp_path, count, 15, 60 + 2 * count, "stream", fmt)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("REPLICATOR_FUZZ_10K"), reason="manual run: set REPLICATOR_FUZZ_10K=1")
@pytest.mark.timeout(7500)  # longer than the suite's 900 s per test: its own bound is the 7200 s below
def test_ten_thousand_mutants(tmp_path: Path) -> None:
    _run(tmp_path, 10_000, seed=12, timeout=7200)
