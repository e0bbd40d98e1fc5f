"""Configs for the real free23 fixture, shared by tests (``tests/`` is on sys.path via conftest)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any


def free23_batch_config(free23: Path, tmp_path: Path, *, utc_host: bool = True) -> dict[str, Any]:
    """olr-config.json with a temp state dir (holding the schema checkpoint), absolute redo
    paths and the output in ``tmp_path/output.json``. The fixture was made on a UTC host."""
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    shutil.copy(free23 / "TEST-chkpt-2266634.json", state)
    cfg = json.loads((free23 / "olr-config.json").read_text())
    cfg["state"]["path"] = str(state)
    reader = cfg["source"][0]["reader"]
    reader["redo-log"] = [str(free23 / name) for name in reader["redo-log"]]
    if utc_host:
        reader["host-timezone"] = "+00:00"
    cfg["target"][0]["writer"]["output"] = str(tmp_path / "output.json")
    return cfg


def write_config(tmp_path: Path, cfg: dict[str, Any], name: str = "OpenLogReplicator.json") -> Path:
    """Write ``cfg`` into ``tmp_path`` and return its path."""
    path = tmp_path / name
    path.write_text(json.dumps(cfg))
    return path


def fast_offline_config(result: Any, archive_dir: Path | None = None) -> dict[str, Any]:
    """A redogen run's config for the offline daemon, polling fast enough for tests: archives
    every 50 ms (practically forever), the writer every 20 ms."""
    cfg = result.offline_config(archive_dir)
    cfg["source"][0].update({"arch-read-sleep-us": 50_000, "arch-read-tries": 1_000_000})
    cfg["target"][0]["writer"]["poll-interval-us"] = 20_000
    return cfg
