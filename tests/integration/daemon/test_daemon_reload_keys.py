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


class Running:
    """The offline daemon on small generated redo, its config rewritten by the test, its log kept."""

    def __init__(self, tmp_path: Path) -> None:
        result = generate(workloads.oltp(seed=2, target_bytes=256 << 10), tmp_path / "gen")
        self.doc = fast_offline_config(result)
        self.cfg = write_config(tmp_path, self.doc, "offline.json")
        self.log_path = tmp_path / "daemon.log"
        self.elsewhere = str(tmp_path / "elsewhere.json")

    def __enter__(self) -> Running:
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "replicator", "run", "-f", str(self.cfg)],
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            text=True,
        )
        assert _wait_for(self.log_path, "replicating")
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        self._log.close()

    def wait_for(self, text: str) -> None:
        assert _wait_for(self.log_path, text), self.log_path.read_text()[-2000:]

    def change_output(self) -> dict:
        """Write the config with another writer output (a key only a restart applies); wait for 60105."""
        changed = json.loads(json.dumps(self.doc))
        changed["target"][0]["writer"]["output"] = self.elsewhere
        self.cfg.write_text(json.dumps(changed))
        self.wait_for("WARN  60105")
        return changed


def test_reload_names_restart_keys_and_skips_half_written_files(tmp_path: Path) -> None:
    running = Running(tmp_path)
    with running:
        changed = running.change_output()  # 1. a key only a restart applies: named, not "config reloaded"
        # 2. Half-written, then complete: only the complete file is judged.
        rules = changed["source"][0]["filter"]["table"]
        rules.append({"owner": rules[0]["owner"], "table": "NO_SUCH_TABLE"})
        text = json.dumps(changed)
        running.cfg.write_text(text[: len(text) // 2])
        time.sleep(0.15)  # a few polls see the torn file
        running.cfg.write_text(text)
        running.wait_for("config reloaded: table filter updated")
    err = running.log_path.read_text()
    assert running.proc.returncode == 0, err[-2000:]
    assert "target[0].writer.output" in err
    reload_lines = [line for line in err.splitlines() if "config reload" in line]
    assert not [line for line in reload_lines if " ERROR " in line], reload_lines
    assert sum("config reloaded" in line for line in reload_lines) == 1, reload_lines


def test_reverting_an_unapplied_change_is_not_reported_again(tmp_path: Path) -> None:
    """A restart-only key changed, then put back: the first is 60105, the revert is not (it was
    reported as a change again, 60105, though the file then matched what runs)."""
    running = Running(tmp_path)
    with running:
        running.change_output()
        running.cfg.write_text(json.dumps(running.doc, indent=1))  # the running values again (other bytes)
        running.wait_for("back to the values that run")
    err = running.log_path.read_text()
    assert running.proc.returncode == 0, err[-2000:]
    assert err.count("60105") == 1, [line for line in err.splitlines() if "60105" in line]
