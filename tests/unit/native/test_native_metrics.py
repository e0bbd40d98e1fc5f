"""Metrics with the native commit (issue 14): the committer counts its output rows per table and
operation into the run's Tally itself, so metrics no longer send commits back to python.

Batch runs with a RunWatch holding Metrics (tag-names ``all``: owner and table labels) go
through both engines; the tallies must be equal and the native run must have committed natively.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from native_diff import CollectSink, config_of

from replicator.native import wiring as native_wiring
from replicator.ops.metrics import Metrics
from replicator.redogen import generate, workloads
from replicator.runner.batch import build_job, run_job
from replicator.runner.runwatch import RunWatch


def _tally(cfg: dict[str, Any], work: Path, engine: str) -> tuple[Any, Any]:
    cfg = json.loads(json.dumps(cfg))
    state = work / f"state-{engine}"
    shutil.copytree(cfg["state"]["path"], state)
    cfg["state"]["path"] = str(state)
    path = work / f"config-{engine}.json"
    path.write_text(json.dumps(cfg))
    job = build_job(str(path))
    watch = RunWatch(job.files, metrics=Metrics("all", process_collector=False))
    run_job(job, sink=CollectSink(), watch=watch, engine=engine)
    return watch.tally, native_wiring.last_committer


@pytest.mark.parametrize("fmt", [None, {"type": "debezium"}, {"type": "canal"}])
def test_native_commit_counts_rows_like_python(tmp_path: Path, fmt: dict[str, Any] | None) -> None:
    result = generate(workloads.oltp(seed=19, target_bytes=1 << 20), tmp_path / "gen", with_expected=False)
    cfg = config_of(result, fmt)
    py, _ = _tally(cfg, tmp_path, "python")
    nat, committer = _tally(cfg, tmp_path, "native")
    assert committer is not None and committer.native_transactions > 0 and committer.python_transactions == 0
    assert any(owner and count for (_, _, owner, _), count in py.dml.items())
    assert (nat.dml, nat.transactions, nat.rows, nat.ddl) == (py.dml, py.transactions, py.rows, py.ddl)


@pytest.mark.parametrize("fmt", [None, {"type": "debezium"}, {"type": "canal"}])
def test_native_stream_counts_rows_like_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: dict[str, Any] | None
) -> None:
    """Transactions above the stream threshold (16 KB here): counted chunk by chunk, committed once
    (a format's counting walk, Canal's, counts nothing)."""
    from replicator.redo import parser as parser_module
    from replicator.txn import pool as pool_module

    monkeypatch.setattr(pool_module, "CHUNK", 8 << 10)
    monkeypatch.setattr(parser_module, "STREAM_BYTES", 16 << 10)
    result = generate(workloads.huge_transaction(2_000), tmp_path / "gen", with_expected=False)
    cfg = config_of(result, fmt)
    py, _ = _tally(cfg, tmp_path, "python")
    nat, committer = _tally(cfg, tmp_path, "native")
    assert committer.native_transactions > 0 and committer.python_transactions == 0
    assert py.rows >= 2_000
    assert (nat.dml, nat.transactions, nat.rows) == (py.dml, py.transactions, py.rows)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_stage2_workers_count_rows_like_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    """Decode workers (stage 2) or none: the tally of the native commit is python's."""
    monkeypatch.setenv("REPLICATOR_DECODE_WORKERS", workers)
    result = generate(workloads.oltp(seed=22, target_bytes=1 << 20), tmp_path / "gen", with_expected=False)
    cfg = config_of(result)
    py, _ = _tally(cfg, tmp_path, "python")
    nat, committer = _tally(cfg, tmp_path, "native")
    assert committer.native_transactions > 0 and (committer.stage2 is not None) == (workers != "0")
    assert (nat.dml, nat.transactions, nat.rows) == (py.dml, py.transactions, py.rows)
