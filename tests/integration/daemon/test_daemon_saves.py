"""A save that fails is an error with a code and a non-zero exit, never "stopped" and exit 0
(issue 31 item 5, issue 32 item 6).

Before: an unwritable state directory gave WARN 60018 "retrying ... 300 s" and, at the end of
the run, exit 0 with no checkpoint; a failed start-position save was ignored (a restart then
appended a second copy of the output); a soft stop whose position and schema checkpoint could
not be written logged "stopped" and exited 0 (the restart duplicated the whole output).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_proc import Daemon
from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate


def _generated(root: Path) -> GenerationResult:
    sc = workloads.oltp(seed=41, target_bytes=512 << 10)
    sc.log_blocks = 1024
    return generate(sc, root / "gen")


@pytest.fixture
def unwritable() -> Iterator[list[Path]]:
    """Folders made unwritable for the test (even for root: immutable), made writable again after."""
    made: list[Path] = []
    yield made
    for path in made:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        path.chmod(0o755)


def _make_unwritable(path: Path, made: list[Path]) -> None:
    """Root writes anywhere a mode allows nothing: make the folder immutable (ext4, xfs...);
    another user gets a read-only mode."""
    made.append(path)
    if os.geteuid() != 0:
        path.chmod(0o555)
        return
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"running as root and the file system cannot make {path} immutable: {done.stderr.strip()}")


def _run(config: Path, **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,
    )  # type: ignore[call-overload]


@pytest.mark.parametrize("mode", ["daemon", "batch"])
def test_unwritable_state_directory_is_refused_at_start(tmp_path: Path, unwritable: list[Path], mode: str) -> None:
    result = _generated(tmp_path)
    if mode == "daemon":
        cfg = fast_offline_config(result)
        cfg["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    else:
        cfg = json.loads(result.config.read_text())
    config = write_config(tmp_path, cfg, f"{mode}.json")
    _make_unwritable(result.checkpoint.parent, unwritable)
    proc = _run(config)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "ERROR 10122 " in proc.stderr and "not writable" in proc.stderr, proc.stderr[-3000:]
    assert "60018" not in proc.stderr
    assert not result.output.exists() or result.output.stat().st_size == 0, "output written without checkpoints"


def test_failed_start_position_save_stops_before_any_output(tmp_path: Path) -> None:
    """The position file cannot be replaced (its temp file's name is taken by a folder) while the
    directory itself is writable: the record of the start is not saved, so nothing may be output."""
    result = _generated(tmp_path)
    (result.checkpoint.parent / ".TEST-chkpt.json.tmp").mkdir()
    cfg = fast_offline_config(result)
    cfg["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    proc = _run(write_config(tmp_path, cfg, "offline.json"))
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "ERROR 10121 " in proc.stderr, proc.stderr[-3000:]
    assert not result.output.exists() or result.output.stat().st_size == 0


def _remove_while_written(directory: Path, timeout: float = 30.0) -> None:
    """rmtree a directory the daemon is still writing into: a file it adds between rmtree's
    listing and its rmdir fails that pass (ENOTEMPTY), so pass again until it is gone."""
    deadline = time.monotonic() + timeout
    while directory.exists():
        try:
            shutil.rmtree(directory)
        except OSError:
            if time.monotonic() > deadline:
                raise


def test_failed_saves_at_the_stop_exit_non_zero(tmp_path: Path) -> None:
    """The state directory goes away mid-run (a failed disk): the soft stop cannot write the
    position nor the final schema checkpoint, so it is not a clean stop. (The read is slowed
    down so that the stop comes before the end: at the end everything would be saved already.)"""
    result = _generated(tmp_path)
    expected = result.expected.read_bytes().splitlines()
    config = write_config(tmp_path, fast_offline_config(result), "offline.json")
    daemon = Daemon(config, tmp_path, "--read-limit", "0.2")
    try:
        daemon.wait_ready()
        _remove_while_written(result.checkpoint.parent)
        daemon.wait_status(lambda st: 0 < st[3] < len(expected), 60)
        daemon.signal(signal.SIGTERM)
        daemon.proc.wait(60)
    finally:
        daemon.close()
    err = daemon.log()
    assert daemon.proc.returncode == 1, err[-3000:]
    assert "ERROR 10120 " in err, err[-3000:]
    assert "stopped:" not in err
