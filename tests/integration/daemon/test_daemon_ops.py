"""The daemon as an operator runs it: systemd notifications and Prometheus metrics."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from kafka_broker import free_port
from test_daemon_fixture import _setup, _wait_for


def test_daemon_notify_and_metrics(free23: Path, tmp_path: Path) -> None:
    cfg = _setup(free23, tmp_path)
    port = free_port()
    data = json.loads(cfg.read_text())
    data["metrics"] = {"type": "prometheus", "bind": f"127.0.0.1:{port}"}
    cfg.write_text(json.dumps(data))
    notify_path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify_path)
    sock.settimeout(0.2)
    env = {**os.environ, "NOTIFY_SOCKET": notify_path, "WATCHDOG_USEC": "400000"}
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen([sys.executable, "-m", "replicator", "run", "-f", str(cfg)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    messages: list[dict[str, str]] = []

    def receive(until: float) -> None:
        while time.monotonic() < until:
            try:
                raw = sock.recv(4096).decode()
            except socket.timeout:
                continue
            messages.append(dict(line.split("=", 1) for line in raw.splitlines() if "=" in line))

    try:
        receive(time.monotonic() + 3.0)
        assert _wait_for(lambda: (tmp_path / "out.json").exists())
        scrape = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        receive(time.monotonic() + 2.0)
        _, err = proc.communicate(timeout=30)
        sock.close()
    assert proc.returncode == 0, err
    keys = [k for m in messages for k in m]
    assert "READY" in keys and "STOPPING" in keys and keys.index("READY") < keys.index("STOPPING")
    assert keys.count("WATCHDOG") >= 2 and any("SCN" in m.get("STATUS", "") for m in messages)
    assert 'service_state{state="replicating"} 1.0' in scrape
    parsed = [line for line in scrape.splitlines() if line.startswith("bytes_parsed")]
    assert parsed and float(parsed[0].split()[-1]) > 0
    assert 'dml_ops_total{filter="out",type="insert"} 1.0' in scrape
