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


def _run(result: GenerationResult, cfg: dict[str, Any], engine: str, work: Path) -> tuple[bytes, dict[str, bytes]]:
    """Run the offline daemon with ``engine`` in ``work``; its output and state files."""
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
    env = dict(os.environ, REPLICATOR_ENGINE=engine)
    proc = subprocess.run([sys.executable, "-m", "replicator", "run", "-f", str(path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    here = str(work).encode()  # the confirmed position names the output file: compare without the folder
    return output.read_bytes(), {p.name: p.read_bytes().replace(here, b"WORK") for p in sorted(state.iterdir())}


def _compare(tmp_path: Path, result: GenerationResult, cfg: dict[str, Any], expected: bool = True) -> None:
    runs = {}
    for engine in ("python", "native"):
        (tmp_path / engine).mkdir()
        runs[engine] = _run(result, cfg, engine, tmp_path / engine)
    (py_out, py_state), (nat_out, nat_state) = runs["python"], runs["native"]
    assert nat_out == py_out, "native and python daemon outputs differ"
    if expected:  # redogen's expectation is OLR JSON
        assert nat_out == result.expected.read_bytes()
    assert sorted(nat_state) == sorted(py_state)
    for name in py_state:
        assert nat_state[name] == py_state[name], f"state file {name} differs"


def test_oltp_native_equals_python(tmp_path: Path) -> None:
    sc = workloads.oltp(seed=14, target_bytes=2 << 20)
    sc.log_blocks = 2048  # several logs: log switches, schema checkpoints
    result = generate(sc, tmp_path / "gen")
    assert len(result.logs) > 1
    cfg = result.offline_config()
    cfg.setdefault("state", {})["interval-mb"] = 1
    _compare(tmp_path, result, cfg)


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
    import random

    from crash_kills import assert_all_mid_stream, kill_mid_stream, run_to_end
    from fixture_configs import fast_offline_config, write_config

    result = generate(workloads.huge_transaction(40_000), tmp_path / "gen")
    cfg = fast_offline_config(result)
    cfg["memory"] = {"min-mb": 32, "max-mb": 32}
    path = write_config(tmp_path, cfg, "offline.json")
    expected = result.expected.read_bytes()
    output = result.output

    def size() -> int:
        return output.stat().st_size if output.exists() else 0

    monkeypatch.setenv("REPLICATOR_ENGINE", "native")  # inherited by the daemons started below
    rng = random.Random(14)
    kills = [kill_mid_stream(path, size, len(expected), rng, grow=(0.05, 0.25)) for _ in range(3)]
    run_to_end(path, size, len(expected))
    assert_all_mid_stream(kills)
    assert output.read_bytes() == expected, "output after the crashes differs from the uninterrupted run"
