"""A redo log of another database or incarnation is never read as the source's (issue 31, item 4).

Archived logs were found by their sequence only (``%r`` of ``log-archive-format`` ignored) and
no header was compared with the checkpoint: a log of another incarnation, or of another
database, carrying the right sequence was parsed, and whatever it decoded to was output.
Now archive lookups skip names whose ``%r`` is not the checkpoint's RESETLOGS_ID, and every
log's header must match (OpenLogReplicator's 50048 for the RESETLOGS_ID; 40120 DBID/name,
40121 activation ID), before anything of it is read.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate
from replicator.redogen.scenario import Scenario


def _scenario(seed: int, **identity: int) -> Scenario:
    sc = workloads.oltp(seed=seed, target_bytes=1 << 20)
    sc.log_blocks = 1024
    for key, value in identity.items():
        setattr(sc, key, value)
    return sc


def _run(result: GenerationResult, tmp_path: Path) -> subprocess.CompletedProcess:
    cfg = fast_offline_config(result)
    cfg["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    config = write_config(tmp_path, cfg, "offline.json")
    return subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(config)], capture_output=True, text=True, timeout=300
    )


def test_logs_of_another_incarnation_beside_ours_are_skipped_by_their_name(tmp_path: Path) -> None:
    ours = generate(_scenario(31), tmp_path / "ours")
    other_sc = _scenario(32, resetlogs=_scenario(31).effective_resetlogs + 1000)
    other = generate(other_sc, tmp_path / "other")
    archive = ours.logs[0].path.parent
    day = archive / "2026_03_07"  # ours in an FRA day folder: the other incarnation's names come first
    day.mkdir()
    for log in ours.logs:
        shutil.move(log.path, day / log.path.name)
    for log in other.logs:
        assert not (archive / log.path.name).exists()
        shutil.copy(log.path, archive / log.path.name)
    proc = _run(ours, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ours.output.read_bytes() == ours.expected.read_bytes()


OTHER = {  # how the other log differs from ours (generator defaults otherwise), the code and its text
    "incarnation": (
        lambda: {"resetlogs": _scenario(31).effective_resetlogs + 1000},
        50048,
        "invalid resetlogs value (found: ",
    ),
    "database": (lambda: {"dbid": 0x1234567}, 40120, "a log of database"),
    "activation": (lambda: {"activation": 0x7654321}, 40121, "activation ID"),
}


@pytest.mark.parametrize("kind", sorted(OTHER))
def test_a_log_of_another_database_under_our_name_stops_the_run(tmp_path: Path, kind: str) -> None:
    """The other log is copied under our name for sequence 2: the run stops there with the code."""
    identity, code, says = OTHER[kind]
    ours = generate(_scenario(31), tmp_path / "ours")
    other = generate(_scenario(33, **identity()), tmp_path / "other")
    assert len(ours.logs) >= 2 and len(other.logs) >= 2
    shutil.copy(other.logs[1].path, ours.logs[1].path)
    proc = _run(ours, tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stderr[-3000:]
    line = next((x for x in proc.stderr.splitlines() if f"ERROR {code} " in x), None)
    assert line is not None and says in line and str(ours.logs[1].path) in line, proc.stderr[-3000:]
    # Nothing of the other log was output: what was written is a prefix of our own stream.
    assert ours.expected.read_bytes().startswith(ours.output.read_bytes() if ours.output.exists() else b"")
    assert json.loads((ours.checkpoint.parent / "TEST-chkpt.json").read_text())["pos"][0] <= 1
