"""The batch record loop's per-LWN checkpoint step in C (RecordLoop.set_checkpoint_step, taken
when Pipeline.native_checkpoint_step allows it): the schema checkpoint files a run writes, and
its messages, are the python engine's, whatever the cadence (interval-s, interval-mb)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from native_diff import assert_same, config_of, run_engine

from replicator.native import available
from replicator.redogen import generate, workloads
from replicator.runner.pipeline import Pipeline

pytestmark = pytest.mark.skipif(not available(), reason="the native extension is not built")


def _checkpoints(state: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(state.glob("*-chkpt-*.json"))}


@pytest.mark.parametrize("cadence", [{}, {"interval-s": 1}, {"interval-mb": 0}, {"interval-s": 0}])
def test_schema_checkpoints_equal_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cadence: dict[str, int]
) -> None:
    sc = workloads.oltp(seed=7, target_bytes=384 << 10)
    cfg = config_of(generate(sc, tmp_path / "gen", with_expected=False))
    cfg["state"].update(cadence)
    steps: list[Any] = []
    real = Pipeline.native_checkpoint_step

    def recorded(self: Pipeline) -> Any:
        step = real(self)
        steps.append(step)
        return step

    monkeypatch.setattr(Pipeline, "native_checkpoint_step", recorded)
    assert_same(cfg, tmp_path)  # messages, counts, log lines (0 and 1 decode workers)
    assert steps and all(step is not None for step in steps)  # the C step ran
    run_engine(cfg, tmp_path, "python")
    python = _checkpoints(tmp_path / "state-python")
    run_engine(cfg, tmp_path, "native")
    native = _checkpoints(tmp_path / "state-native")
    assert len(python) >= 2
    assert native == python
