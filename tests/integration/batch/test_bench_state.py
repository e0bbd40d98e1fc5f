"""``bench -f CONFIG`` leaves the config's state folder as it found it (issue 32, item 10):
its schema checkpoints go to a temporary directory, removed afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_helpers import config_copy

from replicator.cli import main


def test_bench_writes_no_checkpoint_into_the_state_folder(
    demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config_copy(demo_config, tmp_path / "run")
    state = tmp_path / "run" / "checkpoint"
    before = {p.name: p.stat().st_mtime_ns for p in state.iterdir()}
    assert main(["bench", "-f", str(path)]) == 0
    assert "redo throughput" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in state.iterdir()} == before
    assert main(["run", "-f", str(path)]) == 0  # a run does write them there
    assert len(list(state.glob("DEMO-chkpt-*.json"))) > len(before)
