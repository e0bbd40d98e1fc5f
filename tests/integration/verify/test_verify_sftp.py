"""``replicator verify`` reads the redo through the config's redo source: SFTP from a real SSH
server on 127.0.0.1, with paths that exist only on the server side of the path mapping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from verify_fixtures import check, config_with, generated, replicate

DB_PREFIX = "/oradata/ORCL/"


def test_verify_over_sftp(tmp_path: Path, ssh_server: Any) -> None:
    result = generated(tmp_path / "gen", seed=24, size=800_000)
    output = tmp_path / "out.json"
    local = config_with(result, "local.json", {"type": "file", "output": str(output), "append": 1})
    replicate(local)
    doc = json.loads(local.read_text())
    reader = doc["source"][0]["reader"]
    reader["redo-log"] = [DB_PREFIX + "redo/"]
    reader["redo-source"] = ssh_server.source_config(
        **{"path-mapping": [DB_PREFIX + "redo/", str(result.config.parent / "redo") + "/"]})
    remote = tmp_path / "remote.json"
    remote.write_text(json.dumps(doc))
    assert not Path(DB_PREFIX).exists()  # only the server has these paths
    report = check(remote)
    assert report.ok, report.text()
    assert report.redo.bytes == sum(log.path.stat().st_size for log in result.logs)
    assert report.result.redo_changes == len(output.read_bytes().splitlines())
    assert report.redo.files == len(result.logs)
