"""Stage 2 in worker threads (--decode-workers): the same output as one thread, in commit order.

The differential tests (native_diff.assert_same) already run every scenario, workload and
fixture with 0, 1 and 2 decode workers; these tests check what the workers themselves do:
that they rendered jobs, that jobs with values only python renders went through the merge,
that the pool's pressure hook, the file writer and errors keep the single-thread output, that
the threads end with the run, and the knob's parsing.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from native_diff import assert_same, config_of, run_engine

import replicator.native as native
from replicator.errors import ConfigError
from replicator.native import wiring
from replicator.redogen import generate, workloads
from replicator.runner.batch import build_job, run_job


@pytest.fixture(scope="module")
def oltp(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return generate(workloads.oltp(seed=9, target_bytes=1 << 20), tmp_path_factory.mktemp("gen"), with_expected=False)


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_render_and_stop(workers: int, oltp: Any, tmp_path: Path) -> None:
    before = _threads()
    one = run_engine(config_of(oltp), tmp_path, "native", 0)
    many = run_engine(config_of(oltp), tmp_path, "native", workers)
    stage2 = wiring.last_committer.stage2
    assert stage2 is not None and stage2.queued > 40  # the workers rendered (most of the 55) transactions
    assert many == one
    assert _threads() == before  # the worker threads ended with the run


def test_python_values_rendered_by_the_merge(oltp: Any, tmp_path: Path) -> None:
    """Raw hex (source flag 0x8000): every value has a python renderer only; the merge renders
    those jobs in their turn, with the same bytes."""
    assert_same(config_of(oltp, flags=0x8000), tmp_path)
    stage2 = wiring.last_committer.stage2
    assert stage2 is not None and stage2.queued > 0 and stage2.rerendered == stage2.queued


def test_pool_pressure_and_swap(oltp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool that swaps all the time (4 KB chunks, swap past 4 KB): jobs hold their chunks
    until merged, swapped chunks are read back for them, and the pressure hook merges the
    queue before the pool decides to swap or fail, so the run is the single thread's."""
    from replicator.txn import pool as pool_module

    monkeypatch.setattr(pool_module, "CHUNK", 4 << 10)
    seen = {"pressure": 0, "detach": 0}
    reserve, detach = pool_module.MemoryPool._reserve, pool_module.MemoryPool.detach

    def counted_reserve(self: Any, need: int) -> None:
        if self.pressure is not None and self.used + need > self.swap_bytes:
            seen["pressure"] += 1
        reserve(self, need)

    def counted_detach(self: Any, clog: Any) -> Any:
        seen["detach"] += 1  # the non-inline hand-over: a job with swapped chunks
        return detach(self, clog)

    monkeypatch.setattr(pool_module.MemoryPool, "_reserve", counted_reserve)
    monkeypatch.setattr(pool_module.MemoryPool, "detach", counted_detach)
    cfg = config_of(oltp)
    swap = tmp_path / "swap"
    swap.mkdir()
    cfg["memory"] = {"min-mb": 32, "max-mb": 4096, "swap-mb": 1, "swap-path": str(swap)}
    py = assert_same(cfg, tmp_path)
    assert py["error"] is None and py["messages"]
    assert seen["pressure"] > 0 and seen["detach"] > 0
    assert wiring.last_committer.stage2.queued > 0


def test_file_writer_output(oltp: Any, tmp_path: Path) -> None:
    outputs = []
    for workers in (0, 2):
        cfg = config_of(oltp)
        state = tmp_path / f"state-{workers}"
        shutil.copytree(cfg["state"]["path"], state)
        cfg["state"]["path"] = str(state)
        cfg["target"][0]["writer"] = {
            "type": "file",
            "output": str(tmp_path / f"out-{workers}.json"),
            "new-line": 1,
            "append": 1,
        }
        path = tmp_path / f"config-{workers}.json"
        path.write_text(json.dumps(cfg))
        native.set_decode_workers(workers)
        try:
            run_job(build_job(str(path)), engine="native")
        finally:
            native.set_decode_workers(None)
        outputs.append((tmp_path / f"out-{workers}.json").read_bytes())
    assert outputs[0] and outputs[0] == outputs[1]


def test_broken_file_same_error_and_messages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error mid-run: the batches the single thread wrote before it are written too."""
    from replicator.redo.source import RedoSource

    monkeypatch.setattr(RedoSource, "batch_chunk", 256 << 10)  # the broken block is read late
    big = generate(workloads.oltp(seed=10, target_bytes=6 << 20), tmp_path / "gen", with_expected=False)
    cfg = config_of(big)
    redo = Path(cfg["source"][0]["reader"]["redo-log"][0])
    copy = tmp_path / "redo" / redo.name
    copy.parent.mkdir()
    data = redo.read_bytes()
    at = len(data) * 9 // 10 // 512 * 512
    copy.write_bytes(data[:at] + b"\x5a" * 512 + data[at + 512 :])  # a broken block near the end
    cfg["source"][0]["reader"]["redo-log"] = [str(copy)]
    cfg["source"][0]["reader"]["disable-checks"] = 4
    py = assert_same(cfg, tmp_path)
    assert py["error"] is not None and py["messages"]


def test_knob(monkeypatch: pytest.MonkeyPatch) -> None:
    from replicator.cli import build_parser

    monkeypatch.delenv("REPLICATOR_DECODE_WORKERS", raising=False)
    try:
        assert native.decode_workers() == native.DEFAULT_DECODE_WORKERS
        monkeypatch.setenv("REPLICATOR_DECODE_WORKERS", "2")
        assert native.decode_workers() == 2
        build_parser().parse_args(["bench", "--decode-workers", "1"])
        assert native.decode_workers() == 1  # the command line wins
        native.set_decode_workers(None)
        monkeypatch.setenv("REPLICATOR_DECODE_WORKERS", "many")
        with pytest.raises(ConfigError) as err:
            native.decode_workers()
        assert err.value.code == 10360
        with pytest.raises(SystemExit):
            build_parser().parse_args(["run", "--decode-workers", "99"])
    finally:
        native.set_decode_workers(None)
