"""Batch reruns are safe (issue 32, items 4, 5 and 11): one copy of the output whatever the reruns,
output no run of the config wrote is refused, one config runs once at a time, SIGTERM stops a run
softly with a final checkpoint, and the checkpoint metrics show the checkpoints a batch run wrote."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import config_copy, error_codes
from daemon_proc import catches_signal

from replicator.cli import main
from replicator.ops.metrics import Metrics
from replicator.redogen import generate, workloads
from replicator.runner.batch import build_job, run_job
from replicator.runner.runwatch import RunWatch


def _run(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["run", "-f", str(path)])
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


def _expected(demo_config: Path) -> bytes:
    return (demo_config.parent / "expected.json").read_bytes()


def test_rerun_writes_one_copy(demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = config_copy(demo_config, tmp_path / "run")
    output = tmp_path / "run" / "output.json"
    for _ in range(3):
        rc, log = _run(path, capsys)
        assert rc == 0, log
        assert output.read_bytes() == _expected(demo_config)
    record = json.loads((tmp_path / "run" / "checkpoint" / "DEMO-batch.json").read_text())
    assert record["finished"] is True and record["output"] == [str(output), 0]


def test_rerun_after_an_interrupted_run(demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What an interrupted run leaves (its record unfinished, part of the output) is written whole."""
    path = config_copy(demo_config, tmp_path / "run")
    output = tmp_path / "run" / "output.json"
    assert _run(path, capsys)[0] == 0
    record_file = tmp_path / "run" / "checkpoint" / "DEMO-batch.json"
    record = json.loads(record_file.read_text())
    record_file.write_text(json.dumps({**record, "finished": False}))
    output.write_bytes(_expected(demo_config)[:1000])  # a torn line included
    rc, log = _run(path, capsys)
    assert rc == 0, log
    assert output.read_bytes() == _expected(demo_config)


def test_more_redo_rewrites_less_redo_is_refused(
    demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run that reads all the redo the previous one read rewrites its output; one that reads less
    would lose what only the previous one could write: refused, the output left as it is."""
    logs = json.loads(demo_config.read_text())["source"][0]["reader"]["redo-log"]
    assert len(logs) == 2

    def only(entries: list[str]) -> Any:
        def change(doc: dict[str, Any]) -> None:
            doc["source"][0]["reader"]["redo-log"] = entries

        return change

    work = tmp_path / "run"
    path = config_copy(demo_config, work, only(logs[:1]))
    assert _run(path, capsys)[0] == 0
    doc = json.loads(path.read_text())
    doc["source"][0]["reader"]["redo-log"] = logs
    path.write_text(json.dumps(doc))
    assert _run(path, capsys)[0] == 0
    output = work / "output.json"
    assert output.read_bytes() == _expected(demo_config)
    doc["source"][0]["reader"]["redo-log"] = logs[1:]
    path.write_text(json.dumps(doc))
    rc, log = _run(path, capsys)
    assert rc == 1 and error_codes(log) == [10110] and "over other redo" in log, log
    assert output.read_bytes() == _expected(demo_config)


def test_output_it_did_not_write_is_refused(
    demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = config_copy(demo_config, tmp_path / "run")
    output = tmp_path / "run" / "output.json"
    output.write_bytes(b"kept\n")
    rc, log = _run(path, capsys)
    assert rc == 1 and error_codes(log) == [10110], log
    assert output.read_bytes() == b"kept\n"
    (tmp_path / "run" / "checkpoint" / "DEMO-batch.json").unlink(missing_ok=True)
    output.unlink()
    assert _run(path, capsys)[0] == 0
    (tmp_path / "run" / "checkpoint" / "DEMO-batch.json").unlink()  # the record lost: refused again
    rc, log = _run(path, capsys)
    assert rc == 1 and error_codes(log) == [10110], log


def _wait(condition: Any, what: str, proc: subprocess.Popen[str], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {what}: rc {proc.returncode}\n{proc.stderr.read()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout} s")
        time.sleep(0.02)


def test_sigterm_second_run_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run paced to 1 MB/s: a second run of its config is refused (10002); SIGTERM stops the first
    softly (logged, exit 143, final checkpoint, record unfinished); a rerun writes the output whole."""
    result = generate(workloads.oltp(seed=5, target_bytes=4 << 20), tmp_path / "gen")
    path = result.config
    state = Path(json.loads(path.read_text())["state"]["path"])
    before = {p.name for p in state.iterdir()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(path), "--read-limit", "1"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait(lambda: result.output.exists() and result.output.stat().st_size > 0, "output", proc)
        assert catches_signal(proc.pid, signal.SIGTERM)
        rc, log = _run(path, capsys)
        assert rc == 1 and error_codes(log) == [10002], log
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "caught signal 15, stopping at the next LWN" in err and "ERROR 10015" in err, err
    assert "Traceback" not in err
    written = {p.name for p in state.iterdir()} - before
    assert any(name.startswith("TEST-chkpt-") for name in written), written  # the final checkpoint
    assert json.loads((state / "TEST-batch.json").read_text())["finished"] is False
    partial = result.output.read_bytes()
    assert result.expected is not None and len(partial) < len(result.expected.read_bytes())
    rc, log = _run(path, capsys)
    assert rc == 0, log
    assert result.output.read_bytes() == result.expected.read_bytes()


def test_checkpoint_metrics_after_a_batch_run(demo_config: Path, tmp_path: Path) -> None:
    path = config_copy(demo_config, tmp_path / "run")
    metrics = Metrics(process_collector=False)
    job = build_job(str(path))
    run_job(job, watch=RunWatch(job.files, metrics=metrics))
    scn = metrics.registry.get_sample_value("replicator_checkpoint_scn")
    age = metrics.registry.get_sample_value("replicator_checkpoint_age_seconds")
    written = sorted(int(p.stem.rsplit("-", 1)[1]) for p in (tmp_path / "run" / "checkpoint").glob("DEMO-chkpt-*.json"))
    assert scn == written[-1] > job.start_scn
    assert age is not None and not math.isnan(age) and 0 <= age < 600
    assert os.path.exists(tmp_path / "run" / "output.json")


def test_signal_ends_the_metrics_linger(demo_config: Path, tmp_path: Path) -> None:
    """After the run, --metrics-linger waits for a final scrape; SIGTERM ends the wait (the run was whole: 0)."""

    def metrics(doc: dict[str, Any]) -> None:
        doc["metrics"] = {"type": "prometheus", "bind": "127.0.0.1:0"}

    path = config_copy(demo_config, tmp_path / "run", metrics)
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "replicator", "run", "-f", str(path), "--metrics-linger", "300"],
            stderr=err,
            text=True,
        )
    try:
        deadline = time.monotonic() + 120
        while "serving /metrics" not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and time.monotonic() - started < 30, log.read_text()
    assert (tmp_path / "run" / "output.json").read_bytes() == _expected(demo_config)
