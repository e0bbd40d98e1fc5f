"""The daemon honours its debug stops and run options exactly, in both engines (issue 31, item 8).

``debug.stop-log-switches`` 2 processed all 4 logs and ``stop-transactions`` 50 processed 377
transactions (the reader had queued more than the stop point, and the native record loop
analyses a whole read buffer per call); ``--read-limit`` and ``--metrics-linger`` were
silently ignored by the daemon. Now parsing halts after the Nth log, or at the end of the
LWN that commits the Nth transaction not confirmed before (what OpenLogReplicator counts),
the same in both engines; the read rate is capped; ``--metrics-linger`` is refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixture_configs import fast_offline_config, write_config

from replicator.native import available
from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate

ENGINES = ["python", pytest.param("native", marks=pytest.mark.skipif(not available(), reason="native not built"))]


@pytest.fixture(scope="module")
def four_logs(tmp_path_factory: pytest.TempPathFactory) -> GenerationResult:
    sc = workloads.oltp(seed=11, target_bytes=3 << 20)
    sc.log_blocks = 2048
    result = generate(sc, tmp_path_factory.mktemp("stops") / "gen")
    assert len(result.logs) == 4
    return result


def _run(result: GenerationResult, work: Path, engine: str, debug: dict, *args: str) -> subprocess.CompletedProcess:
    """The daemon on a copy of the state directory, writing to ``work``/output.json."""
    cfg = fast_offline_config(result)  # (first: it points the checkpoint at the archived logs)
    state = work / "state"
    state.mkdir(parents=True)
    (state / result.checkpoint.name).write_bytes(result.checkpoint.read_bytes())
    cfg["state"]["path"] = str(state)
    cfg["target"][0]["writer"]["output"] = str(work / "output.json")
    cfg["source"][0]["debug"] = debug
    config = write_config(work, cfg, "offline.json")
    return subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(config), "--engine", engine, *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _lines(work: Path) -> list[bytes]:
    return (work / "output.json").read_bytes().splitlines()


@pytest.mark.parametrize("engine", ENGINES)
def test_stop_log_switches_reads_nothing_of_the_next_log(
    four_logs: GenerationResult, tmp_path: Path, engine: str
) -> None:
    proc = _run(four_logs, tmp_path, engine, {"stop-log-switches": 2})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines, expected = _lines(tmp_path), four_logs.expected.read_bytes().splitlines()
    assert lines == expected[: len(lines)] and len(lines) < len(expected)
    position = json.loads((tmp_path / "state" / "TEST-chkpt.json").read_text())
    assert position["pos"][0] == 2, position  # the last message confirmed is in log 2
    final = max((tmp_path / "state").glob("TEST-chkpt-*.json"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    assert json.loads(final.read_text())["seq"] == 2, "the final checkpoint is not at the end of log 2"
    assert int(final.stem.rsplit("-", 1)[1]) < four_logs.logs[2].first_scn, "an LWN of log 3 was read"


@pytest.mark.parametrize("engine", ENGINES)
def test_stop_transactions_stops_at_that_transaction(four_logs: GenerationResult, tmp_path: Path, engine: str) -> None:
    proc = _run(four_logs, tmp_path, engine, {"stop-transactions": 50})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = _lines(tmp_path)
    commits = sum(b'"op":"commit"' in line for line in lines)
    assert commits == 50, f"{commits} transactions output"
    assert lines == four_logs.expected.read_bytes().splitlines()[: len(lines)]
    assert "stopped: 50 transactions" in proc.stderr


def test_read_limit_caps_the_read_rate(four_logs: GenerationResult, tmp_path: Path) -> None:
    """At 1 MB/s the 4 logs (4.2 MB of redo blocks) take at least 3.5 s to read (a lower bound:
    a loaded machine only makes it longer)."""
    redo = sum(log.blocks * 512 for log in four_logs.logs)
    started = time.monotonic()
    proc = _run(four_logs, tmp_path, "python", {"stop-log-switches": 4}, "--read-limit", "1")
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "redo read rate limited to 1 MB/s" in proc.stderr
    assert took >= 0.8 * redo / 1e6, f"{redo / 1e6:.1f} MB read in {took:.1f} s at --read-limit 1"
    assert _lines(tmp_path) == four_logs.expected.read_bytes().splitlines()


def test_metrics_linger_is_refused(four_logs: GenerationResult, tmp_path: Path) -> None:
    proc = _run(four_logs, tmp_path, "python", {"stop-log-switches": 4}, "--metrics-linger", "5")
    assert proc.returncode == 1 and "ERROR 30002 --metrics-linger" in proc.stderr, proc.stderr[-3000:]
    assert not (tmp_path / "output.json").exists()


def test_modes_benchmark_runs(four_logs: GenerationResult, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m replicator.bench.modes`` (batch against daemon on the same files) prints its
    figures (never asserted) and finds the two outputs identical."""
    from replicator.bench.modes import main

    assert main([str(four_logs.config.parent), "--runs", "1", "--work", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "daemon / batch wall" in out and "outputs identical    True" in out, out
