"""Hot reload: a table added to the filter while the daemon tails a live database."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from replicator.redogen import workloads
from replicator.redogen.online import generate_online


def _tables(lines: list[bytes]) -> set[str]:
    return {p["schema"]["table"] for m in map(json.loads, lines) for p in m["payload"] if "schema" in p}


def test_reload_adds_a_table(tmp_path: Path) -> None:
    sc = workloads.oltp(seed=9, target_bytes=6 << 20)
    ready = threading.Event()
    gen = threading.Thread(target=lambda: generate_online(sc, tmp_path, groups=3, rate_mb_s=1.0, ready=ready,
                                                          with_expected=False), daemon=True)
    gen.start()
    assert ready.wait(30)
    cfg_path = tmp_path / "OpenLogReplicator.json"
    cfg = json.loads(cfg_path.read_text())
    owner = cfg["source"][0]["filter"]["table"][0]["owner"]
    cfg["source"][0]["filter"]["table"] = [{"owner": owner, "table": "T0[0-4]"}]
    cfg["source"][0]["redo-read-sleep-us"] = 20_000
    cfg["target"][0]["writer"]["poll-interval-us"] = 20_000
    cfg_path.write_text(json.dumps(cfg))
    output = tmp_path / "output.json"
    proc = subprocess.Popen([sys.executable, "-m", "replicator", "run", "-f", str(cfg_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2.5)
        before = output.read_bytes()
        cfg["source"][0]["filter"]["table"] = [{"owner": owner, "table": "T0[0-9]"}]
        cfg_path.write_text(json.dumps(cfg))
        os.utime(cfg_path, (time.time() + 2, time.time() + 2))  # a visibly newer mtime
        gen.join(120)
        time.sleep(1.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    assert "config reloaded" in err and "- found: " in err
    lines = output.read_bytes().splitlines()
    early = before.splitlines()
    assert lines[: len(early) - 1] == early[:-1]  # reloading never rewrites what was written
    assert _tables(early) <= {"T00", "T01", "T02", "T03", "T04"}
    assert _tables(lines) - _tables(early), "no row of a newly added table after the reload"
