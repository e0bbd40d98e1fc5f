"""Hot reload says what it did not apply, and never parses a half-written file (issue 15, fault 8).

A changed writer output used to be logged as "config reloaded" and silently ignored;
a file caught half-written gave spurious ``ERROR 10004``/``20001`` lines.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import generate


def _wait_for(path: Path, text: str, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in path.read_text():
            return True
        time.sleep(0.05)
    return False


def test_reload_names_restart_keys_and_skips_half_written_files(tmp_path: Path) -> None:
    result = generate(workloads.oltp(seed=2, target_bytes=256 << 10), tmp_path / "gen")
    doc = fast_offline_config(result)
    cfg = write_config(tmp_path, doc, "offline.json")
    log_path = tmp_path / "daemon.log"
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen([sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=log_file, text=True)
        try:
            assert _wait_for(log_path, "replicating")
            # 1. A key only a restart applies: named, not "config reloaded".
            changed = json.loads(json.dumps(doc))
            changed["target"][0]["writer"]["output"] = str(tmp_path / "elsewhere.json")
            cfg.write_text(json.dumps(changed))
            assert _wait_for(log_path, "WARN  60105"), log_path.read_text()[-2000:]
            # 2. Half-written, then complete: only the complete file is judged.
            rules = changed["source"][0]["filter"]["table"]
            rules.append({"owner": rules[0]["owner"], "table": "NO_SUCH_TABLE"})
            text = json.dumps(changed)
            cfg.write_text(text[: len(text) // 2])
            time.sleep(0.15)  # a few polls see the torn file
            cfg.write_text(text)
            assert _wait_for(log_path, "config reloaded: table filter updated"), log_path.read_text()[-2000:]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    err = log_path.read_text()
    assert proc.returncode == 0, err[-2000:]
    assert "target[0].writer.output" in err
    reload_lines = [line for line in err.splitlines() if "config reload" in line]
    assert not [line for line in reload_lines if " ERROR " in line], reload_lines
    assert sum("config reloaded" in line for line in reload_lines) == 1, reload_lines


def test_reverting_an_unapplied_change_is_not_reported_again(tmp_path: Path) -> None:
    """A restart-only key changed, then put back: the first is 60105, the revert is not (it was
    reported as a change again, 60105, though the file then matched what runs)."""
    result = generate(workloads.oltp(seed=2, target_bytes=256 << 10), tmp_path / "gen")
    doc = fast_offline_config(result)
    cfg = write_config(tmp_path, doc, "offline.json")
    log_path = tmp_path / "daemon.log"
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen([sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
                                stdout=subprocess.DEVNULL, stderr=log_file, text=True)
        try:
            assert _wait_for(log_path, "replicating")
            changed = json.loads(json.dumps(doc))
            changed["target"][0]["writer"]["output"] = str(tmp_path / "elsewhere.json")
            cfg.write_text(json.dumps(changed))
            assert _wait_for(log_path, "WARN  60105"), log_path.read_text()[-2000:]
            cfg.write_text(json.dumps(doc, indent=1))  # the running values again (other bytes)
            assert _wait_for(log_path, "back to the values that run"), log_path.read_text()[-2000:]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
    err = log_path.read_text()
    assert proc.returncode == 0, err[-2000:]
    assert err.count("60105") == 1, [line for line in err.splitlines() if "60105" in line]
