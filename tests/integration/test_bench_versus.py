"""``python -m replicator.bench.versus``: both sides run alternately on the same generated
files, from the same checkpoint, and their outputs are compared.

The mechanics are checked against a stand-in "reference" that is this project itself (so
the outputs must be identical and every figure line printed); the real comparison runs too
when ``REPLICATOR_OLR_BINARY`` names an OpenLogReplicator build.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from replicator.bench import versus


def _stand_in(tmp_path: Path) -> Path:
    """An executable taking OLR's ``-f CONFIG`` that runs ``replicator run`` on it."""
    script = tmp_path / "stand-in-olr"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m replicator run "$@"\n')
    script.chmod(0o755)
    return script


def _run(binary: Path, work: Path, *extra: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "replicator.bench.versus", "--binary", str(binary), "--size", "256k"]
        + ["--runs", "2", "--warmup", "0", "--dir", str(work), *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_alternated_runs_same_output(tmp_path: Path) -> None:
    out = _run(_stand_in(tmp_path), tmp_path / "work")
    lines = out.splitlines()
    assert lines[0].startswith("oltp ") and "2 runs each" in lines[0]
    assert [line.split()[0] for line in lines[1:3]] == ["ours", "reference"]
    assert any(line.startswith("ours/reference wall") for line in lines)
    assert any(line.startswith("ours/reference cpu") for line in lines)
    assert lines[-1].startswith("outputs: identical (")
    # The generated redo is kept for the next call with the same workload, seed and size.
    marker = tmp_path / "work" / "gen" / "versus.json"
    before = marker.stat().st_mtime_ns
    _run(_stand_in(tmp_path), tmp_path / "work")
    assert marker.stat().st_mtime_ns == before


def test_a_failing_side_is_reported(tmp_path: Path) -> None:
    broken = tmp_path / "broken-olr"
    broken.write_text("#!/bin/sh\necho 'cannot start' >&2\nexit 3\n")
    broken.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "replicator.bench.versus", "--binary", str(broken), "--size", "64k"]
        + ["--runs", "1", "--warmup", "0", "--dir", str(tmp_path / "work")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "exited with 3" in done.stderr and "cannot start" in done.stderr


def test_peaks_are_the_childs(tmp_path: Path) -> None:
    """ru_maxrss of a run is the child's own peak when this process is smaller."""
    side = versus.Side(
        "probe", [sys.executable, "-c", "b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096])"], tmp_path, None
    )
    run = versus.run_once(side)
    assert run.peak_mb >= 200
    assert run.cpu > 0 and run.wall > 0


@pytest.mark.skipif(not os.environ.get("REPLICATOR_OLR_BINARY"), reason="REPLICATOR_OLR_BINARY not set")
def test_against_the_reference_binary(tmp_path: Path) -> None:
    out = _run(Path(os.environ["REPLICATOR_OLR_BINARY"]), tmp_path / "work")
    assert out.splitlines()[-1].startswith("outputs: identical (")
