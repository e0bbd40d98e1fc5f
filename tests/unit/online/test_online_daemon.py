"""The online reader end to end, with the database replaced by recorded rows.

No schema checkpoint exists: the daemon "connects", reads the facts and the dictionary
of the 23ai fixture's database, writes the first schema checkpoint, then replicates the
fixture's archived logs, which it finds through V$ARCHIVED_LOG, to OpenLogReplicator's
exact output.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import time
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from recorded_db import RecordedDatabase, recorded_from_checkpoint

from replicator.online import sql, startup
from replicator.online.locator import DatabaseLogLocator
from replicator.runner.daemon import Daemon
from replicator.schema.document import format_schema_checkpoint, parse_schema_checkpoint

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
FREE23 = SHARED / "fixtures" / "redo" / "free23-basic"
ARCHIVES = {15: "arch1_15_1224959854.dbf", 16: "arch1_16_1224959854.dbf"}


def _config(tmp_path: Path, state: Path) -> Path:
    cfg = json.loads((FREE23 / "olr-config.json").read_text())
    cfg["state"]["path"] = str(state)
    cfg["source"][0]["reader"] = {
        "type": "online",
        "user": "c##olr",
        "password": "secret",
        "server": "//db.invalid:1521/ORCLPDB1",
        "host-timezone": "+00:00",
    }
    cfg["source"][0].update({"arch-read-sleep-us": 50000, "arch-read-tries": 1000, "redo-read-sleep-us": 20000})
    cfg["target"][0]["writer"].update({"output": str(tmp_path / "out.json"), "poll-interval-us": 20000})
    path = tmp_path / "OpenLogReplicator.json"
    path.write_text(json.dumps(cfg))
    return path


def _database(doc: dict, arch: Path) -> RecordedDatabase:
    db = recorded_from_checkpoint(doc, sequence=15, banner="Oracle Database 23ai Free Release 23.0.0.0.0")
    db.on(
        sql.ARCHIVED_LOGS,
        lambda b: [
            (str(arch / name), Decimal(seq), Decimal(0), Decimal(0))
            for seq, name in sorted(ARCHIVES.items())
            if seq >= b["seq"]
        ],
    )
    return db


def test_online_start_writes_first_checkpoint_and_replicates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not FREE23.is_dir():
        pytest.skip(f"shared test data not found: {FREE23} (place the shared/ folder beside the repository)")
    arch, state = tmp_path / "arch", tmp_path / "state"
    arch.mkdir()
    state.mkdir()
    for name in ARCHIVES.values():
        shutil.copy(FREE23 / name, arch / name)
    doc = json.loads((FREE23 / "TEST-chkpt-2266634.json").read_text())
    db = _database(doc, arch)
    monkeypatch.setattr(startup, "open_database", lambda reader: db)
    daemon = Daemon(str(_config(tmp_path, state)))
    out, expected = tmp_path / "out.json", (FREE23 / "expected-output.json").read_bytes()

    def stop_when_done() -> None:
        end = time.monotonic() + 60
        while time.monotonic() < end and not (out.exists() and out.read_bytes() == expected):
            time.sleep(0.05)
        daemon.stop_event.set()

    watcher = threading.Thread(target=stop_when_done, daemon=True)
    watcher.start()
    asyncio.run(daemon.main())
    watcher.join()
    assert out.read_bytes() == expected
    first = state / "TEST-chkpt-2266634.json"
    reference = replace(parse_schema_checkpoint(doc, "reference"), seq=15)
    assert first.read_text() == format_schema_checkpoint(reference)
    assert isinstance(daemon.engine.follower.locator, DatabaseLogLocator)
    asked = [s for s, _ in db.asked]
    assert sql.ARCHIVED_LOGS in asked and sql.LOG_FILES in asked
    assert db.closed  # arch "online": no session kept between archive look-ups
