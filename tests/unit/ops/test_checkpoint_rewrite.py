"""A restart re-reads from the oldest open transaction and meets the SCNs of schema checkpoints
an earlier run wrote. It used to rewrite the full-schema file those refer to as a reference to
its own first file, which pruning then deleted: a later restart found the chain broken
(10040, seen in the SIGKILL loop of test_daemon_pruning.py). A full file now stays full."""

from __future__ import annotations

from pathlib import Path

from replicator.runner.checkpoint import CheckpointManager
from replicator.schema.document import SchemaCheckpoint
from replicator.schema.store import load_schema_checkpoint

ROWS = {"sys-user": [{"row-id": "AAAAAAAAAAAAAAAAAA", "user": 9, "name": "APP", "spare1": 0, "single": 0}]}


def _write(manager: CheckpointManager, scn: int) -> None:
    manager.write_schema(SchemaCheckpoint("TEST", scn, rows=ROWS, schema_scn=100), scn, 0, scn, 1, scn * 512, None)


def _load(state: Path, scn: int) -> SchemaCheckpoint:
    return load_schema_checkpoint(state / f"TEST-chkpt-{scn}.json", "TEST")


def test_a_rerun_over_older_files_keeps_the_full_one_full(tmp_path: Path) -> None:
    first = CheckpointManager(str(tmp_path), "TEST", keep=100, force_interval=20)
    for scn in (100, 200, 300):
        _write(first, scn)
    assert _load(tmp_path, 100).schema_ref_scn is None and _load(tmp_path, 300).schema_ref_scn == 100
    # The restart (from 300, whose oldest open transaction began before 100) writes 50 first:
    again = CheckpointManager(str(tmp_path), "TEST", keep=100, force_interval=20)
    for scn in (50, 100, 200):
        _write(again, scn)
    assert _load(tmp_path, 50).schema_ref_scn is None
    assert _load(tmp_path, 100).schema_ref_scn is None, "the file 300 refers to lost its dictionary"
    assert _load(tmp_path, 200).schema_ref_scn == 100
    restart = again.restart_checkpoint(None, 300)
    assert restart is not None and restart.scn == 300 and restart.rows["sys-user"] == ROWS["sys-user"]


def test_pruning_follows_a_reference_to_a_reference(tmp_path: Path) -> None:
    """State folders written before the fix may hold one: its files all stay."""
    first = CheckpointManager(str(tmp_path), "TEST", keep=100)
    for scn in (100, 300):
        _write(first, scn)
    text = (tmp_path / "TEST-chkpt-300.json").read_text()
    (tmp_path / "TEST-chkpt-400.json").write_text(
        text.replace('"scn":300', '"scn":400').replace('"schema-ref-scn":100', '"schema-ref-scn":300')
    )
    pruning = CheckpointManager(str(tmp_path), "TEST", keep=1, start_scn=450)
    pruning.saved = None
    _write(pruning, 500)  # (full: a new process's first file)
    _write(pruning, 600)
    names = sorted(p.name for p in tmp_path.glob("TEST-chkpt-*.json"))
    assert {"TEST-chkpt-100.json", "TEST-chkpt-300.json", "TEST-chkpt-400.json"} <= set(names), names
    restart = pruning.restart_checkpoint(None, 450)
    assert restart is not None and restart.scn == 400 and restart.rows["sys-user"] == ROWS["sys-user"]
