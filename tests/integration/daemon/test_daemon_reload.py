"""Hot reload: a table added to the filter while the daemon tails a live database."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from daemon_proc import Daemon, wait_for

from replicator.redogen import workloads
from replicator.redogen.online import OnlineRun


def _complete(data: bytes) -> list[bytes]:
    """The whole lines of an output file being written (a last line without newline is partial)."""
    return data.splitlines()[:-1] if not data.endswith(b"\n") else data.splitlines()


def _tables(lines: list[bytes]) -> set[str]:
    return {p["schema"]["table"] for m in map(json.loads, lines) for p in m["payload"] if "schema" in p}


@pytest.mark.slow
def test_reload_adds_a_table(tmp_path: Path) -> None:
    sc = workloads.oltp(seed=9, target_bytes=6 << 20)
    gen = OnlineRun(sc, tmp_path, groups=3, rate_mb_s=1.0, with_expected=False)
    cfg_path = tmp_path / "OpenLogReplicator.json"
    cfg = json.loads(cfg_path.read_text())
    owner = cfg["source"][0]["filter"]["table"][0]["owner"]
    cfg["source"][0]["filter"]["table"] = [{"owner": owner, "table": "T0[0-4]"}]
    cfg["source"][0]["redo-read-sleep-us"] = 20_000
    cfg["target"][0]["writer"]["poll-interval-us"] = 20_000
    cfg_path.write_text(json.dumps(cfg))
    output = tmp_path / "output.json"
    proc = Daemon(cfg_path, tmp_path)
    try:
        proc.wait_ready()
        # Some rows of the first filter are out before the filter changes.
        assert wait_for(lambda: output.exists() and _tables(_complete(output.read_bytes())), 60)
        before = output.read_bytes()
        cfg["source"][0]["filter"]["table"] = [{"owner": owner, "table": "T0[0-9]"}]
        cfg_path.write_text(json.dumps(cfg))
        os.utime(cfg_path, (time.time() + 2, time.time() + 2))  # a visibly newer mtime
        proc.wait_log("config reloaded")
        gen.thread.join(120)
        # A row of a table only the new filter selects is replicated.
        assert wait_for(lambda: _tables(_complete(output.read_bytes())) - _tables(_complete(before)), 60)
        rc, err = proc.stop()
    finally:
        proc.close()
    assert rc == 0, err[-2000:]
    assert "config reloaded" in err and "- found: " in err
    lines = output.read_bytes().splitlines()
    early = _complete(before)
    assert lines[: len(early)] == early  # reloading never rewrites what was written
    assert _tables(early) <= {"T00", "T01", "T02", "T03", "T04"}
    assert _tables(lines) - _tables(early), "no row of a newly added table after the reload"
