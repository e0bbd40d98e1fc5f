"""The daemon's native commit (issue 14): ``REPLICATOR_ENGINE=native`` and ``python`` write the same.

The offline daemon runs over generated redo once per engine, each with a copy of the state
directory, and stops softly after the last log (``debug.stop-log-switches``). The output and
every file of the state directory (schema checkpoints, the confirmed position) must be
byte-identical between the engines, and the output must equal redogen's expectation.
Covered: plain OLTP, a transaction far above the stream threshold (rendered in parts,
handed to the writer BATCH_MESSAGES at a time) and RAC with two redo threads. Restarts
from a confirmed position under the native commit are covered by the crash tests
(test_daemon_crash, test_daemon_stream_crash, test_daemon_rac), which run the default
engine (native when built).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from replicator.native import available
from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate

pytestmark = pytest.mark.skipif(not available(), reason="the native extension is not built")


def _run(
    result: GenerationResult, cfg: dict[str, Any], engine: str, work: Path, workers: int = 0
) -> tuple[bytes, dict[str, bytes]]:
    """Run the offline daemon with ``engine`` (and ``workers`` stage-2 decode workers) in
    ``work``; its output and state files."""
    state = work / "state"
    if not state.exists():
        shutil.copytree(result.checkpoint.parent, state)
    cfg = json.loads(json.dumps(cfg))
    cfg["state"]["path"] = str(state)
    output = work / "output.json"
    cfg["target"][0]["writer"]["output"] = str(output)
    cfg["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    path = work / "daemon.json"
    path.write_text(json.dumps(cfg))
    env = dict(os.environ, REPLICATOR_ENGINE=engine, REPLICATOR_DECODE_WORKERS=str(workers))
    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    here = str(work).encode()  # the confirmed position names the output file: compare without the folder
    return output.read_bytes(), {p.name: p.read_bytes().replace(here, b"WORK") for p in sorted(state.iterdir())}


def _compare(tmp_path: Path, result: GenerationResult, cfg: dict[str, Any], expected: bool = True) -> None:
    """The python engine, then the native one with 0 and 1 stage-2 decode workers (the worker
    threads decode and render while the parser thread goes on; the merge keeps commit order)."""
    runs = {}
    for engine, workers in (("python", 0), ("native", 0), ("native", 1)):
        name = f"{engine}{workers}"
        (tmp_path / name).mkdir()
        runs[name] = _run(result, cfg, engine, tmp_path / name, workers)
    py_out, py_state = runs["python0"]
    assert py_out
    for name in ("native0", "native1"):
        nat_out, nat_state = runs[name]
        assert nat_out == py_out, f"{name} and python daemon outputs differ"
        if expected:  # redogen's expectation is OLR JSON
            assert nat_out == result.expected.read_bytes()
        assert sorted(nat_state) == sorted(py_state)
        for state in py_state:
            assert nat_state[state] == py_state[state], f"{name}: state file {state} differs"


def test_oltp_native_equals_python(tmp_path: Path) -> None:
    sc = workloads.oltp(seed=14, target_bytes=2 << 20)
    sc.log_blocks = 2048  # several logs: log switches, schema checkpoints
    result = generate(sc, tmp_path / "gen")
    assert len(result.logs) > 1
    cfg = result.offline_config()
    cfg.setdefault("state", {})["interval-mb"] = 1
    _compare(tmp_path, result, cfg)


@pytest.mark.parametrize("variant", ["debezium", "checkpoints-out"])
def test_python_checkpoint_step_native_equals_python(tmp_path: Path, variant: str) -> None:
    """LWN checkpoints the native loop leaves to python: another format (Debezium) and OLR JSON
    with checkpoint messages in the output (flag 0x1000)."""
    sc = workloads.oltp(seed=20, target_bytes=1 << 20)
    sc.log_blocks = 1024
    result = generate(sc, tmp_path / "gen")
    cfg = result.offline_config()
    cfg.setdefault("state", {})["interval-mb"] = 1
    if variant == "debezium":
        cfg["source"][0]["format"] = {"type": "debezium"}
    else:
        cfg["source"][0]["flags"] = cfg["source"][0].get("flags", 0) | 0x1000
    _compare(tmp_path, result, cfg, expected=False)


def test_streamed_transaction_native_equals_python(tmp_path: Path) -> None:
    """A transaction above the stream threshold (memory max-mb 32: 4 MB) with ~40,000 messages:
    the native stream hands over parts; batches and positions must match python's stream."""
    result = generate(workloads.huge_transaction(40_000), tmp_path / "gen")
    cfg = result.offline_config()
    cfg["memory"] = {"min-mb": 32, "max-mb": 32}
    _compare(tmp_path, result, cfg)


@pytest.mark.parametrize("name", ["oltp", "streamed"])
def test_protobuf_native_equals_python(name: str, tmp_path: Path) -> None:
    """The protobuf commit (ProtobufCommitter) in the daemon, in memory and streamed in parts
    (protobuf has no wall-clock field, so the outputs compare byte for byte)."""
    sc = workloads.oltp(seed=16, target_bytes=1 << 20) if name == "oltp" else workloads.huge_transaction(40_000)
    result = generate(sc, tmp_path / "gen")
    cfg = result.offline_config()
    cfg["source"][0]["format"] = {"type": "protobuf", "rid": 1}
    if name == "streamed":
        cfg["memory"] = {"min-mb": 32, "max-mb": 32}
    _compare(tmp_path, result, cfg, expected=False)


def test_rac_native_equals_python(tmp_path: Path) -> None:
    sc = workloads.oltp(seed=15, target_bytes=2 << 20, sessions=12)
    sc.threads, sc.migrate = 2, 0.1
    sc.log_archive_format = "arch%t_%s_%r.dbf"
    sc.log_blocks = 2048
    result = generate(sc, tmp_path / "gen")
    assert len({log.thread for log in result.logs}) == 2
    cfg = result.offline_config()
    cfg.setdefault("state", {})["interval-mb"] = 1
    _compare(tmp_path, result, cfg)


@pytest.mark.slow
def test_sigkill_inside_a_native_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILLs while the native engine streams one 40,000-row transaction: each restart
    replays it from its begin and drops the messages up to the confirmed index inside it."""
    from fixture_configs import fast_offline_config

    result = generate(workloads.huge_transaction(40_000), tmp_path / "gen")
    cfg = fast_offline_config(result)
    cfg["memory"] = {"min-mb": 32, "max-mb": 32}
    # The transaction's messages reach the file 64 KiB at a time (the file writer writes at most
    # a flush size per call): each kill lands inside the stream, not after a 9 MB jump.
    cfg["target"][0]["writer"]["write-buffer-flush-size"] = 64 * 1024
    monkeypatch.setenv("REPLICATOR_ENGINE", "native")  # inherited by the daemons started below
    _kill_and_finish(tmp_path, result, cfg, seed=14, kills=3)


def _kill_and_finish(
    tmp_path: Path,
    result: GenerationResult,
    cfg: dict[str, Any],
    *,
    seed: int,
    kills: int,
    grow: tuple[float, float] = (0.02, 0.12),
) -> None:
    """SIGKILL the daemon ``kills`` times, each asserted mid-stream, then run it to the end:
    the output must equal the uninterrupted run's (0 lines lost, 0 duplicated)."""
    import random

    from crash_kills import assert_all_mid_stream, kill_mid_stream, run_to_end
    from fixture_configs import write_config

    path = write_config(tmp_path, cfg, "offline.json")
    expected = result.expected.read_bytes()
    output = result.output

    def size() -> int:
        return output.stat().st_size if output.exists() else 0

    rng = random.Random(seed)
    done = [kill_mid_stream(path, size, len(expected), rng, grow=grow) for _ in range(kills)]
    run_to_end(path, size, len(expected))
    assert_all_mid_stream(done)
    assert output.read_bytes() == expected, "output after the crashes differs from the uninterrupted run"


def test_online_groups_native_equals_python(tmp_path: Path) -> None:
    """Logs read from the online groups (their archived copies removed): the native record loop
    gets the blocks the follower checked, in pieces, and ends each log at its NAB."""
    from replicator.redo.online import read_header
    from replicator.redogen.online import generate_online

    sc = workloads.oltp(seed=17, target_bytes=2 << 20)
    sc.log_blocks = 1024
    result = generate_online(sc, tmp_path / "gen", groups=3, final_switch=True)
    online = {read_header(str(p)).sequence for p in (tmp_path / "gen" / "online").iterdir()}
    removed = 0
    for path in (tmp_path / "gen" / "fra").rglob("*"):
        header = read_header(str(path)) if path.is_file() else None
        if header is not None and header.sequence in online:
            path.unlink()
            removed += 1
    assert removed == 3 and len(result.logs) > 3
    _compare(tmp_path, result, json.loads(result.config.read_text()))


@pytest.mark.slow
@pytest.mark.parametrize("workers", [0, 1])
def test_sigkill_inside_native_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """SIGKILLs while the native record loop reads archived logs (several per run): every
    restart resumes from the confirmed position; 0 lines lost, 0 duplicated. With one decode
    worker the kills land while stage 2 holds queued transactions."""
    from fixture_configs import fast_offline_config

    sc = workloads.oltp(seed=18, target_bytes=6 << 20)
    sc.log_blocks = 2048
    result = generate(sc, tmp_path / "gen")
    cfg = fast_offline_config(result)
    cfg.setdefault("state", {})["interval-mb"] = 1  # restart points inside the logs, not only at switches
    monkeypatch.setenv("REPLICATOR_ENGINE", "native")  # inherited by the daemons started below
    monkeypatch.setenv("REPLICATOR_DECODE_WORKERS", str(workers))
    _kill_and_finish(tmp_path, result, cfg, seed=18, kills=4)


# Counters and gauges a finished run determines (no clocks, no memory): equal between engines.
_DETERMINED = (
    "dml_ops_total",
    "ddl_ops_total",
    "bytes_parsed_total",
    "bytes_read_total",
    "checkpoints_total",
    "log_switches_total",
    "messages_sent_total",
    "messages_confirmed_total",
    "bytes_sent_total",
    "replicator_writer_messages_total",
    "replicator_scn ",
    "replicator_redo_sequence ",
)


def _final_metrics(result: GenerationResult, cfg: dict[str, Any], engine: str, work: Path) -> dict[str, str]:
    """Run the daemon with metrics on until its output is complete and the determined metrics
    stop changing over two publishes; those metric lines, by name and labels."""
    import urllib.request

    from daemon_proc import Daemon, wait_for
    from kafka_broker import free_port

    state = work / "state"
    shutil.copytree(result.checkpoint.parent, state)
    cfg = json.loads(json.dumps(cfg))
    cfg["state"]["path"] = str(state)
    output = work / "output.json"
    cfg["target"][0]["writer"]["output"] = str(output)
    port = free_port()
    cfg["metrics"] = {"type": "prometheus", "bind": f"127.0.0.1:{port}", "tag-names": "all"}
    path = work / "daemon.json"
    path.write_text(json.dumps(cfg))
    expected = result.expected.read_bytes()
    daemon = Daemon(path, work, env={"REPLICATOR_ENGINE": engine})
    seen: list[dict[str, str]] = [{}]

    def settled() -> bool:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        lines = dict(
            line.rsplit(" ", 1)
            for line in text.splitlines()
            if line.startswith(_DETERMINED) and not line.startswith("#")
        )
        same, seen[0] = lines == seen[0], lines
        return same and output.exists() and output.stat().st_size >= len(expected)

    try:
        daemon.wait_ready()
        assert wait_for(lambda: output.exists() and output.stat().st_size >= len(expected), 120), daemon.log()[-2000:]
        assert wait_for(settled, 60, poll=1.2), "the metrics did not settle"
        code, err = daemon.stop()
    finally:
        daemon.close()
    assert code == 0, err[-2000:]
    assert output.read_bytes() == expected
    return seen[0]


def test_metrics_native_equal_python(tmp_path: Path) -> None:
    """With metrics on (tag-names all) the native commit counts its rows itself (it no longer
    leaves the commit to python): the published counters equal the python engine's."""
    sc = workloads.oltp(seed=16, target_bytes=1 << 20)
    sc.log_blocks = 1024
    result = generate(sc, tmp_path / "gen")
    cfg = result.offline_config()
    got = {}
    for engine in ("python", "native"):
        (tmp_path / engine).mkdir()
        got[engine] = _final_metrics(result, cfg, engine, tmp_path / engine)
    assert any(k.startswith("dml_ops_total") and 'owner="' in k and float(v) > 0 for k, v in got["python"].items())
    assert got["native"] == got["python"]


def test_bad_block_stops_native_as_python(tmp_path: Path) -> None:
    """A bad block in the middle of an archived log: the native daemon (its reader thread
    checks the blocks ahead of the parser) stops with the python engine's error and exit."""
    sc = workloads.oltp(seed=14, target_bytes=3 << 20)
    sc.log_blocks = 2048
    result = generate(sc, tmp_path / "gen")
    assert len(result.logs) > 2 and result.logs[1].blocks > 1000
    path = result.logs[1].path
    data = bytearray(path.read_bytes())
    bad = 1000
    data[bad * sc.block_size + 100] ^= 0x10
    path.write_bytes(bytes(data))
    cfg = result.offline_config()
    outcomes = {}
    for engine in ("python", "native"):
        work = tmp_path / engine
        work.mkdir()
        shutil.copytree(result.checkpoint.parent, work / "state")
        run = json.loads(json.dumps(cfg))
        run["state"]["path"] = str(work / "state")
        run["target"][0]["writer"]["output"] = str(work / "output.json")
        run["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
        (work / "daemon.json").write_text(json.dumps(run))
        proc = subprocess.run(
            [sys.executable, "-m", "replicator", "run", "-f", str(work / "daemon.json")],
            env=dict(os.environ, REPLICATOR_ENGINE=engine),
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert "Traceback" not in proc.stderr
        errors = [line for line in proc.stderr.splitlines() if "40006" in line]
        assert errors and f"block {bad} " in errors[0], proc.stderr[-3000:]
        outcomes[engine] = (proc.returncode, errors[0].split("40006", 1)[1])
    assert outcomes["native"] == outcomes["python"] and outcomes["native"][0] != 0
