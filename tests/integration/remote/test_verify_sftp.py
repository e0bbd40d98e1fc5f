"""``replicator verify`` reads the redo through the config's redo source: SFTP from a real SSH
server on 127.0.0.1, with paths that exist only on the server side of the path mapping."""

from __future__ import annotations

import json
from pathlib import Path

from sshd_harness import SshServer

from replicator.redogen import workloads
from replicator.redogen.generate import generate
from replicator.runner.batch import run_config
from replicator.verify.command import build_parser, verify

DB_PREFIX = "/oradata/ORCL/"


def test_verify_over_sftp(tmp_path: Path, ssh_server: SshServer) -> None:
    result = generate(workloads.oltp(seed=24, target_bytes=800_000), tmp_path / "gen", with_expected=False)
    assert run_config(str(result.config), progress="off") == 0  # the sink: the local batch run's output
    doc = json.loads(result.config.read_text())
    reader = doc["source"][0]["reader"]
    reader["redo-log"] = [DB_PREFIX + "redo/"]
    reader["redo-source"] = ssh_server.source_config(
        **{"path-mapping": [DB_PREFIX + "redo/", str(result.config.parent / "redo") + "/"]}
    )
    remote = tmp_path / "remote.json"
    remote.write_text(json.dumps(doc))
    assert not Path(DB_PREFIX).exists()  # only the server has these paths
    report = verify(build_parser().parse_args(["-f", str(remote)]))
    assert report.ok, report.text()
    assert report.redo.files == len(result.logs)
    assert report.redo.bytes == sum(log.path.stat().st_size for log in result.logs)
    assert report.result.redo_changes == len(result.output.read_bytes().splitlines())
