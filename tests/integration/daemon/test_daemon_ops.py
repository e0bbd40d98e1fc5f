"""The daemon as an operator runs it: systemd notifications and Prometheus metrics."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from daemon_proc import Daemon
from kafka_broker import free_port
from test_daemon_fixture import _setup, _wait_for


def test_daemon_notify_and_metrics(free23: Path, tmp_path: Path) -> None:
    cfg = _setup(free23, tmp_path)
    port = free_port()
    data = json.loads(cfg.read_text())
    data["metrics"] = {"type": "prometheus", "bind": f"127.0.0.1:{port}"}
    cfg.write_text(json.dumps(data))
    proc = Daemon(cfg, tmp_path, env={"WATCHDOG_USEC": "400000"})
    try:
        proc.wait_ready()
        assert _wait_for(lambda: (tmp_path / "out.json").exists())
        proc.wait_status(lambda st: st[1] > 0)  # a STATUS naming the SCN reached
        assert _wait_for(lambda: sum("WATCHDOG" in m for m in proc.messages) >= 2)
        scrapes = [""]

        def scraped(line: str) -> bool:
            scrapes[0] = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            return line in scrapes[0]

        # Metrics are published once a second: wait for the fixture's one insert to show.
        assert _wait_for(lambda: scraped('dml_ops_total{filter="out",type="insert"} 1.0'), 30), scrapes[0]
        scrape = scrapes[0]
        rc, err = proc.stop()
    finally:
        proc.close()
    assert rc == 0, err
    keys = [k for m in proc.messages for k in m]
    assert "READY" in keys and "STOPPING" in keys and keys.index("READY") < keys.index("STOPPING")
    stopping = next(i for i, m in enumerate(proc.messages) if "STOPPING" in m)
    assert not [m for m in proc.messages[stopping + 1 :] if m.get("STATUS", "").startswith("replicating")]
    assert keys.count("WATCHDOG") >= 2 and any("SCN" in m.get("STATUS", "") for m in proc.messages)
    assert 'service_state{state="replicating"} 1.0' in scrape
    parsed = [line for line in scrape.splitlines() if line.startswith("bytes_parsed")]
    assert parsed and float(parsed[0].split()[-1]) > 0
    assert 'dml_ops_total{filter="out",type="insert"} 1.0' in scrape
